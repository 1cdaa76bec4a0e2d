"""An integer written for a non-integer value: rounded (to nearest, down or up) only in a word problem whose
result counts whole items; elsewhere ``13 / 3 = 4`` is a claim of equality, and false."""

import time

import pytest
from faithsieve.obligations.checkers.portfolio import ExactChecker, run_portfolio
from faithsieve.obligations.kinds.models import ArithmeticObligation

from faithsieve.mathtext import extract_formulas
from faithsieve.mathtext.ast import Rel
from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps


def outcome(text: str, ceiling: bool) -> str:
    a, op, b = extract_formulas(text)[0].chain.links()[0]
    ob = ArithmeticObligation(id="o0", step=1, span=(0, 1), edge="e0", source=text, claim=Rel(a, op, b), ceiling=ceiling)
    return type(run_portfolio(ob, [ExactChecker()], time.monotonic() + 60)).__name__


@pytest.mark.parametrize(("text", "without", "with_"), [
    ("13 / 3 = 4", "Verified", "Verified"),  # 4.33: the integer part of a quotient of integers (integer division)
    ("7 / 2 = 4", "Refuted", "Verified"),  # 3.5 rounded up: only for whole items
    ("7 / 2 = 3", "Verified", "Verified"),  # truncated: integer division
    ("1529 / 6 = 255", "Refuted", "Verified"),  # 254.83 rounded to nearest: only for whole items
    ("(4 + 9) / 2 = 6", "Refuted", "Verified"),  # 6.5: a computed value, not an integer division as written
    ("1 / 4 + 1 / 2 = 1", "Refuted", "Verified"),  # 0.75
    ("13 / 3 = 5", "Refuted", "Verified"),  # 4.33 is 5 only rounded up
    ("2 / 5 = 1", "Refuted", "Verified"),  # 0.4: the ceiling
    ("12 / 3 = 5", "Refuted", "Refuted"),  # an integer value is never rounded
])
def test_the_ceiling_is_read_only_where_allowed(text: str, without: str, with_: str) -> None:
    assert outcome(text, ceiling=False) == without
    assert outcome(text, ceiling=True) == with_


def test_a_word_problem_allows_the_ceiling_and_an_equation_problem_does_not() -> None:
    buses = localize(proof_from_steps("A bus holds 30 people. How many buses carry 100 people?", ["We need 100 / 30 = 4 buses."]))
    assert buses.first_error_step is None
    y = localize(proof_from_steps("Let $x + 1/y = 5$. Find the minimum of $1/x + y$.", [r"So \[ y = \frac{1}{\frac{5}{2}} = 1 \]"]))
    assert y.first_error_step == 1
