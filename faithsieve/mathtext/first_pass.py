"""The raw first pass of the formula reader: a text as numbers, words, whitespace runs and symbols.

Every reader of formula text starts the same way: one left-to-right pass of a master pattern
that cuts the text into tokens carrying their character spans. Numbers are read by
:mod:`faithsieve.mathtext.literals` (the caller names its :class:`~.literals.NumberStyle`);
a word is a run of letters; a whitespace run is one token; anything else is a one-character
symbol. Nothing is interpreted here — what an ``x``, a ``$`` or a ``[`` means is the business of
the reader walking over the pass (the plain and LaTeX lexers, the error injector's tokenizer).

:func:`scan` is the pass with its default classes (Unicode letters, every whitespace character,
numbers beginning with an ASCII digit or point); :func:`master_pattern` builds the pattern of a
pass for readers that need narrower classes or extra alternatives (the lexers' LaTeX commands,
superscripts and two-character relations). Every alternative is linear (no nested quantifiers),
so long texts cannot make the pass backtrack.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from fractions import Fraction
from functools import cache
from typing import NamedTuple

from faithsieve.mathtext.literals import TEXT, NumberStyle, decimal_value, number_source

__all__ = [
    "ANY_SPACE",
    "NUMBER",
    "SPACE",
    "SYMBOL",
    "UNICODE_WORD",
    "WORD",
    "Scanned",
    "master_pattern",
    "scan",
]

# Kinds of a raw token: the group names of every master pattern
NUMBER = "num"
WORD = "word"
SPACE = "ws"
SYMBOL = "ch"

UNICODE_WORD = r"[^\W\d_]+"
"""A run of letters in any script (the default word class)."""
ANY_SPACE = r"\s+"
"""A run of whitespace, newlines included (the default space class; the same characters as
``str.isspace``)."""


class Scanned(NamedTuple):
    """One raw token: ``kind`` (:data:`NUMBER`, :data:`WORD`, :data:`SPACE`, :data:`SYMBOL`, or
    the name of a reader's extra alternative) and the ``text`` it covers at ``[start, end)``."""

    kind: str
    text: str
    start: int
    end: int

    @property
    def value(self) -> Fraction:
        """The exact value of a :data:`NUMBER` token."""
        return decimal_value(self.text)


def master_pattern(
    style: NumberStyle,
    *,
    words: str = UNICODE_WORD,
    spaces: str = ANY_SPACE,
    extras: tuple[tuple[str, str], ...] = (),
    ascii_numbers: bool = True,
) -> re.Pattern[str]:
    """The master pattern of a raw pass: numbers in ``style``, then the ``extras`` (``(group name,
    pattern source)`` pairs, tried in order), then ``words``, ``spaces`` and any one character.
    ``ascii_numbers``: a number must begin with an ASCII digit or point (``\\d`` alone also starts
    one at any Unicode decimal digit)."""
    number = number_source(style)
    if ascii_numbers:
        number = rf"(?=[0-9.])(?:{number})"
    parts = [f"(?P<{NUMBER}>{number})"]
    parts += [f"(?P<{name}>{source})" for name, source in extras]
    parts += [f"(?P<{WORD}>{words})", f"(?P<{SPACE}>{spaces})", f"(?P<{SYMBOL}>.)"]
    return re.compile("|".join(parts), re.S)


@cache
def _default_pattern(style: NumberStyle) -> re.Pattern[str]:
    return master_pattern(style)


def scan(text: str, style: NumberStyle = TEXT) -> Iterator[Scanned]:
    """The raw tokens of ``text``, left to right, covering every character: numbers in ``style``
    (beginning with an ASCII digit or point), Unicode letter runs, whitespace runs (newlines
    included), and one-character symbols."""
    for m in _default_pattern(style).finditer(text):
        yield Scanned(m.lastgroup or SYMBOL, m.group(), m.start(), m.end())
