"""``write_atomic`` and ``write_lines_atomic``: the bytes given, the mode asked for, nothing left behind."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from faithsieve.runtime.atomic import write_atomic, write_lines_atomic


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_text_and_bytes_are_written_as_given(tmp_path: Path) -> None:
    write_atomic(tmp_path / "a" / "t.txt", "é\n")
    write_atomic(tmp_path / "b.bin", b"\x00\xff")
    assert (tmp_path / "a" / "t.txt").read_bytes() == "é\n".encode()
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\xff"


def test_lines_are_streamed_with_newlines_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    assert write_lines_atomic(path, (f'{{"i": {i}}}' for i in range(3))) == 3
    assert path.read_bytes() == b'{"i": 0}\n{"i": 1}\n{"i": 2}\n'


@pytest.mark.parametrize("mode", [0o644, 0o600])
def test_mode_is_set_whatever_the_umask(tmp_path: Path, mode: int) -> None:
    old = os.umask(0o077)
    try:
        write_atomic(tmp_path / "f", "x", mode=mode)
        write_lines_atomic(tmp_path / "g", ["x"], mode=mode)
    finally:
        os.umask(old)
    assert _mode(tmp_path / "f") == _mode(tmp_path / "g") == mode


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "keep.txt"
    write_atomic(path, "old")

    def lines() -> Iterator[str]:
        yield "new"
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        write_lines_atomic(path, lines())
    assert path.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]
