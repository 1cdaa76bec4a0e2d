"""``faithsieve score PATH``: predict every item of a step-labelled dataset; write predictions, metrics and a
report (resumable). Exit 0 ok, 1 nothing usable, 2 bad input."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from faithsieve.cli.common import (
    err,
    error_line,
    fail,
    non_negative_int,
    positive_int,
    report_dropped,
    report_run,
)
from faithsieve.core.errors import FaithSieveError


def _selection(config: dict[str, Any]) -> dict[str, Any]:
    """What picks a run's items (and so what its report describes): subsets, and the --limit sample."""
    limit = config.get("limit")
    sample = config.get("sample") if limit is not None else None
    return {"subsets": list(config.get("subsets") or []), "limit": limit, "sample": sample,
            "seed": config.get("seed") if sample == "stratified" else None}


def selection_clash(req: Any) -> str | None:
    """Why scoring ``req`` into its ``--out`` would silently replace the report of another selection of
    items (another ``--limit``, sample, seed or subsets) recorded there; ``None`` when it would not."""
    from faithsieve.scoring.run import STATE, run_config

    try:
        before = json.loads((req.out / STATE).read_text(encoding="utf-8")).get("config") or {}
    except (OSError, ValueError, AttributeError):
        return None
    old, new = _selection(before), _selection(run_config(req, req.settings))
    if not isinstance(before, dict) or old == new:
        return None
    changed = ", ".join(f"{k} {old[k]!r} -> {new[k]!r}" for k in old if old[k] != new[k])
    return (f"{req.out}: holds the report of another selection of items ({changed}); this run would replace it. "
            "Give another --out, or --force to replace it (predictions already made are reused)")


def cmd_score(args: argparse.Namespace) -> int:
    """``faithsieve score PATH``: predict every item, write predictions, metrics and a report."""
    from faithsieve.cli.options import (
        bulk_request,
        say_if_lean_missing,
        settings_from_args,
        subset_names,
    )
    from faithsieve.datasets.adapters import load_dataset
    from faithsieve.pipeline import probe_settings
    from faithsieve.scoring.run import InvalidDataset, default_out, run_score

    path = Path(args.path)
    subsets = subset_names(args.subset)
    if args.predictions:
        return score_prediction_file(args, path, subsets)
    if args.convention:
        return fail("--convention reads a --predictions file; give one")
    out = Path(args.out) if args.out else default_out(path, subsets)
    quiet = getattr(args, "quiet", False)
    try:
        settings = settings_from_args(args)
    except FaithSieveError as exc:
        return fail(exc.message)
    req = bulk_request(args, path, out, settings, resamples=args.bootstrap, report=not args.no_report)
    clash = None if args.force or args.force_new else selection_clash(req)
    if clash:
        return fail(clash)
    say_if_lean_missing(settings)
    try:
        probe_settings(settings)  # one call before any work: unreachable / bad key / missing model -> exit 2
        result = run_score(req)
    except InvalidDataset as exc:
        data = load_dataset(path, args.format)
        if not data.items and len(data.bad) == 1:  # not a dataset at all: what the file is, in one line
            return fail(str(data.bad[0]))
        report_dropped(data)
        err(f"error: {exc.message}; fix them, or pass --skip-invalid to score the rest")
        return 2
    except (OSError, FaithSieveError, ValueError) as exc:
        return fail(error_line(exc))
    m = result.metrics
    if not report_run(result, m["n"], "no items to score"):
        return 1
    summary = {k: m.get(k) for k in ("n", "binary_accuracy", "exact_accuracy", "error_accuracy", "correct_accuracy", "f1",
                                     "flags", "flag_precision", "early_flags", "late_flags", "proofs_per_second")}
    if m.get("llm"):
        summary["llm"] = m["llm"]
    if not quiet:
        err(f"scored {m['n']} items ({result.processed} new, {result.reused} reused) -> {result.out}")
    print(json.dumps(summary, indent=1))
    failed = _failed_items(m.get("llm") or {}, m["n"])
    if result.failure and not failed:  # (failed model calls were already said, in their own line)
        err(f"error: {result.failure}")
        return 1
    return failed


