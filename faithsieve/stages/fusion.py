"""Evidence fusion: local results back to the original steps, then one answer.

Rules (pure, ``reliable_basis`` / ``first_reliable`` / ``uncertain_prefix``):

- A step is wrong only on faithful, reliable negative evidence:
  ``checked``: our checkers refuted a literal formula and produced the counterexample;
  ``formal``: the kernel refuted a statement that passed the faithfulness gate (S_faith at
  least ``gate_threshold``, no drift; with the ``no_gate`` ablation any formal refutation);
  ``reviewed``: the unit's local review says incorrect *and* a checked/formal refutation on
  the same unit, with no drift reported, agrees, although it is not reliable on its own
  (no counterexample, or a faithfulness score short of the threshold).
  Drift, formalization failures, timeouts, unknowns and unread answers are never negative.
- The earliest step with reliable negative evidence is the candidate. Before answering, the
  steps before it that look uncertain (a review said incorrect/uncertain, or a check ended
  unknown) are re-examined in one ``reexamine`` call, which may only move the answer to one of
  those steps; that answer is recorded as judged (or reviewed, when the step's own local
  review also said incorrect).
- With no reliable negative evidence, one ``synthesis`` call over the reviews and the evidence
  answers ``correct`` or a step: basis ``judged``. An unreadable synthesis answers ``correct``
  with basis None and a note; it never invents an error.

Ablation ``nl_only``: checked and formal evidence are ignored; reviews and synthesis only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from faithsieve.core.settings import Settings
from faithsieve.llm.structured import Unparsed
from faithsieve.obligations.models import Evidence, ObligationKind
from faithsieve.stages.base import FusionResult, Review, RunContext, ScanResult
from faithsieve.stages.judge import (
    JudgeAnswer,
    answer_model,
    judgment_evidence,
    numbered_steps,
    parse_judgment,
)
from faithsieve.statetree.models import StateTree

Basis = Literal["checked", "formal", "reviewed"]
_RANK: dict[str, int] = {"checked": 0, "formal": 1, "reviewed": 2}
MAX_SUMMARY_LINES = 60


# ---------------------------------------------------------------------------------------
# Pure rules


def reliable_basis(ev: Evidence, incorrect_units: frozenset[str] | set[str], settings: Settings) -> Basis | None:
    """What makes ``ev`` reliable negative evidence, or None if it is not."""
    if ev.status != "refuted" or ev.basis not in ("checked", "formal"):
        return None
    if ev.basis == "checked" and ev.counterexample:
        return "checked"
    if ev.basis == "formal" and not ev.drift:
        if ev.faithfulness is None:
            if "no_gate" in settings.ablations:
                return "formal"
        elif ev.faithfulness + 1e-9 >= settings.gate_threshold:
            return "formal"
    if not ev.drift and ev.edge is not None and ev.edge in incorrect_units:
        return "reviewed"
    return None


def first_reliable(evidence: Iterable[Evidence], reviews: Iterable[Review],
                   settings: Settings) -> tuple[int, Basis, Evidence] | None:
    """The earliest step with reliable negative evidence (the strongest basis at that step)."""
    incorrect = {r.edge for r in reviews if r.verdict == "incorrect"}
    best: tuple[int, Basis, Evidence] | None = None
    for ev in evidence:
        basis = reliable_basis(ev, incorrect, settings)
        if basis is None:
            continue
        if best is None or (ev.step, _RANK[basis]) < (best[0], _RANK[best[1]]):
            best = (ev.step, basis, ev)
    return best


def unit_steps(tree: StateTree) -> dict[str, int]:
    return {e.id: e.step for e in tree.edges}


def uncertain_prefix(step: int, reviews: Iterable[Review], evidence: Iterable[Evidence],
                     steps_of: Mapping[str, int]) -> list[int]:
    """Steps before ``step`` whose units a review called incorrect/uncertain or whose checks ended unknown."""
    out = {steps_of[r.edge] for r in reviews if r.verdict in ("incorrect", "uncertain") and r.edge in steps_of}
    out |= {ev.step for ev in evidence if ev.status == "unknown"}
    return sorted(s for s in out if 1 <= s < step)


# ---------------------------------------------------------------------------------------
# Model answers


class Reexamination(BaseModel):
    """The ``reexamine`` answer."""

    earlier_step: int | None = Field(default=None)
    """One of the listed earlier steps that already holds a material error, or null."""
    reason: str = Field(default="", max_length=4000)

    @field_validator("earlier_step", mode="before")
    @classmethod
    def _step(cls, v: object) -> object:
        if isinstance(v, bool):
            raise ValueError("earlier_step must be a step number or null")
        if isinstance(v, str):
            low = v.strip().lower()
            if low in ("", "null", "none", "no"):
                return None
            return low.removeprefix("step").strip()
        return v


class SynthesisAnswer(JudgeAnswer):
    """The ``synthesis`` answer: ``{"answer": "correct" | "step N", "reason": ...}``."""

    reason: str = Field(default="", max_length=4000)


# ---------------------------------------------------------------------------------------
# The stage


class EvidenceFusion:
    """Earliest reliable negative evidence (after re-examining the uncertain prefix), else synthesis."""

    name = "llm"

    def fuse(self, ctx: RunContext, tree: StateTree, scan: ScanResult, evidence: list[Evidence]) -> FusionResult:
        steps_of = unit_steps(tree)
        nl_only = ctx.ablated("nl_only")
        usable = [e for e in evidence if not (nl_only and e.basis in ("checked", "formal"))]
        found = None if nl_only else first_reliable(usable, scan.reviews, ctx.settings)
        if found is None:
            return self._synthesis(ctx, scan, usable, steps_of, nl_only)
        step, basis, ev = found
        reason = _refutation_reason(step, basis, ev)
        prefix = uncertain_prefix(step, scan.reviews, usable, steps_of)
        if not prefix:
            return FusionResult(first_error_step=step, basis=basis, reason=reason)
        return self._reexamine(ctx, scan, usable, steps_of, step, basis, reason, prefix)

    def _reexamine(self, ctx: RunContext, scan: ScanResult, evidence: list[Evidence], steps_of: Mapping[str, int],
                   step: int, basis: Basis, reason: str, prefix: list[int]) -> FusionResult:
        kept = FusionResult(first_error_step=step, basis=basis, reason=reason)
        values = {"problem": ctx.proof.problem[:8000], "steps": numbered_steps(ctx.proof),
                  "candidate": f"step {step}: {reason}",
                  "prefix": _prefix_text(prefix, scan.reviews, evidence, steps_of)}
        answer = ctx.ask("reexamine", values, Reexamination)
        if isinstance(answer, Unparsed):
            ctx.note(f"fusion: re-examination unparsed ({answer.reason}); step {step} kept")
            return kept
        earlier = answer.value.earlier_step
        if earlier is None:
            return kept
        if earlier not in prefix:
            ctx.note(f"fusion: re-examination named step {earlier}, not one of {prefix}; step {step} kept")
            return kept
        own_review = any(r.verdict == "incorrect" and steps_of.get(r.edge) == earlier for r in scan.reviews)
        moved: Literal["reviewed", "judged"] = "reviewed" if own_review else "judged"
        why = answer.value.reason.strip() or "no reason given"
        ev = judgment_evidence(ctx.proof, earlier, "reexamine", why)
        if own_review:
            ev = ev.model_copy(update={"kind": ObligationKind.REVIEW, "basis": "reviewed"})
        return FusionResult(first_error_step=earlier, basis=moved,
                            reason=f"step {earlier} (re-examined before step {step}, which has {basis} evidence): {why}"[:500],
                            evidence=(ev,))

    def _synthesis(self, ctx: RunContext, scan: ScanResult, evidence: list[Evidence], steps_of: Mapping[str, int],
                   nl_only: bool) -> FusionResult:
        values = {"problem": ctx.proof.problem[:8000], "steps": numbered_steps(ctx.proof),
                  "reviews": _reviews_text(scan.reviews, steps_of),
                  "evidence": ("(formal and arithmetic checking disabled)" if nl_only
                               else _evidence_text(evidence))}
        answer = ctx.ask("synthesis", values, answer_model(len(ctx.proof.steps), SynthesisAnswer))
        n = len(ctx.proof.steps)
        value = None if isinstance(answer, Unparsed) else answer.value
        assert value is None or isinstance(value, SynthesisAnswer)
        label = None if value is None else parse_judgment(value.answer, n)
        if value is None or label is None:
            why = answer.reason if isinstance(answer, Unparsed) else f"answer {value.answer!r} is not correct or step 1..{n}"  # type: ignore[union-attr]
            ctx.note(f"fusion: final synthesis unparsed ({why}); verdict unknown")
            ev = judgment_evidence(ctx.proof, None, "synthesis", f"final synthesis unparsed: {why}", raw=answer.raw)
            return FusionResult(first_error_step=None, basis=None, undecided=True,
                                reason="no reliable negative evidence and the final synthesis could not be read: "
                                       "verdict unknown", evidence=(ev,))
        why = value.reason.strip() or "no reason given"
        ev = judgment_evidence(ctx.proof, label, "synthesis", why)
        if label == 0:
            return FusionResult(first_error_step=None, basis="judged",
                                reason=f"no reliable negative evidence; judged correct: {why}"[:500], evidence=(ev,))
        return FusionResult(first_error_step=label, basis="judged",
                            reason=f"no reliable negative evidence; judged step {label}: {why}"[:500], evidence=(ev,))


def _refutation_reason(step: int, basis: Basis, ev: Evidence) -> str:
    cx = ", ".join(f"{k} = {v}" for k, v in (ev.counterexample or {}).items())
    how = {"checked": f"refuted by {ev.method}" + (f" ({cx})" if cx else ""),
           "formal": f"negation proved by {ev.method} for a statement with S_faith "
                     f"{ev.faithfulness if ev.faithfulness is not None else 'not assessed'}",
           "reviewed": f"the local review says incorrect and {ev.method} refuted it"}[basis]
    return f"step {step}: {ev.kind.value} claim '{ev.claim[:200]}' {how}"[:500]


def _reviews_text(reviews: Iterable[Review], steps_of: Mapping[str, int]) -> str:
    lines = [f"- step {steps_of.get(r.edge, '?')}, unit {r.edge}: {r.verdict} (suspicion {r.suspicion:.2f}"
             f"{', ' + r.error_type[:80] if r.error_type else ''}): {r.reason[:400]}" for r in reviews]
    return "\n".join(lines[:MAX_SUMMARY_LINES]) or "(no local reviews)"


def _evidence_text(evidence: Iterable[Evidence]) -> str:
    lines = []
    for ev in sorted(evidence, key=lambda e: e.step):
        extra = []
        if ev.faithfulness is not None:
            extra.append(f"S_faith {ev.faithfulness:.2f}")
        if ev.drift:
            extra.append("drift: " + ", ".join(ev.drift))
        tail = f" [{'; '.join(extra)}]" if extra else ""
        lines.append(f"- step {ev.step} {ev.kind.value} {ev.status} ({ev.basis}, {ev.method}){tail}: "
                     f"{ev.claim[:240]}" + (f" -- {ev.reason[:200]}" if ev.reason else ""))
    if len(lines) > MAX_SUMMARY_LINES:
        lines = [*lines[:MAX_SUMMARY_LINES], f"- ... {len(lines) - MAX_SUMMARY_LINES} more records omitted"]
    return "\n".join(lines) or "(no checks were run)"


def _prefix_text(prefix: list[int], reviews: Iterable[Review], evidence: Iterable[Evidence],
                 steps_of: Mapping[str, int]) -> str:
    reviews, evidence = list(reviews), list(evidence)
    blocks = []
    for s in prefix:
        rv = [r for r in reviews if steps_of.get(r.edge) == s]
        ev = [e for e in evidence if e.step == s]
        blocks.append(f"Step {s}:\n" + _reviews_text(rv, steps_of) + "\n" + _evidence_text(ev))
    return "\n\n".join(blocks)


__all__ = ["EvidenceFusion", "Reexamination", "SynthesisAnswer", "first_reliable", "reliable_basis",
           "uncertain_prefix", "unit_steps"]
