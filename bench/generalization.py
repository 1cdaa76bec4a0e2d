"""The generalization protocol: per-source figures of the offline sieve, tune vs validation.

Rules are changed while looking only at the TUNE sources; the VALIDATION sources are run
to measure, and their false alarms are audited only after the rules are frozen (see
datasets/README.md, "Generalization protocol").

    python bench/generalization.py RUN_DIR [--before BASE_DIR] [--audit] [--score]

``RUN_DIR/<source>/predictions.jsonl`` is what ``faithsieve score`` writes; ``--score`` first
runs it for every source that has no complete run yet (resumable: an interrupted run goes
on where it stopped). ``--before`` adds the figures of an earlier run per source.
``--audit`` sorts every false alarm (a flag on a proof labelled correct or before the
labelled first error) of the validation sources into the families of issue 11, from the
flagged evidence and the flagged step's text, and prints the counts (``--list`` prints each).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

RAW = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "raw"
MINI = Path(__file__).resolve().parents[1] / "datasets" / "proofloc-mini"

TUNE = ("processbench", "proofloc-mini")
VALIDATION = ("mr-ben", "mr-math", "parc", "prmbench-preview", "mr-gsm8k-partial", "mathcheck-gsm",
              "bigbench-mistake", "proofloc-university")
FLAWED_ONLY = frozenset({"bigbench-mistake"})
"""Sources whose correct-labelled items are not judged (BIG-Bench Mistake's correct traces hold
genuine false sums: its labels mark the first *logical* mistake only on the flawed traces)."""


def source_path(name: str) -> Path:
    return MINI if name == "proofloc-mini" else RAW / name


def load_predictions(run: Path) -> list[dict[str, Any]]:
    path = run / "predictions.jsonl"
    if not path.exists():
        return []
    rows: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        rows[rec["id"]] = rec
    return list(rows.values())


def _step(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def figures(rows: list[dict[str, Any]], flawed_only: bool = False) -> dict[str, Any]:
    """Flag soundness, correct proofs flagged, exact flag precision, error accuracy (and the trust split)."""
    from faithsieve.datasets import metrics as M

    judged = [r for r in rows if not (flawed_only and r["label"] == "correct")]
    pairs = [(_step(r["label"]), _step(r["predicted"])) for r in judged]
    out: dict[str, Any] = {
        "n": len(pairs), "flags": M.flags(pairs), "flag_soundness": M.flag_soundness(pairs),
        "correct_flagged": M.correct_flagged(pairs), "flag_precision": M.flag_precision(pairs),
        "error_accuracy": M.error_accuracy(pairs), "early_flags": M.early_flags(pairs),
    }
    for scope in ("first", "at_or_before"):
        grp = [(_step(r["label"]), _step(r["predicted"])) for r in judged if r.get("flag_scope") == scope]
        out[f"precision_{scope}"] = M.flag_precision(grp)
        out[f"flags_{scope}"] = M.flags(grp)
    return out


def _f(v: float | None, pct: bool = True) -> str:
    if v is None:
        return "–"
    return f"{100 * v:.1f}" if pct else f"{v:.3f}"


def table(runs: Path, before: Path | None) -> list[str]:
    head = "| source | role | n | flags | soundness | correct flagged % | exact prec. % | error acc. % | prec. first / at-or-before |"
    lines = [head, "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for name in (*TUNE, *VALIDATION):
        role = "tune" if name in TUNE else "validation"
        for tag, root in (("before", before), ("after", runs)):
            if root is None:
                continue
            all_rows = load_predictions(root / name)
            for sub in ((None, "math") if name == "processbench" else (None,)):
                rows = [r for r in all_rows if sub is None or r.get("subset") == sub]
                if rows:
                    lines.append(_row(name if sub is None else f"{name} ({sub})", role, tag if before else "", rows))
    return lines


def _row(name: str, role: str, tag: str, rows: list[dict[str, Any]]) -> str:
    f = figures(rows, name in FLAWED_ONLY)
    split = f"{_f(f['precision_first'])} ({f['flags_first']}) / {_f(f['precision_at_or_before'])} ({f['flags_at_or_before']})"
    label = f"{name}{' (flawed only)' if name in FLAWED_ONLY else ''}{' ' + tag if tag else ''}"
    return (f"| {label} | {role} | {f['n']} | {f['flags']} | {_f(f['flag_soundness'], False)} | "
            f"{_f(f['correct_flagged'])} | {_f(f['flag_precision'])} | {_f(f['error_accuracy'])} | {split} |")


# ---------------------------------------------------------------------------------------
# false-alarm families

_NOTATION = [
    ("log base", re.compile(r"\\log|\blog\b|\blg\b")),
    ("angle unit", re.compile(r"\\(?:sin|cos|tan|cot|sec|csc)|\b(?:sin|cos|tan)\b|\^\\circ|°|degree")),
    ("mixed number", re.compile(r"\d\s*\\frac|\b\d+\s+\d+/\d+\b|\d\s*\\dfrac")),
    ("units with exponents", re.compile(r"\b(?:cm|m|km|mm|in|ft|inch(?:es)?|feet|meters?)\s*(?:\^|²|³)")),
    ("floor/ceiling", re.compile(r"\\[lr]floor|\\[lr]ceil|⌊|⌈")),
    ("power tower", re.compile(r"\^\s*\{?[^{}\s]{1,6}\}?\s*\^")),
    ("thousands separator", re.compile(r"\d,\\!\d|\d\{,\}\d|\d,\d{3}")),
]


def family(rec: dict[str, Any], step_text: str) -> str:
    """The issue-11 family of one false alarm, read from its evidence and the flagged step's text."""
    ev = (rec.get("evidence") or [{}])[0]
    kind = ev.get("kind", "")
    src = f"{ev.get('source', '')} {step_text}"
    for name, pat in _NOTATION:
        if pat.search(src):
            return f"notation: {name}"
    if kind == "coverage":
        return "case coverage against a guessed domain"
    if kind in ("identity", "derivation") and re.search(r"[A-Za-z]", ev.get("claim", "")):
        return "equation in unknowns read as identity / derivation from one premise"
    if kind in ("substitution", "solution"):
        return "facts carried across contexts (values, candidates, cases)"
    if kind == "arithmetic":
        return "arithmetic (closed numbers; label or reading)"
    return f"other ({kind or 'no evidence'})"


