"""Facts belong to a context: values and relations from another sub-problem, a supposition or a
candidate check, or about a letter since given a new meaning, are not premises."""

from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps


def first(problem: str, *steps: str) -> int | None:
    return localize(proof_from_steps(problem, list(steps))).first_refutation


def test_a_value_from_another_sub_problem_is_not_a_premise() -> None:
    assert first("Find x and y.", "We have $x = 5$.", "Then $x + 3 = 9$.") == 2  # same context: refuted
    assert first("Find x and y.", "(a) We have $x = 5$.", "(b) Here $x + 3 = 9$.") is None
    assert first("Find x and y.", "We have $x = 5$.", "Part 2: $x + 3 = 9$.") is None


def test_a_letter_given_a_new_meaning_drops_its_old_value() -> None:
    assert first("Find x.", "We have $x = 5$.", "Now let $x$ denote the width. Then $x + 3 = 9$.") is None
    assert first("Solve $3x - 4 = 11$.", "We have $3x - 4 = 11$.", "Let $x$ be the number of cats. So $3x = 7$.") is None


def test_a_supposed_relation_is_a_premise_only_in_its_own_step() -> None:
    # inside the step the supposition is a premise for what follows from it
    assert first("Find x.", "If $3x - 4 = 11$, then $3x = 7$.") == 1
    # a later step does not derive from it
    assert first("Find x.", "If $3x - 4 = 11$, we could stop.", "So $3x = 7$.") is None


def test_a_repeated_case_header_is_not_a_split() -> None:
    assert first("Let $n$ be an integer.", "Case 1: $n$ is even. fine.", "Case 2: $n$ is even. fine.") is None
    assert first("Let $x$ be real.", "Case 1: $x < 0$. fine.", "Case 2: $x > 0$. fine.") == 1


def test_a_residue_gap_is_refuted_only_where_the_text_fixes_the_domain() -> None:
    steps = ["Case 1: $n = 3k$. fine.", "Case 2: $n = 3k + 1$. fine."]
    assert first("Show that $n^3 - n$ is divisible by 3 for every integer n.", *steps) == 1
    assert first("Let $n$ be an integer with the stated property.", *steps) is None  # the property may exclude 3k + 2
    assert first("Let $n$ be an integer with the stated property.", *steps, "These cases cover all integers.") == 1
