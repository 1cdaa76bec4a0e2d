"""The grader's worker processes: the shared killable pool (``faithsieve.runtime.workers.KillablePool``) under
the grader's rules. One hard budget per call covers waiting for a worker and the work; a worker past
it is killed and replaced in the background; start-up (every worker's, and again in a forked
process) is never charged to a call; every failure is a status, never an exception."""

from __future__ import annotations

import atexit
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from faithsieve.grading.check import _run_check, run_answer_check, run_math_verify, warm_worker
from faithsieve.grading.config import GraderConfig, default_config, work_deadline
from faithsieve.runtime.workers import JobTimeout, KillablePool, WorkerCrashed, WorkerUnavailable

_POOL: KillablePool | None = None
_POOL_LOCK = threading.Lock()
_EXECUTOR: ThreadPoolExecutor | None = None


def _retire(result: Any) -> bool:
    """A check that ran out of memory asks for a fresh worker (``"restart"`` in its result)."""
    return isinstance(result, dict) and bool(result.get("restart"))


def _quiet() -> None:
    """Worker start-up: stray output (library warnings, prints) does not reach the trainer's console."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)


def _pool(cfg: GraderConfig) -> tuple[KillablePool, bool]:
    """The pool, started in this process with at least ``cfg.workers`` workers, and whether this call
    waited for a start (then its budget starts afresh). Raises ``WorkerUnavailable``."""
    global _POOL
    pool = _POOL
    if pool is not None and pool.ready and pool.workers >= cfg.workers:
        return pool, False
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = KillablePool(cfg.workers, cfg.worker_memory_mb, initializer=_quiet, warm=warm_worker,
                                 startup_timeout_s=cfg.startup_timeout_s, retire=_retire, clean_main=True)
        if not _POOL.ready:  # first use, or a forked process (the parent's workers are not ours)
            _POOL.start()
        if _POOL.workers < cfg.workers:
            _POOL.grow(cfg.workers)
        return _POOL, True


def executor(size: int) -> ThreadPoolExecutor:
    """The threads that spread a batch over the workers (``grade_many``), at least ``size`` of them."""
    global _EXECUTOR
    with _POOL_LOCK:
        if _EXECUTOR is None or getattr(_EXECUTOR, "_fs_size", 0) < size:
            _EXECUTOR = ThreadPoolExecutor(max_workers=size, thread_name_prefix="faithsieve-grader")
            _EXECUTOR._fs_size = size  # type: ignore[attr-defined]
        return _EXECUTOR


def warmup(config: GraderConfig | None = None) -> bool:
    """Start the worker pool now and wait for every worker (it otherwise starts on the first call).
    True when all are up."""
    cfg = config or default_config()
    if cfg.isolation != "process" or not cfg.process:
        return True
    try:
        _pool(cfg)
    except WorkerUnavailable:
        return False
    return True


def shutdown() -> None:
    """Stop the worker processes (they also exit on their own when this process ends)."""
    global _POOL, _EXECUTOR
    with _POOL_LOCK:
        if _POOL is not None:
            _POOL.close()  # in a forked process this leaves the parent's workers alone
        _POOL = None
        if _EXECUTOR is not None:
            _EXECUTOR.shutdown(wait=False)
            _EXECUTOR = None


atexit.register(shutdown)


def _check_in_worker(problem: str, text: str, key: tuple[tuple[str, Any], ...], cfg: GraderConfig,
                     deadline: float) -> dict[str, Any]:
    """The step check of ``text`` in a worker, answered by ``deadline`` (else status ``timeout``)."""
    return _in_worker(cfg, deadline, _run_check, problem, text, key)


def math_verify_in_worker(text: str, refs: list[str], cfg: GraderConfig, deadline: float) -> dict[str, Any]:
    """Math-Verify's ``verify(parse(ref), parse(text))`` for each reference, in a worker (killable:
    Math-Verify's own timeouts use signals, which do not work outside the main thread)."""
    return _in_worker(cfg, deadline, run_math_verify, text, refs)


def answer_in_worker(answer: str, refs: list[str], percent: str, decimal_rounding: bool, cfg: GraderConfig,
                     deadline: float) -> dict[str, Any]:
    """Our answer comparison in a worker: for the comparisons that need sympy or sample points."""
    return _in_worker(cfg, deadline, run_answer_check, answer, refs, percent, decimal_rounding)


def _in_worker(cfg: GraderConfig, deadline: float, fn: Any, *args: Any) -> dict[str, Any]:
    """``fn(*args)`` in a worker by ``deadline``; any failure is a status (never raised)."""
    try:
        pool, waited = _pool(cfg)
    except WorkerUnavailable as exc:
        return {"status": "worker_unavailable", "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - cannot start processes here at all
        return {"status": "worker_unavailable", "error": f"{type(exc).__name__}: {exc}"}
    if waited:
        deadline = work_deadline(cfg)  # the start-up is not charged
    try:
        out = pool.run(fn, *args, wait_s=cfg.acquire_timeout_s, deadline=deadline)
    except JobTimeout:
        return {"status": "timeout"}
    except WorkerCrashed as exc:
        return {"status": "worker_crashed", "error": str(exc)}
    except WorkerUnavailable as exc:
        return {"status": "worker_unavailable", "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - e.g. an argument that cannot be pickled
        return {"status": "error", "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    return out if isinstance(out, dict) else {"status": "error", "error": "unexpected worker answer"}
