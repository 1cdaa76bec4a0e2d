"""Each mode is a typed list of stages built by the registry; the pipeline runs whatever list it is given."""

from __future__ import annotations

from typing import Any

import pytest

from faithsieve.core.errors import BackendUnavailable
from faithsieve.core.settings import Settings
from faithsieve.pipeline import Pipeline
from faithsieve.split import proof_from_steps
from faithsieve.stages.base import FusionResult, RunContext
from faithsieve.stages.plan import (
    Decompose,
    Fuse,
    JudgeProof,
    JudgeTree,
    ModeStages,
    Scan,
    Sift,
    StageOrderError,
    TypeObligations,
    Verify,
    Work,
)
from faithsieve.stages.registry import LLMStages, stage, stages_for
from faithsieve.stages.rule import LiteralSieve, RuleDecomposer

PROOF = proof_from_steps("How many pens?", ["There are 12 + 22 = 35 pens.", "So the answer is 35."])


def kinds(stages: tuple[Any, ...]) -> list[str]:
    return [type(s).__name__ for s in stages]


def test_offline_is_rule_decomposition_then_the_literal_sieve() -> None:
    plan = stages_for(Settings())
    assert (plan.mode, kinds(plan.decompose), kinds(plan.check)) == ("offline", ["Decompose"], ["Sift"])
    assert isinstance(plan.decompose[0], Decompose) and isinstance(plan.decompose[0].decomposer, RuleDecomposer)
    assert not plan.needs_llm and not plan.needs_kernel and plan.time_limit_s == Settings().proof_time_limit_s


def test_judge_and_llm_lists() -> None:
    judge = stages_for(Settings(mode="judge"))
    assert kinds(judge.decompose) == ["Decompose"] and kinds(judge.check) == ["JudgeProof"]
    assert judge.needs_llm and not judge.needs_kernel
    llm = stages_for(Settings(mode="llm", llm_rule_kinds=("arithmetic", "identity")))
    # the whole-proof judgment fusion anchors on is asked first (issue 36)
    assert kinds(llm.decompose) == ["Anchor", "Decompose", "Sift", "Decompose"]
    assert kinds(llm.check) == ["Scan", "TypeObligations", "Verify", "Fuse"]
    sieve = llm.decompose[2]
    assert isinstance(sieve, Sift) and isinstance(sieve.sieve, LiteralSieve) and sieve.sieve.kinds == ("arithmetic", "identity")
    graph = stages_for(Settings(mode="llm", ablations=("graph_judge",)))
    assert kinds(graph.check) == ["JudgeTree"] and kinds(graph.decompose)[0] == "Decompose"  # no anchor: no fusion


def test_registered_stages_answer_to_their_role() -> None:
    assert stage("decomposer", "rule").name == "rule"
    assert stage("sieve", "literal").name == "literal"
    assert stage("judge", "direct").name == "direct" and stage("judge", "graph").name == "graph"
    with pytest.raises(KeyError, match="no scanner stage named 'nope'"):
        stage("scanner", "nope")


def test_the_pipeline_runs_the_list_it_is_given() -> None:
    class Always:
        name = "always"

        def judge(self, ctx: RunContext) -> FusionResult:
            return FusionResult(first_error_step=2, basis="judged", reason="said so")

    offline = stages_for(Settings())
    plan = ModeStages(mode="judge", decompose=offline.decompose, check=(*offline.check, JudgeProof(Always())),
                      time_limit_s=5.0)
    v = Pipeline(Settings(), stages=plan).localize(PROOF)
    assert (v.verdict, v.first_error_step, v.basis, v.mode) == ("error", 2, "judged", "judge")
    assert v.usage is None and v.audit is not None and v.audit.decomposition == "rule"
    # the sieve's evidence is kept beside the judged answer
    assert any(e.status == "refuted" for r in v.steps for e in r.evidence)


def test_a_stage_that_reads_the_tree_before_any_decomposer_is_an_order_error() -> None:
    plan = ModeStages(mode="offline", decompose=(), check=stages_for(Settings()).check, time_limit_s=5.0)
    with pytest.raises(StageOrderError):
        Pipeline(Settings(), stages=plan).localize(PROOF)
    with pytest.raises(StageOrderError):
        Work().tree()


def test_model_stages_need_a_model_and_llm_stages_are_accepted(scripted: Any) -> None:
    settings = Settings(mode="llm", llm_model="scripted", llm_base_url="http://scripted/v1")
    with pytest.raises(BackendUnavailable):
        Pipeline(settings)
    pipe = Pipeline(settings, llm=scripted({}), stages=LLMStages.from_settings(settings))
    assert kinds(pipe.stages.check) == ["Scan", "TypeObligations", "Verify", "Fuse"]
    assert all(isinstance(s, (Scan, TypeObligations, Verify, Fuse, JudgeTree)) for s in pipe.stages.check)
