"""What a grading call returns (``GradeResult``) and the numeric extras every entry point logs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

LOG_KEYS = (
    "acc", "answer_found", "has_reference", "process_checked", "error_found", "first_error_step", "steps",
    "steps_decided", "obligations", "obligations_decided", "budget_exceeded", "time_ms", "waited_ms", "decided",
)
"""Numeric extras every entry point logs, always all of them (verl and OpenRLHF need equal keys). ``decided``
is 1.0 when every check the reward depends on ran (``GradeResult.status == "ok"``)."""

UNDECIDED = frozenset({
    "bad_input", "answer_budget_exceeded", "answer_backend_unavailable", "budget_exceeded", "too_long",
    "too_many_steps", "process_error", "worker_unavailable", "worker_crashed", "pool_starting", "grader_error",
})
"""Flags naming a check the reward depends on that did not run to its end (``GradeResult.status``)."""


@dataclass(frozen=True)
class GradeResult:
    """Reward and what it was made of."""

    score: float
    """The reward."""
    outcome: bool | None
    """Final answer equals the reference; None when no reference was given."""
    outcome_term: float
    """The outcome part of the score."""
    answer: str | None
    """The final answer as extracted from the solution."""
    answer_source: str | None
    """Where it came from: boxed, answer_is, hash, last_number."""
    reference: str | None
    """The reference answer compared against (the first, when several were given)."""
    process_checked: bool
    """The step check ran to completion within budget; the process term applies."""
    verdict: Literal["correct", "error"] | None
    """The pipeline's verdict (None when not checked)."""
    first_error_step: int | None
    """1-based first refuted step, or None."""
    reason: str | None = None
    """One-line account of the refutation."""
    steps: int = 0
    steps_decided: int = 0
    obligations: int = 0
    obligations_decided: int = 0
    step_status: tuple[str, ...] = ()
    """Per step: refuted / verified / unknown / unchecked."""
    suspect_steps: tuple[int, ...] = ()
    """Steps holding a refutation of a flag kind not yet measured clean on the reference bench (``suspect``):
    shown here, never penalised (no error penalty, no step reward withheld)."""
    step_spans: tuple[tuple[int, int], ...] = ()
    """Per step: (start, end) character offsets in the solution text (map them to tokens for a PRM)."""
    step_rewards: tuple[float, ...] | None = None
    """Per-step rewards when ``GraderConfig.step_rewards`` is on and the check completed."""
    budget_exceeded: bool = False
    """The time budget cut the check short; the score is outcome-only."""
    flags: tuple[str, ...] = ()
    """Why the process term is missing or anything else unusual: no_answer, no_reference, empty,
    too_long, too_many_steps, budget_exceeded, process_error, worker_unavailable, worker_crashed,
    process_disabled."""
    time_ms: float = 0.0
    """Wall-clock time of the call."""
    waited_ms: float = 0.0
    """Time the call waited for the worker pool to start or for a free worker: never charged to its budget."""

    @property
    def status(self) -> str:
        """What decided the reward: ``ok`` when every check it depends on ran (the answer comparison, and
        the step check unless the config turned it off or the solution is empty), else the flag of the
        first check that did not (``budget_exceeded``, ``worker_unavailable``, ``bad_input``, ...)."""
        return next((f for f in self.flags if f in UNDECIDED), "ok")

    def log_values(self) -> dict[str, float]:
        """The numeric extras (``LOG_KEYS``): first_error_step is -1 when none."""
        return {
            "acc": 1.0 if self.outcome else 0.0,
            "answer_found": 1.0 if self.answer is not None else 0.0,
            "has_reference": 1.0 if self.outcome is not None else 0.0,
            "process_checked": 1.0 if self.process_checked else 0.0,
            "error_found": 1.0 if self.first_error_step is not None else 0.0,
            "first_error_step": float(self.first_error_step if self.first_error_step is not None else -1),
            "steps": float(self.steps),
            "steps_decided": float(self.steps_decided),
            "obligations": float(self.obligations),
            "obligations_decided": float(self.obligations_decided),
            "budget_exceeded": 1.0 if self.budget_exceeded else 0.0,
            "time_ms": round(self.time_ms, 3),
            "waited_ms": round(self.waited_ms, 3),
            "decided": 1.0 if self.status == "ok" else 0.0,
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict of every field."""
        return {
            "score": self.score, "outcome": self.outcome, "outcome_term": self.outcome_term, "answer": self.answer,
            "answer_source": self.answer_source, "reference": self.reference, "process_checked": self.process_checked,
            "verdict": self.verdict, "first_error_step": self.first_error_step, "reason": self.reason,
            "steps": self.steps, "steps_decided": self.steps_decided, "obligations": self.obligations,
            "obligations_decided": self.obligations_decided, "step_status": list(self.step_status),
            "suspect_steps": list(self.suspect_steps), "step_spans": [list(s) for s in self.step_spans],
            "step_rewards": list(self.step_rewards) if self.step_rewards is not None else None,
            "budget_exceeded": self.budget_exceeded, "flags": list(self.flags), "time_ms": self.time_ms,
            "waited_ms": self.waited_ms, "status": self.status,
        }
