"""Suppositions are not claims: the supposed relation opens a context, and a contradiction
reached inside a supposition the argument means to refute is its point, not an error."""

import pytest

from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps


def first(*steps: str, problem: str = "Show the claim.") -> int | None:
    return localize(proof_from_steps(problem, list(steps))).first_error_step


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
