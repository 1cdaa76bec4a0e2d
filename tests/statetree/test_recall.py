"""Recall: derivation chains across steps, solution claims against the equations they solve,
and claims stated as narration."""

import pytest

from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps


def first(problem: str, *steps: str) -> int | None:
    return localize(proof_from_steps(problem, list(steps))).first_refutation


EQ = "Solve $5x - 4 = 2x + 11$."


def test_an_inequality_is_not_a_context_premise() -> None:
    # "x > 5" two steps back may be local to an unstated case; only the relation just before is a premise
    assert first("Solve $x^2 > 25$.", "We have $x > 5$.", "Note this.", "Hence $x < 5$.") is None
    assert first("Solve $x^2 > 25$.", "We have $x > 5$.", "Hence $x < 5$.") == 2


@pytest.mark.parametrize(("steps", "expected"), [
    (["$5x - 4 = 2x + 11$, so $3x - 4 = 11$, so $3x = 7$."], 1),
    (["$5x - 4 = 2x + 11$, so $3x - 4 = 11$, so $3x = 15$."], None),
    (["Subtract 2x: $3x - 4 = 11$.", "Add 4: $3x = 7$."], 2),
    (["Subtract 2x: $3x - 4 = 11$.", "Add 4: $3x = 15$.", "So $x = 5$."], None),
])
def test_derivation_chains(steps: list[str], expected: int | None) -> None:
    assert first(EQ, *steps) == expected


def test_solution_claims_are_checked_against_the_equation_just_solved() -> None:
    assert first("Solve $2x + 3 = 11$.", "Subtracting, $2x = 8$.", "Dividing, $x = 5$.") == 2
    assert first("Solve $2x + 3 = 11$.", "Subtracting, $2x = 8$.", "Dividing, $x = 4$.") is None
    # a list of values for one letter ("x = 0, x = 9 and x = -8") is the set of solutions of
    # something earlier, not each a solution of the equation just before
    assert first("Solve $x^3 = x^2 + 72x$.", "Dividing by x, $x^2 - x - 72 = 0$.", "So $x = 0$, $x = 9$ and $x = -8$.") is None


@pytest.mark.parametrize(("step", "expected"), [
    ("She gets a total of 400 + 60 = 462.", 1),
    ("She gets a total of 400 + 60 = 460.", None),
    ("He needs 3 * 4 = 13 boxes.", 1),
    ("$(x+3)^2 = x^2 + 9$ holds for all x.", 1),
    ("$(x+3)^2 = x^2 + 6x + 9$ holds for all x.", None),
    ("$(x+3)^2 = x^2 + 9$ holds for all positive integers n.", None),  # quantified over another letter
    ("Half of 2000 = 1000.", None),  # an operator word before the first member: not read
])
def test_narration_claims(step: str, expected: int | None) -> None:
    assert first("Compute.", step, "Done.") == expected


def test_integer_only_contradictions_are_not_refuted() -> None:
    # contradicts its premise only if x is an integer (the problem says "integer" somewhere)
    assert first("Find all integers n and real x with $2x(2x^2 - 9) = 0$.", "$2x(2x^2 - 9) = 0$, so $2x^2 - 9 = 0$.") is None


STACK = "We get \\[ x^2 - 2x = 7 \\] \\[ x^2 - 2x - 7 = 0 \\] \\[ {} \\]"


@pytest.mark.parametrize(("last", "expected"), [
    ("(x - 7)(x + 5) = 0", 1),  # x^2 - 2x - 35 = 0 contradicts both lines above it
    ("(x - 1)^2 = 8", None),  # a correct rewrite
])
def test_stacked_displays_are_a_derivation_chain(last: str, expected: int | None) -> None:
    assert first("Solve $x^2 - 2x = 7$.", STACK.format(last)) == expected


def test_inline_formulas_side_by_side_are_not_a_chain() -> None:
    # ", " between inline formulas lists them (here the two factors' roots); only display delimiters chain
    assert first("Solve.", "We get $x - 2 = 0$, $x + 3 = 0$.") is None
    assert first("Solve.", "We get \\[ x - 2 = 0 \\] \\[ x + 3 = 0 \\]") == 1


@pytest.mark.parametrize("step", [
    # the second line may restate the other alternative of the line above the premise: every candidate is tried
    "We have \\[(x - 2)(x + 3) = 0\\] \\[x - 2 = 0\\] \\[x + 3 = 0\\]",
    "So \\[|x| > 6\\] This means that x is greater than 6 or less than -6: \\[x > 6\\] \\[x < -6\\]",
])
def test_a_stacked_line_is_refuted_only_against_every_candidate_premise(step: str) -> None:
    assert first("Find x.", step) is None


def test_a_candidate_premise_in_other_unknowns_is_not_tried() -> None:
    # "x + y = s" is not what "x + y = 4" rewrites; "x + y = 3" is, and it contradicts it
    assert first("Find x.", "\\[ x + y = s \\] \\[ x + y = 3 \\] \\[ x + y = 4 \\]") == 1
