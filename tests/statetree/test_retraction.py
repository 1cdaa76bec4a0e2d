"""A relation the writer withdraws right after writing it ("— wait, that's 166") is not a claim;
the correction that follows is checked as usual, and a marker further away withdraws nothing."""

import pytest
from faithsieve.statetree.retraction import retracted

from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps


def first(*steps: str) -> int | None:
    return localize(proof_from_steps("Compute 7 * 23 + 5.", list(steps))).first_refutation


@pytest.mark.parametrize("step", [
    "7·23 + 5 = 164 — wait, that's wrong: 7·23 = 161, so 7·23 + 5 = 166.",
    "7·23 + 5 = 164, no, 7·23 + 5 = 166.",
    "7·23 + 5 = 164. Oops, 7·23 + 5 = 166.",
    "7·23 + 5 = 164... let me recompute: 7·23 + 5 = 166.",
    "7·23 + 5 = 164 (actually 7·23 + 5 = 166).",
])
def test_a_withdrawn_relation_is_not_refuted(step: str) -> None:
    assert first(step, "The answer is 166.") is None


def test_the_correction_is_still_checked() -> None:
    assert first("7·23 + 5 = 164 — wait, 7·23 + 5 = 165.", "The answer is 165.") == 1


def test_only_a_marker_right_after_the_relation_withdraws_it() -> None:
    assert first("7·23 + 5 = 164, so the total is 164. Wait for the next part.", "Done.") == 1
    assert first("7·23 + 5 = 164 in the table below; actually the table is long.", "Done.") == 1


def test_the_window_is_bounded() -> None:
    text = "1 + 1 = 3"
    assert retracted(text + " — wait", len(text))
    assert not retracted(text + " " + "-" * 7 + " wait", len(text))  # more separators than a dash and a comma
    assert not retracted(text + " " * 70 + "wait", len(text))
