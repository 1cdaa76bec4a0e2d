"""The grader's worker processes: the shared killable pool (``faithsieve.runtime.workers.KillablePool``) under
the grader's rules, owned by one ``GraderPool`` object (a ``Grader`` holds one). One hard budget per call
covers waiting for a worker and the work; a worker past it is killed and replaced in the background;
start-up (every worker's, and again in a forked process) is never charged to a call; every failure is a
status, never an exception."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from faithsieve.grading.check import (
    _run_check,
    run_answer_check,
    run_math_verify,
    warm_worker,
)
from faithsieve.grading.config import GraderConfig, default_config, work_deadline
from faithsieve.runtime.workers import (
    JobTimeout,
    KillablePool,
    WorkerCrashed,
    WorkerUnavailable,
)

__all__ = ["GraderPool"]


def _retire(result: Any) -> bool:
    """A check that ran out of memory asks for a fresh worker (``"restart"`` in its result)."""
    return isinstance(result, dict) and bool(result.get("restart"))


def _quiet() -> None:
    """Worker start-up: stray output (library warnings, prints) does not reach the trainer's console."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)


class GraderPool:
    """The worker processes of one grader and the threads that spread a batch over them. Started on
    first use (or by ``warmup``); ``close`` stops both (a later use starts them again)."""

    def __init__(self) -> None:
        self._pool: KillablePool | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._executor_size = 0
        self._lock = threading.Lock()

    # -- what tests and benches may look at ----------------------------------------------------------

    @property
    def processes(self) -> KillablePool | None:
        """The killable pool when it has been created (None before the first use and after ``close``)."""
        return self._pool

    # -- the pool ------------------------------------------------------------------------------------

    def get(self, cfg: GraderConfig) -> tuple[KillablePool, bool]:
        """The pool, started in this process with at least ``cfg.workers`` workers, and whether this call
        waited for a start (then its budget starts afresh). Raises ``WorkerUnavailable``."""
        pool = self._pool
        if pool is not None and pool.ready and pool.workers >= cfg.workers:
            return pool, False
        with self._lock:
            if self._pool is None:
                self._pool = KillablePool(cfg.workers, cfg.worker_memory_mb, initializer=_quiet, warm=warm_worker,
                                          startup_timeout_s=cfg.startup_timeout_s, retire=_retire, clean_main=True)
            if not self._pool.ready:  # first use, or a forked process (the parent's workers are not ours)
                self._pool.start()
            if self._pool.workers < cfg.workers:
                self._pool.grow(cfg.workers)
            return self._pool, True

    def executor(self, size: int) -> ThreadPoolExecutor:
        """The threads that spread a batch over the workers (``grade_many``), at least ``size`` of them."""
        with self._lock:
            if self._executor is None or self._executor_size < size:
                self._executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="faithsieve-grader")
                self._executor_size = size
            return self._executor

    def warmup(self, config: GraderConfig | None = None) -> bool:
        """Start the worker pool now and wait for every worker (it otherwise starts on the first call).
        True when all are up."""
        cfg = config or default_config()
        if cfg.isolation != "process" or not cfg.process:
            return True
        try:
            self.get(cfg)
        except WorkerUnavailable:
            return False
        return True

    def close(self) -> None:
        """Stop the worker processes (they also exit on their own when this process ends)."""
        with self._lock:
            if self._pool is not None:
                self._pool.close()  # in a forked process this leaves the parent's workers alone
            self._pool = None
            if self._executor is not None:
                self._executor.shutdown(wait=False)
                self._executor = None
                self._executor_size = 0

    # -- the jobs ------------------------------------------------------------------------------------

    def check(self, problem: str, text: str, key: tuple[tuple[str, Any], ...], cfg: GraderConfig,
              deadline: float) -> dict[str, Any]:
        """The step check of ``text`` in a worker, answered by ``deadline`` (else status ``timeout``)."""
        return self._in_worker(cfg, deadline, _run_check, problem, text, key)

    def math_verify(self, text: str, refs: list[str], cfg: GraderConfig, deadline: float) -> dict[str, Any]:
        """Math-Verify's ``verify(parse(ref), parse(text))`` for each reference, in a worker (killable:
        Math-Verify's own timeouts use signals, which do not work outside the main thread)."""
        return self._in_worker(cfg, deadline, run_math_verify, text, refs)

    def answer(self, answer: str, refs: list[str], percent: str, decimal_rounding: bool, cfg: GraderConfig,
               deadline: float) -> dict[str, Any]:
        """Our answer comparison in a worker: for the comparisons that need sympy or sample points."""
        return self._in_worker(cfg, deadline, run_answer_check, answer, refs, percent, decimal_rounding)

    def _in_worker(self, cfg: GraderConfig, deadline: float, fn: Any, *args: Any) -> dict[str, Any]:
        """``fn(*args)`` in a worker by ``deadline``; any failure is a status (never raised)."""
        try:
            pool, waited = self.get(cfg)
        except WorkerUnavailable as exc:
            return {"status": "worker_unavailable", "error": str(exc)}
        except Exception as exc:  # noqa: BLE001 (isolation boundary: cannot start processes here at all)
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
        except Exception as exc:  # noqa: BLE001 (isolation boundary: e.g. an argument that cannot be pickled)
            return {"status": "error", "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
        return out if isinstance(out, dict) else {"status": "error", "error": "unexpected worker answer"}
