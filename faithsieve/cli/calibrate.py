"""``faithsieve calibrate``: measure the endpoint's reliability per evidence kind on a labelled sample and
write the calibration JSON that ``localize``/``score --mode llm --calibration FILE`` weigh evidence with."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from faithsieve.cli.common import error_line, fail, positive_int
from faithsieve.cli.options import add_method_options
from faithsieve.core.errors import FaithSieveError


def cmd_calibrate(args: argparse.Namespace) -> int:
    from faithsieve.cli.options import settings_from_args
    from faithsieve.pipeline import probe_settings
    from faithsieve.scoring.calibrate import calibrate

    def progress(k: int, n: int) -> None:
        if not args.quiet:
            print(f"calibrate: {k}/{n} items", file=sys.stderr, flush=True)

    try:
        settings = settings_from_args(args).model_copy(update={"mode": "llm"})
        probe_settings(settings)
        cal = calibrate(args.dataset, settings, Path(args.out), sample=args.sample, progress=progress)
    except (OSError, FaithSieveError, ValueError) as exc:
        return fail(error_line(exc))
    print(cal.model_dump_json(indent=1))
    return 0


def register(subparsers: Any) -> None:
    """Add ``calibrate`` to the main CLI's subparsers."""
    p = subparsers.add_parser("calibrate", help="measure the model's reliability per evidence kind on labelled items")
    p.add_argument("dataset", help="a labelled dataset (ProofLoc-style JSONL, or any format score reads)")
    p.add_argument("--out", required=True, help="calibration JSON to write (atomically)")
    p.add_argument("--sample", type=positive_int, default=40,
                   help="items to run, evenly spaced over the set (default 40, at most 400)")
    add_method_options(p)
    p.set_defaults(func=cmd_calibrate)