def score_prediction_file(args: argparse.Namespace, path: Path, subsets: tuple[str, ...]) -> int:
    """``score DATASET --predictions FILE``: another system's predictions, scored and reported like a run."""
    from faithsieve.scoring.external import ExternalRequest, score_external

    preds = Path(args.predictions)
    out = Path(args.out) if args.out else Path("runs") / f"{preds.stem}-scored"
    req = ExternalRequest(dataset=path, predictions=preds, out=out, convention=args.convention, format=args.format,
                          subsets=subsets, skip_invalid=args.skip_invalid, resamples=args.bootstrap, seed=args.seed,
                          report=not args.no_report)
    try:
        result = score_external(req)
    except FaithSieveError as exc:
        for line in list(exc.detail if isinstance(exc.detail, list) else [])[:20]:
            err(f"  {line}")
        return fail(f"{exc.message}; fix them, or pass --skip-invalid" if exc.detail else exc.message)
    except (OSError, ValueError) as exc:
        return fail(error_line(exc))
    m = result.metrics
    if not report_run(result, m["n"], "no items to score"):
        return 1
    if not getattr(args, "quiet", False):
        err(f"scored {m['n']} predictions of {preds} ({m['run']['convention']} convention) -> {out}")
    print(json.dumps({k: m.get(k) for k in ("n", "binary_accuracy", "exact_accuracy", "error_accuracy",
                                             "correct_accuracy", "f1", "flags", "flag_precision", "early_flags",
                                             "late_flags")}, indent=1))
    return 0


MAX_FAILED_SHARE = 0.05
"""A run where more than this share of items had a failed model call exits 1."""


def _failed_items(llm: dict[str, Any], n: int) -> int:
    """Say on stderr how many items ended ``unknown``; exit 1 when more than 5 % had failed calls."""
    unknown, failed = int(llm.get("unknown_items", 0) or 0), int(llm.get("failed_items", 0) or 0)
    if unknown:
        err(f"{unknown} of {n} items unknown ({failed} with failed model calls, {unknown - failed} unreadable answers)")
    if n and failed > MAX_FAILED_SHARE * n:
        err(f"error: {failed} of {n} items ({100 * failed / n:.1f} %) had failed model calls "
            f"(more than {100 * MAX_FAILED_SHARE:.0f} %); their verdicts are unknown, the metrics are not usable")
        return 1
    return 0


def register(subparsers: Any) -> None:
    """Add ``score`` to the main CLI's subparsers."""
    from faithsieve.cli.options import add_limit_options, add_method_options
    from faithsieve.datasets.adapters import adapter_names

    formats = adapter_names()
    p = subparsers.add_parser("score", help="score a step-labelled dataset (file or directory)",
                              description="Predict the first erroneous step of every item and write predictions.jsonl, "
                                          "metrics.json, report.md and plots. Rerun on the same --out to resume.")
    p.add_argument("path", help="dataset file or directory (ProofLoc JSONL or a supported public format)")
    p.add_argument("--format", choices=formats, help="force an adapter (default: detect per file)")
    p.add_argument("--out", help="output directory (default: runs/<name>)")
    p.add_argument("--workers", type=positive_int, default=1,
                   help="worker processes (default 1; each item runs in a worker under the limits below)")
    add_limit_options(p, "each item")
    p.add_argument("--ray", metavar="ADDRESS|auto",
                   help="fan the items out over a Ray cluster (host:port, ray://host:port, or auto: this machine's "
                        "cluster, else a new local one); needs the ray extra (docs/ray.md)")
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
    p.add_argument("--force", action="store_true",
                   help="score another selection (--limit, --sample, --seed, --subset) into an --out that holds a "
                        "report of an earlier one, replacing that report (its predictions are reused)")
    p.add_argument("--skip-invalid", action="store_true", help="score the valid items when some records are malformed")
    p.add_argument("--bootstrap", type=non_negative_int, default=1000, help="bootstrap resamples for the 95%% intervals (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the --limit sample and the bootstrap (default 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-report", action="store_true", help="write metrics.json only (no report.md, plots)")
    p.add_argument("--predictions", metavar="FILE",
                   help="score another system's predicted first-error steps (JSONL or JSON array of {id, prediction}) "
                        "on this dataset instead of running FaithSieve")
    p.add_argument("--convention", choices=("processbench", "proofloc"),
                   help="how --predictions writes a step: processbench (-1 = no error, 0-based) or proofloc "
                        "(\"correct\", 1-based); default: detected from a -1 or a \"correct\"")
    add_method_options(p)
    p.set_defaults(func=cmd_score)
