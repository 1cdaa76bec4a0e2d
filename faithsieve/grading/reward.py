"""The core: a ``Grader`` (its worker pool and its caches) grades one solution (outcome term, process
term, flags) or many. ``grade`` and ``grade_many`` use the process's default grader, created on first use;
``default_grader().close()`` (or ``replace_default_grader()``) stops it and drops its caches."""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Literal, TypeVar, cast

from faithsieve.grading.check import (
    CheckSummary,
    Comparison,
    JobStatus,
    _run_check,
    run_math_verify,
)
from faithsieve.grading.config import (
    Budget,
    GraderConfig,
    _apply_overrides,
    default_config,
    work_deadline,
)
from faithsieve.grading.equivalence import AnswerTimeout, NeedsIsolation, answers_equal
from faithsieve.grading.inputs import (
    BadInput,
    _as_text,
    _prompt_problem,
    _references,
    _strip_special_tail,
)
from faithsieve.grading.pool import GraderPool
from faithsieve.grading.result import GradeResult
from faithsieve.grading.stated_answer import (
    AnswerPolicy,
    ExtractedAnswer,
    extract_answer,
)

log = logging.getLogger("faithsieve.grader")

J = TypeVar("J", bound=JobStatus)
"""The answer of a grader job (``CheckSummary``, ``Comparison``)."""


def _settings_key(cfg: GraderConfig, remaining_s: float) -> tuple[tuple[str, Any], ...]:
    """Pipeline settings for one check (sorted items; hashable and JSON-safe). The pipeline's own
    cooperative limit is 80% of what is left of the budget; the hard limit is the budget itself."""
    inner = max(0.01, round(remaining_s * 0.8, 2))
    return (
        ("max_proof_chars", cfg.max_chars + cfg.max_problem_chars + 16),
        ("max_step_chars", cfg.max_chars + 16),
        ("max_steps", cfg.max_steps),
        ("obligation_time_limit_ms", max(1, min(cfg.obligation_time_limit_ms, int(inner * 1000)))),
        ("proof_time_limit_s", inner),
    )


_CACHEABLE = frozenset({"ok", "too_long", "too_many_steps", "empty", "error"})


_NOTHING_SHOWN = CheckSummary("")
"""What a result shows of a step check that did not finish: no verdict, no steps."""

_STATUS_FLAG = {
    "too_long": "too_long", "too_many_steps": "too_many_steps", "empty": "empty", "error": "process_error",
    "timeout": "budget_exceeded", "worker_unavailable": "worker_unavailable", "worker_crashed": "worker_crashed",
    "pool_starting": "pool_starting",
}


_ANSWER_FLAG = {"timeout": "answer_budget_exceeded", "worker_unavailable": "worker_unavailable",
                "worker_crashed": "worker_crashed", "pool_starting": "pool_starting"}


_MV_FLAG = {"timeout": "answer_budget_exceeded", "unavailable": "answer_backend_unavailable",
            "worker_unavailable": "worker_unavailable", "worker_crashed": "worker_crashed",
            "pool_starting": "pool_starting"}


UNCHECKED = frozenset({"budget_exceeded", "answer_budget_exceeded", "too_long", "too_many_steps", "process_error",
                       "worker_crashed", "grader_error", "worker_unavailable", "pool_starting"})
"""Flags of a call whose step check did not finish: for a reason the completion's text controls (it ran out
of time, it is too long, it has too many steps, it made the checker fail or its worker crash), or because no
worker could take it (``worker_unavailable``: none freed within ``acquire_timeout_s``; ``pool_starting``: the
pool did not start within ``startup_timeout_s``; both waits are credited, never charged, so this happens only
when the workers are truly gone). Such a call pays as one whose step is refuted (``error_penalty`` is
subtracted): no completion gains by defeating the check, and an unchecked completion never outscores a
checked one. ``process_disabled`` (a choice of the config) leaves the outcome term alone."""


def _unchecked(cfg: GraderConfig, flags: list[str]) -> bool:
    """Whether the score pays as a refuted step because the check did not finish (``UNCHECKED``)."""
    return cfg.process and not UNCHECKED.isdisjoint(flags)


