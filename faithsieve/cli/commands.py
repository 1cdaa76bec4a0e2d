"""The parser and the dispatch of the ``faithsieve`` command line."""

from __future__ import annotations

import argparse
import importlib
import logging
import signal
import sys
import threading
from typing import Any

from faithsieve.cli.common import (
    OneLineParser,
    VersionAction,
    add_verbosity,
    add_verbosity_everywhere,
    fail,
)
from faithsieve.core.errors import FaithSieveError
from faithsieve.runtime.textfile import os_error_line

COMMANDS = ("localize", "score", "predict", "calibrate", "convert", "compare", "formats", "inject", "rewrite", "serve", "view",
            "doctor", "formalize")
"""The subcommands, in ``--help`` order; each is the module ``faithsieve.cli.<name>`` with a ``register``."""


def _named_command(argv: list[str]) -> str | None:
    """The subcommand ``argv`` names (its first word that is not an option), when it is one of ``COMMANDS``."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; ``only``: register that subcommand alone (importing its module only), which is all a
    command line that names it needs, so ``faithsieve localize`` does not import the dataset adapters."""
    p = OneLineParser(prog="faithsieve", description="First-error localization for math proofs.")
    p.add_argument("--version", action=VersionAction,
                   help="print the version (and the checkers' versions) and exit")
    add_verbosity(p, top=True)
    sub = p.add_subparsers(dest="command", required=True)
    for name in (only,) if only else COMMANDS:
        importlib.import_module(f"faithsieve.cli.{name}").register(sub)
    add_verbosity_everywhere(sub)
    return p


def _stop_on_sigterm() -> Any:
    """SIGTERM unwinds like Ctrl-C: the worker pools close and the run's files are flushed (no leaked
    semaphores, a run resumable as after Ctrl-C), exit 143. A second SIGTERM kills at once. Returns the
    handler it replaced (``None`` when main() runs in another thread, which may not set handlers)."""

    def stop(signum: int, _frame: object) -> None:
        signal.signal(signum, signal.SIG_DFL)
        raise SystemExit(128 + signum)

    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, stop)


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(None if "--version" in words else _named_command(words))
    args = parser.parse_args(argv)
    if args.verbose and args.quiet:
        return fail("-v/--verbose and -q/--quiet exclude each other")
    level = logging.INFO if args.verbose else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    if args.verbose:  # also when the root logger was configured before (main() called from Python)
        logging.getLogger("faithsieve").setLevel(logging.INFO)
    previous = _stop_on_sigterm()
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head`: not an error
        sys.stderr.close()
        return 0
    except OSError as exc:  # a file the command could not read or write, whatever the command
        return fail(os_error_line(exc))
    except FaithSieveError as exc:
        return fail(exc.message)
    finally:
        if previous is not None:  # main() called from Python (tests, a notebook): its handler back
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
