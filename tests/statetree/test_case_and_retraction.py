"""Two context rules found by the held-out probes: equations of one case are not premises in the
next case, and a formula the same clause calls wrong is not asserted."""

from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps

PROBLEM = "Find all pairs of positive integers (x, y) with x^2 - y^2 = 15."


def first(problem: str, *steps: str) -> int | None:
    return localize(proof_from_steps(problem, list(steps))).first_refutation


def test_a_case_does_not_solve_the_equations_of_the_previous_case() -> None:
    steps = ["Factor: (x - y)(x + y) = 15.", "Case 1: x - y = 1 and x + y = 15 give x = 8, y = 7."]
    assert first(PROBLEM, *steps, "Case 2: x - y = 3 and x + y = 5 give x = 4, y = 1.") is None
    # values that miss the case's own equations are still refuted
    assert first(PROBLEM, *steps, "Case 2: x - y = 3 and x + y = 5 give x = 5, y = 1.") == 3
    # within one case, the equations of its earlier steps stay premises
    assert first("Solve the system.", "Case 1: x - y = 3.", "Also x + y = 5, so x = 5, y = 1.") == 2


def test_a_case_keeps_its_own_equations_across_its_steps() -> None:
    steps = ["Case 1: we have x + y = 5 and x - y = 3."]
    assert first("Solve the system.", *steps, "So x = 5, y = 1.") == 2
    assert first("Solve the system.", *steps, "So x = 4, y = 1.") is None


def test_a_formula_the_clause_calls_wrong_is_not_asserted() -> None:
    assert first("Compute 17 * 23.", "At first one might write 17 * 23 = 381, but that is wrong.",
                 "Correctly, 17 * 23 = 391.") is None
    assert first("Compute 17 * 23.", "One might write 17 * 23 = 381, but it's wrong.") is None
    # 'but' alone does not deny the formula before it
    assert first("Compute 17 * 23.", "So 17 * 23 = 381, but then we add 3.") == 1
