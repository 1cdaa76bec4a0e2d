"""FaithSieve as a reward function inside RL training loops.

One core, ``grade(solution, reference, problem, config)``, and thin adapters in the
shapes the common frameworks call:

* verl: ``compute_score(data_source, solution_str, ground_truth, extra_info=None, **overrides)``
  returns ``{"score": float, ...numeric extras}``;
* TRL: ``make_trl_reward(...)`` returns ``reward(prompts, completions, **kwargs) -> list[float | None]``;
* OpenRLHF: ``reward_func(queries, prompts, labels, **overrides)`` (the ``--remote_rm_url file.py``
  form) and ``openrlhf_reward(query, prompts, labels, config)``, the pure function behind the
  service's ``POST /get_reward``. Both return ``{"rewards", "scores", "extra_logs"}`` as plain
  lists (no torch import here).

Reward (every weight is a ``GraderConfig`` field; the README (RL section) has the table)::

    score = outcome_term - error_penalty * [a step of the solution is refuted]

    outcome_term = correct_reward    if the final answer equals the reference (as a value)
                 = incorrect_reward  if an answer was found and differs
                 = no_answer_reward  if no final answer could be read (or no reference given: 0)

The process term comes from ``faithsieve.pipeline.localize`` on the solution split into
steps exactly as the service splits it (``faithsieve.split.proof_from_text``). Only a
refutation backed by an exact counterexample counts. With ``step_rewards`` on, the result
also carries one reward per step: ``step_reward_before`` for steps before the first refuted
one, ``step_reward_error`` for it, ``step_reward_after`` for later steps.

Time: each call has a hard budget (``time_budget_s``, default 1 s). With the default
``isolation="process"`` the check runs in a small pool of worker processes that the grader
kills and replaces when a check overruns, so no completion can hold the trainer longer than
the budget. When the check does not finish in budget (or the text is too long, or the
pipeline fails) the score is the outcome term alone and ``budget_exceeded`` / ``flags`` say
why. Nothing in a completion is ever evaluated as code.

Determinism: the answer comparison and the pipeline are deterministic; a result that did not
finish within budget is flagged and carries no process term, so the same input gives the same
reward on any worker unless it sits on the time boundary (then it is flagged).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import re
import select
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from faithsieve.answers import (
    AnswerPolicy,
    answers_equal,
    extract_answer,
    reference_answer,
)
from faithsieve.lazy import freeze_after_import

__all__ = [
    "LOG_KEYS",
    "GradeResult",
    "GraderConfig",
    "compute_score",
    "grade",
    "grade_many",
    "make_compute_score",
    "make_trl_reward",
    "openrlhf_reward",
    "reward_func",
    "shutdown",
    "warmup",
]

log = logging.getLogger("faithsieve.grader")


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
    """How long the first call waits for the pool to start (once per process)."""
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


# ---------------------------------------------------------------------------
# Result
# ---------------------------------------------------------------------------

LOG_KEYS = (
    "acc", "answer_found", "has_reference", "process_checked", "error_found", "first_error_step", "steps",
    "steps_decided", "obligations", "obligations_decided", "budget_exceeded", "time_ms",
)
"""Numeric extras every entry point logs, always all of them (verl and OpenRLHF need equal keys)."""


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
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict of every field."""
        return {
            "score": self.score, "outcome": self.outcome, "outcome_term": self.outcome_term, "answer": self.answer,
            "answer_source": self.answer_source, "reference": self.reference, "process_checked": self.process_checked,
            "verdict": self.verdict, "first_error_step": self.first_error_step, "reason": self.reason,
            "steps": self.steps, "steps_decided": self.steps_decided, "obligations": self.obligations,
            "obligations_decided": self.obligations_decided, "step_status": list(self.step_status),
            "step_spans": [list(s) for s in self.step_spans],
            "step_rewards": list(self.step_rewards) if self.step_rewards is not None else None,
            "budget_exceeded": self.budget_exceeded, "flags": list(self.flags), "time_ms": self.time_ms,
        }


# ---------------------------------------------------------------------------
# The step check (runs in a worker process, or inline)
# ---------------------------------------------------------------------------

