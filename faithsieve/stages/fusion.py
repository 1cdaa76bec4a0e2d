"""Evidence fusion: local evidence back to the original steps, then one answer.

The rules (the paper's Algorithm 1 and Appendix E, written as the pure ``signals_from`` and
``decide``):

- Every piece of local evidence is a ``Signal`` on one step: it says the step is ``wrong``,
  ``fine`` or ``unsure``, with a reliability r in (0.5, 1), the chance that it is right:
  a formula the proof writes refuted by our checkers (``checked``, r = 0.99); a gated
  model-written statement refuted (``formalized`` / ``formal``, r = 0.9); a local review of one
  unit (r = 0.85, the same for each independent sample of it); the scan's prior (r = 0.6); a
  re-examination of the prefix (r = 0.65). Drift, formalization failures, time limits, unknown
  checks and unread answers say nothing (``unsure``): they are never negative evidence.
- Independent signals on one step add up in log-odds: ``L = Σ ± log(r / (1 - r))``. A step is
  **wrong** when ``L ≥ logit(decide_at)`` (0.9) and some local signal (not the scan alone) says
  so; **cleared** when ``L ≤ -logit(clear_at)`` (0.8). Agreement raises reliability (a review
  confirmed by a second sample reaches 0.97); disagreement cancels. So the earliest checked
  refutation does not win blindly: two reviews that find the refuted formula immaterial (a slip
  in a trial whose conclusion holds) bring it below the bar, and the step stays uncertain.
- The answer is the earliest wrong step, provided every earlier step with signals leaning
  wrong was re-examined first (one ``reexamine`` call adds its signal and the rule runs again).
  Its basis is the strongest kind among the wrong signals that decided it: ``checked`` >
  ``formalized`` > ``formal`` > ``reviewed``.
- No wrong step, and every step cleared: ``correct``, basis ``reviewed`` (no synthesis call). A step
  with a checked refutation is never cleared: reviews can only send it to the synthesis.
- Otherwise one ``synthesis`` call over the reviews and the evidence answers: basis ``judged``.
  An unreadable synthesis is ``unknown`` (undecided); it never invents an error.

Ablations: ``nl_only`` drops checked/formalized/formal signals (reviews and synthesis only);
``no_gate`` lets ungated statements count (their refutations become signals).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from faithsieve.core.settings import Settings
from faithsieve.llm.structured import Unparsed
from faithsieve.obligations.models import Evidence
from faithsieve.stages.base import FusionResult, Review, RunContext, ScanResult
from faithsieve.stages.judge import (
    JudgeAnswer,
    answer_model,
    judgment_evidence,
    numbered_steps,
    parse_judgment,
)
from faithsieve.statetree.models import StateTree
from faithsieve.verdict import ScanCandidate

Basis = Literal["checked", "formalized", "formal", "reviewed"]
Says = Literal["wrong", "fine", "unsure"]
Source = Literal["checked", "formalized", "formal", "review", "scan", "reexamine"]
MAX_SUMMARY_LINES = 60

RELIABILITY: dict[str, float] = {"checked": 0.99, "formalized": 0.9, "formal": 0.9, "review": 0.85,
                                 "scan": 0.6, "reexamine": 0.65}
"""Reliability of one signal of each source: the chance that it is right."""
VERIFIED_RELIABILITY = 0.6
"""A verified check speaks for its claim, not for the whole step: a weak ``fine``."""
DECIDE_AT = 0.9
"""Combined reliability at which a step is wrong."""
CLEAR_AT = 0.8
"""Combined reliability at which a step is cleared (fine)."""
SCAN_WRONG_AT = 0.6
"""Scan suspicion above which its prior says ``wrong`` (at or below 0.2 it says ``fine``)."""
_BASIS_OF: dict[str, Basis] = {"checked": "checked", "formalized": "formalized", "formal": "formal",
                               "review": "reviewed", "reexamine": "reviewed"}
_RANK: dict[str, int] = {"checked": 0, "formalized": 1, "formal": 2, "reviewed": 3}


# ---------------------------------------------------------------------------------------
# Pure rules


@dataclass(frozen=True)
class Signal:
    """One piece of local evidence about one step."""

    step: int
    says: Says
    source: Source
    reliability: float
    """Chance that the signal is right, in (0.5, 1)."""
    reason: str = ""
    unit: str | None = None


@dataclass(frozen=True)
class Decision:
    """What the evidence decides on its own."""

    step: int | None
    """Earliest wrong step (None: no step is wrong on this evidence)."""
    basis: Basis | None
    """What decided it; ``reviewed`` for a ``correct`` decided by reviews; None when undecided."""
    reason: str
    leaning: tuple[int, ...] = ()
    """Steps before ``step`` that lean wrong (L > 0) without reaching the bar: re-examine them first."""
    all_cleared: bool = False
    """No step is wrong and every step is cleared."""


def logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def step_scores(signals: Iterable[Signal]) -> dict[int, float]:
    """Log-odds that each step is wrong, summed over its independent signals (pure)."""
    out: dict[int, float] = {}
    for s in signals:
        if s.says == "unsure":
            continue
        w = logit(s.reliability)
        out[s.step] = out.get(s.step, 0.0) + (w if s.says == "wrong" else -w)
    return out


def decide(signals: Sequence[Signal], n_steps: int, *, decide_at: float = DECIDE_AT,
           clear_at: float = CLEAR_AT) -> Decision:
    """The earliest step whose signals reach ``decide_at`` with a local ``wrong`` signal among them
    (see the module docstring); pure."""
    scores = step_scores(signals)
    bar, clear = logit(decide_at), logit(clear_at)
    for step in sorted(scores):
        local_wrong = [s for s in signals if s.step == step and s.says == "wrong" and s.source != "scan"]
        if scores[step] + 1e-9 >= bar and local_wrong:
            best = min(local_wrong, key=lambda s: (_RANK[_BASIS_OF[s.source]], -s.reliability))
            basis = _BASIS_OF[best.source]
            leaning = tuple(k for k in sorted(scores) if k < step and scores[k] > 0)
            p = 1 / (1 + math.exp(-scores[step]))
            sources = ", ".join(sorted({s.source for s in local_wrong}))
            reason = f"step {step}: {best.reason or 'judged wrong'} [{sources}; combined reliability {p:.3f}]"
            return Decision(step=step, basis=basis, reason=reason[:500], leaning=leaning)
    # a formula the proof writes, refuted exactly, is never cleared by reviews alone: they may bring it
    # below the bar (an immaterial slip), and then the synthesis weighs it, but no model's "fine" erases it
    refuted = {s.step for s in signals if s.says == "wrong" and s.source == "checked"}
    cleared = not refuted and all(scores.get(k, 0.0) <= -clear + 1e-9 for k in range(1, n_steps + 1))
    if cleared and n_steps:
        return Decision(step=None, basis="reviewed", reason="every step cleared by local evidence", all_cleared=True)
    return Decision(step=None, basis=None, reason="no step reached the bar on local evidence",
                    leaning=tuple(k for k in sorted(scores) if scores[k] > 0))


MAX_CONFIRMATIONS = 8
"""Most extra review calls fusion makes for one proof."""
MAX_ROUNDS = 3
"""Most re-sampling rounds for one step (so at most four judgments of one unit)."""
MAX_CONFIRM_UNITS = 3
"""Most units of one step re-reviewed."""


def contested_step(signals: Sequence[Signal], rounds: Mapping[int, int] | None = None,
                   max_rounds: int = MAX_ROUNDS) -> int | None:
    """The earliest step (with fewer than ``max_rounds`` re-sampling rounds in ``rounds``) whose local
    evidence needs one more independent judgment (pure): a local signal says ``wrong`` and the step is
    neither decided nor cleared (``-logit(CLEAR_AT) < L < logit(DECIDE_AT)``), or it is decided while a
    review says ``fine`` (a verified check of one claim is no conflict). Steps after the first decided,
    uncontested one do not matter."""
    rounds = rounds or {}
    scores = step_scores(signals)
    bar, clear = logit(DECIDE_AT), logit(CLEAR_AT)
    for step in sorted(scores):
        local = [s for s in signals if s.step == step and s.source != "scan"]
        wrong = any(s.says == "wrong" for s in local)
        decided = wrong and scores[step] + 1e-9 >= bar
        conflict = decided and any(s.says == "fine" and s.source in ("review", "reexamine") for s in local)
        open_ = wrong and -clear + 1e-9 < scores[step] < bar - 1e-9
        if (open_ or conflict) and rounds.get(step, 0) < max_rounds:
            return step
        if decided and not conflict:
            return None
    return None


def evidence_signal(ev: Evidence, settings: Settings) -> Signal | None:
    """The signal one check gives, or None (unknown, drift, below the gate, a judgment)."""
    if ev.basis not in ("checked", "formalized", "formal") or ev.status == "unknown" or ev.drift:
        return None
    if ev.basis != "checked":
        gated = ev.faithfulness is not None and ev.faithfulness + 1e-9 >= settings.gate_threshold
        if not gated and "no_gate" not in settings.ablations:
            return None
    if ev.status == "verified":
        return Signal(ev.step, "fine", ev.basis, VERIFIED_RELIABILITY, f"{ev.claim[:160]} verified", ev.edge)
    if ev.basis == "checked" and not ev.counterexample:
        return None
    cx = ", ".join(f"{k} = {v}" for k, v in (ev.counterexample or {}).items())
    why = f"{ev.kind.value} claim '{ev.claim[:160]}' refuted by {ev.method}" + (f" ({cx})" if cx else "")
    return Signal(ev.step, "wrong", ev.basis, RELIABILITY[ev.basis], why, ev.edge)


def review_signal(review: Review, step: int) -> Signal:
    says: Says = {"incorrect": "wrong", "correct": "fine"}.get(review.verdict, "unsure")  # type: ignore[assignment]
    return Signal(step, says, "review", RELIABILITY["review"], f"local review of {review.edge}: {review.reason[:200]}",
                  review.edge)


def scan_signal(c: ScanCandidate, step: int) -> Signal:
    says: Says = "wrong" if c.likely_wrong or c.suspicion > SCAN_WRONG_AT else "fine" if c.suspicion <= 0.2 else "unsure"
    return Signal(step, says, "scan", RELIABILITY["scan"], f"scan prior {c.suspicion:.2f}", c.edge)


def signals_from(evidence: Iterable[Evidence], scan: ScanResult, steps_of: Mapping[str, int],
                 settings: Settings) -> list[Signal]:
    """Every signal of the checks, the reviews and the scan (pure). Under ``nl_only`` the checks give none.
    The scan's prior counts once per step (its most suspicious unit there)."""
    out: list[Signal] = []
    if "nl_only" not in settings.ablations:
        out += [s for s in (evidence_signal(e, settings) for e in evidence) if s is not None]
    out += [review_signal(r, steps_of[r.edge]) for r in scan.reviews if r.edge in steps_of]
    top: dict[int, ScanCandidate] = {}
    for c in scan.candidates:
        k = steps_of.get(c.edge)
        if k is not None and (k not in top or c.suspicion > top[k].suspicion):
            top[k] = c
    out += [scan_signal(c, k) for k, c in top.items()]
    return out


