"""The grader in the shapes RL frameworks call: verl, TRL, OpenRLHF."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from faithsieve.grading.config import GraderConfig, _apply_overrides, default_config
from faithsieve.grading.inputs import (
    BadInput,
    _as_text,
    _references,
    _strip_special_tail,
)
from faithsieve.grading.result import LOG_KEYS, GradeResult
from faithsieve.grading.reward import default_grader, grade, grade_many

log = logging.getLogger("faithsieve.grader")


def warmup_in_background(config: GraderConfig | None = None) -> None:
    """Start the default grader's worker processes in a background thread and return at once (a call
    made before they are up waits for them, outside its budget, and reports the wait as ``waited_ms``)."""
    cfg = config or default_config()
    if cfg.isolation == "process" and cfg.process:
        default_grader().pool.start_background(cfg)


# ---------------------------------------------------------------------------
# verl
# ---------------------------------------------------------------------------

def _verl_problem(extra_info: Any) -> Any:
    """The problem in verl's ``extra_info`` (read, and flagged when unreadable, by ``grade``)."""
    if isinstance(extra_info, Mapping):
        for k in ("question", "problem", "prompt", "query"):
            v = extra_info.get(k)
            if v is not None and not (isinstance(v, str) and not v):
                return v
    return ""


def _verl_dict(r: GradeResult) -> dict[str, Any]:
    """verl's dict: the score, the numeric ``LOG_KEYS`` and ``status`` (a string; verl's validation
    metrics skip strings)."""
    return {"score": r.score, **r.log_values(), "status": r.status}


def compute_score(data_source: Any = None, solution_str: Any = "", ground_truth: Any = None,
                  extra_info: Any = None, **kwargs: Any) -> dict[str, Any]:
    """verl custom reward function. Returns ``{"score": float}`` plus the numeric ``LOG_KEYS``
    (same keys for every sample, as verl's reward managers collect them into arrays) and ``status``,
    what decided the reward (``ok``: every check it depends on ran; ``GradeResult.status``).
    ``extra_info["question"]`` (or ``"problem"``) is used as the problem text when present.
    Keyword arguments naming ``GraderConfig`` fields (verl's ``custom_reward_function.reward_kwargs``)
    override the config; other keywords are ignored."""
    r = grade(solution_str, ground_truth, _verl_problem(extra_info), _apply_overrides(None, kwargs))
    return _verl_dict(r)


