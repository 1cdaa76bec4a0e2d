"""Reading user files as UTF-8 text, with errors that name the file and say what is wrong.

A binary or Latin-1 file is an ``InputError`` (``PATH: not UTF-8 text (byte 0xe9 at offset 16)``),
never a ``UnicodeDecodeError`` traceback.
"""

from __future__ import annotations

from pathlib import Path

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
