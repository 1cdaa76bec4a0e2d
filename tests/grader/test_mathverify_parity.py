"""Parity with Math-Verify's own default-configuration test cases (see ``mathverify_cases`` for the
source and how the cases were chosen), graded the way a trainer grades: ``compute_score(..., process=False)``
with the gold as the reference and the prediction as the completion.

A prediction that is a whole model output (it contains ``\\boxed``, the word "answer", or runs past 100
characters) is graded as written; a bare answer is graded as a completion ending in ``\\boxed{answer}``.

The cases we do not pass are listed in ``EXPECTED_MISSES`` with the reason; the test asserts that
exactly those miss, so a fix or a regression both show up here.
"""

from __future__ import annotations

import re

import pytest

from faithsieve.grader import compute_score, warmup
from tests.grader.mathverify_cases import CASES

EXPECTED_MISSES: dict[tuple[str, str], str] = {
    ("$\\\\boxed{35 cm} ++++++ \\\\boxed{4}$", "${35 cm,4}$"):
        "a run of '+' between two boxed answers is not a join we read (a join is a comma, ';', 'and' or 'or'), "
        "so the gold's answer is its last box, 4",
    ("$F_n = \\sum_{k=0}^{n-1} F_k F_{n-k-1}$", "$F_n = \\sum_{k=0}^{n-1} F_{n-k-1} F_k$"):
        "a sum over a bound index with an unknown sequence F: we do not read \\sum symbolically, and the two "
        "differ as written",
    ("$1 - \\frac{1}{\\mathrm{e}}$", "$1 + \\frac{1}{\\mathrm{e}}$"):
        "the case expects 1 - 1/e to equal 1 + 1/e; they differ by 2/e, so we keep answering 'not equal'",
}


def _completion(pred: str) -> str:
    if "\\boxed" in pred or re.search(r"(?i)answer", pred) or len(pred) > 100:
        return pred
    return f"So the final answer is \\boxed{{{pred}}}."


@pytest.fixture(scope="module", autouse=True)
def _workers_up() -> None:
    """Comparisons that need sympy run in the workers: start them first, as a trainer does (``warmup``)."""
    assert warmup()


def _ours(gold: str, pred: str) -> int:
    return int(compute_score("math", _completion(pred), gold, None, process=False)["acc"])


def test_case_table_is_the_documented_selection() -> None:
    assert len(CASES) == 150
    assert len({(g, p) for _, g, p, _ in CASES}) == len(CASES)
    assert all(e in (0, 1) for *_, e in CASES)


@pytest.mark.parametrize(("test", "gold", "pred", "expected"), CASES,
                         ids=[f"{i}-{c[0]}" for i, c in enumerate(CASES)])
def test_math_verify_case(test: str, gold: str, pred: str, expected: int) -> None:
    if (gold, pred) in EXPECTED_MISSES:
        assert _ours(gold, pred) != expected, f"now passes: remove it from EXPECTED_MISSES ({test})"
    else:
        assert _ours(gold, pred) == expected


def test_parity_count() -> None:
    passed = sum(_ours(g, p) == e for _, g, p, e in CASES)
    assert passed == len(CASES) - len(EXPECTED_MISSES) == 147