@lru_cache(maxsize=256)
def _settings(key: tuple[tuple[str, Any], ...]):  # type: ignore[no-untyped-def]
    from faithsieve.config import Settings

    # The grader is the offline sieve whatever FAITHSIEVE_MODE says: it must stay fast and deterministic.
    return Settings(**{**dict(key), "mode": "offline"})


def _run_check(problem: str, text: str, settings_key: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    """Split and localize; a compact, JSON-safe summary. Never raises."""
    from faithsieve.errors import InputError, InputTooLarge
    from faithsieve.pipeline import build_checkers, localize
    from faithsieve.split import proof_from_text

    try:
        settings = _settings(settings_key)
        try:
            proof = proof_from_text(problem, text, settings)
        except InputTooLarge as exc:
            field_ = (exc.detail or {}).get("field", "") if isinstance(exc.detail, dict) else ""
            return {"status": "too_many_steps" if field_ == "steps" else "too_long", "error": exc.message}
        except InputError as exc:
            return {"status": "error", "error": exc.message}
        if not proof.steps:
            return {"status": "empty"}
        v = localize(proof, settings, build_checkers(settings))
        budget_hit = any(e.method == "budget" for st in v.steps for e in st.evidence)
        c = v.coverage
        return {
            "status": "ok", "verdict": v.verdict, "first_error_step": v.first_error_step, "reason": v.reason,
            "statuses": [s.status for s in v.steps],
            "spans": [[s.offset, s.offset + len(s.text)] for s in proof.steps],
            "steps": c.steps, "steps_decided": c.steps_decided, "obligations": c.obligations,
            "obligations_decided": c.obligations_decided, "budget_hit": budget_hit, "ms": v.timings.total_ms,
        }
    except MemoryError:
        return {"status": "error", "error": "MemoryError", "restart": True}
    except RecursionError:
        return {"status": "error", "error": "RecursionError"}
    except Exception as exc:  # noqa: BLE001 - a reward function must not crash the trainer
        return {"status": "error", "error": f"{type(exc).__name__}: {str(exc)[:200]}"}


# ---------------------------------------------------------------------------
# Worker processes
# ---------------------------------------------------------------------------

class _WorkerDied(Exception):
    pass


class _Worker:
    """One ``python -m faithsieve.grader --worker`` child speaking JSON lines over pipes."""

    def __init__(self, memory_mb: int) -> None:
        env = dict(os.environ)
        env["FAITHSIEVE_GRADER_WORKER_MEMORY_MB"] = str(memory_mb)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "faithsieve.grader", "--worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            close_fds=True, start_new_session=True, env=env,
        )
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self.fd = self.proc.stdout.fileno()
        self.buf = b""
        self.ready = False

    def _readline(self, deadline: float) -> bytes | None:
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.fd], [], [], left)
            if not r:
                return None
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                raise _WorkerDied("worker closed its output")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def wait_ready(self, deadline: float) -> bool:
        if self.ready:
            return True
        line = self._readline(deadline)
        if line is None:
            return False
        if line.strip() != b"READY":
            raise _WorkerDied(f"unexpected worker greeting {line[:80]!r}")
        self.ready = True
        return True

    def call(self, payload: bytes, deadline: float) -> dict[str, Any] | None:
        """The worker's answer, or None when the deadline passed first."""
        try:
            self.proc.stdin.write(payload)  # type: ignore[union-attr]
            self.proc.stdin.flush()  # type: ignore[union-attr]
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise _WorkerDied(str(exc)) from None
        line = self._readline(deadline)
        if line is None:
            return None
        try:
            out = json.loads(line)
        except ValueError:
            raise _WorkerDied("garbled worker output") from None
        return out if isinstance(out, dict) else None

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        try:
            self.proc.kill()
        except OSError:
            pass
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()  # type: ignore[union-attr]
            except OSError:
                pass
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            threading.Thread(target=self.proc.wait, daemon=True).start()


