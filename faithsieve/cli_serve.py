"""``faithsieve serve``: run the HTTP service (uvicorn, one server process, a pool of workers).

For several server processes behind one port, see ``faithsieve.api.gunicorn_worker``.

Thin: builds ``ServiceSettings`` (environment, ``FAITHSIEVE_`` prefix) with the command line's
overrides, configures logging, and hands the app to uvicorn. ``faithsieve.cli`` calls
``register(subparsers)``.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any


def cmd_serve(args: argparse.Namespace) -> int:
    """Start the service; returns when uvicorn stops (Ctrl-C)."""
    from pydantic import ValidationError

    from faithsieve.api.server import serve
    from faithsieve.api.settings import ServiceSettings

    overrides: dict[str, Any] = {k: v for k, v in (("host", args.host), ("port", args.port),
                                                   ("workers", args.workers)) if v is not None}
    try:
        settings = ServiceSettings(**overrides)
    except ValidationError as exc:
        print(f"error: invalid settings: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=getattr(logging, args.log_level.upper()), format="%(levelname)s %(name)s: %(message)s")
    serve(settings, log_level=args.log_level, access_log=args.access_log)
    return 0


def register(subparsers: Any) -> None:
    """Add ``serve`` to the ``faithsieve`` command line."""
    p = subparsers.add_parser("serve", help="run the HTTP service (POST /localize, /localize/batch, /metrics, ...)",
                              description="Run the HTTP service. Other settings come from FAITHSIEVE_* environment "
                                          "variables (see api/README.md).")
    p.add_argument("--host", default=None, help="interface to bind (default 127.0.0.1, or FAITHSIEVE_HOST)")
    p.add_argument("--port", type=int, default=None, help="TCP port (default 8000, or FAITHSIEVE_PORT)")
    p.add_argument("--workers", type=int, default=None,
                   help="worker processes running the pipeline (default 2, or FAITHSIEVE_WORKERS); one server process")
    p.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"))
    p.add_argument("--access-log", action="store_true", help="log every request")
    p.set_defaults(func=cmd_serve)


def main(argv: list[str] | None = None) -> int:
    """Run ``serve`` alone (``python -m faithsieve.cli_serve``), before ``faithsieve.cli`` registers it."""
    parser = argparse.ArgumentParser(prog="faithsieve")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["serve", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
