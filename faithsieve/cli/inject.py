"""``faithsieve inject``: labelled error variants of GSM8K reference solutions.

Registered on the main CLI with :func:`register`; the handler returns an exit code.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from faithsieve.cli.common import fail, output_file_problem, wrong_jsonl
from faithsieve.core.errors import InputError
from faithsieve.datasets.inject import MUTATIONS, inject_items
from faithsieve.runtime.atomic import write_lines_atomic
from faithsieve.runtime.textfile import (
    loads_json,
    os_error_line,
    read_utf8,
)

EXIT_OK = 0
EXIT_INPUT = 2
"""The input file is missing, unreadable, not UTF-8, or has bad lines (each is reported with its
line number); or the output cannot be written. Same code as every other CLI input error."""
EXIT_USAGE = 2
"""Bad arguments (an unknown mutation, a negative limit)."""


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``inject`` subcommand to ``subparsers`` (from ``add_subparsers``)."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "inject",
        help="make labelled error variants of GSM8K reference solutions",
        description=(
            "Read GSM8K records (JSONL with 'question' and 'answer'), keep those whose "
            "written equations all check, and write ProofLoc JSONL items, each with one "
            "injected error at a known 1-based step (recorded in 'meta'). Deterministic "
            "under --seed. Mutations: " + ", ".join(MUTATIONS) + "."
        ),
    )
    p.add_argument("input", metavar="GSM8K_JSONL", help="GSM8K file, e.g. gsm8k/test.jsonl")
    p.add_argument("--out", required=True, metavar="OUT.jsonl", help="output ProofLoc JSONL")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="read only the first N records")
    p.add_argument("--mutations", default=None, metavar="A,B",
                   help="comma-separated mutation names (default: all)")
    p.add_argument("--per-item", type=int, default=1, metavar="N",
                   help="variants per record, each a different mutation (default 1)")
    p.add_argument("--include-correct", action="store_true",
                   help="also write each usable unmodified solution with label 'correct'")
    p.add_argument("--split", default=None,
                   help="split name for ids (default: the file name's stem, e.g. 'test')")
    p.set_defaults(func=run_inject)
    return p


GSM8K_JSONL = 'inject reads GSM8K JSONL, one {"question", "answer"} object a line'
MAX_BAD_LINES_SHOWN = 10
"""Bad lines listed one by one before the rest are counted."""


def _read_gsm8k(path: Path, limit: int | None) -> tuple[list[dict[str, Any]], list[str]]:
    """The GSM8K records and the bad lines. A file whose first record is not a GSM8K record is not
    GSM8K at all: one ``InputError`` says what it is (``a JSON array of ..., not JSONL``)."""
    records: list[dict[str, Any]] = []
    errors: list[str] = []
    text = read_utf8(path)
    wrong = wrong_jsonl(path, text, ("question", "answer"), GSM8K_JSONL)
    if wrong:
        raise InputError(wrong)
    for lineno, line in enumerate(text.split("\n"), start=1):
        if limit is not None and len(records) + len(errors) >= limit:
            break
        if not line.strip():
            continue
        try:
            rec = loads_json(line, f"{path}:{lineno}")
        except json.JSONDecodeError as exc:
            rec, why = None, f"not JSON ({exc.msg})"
        else:
            why = "needs string fields 'question' and 'answer'"
        if not isinstance(rec, dict) or not isinstance(rec.get("question"), str) \
                or not isinstance(rec.get("answer"), str):
            errors.append(f"{path}:{lineno}: {why}")
            continue
        rec = dict(rec)
        rec.setdefault("gsm8k_index", lineno - 1)
        records.append(rec)
    return records, errors


def write_jsonl_atomic(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write ``rows`` as JSONL to ``path`` atomically (mode 0644, the usual mode of a data file)."""
    write_lines_atomic(path, (json.dumps(row, ensure_ascii=False) for row in rows), mode=0o644)


def run_inject(args: argparse.Namespace) -> int:
    """Handler of ``faithsieve inject``; returns the exit code."""
    err = sys.stderr
    names = list(MUTATIONS)
    if args.mutations:
        names = [m.strip() for m in args.mutations.split(",") if m.strip()]
        unknown = [m for m in names if m not in MUTATIONS]
        if unknown or not names:
            return fail(f"unknown mutation(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(MUTATIONS)}")
    if args.limit is not None and args.limit < 0:
        return fail("--limit must be >= 0")
    if args.per_item < 0:
        return fail("--per-item must be >= 0")
    src = Path(args.input)
    if not src.is_file():
        return fail(f"{src}: no such file")
    problem = output_file_problem(args.out)
    if problem:
        return fail(problem)
    try:
        records, errors = _read_gsm8k(src, args.limit)
    except InputError as exc:
        return fail(exc.message)
    except OSError as exc:
        return fail(os_error_line(exc))
    if errors:
        for e in errors[:MAX_BAD_LINES_SHOWN]:
            print(e, file=err)
        if len(errors) > MAX_BAD_LINES_SHOWN:
            print(f"... and {len(errors) - MAX_BAD_LINES_SHOWN} more bad lines", file=err)
        return fail(f"{len(errors)} bad line(s) in {src}; nothing written")
    split = args.split or src.stem
    items = inject_items(records, names, seed=args.seed, per_item=args.per_item,
                         include_correct=args.include_correct, split=split)
    out = Path(args.out)
    try:
        write_jsonl_atomic(out, items)
    except OSError as exc:
        return fail(os_error_line(exc))
    injected = {it["meta"]["gsm8k_index"] for it in items if it["label"] != "correct"}
    counts = Counter(it["meta"]["mutation"] or "correct" for it in items)
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    if getattr(args, "quiet", False):
        return EXIT_OK
    print(f"wrote {len(items)} items to {out}; {len(injected)} of {len(records)} records got "
          f"an injected error (the others have a false written equation already, or no "
          f"equation the chosen mutations apply to)" + (f"; {summary}" if summary else ""),
          file=err)
    return EXIT_OK
