"""The worker pool: CPU-bound checking off the event loop, with admission, time limits and kill-on-cancel.

Each worker is a ``ProcessPoolExecutor`` of one process (a *slot*), so that a job past
its time limit, or whose client went away, can be stopped by killing that one process
without breaking the jobs of the others; the slot is then replaced in the background.
Admission is a counter with a hard bound (``max_pending``): a request that would exceed
it is refused with 429 and a ``Retry-After`` estimate, so nothing queues without bound.
Admitted jobs wait, first come first served, for an idle slot.
"""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing as mp
import os
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any

from faithsieve.api.errors import NotReady, RequestTimeout, Saturated, WorkerFailed
from faithsieve.api.metrics import ServiceMetrics
from faithsieve.api.worker import JobResult, init_worker, warm
from faithsieve.config import Settings

log = logging.getLogger(__name__)

Job = Callable[[dict[str, Any], Settings], JobResult]

# the solvers are imported lazily by the pipeline: the fork server preloads them so no worker pays for them
_PRELOAD = ["faithsieve.pipeline", "faithsieve.split", "faithsieve.cli", "faithsieve.api.worker", "sympy", "z3", "networkx"]
_RESTART_DELAYS = (0.0, 0.5, 2.0, 5.0)


def _mp_context() -> Any:
    if "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(_PRELOAD)
        return ctx
    return mp.get_context("spawn")


class _Slot:
    """One worker process in its own single-process executor."""

    def __init__(self, index: int, ctx: Any, memory_mb: int) -> None:
        self.index = index
        self._ctx = ctx
        self._memory_mb = memory_mb
        self.executor: ProcessPoolExecutor | None = None
        self.pid: int | None = None

    async def start(self) -> None:
        self.executor = ProcessPoolExecutor(1, mp_context=self._ctx, initializer=init_worker,
                                            initargs=(self._memory_mb,))
        self.pid = await asyncio.wrap_future(self.executor.submit(warm))

    def submit(self, job: Job, data: dict[str, Any], settings: Settings) -> Future[JobResult]:
        assert self.executor is not None
        return self.executor.submit(job, data, settings)

    def kill(self) -> None:
        """Stop the process now (whatever it is doing) and drop the executor."""
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)
        self.executor, self.pid = None, None


