"""Evidence fusion: which evidence may call a step wrong, re-examination of the prefix, synthesis."""

from __future__ import annotations

import json
import math

import networkx as nx
import pytest
from faithsieve.obligations.kinds.models import Evidence, ObligationKind
from faithsieve.statetree.models import EdgeUnit, ProofState, StateTree, TransitionType

from faithsieve.core.proof import Proof, Step
from faithsieve.core.settings import Settings
from faithsieve.llm.types import LLMError
from faithsieve.stages import fusion as _fusion
from faithsieve.stages.base import Review, RunContext, ScanResult
from faithsieve.stages.calibration import MIN_PAIRS
from faithsieve.stages.fusion import (
    EvidenceFusion,
    Signal,
    evidence_signal,
    logit,
    names_formula,
    wrong_bar,
)


# The tests below written before issue 36 weigh reviews and their re-samples as independent opinions: they run
# with a re-sample correlation of 0 (a run that measured re-samples disagreeing as independent draws do). The
# correlated case (the default, rho = 1) and the whole-proof anchor have their own tests in test_anchor.py.
def decide(*args: object, **kw: object) -> _fusion.Decision:
    kw.setdefault("rho", 0.0)
    return _fusion.decide(*args, **kw)  # type: ignore[arg-type]


def contested_step(*args: object, **kw: object) -> int | None:
    kw.setdefault("rho", 0.0)
    return _fusion.contested_step(*args, **kw)  # type: ignore[arg-type]

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


def sig(step: int, says: str, source: str = "review", r: float | None = None) -> Signal:
    from faithsieve.stages.fusion import RELIABILITY

    return Signal(step, says, source, r if r is not None else RELIABILITY[source])  # type: ignore[arg-type]


@pytest.mark.parametrize(("record", "settings", "says", "source"), [
    (ev(2), SETTINGS, "wrong", "checked"),                                   # a formula the proof writes, refuted
    (ev(2, counterexample=None), SETTINGS, None, None),                      # refuted with no counterexample
    (ev(2, basis="formalized", faithfulness=0.95), SETTINGS, "wrong", "formalized"),  # gated model equation
    (ev(2, basis="formalized", faithfulness=None), SETTINGS, None, None),    # ungated model equation: nothing
    (ev(2, basis="formalized", faithfulness=None), Settings(ablations=("no_gate",)), "wrong", "formalized"),
    (formal(2), SETTINGS, "wrong", "formal"),
    (formal(2, faith=0.9), SETTINGS, "wrong", "formal"),                     # exactly at the threshold
    (formal(2, faith=0.8), SETTINGS, None, None),                            # below the gate
    (formal(2, drift=("wrong_direction",)), SETTINGS, None, None),           # drift never counts
    (formal(2, faith=None), SETTINGS, None, None),                           # unscored statement
    (formal(2, faith=None), Settings(ablations=("no_gate",)), "wrong", "formal"),  # ... unless the gate is off
    (ev(2, status="unknown", reason="timeout"), SETTINGS, None, None),       # a time limit says nothing
    (ev(2, status="verified"), SETTINGS, "fine", "checked"),
    (ev(2, basis="judged", kind=K.JUDGMENT, counterexample=None), SETTINGS, None, None),
])
def test_evidence_signal(record: Evidence, settings: Settings, says: str | None, source: str | None) -> None:
    s = evidence_signal(record, settings)
    assert (s.says, s.source) == (says, source) if s is not None else (says, source) == (None, None)


def test_one_review_does_not_decide_two_agreeing_do() -> None:
    assert decide([sig(3, "wrong")], 5).step is None
    assert decide([sig(3, "wrong"), sig(3, "wrong", "scan")], 5).step is None  # the scan is a weak prior
    d = decide([sig(3, "wrong"), sig(3, "wrong")], 5)
    assert (d.step, d.basis) == (3, "reviewed")
    assert decide([sig(3, "wrong"), sig(3, "fine")], 5).step is None          # disagreement cancels
    assert decide([sig(3, "wrong", "scan"), sig(3, "wrong", "scan"), sig(3, "wrong", "scan"),
                   sig(3, "wrong", "scan"), sig(3, "wrong", "scan"), sig(3, "wrong", "scan")], 5).step is None


def test_earliest_wrong_step_wins_and_basis_is_the_strongest() -> None:
    d = decide([sig(4, "wrong", "checked"), sig(2, "wrong"), sig(2, "wrong"), sig(2, "wrong", "formal")], 5)
    assert (d.step, d.basis) == (2, "formal")
    d = decide([sig(4, "wrong", "checked"), sig(2, "wrong")], 5)  # step 2 leans wrong: re-examine it first
    assert (d.step, d.basis, d.leaning) == (4, "checked", (2,))


