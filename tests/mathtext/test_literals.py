"""The one number-literal reader: each caller's style is exactly the pattern that caller used to
write by hand, literals carry their spans, and formula literals keep their span outside equality."""

from __future__ import annotations

import random
import re
from fractions import Fraction

import pytest
from faithsieve.datasets.injection.tokens import ArithError

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext import literals as lt
from faithsieve.mathtext.ast import Expr, Num, walk
from faithsieve.mathtext.formulas import extract_formulas
from faithsieve.mathtext.lexer import tokenize_latex, tokenize_plain
from faithsieve.mathtext.parser import parse_tokens

# The hand-written patterns the styles replace (lexer plain/LaTeX, injection, repair screen,
# rewrite annotations, literal-claim test), as they stood.
_OLD = {
    lt.TEXT: r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+",
    lt.LATEX: r"(?:\d{1,3}(?:(?:,|\{,\})\d{3})+|\d+)(?:\.\d+)?|\.\d+",
    lt.GROUPED_WHOLE: r"\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)|\d+(?:\.\d+)?|\.\d+",
    lt.GROUPED_INTEGERS: r"\d{1,3}(?:,\d{3})+(?!\d)|\d+(?:\.\d+)?",
    lt.PLAIN: r"\d+(?:\.\d+)?|\.\d+",
    lt.DIGITS: r"\d+(?:\.\d+)?",
}


@pytest.mark.parametrize("style", list(_OLD))
def test_each_style_reads_what_its_caller_read(style: lt.NumberStyle) -> None:
    assert lt.number_source(style) == _OLD[style]
    old = re.compile(_OLD[style])
    rng = random.Random(7)
    for _ in range(300):
        text = "".join(rng.choice("0123456789,.{} x") for _ in range(rng.randint(0, 30)))
        assert [(m.group(), m.start(), m.end()) for m in old.finditer(text)] == [
            tuple(lit) for lit in lt.scan_numbers(text, style)]


def test_literals_carry_spans_and_values() -> None:
    text = "pay $1,200.50 or .5 of 3{,}000"
    got = list(lt.scan_numbers(text, lt.LATEX))
    assert [(text[x.start:x.end], x.value) for x in got] == [
        ("1,200.50", Fraction(2401, 2)), (".5", Fraction(1, 2)), ("3{,}000", Fraction(3000))]
    assert lt.read_number(text, 5) == lt.Literal("1,200.50", 5, 13)
    assert lt.read_number(text, 4) is None
    assert lt.strip_thousands("1,2345 and 1,23") == "12345 and 1,23"


def test_formula_literals_carry_their_spans() -> None:
    text = "so 12 + 3.5 = 15.5"
    chain, _ = parse_tokens(tokenize_plain(text[3:], offset=3), latex=False)
    nums = [n for e in chain.exprs for n in _nums(e)]
    assert [text[n.start:n.end] for n in nums] == ["12", "3.5", "15.5"]
    latex = r"\frac12 + 2"
    chain, _ = parse_tokens(tokenize_latex(latex), latex=True)
    assert [(latex[n.start:n.end], n.value) for n in _nums(chain.exprs[0])] == [
        ("1", 1), ("2", 2), ("2", 2)]
    # the span is not part of a literal's identity
    assert Num(Fraction(3), "3", 0, 0, 1) == Num(Fraction(3), "3", 0, 7, 8)
    assert hash(Num(Fraction(3), "3", 0, 0, 1)) == hash(Num(Fraction(3), "3", 0))
    assert repr(Num(Fraction(3), "3", 0, 0, 1)) == repr(Num(Fraction(3), "3", 0))
    assert extract_formulas("We get 2 + 2 = 4.")  # the extractor still reads formulas


def _nums(e: Expr) -> list[Num]:
    return sorted((n for n in walk(e) if isinstance(n, Num)), key=lambda n: n.start)


def test_arith_errors_are_under_the_root_and_still_value_errors() -> None:
    assert issubclass(ArithError, FaithSieveError) and issubclass(ArithError, ValueError)
    assert str(ArithError("bad")) == "bad"