class _Pool:
    """Idle workers; a worker that overran or died is killed and replaced at once."""

    def __init__(self, size: int, memory_mb: int) -> None:
        self.pid = os.getpid()
        self.memory_mb = memory_mb
        self.cond = threading.Condition()
        self.size = 0
        self.idle: list[_Worker] = []
        self.warm = False
        self.failures = 0
        self.broken: str | None = None
        self.grow(size)

    def grow(self, size: int) -> None:
        with self.cond:
            while self.size < size:
                self.idle.insert(0, self._spawn_or_none())  # type: ignore[arg-type]
                self.size += 1
            self.idle = [w for w in self.idle if w is not None]
            self.cond.notify_all()

    def _spawn_or_none(self) -> _Worker | None:
        try:
            return _Worker(self.memory_mb)
        except OSError as exc:
            self.broken = f"cannot start a worker: {exc}"
            log.error("faithsieve.grader: %s", self.broken)
            return None

    def acquire(self, timeout: float) -> _Worker | None:
        end = time.monotonic() + timeout
        with self.cond:
            while not self.idle:
                left = end - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)
            for i in range(len(self.idle) - 1, -1, -1):  # prefer a worker that is up
                if self.idle[i].ready:
                    return self.idle.pop(i)
            return self.idle.pop()

    def release(self, w: _Worker, healthy: bool) -> None:
        if healthy and w.alive():
            with self.cond:
                self.idle.append(w)
                self.cond.notify()
            return
        w.kill()
        fresh = self._spawn_or_none()
        with self.cond:
            if fresh is not None:
                self.idle.insert(0, fresh)
            else:
                self.size -= 1
            self.cond.notify()

    def close(self) -> None:
        with self.cond:
            workers, self.idle = self.idle, []
            self.size = 0
        for w in workers:
            w.kill()


_POOL: _Pool | None = None
_POOL_LOCK = threading.Lock()
_EXECUTOR: ThreadPoolExecutor | None = None


def _pool(cfg: GraderConfig) -> _Pool:
    global _POOL
    with _POOL_LOCK:
        if _POOL is not None and _POOL.pid != os.getpid():
            _POOL = None  # forked: the parent's pipes are not ours
        if _POOL is None:
            _POOL = _Pool(cfg.workers, cfg.worker_memory_mb)
        elif _POOL.size < cfg.workers:
            _POOL.grow(cfg.workers)
        return _POOL


def warmup(config: GraderConfig | None = None) -> bool:
    """Start the worker pool now (it otherwise starts on the first call). True when a worker is up."""
    cfg = config or default_config()
    if cfg.isolation != "process" or not cfg.process:
        return True
    pool = _pool(cfg)
    w = pool.acquire(cfg.startup_timeout_s)
    if w is None:
        return False
    try:
        ok = w.wait_ready(time.monotonic() + cfg.startup_timeout_s)
        pool.warm = pool.warm or ok
        pool.release(w, ok)
        return ok
    except _WorkerDied:
        pool.release(w, False)
        return False


def shutdown() -> None:
    """Stop the worker processes (they also exit on their own when this process ends)."""
    global _POOL, _EXECUTOR
    with _POOL_LOCK:
        if _POOL is not None and _POOL.pid == os.getpid():
            _POOL.close()
        _POOL = None
        if _EXECUTOR is not None:
            _EXECUTOR.shutdown(wait=False)
            _EXECUTOR = None


atexit.register(shutdown)


def _check_in_worker(problem: str, text: str, key: tuple[tuple[str, Any], ...], cfg: GraderConfig,
                     deadline: float) -> dict[str, Any]:
    pool = _pool(cfg)
    if pool.broken is not None and pool.size == 0:
        return {"status": "worker_unavailable", "error": pool.broken}
    w = pool.acquire(cfg.acquire_timeout_s if pool.warm else cfg.startup_timeout_s)
    if w is not None and not w.alive():  # died while idle (e.g. killed from outside): replace, retry once
        pool.release(w, False)
        w = pool.acquire(cfg.acquire_timeout_s if pool.warm else cfg.startup_timeout_s)
    if w is None:
        return {"status": "worker_unavailable", "error": "all workers busy"}
    healthy = False
    try:
        if not w.ready:
            wait_until = deadline if pool.warm else time.monotonic() + cfg.startup_timeout_s
            if not w.wait_ready(wait_until):
                healthy = True  # still starting: keep it
                return {"status": "worker_unavailable", "error": "worker still starting"}
            if not pool.warm:
                pool.warm = True
                deadline = time.monotonic() + cfg.time_budget_s  # the one-time start is not charged
        payload = json.dumps({"problem": problem, "text": text, "settings": key}, ensure_ascii=False).encode() + b"\n"
        out = w.call(payload, deadline)
        if out is None:
            return {"status": "timeout"}
        healthy = not out.get("restart")
        return out
    except _WorkerDied as exc:
        pool.failures += 1
        return {"status": "worker_crashed", "error": str(exc)}
    finally:
        pool.release(w, healthy)


