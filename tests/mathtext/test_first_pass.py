"""The raw first pass of the formula reader (``faithsieve.mathtext.first_pass``)."""

from __future__ import annotations

from fractions import Fraction

from faithsieve.mathtext.first_pass import (
    NUMBER,
    SPACE,
    SYMBOL,
    WORD,
    master_pattern,
    scan,
)
from faithsieve.mathtext.literals import GROUPED_WHOLE, LATEX


def _kinds(text: str, style=GROUPED_WHOLE) -> list[tuple[str, str]]:
    return [(t.kind, t.text) for t in scan(text, style)]


def test_tokens_cover_the_text_with_their_spans() -> None:
    text = "Élodie paid $1,200.50 \n\t+ 3×4 = ½ [ok]"
    toks = list(scan(text))
    assert "".join(t.text for t in toks) == text
    assert all(text[t.start : t.end] == t.text for t in toks)
    assert all(a.end == b.start for a, b in zip(toks, toks[1:], strict=False))


def test_kinds() -> None:
    assert _kinds("Élodie  ate\n3.5 pies$") == [
        (WORD, "Élodie"), (SPACE, "  "), (WORD, "ate"), (SPACE, "\n"), (NUMBER, "3.5"), (SPACE, " "),
        (WORD, "pies"), (SYMBOL, "$"),
    ]


def test_numbers_follow_the_style() -> None:
    assert _kinds("1,2345") == [(NUMBER, "1"), (SYMBOL, ","), (NUMBER, "2345")]
    assert _kinds("1,234") == [(NUMBER, "1,234")]
    assert _kinds("1{,}234", LATEX)[0] == (NUMBER, "1{,}234")
    assert next(scan("1,200.50")).value == Fraction(2401, 2)
    assert _kinds(". .5") == [(SYMBOL, "."), (SPACE, " "), (NUMBER, ".5")]


def test_a_number_starts_at_an_ascii_digit() -> None:
    # a non-ASCII decimal digit is a symbol of its own, not a number nor part of a word
    assert _kinds("\u0663x") == [(SYMBOL, "\u0663"), (WORD, "x")]
    # a superscript digit is no decimal digit: like a letter, it joins a word (as it always did
    # in the injector's tokenizer)
    assert _kinds("²") == [(WORD, "²")]


def test_master_pattern_extras_and_classes() -> None:
    pat = master_pattern(GROUPED_WHOLE, words="[A-Za-z]+", spaces="[ ]+", extras=(("rel2", "<=|>="),))
    got = [(m.lastgroup, m.group()) for m in pat.finditer("ab<=é\n")]
    assert got == [(WORD, "ab"), ("rel2", "<="), (SYMBOL, "é"), (SYMBOL, "\n")]
