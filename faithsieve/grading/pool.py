"""The grader's worker processes: the shared killable pool (``faithsieve.runtime.workers.KillablePool``) under
the grader's rules, owned by one ``GraderPool`` object (a ``Grader`` holds one). Every failure is a status,
never an exception.

* A call's budget covers its own work only, counted from when a worker takes its job; a worker past it is
  killed and replaced in the background (the others keep serving).
* Waiting is never charged to a call, and never decides its reward: a call that finds the pool not started
  waits for the start (at most ``startup_timeout_s``), one that finds every worker busy (a batch) waits for
  a free one (at most ``acquire_timeout_s``, and again while other calls' killed workers are being replaced,
  up to ``startup_timeout_s`` in all); the time waited is
  credited to its ``Budget`` and reported. Only when that wait fails is the call left unchecked
  (``pool_starting`` / ``worker_unavailable``), and the grader then pays it as a refuted step.
* ``warmup()`` (which ``make_trl_reward`` and ``make_compute_score`` start in the background) starts and
  waits for every worker outside any call."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from faithsieve.grading.check import (
    CheckSummary,
    Comparison,
    JobStatus,
    _run_check,
    run_answer_check,
    run_math_verify,
    warm_worker,
)
from faithsieve.grading.config import Budget, GraderConfig, default_config
from faithsieve.runtime.workers import (
    JobTimeout,
    KillablePool,
    WorkerCrashed,
    WorkerUnavailable,
)

__all__ = ["MAX_SLACK", "GraderPool"]

J = TypeVar("J", bound=JobStatus)
"""The answer of a job run in a worker (``CheckSummary``, ``Comparison``)."""

MAX_SLACK = 0.3
"""At most this share of a call's budget is given up to wake-up lateness (``GraderPool._late``)."""