def test_a_checked_refutation_is_overruled_only_by_agreeing_local_evidence() -> None:
    assert decide([sig(2, "wrong", "checked"), sig(2, "fine")], 5).step == 2
    d = decide([sig(2, "wrong", "checked"), sig(2, "fine"), sig(2, "fine")], 5)
    assert d.step is None and 2 in d.leaning   # an immaterial slip, twice confirmed: not the first error


def test_all_steps_cleared_is_correct_without_synthesis() -> None:
    d = decide([sig(k, "fine") for k in range(1, 6)], 5)
    assert d.all_cleared and d.basis == "reviewed" and d.step is None
    assert not decide([sig(k, "fine") for k in range(1, 5)], 5).all_cleared   # step 5 unreviewed


def test_contested_step() -> None:
    assert contested_step([sig(2, "wrong"), sig(4, "wrong"), sig(4, "wrong")]) == 2
    assert contested_step([sig(2, "wrong")], {2: 3}) is None                       # rounds spent
    assert contested_step([sig(2, "wrong"), sig(2, "fine")]) == 2                   # a tie: sample again
    assert contested_step([sig(2, "wrong"), sig(2, "fine"), sig(2, "fine")]) is None  # cleared
    assert contested_step([sig(2, "wrong"), sig(2, "wrong"), sig(2, "fine")]) == 2  # decided but contested
    assert contested_step([sig(2, "wrong", "checked"), sig(2, "fine")]) is None     # an exact refutation is final
    assert contested_step([sig(2, "wrong", "checked"), sig(3, "wrong")]) is None    # after the decided step
    assert contested_step([sig(2, "wrong", "scan")]) is None                        # the scan alone asks nothing
    assert contested_step([sig(2, "wrong", "checked"), sig(2, "fine", "checked", 0.6)]) is None  # a verified claim


# ---------------------------------------------------------------------------------------
# the stage over recorded answers


def fuse(llm: object, scan: ScanResult, evidence: list[Evidence], **settings: object) -> tuple[object, RunContext]:
    ctx = RunContext(proof=PROOF, settings=Settings(**settings), llm=llm)  # type: ignore[arg-type]
    fusion = EvidenceFusion()
    fusion.agreement.add(MIN_PAIRS, 0)  # re-samples measured to be independent draws (see ``decide`` above)
    return fusion.fuse(ctx, tree(), scan, evidence), ctx


def review_json(verdict: str, reason: str = "looked closely") -> str:
    return json.dumps({"verdict": verdict, "suspicion": 0.9 if verdict == "incorrect" else 0.1, "reason": reason})


def test_reliable_refutation_without_prefix_needs_no_model(scripted: type) -> None:
    llm = scripted({})
    result, _ = fuse(llm, ScanResult(), [ev(3, status="verified"), ev(3)])
    assert result.first_error_step == 3 and result.basis == "checked"
    assert "34" in (result.reason or "")
    assert [r.prompt_id for r in llm.requests if r.prompt_id != "judge"] == ["materiality"]  # the one question before it decides
    sent = llm.calls("materiality")[0].messages[1].content
    assert "Formula in this step: step 3 text" in sent and "lhs = 34, rhs = 35" in sent


def test_a_review_flag_is_confirmed_by_a_second_sample(scripted: type) -> None:
    scan = ScanResult(reviews=tuple(Review(edge=f"e{k}", verdict="incorrect" if k == 3 else "correct")
                                    for k in range(1, 6)))
    llm = scripted({"review": [review_json("incorrect", "3 + 4 is not 8")] * 2})
    result, _ = fuse(llm, scan, [])
    # five units judged: the bar is logit(0.9) + ln 5 = 3.8, so a review and one agreeing re-sample (3.5) are
    # not enough; a third agreeing judgment is
    assert (result.first_error_step, result.basis) == (3, "reviewed")
    reqs = llm.calls("review")
    assert all(r.temperature >= 0.7 for r in reqs) and [r.seed for r in reqs] == [1, 2]  # independent samples
    assert not llm.calls("synthesis")


def test_a_flag_two_more_samples_deny_is_cleared(scripted: type) -> None:
    scan = ScanResult(reviews=tuple(Review(edge=f"e{k}", verdict="incorrect" if k == 3 else "correct")
                                    for k in range(1, 6)))
    llm = scripted({"review": [review_json("correct"), review_json("correct")]})
    result, _ = fuse(llm, scan, [])
    # wrong, then fine, then fine: the majority of three independent samples clears the step
    assert (result.first_error_step, result.basis) == (None, "reviewed")
    assert [r.seed for r in llm.calls("review")] == [1, 2]