async def compute_score_async(data_source: Any = None, solution_str: Any = "", ground_truth: Any = None,
                              extra_info: Any = None, **kwargs: Any) -> dict[str, Any]:
    """``compute_score`` as verl's ``async def compute_score`` form (its async reward loop awaits it): the
    grading runs in a thread of the default executor, so the event loop keeps serving other samples."""
    import asyncio
    import functools

    call = functools.partial(compute_score, data_source, solution_str, ground_truth, extra_info, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(None, call)


def make_compute_score(config: GraderConfig | None = None, **overrides: Any) -> Callable[..., dict[str, Any]]:
    """A ``compute_score`` bound to a config. Starts the default grader's workers in the background
    (``warmup_in_background``), so that the first calls find them up."""
    cfg = _apply_overrides(config, overrides)
    warmup_in_background(cfg)

    def compute_score(data_source: Any = None, solution_str: Any = "", ground_truth: Any = None,
                      extra_info: Any = None, **kwargs: Any) -> dict[str, Any]:
        r = grade(solution_str, ground_truth, _verl_problem(extra_info), _apply_overrides(cfg, kwargs))
        return _verl_dict(r)

    return compute_score


# ---------------------------------------------------------------------------
# TRL
# ---------------------------------------------------------------------------

def make_trl_reward(reference_column: str = "answer", problem_column: str | None = None,
                    config: GraderConfig | None = None, log: bool = True,
                    name: str = "faithsieve", **overrides: Any) -> Callable[..., list[float | None]]:
    """A TRL reward function ``(prompts, completions, **kwargs) -> list[float | None]``.

    Completions may be strings or conversations (``[{"role": "assistant", "content": ...}]``).
    The reference answer comes from the dataset column ``reference_column`` (TRL passes every
    column as a keyword list); a row whose reference cannot be judged against (None, empty, unreadable,
    naming no answer) gets None (TRL then ignores this function for that row). The problem text comes from ``problem_column`` when given, else from
    the prompt (its last user message). With ``log``, per-batch means go to TRL's ``log_metric``
    and per-row details to ``log_extra`` when the trainer provides them. Starts the default grader's
    workers in the background (``warmup_in_background``)."""
    cfg = _apply_overrides(config, overrides)
    warmup_in_background(cfg)

    def reward(prompts: Sequence[Any] | None = None, completions: Sequence[Any] | None = None,
               **kwargs: Any) -> list[float | None]:
        comps = list(completions or [])
        if reference_column not in kwargs:
            raise KeyError(f"faithsieve TRL reward: dataset column {reference_column!r} not found; "
                           f"columns passed: {sorted(k for k in kwargs if k not in _TRL_INTERNAL)}")
        refs = list(kwargs[reference_column])
        probs = list(kwargs[problem_column]) if problem_column else list(prompts or [None] * len(comps))
        if not (len(refs) == len(comps) == len(probs)):
            raise ValueError(f"faithsieve TRL reward: {len(comps)} completions, {len(refs)} references, "
                             f"{len(probs)} prompts")
        results = grade_many([(c, r, p) for c, r, p in zip(comps, refs, probs, strict=True)], cfg)
        out: list[float | None] = [r.score if _judgeable(ref) else None for r, ref in zip(results, refs, strict=True)]
        if log:
            _trl_log(results, kwargs)
        return out

    reward.__name__ = name
    reward.__qualname__ = name
    return reward


def _judgeable(reference: Any) -> bool:
    """A reference this function can judge against: given, readable, and naming an answer (TRL's
    convention: a reward function returns None for a sample it cannot judge)."""
    try:
        return bool(_references(reference))
    except BadInput:
        return False


_TRL_INTERNAL = frozenset({"trainer_state", "log_extra", "log_metric", "completion_ids", "environments"})


def _trl_log(results: list[GradeResult], kwargs: Mapping[str, Any]) -> None:
    log_metric, log_extra = kwargs.get("log_metric"), kwargs.get("log_extra")
    try:
        if callable(log_metric) and results:
            vals = [r.log_values() for r in results]
            for k in ("acc", "error_found", "process_checked", "budget_exceeded"):
                # acc over the rows that have a reference: a row without one has no accuracy, not 0
                over = [v for v in vals if v["has_reference"]] if k == "acc" else vals
                if over:
                    log_metric(f"faithsieve/{k}", sum(v[k] for v in over) / len(over))
        if callable(log_extra):
            log_extra("faithsieve_first_error_step", [r.first_error_step for r in results])
            log_extra("faithsieve_answer", [r.answer for r in results])
            log_extra("faithsieve_status", [r.status for r in results])
    except Exception as exc:  # noqa: BLE001 - logging must never break training
        log.debug("faithsieve.grader: TRL logging failed: %s", exc)


# ---------------------------------------------------------------------------
# OpenRLHF
# ---------------------------------------------------------------------------

def _completion_from_query(query: Any, prompt: Any) -> Any:
    """OpenRLHF sends ``query`` = prompt + response: keep the response."""
    try:
        q = _as_text(query)
    except BadInput:
        return query  # grade() flags it
    p = prompt if isinstance(prompt, str) else ""
    if p:
        if q.startswith(p):
            q = q[len(p):]
        else:
            i = q.find(p)
            if i >= 0:
                q = q[i + len(p):]
    return _strip_special_tail(q)


def openrlhf_reward(query: Sequence[Any], prompts: Sequence[Any] | None = None, labels: Sequence[Any] | None = None,
                    config: GraderConfig | None = None) -> dict[str, Any]:
    """The body of OpenRLHF's ``POST /get_reward``: ``{"query", "prompts", "labels"}`` lists in,
    ``{"rewards": [float], "scores": [float], "extra_logs": {key: [float]}}`` out.

    ``query[i]`` is the prompt followed by the response (the prompt prefix is removed); ``labels[i]``
    the reference answer (None or "" grades the process only). ``rewards`` are the shaped scores,
    ``scores`` the outcome (1.0 correct answer, else 0.0) for OpenRLHF's dynamic filtering,
    ``extra_logs`` the ``LOG_KEYS`` per sample. Raises ValueError when the lists differ in length."""
    queries = list(query or [])
    n = len(queries)
    ps = list(prompts) if prompts is not None else [""] * n
    ls = list(labels) if labels is not None else [None] * n
    if len(ps) != n or len(ls) != n:
        raise ValueError(f"query, prompts and labels must have equal lengths (got {n}, {len(ps)}, {len(ls)})")
    items = [(_completion_from_query(q, p), (None if isinstance(lab, str) and not lab else lab), p) for q, p, lab in zip(queries, ps, ls, strict=True)]
    results = grade_many(items, config or default_config())
    logs = [r.log_values() for r in results]
    return {
        "rewards": [r.score for r in results],
        "scores": [1.0 if r.outcome else 0.0 for r in results],
        "extra_logs": {k: [v[k] for v in logs] for k in LOG_KEYS},
    }


def reward_func(queries: Sequence[Any], prompts: Sequence[Any], labels: Sequence[Any], **kwargs: Any) -> dict[str, Any]:
    """OpenRLHF's local ``--remote_rm_url /path/to/file.py`` form. Plain lists (recent OpenRLHF
    applies ``torch.as_tensor``; the README (RL section) has a shim for versions that need tensors).
    Keyword arguments naming ``GraderConfig`` fields override the config."""
    return openrlhf_reward(queries, prompts, labels, _apply_overrides(None, kwargs))