def _outcome_only(cfg: GraderConfig, flags: list[str], t0: float, refs: list[str], outcome: bool | None = None,
                  outcome_term: float | None = None, ex: ExtractedAnswer | None = None,
                  budget: Budget | None = None) -> GradeResult:
    """The documented fallback: the outcome term alone (no answer: ``no_answer_reward``)."""
    if outcome_term is None:
        outcome_term = cfg.no_answer_reward if refs else 0.0
        outcome = False if refs else None
    return GradeResult(
        score=float(outcome_term) - (cfg.error_penalty if _unchecked(cfg, flags) else 0.0), outcome=outcome, outcome_term=float(outcome_term),
        answer=ex.text if ex is not None else None, answer_source=ex.source if ex is not None else None,
        reference=refs[0] if refs else None, process_checked=False, verdict=None, first_error_step=None,
        flags=tuple(dict.fromkeys(flags)), time_ms=round((time.perf_counter() - t0) * 1000, 3),
        waited_ms=round(budget.waited_s * 1000, 3) if budget is not None else 0.0,
    )


def _with_process(proc: CheckSummary | None, cfg: GraderConfig, flags: list[str], t0: float, refs: list[str],
                  outcome: bool | None, outcome_term: float, ex: ExtractedAnswer | None, budget: Budget) -> GradeResult:
    """The result with the step check's summary ``proc`` (None: not run)."""
    checked = proc is not None and proc.status == "ok" and not proc.budget_hit
    budget_exceeded = proc is not None and (proc.status == "timeout" or proc.budget_hit)
    if proc is not None and not checked:
        flag = "budget_exceeded" if budget_exceeded else _STATUS_FLAG.get(proc.status, "process_error")
        flags.append(flag)
        if flag in ("process_error", "worker_crashed"):
            log.debug("faithsieve.grader: %s: %s", flag, proc.error)

    score = outcome_term - (cfg.error_penalty if _unchecked(cfg, flags) else 0.0)
    first = None
    step_rewards = None
    if checked:
        assert proc is not None
        first = proc.first_error_step
        if first is not None:
            score -= cfg.error_penalty
        if cfg.step_rewards:
            n = proc.steps
            if first is None:
                step_rewards = (cfg.step_reward_before,) * n
            else:
                step_rewards = ((cfg.step_reward_before,) * (first - 1) + (cfg.step_reward_error,)
                                + (cfg.step_reward_after,) * (n - first))
    shown = proc if (checked and proc is not None) else _NOTHING_SHOWN
    return GradeResult(
        score=float(score),
        outcome=outcome,
        outcome_term=float(outcome_term),
        answer=ex.text if ex is not None else None,
        answer_source=ex.source if ex is not None else None,
        reference=refs[0] if refs else None,
        process_checked=checked,
        verdict=cast(Literal["correct", "error"] | None, shown.verdict),  # "unknown" passed on as it always was
        first_error_step=first,
        reason=shown.reason,
        steps=shown.steps,
        steps_decided=shown.steps_decided,
        obligations=shown.obligations,
        obligations_decided=shown.obligations_decided,
        step_status=shown.statuses,
        suspect_steps=shown.suspect,
        step_spans=shown.spans,
        step_rewards=step_rewards,
        budget_exceeded=budget_exceeded,
        flags=tuple(flags),
        time_ms=round((time.perf_counter() - t0) * 1000, 3),
        waited_ms=round(budget.waited_s * 1000, 3),
    )




