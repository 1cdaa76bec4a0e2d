"""``faithsieve formats [FOLDER]``: the formats FaithSieve reads, and the datasets under a folder with their
item counts. Exit 0, 2 for a path that does not exist."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from faithsieve.cli.common import fail


def _shown(path: str, folder: Path) -> str:
    """A file's name as listed: relative to the surveyed folder."""
    try:
        return str(Path(path).relative_to(folder)) if folder.is_dir() else path
    except ValueError:
        return path


def cmd_formats(args: argparse.Namespace) -> int:
    """Print the formats, then (with a folder) one line per data file found under it."""
    from faithsieve.datasets.adapters import adapter_names, get_adapter
    from faithsieve.datasets.catalog import survey

    formats = {name: get_adapter(name).description for name in adapter_names()}
    if args.folder is None:
        if args.json:
            print(json.dumps({"formats": formats}, indent=1))
            return 0
        print("formats (faithsieve score --format NAME; detected from a file's first record):")
        for name, desc in formats.items():
            print(f"  {name:<18}{desc}")
        print("  (no labels)       {problem, steps|proof} or GSM8K {question, answer}: faithsieve predict")
        return 0
    folder = Path(args.folder)
    if not folder.exists():
        return fail(f"{folder}: no such file or directory")
    files = survey(folder)
    if args.json:
        print(json.dumps({"formats": formats, "files": [asdict(f) for f in files]}, indent=1))
        return 0
    names = [_shown(f.path, folder) for f in files]
    if folder.is_dir():
        print(f"under {folder}:")
    width = max([len("file"), *(len(n) for n in names)])
    print(f"{'file':<{width}}  {'format':<22}{'items':>7}{'flawed':>8}{'correct':>8}  note")
    for f, name in zip(files, names, strict=True):
        counts = ((f.bad, "malformed"), (f.excluded, "left out")) if f.format else ()
        extra = "".join(f"; {n} {what}" for n, what in counts if n)
        print(f"{name:<{width}}  {f.format or '-':<22}{f.items:>7}{f.flawed:>8}{f.correct:>8}  {f.note}{extra}")
    read = [f for f in files if f.format]
    print(f"\n{len(read)} of {len(files)} files readable: {sum(f.items for f in read)} items "
          f"({sum(f.flawed for f in read)} flawed, {sum(f.correct for f in read)} correct, "
          f"{sum(f.items for f in read if not f.flawed and not f.correct)} without labels)")
    return 0


def register(subparsers: Any) -> None:
    """Add ``formats`` to the main CLI's subparsers."""
    p = subparsers.add_parser("formats", help="list the formats it reads, and the datasets under a folder",
                              description="List the dataset formats, and with FOLDER every .json/.jsonl file under it "
                                          "with its detected format and item counts.")
    p.add_argument("folder", nargs="?", help="a folder (or file) to survey")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_formats)