def _retire(result: Any) -> bool:
    """A check that ran out of memory asks for a fresh worker (``restart`` in its result)."""
    return isinstance(result, JobStatus) and result.restart


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
        self._pid = os.getpid()
        self._start_lock = threading.Lock()
        """Guards ``_starting`` only (``_lock`` is held through a whole start)."""
        self._starting: tuple[int, threading.Event] | None = None
        """The process id and the 'start has ended' event of the background start in progress or done."""
        self._late = 0.0
        """How late, recently, a wait that ended at its deadline woke up (a decaying maximum, seconds): on
        an overloaded machine a thread wakes well after its timeout, so waits end that much earlier."""

    # -- what tests and benches may look at ----------------------------------------------------------

    @property
    def processes(self) -> KillablePool | None:
        """The killable pool when it has been created (None before the first use and after ``close``)."""
        return self._pool

    # -- the pool ------------------------------------------------------------------------------------

    def get(self, cfg: GraderConfig) -> KillablePool:
        """The pool, started in this process with at least ``cfg.workers`` workers (waiting for the start).
        Raises ``WorkerUnavailable``."""
        pool = self._pool
        if pool is not None and pool.ready and pool.workers >= cfg.workers:
            return pool
        self._after_fork()
        with self._lock:
            if self._pool is None:
                self._pool = KillablePool(cfg.workers, cfg.worker_memory_mb, initializer=_quiet, warm=warm_worker,
                                          startup_timeout_s=cfg.startup_timeout_s, retire=_retire, clean_main=True)
            if not self._pool.ready:  # first use, or a forked process (the parent's workers are not ours)
                self._pool.start()
            if self._pool.workers < cfg.workers:
                self._pool.grow(cfg.workers)
            return self._pool

    def ready(self, cfg: GraderConfig) -> bool:
        """Started in this process with at least ``cfg.workers`` workers."""
        pool = self._pool
        return pool is not None and pool.ready and pool.workers >= cfg.workers

    def _after_fork(self) -> None:
        """In a process forked from the one that made these locks (a start may have held them at the
        fork, in a thread that does not exist here): fresh locks, no start in progress."""
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._lock = threading.Lock()
            self._start_lock = threading.Lock()
            self._starting = None

    def start_background(self, cfg: GraderConfig) -> threading.Event:
        """Start the pool in a background thread (once per process); the event is set when that start ends."""
        self._after_fork()
        with self._start_lock:
            if self._starting is not None and self._starting[0] == os.getpid():
                return self._starting[1]
            done = threading.Event()
            self._starting = (os.getpid(), done)

        def start() -> None:
            try:
                self.get(cfg)
            except Exception:  # noqa: BLE001 - a call that needs the pool then reports it unavailable
                pass
            finally:
                done.set()

        threading.Thread(target=start, daemon=True, name="faithsieve-grader-start").start()
        return done

    def _started(self, cfg: GraderConfig) -> KillablePool | None:
        """The pool when it is up, or after waiting for its start (at most ``cfg.startup_timeout_s``, never
        charged to the calling job's budget); None when it did not come up (the next call tries again)."""
        if self.ready(cfg):
            return self._pool
        done = self.start_background(cfg)
        done.wait(cfg.startup_timeout_s)
        if not self.ready(cfg):
            if done.is_set():  # that start failed: the next call tries again
                with self._start_lock:
                    self._starting = None
            return None
        return self._pool

    def _woke(self, deadline: float) -> None:
        """A wait that ended at ``deadline`` has woken up: remember how late (``_late``)."""
        late = max(0.0, time.monotonic() - deadline)
        self._late = max(late, self._late * 0.9)

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
            with self._start_lock:
                self._starting = None
            if self._executor is not None:
                self._executor.shutdown(wait=False)
                self._executor = None
                self._executor_size = 0

    # -- the jobs ------------------------------------------------------------------------------------

    def check(self, problem: str, text: str, key: tuple[tuple[str, Any], ...], cfg: GraderConfig,
              budget: Budget) -> CheckSummary:
        """The step check of ``text`` in a worker, answered within ``budget`` (else status ``timeout``)."""
        return self._in_worker(cfg, budget, CheckSummary, _run_check, problem, text, key)

    def math_verify(self, text: str, refs: list[str], cfg: GraderConfig, budget: Budget) -> Comparison:
        """Math-Verify's ``verify(parse(ref), parse(text))`` for each reference, in a worker (killable:
        Math-Verify's own timeouts use signals, which do not work outside the main thread)."""
        return self._in_worker(cfg, budget, Comparison, run_math_verify, text, refs)

    def answer(self, answer: str, refs: list[str], percent: str, decimal_rounding: bool, cfg: GraderConfig,
               budget: Budget) -> Comparison:
        """Our answer comparison in a worker: for the comparisons that need sympy or sample points."""
        return self._in_worker(cfg, budget, Comparison, run_answer_check, answer, refs, percent, decimal_rounding)

    @staticmethod
    def _run_retrying(pool: KillablePool, cfg: GraderConfig, limit: float, taken: list[float], fn: Any,
                      *args: Any) -> Any:
        """``pool.run`` waiting up to ``acquire_timeout_s`` for a free worker; when none freed because other
        calls' workers were killed meanwhile (their replacements are starting), wait again, up to
        ``startup_timeout_s`` in all: a call is never left unchecked by another call's failure while the
        pool is recovering. Raises as ``pool.run`` does."""
        give_up = time.monotonic() + max(cfg.acquire_timeout_s, cfg.startup_timeout_s)
        while True:
            restarts = pool.restarts
            try:
                return pool.run(fn, *args, wait_s=cfg.acquire_timeout_s, time_limit=limit,
                                on_submit=lambda: taken.append(time.monotonic()))
            except WorkerUnavailable:
                if pool.restarts == restarts or time.monotonic() >= give_up or not pool.ready:
                    raise

    def _in_worker(self, cfg: GraderConfig, budget: Budget, kind: type[J], fn: Any, *args: Any) -> J:
        """``fn(*args)``, a job answering a ``kind``, in a worker within what is left of ``budget``, counted
        from when a worker takes the job: waiting for the pool to start (at most ``startup_timeout_s``) or for a free worker (at most
        ``acquire_timeout_s``) is credited to the budget, never charged. Any failure is a status (never
        raised): ``pool_starting`` (the pool did not come up), ``worker_unavailable`` (no worker freed in
        time), ``timeout`` (the job overran: its worker is killed), ``worker_crashed``, ``error``, each a
        ``kind`` with only its status (and error) set."""
        t0 = time.monotonic()
        try:
            pool = self._started(cfg)
        except Exception as exc:  # noqa: BLE001 (isolation boundary: cannot start processes here at all)
            return kind("worker_unavailable", error=f"{type(exc).__name__}: {exc}")
        if pool is None:
            return kind("pool_starting", error="the worker processes did not start")
        budget.credit(time.monotonic() - t0)
        limit = budget.left() - min(self._late, MAX_SLACK * cfg.time_budget_s)
        if limit <= 0:
            return kind("timeout")
        t1 = time.monotonic()
        taken: list[float] = []
        try:
            out = self._run_retrying(pool, cfg, limit, taken, fn, *args)
        except JobTimeout:
            if taken:
                self._woke(taken[0] + limit)
            return kind("timeout")
        except WorkerCrashed as exc:
            return kind("worker_crashed", error=str(exc))
        except WorkerUnavailable as exc:
            return kind("worker_unavailable", error=str(exc))
        except Exception as exc:  # noqa: BLE001 (isolation boundary: e.g. an argument that cannot be pickled)
            return kind("error", error=f"{type(exc).__name__}: {str(exc)[:200]}")
        finally:
            if taken:
                budget.credit(taken[0] - t1)
        return out if isinstance(out, kind) else kind("error", error="unexpected worker answer")
