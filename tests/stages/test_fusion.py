"""Evidence fusion: which evidence may call a step wrong, re-examination of the prefix, synthesis."""

from __future__ import annotations

import json

import networkx as nx
import pytest
from faithsieve.obligations.models import Evidence, ObligationKind
from faithsieve.statetree.models import EdgeUnit, ProofState, StateTree, TransitionType

from faithsieve.core.proof import Proof, Step
from faithsieve.core.settings import Settings
from faithsieve.llm.types import LLMError
from faithsieve.stages.base import Review, RunContext, ScanResult
from faithsieve.stages.fusion import (
    EvidenceFusion,
    first_reliable,
    reliable_basis,
    uncertain_prefix,
)

K = ObligationKind
SETTINGS = Settings()
PROOF = Proof(problem="Compute the total and show the sum is even.",
              steps=tuple(Step(index=i, text=f"step {i} text") for i in range(1, 6)))


def tree() -> StateTree:
    g = nx.DiGraph()
    edges = []
    for i in range(1, 6):
        g.add_node(f"s{i - 1}", state=ProofState(id=f"s{i - 1}").model_dump())
        g.add_node(f"s{i}", state=ProofState(id=f"s{i}").model_dump())
        g.add_edge(f"s{i - 1}", f"s{i}")
        edges.append(EdgeUnit(id=f"e{i}", type=TransitionType.DERIVATION, parent=f"s{i - 1}", child=f"s{i}", step=i,
                              span=(0, 11), text=f"step {i} text"))
    return StateTree(graph=g, edges=edges)


def ev(step: int, status: str = "refuted", basis: str = "checked", **kw: object) -> Evidence:
    base: dict[str, object] = {"obligation": f"e{step}.o1", "kind": K.DERIVED_FACT, "step": step, "span": (0, 11),
                               "source": f"step {step} text", "claim": f"claim {step}", "status": status,
                               "method": "exact", "edge": f"e{step}", "basis": basis}
    if status == "refuted" and basis == "checked":
        base["counterexample"] = {"lhs": "34", "rhs": "35"}
    base.update(kw)
    return Evidence(**base)  # type: ignore[arg-type]


def formal(step: int, faith: float | None = 0.95, **kw: object) -> Evidence:
    return ev(step, basis="formal", method="lean-interact", faithfulness=faith, **kw)


# ---------------------------------------------------------------------------------------
# pure rules


@pytest.mark.parametrize(("record", "incorrect", "settings", "basis"), [
    (ev(2), set(), SETTINGS, "checked"),                                    # checked with counterexample
    (ev(2, counterexample=None), set(), SETTINGS, None),                    # checked, no counterexample
    (ev(2, counterexample=None), {"e2"}, SETTINGS, "reviewed"),             # ... but the review agrees
    (formal(2), set(), SETTINGS, "formal"),                                 # faithful refutation
    (formal(2, faith=0.9), set(), SETTINGS, "formal"),                      # exactly at the threshold
    (formal(2, faith=0.8), set(), SETTINGS, None),                          # below the gate
    (formal(2, faith=0.8), {"e2"}, SETTINGS, "reviewed"),                   # below the gate + review agrees
    (formal(2, drift=("wrong_direction",)), set(), SETTINGS, None),         # drift-only refutation
    (formal(2, drift=("wrong_direction",)), {"e2"}, SETTINGS, None),        # drift never counts
    (formal(2, faith=None), set(), SETTINGS, None),                         # unscored statement
    (formal(2, faith=None), set(), Settings(ablations=("no_gate",)), "formal"),  # ... unless the gate is off
    (ev(2, status="unknown", reason="timeout"), {"e2"}, SETTINGS, None),   # timeout
    (ev(2, status="verified"), {"e2"}, SETTINGS, None),
    (ev(2, basis="judged", kind=K.JUDGMENT, counterexample=None), {"e2"}, SETTINGS, None),
    (ev(2, basis="reviewed", kind=K.REVIEW, counterexample=None), {"e2"}, SETTINGS, None),
])
def test_reliable_basis(record: Evidence, incorrect: set[str], settings: Settings, basis: str | None) -> None:
    assert reliable_basis(record, incorrect, settings) == basis


def test_earliest_reliable_step_wins() -> None:
    evidence = [formal(4), ev(3, status="unknown"), ev(2, counterexample=None), ev(5)]
    step, basis, record = first_reliable(evidence, [], SETTINGS)  # type: ignore[misc]
    assert (step, basis) == (4, "formal")
    assert record is evidence[0]
    # a drifted refutation at an earlier step changes nothing
    step, _, _ = first_reliable([formal(1, drift=("role_swap",)), *evidence], [], SETTINGS)  # type: ignore[misc]
    assert step == 4
    assert first_reliable([ev(1, status="unknown"), formal(2, faith=0.5)], [], SETTINGS) is None


def test_uncertain_prefix() -> None:
    steps_of = {f"e{i}": i for i in range(1, 6)}
    reviews = [Review(edge="e1", verdict="correct"), Review(edge="e2", verdict="uncertain"),
               Review(edge="e5", verdict="incorrect")]
    evidence = [ev(3, status="unknown"), ev(1, status="verified"), ev(4)]
    assert uncertain_prefix(4, reviews, evidence, steps_of) == [2, 3]
    assert uncertain_prefix(6, reviews, evidence, steps_of) == [2, 3, 5]
    assert uncertain_prefix(1, reviews, evidence, steps_of) == []


# ---------------------------------------------------------------------------------------
# the stage over recorded answers