def test_a_checked_refutation_every_model_judgment_dismisses_still_stands(scripted: type) -> None:
    scan = ScanResult(reviews=tuple(Review(edge=f"e{k}", verdict="correct") for k in range(1, 6)))
    llm = scripted({"synthesis": ['{"answer": "correct", "reason": "the refuted value was a trial"}']})
    result, _ = fuse(llm, scan, [ev(2)])
    # the refutation floor: a formula the proof writes is false as written; no model "fine" moves the answer
    # past it, and the step is neither re-sampled nor sent to the synthesis (nothing could move it later)
    assert (result.first_error_step, result.basis) == (2, "checked")
    assert [r.prompt_id for r in llm.requests if r.prompt_id != "judge"] == ["materiality"]  # answered material (the fixture's default)


def test_an_explicit_immaterial_about_the_formula_overrules_it_and_says_so(scripted: type) -> None:
    # step 4 has no review, so nothing clears the proof and the synthesis answers once the floor is overruled
    scan = ScanResult(reviews=tuple(Review(edge=f"e{k}", verdict="correct") for k in (1, 2, 3, 5)))
    llm = scripted({"materiality": ['{"material": false, "reason": "step 2 text is a trial value the step rejects"}'],
                    "synthesis": ['{"answer": "step 4", "reason": "the bound is misapplied"}']})
    result, _ = fuse(llm, scan, [ev(2)])
    assert (result.first_error_step, result.basis) == (4, "judged")
    assert "overruled" in (result.reason or "")
    record = [e for e in result.evidence if e.method == "materiality"]
    assert record and record[0].step == 2 and record[0].basis == "judged" and "overruled" in record[0].claim


@pytest.mark.parametrize("answer", [
    '{"material": false, "reason": "a harmless slip"}',   # does not quote the formula
    '{"reason": "fine"}',                                 # no field
    "fine",                                               # no JSON
    '{"material": "maybe", "reason": "step 2 text"}',     # not a yes or no
])
def test_anything_but_an_explicit_immaterial_keeps_the_floor(scripted: type, answer: str) -> None:
    scan = ScanResult(reviews=tuple(Review(edge=f"e{k}", verdict="correct") for k in range(1, 6)))
    llm = scripted({"materiality": [answer] * 2})
    result, _ = fuse(llm, scan, [ev(2)])
    assert (result.first_error_step, result.basis) == (2, "checked")
    assert not llm.calls("synthesis")


def test_names_formula_ignores_spacing_and_product_signs() -> None:
    assert names_formula("since '2 \\times 5 = 10' is only a check", "2 * 5 = 10")
    assert not names_formula("the arithmetic is fine", "2 * 5 = 10")
    assert not names_formula("anything", "")


@pytest.mark.parametrize(("answer", "step", "basis"), [
    ('{"earlier_step": 1, "reason": "the premise is misquoted"}', 1, "reviewed"),  # earlier: the model may say so
    ('{"earlier_step": null, "reason": "fine"}', 3, "checked"),                    # never correct past the floor
    ("I cannot say.", 3, "checked"),                                               # unreadable: the floor stands
])
def test_judgments_may_only_move_the_answer_before_an_exact_refutation(scripted: type, answer: str, step: int,
                                                                        basis: str) -> None:
    # the unit that writes the refuted formula is reviewed fine twice; step 1 leans wrong (one review, 3 more
    # samples unsure): the floor decides at step 3 after the re-examination of step 1
    reviews = (Review(edge="e3", verdict="correct"), Review(edge="e3", verdict="correct", sample=1),
               Review(edge="e1", verdict="incorrect"), Review(edge="e1", verdict="incorrect", sample=1))
    llm = scripted({"review": [review_json("uncertain")] * 3, "reexamine": [answer] * 2})
    result, _ = fuse(llm, ScanResult(reviews=reviews), [ev(3)])
    assert (result.first_error_step, result.basis) == (step, basis)
    assert llm.calls("reexamine") and not llm.calls("synthesis")


def test_wrong_bar_rises_with_the_units_judged() -> None:
    assert wrong_bar(1) == pytest.approx(logit(0.9))
    assert wrong_bar(12) == pytest.approx(logit(0.9) + math.log(12))
    # one unit: a review and its agreeing re-sample decide; twelve units: they do not, a third sample does
    two, three = [sig(2, "wrong")] * 2, [sig(2, "wrong")] * 3
    assert decide(two, 5).step == 2 and decide(two, 5, units=12).step is None and decide(three, 5, units=12).step == 2


def test_reviews_of_other_units_do_not_cancel_a_flag() -> None:
    # units of one step: e3a fine, e3b wrong twice: the step is wrong (any move wrong), not a tie
    d = decide([Signal(3, "fine", "review", 0.85, unit="e3a"), Signal(3, "wrong", "review", 0.85, unit="e3b"),
                Signal(3, "wrong", "review", 0.85, unit="e3b")], 5)
    assert (d.step, d.basis) == (3, "reviewed")
    # the same three signals about one unit: 1.73 log-odds, below the bar
    one = decide([Signal(3, "fine", "review", 0.85, unit="e3"), *[Signal(3, "wrong", "review", 0.85, unit="e3")] * 2], 5)
    assert one.step is None


