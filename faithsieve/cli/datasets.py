"""CLI subcommands for datasets: ``score``, ``convert``, ``compare``.

Thin: each function parses nothing itself and calls ``faithsieve.scoring.run`` or the dataset
modules. ``faithsieve.cli`` calls ``register(subparsers)``; each subcommand returns an exit
code (0 ok, 1 nothing usable, 2 bad input).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from faithsieve.cli.common import (
    fail,
    non_negative_int,
    output_file_problem,
    positive_int,
)
from faithsieve.core.errors import FaithSieveError
from faithsieve.runtime.textfile import os_error_line

_MAX_BAD_SHOWN = 50


def _err(msg: str) -> None:
    print(msg, file=sys.stderr)


def _report_dropped(data: Any) -> None:
    for b in data.bad[:_MAX_BAD_SHOWN]:
        _err(f"bad record: {b}")
    if len(data.bad) > _MAX_BAD_SHOWN:
        _err(f"... and {len(data.bad) - _MAX_BAD_SHOWN} more bad records")
    for reason, n in data.excluded_counts().items():
        _err(f"excluded {n} record(s): {reason}")


def _subsets(values: list[str] | None) -> tuple[str, ...]:
    out: list[str] = []
    for v in values or []:
        out.extend(s for s in (p.strip() for p in v.split(",")) if s)
    return tuple(out)


def cmd_score(args: argparse.Namespace) -> int:
    """``faithsieve score PATH``: predict every item, write predictions, metrics and a report."""
    from faithsieve.cli.options import settings_from_args, warn_if_lean_missing
    from faithsieve.datasets.adapters import load_dataset
    from faithsieve.scoring.run import (
        InvalidDataset,
        ScoreRequest,
        default_out,
        run_score,
    )

    path = Path(args.path)
    subsets = _subsets(args.subset)
    out = Path(args.out) if args.out else default_out(path, subsets)
    quiet = getattr(args, "quiet", False)
    try:
        settings = settings_from_args(args)
    except ValueError as exc:
        return fail(f"invalid setting: {exc}")
    req = ScoreRequest(
        path=path, out=out, format=args.format, workers=args.workers, limit=args.limit, subsets=subsets,
        skip_invalid=args.skip_invalid, progress=False if (args.no_progress or quiet) else None,
        resamples=args.bootstrap, seed=args.seed, report=not args.no_report, settings=settings,
        sample=args.sample, force_new=args.force_new,
    )
    warning = warn_if_lean_missing(settings)
    if warning:
        _err(warning)
    try:
        result = run_score(req)
    except InvalidDataset as exc:
        _report_dropped(load_dataset(path, args.format))
        _err(f"error: {exc.message}; fix them, or pass --skip-invalid to score the rest")
        return 2
    except OSError as exc:
        return fail(os_error_line(exc))
    except (FaithSieveError, ValueError) as exc:
        return fail(str(getattr(exc, "message", exc)))
    _report_dropped(result.dataset)
    for w in result.warnings:
        _err(f"warning: {w}")
    m = result.metrics
    if not m["n"]:
        _err("error: no items to score")
        return 1
    summary = {k: m.get(k) for k in ("n", "binary_accuracy", "exact_accuracy", "error_accuracy", "correct_accuracy", "f1",
                                     "flags", "flag_precision", "early_flags", "late_flags", "proofs_per_second")}
    if m.get("llm"):
        summary["llm"] = m["llm"]
    if not quiet:
        _err(f"scored {m['n']} items ({result.processed} new, {result.reused} reused) -> {result.out}")
    print(json.dumps(summary, indent=1))
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    """``faithsieve convert IN OUT.jsonl``: write any supported dataset as ProofLoc JSONL."""
    from faithsieve.datasets.adapters import load_dataset
    from faithsieve.datasets.formats import write_proofloc

    problem = output_file_problem(args.output)
    if problem:
        return fail(problem)
    try:
        data = load_dataset(args.input, args.format)
    except OSError as exc:
        return fail(os_error_line(exc))
    except (FaithSieveError, ValueError) as exc:
        return fail(str(getattr(exc, "message", exc)))
    _report_dropped(data)
    if data.bad and not args.skip_invalid:
        _err(f"error: {len(data.bad)} malformed record(s); pass --skip-invalid to convert the rest")
        return 2
    if not data.items:
        _err("error: no items")
        return 1
    try:
        n = write_proofloc(data.items, args.output)
    except OSError as exc:
        return fail(os_error_line(exc))
    if not getattr(args, "quiet", False):
        _err(f"wrote {n} items ({', '.join(sorted(set(data.formats.values())))}) to {args.output}")
    return 0


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:+.4f}" if abs(v) < 1 else f"{v:+.2f}"
    return f"{v:+d}" if isinstance(v, int) else str(v)


def _plain(v: Any) -> str:
    if v is None:
        return "–"
    return f"{v:.4f}" if isinstance(v, float) else str(v)


_MAX_NAME = 60
"""Longest metric or subset name shown whole in ``compare`` (longer ones are cut)."""


def compare_name_width(names: list[str]) -> int:
    """Width of ``compare``'s name column: the longest name (at most ``_MAX_NAME``) plus two spaces."""
    return max([len("subset F1"), *(min(len(n), _MAX_NAME) for n in names)]) + 2


