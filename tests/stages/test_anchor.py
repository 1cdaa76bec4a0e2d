"""Issue 36: the whole-proof judgment anchors ``--mode llm``; re-samples of one review are one opinion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from faithsieve.core.proof import Proof
from faithsieve.core.settings import Settings
from faithsieve.llm.types import ChatResponse
from faithsieve.stages.base import Review, RunContext, ScanResult
from faithsieve.stages.calibration import (
    MIN_PAIRS,
    Calibration,
    CalibrationError,
    correlation,
    load_calibration,
    weights_from,
)
from faithsieve.stages.fusion import (
    EvidenceFusion,
    Signal,
    anchor_choice,
    decide,
    may_decide,
    samples_weight,
)
from tests.stages.test_fusion import PROOF, ev, review_json, tree


def sig(step: int, says: str) -> Signal:
    return Signal(step, says, "review", 0.85, "", "e3")  # type: ignore[arg-type]


def test_repeats_of_one_review_are_one_opinion_until_shown_independent() -> None:
    three = [sig(3, "wrong")] * 3
    assert samples_weight(3, 1.0) == 1.0 and samples_weight(3, 0.0) == 3.0
    assert decide(three, 5).step is None                   # rho = 1 (default): one review's weight, below the bar
    assert decide(three, 5, rho=0.0).step == 3              # measured independent: three opinions decide
    assert decide(three * 3, 5).step is None                # nine repeats are still one opinion


def test_the_correlation_a_run_measures() -> None:
    assert correlation(1.0, 0.9) == 1.0                     # re-samples always repeat: fully correlated
    assert correlation(0.82, 0.9) == pytest.approx(0.0)     # p^2 + (1-p)^2: independent draws
    assert correlation(0.3, 0.9) == 0.0                     # clipped
    fusion = EvidenceFusion()
    assert fusion.agreement.rho(0.85) is None               # too few pairs: unmeasured (rho = 1 is used)
    fusion.agreement.add(MIN_PAIRS, MIN_PAIRS)
    assert fusion.agreement.rho(0.85) == 1.0


@pytest.mark.parametrize(("judge", "local", "checked", "synthesis", "out"), [
    (None, 3, False, "unasked", "local"),   # no anchor read: the method as it was
    (None, None, False, "unasked", "ask"),
    (2, None, False, "unasked", "judge"),   # local evidence decided nothing: the judgment
    (2, 2, False, "unasked", "local"),      # agreement
    (2, 4, True, "unasked", "local"),       # an exact refutation that may decide
    (2, 4, False, "unasked", "ask"),        # a departure needs a different view
    (2, 4, False, 4, "local"),              # the synthesis corroborates it
    (2, 4, False, 2, "judge"),
    (2, 4, False, None, "judge"),           # an unread synthesis corroborates nothing
    (0, 4, False, 0, "judge"),
])
def test_anchor_choice(judge: int | None, local: int | None, checked: bool, synthesis: object, out: str) -> None:
    assert anchor_choice(judge, local, checked, synthesis) == out  # type: ignore[arg-type]


def test_a_suspect_record_never_decides() -> None:
    record = ev(2)
    assert may_decide(record)
    assert not may_decide(record.model_copy(update={"counterexample": None}))


def _fuse(llm: object, scan: ScanResult, evidence: list[object], rho_pairs: tuple[int, int] | None = None,
          **settings: object) -> object:
    ctx = RunContext(proof=PROOF, settings=Settings(**settings), llm=llm)  # type: ignore[arg-type]
    fusion = EvidenceFusion()
    if rho_pairs is not None:
        fusion.agreement.add(*rho_pairs)
    return fusion.fuse(ctx, tree(), scan, evidence)  # type: ignore[arg-type]


FLAG_3 = ScanResult(reviews=tuple(Review(edge=f"e{k}", verdict="incorrect" if k == 3 else "correct")
                                  for k in range(1, 6)))


def test_repeated_false_alarms_do_not_move_the_judgment(scripted: type) -> None:
    # the review of e3 says wrong and every re-sample repeats it (a systematic error): one opinion, and the
    # proof stays as the whole-proof judgment says
    llm = scripted({"judge": ['{"answer": "correct", "reason": "fine"}'], "review": [review_json("incorrect")] * 8})
    result = _fuse(llm, FLAG_3, [])
    assert (result.first_error_step, result.basis, result.judge) == (None, "judged", 0)  # type: ignore[attr-defined]
    assert not llm.calls("synthesis")


def test_independent_reviews_move_the_judgment_only_with_the_synthesis(scripted: type) -> None:
    for synthesis, expected in (("step 3", (3, "reviewed")), ("correct", (None, "judged"))):
        llm = scripted({"judge": ['{"answer": "correct", "reason": "fine"}'],
                        "review": [review_json("incorrect")] * 2,
                        "synthesis": [json.dumps({"answer": synthesis, "reason": "weighed"})]})
        result = _fuse(llm, FLAG_3, [], rho_pairs=(MIN_PAIRS, 0))
        assert (result.first_error_step, result.basis) == expected, result  # type: ignore[attr-defined]
        assert len(llm.calls("synthesis")) == 1


def test_a_checked_refutation_decides_against_the_judgment(scripted: type) -> None:
    llm = scripted({"judge": ['{"answer": "correct", "reason": "fine"}']})
    scan = ScanResult(reviews=tuple(Review(edge=f"e{k}", verdict="correct") for k in range(1, 6)))
    result = _fuse(llm, scan, [ev(2)])
    assert (result.first_error_step, result.basis) == (2, "checked")  # type: ignore[attr-defined]


def test_the_verdict_reports_its_weights(scripted: type, tmp_path: Path) -> None:
    cal = Calibration(model="m", items=40, sound_units=200, false_alarm=0.2, wrong_steps=20, sensitivity=0.9,
                      resample_pairs=40, resample_agreement=1.0, rho=1.0)
    path = tmp_path / "cal.json"
    path.write_text(cal.model_dump_json())
    llm = scripted({"judge": ['{"answer": "step 3", "reason": "x"}']})
    result = _fuse(llm, FLAG_3, [], llm_calibration=str(path))
    assert (result.calibration or "").startswith("calibration cal.json sha256:")  # type: ignore[attr-defined]
    assert result.first_error_step == 3 and not llm.calls("review")  # rho measured 1: no re-sample asked
    w = weights_from(cal, "x", None)
    assert w.review_wrong == pytest.approx(0.9 / 1.1) and w.review_fine == pytest.approx(0.8 / 0.9) and w.rho == 1.0
    assert weights_from(None, "default", None).rho == 1.0


def test_a_bad_calibration_file_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CalibrationError, match="not a calibration"):
        bad = tmp_path / "bad.json"
        bad.write_text('{"rho": 7}')
        load_calibration(str(bad))
    with pytest.raises(CalibrationError, match="calibration file"):
        load_calibration(str(tmp_path / "missing.json"))


def test_the_anchor_is_asked_when_the_token_budget_is_spent(scripted: type) -> None:
    llm = scripted({"judge": ['{"answer": "step 2", "reason": "x"}']}, tokens=(10_000, 10))
    proof = Proof(problem=PROOF.problem, steps=PROOF.steps)
    ctx = RunContext(proof=proof, settings=Settings(llm_max_tokens_per_item=1), llm=llm,
                     usage_start=llm.usage.snapshot())  # type: ignore[arg-type]
    llm.usage.record(ChatResponse(text="", model="m", prompt_tokens=5, completion_tokens=0))
    result = EvidenceFusion().fuse(ctx, tree(), FLAG_3, [])
    assert result.first_error_step == 2 and [r.prompt_id for r in llm.requests] == ["judge"]
    assert any("token budget" in n for n in ctx.notes)



def test_no_call_but_the_anchor_after_the_proofs_time_limit(scripted: type) -> None:
    llm = scripted({"judge": ['{"answer": "step 2", "reason": "x"}']})
    ctx = RunContext(proof=PROOF, settings=Settings(), llm=llm, deadline=0.0)  # type: ignore[arg-type]
    result = EvidenceFusion().fuse(ctx, tree(), FLAG_3, [])
    assert result.first_error_step == 2 and [r.prompt_id for r in llm.requests] == ["judge"]
    assert any("time limit passed" in n for n in ctx.notes)
