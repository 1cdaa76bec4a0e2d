"""The core: ``grade`` one solution (outcome term, process term, flags) and ``grade_many``."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from faithsieve.grading.equivalence import answers_equal
from faithsieve.grading.extract import AnswerPolicy, extract_answer
from faithsieve.grading.check import _run_check
from faithsieve.grading.config import GraderConfig, _apply_overrides, default_config
from faithsieve.grading.inputs import _as_text, _prompt_problem, _references, _strip_special_tail
from faithsieve.grading.pool import _check_in_worker, executor
from faithsieve.grading.result import GradeResult

log = logging.getLogger("faithsieve.grader")


_CACHE: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()
_CACHE_LOCK = threading.Lock()


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


def _process(problem: str, text: str, cfg: GraderConfig, deadline: float) -> dict[str, Any]:
    remaining = deadline - time.monotonic()
    if remaining <= 0.005:
        return {"status": "timeout"}
    key = _settings_key(cfg, remaining)
    ckey = (problem, text, cfg.time_budget_s, cfg.obligation_time_limit_ms, cfg.max_chars, cfg.max_steps)
    if cfg.cache_size:
        with _CACHE_LOCK:
            hit = _CACHE.get(ckey)
            if hit is not None:
                _CACHE.move_to_end(ckey)
                return hit
    if cfg.isolation == "process" and os.name == "posix":
        out = _check_in_worker(problem, text, key, cfg, deadline)
    else:
        out = _run_check(problem, text, key)
        if time.monotonic() > deadline and out.get("status") == "ok":
            out = {**out, "budget_hit": True}
    if cfg.cache_size and out.get("status") in _CACHEABLE and not out.get("budget_hit"):
        with _CACHE_LOCK:
            _CACHE[ckey] = out
            while len(_CACHE) > cfg.cache_size:
                _CACHE.popitem(last=False)
    return out


_STATUS_FLAG = {
    "too_long": "too_long", "too_many_steps": "too_many_steps", "empty": "empty", "error": "process_error",
    "timeout": "budget_exceeded", "worker_unavailable": "worker_unavailable", "worker_crashed": "worker_crashed",
}


def grade(solution: Any, reference: Any = None, problem: Any = "", config: GraderConfig | None = None,
          **overrides: Any) -> GradeResult:
    """Grade one solution. ``reference``: the expected answer (a string such as ``"18"`` or
    ``"\\frac{1}{2}"``, a full solution ending in ``#### 18`` or ``\\boxed{...}``, a number, or a
    list of acceptable answers); None grades the process only. ``problem``: the problem text (its
    numbers are facts for the checker); a chat prompt's last user message is used. Keyword
    ``overrides`` replace ``GraderConfig`` fields for this call."""
    t0 = time.perf_counter()
    cfg = _apply_overrides(config, overrides) if overrides else (config or default_config())
    deadline = time.monotonic() + cfg.time_budget_s
    text = _strip_special_tail(_as_text(solution))
    prob = _prompt_problem(problem)[: cfg.max_problem_chars]
    policy = AnswerPolicy(percent=cfg.percent, decimal_rounding=cfg.decimal_rounding, last_number=cfg.last_number)
    flags: list[str] = []

    refs = _references(reference)
    ex = extract_answer(text, policy)
    if not refs:
        outcome: bool | None = None
        flags.append("no_reference")
        outcome_term = 0.0
    elif ex is None:
        outcome = False
        outcome_term = cfg.no_answer_reward
    else:
        outcome = any(answers_equal(ex.text, r, policy) for r in refs)
        outcome_term = cfg.correct_reward if outcome else cfg.incorrect_reward
    if ex is None:
        flags.append("no_answer")

    proc: dict[str, Any] | None = None
    if not cfg.process:
        flags.append("process_disabled")
    elif not text.strip():
        flags.append("empty")
    elif len(text) > cfg.max_chars:
        flags.append("too_long")
    else:
        proc = _process(prob, text, cfg, deadline)

    checked = proc is not None and proc.get("status") == "ok" and not proc.get("budget_hit")
    budget_exceeded = proc is not None and (proc.get("status") == "timeout" or bool(proc.get("budget_hit")))
    if proc is not None and not checked:
        flag = "budget_exceeded" if budget_exceeded else _STATUS_FLAG.get(str(proc.get("status")), "process_error")
        flags.append(flag)
        if flag in ("process_error", "worker_crashed"):
            log.debug("faithsieve.grader: %s: %s", flag, proc.get("error"))

    score = outcome_term
    first = None
    step_rewards = None
    if checked:
        assert proc is not None
        first = proc.get("first_error_step")
        if first is not None:
            score -= cfg.error_penalty
        if cfg.step_rewards:
            n = int(proc.get("steps", 0))
            if first is None:
                step_rewards = (cfg.step_reward_before,) * n
            else:
                step_rewards = ((cfg.step_reward_before,) * (first - 1) + (cfg.step_reward_error,)
                                + (cfg.step_reward_after,) * (n - first))
    shown: dict[str, Any] = proc if (checked and proc is not None) else {}
    return GradeResult(
        score=float(score),
        outcome=outcome,
        outcome_term=float(outcome_term),
        answer=ex.text if ex is not None else None,
        answer_source=ex.source if ex is not None else None,
        reference=refs[0] if refs else None,
        process_checked=checked,
        verdict=shown.get("verdict"),
        first_error_step=first,
        reason=shown.get("reason"),
        steps=int(shown.get("steps", 0)),
        steps_decided=int(shown.get("steps_decided", 0)),
        obligations=int(shown.get("obligations", 0)),
        obligations_decided=int(shown.get("obligations_decided", 0)),
        step_status=tuple(shown.get("statuses", ())),
        step_spans=tuple((int(a), int(b)) for a, b in shown.get("spans", ())),
        step_rewards=step_rewards,
        budget_exceeded=budget_exceeded,
        flags=tuple(flags),
        time_ms=round((time.perf_counter() - t0) * 1000, 3),
    )


def grade_many(items: Sequence[tuple[Any, Any, Any]], config: GraderConfig | None = None) -> list[GradeResult]:
    """Grade ``(solution, reference, problem)`` triples, in order; spread over the worker pool
    when ``workers > 1``."""
    cfg = config or default_config()
    if len(items) <= 1 or cfg.workers <= 1 or cfg.isolation != "process" or not cfg.process:
        return [grade(s, r, p, cfg) for s, r, p in items]
    ex = executor(cfg.workers)
    return list(ex.map(lambda it: grade(it[0], it[1], it[2], cfg), items))
