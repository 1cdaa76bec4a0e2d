"""The worker pool: CPU-bound checking off the event loop, with admission, lanes, time limits and kill-on-cancel.

Each worker is a *slot* of the shared killable pool (``faithsieve.runtime.workers.Slot``: one process
with a memory cap and an orphan watch), so that a job past its time limit, or whose client went
away, can be stopped by killing that one process without breaking the jobs of the others; the
slot is then replaced in the background.
Admission is a counter with a hard bound (``max_pending``): a request that would exceed
it is refused with 429 and a ``Retry-After`` estimate, so nothing queues without bound.
Admitted jobs wait, first come first served, for an idle slot. Jobs estimated heavy
(``faithsieve.api.admission``) first wait for a place in the heavy lane, which holds at most
``heavy_workers`` slots, and have their own admission bound, so light jobs always find a worker.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any

from faithsieve.api.admission import Lane
from faithsieve.api.errors import NotReady, RequestTimeout, Saturated, WorkerFailed
from faithsieve.api.metrics import ServiceMetrics
from faithsieve.api.worker import JobResult, warm

from faithsieve.core.settings import Settings
from faithsieve.runtime.workers import Slot, mp_context
from faithsieve.warmup import OFFLINE_MODULES

log = logging.getLogger(__name__)

Job = Callable[[dict[str, Any], Settings], JobResult]

# the solvers are imported lazily by the pipeline: the fork server preloads them (OFFLINE_MODULES) so no worker pays for them
_PRELOAD = [*OFFLINE_MODULES, "faithsieve.api.worker"]
_RESTART_DELAYS = (0.0, 0.5, 2.0, 5.0)


def _consume(fut: asyncio.Future[Any]) -> None:
    """Retrieve a job future's outcome, so a killed job's error is not reported as never retrieved."""
    if not fut.cancelled():
        fut.exception()


async def _start(slot: Slot) -> None:
    await asyncio.wrap_future(slot.start())


class WorkerPool:
    """``workers`` slots, an idle queue, an admission counter, and the job to run."""

    def __init__(self, workers: int, max_pending: int, memory_mb: int, metrics: ServiceMetrics,
                 job: Job, heavy_workers: int | None = None, heavy_max_pending: int | None = None) -> None:
        self.workers = workers
        self.capacity = max_pending
        self.pending = 0
        self.heavy_workers = heavy_workers if heavy_workers is not None else max(1, workers - 1)
        """Most workers heavy proofs may hold at once (the others stay free for light ones)."""
        self.heavy_capacity = min(max_pending, heavy_max_pending if heavy_max_pending is not None else max_pending)
        """Most heavy proofs admitted at once."""
        self.heavy_pending = 0
        self._heavy_lane: asyncio.Semaphore | None = None
        self._memory_mb = memory_mb
        self._metrics = metrics
        self._job = job
        self._slots: list[Slot] = []
        self._idle: asyncio.Queue[Slot] | None = None
        self._up = 0
        self._closing = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._job_seconds = 0.5
        """Moving average of a job's duration, for ``Retry-After``."""

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start every worker and wait until each has run the pipeline once."""
        ctx = mp_context(_PRELOAD)
        self._idle = asyncio.Queue()
        self._heavy_lane = asyncio.Semaphore(self.heavy_workers)
        self._slots = [Slot(i, ctx, self._memory_mb, warm=warm) for i in range(self.workers)]
        results = await asyncio.gather(*(_start(s) for s in self._slots), return_exceptions=True)
        for slot, res in zip(self._slots, results, strict=True):
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

    @property
    def restarting(self) -> int:
        """Workers being replaced (requests wait for them)."""
        return 0 if self._idle is None or self._closing else self.workers - self._up

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _restart(self, slot: Slot) -> None:
        for delay in (*_RESTART_DELAYS, *([_RESTART_DELAYS[-1]] * 1000)):
            if self._closing:
                return
            await asyncio.sleep(delay)
            try:
                await _start(slot)
            except Exception as exc:  # noqa: BLE001 (isolation boundary: fork failed, out of memory, a crash...: try again later)
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

    def _retire(self, slot: Slot, reason: str) -> None:
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
    def admit(self, n: int = 1, heavy: int = 0) -> Iterator[None]:
        """Reserve ``n`` admissions, ``heavy`` of them in the heavy lane, for the duration of the block,
        or raise 429/503 now."""
        if not self.accepting:
            raise NotReady("the worker pool is not running", headers={"Retry-After": "1"})
        heavy = min(heavy, self.heavy_capacity)  # a batch with more heavy items still fits an empty lane
        if self.pending + n > self.capacity:
            self._metrics.rejections.inc("saturated")
            raise Saturated(f"the server is at capacity ({self.pending} proofs pending, at most {self.capacity}); "
                            "retry later", {"pending": self.pending, "capacity": self.capacity},
                            headers={"Retry-After": str(self.retry_after())})
        if heavy and self.heavy_pending + heavy > self.heavy_capacity:
            self._metrics.rejections.inc("saturated_heavy")
            raise Saturated(f"the server is at capacity for large or expensive proofs ({self.heavy_pending} pending, "
                            f"at most {self.heavy_capacity}); retry later",
                            {"pending": self.heavy_pending, "capacity": self.heavy_capacity, "lane": "heavy"},
                            headers={"Retry-After": str(self.retry_after())})
        self.pending += n
        self.heavy_pending += heavy
        try:
            yield
        finally:
            self.pending -= n
            self.heavy_pending -= heavy

    # -- running -------------------------------------------------------------------------------

    async def run(self, data: dict[str, Any], settings: Settings, deadline: float, run_limit: float,
                  lane: Lane = "light", keep_on_deadline: bool = False, job: Job | None = None) -> JobResult:
        """Run the job (``job``, or the pool's) on one input: wait for an idle slot (a heavy job first for a place in the heavy
        lane) until ``deadline`` (loop time), then allow it at most ``run_limit`` seconds (and never
        past ``deadline``). Cancelling the caller kills the worker if the job had started.

        With ``keep_on_deadline`` (batch items), a job cut off by ``deadline`` before its own ``run_limit``
        answers 504 at once but keeps its worker: the job finishes in the background (the pipeline
        honours its own budget) and the slot returns; only a job past ``run_limit`` is killed."""
        assert self._idle is not None and self._heavy_lane is not None, "pool not started"
        loop = asyncio.get_running_loop()
        heavy = lane == "heavy"
        if heavy:
            try:
                await asyncio.wait_for(self._heavy_lane.acquire(), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                self._metrics.timeouts.inc("queue")
                raise self._saturated("no place in the heavy lane became free within the time limit") from None
        try:
            slot = await asyncio.wait_for(self._idle.get(), max(0.0, deadline - loop.time()))
        except asyncio.TimeoutError:
            self._release_lane(heavy)
            self._metrics.timeouts.inc("queue")
            raise self._saturated("no worker became free within the time limit; retry later") from None
        except BaseException:
            self._release_lane(heavy)
            raise
        if self._closing or slot.executor is None:
            self._release_lane(heavy)
            raise NotReady("the worker pool is shutting down")
        task = asyncio.current_task()
        if task is not None and getattr(task, "cancelling", lambda: 0)():
            self._idle.put_nowait(slot)  # cancelled just as a slot came free: give it back
            self._release_lane(heavy)
            raise asyncio.CancelledError
        limit = max(0.0, min(run_limit, deadline - loop.time()))
        started = loop.time()
        fut: Future[JobResult] | None = None
        retire: str | None = None
        detached = False
        try:
            fut = slot.submit(job or self._job, data, settings)
            waiter = asyncio.wrap_future(fut)
            waiter.add_done_callback(_consume)
            result = await asyncio.wait_for(asyncio.shield(waiter), limit)
        except asyncio.TimeoutError:
            self._metrics.timeouts.inc("worker")
            if keep_on_deadline and fut is not None and not fut.done() and limit < run_limit and not self._closing:
                detached = True  # cut off by the caller's deadline, not its own limit: let it finish
                self._spawn(self._reclaim(slot, waiter, started + run_limit, heavy))
            else:
                retire = "timeout"
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
            if not detached:
                if retire == "crashed" or (retire is not None and fut is not None and not fut.done()):
                    self._retire(slot, retire)
                elif not self._closing:
                    self._idle.put_nowait(slot)
                self._release_lane(heavy)
        self._job_seconds = 0.8 * self._job_seconds + 0.2 * (loop.time() - started)
        return result

    async def _reclaim(self, slot: Slot, fut: asyncio.Future[JobResult], kill_at: float, heavy: bool) -> None:
        """Wait for a detached job until ``kill_at``; then give its slot back, or kill it if still running."""
        loop = asyncio.get_running_loop()
        try:
            await asyncio.wait_for(asyncio.shield(fut), max(0.0, kill_at - loop.time()))
        except asyncio.TimeoutError:
            self._retire(slot, "timeout")
            return
        except BaseException:  # noqa: BLE001 (crashed, or the pool is closing: CancelledError is a BaseException)
            if not fut.done() or not self._closing:
                self._retire(slot, "crashed")
            return
        finally:
            self._release_lane(heavy)
        if self._closing:
            slot.kill()
        else:
            assert self._idle is not None
            self._idle.put_nowait(slot)

    def _release_lane(self, heavy: bool) -> None:
        if heavy and self._heavy_lane is not None:
            self._heavy_lane.release()

    def _saturated(self, message: str) -> Saturated:
        return Saturated(message, {"pending": self.pending, "capacity": self.capacity},
                         headers={"Retry-After": str(self.retry_after())})
