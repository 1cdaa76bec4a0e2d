"""The whole ``--mode llm`` / ``--mode judge`` pipeline over recorded model answers.

Every stage runs for real; only the endpoint is replaced by ``ScriptedLLM``. The answers are
written the way models answer (prose around JSON, code fences, an unusable answer here and there).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from faithsieve.core.settings import Settings
from faithsieve.pipeline import Pipeline
from faithsieve.split import proof_from_steps
from faithsieve.stages.registry import LLMStages
from faithsieve.stages.tree_scan import LLMScanner

PROBLEM = "A shop sells 12 red and 22 blue pens. How many pens does it sell?"
STEPS = ["The shop sells 12 red pens and 22 blue pens.", "In total it sells 12 + 22 = 35 pens.",
         "So the answer is 35."]

DECOMPOSE_TREE = "Here are the pieces and the moves:\n```json\n" + json.dumps({
    "substeps": [{"id": "1.1", "step": 1, "start": "The shop sells 12", "scope": ""},
                 {"id": "2.1", "step": 2, "start": "In total it sells", "scope": ""},
                 {"id": "3.1", "step": 3, "start": "So the answer is", "scope": ""}],
    "states": [{"id": "s0", "conditions": [{"name": "h_red", "statement": "12 red pens"},
                                           {"name": "h_blue", "statement": "22 blue pens"}],
                "goal": "number of pens"}],
    "edges": [{"substep": "2.1", "parent": "", "children": ["s2"], "pattern": "simple_implication",
               "new_conditions": [{"name": "h_total", "statement": "12 + 22 = 35"}], "explanation": "adds the counts"}],
}) + "\n```"
SCAN = json.dumps({"overall_verdict": "likely_incorrect", "candidates": [
    {"unit_id": "e0", "suspicion": 0.05, "likely_wrong": False, "should_formalize": False, "error_type_prior": [],
     "reason": "data"},
    {"unit_id": "e1", "suspicion": 0.9, "likely_wrong": True, "should_formalize": True,
     "error_type_prior": ["arithmetic"], "reason": "12 + 22 is 34"},
    {"unit_id": "e2", "suspicion": 0.7, "likely_wrong": True, "should_formalize": False, "error_type_prior": [],
     "reason": "carries the error"}]})


def review(verdict: str, suspicion: float) -> str:
    return json.dumps({"verdict": verdict, "suspicion": suspicion, "error_type": "arithmetic" if verdict != "correct" else "",
                       "should_formalize": True, "translation_difficulty": "easy", "reason": "checked"})


def obligations(claim: str, equation: str | None) -> str:
    return json.dumps({"obligations": [{"slot": 1, "claim": claim, "equation": equation, "use_formal": True,
                                        "translation_confidence": 0.9, "priority": 0.8, "reason": "the edge's claim"}]})


def method_script() -> dict[str, list[Any]]:
    return {
        "decompose_tree": [DECOMPOSE_TREE],
        "scan": [SCAN],
        "review": [review("correct", 0.05), review("incorrect", 0.95), review("correct", 0.1)],
        "obligations": [obligations("the shop sells 12 red and 22 blue pens", None),
                        obligations("12 + 22 = 35", "12 + 22 = 35"), obligations("the answer is 35", None)],
        "reexamine": [json.dumps({"earlier_step": None, "reason": "step 1 only restates the data"})],
    }


def pipeline(scripted: Any, script: dict[str, list[Any]], **settings: Any) -> tuple[Pipeline, Any]:
    llm = scripted(script)
    s = Settings(mode=settings.pop("mode", "llm"), llm_model="scripted", llm_base_url="http://scripted/v1", **settings)
    # the stages of --mode llm with the scan these scripts are written for: one review call per step, no
    # whole-tree shortcut (the defaults are run end to end by tests/llm)
    stages = (replace(LLMStages.from_settings(s), scanner=LLMScanner(pack_steps=False, review_all_calls=0))
              if s.mode == "llm" else None)
    return Pipeline(s, llm=llm, stages=stages), llm


def test_method_finds_the_arithmetic_error_with_checked_evidence(scripted: Any) -> None:
    pipe, llm = pipeline(scripted, method_script(), max_audit_units=2)  # under the tree's 3 units: the scan runs
    v = pipe.localize(proof_from_steps(PROBLEM, STEPS))
    assert (v.verdict, v.first_error_step, v.basis, v.mode) == ("error", 2, "checked", "llm")
    refuted = [e for e in v.steps[1].evidence if e.status == "refuted"]
    assert refuted and all(e.counterexample for e in refuted)
    # the audit records the stages' work: an LLM tree, the scan, and a window ending at the focus unit e1
    assert v.audit is not None and v.audit.decomposition == "llm" and v.audit.substeps == 3
    assert v.audit.overall == "likely_incorrect" and v.audit.window == ("e0", "e1")
    assert [c.edge for c in v.audit.scan] == ["e0", "e1", "e2"]
    # usage is carried into the verdict: every request the stages made, counted once
    assert v.usage is not None and v.usage.calls == len(llm.requests) > 0
    assert v.usage.prompt_tokens == 100 * v.usage.calls and v.usage.cost_usd > 0
    # the prompts saw the problem and the proof
    assert PROBLEM in llm.calls("decompose_tree")[0].messages[1].content
    assert "12 + 22 = 35" in llm.calls("scan")[0].messages[1].content


def test_method_without_reliable_evidence_says_judged(scripted: Any) -> None:
    script = method_script()
    script["obligations"] = [obligations("the data", None), obligations("the total is thirty-five", None),
                             obligations("the answer", None)]
    script["review"] += [review("uncertain", 0.5)] * 3  # the re-samples of e1 neither confirm nor deny its flag
    script["synthesis"] = ['{"answer": "step 2", "reason": "12 + 22 is 34"}']
    pipe, _ = pipeline(scripted, script, llm_rule_kinds=())
    v = pipe.localize(proof_from_steps(PROBLEM, STEPS))
    assert (v.verdict, v.first_error_step, v.basis) == ("error", 2, "judged")
    # nothing was proved: no step rolls up as refuted, and the judgment is recorded as judged evidence
    assert all(r.status != "refuted" for r in v.steps)
    assert any(e.kind.value == "judgment" and e.basis == "judged" for r in v.steps for e in r.evidence)


def test_every_answer_unusable_ends_unknown_with_notes_never_an_error(scripted: Any) -> None:
    garbage = "I'm sorry, but I can't help with that."
    pipe, _ = pipeline(scripted, {}, llm_rule_kinds=())
    pipe.llm.default = garbage  # type: ignore[union-attr]
    v = pipe.localize(proof_from_steps(PROBLEM, STEPS))
    assert (v.verdict, v.first_error_step, v.basis) == ("unknown", None, None)
    assert v.audit is not None and v.audit.notes
    assert v.usage is not None and v.usage.unparsed > 0


def test_direct_judge_mode(scripted: Any) -> None:
    pipe, llm = pipeline(scripted, {"judge": ['Answer:\n{"answer": "step 2"}']}, mode="judge")
    v = pipe.localize(proof_from_steps(PROBLEM, STEPS))
    assert (v.verdict, v.first_error_step, v.basis, v.mode) == ("error", 2, "judged", "judge")
    assert [r.prompt_id for r in llm.requests] == ["judge"]
    user = llm.requests[0].messages[1].content
    assert "Step 1: The shop sells" in user and "Step 3: So the answer is 35." in user
    # the schema enumerates the answers this proof allows
    assert llm.requests[0].json_schema["properties"]["answer"]["enum"] == ["correct", "step 1", "step 2", "step 3"]


@pytest.mark.parametrize(("ablation", "must_not_call", "must_call"), [
    ("no_local_edges", {"decompose_tree", "state_tree"}, {"review"}),
    ("graph_judge", {"scan", "review", "obligations"}, {"graph_judge"}),
])
def test_ablations_change_which_stages_run(scripted: Any, ablation: str, must_not_call: set[str],
                                           must_call: set[str]) -> None:
    script = method_script()
    script["graph_judge"] = ['{"answer": "step 2"}']
    pipe, llm = pipeline(scripted, script, ablations=(ablation,))
    v = pipe.localize(proof_from_steps(PROBLEM, STEPS))
    called = {r.prompt_id for r in llm.requests}
    assert not (called & must_not_call) and must_call <= called
    assert v.first_error_step == 2