def fuse(llm: object, scan: ScanResult, evidence: list[Evidence], **settings: object) -> tuple[object, RunContext]:
    ctx = RunContext(proof=PROOF, settings=Settings(**settings), llm=llm)  # type: ignore[arg-type]
    return EvidenceFusion().fuse(ctx, tree(), scan, evidence), ctx


def test_reliable_refutation_without_prefix_needs_no_model(scripted: type) -> None:
    llm = scripted({})
    result, _ = fuse(llm, ScanResult(), [ev(3, status="verified"), ev(3)])
    assert result.first_error_step == 3 and result.basis == "checked"
    assert "34" in (result.reason or "")
    assert llm.requests == []


def test_prefix_reexamination_may_move_the_answer_earlier(scripted: type) -> None:
    scan = ScanResult(reviews=(Review(edge="e2", verdict="incorrect", reason="sign error"),))
    llm = scripted({"reexamine": ['After looking again: {"earlier_step": "step 2", "reason": "the sign flips"}']})
    result, _ = fuse(llm, scan, [formal(4)])
    assert result.first_error_step == 2
    assert result.basis == "reviewed"  # step 2's own review said incorrect, and re-examination agreed
    (record,) = result.evidence
    assert record.kind == K.REVIEW and record.basis == "reviewed" and record.step == 2
    prompt = llm.calls("reexamine")[0].messages[1].content
    assert "Step 2" in prompt and "sign error" in prompt


def test_prefix_reexamination_of_unknown_checks_is_judged(scripted: type) -> None:
    llm = scripted({"reexamine": [json.dumps({"earlier_step": 3, "reason": "unjustified"})]})
    result, _ = fuse(llm, ScanResult(), [ev(3, status="unknown", reason="left to review"), formal(4)])
    assert (result.first_error_step, result.basis) == (3, "judged")
    assert result.evidence[0].kind == K.JUDGMENT and result.evidence[0].basis == "judged"


@pytest.mark.parametrize("answer", [
    '{"earlier_step": null, "reason": "earlier steps are fine"}',
    '{"earlier_step": 1, "reason": "step 1 is wrong"}',   # not in the uncertain prefix
    '{"earlier_step": 5, "reason": "later"}',              # not earlier
])
def test_reexamination_keeps_the_candidate(scripted: type, answer: str) -> None:
    scan = ScanResult(reviews=(Review(edge="e2", verdict="uncertain"),))
    result, _ = fuse(scripted({"reexamine": [answer]}), scan, [ev(4)])
    assert (result.first_error_step, result.basis) == (4, "checked")
    assert result.evidence == ()


def test_unparsed_reexamination_keeps_the_candidate(scripted: type) -> None:
    scan = ScanResult(reviews=(Review(edge="e2", verdict="uncertain"),))
    result, ctx = fuse(scripted({"reexamine": ['{"earlier_step": "two"}', "I think step two."]}), scan, [ev(4)])
    assert result.first_error_step == 4
    assert any("re-examination unparsed" in n for n in ctx.notes)


def test_drift_only_evidence_goes_to_synthesis_which_is_judged(scripted: type) -> None:
    evidence = [formal(2, drift=("wrong_direction",), faith=0.4), ev(3, status="unknown", reason="timeout")]
    reviews = (Review(edge="e2", verdict="incorrect", suspicion=0.8, reason="converse used"),)
    llm = scripted({"synthesis": ['```json\n{"answer": "Step 2", "reason": "uses the converse", "confidence": 0.7}\n```']})
    result, _ = fuse(llm, ScanResult(reviews=reviews), evidence)
    assert (result.first_error_step, result.basis) == (2, "judged")
    (record,) = result.evidence
    assert record.kind == K.JUDGMENT and record.basis == "judged" and record.status == "refuted"
    prompt = llm.calls("synthesis")[0].messages[1].content
    assert "converse used" in prompt and "wrong_direction" in prompt


def test_synthesis_correct_is_judged_correct(scripted: type) -> None:
    result, _ = fuse(scripted({"synthesis": ['{"answer": "correct", "reason": "all steps hold"}']}), ScanResult(),
                     [ev(1, status="verified")])
    assert result.first_error_step is None and result.basis == "judged"
    assert result.evidence[0].status == "unknown"  # a judgment verifies nothing


@pytest.mark.parametrize("answers", [
    ['{"answer": "step 9"}', '{"answer": "step 9"}'],     # outside 1..5 (parsed, but no such step)
    ['{"answer": true}', "step two"],                      # wrong type, then prose
    ['{"answer": "the third step"', "Sorry, I can't decide."],  # truncated, then a refusal
    [LLMError("endpoint down")],
])
def test_unparsed_synthesis_never_invents_an_error(scripted: type, answers: list[object]) -> None:
    result, ctx = fuse(scripted({"synthesis": answers}), ScanResult(), [ev(2, status="unknown")])
    assert result.first_error_step is None and result.basis is None and result.undecided
    assert any("synthesis unparsed" in n for n in ctx.notes)
    assert result.evidence[0].status == "unknown"


def test_nl_only_ignores_checks_and_uses_reviews(scripted: type) -> None:
    reviews = (Review(edge="e3", verdict="incorrect", reason="wrong total"),)
    llm = scripted({"synthesis": ['{"answer": "step 3", "reason": "wrong total"}']})
    result, _ = fuse(llm, ScanResult(reviews=reviews), [ev(1), formal(2)], ablations=("nl_only",))
    assert (result.first_error_step, result.basis) == (3, "judged")
    prompt = llm.calls("synthesis")[0].messages[1].content
    assert "claim 1" not in prompt and "wrong total" in prompt