def test_reviews_alone_never_clear_a_checked_refutation() -> None:
    d = decide([sig(2, "wrong", "checked"), *[sig(k, "fine") for k in range(1, 6)], sig(2, "fine"), sig(2, "fine")], 5)
    assert d.step is None and not d.all_cleared and d.basis is None


def test_every_unit_reviewed_fine_is_correct_with_no_synthesis(scripted: type) -> None:
    scan = ScanResult(reviews=tuple(Review(edge=f"e{k}", verdict="correct") for k in range(1, 6)))
    llm = scripted({})
    result, _ = fuse(llm, scan, [])
    # no synthesis: only the whole-proof judgment (unreadable here) was asked
    assert (result.first_error_step, result.basis) == (None, "reviewed")
    assert [r.prompt_id for r in llm.requests] == ["judge"]


def test_prefix_reexamination_adds_a_signal(scripted: type) -> None:
    reviews = (Review(edge="e2", verdict="incorrect", reason="sign error"),
               Review(edge="e2", verdict="incorrect", reason="sign error", sample=1), Review(edge="e4", verdict="incorrect"))
    llm = scripted({"review": [review_json("uncertain")] * 3,
                    "reexamine": ['After looking again: {"earlier_step": "step 2", "reason": "the sign flips"}']})
    result, _ = fuse(llm, ScanResult(reviews=reviews), [formal(4)])
    # step 4: a gated formal refutation that a review agrees with (3.9) reaches the bar (3.8); two reviews
    # (3.5) + the re-examination (0.6) on step 2 reach it before
    assert (result.first_error_step, result.basis) == (2, "reviewed")
    prompt = llm.calls("reexamine")[0].messages[1].content
    assert "Step 2" in prompt and "sign error" in prompt


@pytest.mark.parametrize("answer", [
    '{"earlier_step": null, "reason": "earlier steps are fine"}',
    '{"earlier_step": 1, "reason": "step 1 is wrong"}',   # not a step that leans wrong
    '{"earlier_step": 5, "reason": "later"}',              # not earlier
])
def test_reexamination_keeps_the_candidate(scripted: type, answer: str) -> None:
    reviews = (Review(edge="e2", verdict="incorrect"),)
    result, _ = fuse(scripted({"review": [review_json("uncertain")] * 3, "reexamine": [answer]}),
                     ScanResult(reviews=reviews), [ev(4)])
    assert (result.first_error_step, result.basis) == (4, "checked")


def test_unparsed_reexamination_keeps_the_candidate(scripted: type) -> None:
    reviews = (Review(edge="e2", verdict="incorrect"),)
    llm = scripted({"review": [review_json("uncertain")] * 3, "reexamine": ['{"earlier_step": "two"}', "I think step two."]})
    result, ctx = fuse(llm, ScanResult(reviews=reviews), [ev(4)])
    assert result.first_error_step == 4
    assert any("re-examination unparsed" in n for n in ctx.notes)


def test_drift_only_evidence_goes_to_synthesis_which_is_judged(scripted: type) -> None:
    evidence = [formal(2, drift=("wrong_direction",), faith=0.4), ev(3, status="unknown", reason="timeout")]
    reviews = (Review(edge="e2", verdict="incorrect", suspicion=0.8, reason="converse used"),)
    llm = scripted({"review": [review_json("uncertain")] * 3,
                    "synthesis": ['```json\n{"answer": "Step 2", "reason": "uses the converse", "confidence": 0.7}\n```']})
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
    llm = scripted({"review": [review_json("uncertain")] * 3, "synthesis": ['{"answer": "step 3", "reason": "wrong total"}']})
    result, _ = fuse(llm, ScanResult(reviews=reviews), [ev(1), formal(2)], ablations=("nl_only",))
    assert (result.first_error_step, result.basis) == (3, "judged")
    prompt = llm.calls("synthesis")[0].messages[1].content
    assert "claim 1" not in prompt and "wrong total" in prompt


def test_a_verified_formula_no_unit_writes_does_not_hold_back_clearing() -> None:
    from faithsieve.stages.fusion import FORMULA_UNIT

    fine = [Signal(k, "fine", "review", 0.85, unit=f"e{k}") for k in range(1, 3)]
    fine += [Signal(k, "fine", "review", 0.85, unit=f"e{k}") for k in range(1, 3)]
    verified = Signal(2, "fine", "checked", 0.6, unit=f"{FORMULA_UNIT}2: 2 + 2 = 4")
    assert decide([*fine, verified], 2).all_cleared
    refuted = Signal(2, "wrong", "checked", 0.99, unit=f"{FORMULA_UNIT}2: 2 + 2 = 5")
    assert decide([*fine, refuted], 2).step == 2
