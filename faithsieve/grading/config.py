"""The grader's configuration: reward weights, limits and isolation (``GraderConfig``)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class GraderConfig(BaseSettings):
    """Reward weights, time budget and isolation. Env prefix ``FAITHSIEVE_GRADER_`` (read when the
    default config is first built, or when you call ``GraderConfig()``); keep it identical on every
    worker of a training job."""

    model_config = SettingsConfigDict(env_prefix="FAITHSIEVE_GRADER_", frozen=True, extra="ignore")

    # -- outcome ------------------------------------------------------------------
    correct_reward: float = 1.0
    """Outcome term when the final answer equals the reference."""
    incorrect_reward: float = 0.0
    """Outcome term when an answer was found and differs from the reference."""
    no_answer_reward: float = 0.0
    """Outcome term when no final answer can be read from the solution."""
    percent: Literal["either", "value", "strip"] = "either"
    """``50%`` against a reference: ``value`` reads 0.5, ``strip`` reads 50, ``either`` accepts both."""
    decimal_rounding: bool = True
    """A decimal with >= 2 places matches a non-terminating value (1/3, sqrt 2, pi) to the places shown."""
    answer_backend: Literal["faithsieve", "math-verify"] = "faithsieve"
    """``math-verify``: the outcome is Math-Verify's ``verify(parse(reference), parse(completion))`` (the
    optional extra ``faithsieve[math-verify]``), run in a worker process under this call's budget
    (``isolation="process"``; inline it runs in the calling thread, unbounded). Not installed: flag
    ``answer_backend_unavailable``, outcome not equal."""
    last_number: bool = True
    """Without \\boxed{}, 'The answer is', or '####', use the last number of the solution."""

    # -- process ------------------------------------------------------------------
    process: bool = True
    """Run the step checker (the process term). Off: outcome-only rewards."""
    error_penalty: float = Field(default=0.5, ge=0)
    """Subtracted from the score when some step is refuted."""
    step_rewards: bool = False
    """Also return one reward per step (``GradeResult.step_rewards``)."""
    step_reward_before: float = 1.0
    """Per-step reward of the steps before the first refuted step (all steps when none is)."""
    step_reward_error: float = -1.0
    """Per-step reward of the first refuted step."""
    step_reward_after: float = 0.0
    """Per-step reward of the steps after the first refuted step."""

    # -- limits -------------------------------------------------------------------
    time_budget_s: float = Field(default=1.0, gt=0, le=600)
    """Hard wall-clock budget for one call's check; past it the reward is outcome-only (flagged)."""
    obligation_time_limit_ms: int = Field(default=200, gt=0)
    """Time limit of one solver call inside the check."""
    max_chars: int = Field(default=20_000, gt=0)
    """Longer solutions are not step-checked (outcome-only, flag ``too_long``)."""
    max_steps: int = Field(default=200, gt=0)
    """Solutions that split into more steps are not step-checked (flag ``too_many_steps``)."""
    max_problem_chars: int = Field(default=4_000, ge=0)
    """The problem text (its numbers are facts for the checker) is cut to this length."""

    # -- execution ----------------------------------------------------------------
    isolation: Literal["process", "inline"] = "process"
    """``process``: checks run in killable worker processes (hard budget). ``inline``: in the calling
    thread (faster to start, no extra processes; the budget is then cooperative only)."""
    workers: int = Field(default=2, ge=1, le=64)
    """Worker processes (``process`` isolation). Batches are spread over them; a spare one keeps
    serving while a killed one restarts."""
    worker_memory_mb: int = Field(default=4096, ge=0)
    """Address-space limit of a worker (0: none)."""
    startup_timeout_s: float = Field(default=60.0, gt=0)
    """How long a worker may take to start. The first call (or ``warmup()``) waits for every worker,
    outside its budget (once per process; a replacement starts in the background)."""
    acquire_timeout_s: float = Field(default=10.0, gt=0)
    """How long a call waits for a free worker when all are busy with other calls."""
    cache_size: int = Field(default=4096, ge=0)
    """Results of finished checks kept per process (GRPO groups repeat completions)."""


@lru_cache(maxsize=1)
def default_config() -> GraderConfig:
    return GraderConfig()


_FIELDS = frozenset(GraderConfig.model_fields)


@lru_cache(maxsize=64)
def _config_with(base: GraderConfig, overrides: tuple[tuple[str, Any], ...]) -> GraderConfig:
    return GraderConfig(**{**base.model_dump(), **dict(overrides)})


def _apply_overrides(base: GraderConfig | None, kwargs: Mapping[str, Any]) -> GraderConfig:
    base = base or default_config()
    over = tuple(sorted((k, v) for k, v in kwargs.items() if k in _FIELDS))
    if not over:
        return base
    try:
        return _config_with(base, over)
    except TypeError:  # an unhashable value: build without the cache
        return GraderConfig(**{**base.model_dump(), **dict(over)})


RETURN_MARGIN_S = 0.1
"""The work of a call stops this long (or 10% of a smaller budget) before its budget ends: the rest
is for returning on a busy machine (threads waiting for the GIL, a worker being killed)."""


def work_deadline(cfg: GraderConfig) -> float:
    """The ``time.monotonic()`` by which a call starting now stops working."""
    return time.monotonic() + cfg.time_budget_s - min(RETURN_MARGIN_S, 0.1 * cfg.time_budget_s)


class Budget:
    """One call's working time. ``deadline`` (a ``time.monotonic()``) is pushed back by every wait that is
    not the call's own work (the worker pool starting, every worker busy with other calls): such waits are
    never charged to the call; ``waited_s`` sums them (reported as ``GradeResult.waited_ms``)."""

    __slots__ = ("deadline", "waited_s")

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.waited_s = 0.0

    def left(self) -> float:
        """Seconds of work left."""
        return self.deadline - time.monotonic()

    def credit(self, seconds: float) -> None:
        """A wait of ``seconds`` that was not the call's work: the deadline moves back by as much."""
        if seconds > 0:
            self.deadline += seconds
            self.waited_s += seconds
