"""What every ``faithsieve`` subcommand shares: one-line usage errors, ``-v``/``-q`` at any
position, ``--version``, and checks on option values and output paths.

Errors are one line on stderr (``error: PATH: reason``, or ``faithsieve CMD: error: ...`` for a
bad option), exit code 2; no usage dump, no traceback.
"""

from __future__ import annotations

import argparse
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

EXIT_USAGE = 2
"""Exit code of every usage or input error."""


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line (the usage is one ``--help`` away).
    Subparsers made from it are of the same class."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def package_version() -> str:
    """The installed faithsieve version (``unknown`` when run from a tree that is not installed)."""
    try:
        return metadata.version("faithsieve")
    except metadata.PackageNotFoundError:
        return "unknown"


def version_line() -> str:
    """``faithsieve X (python Y; sympy Z, z3 W)``: what ``--version`` prints."""
    from faithsieve.scoring.runinfo import backend_versions

    b = backend_versions()
    extra = ", ".join(f"{k} {v}" for k, v in b.items() if k not in ("python", "faithsieve"))
    return f"faithsieve {package_version()} (python {b['python']}; {extra})"


class VersionAction(argparse.Action):
    """``--version``: print ``version_line()`` unwrapped and exit 0."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(version_line())
        parser.exit(0)


def add_verbosity(p: argparse.ArgumentParser, *, top: bool) -> None:
    """``-v/--verbose`` and ``-q/--quiet``. On subparsers their default is ``SUPPRESS`` so a
    flag given before the subcommand is not reset by the subparser."""
    default: Any = False if top else argparse.SUPPRESS
    g = p.add_argument_group("output")
    g.add_argument("-v", "--verbose", action="store_true", default=default,
                   help="log progress and decisions to stderr (INFO level)")
    g.add_argument("-q", "--quiet", action="store_true", default=default,
                   help="print only warnings, errors and the result (no progress bar, no summary lines)")


def add_verbosity_everywhere(subparsers: Any) -> None:
    """Give every registered subcommand ``-v``/``-q`` (those that define them already are left alone)."""
    for sp in dict.fromkeys(subparsers.choices.values()):
        if not any("-v" in a.option_strings or "-q" in a.option_strings for a in sp._actions):
            add_verbosity(sp, top=False)


def non_negative_int(text: str) -> int:
    """``type=`` for counts such as ``--limit``: an integer >= 0."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {n}")
    return n


def positive_int(text: str) -> int:
    """``type=`` for sizes such as ``--workers``: an integer >= 1."""
    n = non_negative_int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {n}")
    return n


def positive_float(text: str) -> float:
    """``type=`` for limits in seconds such as ``--item-time-limit``: a finite number > 0."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < x < float("inf"):
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text}")
    return x


def output_file_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot be written as an output file (``None`` when it can be tried)."""
    p = Path(path)
    if p.is_dir():
        return f"{p}: is a directory; give a file name, e.g. {p / 'out.jsonl'}"
    parent = p.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        return f"{p}: {parent} is not a directory"
    return None


def wrong_jsonl(path: str | Path, text: str, fields: tuple[str, ...], what: str) -> str | None:
    """``None`` when the first record of the JSONL ``text`` is a JSON object with ``fields``; else the one
    line that says what the file is instead (``PATH: a JSON array of 60 objects ..., not JSONL; WHAT``)."""
    import json

    from faithsieve.runtime.textfile import json_file_kind, json_too_deep

    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    try:
        record = None if json_too_deep(first) else json.loads(first)
    except json.JSONDecodeError:
        record = None
    if isinstance(record, dict) and all(f in record for f in fields):
        return None
    kind = json_file_kind(text)
    if kind.startswith(("a JSON array", "one JSON object")):
        kind += ", not JSONL (one JSON object a line)"
    return f"{path}: {kind}; {what}"


def fail(message: str) -> int:
    """Print ``error: message`` as one line on stderr; return the usage exit code."""
    print(f"error: {' '.join(message.split())}", file=sys.stderr)
    return EXIT_USAGE


def error_line(exc: BaseException) -> str:
    """A caught error as its one line: an ``OSError`` as ``PATH: reason``, one of ours (``FaithSieveError``) by
    its message, anything else (``ValueError``) as it prints."""
    if isinstance(exc, OSError):
        from faithsieve.runtime.textfile import os_error_line

        return os_error_line(exc)
    return str(getattr(exc, "message", exc))


MAX_BAD_SHOWN = 50
"""Bad records listed one by one before the rest are counted."""


def err(msg: str) -> None:
    """One line on stderr."""
    print(msg, file=sys.stderr)


def report_dropped(data: Any) -> None:
    """The records a dataset load dropped (malformed, or excluded with a reason), on stderr."""
    for b in data.bad[:MAX_BAD_SHOWN]:
        err(f"bad record: {b}")
    if len(data.bad) > MAX_BAD_SHOWN:
        err(f"... and {len(data.bad) - MAX_BAD_SHOWN} more bad records")
    for reason, n in data.excluded_counts().items():
        err(f"excluded {n} record(s): {reason}")


def report_run(result: Any, n: int, nothing: str) -> bool:
    """What a bulk run (``score``, ``predict``) dropped and warned, on stderr; ``False`` after ``error: NOTHING``
    when it has no item (``n`` is 0: the command exits 1)."""
    report_dropped(result.dataset)
    for w in result.warnings:
        err(f"warning: {w}")
    if not n:
        err(f"error: {nothing}")
        return False
    return True
