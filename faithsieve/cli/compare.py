"""``faithsieve compare A B``: two score runs, or prediction files of other systems scored on one ``--dataset``,
side by side (metrics, and the items whose prediction changed)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from faithsieve.cli.common import fail, non_negative_int
from faithsieve.runtime.textfile import os_error_line


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


def _load_side(path: Path, args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, dict[str, Any]]] | str:
    """One side of a comparison: a run directory's metrics and predictions, or a prediction file scored on
    ``--dataset``; a one-line reason when it cannot be read."""
    from faithsieve.core.errors import FaithSieveError
    from faithsieve.scoring.run import METRICS, load_predictions

    if path.is_dir() or not path.exists():
        try:
            return json.loads((path / METRICS).read_text(encoding="utf-8")), load_predictions(path)
        except (OSError, ValueError) as exc:
            reason = os_error_line(exc) if isinstance(exc, OSError) else f"{path / METRICS}: not valid JSON ({exc})"
            return f"cannot read a run: {reason}"
    if not args.dataset:
        return f"{path}: a prediction file is scored on a labelled dataset; give it with --dataset PATH"
    from faithsieve.scoring.external import ExternalRequest, score_external

    try:
        res = score_external(ExternalRequest(dataset=Path(args.dataset), predictions=path, out=None,
                                             convention=args.convention, format=args.format, resamples=args.bootstrap))
    except FaithSieveError as exc:
        first = f" ({exc.detail[0]})" if isinstance(exc.detail, list) and exc.detail else ""
        return f"{exc.message}{first}"
    except (OSError, ValueError) as exc:
        return os_error_line(exc) if isinstance(exc, OSError) else str(exc)
    return res.metrics, res.predictions


def cmd_compare(args: argparse.Namespace) -> int:
    """``faithsieve compare RUN_A RUN_B``: metric deltas (B − A) and the items that changed."""
    from faithsieve.scoring.run import compare_runs

    runs = [Path(args.run_a), Path(args.run_b)]
    docs, preds = [], []
    for r in runs:
        loaded = _load_side(r, args)
        if isinstance(loaded, str):
            return fail(loaded)
        docs.append(loaded[0])
        preds.append(loaded[1])
    cmp = compare_runs(docs[0], docs[1], preds[0], preds[1])
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
    """Add ``compare`` to the main CLI's subparsers."""
    from faithsieve.datasets.adapters import adapter_names

    p = subparsers.add_parser("compare", help="compare two score runs or two systems' prediction files")
    p.add_argument("run_a", help="run directory A (the baseline), or a prediction file scored on --dataset")
    p.add_argument("run_b", help="run directory B, or a prediction file scored on --dataset")
    p.add_argument("--dataset", metavar="PATH", help="the labelled dataset a prediction file is scored on")
    p.add_argument("--convention", choices=("processbench", "proofloc"),
                   help="how the prediction files write a step (default: detected per file; see score --convention)")
    p.add_argument("--format", choices=adapter_names(), help="the dataset's format (default: detected)")
    p.add_argument("--bootstrap", type=non_negative_int, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--max-items", type=non_negative_int, default=50, help="changed items to list (default 50)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.set_defaults(func=cmd_compare)
