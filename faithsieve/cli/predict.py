"""``faithsieve predict PATH``: verdicts for proofs without labels, in bulk (resumable, workers, Ray, the
per-item limits of ``score``). Exit 0 ok, 1 nothing usable (no item, or every verdict unknown), 2 bad input."""

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
    report_run,
)
from faithsieve.core.errors import FaithSieveError


def cmd_predict(args: argparse.Namespace) -> int:
    """Predict every proof of a file or folder into ``--out`` and print the summary."""
    from faithsieve.cli.options import (
        bulk_request,
        say_if_lean_missing,
        settings_from_args,
    )
    from faithsieve.pipeline import probe_settings
    from faithsieve.scoring.bulk import default_predict_out, run_predict
    from faithsieve.scoring.run import InvalidDataset

    path = Path(args.path)
    quiet = getattr(args, "quiet", False)
    out = Path(args.out) if args.out else default_predict_out(path)
    try:
        settings = settings_from_args(args)
    except FaithSieveError as exc:
        return fail(exc.message)
    req = bulk_request(args, path, out, settings, report=False)
    say_if_lean_missing(settings)
    try:
        probe_settings(settings)
        result = run_predict(req)
    except InvalidDataset as exc:
        for line in list(exc.detail if isinstance(exc.detail, list) else [])[:20]:
            err(f"  {line}")
        err(f"error: {exc.message}; fix them, or pass --skip-invalid to predict the rest")
        return 2
    except (OSError, FaithSieveError, ValueError) as exc:
        return fail(error_line(exc))
    s = result.summary
    if not report_run(result, s["n"], "no proofs to predict"):
        return 1
    if not quiet:
        err(f"predicted {s['n']} proofs ({result.processed} new, {result.reused} reused) -> {result.out / 'predictions.jsonl'}")
    print(json.dumps({k: s[k] for k in ("n", "verdicts", "basis", "flag_kind", "refused_or_failed", "proofs_per_second")},
                     indent=1))
    if s["verdicts"].get("unknown", 0) == s["n"]:
        err("error: every verdict is unknown; nothing could be checked")
        return 1
    return 0


def register(subparsers: Any) -> None:
    """Add ``predict`` to the main CLI's subparsers."""
    from faithsieve.cli.options import add_limit_options, add_method_options
    from faithsieve.datasets.adapters import adapter_names

    p = subparsers.add_parser(
        "predict", help="verdicts for proofs without labels, in bulk (predictions.jsonl; resumable)",
        description="Localize the first wrong step of every proof of a file or folder ({problem, steps}, "
                    "{problem, proof}, GSM8K {question, answer}, or any format score reads, labels ignored) and "
                    "write predictions.jsonl and summary.json into --out. Rerun on the same --out to resume.")
    p.add_argument("path", help="JSONL, JSON array or folder of proofs")
    p.add_argument("--format", choices=adapter_names(),
                   help="read the records with this labelled format's adapter (labels ignored)")
    p.add_argument("--out", help="output directory (default: runs/<name>-predictions)")
    p.add_argument("--workers", type=positive_int, default=1,
                   help="worker processes (default 1; each proof runs in a worker under the limits below)")
    add_limit_options(p, "each proof")
    p.add_argument("--ray", metavar="ADDRESS|auto", help="fan the proofs out over a Ray cluster (docs/ray.md)")
    p.add_argument("--limit", type=non_negative_int, metavar="N", help="predict N proofs (see --sample, --seed)")
    p.add_argument("--sample", choices=("first", "stratified"), default="first",
                   help="how --limit picks: first (default: the first N in file order) or stratified (seeded, by subset)")
    p.add_argument("--seed", type=int, default=0, help="seed of a stratified --limit sample (default 0)")
    p.add_argument("--subset", action="append", metavar="NAME[,NAME...]", help="predict only these subsets")
    p.add_argument("--force-new", action="store_true", help="start over in --out instead of resuming")
    p.add_argument("--skip-invalid", action="store_true", help="predict the valid records when some are malformed")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_method_options(p)
    p.set_defaults(func=cmd_predict)
