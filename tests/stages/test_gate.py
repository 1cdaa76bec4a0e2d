"""The faithfulness gate: its arithmetic (table-tested) and the LLM judge over recorded answers."""

from __future__ import annotations

import json

import pytest
from faithsieve.obligations.kinds.models import NLObligation, ObligationKind

from faithsieve.core.proof import Proof, Step
from faithsieve.core.settings import Settings
from faithsieve.stages.base import RunContext
from faithsieve.stages.gate import (
    ASPECTS,
    GateScores,
    GateThresholds,
    LLMGate,
    PassGate,
    SemanticCheck,
    combine,
    gate_decision,
    holistic,
    s_faith,
    slot_mean,
    snap_score,
)

ALL_ONE = dict.fromkeys(ASPECTS, 1.0)
T = GateThresholds(threshold=0.9, critical=0.75)


def aspects(**over: float) -> dict[str, float]:
    return {**ALL_ONE, **over}


# ---------------------------------------------------------------------------------------
# arithmetic


@pytest.mark.parametrize(("scores", "mean"), [
    ((), 1.0),                      # empty slot set: one vacuous slot scoring 1
    ((1.0,), 1.0),
    ((1.0, 0.5), 0.75),
    ((0.25, 0.25, 1.0, 0.5), 0.5),
    ((0.0,), 0.0),
])
def test_slot_mean(scores: tuple[float, ...], mean: float) -> None:
    assert slot_mean(scores) == pytest.approx(mean)


@pytest.mark.parametrize(("asp", "value"), [
    (ALL_ONE, 1.0),
    (aspects(syntax_surface=0.5), 0.9),
    (aspects(step_relation=0.0, object_witness=0.25), 0.65),
    (dict.fromkeys(ASPECTS, 0.75), 0.75),
])
def test_holistic_is_uniform_mean(asp: dict[str, float], value: float) -> None:
    assert holistic(asp) == pytest.approx(value)


def test_holistic_needs_all_five() -> None:
    with pytest.raises(KeyError):
        holistic({k: 1.0 for k in ASPECTS[:4]})


@pytest.mark.parametrize(("prem", "conc", "hol", "expected"), [
    (1.0, 1.0, 1.0, 1.0),
    (1.0, 1.0, 0.729, 0.9),          # exact cube: no 0.8999999999999999
    (0.9, 0.9, 0.9, 0.9),
    (0.5, 0.5, 0.5, 0.5),
    (0.125, 1.0, 1.0, 0.5),
    (0.0, 1.0, 1.0, 0.0),
    (0.75, 1.0, 0.8, 0.6 ** (1 / 3)),
])
def test_s_faith_cube_root(prem: float, conc: float, hol: float, expected: float) -> None:
    assert s_faith(prem, conc, hol) == pytest.approx(expected, abs=1e-12)


def test_s_faith_exact_cube_reaches_threshold() -> None:
    assert s_faith(1.0, 1.0, 0.729) >= 0.9
    assert s_faith(0.9, 0.9, 0.9) >= 0.9


@pytest.mark.parametrize(("value", "snapped"), [(0, 0.0), (0.25, 0.25), ("0.5", 0.5), (0.7500000001, 0.75), (1, 1.0)])
def test_snap_accepts_rubric_values(value: object, snapped: float) -> None:
    assert snap_score(float(value)) == snapped  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [0.3, 0.6, 1.5, -0.25, 0.9, float("nan")])
def test_snap_rejects_other_values(value: float) -> None:
    with pytest.raises(ValueError, match="not one of"):
        snap_score(value)


@pytest.mark.parametrize(("scores", "passed", "drift_has"), [
    # all exact -> pass
    (GateScores((1.0,), (1.0,), ALL_ONE), True, None),
    # empty slot sets count as vacuous 1s
    (GateScores((), (), ALL_ONE), True, None),
    # one notation-level slot: S_faith = cube root of 0.875 ~ 0.956 -> pass
    (GateScores((1.0, 0.75), (1.0,), ALL_ONE), True, None),
    # high average but reversed direction: critical veto
    (GateScores((1.0, 1.0), (1.0,), aspects(directionality=0.5)), False, "wrong_direction"),
    # role alignment below the critical threshold
    (GateScores((1.0,), (1.0,), aspects(role_alignment=0.5)), False, "role_swap"),
    # conclusion fidelity 0.5 -> critical veto even though premises are perfect
    (GateScores((1.0,), (0.5,), ALL_ONE), False, "low_faithfulness"),
    # critical parts fine but S_faith = cube root(0.5) ~ 0.79 < 0.9
    (GateScores((0.5,), (1.0,), ALL_ONE), False, "low_faithfulness"),
    # scores pass but the judge itself says repairable drift
    (GateScores((1.0,), (1.0,), ALL_ONE, status="repairable_drift", drift=("missing_assumptions",)), False,
     "missing_assumptions"),
])
def test_gate_decision(scores: GateScores, passed: bool, drift_has: str | None) -> None:
    v = gate_decision(scores, T)
    assert v.passed is passed
    if drift_has is not None:
        assert drift_has in v.drift
    else:
        assert v.drift == ()


def test_gate_decision_critical_threshold_is_inclusive() -> None:
    v = gate_decision(GateScores((1.0,), (0.75,), aspects(directionality=0.75, role_alignment=0.75)),
                      GateThresholds(threshold=0.8, critical=0.75))
    # S_faith = cube root(1 * 0.75 * 0.9) = 0.877...
    assert v.passed
    assert v.s_conc == 0.75