# ---------------------------------------------------------------------------
# Core
# ---------------------------------------------------------------------------

_CACHE: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_SPECIAL_END = re.compile(r"(?:<\|[A-Za-z0-9_]{1,40}\|>|</s>|<｜end▁of▁sentence｜>|<pad>|\[PAD\]|<eos>)$")


def _strip_special_tail(s: str) -> str:
    """Remove end-of-sequence markers a decoder may leave (``<|im_end|>``, ``</s>``...). Linear."""
    end = len(s)
    while True:
        while end and s[end - 1].isspace():
            end -= 1
        m = _SPECIAL_END.search(s, max(0, end - 64), end)
        if m is None or m.start() == end:
            return s[:end]
        end = m.start()


def _as_text(x: Any) -> str:
    """A completion as text: a string, a chat message, or a list of messages/content parts."""
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    if isinstance(x, Mapping):
        c = x.get("content", x.get("text", ""))
        return _as_text(c)
    if isinstance(x, (list, tuple)):
        parts = []
        for item in x:
            if isinstance(item, Mapping):
                if item.get("role") not in (None, "assistant"):
                    continue
                if "type" in item and item.get("type") != "text" and "content" not in item:
                    continue
            parts.append(_as_text(item))
        return "\n".join(p for p in parts if p)
    return str(x)


def _prompt_problem(prompt: Any) -> str:
    """The problem statement in a prompt: a string, or the last user message of a conversation."""
    if prompt is None:
        return ""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, (list, tuple)):
        for msg in reversed(prompt):
            if isinstance(msg, Mapping) and msg.get("role") == "user":
                return _as_text(msg.get("content"))
        return "\n".join(_as_text(m.get("content")) for m in prompt if isinstance(m, Mapping))
    return _as_text(prompt)


def _references(reference: Any) -> list[str]:
    if reference is None:
        return []
    if hasattr(reference, "tolist") and not isinstance(reference, str):
        reference = reference.tolist()
    if isinstance(reference, (list, tuple, set, frozenset)):
        out = []
        for r in reference:
            out += _references(r)
        return out
    if isinstance(reference, Mapping):
        for k in ("ground_truth", "answer", "solution", "reference"):
            if k in reference:
                return _references(reference[k])
        return []
    ans = reference_answer(reference).strip()
    return [ans] if ans else []


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
    global _EXECUTOR
    cfg = config or default_config()
    if len(items) <= 1 or cfg.workers <= 1 or cfg.isolation != "process" or not cfg.process:
        return [grade(s, r, p, cfg) for s, r, p in items]
    with _POOL_LOCK:
        if _EXECUTOR is None or getattr(_EXECUTOR, "_fs_size", 0) < cfg.workers:
            _EXECUTOR = ThreadPoolExecutor(max_workers=cfg.workers, thread_name_prefix="faithsieve-grader")
            _EXECUTOR._fs_size = cfg.workers  # type: ignore[attr-defined]
        ex = _EXECUTOR
    return list(ex.map(lambda it: grade(it[0], it[1], it[2], cfg), items))


# ---------------------------------------------------------------------------
# verl
# ---------------------------------------------------------------------------

def _verl_problem(extra_info: Any) -> str:
    if isinstance(extra_info, Mapping):
        for k in ("question", "problem", "prompt", "query"):
            v = extra_info.get(k)
            if v:
                return _prompt_problem(v)
    return ""


def compute_score(data_source: Any = None, solution_str: Any = "", ground_truth: Any = None,
                  extra_info: Any = None, **kwargs: Any) -> dict[str, float]:
    """verl custom reward function. Returns ``{"score": float}`` plus the numeric ``LOG_KEYS``
    (same keys for every sample, as verl's reward managers collect them into arrays).
    ``extra_info["question"]`` (or ``"problem"``) is used as the problem text when present.
    Keyword arguments naming ``GraderConfig`` fields (verl's ``custom_reward_function.reward_kwargs``)
    override the config; other keywords are ignored."""
    r = grade(solution_str, ground_truth, _verl_problem(extra_info), _apply_overrides(None, kwargs))
    return {"score": r.score, **r.log_values()}


