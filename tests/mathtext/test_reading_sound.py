"""False alarms of the offline sieve traced to the reader: two equations run together in plain text, and a
formula the text names as a slip or a typo (round 3, soundness)."""

from __future__ import annotations

import pytest
import sympy

from faithsieve.mathtext import extract_formulas, render_chain
from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps


def chains(text: str) -> list[str]:
    return [render_chain(f.chain) for f in extract_formulas(text)]


def first(*steps: str, problem: str = "Solve for x.") -> int | None:
    return localize(proof_from_steps(problem, list(steps))).first_refutation


def test_a_signed_number_opens_the_next_equation() -> None:
    """ "-14 = x + 2 -16 = x": the line break between two lines of a solution was lost. The text spaces
    its binary operators ("x + 2"), so "-16", written against its minus, is a number with its sign, and
    with a relation after it it is the next equation."""
    assert chains("Solving: -14 = x + 2 -16 = x. So x = -16.") == ["-14 = x + 2", "-16 = x", "x = -16"]
    x = sympy.Symbol("x")
    assert sympy.solve(sympy.Eq(-14, x + 2), x) == [-16]


def test_the_run_together_solution_is_not_flagged() -> None:
    steps = ("From the midpoint formula, -7 = (x + 2)/2 and 0 = (y + 4)/2.",
             "Solving the first for x: -14 = x + 2 -16 = x. So, x = -16.",
             "Solving the second for y: 0 = y + 4 -4 = y. So, y = -4.")
    assert first(*steps, problem="The midpoint of (x, y) and (2, 4) is (-7, 0). Find (x, y).") is None


def test_a_wrong_line_in_a_run_together_solution_is_still_caught() -> None:
    """Each of the two equations is checked: 10 = 3 + 4 is false (sympy: 3 + 4 = 7)."""
    assert sympy.Integer(3) + 4 != 10
    assert first("We start.", "We get 10 = 3 + 4 -3 = 4.") == 2


@pytest.mark.parametrize(("text", "want"), [
    # no binary operator spaced on both sides: "5 -3" is the subtraction typed without its second space
    ("Then x = 5 -3 = 2.", ["x = 5 - 3 = 2"]),
    # the minus between spaces is binary
    ("Then x + 2 - 16 = 4.", ["x + 2 - 16 = 4"]),
    # a signed number that no relation follows is a term
    ("We have 4 = x + 2 -16 .", ["4 = x + 2 - 16"]),
])
def test_a_minus_is_a_sign_only_where_the_text_says_so(text: str, want: list[str]) -> None:
    assert chains(text) == want


def test_glued_chain_truth_checked_with_sympy() -> None:
    """The chain kept whole above is true as written (sympy), so reading it whole flags nothing."""
    assert sympy.Integer(5) - 3 == 2
    assert first("We start.", "Then x = 5 -3 = 2.", problem="Compute 5 - 3.") is None


@pytest.mark.parametrize("word", ["slip", "typo", "blunder", "pitfall", "misprint", "mistake"])
def test_a_formula_named_as_a_slip_is_not_asserted(word: str) -> None:
    """ "a common slip is to write 3x = 13" mentions a wrong formula; it does not claim it. The claim
    that is made, 3x = 12 with x = 4, holds (sympy)."""
    x = sympy.Symbol("x")
    assert sympy.solve(sympy.Eq(3 * x, 12), x) == [4]
    step = f"We need $3x = 12$ (a common {word} is to write $3x = 13$), so $x = 4$."
    assert first(step, problem="Solve $3x = 12$.") is None


def test_a_false_claim_beside_the_word_is_still_caught() -> None:
    """The cue covers the clause that names the slip, not the sentences after it: 3 * 4 = 13 is false."""
    assert 3 * 4 != 13
    assert first("A common slip is to forget the sign.", "We compute $3 \\cdot 4 = 13$.",
                 problem="Compute 3 times 4.") == 2
