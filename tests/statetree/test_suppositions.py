"""Suppositions are not claims: the supposed relation opens a context, and a contradiction
reached inside a supposition the argument means to refute is its point, not an error."""

import pytest

from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps


def first(*steps: str, problem: str = "Show the claim.") -> int | None:
    return localize(proof_from_steps(problem, list(steps))).first_refutation


@pytest.mark.parametrize("step", [
    "Suppose 2 + 2 = 5.", "Suppose $2 + 2 = 5$.", "Assume 2 + 2 = 5.", "Try 2 + 2 = 5.",
    "If 2 + 2 = 5, then pigs fly.", "Assuming that 3 * 4 = 13 we would be done.",
])
def test_a_supposed_relation_is_not_refuted(step: str) -> None:
    assert first(step, "Done.") is None


@pytest.mark.parametrize("step", [
    "2 + 2 = 5.",  # the same relation asserted
    "If we multiply, 3 * 4 = 13.",  # the comma closes the condition: the computation is the main clause
    "Suppose x = 3. Then 3 + 4 = 8.",  # a computation under a supposition is still a computation
])
def test_asserted_relations_are_still_refuted(step: str) -> None:
    assert first(step, "Done.") == 1


def test_contradiction_reached_in_a_refuted_supposition_is_not_an_error() -> None:
    assert first("Suppose 2 + 2 = 5.", "Then 4 = 5.", "Done.") is None
    assert first("Suppose, for contradiction, that $x^2 = 2$ with $x$ rational.", "Then $x + 2 - 16 = x$, impossible.") is None


def test_the_context_ends_at_the_contradiction() -> None:
    # once the contradiction is reached, the supposition is discharged: contradictions count again
    proof = ["Assume on the contrary that n is odd.", "Then $n + 1 = n$.", "This is absurd."]
    assert first(*proof) is None
    assert first(*proof, "Now $m + 1 = m$.") == 4


def test_an_ordinary_assumption_opens_no_refutation_context() -> None:
    # "assume a <= b" (without loss of generality) is not an argument by contradiction
    assert first("Assume $a \\le b$.", "Then $a + 1 = a$.") == 2


def test_a_relation_declared_absurd_is_not_claimed() -> None:
    # the supposition sentence holds no formula; the consequence is declared absurd in its own sentence
    proof = ["Suppose 1 were a root.", "Then 1^2 + 1 + 1 = 0, that is 3 = 0, which is absurd.", "So 1 is not a root."]
    assert first(*proof, problem="Show that 1 is not a root of x^2 + x + 1 = 0.") is None
    assert first("Suppose 1 were a root.", "Then 1^2 + 1 + 1 = 0, that is 3 = 0.", "So 1 is not a root.") == 2


def test_a_letter_updated_in_place_is_not_checked_against_its_old_relation() -> None:
    problem = "Four consecutive integers sum to 22. Each is increased by 2. Find the new integers."
    base = ["Let the integers be x, x + 1, x + 2, x + 3.", "Then 4x + 6 = 22, so 4x = 16 and x = 4.",
            "So x + 3 = 7."]
    assert first(*base, "Each increased by 2: x = 4 + 2 = 6.", problem=problem) is None
    # a relation that does not hold at the old value is still an equation the new value must solve
    assert first("Let x be the number.", "Then x = 4.", "Next, x + 3 = 8, so x = 6.", problem="Find x.") == 3


def test_a_bare_new_value_is_still_checked() -> None:
    # "y = 40" is not written as an update of the old value 65: it must solve 4y = 260
    proof = ["Let y be the number of tickets.", "Then 4y = 260, and thus y = 65.", "Also 4y = 260, and thus y = 40."]
    assert first(*proof, problem="Find y.") == 3