def make_compute_score(config: GraderConfig | None = None, **overrides: Any) -> Callable[..., dict[str, float]]:
    """A ``compute_score`` bound to a config."""
    cfg = _apply_overrides(config, overrides)

    def compute_score(data_source: Any = None, solution_str: Any = "", ground_truth: Any = None,
                      extra_info: Any = None, **kwargs: Any) -> dict[str, float]:
        r = grade(solution_str, ground_truth, _verl_problem(extra_info), _apply_overrides(cfg, kwargs))
        return {"score": r.score, **r.log_values()}

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
    column as a keyword list); a row whose reference is None gets None (TRL then ignores this
    function for that row). The problem text comes from ``problem_column`` when given, else from
    the prompt (its last user message). With ``log``, per-batch means go to TRL's ``log_metric``
    and per-row details to ``log_extra`` when the trainer provides them."""
    cfg = _apply_overrides(config, overrides)

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
        results = grade_many([(c, r, p) for c, r, p in zip(comps, refs, probs)], cfg)
        out: list[float | None] = [None if ref is None else r.score for r, ref in zip(results, refs)]
        if log:
            _trl_log(results, kwargs)
        return out

    reward.__name__ = name
    reward.__qualname__ = name
    return reward


_TRL_INTERNAL = frozenset({"trainer_state", "log_extra", "log_metric", "completion_ids", "environments"})


def _trl_log(results: list[GradeResult], kwargs: Mapping[str, Any]) -> None:
    log_metric, log_extra = kwargs.get("log_metric"), kwargs.get("log_extra")
    try:
        if callable(log_metric) and results:
            vals = [r.log_values() for r in results]
            for k in ("acc", "error_found", "process_checked", "budget_exceeded"):
                log_metric(f"faithsieve/{k}", sum(v[k] for v in vals) / len(vals))
        if callable(log_extra):
            log_extra("faithsieve_first_error_step", [r.first_error_step for r in results])
            log_extra("faithsieve_answer", [r.answer for r in results])
    except Exception as exc:  # noqa: BLE001 - logging must never break training
        log.debug("faithsieve.grader: TRL logging failed: %s", exc)


# ---------------------------------------------------------------------------
# OpenRLHF
# ---------------------------------------------------------------------------

def _completion_from_query(query: Any, prompt: Any) -> str:
    """OpenRLHF sends ``query`` = prompt + response: keep the response."""
    q = _as_text(query)
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
    items = [(_completion_from_query(q, p), (lab if lab != "" else None), p) for q, p, lab in zip(queries, ps, ls)]
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


# ---------------------------------------------------------------------------
# Worker entry point: python -m faithsieve.grader --worker
# ---------------------------------------------------------------------------

def _orphan_watch(parent: int) -> None:
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(0)


def _worker_main() -> None:
    proto = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # stray prints must not corrupt the protocol
    sys.stdout = sys.stderr
    mem = int(os.environ.get("FAITHSIEVE_GRADER_WORKER_MEMORY_MB", "0") or 0)
    if mem > 0:
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (mem << 20, mem << 20))
        except (ImportError, ValueError, OSError):
            pass
    threading.Thread(target=_orphan_watch, args=(os.getppid(),), daemon=True).start()
    _run_check("Compute.", "Step 1: 2 + 3 = 5.\nStep 2: so 5 * 2 = 10.",
               (("proof_time_limit_s", 1.0),))  # import and warm everything before saying READY
    freeze_after_import()  # long-lived: full collections need not rescan what is imported and warm
    proto.write(b"READY\n")
    for line in sys.stdin.buffer:
        restart = False
        try:
            req = json.loads(line)
            key = tuple((str(k), v) for k, v in req["settings"])
            res = _run_check(str(req["problem"]), str(req["text"]), key)
            restart = bool(res.get("restart"))
        except Exception as exc:  # noqa: BLE001
            res = {"status": "error", "error": f"bad request: {type(exc).__name__}"}
        proto.write(json.dumps(res).encode() + b"\n")
        if restart:
            os._exit(3)


if __name__ == "__main__":
    if "--worker" in sys.argv[1:]:
        _worker_main()
    else:
        print("usage: python -m faithsieve.grader --worker  (started by faithsieve.grader itself)", file=sys.stderr)
        sys.exit(2)
