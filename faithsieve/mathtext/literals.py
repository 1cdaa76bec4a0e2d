"""Number literals as proofs write them: the one reader every part of FaithSieve uses.

A number is digits with an optional decimal part (``12``, ``1.5``), optionally a bare decimal
part (``.5``), optionally with thousands groups (``1,200``; ``1{,}200`` in LaTeX). Callers differ
only in which of these forms they accept, so each names a :class:`NumberStyle`; the pattern of a
style is built here from the same pieces, and every match is a :class:`Literal` that carries its
character span. Patterns are linear (no nested quantifiers), so long texts cannot make them
backtrack.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from fractions import Fraction
from functools import cache
from typing import NamedTuple

__all__ = [
    "DIGITS",
    "GROUPED_INTEGERS",
    "GROUPED_WHOLE",
    "LATEX",
    "PLAIN",
    "TEXT",
    "Literal",
    "NumberStyle",
    "decimal_value",
    "number_pattern",
    "number_source",
    "read_number",
    "scan_numbers",
    "strip_thousands",
]


class NumberStyle(NamedTuple):
    """Which written forms of a number a reader accepts."""

    separators: tuple[str, ...] = (",",)
    """Thousands separators (``","``; LaTeX also ``"{,}"``); empty: no thousands groups."""
    whole_groups: bool = False
    """A grouped number may not run on into more digits (``1,2345`` is then ``1`` and ``2345``)."""
    grouped_decimals: bool = True
    """A grouped number may have a decimal part (``1,200.50``)."""
    leading_point: bool = True
    """A bare decimal part is a number (``.5``)."""


TEXT = NumberStyle()
"""Plain-text formulas (the lexer): ``1,200.5``, ``.5``; groups need not end the digits."""
LATEX = NumberStyle(separators=(",", "{,}"))
"""LaTeX formulas (the lexer): as :data:`TEXT`, and ``1{,}200``."""
GROUPED_WHOLE = NumberStyle(whole_groups=True)
"""Step texts the error injector edits: a grouped number ends its digits."""
GROUPED_INTEGERS = NumberStyle(whole_groups=True, grouped_decimals=False, leading_point=False)
"""Numbers compared as strings by the decomposition repair screen: groups of integers only."""
PLAIN = NumberStyle(separators=())
"""Digits with an optional decimal part, or a bare decimal part: no thousands groups."""
DIGITS = NumberStyle(separators=(), leading_point=False)
"""Digits with an optional decimal part only."""

_DECIMAL = r"(?:\.\d+)?"


def number_source(style: NumberStyle) -> str:
    """The regular expression (source text, no groups) of a number in ``style``."""
    alternatives = []
    if style.separators:
        sep = "|".join(re.escape(s) for s in style.separators)
        sep = sep if len(style.separators) == 1 else f"(?:{sep})"
        grouped = rf"\d{{1,3}}(?:{sep}\d{{3}})+"
        if style.whole_groups:
            alternatives.append(grouped + (_DECIMAL if style.grouped_decimals else "") + r"(?!\d)")
            alternatives.append(r"\d+" + _DECIMAL)
        else:
            # a failed group falls back to plain digits; the decimal part is the same for both
            alternatives.append(rf"(?:{grouped}|\d+)" + (_DECIMAL if style.grouped_decimals else ""))
    else:
        alternatives.append(r"\d+" + _DECIMAL)
    if style.leading_point:
        alternatives.append(r"\.\d+")
    return "|".join(alternatives)


@cache
def number_pattern(style: NumberStyle) -> re.Pattern[str]:
    """The compiled pattern of a number in ``style``."""
    return re.compile(number_source(style))


class Literal(NamedTuple):
    """A number as written, at ``[start, end)`` of the text it was read from."""

    text: str
    start: int
    end: int

    @property
    def value(self) -> Fraction:
        """The exact value (thousands separators dropped)."""
        return decimal_value(self.text)


def decimal_value(text: str) -> Fraction:
    """``"1,200.50"`` -> ``Fraction(2401, 2)``: the exact value of a literal this module read."""
    return Fraction(text.replace("{,}", "").replace(",", ""))


def read_number(text: str, pos: int, style: NumberStyle = TEXT) -> Literal | None:
    """The number that starts exactly at ``text[pos]``, or ``None``."""
    m = number_pattern(style).match(text, pos)
    return Literal(m.group(), m.start(), m.end()) if m else None


def scan_numbers(text: str, style: NumberStyle = TEXT) -> Iterator[Literal]:
    """Every number of ``text`` in ``style``, left to right, without overlap."""
    for m in number_pattern(style).finditer(text):
        yield Literal(m.group(), m.start(), m.end())


_THOUSANDS_COMMA = re.compile(r"(?<=\d),(?=\d{3})")


def strip_thousands(text: str) -> str:
    """``text`` with every comma between a digit and three digits removed (``1,200`` -> ``1200``)."""
    return _THOUSANDS_COMMA.sub("", text)