def cmd_compare(args: argparse.Namespace) -> int:
    """``faithsieve compare RUN_A RUN_B``: metric deltas (B − A) and the items that changed."""
    from faithsieve.scoring.run import METRICS, compare_runs, load_predictions

    runs = [Path(args.run_a), Path(args.run_b)]
    docs = []
    for r in runs:
        try:
            docs.append(json.loads((r / METRICS).read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            reason = os_error_line(exc) if isinstance(exc, OSError) else f"{r / METRICS}: not valid JSON ({exc})"
            return fail(f"cannot read a run: {reason}")
    cmp = compare_runs(docs[0], docs[1], load_predictions(runs[0]), load_predictions(runs[1]))
    if args.json:
        print(json.dumps(cmp, indent=1))
        return 0
    print(f"A = {runs[0]}\nB = {runs[1]}\n")
    w = compare_name_width([*cmp["metrics"], *cmp["per_subset"]])
    print(f"{'metric':<{w}}{'A':>12}{'B':>12}{'B − A':>12}")
    for k, d in cmp["metrics"].items():
        print(f"{k:<{w}}{_plain(d['a']):>12}{_plain(d['b']):>12}{_fmt(d['delta']):>12}")
    if cmp["per_subset"]:
        print(f"\n{'subset F1':<{w}}{'A':>12}{'B':>12}")
        for name, d in cmp["per_subset"].items():
            print(f"{name[:_MAX_NAME]:<{w}}{_plain(d['f1']['a']):>12}{_plain(d['f1']['b']):>12}")
    changed = cmp["changed"]
    counts = {e: sum(c["effect"] == e for c in changed) for e in ("fixed", "broken", "changed")}
    print(f"\n{len(changed)} items changed prediction: {counts['fixed']} fixed, {counts['broken']} broken, "
          f"{counts['changed']} still wrong but different")
    for c in changed[: args.max_items]:
        print(f"  {c['effect']:<8}{c['id']:<40} label {c['label']!s:<8} A {c['a']!s:<8} B {c['b']!s}")
    if len(changed) > args.max_items:
        print(f"  ... {len(changed) - args.max_items} more (use --max-items or --json)")
    if cmp["only_a"] or cmp["only_b"]:
        print(f"\nitems only in A: {cmp['only_a']}; only in B: {cmp['only_b']}")
    return 0


def register(subparsers: Any) -> None:
    """Add ``score``, ``convert`` and ``compare`` to the main CLI's subparsers."""
    from faithsieve.cli.options import add_method_options
    from faithsieve.datasets.adapters import adapter_names

    formats = adapter_names()

    p = subparsers.add_parser("score", help="score a step-labelled dataset (file or directory)",
                              description="Predict the first erroneous step of every item and write predictions.jsonl, "
                                          "metrics.json, report.md and plots. Rerun on the same --out to resume.")
    p.add_argument("path", help="dataset file or directory (ProofLoc JSONL or a supported public format)")
    p.add_argument("--format", choices=formats, help="force an adapter (default: detect per file)")
    p.add_argument("--out", help="output directory (default: runs/<name>)")
    p.add_argument("--workers", type=positive_int, default=1, help="worker processes (default 1)")
    p.add_argument("--limit", type=non_negative_int, metavar="N",
                   help="score N items (after --subset): a seeded sample with each subset's flawed and correct "
                        "items in proportion (see --sample, --seed)")
    p.add_argument("--sample", choices=("stratified", "first"), default="stratified",
                   help="how --limit picks: stratified (default; by subset and label, seeded by --seed) or first "
                        "(the first N in file order)")
    p.add_argument("--subset", action="append", metavar="NAME[,NAME...]",
                   help="score only these subsets (repeat the flag or comma-separate)")
    p.add_argument("--force-new", action="store_true",
                   help="start over in --out: remove its predictions, metrics, report and evidence instead of "
                        "resuming (a resume with other settings, versions or data is refused)")
    p.add_argument("--skip-invalid", action="store_true", help="score the valid items when some records are malformed")
    p.add_argument("--bootstrap", type=non_negative_int, default=1000, help="bootstrap resamples for the 95%% intervals (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the --limit sample and the bootstrap (default 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-report", action="store_true", help="write metrics.json only (no report.md, plots)")
    add_method_options(p)
    p.set_defaults(func=cmd_score)

    p = subparsers.add_parser("convert", help="convert a dataset to ProofLoc JSONL")
    p.add_argument("input", help="dataset file or directory")
    p.add_argument("output", help="output .jsonl file")
    p.add_argument("--format", choices=formats, help="force an adapter (default: detect per file)")
    p.add_argument("--skip-invalid", action="store_true", help="convert the valid items when some records are malformed")
    p.set_defaults(func=cmd_convert)

    p = subparsers.add_parser("compare", help="compare two score runs")
    p.add_argument("run_a", help="run directory A (the baseline)")
    p.add_argument("run_b", help="run directory B")
    p.add_argument("--max-items", type=non_negative_int, default=50, help="changed items to list (default 50)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.set_defaults(func=cmd_compare)
