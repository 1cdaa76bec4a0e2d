"""``faithsieve view RUN_DIR``: the service with the workbench, one scoring run opened in it.

Starts what ``faithsieve serve`` starts (same options, same ``FAITHSIEVE_*`` settings), allows
the page to show ``RUN_DIR`` (and only the runs it may show anyway: see ``faithsieve.api.workbench.runs``),
and prints the URL that opens it. ``faithsieve.cli`` calls ``register(subparsers)``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from faithsieve.cli import serve as cli_serve
from faithsieve.core.errors import FaithSieveError


def view_url(host: str, port: int, run_id: str) -> str:
    """The page's address with the run opened (``#run=<id>``)."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/#run={run_id}"


def cmd_view(args: argparse.Namespace) -> int:
    """Open ``args.run_dir`` in a new service and serve it until Ctrl-C."""
    dataset = Path(args.dataset) if args.dataset else None
    if dataset is not None and not dataset.exists():
        print(f"error: no dataset at {dataset}", file=sys.stderr)
        return 2

    def prepare(app: Any, settings: Any) -> int:
        try:
            run = app.state.workbench_runs.add(Path(args.run_dir), dataset)
        except FaithSieveError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return 2
        print(f"FaithSieve workbench: {view_url(settings.host, settings.port, run.id)}", flush=True)
        return 0

    return cli_serve.cmd_serve(args, prepare)


def register(subparsers: Any) -> None:
    """Add ``view`` to the ``faithsieve`` command line (the options of ``serve``, plus the run)."""
    v = subparsers.add_parser("view", help="open a scoring run in the web workbench (starts the service)",
                              description="Serve the workbench with RUN_DIR opened and print its URL. Other "
                                          "settings as for `faithsieve serve` (FAITHSIEVE_* variables).")
    v.add_argument("run_dir", help="a directory written by `faithsieve score` (predictions.jsonl, metrics.json)")
    v.add_argument("--dataset", default=None,
                   help="where the run's items are read from, when run.json's dataset path does not resolve here")
    cli_serve.add_serve_options(v)
    v.set_defaults(func=cmd_view)