def test_combine_needs_every_judge() -> None:
    good = gate_decision(GateScores((1.0,), (1.0,), ALL_ONE), T)
    bad = gate_decision(GateScores((1.0,), (1.0,), aspects(directionality=0.0)), T)
    both = combine([good, bad])
    assert not both.passed
    assert "wrong_direction" in both.drift
    assert combine([good, good]).passed
    assert not combine([]).passed


# ---------------------------------------------------------------------------------------
# the judge's answer


def check(**over: object) -> dict[str, object]:
    base: dict[str, object] = {
        "premise_slots": [{"slot": "n is a positive integer", "match": 1}],
        "conclusion_slots": [{"slot": "n^2 >= n", "match": 1}],
        "aspects": {f"{a}_fidelity": 1 for a in ASPECTS},
        "status": "faithful", "drift_categories": [], "reason": "same claim",
        "missing_or_changed_slots": [], "suggested_revision": "",
    }
    base.update(over)
    return base


def test_answer_accepts_suffixed_aspects_and_numeric_strings() -> None:
    a = SemanticCheck.model_validate(check(aspects={"step_relation_fidelity": "1", "object_witness": 0.75,
                                                    "directionality": 1, "role_alignment": 1, "syntax_surface": 1,
                                                    "overall": 0.9}))
    assert a.aspects["object_witness"] == 0.75
    assert set(a.aspects) == set(ASPECTS)


@pytest.mark.parametrize("bad", [
    {"aspects": {"step_relation": 1, "object_witness": 1, "directionality": 1, "role_alignment": 1}},
    {"aspects": {a: 0.8 for a in ASPECTS}},
    {"premise_slots": [{"slot": "x", "match": 0.6}]},
    {"conclusion_slots": [{"slot": "x", "match": True}]},
    {"status": "mostly fine"},
    {"aspects": [1, 1, 1, 1, 1]},
])
def test_answer_rejects_off_rubric(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        SemanticCheck.model_validate(check(**bad))


# ---------------------------------------------------------------------------------------
# LLMGate over recorded answers


OB = NLObligation(id="e2.o1", edge="e2", step=2, kind=ObligationKind.DERIVED_FACT, premises=("n is a positive integer",),
                  claim="n^2 >= n")
STATEMENT = "theorem t (n : ℕ) (hn : 0 < n) : n ≤ n ^ 2 := by sorry"


def ctx_with(llm: object, judges: int = 1) -> RunContext:
    proof = Proof(problem="Show n^2 >= n for positive integers n.", steps=(Step(index=1, text="n >= 1"),
                                                                       Step(index=2, text="so n^2 >= n")))
    return RunContext(proof=proof, settings=Settings(gate_judges=judges), llm=llm)  # type: ignore[arg-type]


def fenced(obj: dict[str, object]) -> str:
    return "Here is my assessment.\n```json\n" + json.dumps(obj) + "\n```\nLet me know if you need more."


def test_llm_gate_passes_faithful_statement(scripted: type) -> None:
    llm = scripted({"semantic_check": [fenced(check())]})
    v = LLMGate().assess(ctx_with(llm), OB, STATEMENT, "context")
    assert v.passed and v.s_faith == 1.0
    assert STATEMENT in llm.calls("semantic_check")[0].messages[1].content


def test_llm_gate_reports_drift(scripted: type) -> None:
    answer = check(aspects={a: (0.25 if a == "directionality" else 1) for a in ASPECTS}, status="unfaithful",
                   drift_categories=["wrong_direction"], reason="proves the converse",
                   suggested_revision="swap the sides")
    v = LLMGate().assess(ctx_with(scripted({"semantic_check": [json.dumps(answer)]})), OB, STATEMENT, "c")
    assert not v.passed
    assert v.drift == ("wrong_direction",)
    assert "swap the sides" in v.report


def test_llm_gate_unparsed_fails_closed(scripted: type) -> None:
    truncated = json.dumps(check())[:60]
    refusal = "I'm sorry, but I can't help with evaluating this statement."
    ctx = ctx_with(scripted({"semantic_check": [truncated, refusal]}))
    v = LLMGate().assess(ctx, OB, STATEMENT, "c")
    assert not v.passed and v.s_faith == 0.0 and v.drift == ("unparsed",)
    assert any("semantic check" in n for n in ctx.notes)


def test_llm_gate_off_rubric_scores_are_a_parse_failure(scripted: type) -> None:
    off = json.dumps(check(aspects={a: 0.9 for a in ASPECTS}))
    v = LLMGate().assess(ctx_with(scripted({"semantic_check": [off, off]})), OB, STATEMENT, "c")
    assert not v.passed and v.drift == ("unparsed",)


def test_llm_gate_all_judges_must_pass(scripted: type) -> None:
    second = check(conclusion_slots=[{"slot": "n^2 >= n", "match": 0.25}], status="repairable_drift",
                   drift_categories=["undergeneralized"])
    llm = scripted({"semantic_check": [json.dumps(check()), json.dumps(second)]})
    v = LLMGate().assess(ctx_with(llm, judges=2), OB, STATEMENT, "c")
    assert not v.passed
    assert "undergeneralized" in v.drift
    assert len(llm.calls("semantic_check")) == 2
    # the two judgments were asked as separate requests (distinct cache keys)
    assert llm.calls("semantic_check")[0].messages != llm.calls("semantic_check")[1].messages


def test_pass_gate_lets_everything_through() -> None:
    v = PassGate().assess(ctx_with(None), OB, "theorem t : True := trivial", "c")
    assert v.passed
