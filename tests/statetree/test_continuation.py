"""Displays opened with "=" continue the expression above them: in the same letters, with nothing
known about them and no equation stated in only those letters, the pair claims an identity."""

import pytest
from faithsieve.statetree.continuation import constrains, continues

from faithsieve.mathtext.ast import BinOp, Num, Rel, Var
from faithsieve.mathtext.formulas import extract_formulas
from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps


def first(problem: str, *steps: str) -> int | None:
    return localize(proof_from_steps(problem, list(steps))).first_refutation


@pytest.mark.parametrize(("steps", "expected"), [
    # a chain of bare displays: the last rewrite drops a factor 2
    (["Simplify: \\[ = [2009 + 2009][2x] \\] \\[ = 2 \\times 2009 \\times 2x \\] \\[ = 4018x \\]"], 1),
    (["Simplify: \\[ = [2009 + 2009][2x] \\] \\[ = 2 \\times 2009 \\times 2x \\] \\[ = 8036x \\]"], None),
    # the first display of a step continues the previous step's last expression
    (["We have \\[ y = 2(x + 3) \\]", "Expanding: \\[ = 2x + 3 \\]"], 2),
    (["We have \\[ y = 2(x + 3) \\]", "Expanding: \\[ = 2x + 6 \\]"], None),
    # near misses: another formula (unread by the pairing) comes first, or a step lies between
    (["We have \\[ y = 2(x + 3) \\]", "We note \\(y > 0\\) and \\[ = 2x + 3 \\]"], None),
    (["We have \\[ y = 2(x + 3) \\]", "Note.", "Expanding: \\[ = 2x + 3 \\]"], None),
])
def test_continued_displays(steps: list[str], expected: int | None) -> None:
    assert first("Simplify.", *steps) == expected


def test_a_rewrite_that_holds_in_context_is_not_refuted() -> None:
    chain = ["We have \\[ y = x^3 \\]", "So \\[ = x(x+1) \\] \\[ = x^2 + x \\]"]
    assert first("Let $z^2 = z + 1$.", *chain) == 2  # an equation in another letter: x^3 = x(x+1) is no identity
    assert first("Let $x^2 = x + 1$.", *chain) is None  # x^3 = x(x+1) holds when x^2 = x + 1
    # a letter with a known value: a substitution, not an identity (x^2 = 2x at x = 2)
    assert first("Simplify.", "We have \\[ y = x^2 \\]", "So \\[ = 2x \\]") == 2
    assert first("Let $x = 2$.", "We have \\[ y = x^2 \\]", "So \\[ = 2x \\]") is None
    # other letters on the two sides: something from context was used
    assert first("Simplify.", "We have \\[ A = x + y \\]", "So \\[ = 2x \\]") is None


def test_continues_needs_nothing_but_delimiters_between_the_displays() -> None:
    fs = extract_formulas("\\[ = a + 1 \\] and so \\[ = a + 2 \\]")
    assert [continues(f, i == 0, "\\[") for i, f in enumerate(fs)] == [True, False]


def test_constrains() -> None:
    x, y = Var("x"), Var("y")
    one = Num(1, "1", 0)
    assert constrains(Rel(BinOp("*", x, x), "=", BinOp("+", x, one)), frozenset({"x"}))
    assert not constrains(Rel(BinOp("+", x, one), "=", BinOp("+", one, x)), frozenset({"x"}))  # an identity
    assert not constrains(Rel(BinOp("*", x, x), "=", y), frozenset({"x"}))  # in another letter too
    assert not constrains(Rel(x, "<", one), frozenset({"x"}))  # not an equation
