"""``--mode llm``: the RePro pipeline — rewrite, screen, formalize, align, prove, extract, classify.

One candidate goes through the stages in order; the first stage that fails records
``{"attempt", "stage", "reason", "detail"}`` and a new candidate is generated, up to ``budget``
candidates per item:

1. ``rewrite``: the model rewrites the problem (``rewrite_generate``; it never solves it);
2. ``screen``: the model rejects ill-defined, ambiguous, contradictory, unrealistic or infeasible
   problems (``rewrite_screen``);
3. ``formalize``: the kernel drafts a formal statement that must compile;
4. ``align``: the semantic gate (``faithsieve.stages.gate.LLMGate``) with at least
   ``ALIGN_JUDGES`` independent judgments, every one of which must pass;
5. ``prove``: the kernel proves the statement; the checked proof is kept;
6. ``extract``: the model copies the answer out of the proof, and the copy must be a literal span
   of the checked proof text (checked here, not trusted);
7. ``classify``: the model calls the copy ``final``, ``intermediate``, ``wrong_target`` or
   ``unknown``; only ``final`` is kept.

A model answer that cannot be parsed is a rejection (``unparsed``), never a pass. Without a Lean
backend stages 3–5 cannot run: the item stops at ``formalize`` with ``kernel_unavailable`` (no
point regenerating), nothing is kept, and the statistics say so.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Literal, Mapping, TypeVar

from pydantic import BaseModel, Field

from faithsieve.core.proof import Proof, Step
from faithsieve.core.settings import Settings
from faithsieve.lean.interface import Kernel
from faithsieve.llm.structured import Parsed, Unparsed
from faithsieve.obligations.kinds.models import NLObligation, ObligationKind
from faithsieve.stages.base import RunContext
from faithsieve.stages.gate import LLMGate

T = TypeVar("T", bound=BaseModel)
Ask = Callable[[str, Mapping[str, str], type[BaseModel]], "Parsed[Any] | Unparsed"]

ALIGN_JUDGES = 3
"""Semantic-alignment judgments per statement (RePro: three, all must agree)."""
MAX_PROBLEM_CHARS = 4000


class RewriteCandidate(BaseModel):
    rewritten_problem: str = Field(min_length=10, max_length=MAX_PROBLEM_CHARS)
    strategies: list[Literal["numerical_reparameterization", "logical_restructuring", "constraint_modification",
                             "new_context"]] = Field(default_factory=list, max_length=4)
    notes: str = Field(default="", max_length=2000)


class ScreenVerdict(BaseModel):
    verdict: Literal["valid", "invalid"]
    category: Literal["none", "ill_defined", "ambiguous", "contradictory", "unrealistic", "infeasible"]
    issues: list[str] = Field(default_factory=list, max_length=16)


class ExtractedSpan(BaseModel):
    candidate: str = Field(max_length=300)


class AnswerClass(BaseModel):
    status: Literal["final", "intermediate", "wrong_target", "unknown"]
    reason: str = Field(default="", max_length=2000)


class _Failed(Exception):
    def __init__(self, stage: str, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.stage, self.reason, self.detail = stage, reason, detail[:500]


def _parsed(answer: Parsed[Any] | Unparsed, stage: str) -> Any:
    if isinstance(answer, Unparsed):
        raise _Failed(stage, "endpoint_unavailable" if answer.unavailable else "unparsed", answer.reason)
    return answer.value


def _obligation(problem: str) -> NLObligation:
    return NLObligation(id="rewrite", edge="rewrite", step=1, source=problem[:MAX_PROBLEM_CHARS],
                        kind=ObligationKind.DERIVED_FACT, premises=(),
                        claim=("The quantity this problem asks for has exactly one value, and the statement names it: "
                               + problem[:MAX_PROBLEM_CHARS]),
                        use_formal=True, reason="RePro executable formalization of a rewritten problem")


class ReproPipeline:
    """The stages over an injected model (``ctx``), kernel and gate; ``run_item`` does one item."""

    def __init__(self, ctx: RunContext, kernel: Kernel, gate: Any | None = None, *, budget: int = 3) -> None:
        self.ctx, self.kernel, self.gate, self.budget = ctx, kernel, gate or LLMGate(), budget

    def _candidate(self, problem: str, attempt: int) -> dict[str, Any]:
        """One candidate through every stage; raises ``_Failed`` at the first failing stage."""
        ask = self.ctx.ask
        cand = _parsed(ask("rewrite_generate", {"problem": problem[:MAX_PROBLEM_CHARS], "attempt": str(attempt)},
                           RewriteCandidate), "rewrite")
        new = cand.rewritten_problem.strip()
        if new == problem.strip():
            raise _Failed("rewrite", "unchanged", "the rewrite repeats the original")
        screen = _parsed(ask("rewrite_screen", {"problem": new}, ScreenVerdict), "screen")
        if screen.verdict != "valid" or screen.category != "none":
            raise _Failed("screen", screen.category if screen.category != "none" else "invalid", "; ".join(screen.issues))
        ok, why = self.kernel.available()
        if not ok:
            raise _Failed("formalize", "kernel_unavailable", why)
        ob = _obligation(new)
        statement = self.kernel.formalize(ob, new)
        if statement is None or not statement.compiled:
            raise _Failed("formalize", "no_compiling_statement", statement.diagnostics if statement else "")
        verdict = self.gate.assess(self.ctx, ob, statement.text, new)
        if not verdict.passed:
            raise _Failed("align", ",".join(verdict.drift) or "not_faithful", verdict.report)
        result = self.kernel.prove(statement, "original")
        if result.status != "passed" or not result.artifact:
            raise _Failed("prove", result.status if result.status != "passed" else "no_proof_text", result.reason)
        proof = result.artifact
        span = _parsed(ask("rewrite_extract", {"problem": new, "proof": proof[:12000]}, ExtractedSpan), "extract")
        answer = span.candidate.strip()
        if not answer or answer not in proof:
            raise _Failed("extract", "not_a_literal_span", f"{answer[:80]!r} is not in the checked proof")
        cls = _parsed(ask("rewrite_classify", {"problem": new, "proof": proof[:12000], "candidate": answer}, AnswerClass),
                      "classify")
        if cls.status != "final":
            raise _Failed("classify", cls.status, cls.reason)
        return {"question": new, "answer": answer, "solution": proof, "strategies": list(cand.strategies),
                "statement": statement.text, "gate": {"s_faith": verdict.s_faith, "judges": ALIGN_JUDGES},
                "proof_method": result.method, "answer_reason": cls.reason}

    def run_item(self, record: Mapping[str, Any], item_id: str, variants: int = 1) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Rows kept for one record and its outcome (every failure with its stage)."""
        problem = record.get("question")
        outcome: dict[str, Any] = {"id": item_id, "kept": 0, "stage": None, "reason": None, "detail": "",
                                   "failures": {}, "attempts": []}
        if not isinstance(problem, str) or not problem.strip():
            outcome.update(stage="parse", reason="bad_record", detail="needs a string 'question'")
            return [], outcome
        rows: list[dict[str, Any]] = []
        failures: Counter[str] = Counter()
        for attempt in range(1, self.budget + 1):
            if len(rows) >= variants:
                break
            try:
                got = self._candidate(problem, attempt)
            except _Failed as f:
                failures[f"{f.stage}/{f.reason}"] += 1
                outcome["attempts"].append({"attempt": attempt, "stage": f.stage, "reason": f.reason, "detail": f.detail})
                if f.reason in ("kernel_unavailable", "endpoint_unavailable"):
                    break  # regenerating cannot help
                continue
            rows.append(_row(record, item_id, len(rows), got, attempt))
        outcome["kept"] = len(rows)
        outcome["failures"] = dict(failures)
        if not rows:
            last = outcome["attempts"][-1] if outcome["attempts"] else {"stage": "rewrite", "reason": "no_attempt", "detail": ""}
            outcome.update(stage=last["stage"], reason=last["reason"], detail=last["detail"])
        return rows, outcome


