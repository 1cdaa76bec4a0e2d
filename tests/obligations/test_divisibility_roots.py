"""Divisibility, power congruences and orders read from the step text (``obligations.extraction.divisibility``), and
values claimed as roots of the problem's own equation (``obligations.extraction.rootclaims``)."""

from __future__ import annotations

import pytest

from faithsieve.core.proof import Proof, Step
from faithsieve.pipeline import localize


def _flag(problem: str, text: str) -> int | None:
    proof = Proof(problem=problem, steps=(Step(index=1, text="We compute."), Step(index=2, text=text)))
    return localize(proof).first_refutation


@pytest.mark.parametrize(("text", "flag"), [
    ("We have $7 \\mid 91$.", None), ("We have $5 \\mid 91$.", 2),
    ("$6 \\nmid 91$.", None), ("$7 \\nmid 91$.", 2),
    ("So 91 is divisible by 13.", None), ("So 91 is divisible by 6.", 2),
    ("we must have $4\\mid3k$, so", None),  # 3k: the divided number is a product, not 3
    ("$2^{10} \\equiv 1 \\pmod{11}$.", None), ("$2^{5} \\equiv 1 \\pmod{11}$.", 2),
    ("The order of 2 modulo 7 is 3.", None), ("The order of 2 modulo 7 is 6.", 2),
    ("$\\operatorname{ord}_7(2) = 4$.", 2),
    ("Suppose $5 \\mid 91$.", None),  # supposed, not asserted
])
def test_divisibility_claims(text: str, flag: int | None) -> None:
    assert _flag("Decide.", text) == flag


def test_root_claims_against_the_problem_equation() -> None:
    assert _flag("Solve $x^2 - 3x + 2 = 0$.", "Its zeros are $x = 1$ and $x = 2$.") is None
    assert _flag("Solve $x^2 - 3x + 2 = 0$.", "Its zeros are $x = 1$ and $x = 3$.") == 2
    assert _flag("Solve $x^2 - 7x = 0$.", "Therefore $x = 0$ or $x = -7$.") == 2


def test_root_claims_of_a_derived_equation_are_not_the_problems() -> None:
    proof = Proof(problem="Solve \\( \\sqrt{x + 7} = x - 5 \\).", steps=(
        Step(index=1, text="Squaring gives \\( x + 7 = x^2 - 10x + 25 \\), so \\( (x - 2)(x - 9) = 0 \\)."),
        Step(index=2, text="The squared equation has the roots x = 2 and x = 9.")))
    assert localize(proof).first_error_step is None


def test_result_verbs_before_a_delimited_formula_state_it() -> None:
    assert _flag("Factor 2047.", "We find $2047 = 23 \\cdot 87$.") == 2
    assert _flag("Factor 2047.", "We find $2047 = 23 \\cdot 89$.") is None
    assert _flag("Compute.", "Plugging in $x = 1$ we get $1 = 7$, impossible.") is None


def test_exact_rational_difference_is_refuted() -> None:
    assert _flag("Evaluate.", "We compute $\\sin(\\pi/3)^2 = 1$.") == 2
    assert _flag("Evaluate.", "We compute $\\sin(\\pi/3)^2 = 3/4$.") is None


def test_a_named_solution_set_leaves_no_solution_out() -> None:
    problem = "Solve $x^3 = x$ over the real numbers."
    assert _flag(problem, "Hence the solutions are $x = 0$ and $x = 1$.") == 2  # x = -1 left out
    assert _flag(problem, "Hence the solutions are $x = 0$, $x = 1$ and $x = -1$.") is None


def test_problem_asks_for_a_rewriting() -> None:
    assert _flag("Factor $x^2 - 7x + 10$.", "Thus $x^2 - 7x + 10 = (x - 2)(x + 5)$.") == 2
    assert _flag("Factor $x^2 - 7x + 10$.", "Thus $x^2 - 7x + 10 = (x - 2)(x - 5)$.") is None
    # no rewriting asked: an equation in x, not refuted as an identity
    assert _flag("Compute.", "Thus $x^2 - 7x + 10 = (x - 2)(x + 5)$.") is None


def test_complex_unit_last_and_on_both_sides() -> None:
    problem = "Let $i$ be the imaginary unit. Compute."
    assert _flag(problem, "Hence $(2 + 3i)(1 + i) = 5 + 5i$.") == 2
    assert _flag(problem, "Hence $(2 + 3i)(1 + i) = -1 + 5i$.") is None
    assert _flag(problem, "Hence $i^3 = i$.") == 2
    assert _flag(problem, "Hence $i^3 = -i$.") is None


def test_amsmath_bars() -> None:
    assert _flag("Evaluate.", "Thus $\\lvert 5 - 8 \\rvert = 13$.") == 2
    assert _flag("Evaluate.", "Thus $\\lvert 5 - 8 \\rvert = 3$.") is None


def test_a_listed_value_checked_against_a_premise_still_belongs_to_the_set() -> None:
    # the first value is checked against the problem's equation as its premise, the second by the root claims:
    # the listed set is both values, so nothing is left out (before, the set was read as the second value alone)
    problem = "Solve $3x^2 - 7x + 2 = 0$."
    assert _flag(problem, "The solutions are $x = 2$ and $x = \\frac{1}{3}$.") is None
    assert _flag(problem, "The solutions are $x = 2$ and $x = \\frac{1}{2}$.") == 2  # 1/2 is no root
    assert _flag("Solve $x^3 - x = 0$.", "The solutions are $x = 0$ and $x = 1$.") == 2  # x = -1 left out
    # a partial claim names no whole set: one value listed leaves nothing out
    assert _flag("Solve $x^2 - 5x + 6 = 0$.", "One of the roots is $x = 2$.") is None
    assert _flag("Solve $x^2 - 5x + 6 = 0$.", "The only root is $x = 2$.") == 2  # x = 3 left out
