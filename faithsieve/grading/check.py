"""What a worker process runs: the step check (the process term: split and localize one solution), the
answer comparisons too costly for the caller's thread, and, with ``answer_backend="math-verify"``,
Math-Verify's comparison. Each also runs inline, and each answers a typed value that crosses the process
boundary pickled (``CheckSummary``, ``Comparison``; the pool's own failures are the same types)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal


@dataclass(frozen=True)
class JobStatus:
    """How a grader job ended, as every job answers it (from a worker process, pickled, or inline).

    ``status``: ``ok``, or what stopped the job: ``empty``, ``too_long``, ``too_many_steps``, ``error``
    (the job's own), ``unavailable`` (Math-Verify is not installed), or the pool's ``timeout``,
    ``worker_crashed``, ``worker_unavailable``, ``pool_starting``."""

    status: str
    error: str | None = None
    """What went wrong, one line (not with ``ok``)."""
    restart: bool = False
    """The job ran out of memory: its worker is replaced after it."""


@dataclass(frozen=True)
class CheckSummary(JobStatus):
    """The step check of one solution (the process term): a compact summary of its verdict."""

    verdict: Literal["correct", "error", "unknown"] | None = None
    first_error_step: int | None = None
    reason: str | None = None
    statuses: tuple[str, ...] = ()
    """Each step's status, in order."""
    suspect: tuple[int, ...] = ()
    """The steps the verdict names as suspect, ascending."""
    spans: tuple[tuple[int, int], ...] = ()
    """Each step's ``[start, end)`` in the solution text."""
    steps: int = 0
    steps_decided: int = 0
    obligations: int = 0
    obligations_decided: int = 0
    budget_hit: bool = False
    """The check did not finish within its budget, whatever its evidence says."""
    ms: float = 0.0
    """The pipeline's own time."""


@dataclass(frozen=True)
class Comparison(JobStatus):
    """An answer comparison (ours, or Math-Verify's): whether the answer equals a reference."""

    equal: bool = False


@lru_cache(maxsize=256)
def _settings(key: tuple[tuple[str, Any], ...]):  # type: ignore[no-untyped-def]
    from faithsieve.core.settings import Settings

    # The grader is the offline sieve whatever FAITHSIEVE_MODE says: it must stay fast and deterministic.
    return Settings(**{**dict(key), "mode": "offline"})


def _run_check(problem: str, text: str, settings_key: tuple[tuple[str, Any], ...]) -> CheckSummary:
    """Split and localize; a compact summary. Never raises."""
    from faithsieve.core.errors import InputError, InputTooLarge
    from faithsieve.pipeline import checkers_for, localize
    from faithsieve.split import proof_from_text

    try:
        settings = _settings(settings_key)
        try:
            proof = proof_from_text(problem, text, settings)
        except InputTooLarge as exc:
            field_ = (exc.detail or {}).get("field", "") if isinstance(exc.detail, dict) else ""
            return CheckSummary("too_many_steps" if field_ == "steps" else "too_long", error=exc.message)
        except InputError as exc:
            return CheckSummary("error", error=exc.message)
        if not proof.steps:
            return CheckSummary("empty")
        v = localize(proof, settings, checkers_for(settings))
        # a check that ran past the pipeline's own time limit (one solver call that would not stop in time)
        # did not finish within its budget, whatever its evidence says
        budget_hit = (any(e.method == "budget" for st in v.steps for e in st.evidence)
                      or v.timings.total_ms > settings.proof_time_limit_s * 1000)
        c = v.coverage
        return CheckSummary(
            "ok", verdict=v.verdict, first_error_step=v.first_error_step, reason=v.reason,
            statuses=tuple(s.status for s in v.steps), suspect=tuple(sorted({e.step for e in v.suspect})),
            spans=tuple((s.offset, s.offset + len(s.text)) for s in proof.steps),
            steps=c.steps, steps_decided=c.steps_decided, obligations=c.obligations,
            obligations_decided=c.obligations_decided, budget_hit=budget_hit, ms=v.timings.total_ms,
        )
    except MemoryError:
        return CheckSummary("error", error="MemoryError", restart=True)
    except RecursionError:
        return CheckSummary("error", error="RecursionError")
    except Exception as exc:  # noqa: BLE001 - a reward function must not crash the trainer
        return CheckSummary("error", error=f"{type(exc).__name__}: {str(exc)[:200]}")


def run_math_verify(text: str, refs: list[str]) -> Comparison:
    """``verify(parse(ref), parse(text))`` for each reference (the optional ``math-verify`` extra), with
    Math-Verify's own signal timeouts off: the caller's budget bounds it. Never raises."""
    try:
        from math_verify import parse, verify
    except ImportError:
        return Comparison("unavailable", error="math-verify is not installed (pip install 'faithsieve[math-verify]')")
    try:
        pred = parse(text, parsing_timeout=None)
        equal = any(verify(parse(r, parsing_timeout=None), pred, timeout_seconds=None) for r in refs)
        return Comparison("ok", equal=bool(equal))
    except Exception as exc:  # noqa: BLE001 - reported, never raised
        return Comparison("error", error=f"{type(exc).__name__}: {str(exc)[:200]}")


def run_answer_check(answer: str, refs: list[str], percent: str, decimal_rounding: bool) -> Comparison:
    """Our comparison of ``answer`` with each reference, the steps a worker runs (sympy, sample points).
    Never raises."""
    from faithsieve.grading.equivalence import answers_equal
    from faithsieve.grading.stated_answer import AnswerPolicy

    try:
        policy = AnswerPolicy(percent=percent, decimal_rounding=decimal_rounding)  # type: ignore[arg-type]
        return Comparison("ok", equal=any(answers_equal(answer, r, policy) for r in refs))
    except MemoryError:
        return Comparison("error", error="MemoryError", restart=True)
    except (Exception, RecursionError) as exc:  # noqa: BLE001 - reported, never raised
        return Comparison("error", error=f"{type(exc).__name__}: {str(exc)[:200]}")


def warm_worker() -> int:
    """A grader worker's start-up: import and warm the checker on a small proof; answers its pid."""
    import os

    from faithsieve.runtime.lazy import freeze_after_import
    from faithsieve.warmup import OFFLINE_MODULES

    _run_check("Compute.", "Step 1: 2 + 3 = 5.\nStep 2: so 5 * 2 = 10.", (("proof_time_limit_s", 1.0),))
    freeze_after_import(OFFLINE_MODULES)  # long-lived: full collections need not rescan what is imported and warm
    return os.getpid()
