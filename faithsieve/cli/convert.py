"""``faithsieve convert INPUT OUTPUT``: a dataset in any supported format written as ProofLoc JSONL."""

from __future__ import annotations

import argparse
from typing import Any

from faithsieve.cli.common import (
    err,
    error_line,
    fail,
    output_file_problem,
    report_dropped,
)
from faithsieve.core.errors import FaithSieveError
from faithsieve.runtime.textfile import os_error_line


def cmd_convert(args: argparse.Namespace) -> int:
    """``faithsieve convert IN OUT.jsonl``: write any supported dataset as ProofLoc JSONL."""
    from faithsieve.datasets.adapters import load_dataset
    from faithsieve.datasets.formats import write_proofloc

    problem = output_file_problem(args.output)
    if problem:
        return fail(problem)
    try:
        data = load_dataset(args.input, args.format)
    except (OSError, FaithSieveError, ValueError) as exc:
        return fail(error_line(exc))
    report_dropped(data)
    if data.bad and not args.skip_invalid:
        err(f"error: {len(data.bad)} malformed record(s); pass --skip-invalid to convert the rest")
        return 2
    if not data.items:
        err("error: no items")
        return 1
    try:
        n = write_proofloc(data.items, args.output)
    except OSError as exc:
        return fail(os_error_line(exc))
    if not getattr(args, "quiet", False):
        err(f"wrote {n} items ({', '.join(sorted(set(data.formats.values())))}) to {args.output}")
    return 0


def register(subparsers: Any) -> None:
    """Add ``convert`` to the main CLI's subparsers."""
    from faithsieve.datasets.adapters import adapter_names

    formats = adapter_names()
    p = subparsers.add_parser("convert", help="convert a dataset to ProofLoc JSONL")
    p.add_argument("input", help="dataset file or directory")
    p.add_argument("output", help="output .jsonl file")
    p.add_argument("--format", choices=formats, help="force an adapter (default: detect per file)")
    p.add_argument("--skip-invalid", action="store_true", help="convert the valid items when some records are malformed")
    p.set_defaults(func=cmd_convert)