def audit(runs: Path, names: tuple[str, ...], listing: bool) -> tuple[Counter[str], list[str]]:
    from faithsieve.datasets.adapters import load_dataset

    fams: Counter[str] = Counter()
    listed: list[str] = []
    for name in names:
        rows = [r for r in load_predictions(runs / name) if _step(r["predicted"]) is not None]
        alarms = [r for r in rows if (_step(r["label"]) is None and name not in FLAWED_ONLY)
                  or (_step(r["label"]) is not None and _step(r["predicted"]) < _step(r["label"]))]  # type: ignore[operator]
        if not alarms:
            continue
        items = {it.id: it for it in load_dataset(source_path(name)).items}
        for r in alarms:
            it = items.get(r["id"])
            k = _step(r["predicted"])
            text = it.steps[k - 1] if it is not None and k is not None and k <= len(it.steps) else ""
            fam = family(r, text)
            fams[fam] += 1
            if listing:
                listed.append(f"{name}\t{r['id']}\t{r['label']}\t{k}\t{fam}\t{(r.get('reason') or '')[:200]}")
    return fams, listed


def score(runs: Path) -> None:
    for name in (*TUNE, *VALIDATION):
        out = runs / name
        if (out / "metrics.json").exists():
            continue
        print(f"scoring {name} ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "faithsieve.cli", "score", str(source_path(name)), "--out", str(out),
                        "--workers", "1", "--no-progress", "--no-report", "--skip-invalid", "--bootstrap", "10"],
                       check=False, stdout=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", type=Path)
    ap.add_argument("--before", type=Path)
    ap.add_argument("--score", action="store_true", help="score the sources that have no complete run in RUNS")
    ap.add_argument("--audit", action="store_true", help="false alarms of the validation sources by family")
    ap.add_argument("--list", action="store_true", help="with --audit: print every false alarm")
    args = ap.parse_args(argv)
    if args.score:
        score(args.runs)
    print("\n".join(table(args.runs, args.before)))
    if args.audit:
        for tag, root in (("before", args.before), ("after", args.runs)):
            if root is None:
                continue
            fams, listed = audit(root, VALIDATION, args.list)
            print(f"\nFalse alarms on the validation sources by family ({tag}): {sum(fams.values())}")
            for fam, n in fams.most_common():
                print(f"  {n:4d}  {fam}")
            for line in listed:
                print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
