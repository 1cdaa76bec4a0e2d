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
from collections.abc import Callable
from typing import Any


def cmd_serve(args: argparse.Namespace, prepare: Callable[[Any, Any], int] | None = None) -> int:
    """Start the service; returns when uvicorn stops (Ctrl-C). ``prepare(app, settings)``, when given, runs
    before the server starts (``faithsieve view`` opens its run there); a non-zero answer stops here."""
    from pydantic import ValidationError

    from faithsieve.api.server import serve
    from faithsieve.api.settings import ServiceSettings

    overrides: dict[str, Any] = {k: v for k, v in (("host", args.host), ("port", args.port),
                                                   ("workers", args.workers)) if v is not None}
    try:
        settings = ServiceSettings(**overrides)
    except ValidationError as exc:
        given = {"port": "--port", "host": "--host", "workers": "--workers"}
        parts = []
        for e in exc.errors():
            name = ".".join(str(x) for x in e["loc"])
            what = f"{given[name]} {overrides[name]}" if name in overrides else f"FAITHSIEVE_{name.upper()}"
            parts.append(f"{what}: {e['msg']}")
        print(f"error: invalid setting: {'; '.join(parts)}", file=sys.stderr)
        return 2
    busy = port_in_use(settings.host, settings.port)
    if busy:
        print(f"error: {busy}", file=sys.stderr)
        return 2
    logging.basicConfig(level=getattr(logging, args.log_level.upper()), format="%(levelname)s %(name)s: %(message)s")
    return serve(settings, log_level=args.log_level, access_log=args.access_log, prepare=prepare)


def port_in_use(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be bound (in use, or not an address here), before any server starts: one line
    instead of uvicorn's start-up and shutdown logs; ``None`` when it can (or for port 0)."""
    import errno
    import socket

    if port == 0:
        return None
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return f"--host {host}: not an address here ({exc.strerror})"
    family, kind, proto, _, addr = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: TIME_WAIT is no clash
        try:
            probe.bind(addr)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return (f"{host}:{port}: address already in use (another server listens there); choose another "
                        "--port or FAITHSIEVE_PORT")
            return f"{host}:{port}: cannot listen there ({exc.strerror})"
    return None


def register(subparsers: Any) -> None:
    """Add ``serve`` to the ``faithsieve`` command line."""
    p = subparsers.add_parser("serve", help="run the HTTP service (POST /localize, /localize/batch, /metrics, ...)",
                              description="Run the HTTP service. Other settings come from FAITHSIEVE_* environment "
                                          "variables (see api/README.md).")
    add_serve_options(p)
    p.set_defaults(func=cmd_serve)


def add_serve_options(p: argparse.ArgumentParser) -> None:
    """The options of ``serve`` (also taken by ``view``)."""
    p.add_argument("--host", default=None, help="interface to bind (default 127.0.0.1, or FAITHSIEVE_HOST)")
    p.add_argument("--port", type=int, default=None, help="TCP port (default 8000, or FAITHSIEVE_PORT)")
    p.add_argument("--workers", type=int, default=None,
                   help="worker processes running the pipeline (default 2, or FAITHSIEVE_WORKERS); one server process")
    p.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"))
    p.add_argument("--access-log", action="store_true", help="log every request")


def main(argv: list[str] | None = None) -> int:
    """Run ``serve`` alone (``python -m faithsieve.cli.serve``), before ``faithsieve.cli`` registers it."""
    parser = argparse.ArgumentParser(prog="faithsieve")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["serve", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