def unit_steps(tree: StateTree) -> dict[str, int]:
    return {e.id: e.step for e in tree.edges}


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
    """Local evidence decides (after re-examining steps that lean wrong before the answer); else synthesis."""

    name = "llm"

    def fuse(self, ctx: RunContext, tree: StateTree, scan: ScanResult, evidence: list[Evidence]) -> FusionResult:
        steps_of = unit_steps(tree)
        n = len(ctx.proof.steps)
        scan = self._confirm(ctx, tree, scan, evidence, steps_of)
        signals = signals_from(evidence, scan, steps_of, ctx.settings)
        decision = decide(signals, n)
        extra: tuple[Evidence, ...] = ()
        if decision.step is not None and decision.leaning:
            more, extra = self._reexamine(ctx, scan, evidence, steps_of, decision)
            if more:
                signals = [*signals, *more]
                decision = decide(signals, n)
        if decision.step is not None:
            return FusionResult(first_error_step=decision.step, basis=decision.basis, reason=decision.reason,
                                evidence=extra)
        if decision.all_cleared:
            return FusionResult(first_error_step=None, basis="reviewed", reason=decision.reason, evidence=extra)
        usable = [e for e in evidence if not (ctx.ablated("nl_only") and e.basis in ("checked", "formalized", "formal"))]
        return self._synthesis(ctx, scan, usable, steps_of, ctx.ablated("nl_only"))

    def _confirm(self, ctx: RunContext, tree: StateTree, scan: ScanResult, evidence: list[Evidence],
                 steps_of: Mapping[str, int]) -> ScanResult:
        """Independent re-samples of local reviews until the evidence settles: the earliest contested step
        (``contested_step``) gets one more review of each of its units (a first review where a unit has
        none), at most ``MAX_ROUNDS`` rounds per step and ``MAX_CONFIRMATIONS`` reviews per proof.
        Returns the scan with the new reviews."""
        if ctx.llm is None:
            return scan
        from faithsieve.stages.scan import LLMScanner

        reviewer, prior = LLMScanner(), {c.edge: c for c in scan.candidates}
        rounds: dict[int, int] = {}
        spent = 0
        while spent < MAX_CONFIRMATIONS:
            signals = signals_from(evidence, scan, steps_of, ctx.settings)
            step = contested_step(signals, rounds)
            if step is None:
                break
            rounds[step] = rounds.get(step, 0) + 1
            units = [e for e in tree.edges if e.step == step][:MAX_CONFIRM_UNITS]
            seen = {r.edge: r.sample for r in scan.reviews}
            new = []
            for e in units:
                if spent >= MAX_CONFIRMATIONS:
                    break
                sample = seen[e.id] + 1 if e.id in seen else 0
                new.append(reviewer.review(ctx, tree, e, prior.get(e.id), sample=sample))
                spent += 1
            scan = scan.model_copy(update={"reviews": (*scan.reviews, *new)})
        return scan

    def _reexamine(self, ctx: RunContext, scan: ScanResult, evidence: list[Evidence], steps_of: Mapping[str, int],
                   decision: Decision) -> tuple[list[Signal], tuple[Evidence, ...]]:
        """One ``reexamine`` call over the steps that lean wrong before the candidate: its answer is one
        more signal (``wrong`` on the step it names, ``fine`` on the others); unreadable: none."""
        prefix = list(decision.leaning)
        values = {"problem": ctx.proof.problem[:8000], "steps": numbered_steps(ctx.proof),
                  "candidate": decision.reason, "prefix": _prefix_text(prefix, scan.reviews, evidence, steps_of)}
        answer = ctx.ask("reexamine", values, Reexamination)
        if isinstance(answer, Unparsed):
            ctx.note(f"fusion: re-examination unparsed ({answer.reason}); no signal added")
            return [], ()
        earlier = answer.value.earlier_step
        why = answer.value.reason.strip() or "no reason given"
        if earlier is not None and earlier not in prefix:
            ctx.note(f"fusion: re-examination named step {earlier}, not one of {prefix}; ignored")
            return [], ()
        r = RELIABILITY["reexamine"]
        out = [Signal(k, "wrong" if k == earlier else "fine", "reexamine", r, f"re-examination: {why[:200]}")
               for k in prefix]
        record = judgment_evidence(ctx.proof, earlier, "reexamine", why) if earlier is not None else None
        return out, ((record,) if record is not None else ())

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


__all__ = ["CLEAR_AT", "MAX_CONFIRMATIONS", "contested_step", "DECIDE_AT", "RELIABILITY", "Decision", "EvidenceFusion", "Reexamination", "Signal",
           "SynthesisAnswer", "decide", "evidence_signal", "logit", "review_signal", "scan_signal", "signals_from",
           "step_scores", "unit_steps"]
