"""A solution claim after a polynomial equation names every real root it drops (issue 39).

"We have x² = 9. So x = 3." was verified as the check 3² = 9, though the step drops x = −3. The claim
is now left unknown with the dropped root named (never refuted: a condition the proof does not state,
"x is a length", may exclude it), and a root that a stated inequality excludes is not dropped."""

from fractions import Fraction

import pytest
from faithsieve.obligations.checkers.exact import dropped_roots
from faithsieve.obligations.extraction.edgeunits import extract_obligations
from faithsieve.statetree.decompose import decompose

from faithsieve.core.settings import Settings
from faithsieve.mathtext import extract_formulas
from faithsieve.mathtext.ast import Rel
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS
from faithsieve.pipeline import Pipeline
from faithsieve.split import proof_from_input


def rel(text: str) -> Rel:
    a, op, b = extract_formulas(text)[0].chain.links()[0]
    return Rel(a, op, b)


def solution_evidence(steps: list[str]) -> list[tuple[str, str, str]]:
    proof = proof_from_input({"problem": "Find x.", "steps": steps}, Settings())
    v = Pipeline.from_settings(Settings()).localize(proof)
    return [(ev.status, ev.claim, ev.reason) for rep in v.steps for ev in rep.evidence if ev.kind.value == "solution"]


@pytest.mark.parametrize(("eq", "value", "constraints", "dropped"), [
    ("x^2 = 9", 3, (), ["x = -3"]),
    ("x^2 = 9", 3, ("x > 0",), []),                   # the stated constraint excludes -3
    ("x^2 = 9", -3, ("x < 5",), ["x = 3"]),           # 3 < 5: still admissible
    ("x^2 - 5x + 6 = 0", 2, (), ["x = 3"]),
    ("x^3 = 8", 2, (), []),                           # the only real root
    ("x^3 - 2x = 0", 0, (), ["an irrational x between", "an irrational x between"]),
])
def test_dropped_roots(eq: str, value: int, constraints: tuple[str, ...], dropped: list[str]) -> None:
    got = dropped_roots(rel(eq), "x", Fraction(value), [rel(c) for c in constraints], DEFAULT_LIMITS)
    assert len(got) == len(dropped)
    assert all(g.startswith(d) for g, d in zip(got, dropped, strict=True))


def test_a_sole_value_after_a_quadratic_is_not_verified() -> None:
    (status, claim, reason), = solution_evidence(["We have $x^2 = 9$.", "So $x = 3$."])
    assert status == "unknown" and claim == "x = 3 solves x^2 = 9"
    assert "drops the real root(s) x = -3" in reason


def test_both_roots_named_and_single_real_roots_stay_verified() -> None:
    assert [s for s, _, _ in solution_evidence(["We have $x^2 = 9$.", "So $x = 3$ or $x = -3$."])] == ["verified"]
    assert [s for s, _, _ in solution_evidence(["We have $x^3 = 8$.", "So $x = 2$."])] == ["verified"]
    # a value that is no root at all is still refuted
    assert [s for s, _, _ in solution_evidence(["We have $x^2 - 2 = 0$.", "So $x = 1$."])] == ["refuted"]


def test_the_extracted_obligation_carries_the_stated_constraints() -> None:
    proof = proof_from_input({"problem": "Find x.", "steps": ["We have $x^2 = 9$.", "So $x = 3$."]}, Settings())
    (ob,) = [o for o in extract_obligations(decompose(proof)) if o.kind.value == "solution"]
    assert ob.sole and ob.constraints == ()


@pytest.mark.parametrize(("premise", "step", "value"), [
    (r"We have $x^3 - 16x = 0$.", r"So $x = 0, \pm 4$.", "x = 0"),
    (r"We have $r(5r - 44) = 0$.", r"This gives \[ r = 0 \] \[ 5r - 44 = 0 \implies r = 44/5 \]", "r = 0"),
])
def test_a_value_listed_with_others_is_not_the_sole_value(premise: str, step: str, value: str) -> None:
    proof = proof_from_input({"problem": "Find x.", "steps": [premise, step]}, Settings())
    solutions = [o for o in extract_obligations(decompose(proof)) if o.kind.value == "solution"]
    first = next(o for o in solutions if o.claim_text().startswith(value + " solves"))
    assert not first.sole  # another value of the letter follows in the clause: a list
