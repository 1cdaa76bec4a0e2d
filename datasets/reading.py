"""Reading dataset files: which files a path holds, and the records of one JSON/JSONL file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from faithsieve.datasets.formats import BadRecord

from faithsieve.core.errors import InputError
from faithsieve.runtime.textfile import (
    MAX_JSON_DEPTH,
    json_file_kind,
    json_too_deep,
    read_utf8,
)

__all__ = ["dataset_files", "read_records"]

_JSON_SUFFIXES = (".json", ".jsonl")


def read_records(path: Path) -> Iterator[tuple[str, int, object] | BadRecord]:
    """Yield ``(location, index, record)`` for each record of a JSON/JSONL file, or a ``BadRecord``.

    A JSON array gives its elements; an object whose values are all lists of objects (MR-Ben)
    gives those, located ``KEY[i]``; any other JSON object in a ``.json`` file is one record (a
    pretty-printed ``localize`` input, located ``object``); anything else is read as JSONL, one record a line.
    A file that is not UTF-8 text, or whose JSON nests deeper than ``MAX_JSON_DEPTH``, raises
    ``InputError`` naming it; a file whose first line is not JSON is one ``BadRecord`` saying what the
    file is (``not JSON (line 1 starts '# Title')``), not one per line.
    """
    text = read_utf8(path)
    if json_too_deep(text):
        raise InputError(f"{path}: JSON nested deeper than {MAX_JSON_DEPTH} levels; not a dataset file")
    head = text.lstrip()[:1]
    whole: object = None
    parsed = False
    if head in ("[", "{"):
        try:
            whole, parsed = json.loads(text), True
        except json.JSONDecodeError as exc:
            if head == "[":
                yield BadRecord(path=str(path), location=f"line {exc.lineno}", reason=f"invalid JSON ({exc.msg})")
                return
    if parsed and isinstance(whole, list):
        for i, rec in enumerate(whole):
            yield f"index {i}", i, rec
        return
    if parsed and isinstance(whole, dict) and whole and all(
        isinstance(v, list) and v and all(isinstance(x, dict) for x in v) for v in whole.values()
    ):
        i = 0
        for key, recs in whole.items():
            for j, rec in enumerate(recs):
                yield f"{key}[{j}]", i, rec
                i += 1
        return
    if parsed and isinstance(whole, dict) and path.suffix != ".jsonl":
        yield "object", 0, whole
        return
    i = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            if not i:  # the first record already: say what the file is, once
                yield BadRecord(path=str(path), location=f"line {lineno}",
                                reason=f"{json_file_kind(text)}; a dataset is JSONL, a JSON array or a JSON object")
                return
            yield BadRecord(path=str(path), location=f"line {lineno}", reason=f"invalid JSON ({exc.msg}, column {exc.colno})")
            continue
        yield f"line {lineno}", i, rec
        i += 1


def dataset_files(path: Path) -> list[Path]:
    """The data files of a path: itself, or every ``.json``/``.jsonl`` below a directory, sorted."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _JSON_SUFFIXES)
    if not path.exists():
        raise FileNotFoundError(f"no such file or directory: {path}")
    return [path]

