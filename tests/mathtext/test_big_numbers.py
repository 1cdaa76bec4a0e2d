"""Integers past Python's 4,300-digit ``str`` limit are printed and compared within explicit bounds
(``faithsieve.mathtext.literals.show_number``) everywhere evidence or Lean text is built (issue 38)."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from faithsieve.core.proof import Proof, Step
from faithsieve.mathtext.literals import MAX_SHOWN_DIGITS, number_within, show_number
from faithsieve.pipeline import localize


@pytest.mark.parametrize(("value", "shown"), [
    (123, "123"),
    (Fraction(-3, 4), "-3/4"),
    (10**5000, "10^5000"),
    (-(10**5000), "-10^5000"),
    (10**5000 + 1, "≈ 1.0000 × 10^5000"),
    (2 * 10**5000 - 1, "≈ 1.9999 × 10^5000"),
    (3**20000, "≈ 2.6613 × 10^9542"),                 # mpmath: 2.6613e+9542
    (Fraction(1, 7**3000), "≈ 5.0801 × 10^-2536"),    # mpmath: 5.0802e-2536 (digits are truncated)
    (Fraction(10**5000 + 1, 3), "≈ 3.3333 × 10^4999"),
], ids=lambda x: x if isinstance(x, str) else "value")
def test_show_number(value: Fraction | int, shown: str) -> None:
    assert show_number(value) == shown


def test_the_exact_bound_is_the_stated_one() -> None:
    assert show_number(10**MAX_SHOWN_DIGITS - 1) == "9" * MAX_SHOWN_DIGITS
    assert show_number(10**MAX_SHOWN_DIGITS + 7).startswith("≈ 1.0000 × 10^")
    assert number_within(10**MAX_SHOWN_DIGITS - 1) and not number_within(10**MAX_SHOWN_DIGITS)


def _run(problem: str, *steps: str) -> tuple[str, dict]:
    v = localize(Proof(problem=problem, steps=tuple(Step(index=i, text=t) for i, t in enumerate(steps, 1))))
    return v.model_dump_json(), json.loads(v.model_dump_json())


@pytest.mark.parametrize("steps", [
    ("Solve x^2 - 3x + 2 = 0.", "The solutions are x = 10^{5000} and x = 2."),
    ("p", "Let a = 10^{5000}.", "Then a + 1 = 2."),
    ("p", "$\\gcd(10^{5000}, 10^{4999}) = 3$"),
])
def test_huge_integers_are_read_checked_and_printed(steps: tuple[str, ...]) -> None:
    text, _ = _run(*steps)
    assert len(text) < 20_000  # never the 5,000 digits


def test_evidence_prints_the_right_leading_digits() -> None:
    _, v = _run("p", "Let a = 10^{5000}.", "Then a + 1 = 2.")
    assert v["first_error_step"] == 2
    cx = [ev["counterexample"] for st in v["steps"] for ev in st["evidence"] if ev.get("counterexample")][0]
    assert cx["a"] == "10^5000" and cx["lhs"] == "≈ 1.0000 × 10^5000"
    _, g = _run("p", "$\\gcd(10^{5000}, 10^{4999}) = 3$")
    cx = [ev["counterexample"] for st in g["steps"] for ev in st["evidence"] if ev.get("counterexample")][0]
    assert cx["lhs"] == "10^4999"
