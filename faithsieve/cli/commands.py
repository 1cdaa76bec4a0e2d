"""The parser and the dispatch of the ``faithsieve`` command line."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from typing import Any

from faithsieve.cli import calibrate as cli_calibrate
from faithsieve.cli import compare as cli_compare
from faithsieve.cli import convert as cli_convert
from faithsieve.cli import doctor as cli_doctor
from faithsieve.cli import formalize as cli_formalize
from faithsieve.cli import inject as cli_inject
from faithsieve.cli import localize as cli_localize
from faithsieve.cli import rewrite as cli_rewrite
from faithsieve.cli import score as cli_score
from faithsieve.cli import serve as cli_serve
from faithsieve.cli import view as cli_view
from faithsieve.cli.common import (
    OneLineParser,
    VersionAction,
    add_verbosity,
    add_verbosity_everywhere,
    fail,
)
from faithsieve.core.errors import FaithSieveError
from faithsieve.runtime.textfile import os_error_line


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="faithsieve", description="First-error localization for math proofs.")
    p.add_argument("--version", action=VersionAction,
                   help="print the version (and the checkers' versions) and exit")
    add_verbosity(p, top=True)
    sub = p.add_subparsers(dest="command", required=True)

    cli_localize.register(sub)
    cli_score.register(sub)
    cli_calibrate.register(sub)
    cli_convert.register(sub)
    cli_compare.register(sub)
    cli_inject.register(sub)
    cli_rewrite.register(sub)
    cli_serve.register(sub)
    cli_view.register(sub)
    cli_doctor.register(sub)
    cli_formalize.register(sub)
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
    parser = build_parser()
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