def _inline(fn: Callable[..., J], budget: Budget, kind: type[J], *args: Any) -> J:
    """``fn(*args)`` (a job that answers a ``kind``) in a helper thread, awaited until the budget ends
    (``isolation="inline"``): past it the call answers ``kind("timeout")`` at once, and the job, which
    cannot be stopped inside this process, runs on in its daemon thread until it ends by itself."""
    box: list[J] = []

    def run() -> None:
        try:
            box.append(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - reported as the job's status
            box.append(kind("error", error=f"{type(exc).__name__}: {str(exc)[:200]}"))

    worker = threading.Thread(target=run, daemon=True, name="faithsieve-grader-inline")
    worker.start()
    worker.join(max(0.0, budget.left()))
    return box[0] if box else kind("timeout")


def _inline_equal(answer: str, refs: list[str], policy: AnswerPolicy, budget: Budget) -> bool:
    """``answers_equal`` against each reference, inline, bounded by the budget (``_inline``); raises
    ``AnswerTimeout`` when it did not end in time."""
    def job() -> Comparison:
        try:
            return Comparison("ok", equal=any(answers_equal(answer, r, policy, budget.deadline) for r in refs))
        except AnswerTimeout:
            return Comparison("timeout")

    res = _inline(job, budget, Comparison)
    if res.status != "ok":
        raise AnswerTimeout
    return res.equal


class _LRU:
    """A bounded, thread-safe map: look up ``key`` or store a value, keeping at most ``size`` entries."""

    def __init__(self) -> None:
        self._data: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self._lock:
            hit = self._data.get(key)
            if hit is not None:
                self._data.move_to_end(key)
            return hit

    def put(self, key: Any, value: Any, size: int) -> None:
        with self._lock:
            self._data[key] = value
            while len(self._data) > size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


class Grader:
    """One grader: its worker pool (``GraderPool``) and its caches of step checks and answer comparisons.
    Thread-safe; ``close`` stops the workers and empties the caches (a later call starts them again)."""

    def __init__(self) -> None:
        self.pool = GraderPool()
        self._checks = _LRU()
        self._answers = _LRU()
        self._math_verify = _LRU()

    # -- life cycle ----------------------------------------------------------------------------------

    def warmup(self, config: GraderConfig | None = None) -> bool:
        """Start the worker pool now and wait for every worker (it otherwise starts on the first call).
        True when all are up."""
        return self.pool.warmup(config)

    def close(self) -> None:
        """Stop the worker processes and drop the caches."""
        self.pool.close()
        for cache in (self._checks, self._answers, self._math_verify):
            cache.clear()

    # -- the process term ----------------------------------------------------------------------------

    def _process(self, problem: str, text: str, cfg: GraderConfig, budget: Budget) -> CheckSummary:
        remaining = budget.left()
        if remaining <= 0.005:
            return CheckSummary("timeout")
        key = _settings_key(cfg, remaining)
        ckey = (problem, text, cfg.time_budget_s, cfg.obligation_time_limit_ms, cfg.max_chars, cfg.max_steps)
        if cfg.cache_size:
            hit = self._checks.get(ckey)
            if hit is not None:
                return cast(CheckSummary, hit)
        if cfg.isolation == "process" and os.name == "posix":
            out = self.pool.check(problem, text, key, cfg, budget)
        else:
            out = _inline(_run_check, budget, CheckSummary, problem, text, key)
            if budget.left() < 0 and out.status == "ok":
                out = replace(out, budget_hit=True)
        if cfg.cache_size and out.status in _CACHEABLE and not out.budget_hit:
            self._checks.put(ckey, out, cfg.cache_size)
        return out

    # -- the outcome term ----------------------------------------------------------------------------

    def _outcome(self, answer: str, refs: list[str], policy: AnswerPolicy, cfg: GraderConfig,
                 budget: Budget) -> tuple[bool, str | None]:
        """Whether ``answer`` equals one of ``refs``, and a flag when that could not be decided in budget.

        With process isolation only what exact arithmetic decides at once runs in the caller's thread;
        a comparison that needs sympy or sample points runs in a worker, killed at the deadline (while the
        workers are still starting, such a comparison waits for them, outside its budget: sympy in the
        caller's thread cannot be stopped, and a reward is never given before its check ran)."""
        def compare() -> tuple[bool, str | None]:
            isolate = cfg.isolation == "process" and os.name == "posix"
            try:
                if not isolate:
                    return _inline_equal(answer, refs, policy, budget), None
                return any(answers_equal(answer, r, policy, budget.deadline, light=True) for r in refs), None
            except AnswerTimeout:
                return False, "answer_budget_exceeded"
            except NeedsIsolation:
                res = self.pool.answer(answer, refs, policy.percent, policy.decimal_rounding, cfg, budget)
                if res.status != "ok":
                    return False, _ANSWER_FLAG.get(res.status, "grader_error")
                return res.equal, None

        return _memoized(self._answers, (answer, tuple(refs), policy), cfg, compare)

    def _math_verify_outcome(self, text: str, refs: list[str], cfg: GraderConfig,
                             budget: Budget) -> tuple[bool, str | None]:
        """The outcome by Math-Verify (``answer_backend="math-verify"``) and a flag when it could not say."""
        def compare() -> tuple[bool, str | None]:
            if cfg.isolation == "process" and os.name == "posix":
                res = self.pool.math_verify(text, refs, cfg, budget)
            else:
                res = _inline(run_math_verify, budget, Comparison, text, refs)
            if res.status != "ok":
                return False, _MV_FLAG.get(res.status, "grader_error")
            return res.equal, None

        return _memoized(self._math_verify, (text, tuple(refs)), cfg, compare)

    def _outcome_term(self, text: str, ex: ExtractedAnswer | None, refs: list[str], policy: AnswerPolicy,
                      cfg: GraderConfig, budget: Budget, flags: list[str]) -> tuple[bool | None, float]:
        """The outcome and its term; a flag in ``flags`` when it could not be decided."""
        if not refs:
            flags.append("no_reference")
            return None, 0.0
        if cfg.answer_backend == "math-verify":
            outcome, flag = self._math_verify_outcome(text, refs, cfg, budget)
            if flag:
                flags.append(flag)
            return outcome, (cfg.correct_reward if outcome else
                             cfg.incorrect_reward if ex is not None else cfg.no_answer_reward)
        if ex is None:
            return False, cfg.no_answer_reward
        outcome, flag = self._outcome(ex.text, refs, policy, cfg, budget)
        if flag:
            flags.append(flag)
        return outcome, cfg.correct_reward if outcome else cfg.incorrect_reward

    # -- grading -------------------------------------------------------------------------------------

    def grade(self, solution: Any, reference: Any = None, problem: Any = "", config: GraderConfig | None = None,
              **overrides: Any) -> GradeResult:
        """Grade one solution (see the module-level ``grade``)."""
        t0 = time.perf_counter()
        cfg = _apply_overrides(config, overrides) if overrides else (config or default_config())
        budget = Budget(work_deadline(cfg))
        policy = AnswerPolicy(percent=cfg.percent, decimal_rounding=cfg.decimal_rounding, last_number=cfg.last_number)
        flags: list[str] = []
        outcome: bool | None = None
        outcome_term = 0.0
        ex = None
        refs: list[str] = []
        try:
            try:
                text = _strip_special_tail(_as_text(solution))
                prob = _prompt_problem(problem)[: cfg.max_problem_chars]
                refs = _references(reference)
            except BadInput as exc:
                flags.append("bad_input")
                log.debug("faithsieve.grader: bad input: %s", exc)
                return _outcome_only(cfg, flags, t0, refs, budget=budget)
            ex = extract_answer(text, policy)
            if budget.left() < 0:
                flags.append("answer_budget_exceeded")
                term = 0.0 if not refs else cfg.incorrect_reward if ex is not None else cfg.no_answer_reward
                return _outcome_only(cfg, flags, t0, refs, False if refs else None, term, ex, budget)
            outcome, outcome_term = self._outcome_term(text, ex, refs, policy, cfg, budget, flags)
            if ex is None:
                flags.append("no_answer")
            if {"answer_budget_exceeded", "worker_crashed", "worker_unavailable", "pool_starting", "grader_error"} & set(flags):
                return _outcome_only(cfg, flags, t0, refs, outcome, outcome_term, ex, budget)
            proc = self._process_term(text, prob, cfg, budget, flags)
            return _with_process(proc, cfg, flags, t0, refs, outcome, outcome_term, ex, budget)
        except (Exception, RecursionError, MemoryError) as exc:  # noqa: BLE001 (isolation boundary: never crash the trainer)
            log.debug("faithsieve.grader: grader_error: %s: %s", type(exc).__name__, exc)
            flags.append("grader_error")
            if outcome is None and refs:
                outcome, outcome_term = False, (cfg.incorrect_reward if ex is not None else cfg.no_answer_reward)
            return _outcome_only(cfg, flags, t0, refs, outcome, outcome_term, ex, budget)

    def _process_term(self, text: str, prob: str, cfg: GraderConfig, budget: Budget,
                      flags: list[str]) -> CheckSummary | None:
        """The step check's summary, or None (and a flag) when it is not run."""
        if not cfg.process:
            flags.append("process_disabled")
        elif not text.strip():
            flags.append("empty")
        elif len(text) > cfg.max_chars:
            flags.append("too_long")
        else:
            return self._process(prob, text, cfg, budget)
        return None

    def grade_many(self, items: Sequence[tuple[Any, Any, Any]], config: GraderConfig | None = None) -> list[GradeResult]:
        """Grade ``(solution, reference, problem)`` triples, in order; spread over the worker pool
        when ``workers > 1``."""
        cfg = config or default_config()

        def one(it: tuple[Any, Any, Any]) -> GradeResult:
            return self.grade(it[0], it[1], it[2], cfg)  # each item's budget starts when a worker takes its job

        if len(items) <= 1 or cfg.workers <= 1 or cfg.isolation != "process" or not cfg.process:
            return [one(it) for it in items]
        return list(self.pool.executor(cfg.workers).map(one, items))


def _memoized(cache: _LRU, key: Any, cfg: GraderConfig,
              compute: Callable[[], tuple[bool, str | None]]) -> tuple[bool, str | None]:
    """``compute()`` through ``cache``; only decided results (no flag) are kept."""
    if cfg.cache_size:
        hit = cache.get(key)
        if hit is not None:
            return bool(hit), None
    equal, flag = compute()
    if flag is None and cfg.cache_size:
        cache.put(key, equal, cfg.cache_size)
    return equal, flag


# ---------------------------------------------------------------------------
# The process's default grader
# ---------------------------------------------------------------------------

_DEFAULT_LOCK = threading.Lock()
_default: list[Grader] = []
"""The default grader once created (a one-element holder: the grader is the owned object)."""


def default_grader() -> Grader:
    """The grader ``grade``, ``grade_many`` and the framework adapters use, created on first use."""
    if _default:
        return _default[0]
    with _DEFAULT_LOCK:
        if not _default:
            _default.append(Grader())
        return _default[0]


def replace_default_grader(grader: Grader | None = None) -> Grader:
    """Close the default grader and put ``grader`` (a fresh one when None) in its place; returns it."""
    new = grader or Grader()
    with _DEFAULT_LOCK:
        old = _default[0] if _default else None
        _default[:] = [new]
    if old is not None and old is not new:
        old.close()
    return new


def _close_default() -> None:
    if _default:
        _default[0].close()


atexit.register(_close_default)


def grade(solution: Any, reference: Any = None, problem: Any = "", config: GraderConfig | None = None,
          **overrides: Any) -> GradeResult:
    """Grade one solution. ``reference``: the expected answer (a string such as ``"18"`` or
    ``"\\frac{1}{2}"``, a full solution ending in ``#### 18`` or ``\\boxed{...}``, a number, or a
    list of acceptable answers); None grades the process only. ``problem``: the problem text (its
    numbers are facts for the checker); a chat prompt's last user message is used. Keyword
    ``overrides`` replace ``GraderConfig`` fields for this call (an invalid value raises
    ``ValueError``; nothing in the inputs ever does: unreadable input is flagged ``bad_input``,
    an internal failure ``grader_error``, and the reward is then the outcome term alone)."""
    return default_grader().grade(solution, reference, problem, config, **overrides)


def grade_many(items: Sequence[tuple[Any, Any, Any]], config: GraderConfig | None = None) -> list[GradeResult]:
    """Grade ``(solution, reference, problem)`` triples, in order; spread over the worker pool
    when ``workers > 1``."""
    return default_grader().grade_many(items, config)


def warmup(config: GraderConfig | None = None) -> bool:
    """Start the default grader's worker pool now and wait for every worker. True when all are up."""
    return default_grader().warmup(config)


def shutdown() -> None:
    """Stop the default grader's worker processes (they also exit on their own when this process ends)."""
    if _default:
        _default[0].pool.close()
