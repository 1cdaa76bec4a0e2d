"""Control flow of ``--mode llm`` on recorded model answers and recorded kernel results.

The model is ``ScriptedLLM`` (recorded JSON per prompt id: every parse, validation and retry runs
for real); the kernel is ``RecordedKernel`` (recorded statements and proof results). The tests
assert what the pipeline does with them: which stage rejects, what is recorded, what is kept.
"""

from __future__ import annotations

import json
from typing import Any

from faithsieve.lean.interface import FormalStatement, KernelResult, UnavailableKernel

from faithsieve.core.proof import Proof, Step
from faithsieve.core.settings import Settings
from faithsieve.llm.types import LLMError
from faithsieve.rewrite.check import check_llm_row
from faithsieve.rewrite.llm_mode import ALIGN_JUDGES, ReproPipeline
from faithsieve.stages.base import RunContext
from tests.stages.scripted import ScriptedLLM

ORIGINAL = {"question": "Tom has 3 apples and buys 4 more. How many apples does he have?", "answer": "3+4=<<3+4=7>>7\n#### 7"}
REWRITE = json.dumps({"rewritten_problem": "Ana has 5 pears and picks 6 more. How many pears does she have now?",
                      "strategies": ["numerical_reparameterization", "new_context"]})
VALID = json.dumps({"verdict": "valid", "category": "none", "issues": []})
FAITHFUL = json.dumps({"premise_slots": [{"slot": "5 pears", "match": 1}], "conclusion_slots": [{"slot": "total", "match": 1}],
                       "aspects": {a: 1 for a in ("step_relation", "object_witness", "directionality", "role_alignment",
                                                  "syntax_surface")},
                       "status": "faithful", "drift_categories": [], "reason": "same"})
PROOF = "theorem pears : (5 : ℕ) + 6 = 11 := by norm_num"
STATEMENT = FormalStatement(text="theorem pears : (5 : ℕ) + 6 = 11 := by sorry", compiled=True)


class RecordedKernel:
    """A kernel that returns recorded results and counts its calls."""

    name = "recorded"

    def __init__(self, statements: list[FormalStatement | None], proofs: list[KernelResult]) -> None:
        self.statements, self.proofs = list(statements), list(proofs)
        self.formalized = self.proved = 0

    def available(self) -> tuple[bool, str]:
        return True, ""

    def formalize(self, obligation: Any, context: str, feedback: str | None = None, previous: Any = None) -> Any:
        self.formalized += 1
        return self.statements.pop(0)

    def prove(self, statement: FormalStatement, branch: str) -> KernelResult:
        self.proved += 1
        return self.proofs.pop(0)


def _pipeline(llm: ScriptedLLM, kernel: Any, budget: int = 3) -> ReproPipeline:
    settings = Settings(mode="llm", gate_judges=ALIGN_JUDGES, llm_base_url="http://scripted")
    ctx = RunContext(proof=Proof(problem="", steps=(Step(index=1, text="x"),)), settings=settings, llm=llm, kernel=kernel)
    return ReproPipeline(ctx, kernel, budget=budget)


def _passing_script(extract: str = "11", status: str = "final") -> ScriptedLLM:
    return ScriptedLLM({"rewrite_generate": [REWRITE], "rewrite_screen": [VALID], "semantic_check": [FAITHFUL] * 3,
                        "rewrite_extract": [json.dumps({"candidate": extract})],
                        "rewrite_classify": [json.dumps({"status": status, "reason": "r"})]})


def _ok_kernel() -> RecordedKernel:
    return RecordedKernel([STATEMENT], [KernelResult(status="passed", artifact=PROOF, method="recorded")])


def test_a_candidate_passing_every_stage_is_kept_with_its_record() -> None:
    llm, kernel = _passing_script(), _ok_kernel()
    rows, outcome = _pipeline(llm, kernel).run_item(ORIGINAL, "t-0")
    assert outcome["kept"] == 1 and outcome["attempts"] == []
    row = rows[0]
    assert row["answer"] == "11" and row["question"].startswith("Ana has 5 pears")
    assert row["verification"]["proof_checked"] and row["verification"]["answer_class"] == "final"
    assert [c["check"] for c in row["verification"]["checks"]] == ["screen", "formalize", "align", "prove", "extract",
                                                                   "classify"]
    assert len(llm.calls("semantic_check")) == ALIGN_JUDGES  # all three judgments asked
    assert check_llm_row(row) == []


def test_one_dissenting_alignment_judgment_rejects_and_regenerates() -> None:
    unfaithful = json.loads(FAITHFUL) | {"status": "unfaithful", "drift_categories": ["wrong_objects"]}
    llm = ScriptedLLM({"rewrite_generate": [REWRITE, REWRITE], "rewrite_screen": [VALID, VALID],
                       "semantic_check": [FAITHFUL, json.dumps(unfaithful), FAITHFUL, FAITHFUL, FAITHFUL],
                       "rewrite_extract": [json.dumps({"candidate": "11"})],
                       "rewrite_classify": [json.dumps({"status": "final"})]})
    kernel = RecordedKernel([STATEMENT, STATEMENT], [KernelResult(status="passed", artifact=PROOF)])
    rows, outcome = _pipeline(llm, kernel).run_item(ORIGINAL, "t-0")
    assert outcome["attempts"][0]["stage"] == "align" and "wrong_objects" in outcome["attempts"][0]["reason"]
    assert kernel.proved == 1  # the rejected statement never reached the prover
    assert len(rows) == 1 and rows[0]["attempt"] == 2


