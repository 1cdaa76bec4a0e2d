"""Atomic file writes: readers see the old content or the new one, never a mix."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO


def write_atomic(path: Path, data: str | bytes, *, mode: int | None = None) -> None:
    """Write a file so that readers see the old or the new content, never a mix: temp file,
    fsync, ``os.replace``. A ``str`` is written as UTF-8. ``mode`` sets the file's permission
    bits (``0o644``, ...); without it they are the umask's, as for any new file."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    _replace(path, lambda fh: fh.write(raw), mode)


def write_lines_atomic(path: Path, lines: Iterable[str], *, mode: int | None = None) -> int:
    """``write_atomic`` for text given line by line (each without its ``\\n``, which is added):
    the lines are streamed to the temp file, not joined in memory. Returns how many were written."""
    count = 0

    def write(fh: BinaryIO) -> None:
        nonlocal count
        for line in lines:
            fh.write(line.encode("utf-8") + b"\n")
            count += 1

    _replace(path, write, mode)
    return count


def _replace(path: Path, write: Callable[[BinaryIO], object], mode: int | None) -> None:
    """Write a temp file beside ``path`` with ``write``, fsync it, set ``mode``, and move it onto
    ``path``; on any failure the temp file is removed and the old file is left as it was."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)  # nothing half-written left behind
        raise
