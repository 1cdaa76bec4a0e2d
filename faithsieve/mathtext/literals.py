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
    "number_within",
    "show_number",
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


MAX_SHOWN_DIGITS = 1000
"""The most digits a number is printed with exactly (``show_number``); Python's ``str`` of an integer
refuses past 4,300 digits, and evidence, claims and Lean text stay readable."""


def show_number(v: Fraction | int, max_digits: int = MAX_SHOWN_DIGITS) -> str:
    """``v`` printed within ``max_digits`` digits: exactly (``12``, ``-3/4``) when its numerator and
    denominator have at most ``max_digits`` digits each; an exact power of ten as ``10^k``; otherwise
    ``≈ d.dddd × 10^k`` with correct leading digits (integer arithmetic on a bounded prefix, never ``str``
    of the whole number). The one printer of numbers in evidence, claims and Lean text."""
    q = Fraction(v)
    p, d = q.numerator, q.denominator
    if number_within(q, max_digits):
        return str(q)
    sign = "-" if p < 0 else ""
    p = abs(p)
    if d == 1:
        k = _power_of_ten(p)
        if k is not None:
            return f"{sign}10^{k}"
    k = _log10_floor(p) - _log10_floor(d)
    # five significant digits: 10^4 <= p·10^(4-k)/d < 10^6 (k may be off by one from the quotient's)
    shift = 4 - k
    m = (p * 10**shift) // d if shift >= 0 else p // (d * 10 ** (-shift))
    while m >= 100_000:
        m //= 10
        k += 1
    while m < 10_000:
        k -= 1
        shift = 4 - k
        m = (p * 10**shift) // d if shift >= 0 else p // (d * 10 ** (-shift))
    digits = str(m)
    return f"{sign}≈ {digits[0]}.{digits[1:]} × 10^{k}"


def number_within(v: Fraction | int, max_digits: int = MAX_SHOWN_DIGITS) -> bool:
    """The numerator and the denominator of ``v`` have at most ``max_digits`` digits each: what may be
    written out exactly (in Lean text, to an SMT solver) or printed with ``str``."""
    q = Fraction(v)
    return _digits_at_most(abs(q.numerator), max_digits) and _digits_at_most(q.denominator, max_digits)


def _digits_at_most(n: int, k: int) -> bool:
    """``n >= 0`` has at most ``k`` decimal digits (without printing it)."""
    return n.bit_length() <= 3 * k or n < 10**k


def _log10_floor(n: int) -> int:
    """``⌊log10 n⌋`` for ``n >= 1`` by bit length and one comparison with a power of ten."""
    k = max(0, int((n.bit_length() - 1) * 0.30102999566398114) - 1)
    while 10 ** (k + 1) <= n:
        k += 1
    return k


def _power_of_ten(n: int) -> int | None:
    k = _log10_floor(n)
    return k if 10**k == n else None