class WorkerPool:
    """``workers`` slots, an idle queue, an admission counter, and the job to run."""

    def __init__(self, workers: int, max_pending: int, memory_mb: int, metrics: ServiceMetrics,
                 job: Job) -> None:
        self.workers = workers
        self.capacity = max_pending
        self.pending = 0
        self._memory_mb = memory_mb
        self._metrics = metrics
        self._job = job
        self._slots: list[_Slot] = []
        self._idle: asyncio.Queue[_Slot] | None = None
        self._up = 0
        self._closing = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._job_seconds = 0.5
        """Moving average of a job's duration, for ``Retry-After``."""

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start every worker and wait until each has run the pipeline once."""
        ctx = _mp_context()
        self._idle = asyncio.Queue()
        self._slots = [_Slot(i, ctx, self._memory_mb) for i in range(self.workers)]
        results = await asyncio.gather(*(s.start() for s in self._slots), return_exceptions=True)
        for slot, res in zip(self._slots, results):
            if isinstance(res, BaseException):
                log.error("worker %d failed to start: %r", slot.index, res)
                slot.kill()
                self._spawn(self._restart(slot))
            else:
                self._up += 1
                self._idle.put_nowait(slot)
        log.info("worker pool up: %d/%d workers", self._up, self.workers)

    async def close(self) -> None:
        """Stop all workers; pending jobs fail."""
        self._closing = True
        for t in list(self._tasks):
            t.cancel()
        for slot in self._slots:
            slot.kill()
        self._up = 0

    @property
    def up(self) -> int:
        """Workers running and warm."""
        return self._up

    @property
    def worker_pids(self) -> list[int]:
        """Process ids of the workers now up."""
        return [s.pid for s in self._slots if s.pid is not None]

    @property
    def accepting(self) -> bool:
        """Started and not stopping: requests are admitted (they wait while a worker restarts)."""
        return self._idle is not None and not self._closing

    @property
    def ready(self) -> bool:
        """Accepting, with at least one worker up."""
        return self.accepting and self._up > 0

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _restart(self, slot: _Slot) -> None:
        for delay in (*_RESTART_DELAYS, *([_RESTART_DELAYS[-1]] * 1000)):
            if self._closing:
                return
            await asyncio.sleep(delay)
            try:
                await slot.start()
            except Exception as exc:  # fork failed, out of memory...: try again later
                log.error("restarting worker %d failed: %r", slot.index, exc)
                slot.kill()
                continue
            if self._closing:
                slot.kill()
                return
            self._up += 1
            assert self._idle is not None
            self._idle.put_nowait(slot)
            return

    def _retire(self, slot: _Slot, reason: str) -> None:
        slot.kill()
        self._up -= 1
        self._metrics.restarts.inc(reason)
        if not self._closing:
            self._spawn(self._restart(slot))

    # -- admission -----------------------------------------------------------------------------

    def retry_after(self) -> int:
        """Seconds until a slot is likely free: pending jobs per worker times the mean job time."""
        estimate = (self.pending / max(1, self.workers)) * self._job_seconds
        return max(1, min(60, math.ceil(estimate)))

    @contextmanager
    def admit(self, n: int = 1) -> Iterator[None]:
        """Reserve ``n`` admissions for the duration of the block, or raise 429/503 now."""
        if not self.accepting:
            raise NotReady("the worker pool is not running", headers={"Retry-After": "1"})
        if self.pending + n > self.capacity:
            self._metrics.rejections.inc("saturated")
            raise Saturated(f"the server is at capacity ({self.pending} proofs pending, at most {self.capacity}); "
                            "retry later", {"pending": self.pending, "capacity": self.capacity},
                            headers={"Retry-After": str(self.retry_after())})
        self.pending += n
        try:
            yield
        finally:
            self.pending -= n

    # -- running -------------------------------------------------------------------------------

    async def run(self, data: dict[str, Any], settings: Settings, deadline: float, run_limit: float) -> JobResult:
        """Run the job on one input: wait for an idle slot until ``deadline`` (loop time), then allow
        it at most ``run_limit`` seconds (and never past ``deadline``). Cancelling the caller
        kills the worker if the job had started."""
        assert self._idle is not None, "pool not started"
        loop = asyncio.get_running_loop()
        try:
            slot = await asyncio.wait_for(self._idle.get(), max(0.0, deadline - loop.time()))
        except asyncio.TimeoutError:
            self._metrics.timeouts.inc("queue")
            raise Saturated("no worker became free within the time limit; retry later",
                            {"pending": self.pending, "capacity": self.capacity},
                            headers={"Retry-After": str(self.retry_after())}) from None
        if self._closing or slot.executor is None:
            raise NotReady("the worker pool is shutting down")
        task = asyncio.current_task()
        if task is not None and getattr(task, "cancelling", lambda: 0)():
            self._idle.put_nowait(slot)  # cancelled just as a slot came free: give it back
            raise asyncio.CancelledError
        limit = max(0.0, min(run_limit, deadline - loop.time()))
        started = loop.time()
        fut: Future[JobResult] | None = None
        retire: str | None = None
        try:
            fut = slot.submit(self._job, data, settings)
            result = await asyncio.wait_for(asyncio.wrap_future(fut), limit)
        except asyncio.TimeoutError:
            retire = "timeout"
            self._metrics.timeouts.inc("worker")
            raise RequestTimeout(f"checking this proof took longer than the time limit ({limit:.1f} s); "
                                 "the work was stopped", {"time_limit_s": round(limit, 3)}) from None
        except asyncio.CancelledError:
            retire = "cancelled"
            raise
        except BrokenProcessPool:
            retire = "crashed"
            raise WorkerFailed("a worker process died while checking this proof") from None
        except Exception as exc:  # the job raised: the worker is fine, the job code is not
            log.exception("job raised", exc_info=exc)
            raise WorkerFailed(f"a worker failed ({type(exc).__name__})") from None
        finally:
            if retire == "crashed" or (retire is not None and fut is not None and not fut.done()):
                self._retire(slot, retire)
            elif not self._closing:
                self._idle.put_nowait(slot)
        self._job_seconds = 0.8 * self._job_seconds + 0.2 * (loop.time() - started)
        return result
