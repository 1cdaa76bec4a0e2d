"""Reading user files as UTF-8 text, with errors that name the file and say what is wrong.

A binary or Latin-1 file is an ``InputError`` (``PATH: not UTF-8 text (byte 0xe9 at offset 16)``),
never a ``UnicodeDecodeError`` traceback.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from faithsieve.core.errors import InputError


def decode_utf8(raw: bytes, name: str) -> str:
    """``raw`` as text (a leading UTF-8 byte-order mark dropped, as the service drops it: editors on
    Windows write one); ``InputError`` naming ``name`` and the first bad byte otherwise."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start]
        raise InputError(f"{name}: not UTF-8 text (byte 0x{bad:02x} at offset {exc.start}); "
                         f"save it as UTF-8") from None


def read_utf8(path: str | Path) -> str:
    """The file's text (``OSError`` as usual when it cannot be read; ``InputError`` when not UTF-8)."""
    p = Path(path)
    return decode_utf8(p.read_bytes(), str(p))


def os_error_line(exc: OSError) -> str:
    """An ``OSError`` as ``PATH: reason`` (``[Errno 21] Is a directory: 'x'`` becomes ``x: is a directory``)."""
    reason = (exc.strerror or str(exc)).rstrip(".")
    reason = reason[:1].lower() + reason[1:]
    name = exc.filename2 if isinstance(exc.filename2, str) else exc.filename
    return f"{name}: {reason}" if name is not None else reason


# ---- JSON read from user files: bounded nesting, and what a wrong file is

MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays and objects accepted in a user's JSON file or line. Datasets, proofs and
rewritten rows nest a few levels; Python's parser and every walk over its result recurse, so a deeper
document is refused before it is parsed (``InputError``), never a ``RecursionError`` traceback."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
"""A JSON string, the loop unrolled: a run of plain characters is one step of the regex engine (the
alternation per character kept a backtracking frame per character: 2.6 GB for a 22 MB string)."""
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_PAIR = re.compile(r"\[\]|\{\}")


def json_too_deep(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``text`` nests arrays/objects deeper than ``limit`` (strings are skipped). Linear passes in
    C: the brackets left once strings are gone lose their innermost pairs once a pass, ``limit`` passes."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(limit):
        if not brackets:
            return False
        brackets, n = _PAIR.subn("", brackets)
        if not n:  # unbalanced (the parser says where): deep when more are left open than the limit
            return sum(brackets.count(c) for c in "[{") > limit
    return _PAIR.search(brackets) is not None


def loads_json(text: str, name: str) -> Any:
    """``json.loads(text)`` with the nesting bounded: ``InputError`` naming ``name`` when ``text`` nests
    deeper than ``MAX_JSON_DEPTH``; ``json.JSONDecodeError`` as usual for text that is not JSON."""
    if json_too_deep(text):
        raise InputError(f"{name}: JSON nested deeper than {MAX_JSON_DEPTH} levels (no proof, dataset or "
                         "rewritten row nests like that)")
    try:
        return json.loads(text)
    except RecursionError:  # not reached with the bound above; kept so no traceback can leak
        raise InputError(f"{name}: JSON nested too deeply to read") from None


def _records_word(values: list[Any]) -> str:
    kinds = {type(v).__name__ for v in values}
    if kinds == {"dict"}:
        fields = sorted({k for v in values[:50] for k in v})
        return f"objects with fields {', '.join(fields[:8])}{', ...' if len(fields) > 8 else ''}"
    return "values" if len(kinds) != 1 else {"list": "arrays", "str": "strings"}.get(kinds.pop(), "values")


def json_file_kind(text: str) -> str:
    """What a file's text is, in words, for the one line of a wrong-file error: ``a JSON array of 60
    objects with fields answer, question``, ``one JSON object over 40 lines (...)``, ``JSONL of objects
    with fields ...``, ``not JSON (line 1 starts 'a,b,c')``, ``an empty file``."""
    lines = [(i, ln) for i, ln in enumerate(text.splitlines(), 1) if ln.strip()]
    if not lines:
        return "an empty file"
    if json_too_deep(text):
        return f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
    if text.lstrip()[:1] in ("[", "{"):
        try:
            whole = json.loads(text)
        except json.JSONDecodeError:
            whole = None
        if isinstance(whole, list):
            return f"a JSON array of {len(whole)} {_records_word(whole)}"
        if isinstance(whole, dict) and len(lines) > 1:
            return f"one JSON object over {len(lines)} lines ({_records_word([whole])})"
    lineno, first = lines[0]
    try:
        record = json.loads(first)
    except json.JSONDecodeError:
        return f"not JSON (line {lineno} starts {first.strip()[:40]!r})"
    if isinstance(record, dict):
        return f"JSONL of {_records_word([record])}"
    return f"JSONL whose line {lineno} is a JSON {type(record).__name__}, not an object"