def _row(record: Mapping[str, Any], item_id: str, k: int, got: dict[str, Any], attempt: int) -> dict[str, Any]:
    checks = [{"check": name, "passed": True, "detail": detail} for name, detail in (
        ("screen", "feasibility screen: valid"), ("formalize", "formal statement compiled"),
        ("align", f"all {ALIGN_JUDGES} semantic judgments passed (S_faith {got['gate']['s_faith']:.2f})"),
        ("prove", f"proof checked by the kernel ({got['proof_method']})"),
        ("extract", "answer is a literal span of the checked proof"), ("classify", "answer classified final"))]
    return {
        "id": f"{item_id}/v{k}", "original_id": item_id, "variant": k, "mode": "llm", "attempt": attempt,
        "question": got["question"], "solution": got["solution"], "answer": got["answer"],
        "original": {"question": record.get("question"), "solution": record.get("answer")},
        "strategies": got["strategies"],
        "verification": {"checks": checks, "statement": got["statement"], "proof": got["solution"],
                         "proof_checked": True, "answer_class": "final",
                         "well_defined": True, "feasible": True, "answer_correct": True},
    }


def build_llm_work(settings: Settings, *, seed: int, variants: int, budget: int) -> tuple[Any, dict[str, Any]]:
    """The per-item function and run config of ``--mode llm`` from ``settings``."""
    from faithsieve.pipeline import build_kernel, build_llm

    if not settings.llm_base_url:
        raise ValueError("--mode llm needs an endpoint (--base-url or FAITHSIEVE_LLM_BASE_URL)")
    settings = settings.model_copy(update={"gate_judges": max(ALIGN_JUDGES, settings.gate_judges), "mode": "llm"})
    llm = build_llm(settings)
    kernel = build_kernel(settings, llm)
    ok, why = kernel.available()
    ctx = RunContext(proof=Proof(problem="", steps=(Step(index=1, text="rewrite"),)), settings=settings, llm=llm,
                     kernel=kernel)
    pipeline = ReproPipeline(ctx, kernel, budget=budget)
    notes = [] if ok else [f"formal stages cannot run ({why}): formalize, align and prove were skipped, so no "
                           "rewrite is kept as verified"]
    config = {"mode": "llm", "seed": seed, "variants": variants, "budget": budget, "model": settings.llm_model,
              "kernel": kernel.name, "verified": ok, "notes": notes,
              "established_by": ("feasibility screen, compiled formal statement, all-pass semantic alignment, "
                                 "kernel-checked proof, literal answer span classified final") if ok else
                                "nothing: no Lean backend, no rewrite can be verified"}

    def work(rid: str, rec: dict[str, Any]) -> Any:
        return pipeline.run_item(rec, rid, variants)

    return work, config