def test_an_answer_that_is_not_a_literal_span_of_the_proof_is_rejected() -> None:
    llm = _passing_script(extract="eleven")
    rows, outcome = _pipeline(llm, _ok_kernel(), budget=1).run_item(ORIGINAL, "t-0")
    assert rows == [] and (outcome["stage"], outcome["reason"]) == ("extract", "not_a_literal_span")
    assert llm.calls("rewrite_classify") == []


def test_only_final_answers_are_kept() -> None:
    for status in ("intermediate", "wrong_target", "unknown"):
        rows, outcome = _pipeline(_passing_script(status=status), _ok_kernel(), budget=1).run_item(ORIGINAL, "t-0")
        assert rows == [] and (outcome["stage"], outcome["reason"]) == ("classify", status)


def test_unparsable_answers_are_rejections_never_passes() -> None:
    llm = ScriptedLLM({"rewrite_generate": [REWRITE], "rewrite_screen": ["looks fine to me", "still fine"]})
    kernel = _ok_kernel()
    rows, outcome = _pipeline(llm, kernel, budget=1).run_item(ORIGINAL, "t-0")
    assert rows == [] and (outcome["stage"], outcome["reason"]) == ("screen", "unparsed")
    assert kernel.formalized == 0
    # an unparsable classification is not "final" either
    llm = _passing_script()
    llm.queues["rewrite_classify"].clear()
    llm.add("rewrite_classify", '{"status": "definitely"}', '{"status": "maybe"}')
    rows, outcome = _pipeline(llm, _ok_kernel(), budget=1).run_item(ORIGINAL, "t-0")
    assert rows == [] and (outcome["stage"], outcome["reason"]) == ("classify", "unparsed")


def test_screen_rejections_record_the_category_and_the_budget_bounds_regeneration() -> None:
    bad = json.dumps({"verdict": "invalid", "category": "unrealistic", "issues": ["2.5 people"]})
    llm = ScriptedLLM({"rewrite_generate": [REWRITE] * 5, "rewrite_screen": [bad] * 5})
    rows, outcome = _pipeline(llm, _ok_kernel(), budget=2).run_item(ORIGINAL, "t-0")
    assert rows == [] and len(llm.calls("rewrite_generate")) == 2
    assert outcome["failures"] == {"screen/unrealistic": 2}
    assert outcome["attempts"][0]["detail"] == "2.5 people"


def test_failed_formalization_and_failed_proof_are_recorded_with_their_stage() -> None:
    llm = ScriptedLLM({"rewrite_generate": [REWRITE] * 2, "rewrite_screen": [VALID] * 2,
                       "semantic_check": [FAITHFUL] * 3})
    kernel = RecordedKernel([None, STATEMENT], [KernelResult(status="inconclusive", reason="search exhausted")])
    rows, outcome = _pipeline(llm, kernel, budget=2).run_item(ORIGINAL, "t-0")
    assert rows == []
    assert [(a["stage"], a["reason"]) for a in outcome["attempts"]] == [("formalize", "no_compiling_statement"),
                                                                          ("prove", "inconclusive")]


def test_without_a_lean_backend_nothing_is_kept_and_the_reason_is_given() -> None:
    llm = ScriptedLLM({"rewrite_generate": [REWRITE] * 3, "rewrite_screen": [VALID] * 3})
    rows, outcome = _pipeline(llm, UnavailableKernel("no Lean backend configured"), budget=3).run_item(ORIGINAL, "t-0")
    assert rows == [] and (outcome["stage"], outcome["reason"]) == ("formalize", "kernel_unavailable")
    assert outcome["detail"] == "no Lean backend configured"
    assert len(llm.calls("rewrite_generate")) == 1  # regenerating cannot help


def test_an_unreachable_endpoint_stops_the_item() -> None:
    llm = ScriptedLLM({"rewrite_generate": [LLMError("connection refused")] * 3})
    rows, outcome = _pipeline(llm, _ok_kernel(), budget=3).run_item(ORIGINAL, "t-0")
    assert rows == [] and outcome["reason"] == "endpoint_unavailable" and len(llm.calls()) == 1


def test_llm_rows_without_a_checked_proof_fail_the_file_check() -> None:
    rows, _ = _pipeline(_passing_script(), _ok_kernel()).run_item(ORIGINAL, "t-0")
    row = rows[0]
    forged = json.loads(json.dumps(row))
    forged["answer"] = "12"
    assert "the answer is not a literal span of the checked proof" in check_llm_row(forged)
    forged = json.loads(json.dumps(row))
    forged["verification"]["proof_checked"] = False
    assert "no kernel-checked proof" in check_llm_row(forged)


def test_without_lean_the_run_config_says_nothing_is_verified(tmp_path: Any) -> None:
    from faithsieve.rewrite.llm_mode import build_llm_work
    from faithsieve.rewrite.runner import summarize

    settings = Settings(llm_base_url="http://127.0.0.1:9/v1", llm_model="m", lean_backend="none",
                        llm_cache_path=str(tmp_path / "c.sqlite"))
    _work, config = build_llm_work(settings, seed=0, variants=1, budget=2)
    assert config["verified"] is False and "formal stages cannot run" in config["notes"][0]
    stats = summarize([{"id": "a", "kept": 0, "stage": "formalize", "reason": "kernel_unavailable", "failures": {}}],
                      config)
    assert stats["validity"]["answer_correct"] is None and stats["notes"] == config["notes"]
    assert stats["rejected_items_by_reason"] == {"formalize/kernel_unavailable": 1}
