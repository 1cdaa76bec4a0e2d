"""Issue 35: the sieve reads a step in its context as a mathematician does.

The families ``tests/claims/written_conventions.jsonl`` (a notation with a second reading: a refutation
stands only when every reading is false), ``equation_intent.jsonl`` (an equation in letters is an identity
when the text says so: the problem asks to expand, simplify or factor; the problem's own equation with one
side rewritten is that equation to solve) and ``unwritten_conventions.jsonl`` (a notation that is not
arithmetic on the numbers as written: silence, with the reason). These test the reading, so they ask
``Verdict.first_refutation`` (deciding or ``suspect``): which kinds decide is the reference bench's table.
Every label is checked with sympy by
``tests/claims/test_corpus_labels.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from faithsieve.obligations.extraction.conventions import (
    convention_guess,
    convention_texts,
    unit_restatement,
)
from faithsieve.statetree.decompose import asked_rewrites

from faithsieve.core.proof import Proof, Step
from faithsieve.mathtext.ast import Rel
from faithsieve.mathtext.formulas import extract_formulas
from faithsieve.pipeline import localize
from faithsieve.verdict import Verdict

CLAIMS = Path(__file__).resolve().parents[1] / "claims"
DECIDING = ("written_conventions", "equation_intent")
SILENT = ("unwritten_conventions",)
SCOPES = ("alternative_scopes",)


def _cases(*families: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for fam in families:
        out += [json.loads(line) for line in (CLAIMS / f"{fam}.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    return out


def _verdict(case: dict[str, Any]) -> Verdict:
    steps = tuple(Step(index=i, text=t) for i, t in enumerate(case["steps"], 1))
    return localize(Proof(problem=case["problem"], steps=steps))


TRUE = [c for c in _cases(*DECIDING, *SILENT, *SCOPES) if c["truth"]]
FALSE_SCOPED = [c for c in _cases(*SCOPES) if not c["truth"]]
FALSE_DECIDED = [c for c in _cases(*DECIDING) if not c["truth"]]
FALSE_SILENT = [c for c in _cases(*SILENT) if not c["truth"]]


@pytest.mark.parametrize("case", TRUE, ids=[c["id"] for c in TRUE])
def test_correct_mathematics_is_not_flagged(case: dict[str, Any]) -> None:
    v = _verdict(case)
    assert v.first_refutation is None, f"{case['id']}: {v.reason}; suspect: {v.suspect}"


@pytest.mark.parametrize("case", FALSE_DECIDED, ids=[c["id"] for c in FALSE_DECIDED])
def test_false_claims_are_caught_at_their_step(case: dict[str, Any]) -> None:
    v = _verdict(case)
    assert v.first_refutation == case["first_error"] + 1, f"{case['id']}: {v.reason}"


@pytest.mark.parametrize("case", FALSE_SILENT, ids=[c["id"] for c in FALSE_SILENT])
def test_an_unread_convention_is_silent_and_says_why(case: dict[str, Any]) -> None:
    """Where the formula read is not the arithmetic the text does (clock times, a cut mixed number, an en
    dash, two units), a false claim is caught only when the formula read is itself false as a whole;
    otherwise its refutation is recorded ``unknown`` naming the convention, never shown as a verdict."""
    v = _verdict(case)
    if v.first_refutation is not None:
        assert v.first_refutation == case["first_error"] + 1
        return
    reasons = [e.reason or "" for s in v.steps for e in s.evidence if e.status == "unknown"]
    assert any(r.startswith("not refuted: depends on") for r in reasons), reasons


@pytest.mark.parametrize("case", FALSE_SCOPED, ids=[c["id"] for c in FALSE_SCOPED])
def test_a_slip_in_one_alternative_is_never_flagged_early(case: dict[str, Any]) -> None:
    """A slip inside one alternative, case or branch may go unseen (each scope holds only its own
    values), but nothing before it, in the alternatives that are right, is flagged."""
    v = _verdict(case)
    assert v.first_refutation in (None, case["first_error"] + 1), f"{case['id']}: {v.reason}"


@pytest.mark.parametrize(("text", "before", "after", "says"), [
    ("0900 - 0130 = 0730", "leaves at ", " hours.", "leading zero"),
    ("- 2 hours = 9", " at 11 a.m. ", " a.m.", "clock time"),
    ("1/4 cups = 1.5", "uses 1 and ", " cups", "mixed number"),
    ("12 - 5 = 5 + x", "gives ", " – 5, or 7 = x", "en dash"),
    ("4 pounds - 6 ounces = 58", "left is ", " ounces.", "two units"),
    ("84 + .82 = 2.46", ".8 + . ", "", "decimal point"),
    ("(2\\mathbf{b}) \\times \\mathbf{a} = -2 \\mathbf{a} \\times \\mathbf{b}", "", "", "cross product"),
])
def test_conventions_left_open_are_named(text: str, before: str, after: str, says: str) -> None:
    assert says in convention_guess(text, before, after)


@pytest.mark.parametrize(("text", "before", "after"), [
    ("900 - 130 = 770", "leaves at ", " hours."),  # no leading zero: a plain computation
    ("3 hours * 60 minutes = 180", "is ", " minutes."),  # the conversion factor is written
    ("12 - 5 = 7", "gives ", " — so we stop"),  # an em dash before words is punctuation
    ("1/4 + 1/2 = 3/4", "so ", " cups"),
    ("2 \\times 3 = 6", "", ""),
])
def test_plain_arithmetic_is_not_taken_for_a_convention(text: str, before: str, after: str) -> None:
    assert convention_guess(text, before, after) == ""


@pytest.mark.parametrize(("text", "latex", "want"), [
    ("6!/3!3! = 20", True, "6!/(3!3!) = 20"),
    ("0.5(20) = 10", False, "0.5 * (20) = 10"),
    ("3/3 - 2/3 = 1/3 of $150", False, "3/3 - 2/3 = 1/3"),
    ("8*45 = 360 divided by 5", False, "8*45 = 360"),
])
def test_second_readings_write_the_other_meaning_out(text: str, latex: bool, want: str) -> None:
    assert want in [t for t, _ in convention_texts(text, latex)]


def test_no_second_reading_without_the_notation() -> None:
    assert convention_texts("6!/3! = 120", True) == []
    assert convention_texts("x^2 - 1 = (x - 1)(x + 1)", True) == []
    assert convention_texts("3 times 4 = 12", False) == []  # no relation before the word: not a tail


def _rel(text: str) -> Rel:
    f = extract_formulas(f"${text}$")[0]
    return Rel(*f.chain.links()[0])


@pytest.mark.parametrize(("premise", "claim", "after", "want"), [
    ("3x = 1", "3x = 60", " minutes", True),
    ("y = 4", "y = 64", " ounces", True),
    ("3x = 1", "3x = 50", " minutes", False),  # 50 is no factor between units
    ("3x = 1", "3x = 60", ", so", False),  # no unit follows
    ("3x = 1", "2x = 60", " minutes", False),  # no side kept
])
def test_a_quantity_restated_in_another_unit(premise: str, claim: str, after: str, want: bool) -> None:
    assert unit_restatement(_rel(premise), _rel(claim), after) is want


def test_the_problem_asks_to_rewrite_an_expression() -> None:
    assert len(asked_rewrites("Expand $(x-y)^2$.")) == 1
    assert len(asked_rewrites("Simplify the expression $\\frac{x^2-1}{x-1}$ for $x > 1$.")) == 1
    assert asked_rewrites("Solve $x^2 - 1 = 0$.") == ()
    assert asked_rewrites("Factor $x^2 = 4$.") == ()  # a relation is not an expression to rewrite


_FIRST = "We have $x = 3$ and $y = 4$, so $x + y = 7$."
_SECOND = "Then $x + y = 7$ and $x - y = 3$ give $x = 5$, so $y = 2$ and $x \\cdot y = {product}$."


@pytest.mark.parametrize("between", ["\n~Alice\n", "\n-Westwoodmonster\n", "\nSolution 2: ", "\nAlternative solution.\n"])
def test_another_solution_starts_afresh(between: str) -> None:
    """Collected solutions (a signature line, a "Solution 2" heading) name their letters afresh: the values
    the first found are no premises of the second (x = 3 there, x = 5 here), while a slip inside the second
    is still refuted from its own values (5 * 2 = 10, not 11)."""
    problem = "Two numbers have sum 7 and differ by 1 or by 3. Find them."
    for product, want in (("10", None), ("11", 1)):
        text = _FIRST + between + _SECOND.format(product=product)
        v = localize(Proof(problem=problem, steps=(Step(index=1, text=text),)))
        assert v.first_refutation == want, (between, product, v.reason, v.suspect)
