"""Killable worker processes: one implementation for everything that runs the pipeline out of process.

A *slot* is one worker process in its own single-process executor, so a job past its time
limit (or whose caller went away) can be stopped by killing that one process without
breaking the others; the slot is then started again. Every worker process

* has its address space capped (``memory_mb``, ``RLIMIT_AS``; 0 leaves it unlimited), so a
  runaway allocation ends as ``MemoryError`` inside the job, not as the machine swapping;
* ignores Ctrl-C (the parent decides when to stop) and
* watches its parent: if the parent dies (killed, crashed), the worker exits within a second
  instead of lingering as an orphan;
* runs ``warm`` once at start-up, before it counts as ready, so the first job is not charged
  for imports (``start`` is awaited, never a caller's time limit).

``KillablePool`` is the synchronous, thread-safe pool over slots: ``run(fn, *args,
time_limit=...)`` returns the result or raises ``JobTimeout`` (the worker was killed and is
being replaced) or ``WorkerCrashed``. ``faithsieve score`` uses it; the HTTP service builds its
asynchronous pool (admission, lanes: ``faithsieve.api.pool``) on the same ``Slot``.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from typing import Any

log = logging.getLogger(__name__)

ORPHAN_CHECK_S = 1.0
"""How often a worker checks that its parent is alive."""


class JobTimeout(Exception):
    """The job ran past its time limit; its worker was killed and is being replaced."""


class WorkerCrashed(Exception):
    """The worker process died while running the job (killed from outside, a crash in native code)."""


def mp_context(preload: Sequence[str] = ()) -> Any:
    """``forkserver`` (modules in ``preload`` imported once in the server) where available, else ``spawn``."""
    if "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        if preload:
            ctx.set_forkserver_preload(list(preload))
        return ctx
    return mp.get_context("spawn")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _watch_parent(parent: int) -> None:
    # the pool's process, not os.getppid(): under forkserver the OS parent is the fork server
    while True:
        time.sleep(ORPHAN_CHECK_S)
        if not _alive(parent):
            os._exit(0)


def init_worker(memory_mb: int, parent: int, initializer: Callable[..., None] | None = None,
                initargs: tuple[Any, ...] = ()) -> None:
    """Worker start-up: leave Ctrl-C to the parent, cap the address space, watch the parent, then
    run the caller's ``initializer``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if memory_mb > 0:
        try:
            import resource

            limit = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ImportError, ValueError, OSError) as exc:  # not on this platform, or above the hard limit
            log.warning("could not set the worker memory limit: %s", exc)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="orphan-watch").start()
    if initializer is not None:
        initializer(*initargs)


def worker_pid() -> int:
    """The default ``warm``: nothing to warm, answers the worker's pid."""
    return os.getpid()


class Slot:
    """One worker process in its own single-process executor."""

    def __init__(self, index: int, ctx: Any, memory_mb: int = 0, initializer: Callable[..., None] | None = None,
                 initargs: tuple[Any, ...] = (), warm: Callable[[], int] = worker_pid) -> None:
        self.index = index
        self._ctx = ctx
        self._memory_mb = memory_mb
        self._initializer = initializer
        self._initargs = initargs
        self._warm = warm
        self.executor: ProcessPoolExecutor | None = None
        self.pid: int | None = None

    def start(self) -> Future[int]:
        """Start the process; the future gives its pid once ``warm`` has run there."""
        self.executor = ProcessPoolExecutor(1, mp_context=self._ctx, initializer=init_worker,
                                            initargs=(self._memory_mb, os.getpid(), self._initializer, self._initargs))
        fut = self.executor.submit(self._warm)
        fut.add_done_callback(self._started)
        return fut

    def _started(self, fut: Future[int]) -> None:
        if not fut.cancelled() and fut.exception() is None:
            self.pid = fut.result()

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        assert self.executor is not None, "slot not started"
        return self.executor.submit(fn, *args)

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


class KillablePool:
    """``workers`` slots for synchronous callers (any thread): each job gets a time limit; a job past
    it, or a dead worker, costs that one slot a restart."""

    def __init__(self, workers: int, memory_mb: int = 0, initializer: Callable[..., None] | None = None,
                 initargs: tuple[Any, ...] = (), preload: Sequence[str] = (),
                 warm: Callable[[], int] = worker_pid, startup_timeout_s: float = 120.0) -> None:
        self.workers = workers
        self.restarts = 0
        """Slots restarted after a timeout or a crash."""
        self._ctx = mp_context(preload)
        self._slots = [Slot(i, self._ctx, memory_mb, initializer, initargs, warm) for i in range(workers)]
        self._idle: queue.SimpleQueue[Slot] = queue.SimpleQueue()
        self._startup_timeout_s = startup_timeout_s
        self._threads: ThreadPoolExecutor | None = None
        self._closed = False

    def start(self) -> KillablePool:
        """Start every worker and wait until each has run ``warm``."""
        futures = [s.start() for s in self._slots]
        for slot, fut in zip(self._slots, futures):
            fut.result(self._startup_timeout_s)
            self._idle.put(slot)
        return self

    def __enter__(self) -> KillablePool:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def worker_pids(self) -> list[int]:
        return [s.pid for s in self._slots if s.pid is not None]

    def _replace(self, slot: Slot) -> None:
        slot.kill()
        self.restarts += 1
        if self._closed:
            return
        try:
            slot.start().result(self._startup_timeout_s)
        except Exception as exc:  # noqa: BLE001 - retried by the next job that gets this slot
            log.error("restarting worker %d failed: %r", slot.index, exc)
            slot.kill()
        self._idle.put(slot)

    def run(self, fn: Callable[..., Any], *args: Any, time_limit: float | None = None) -> Any:
        """``fn(*args)`` in a worker, at most ``time_limit`` seconds (None: no limit)."""
        slot = self._idle.get()
        if slot.executor is None:  # a restart failed earlier: try again now
            try:
                slot.start().result(self._startup_timeout_s)
            except Exception:
                slot.kill()
                self._idle.put(slot)
                raise WorkerCrashed("the worker could not be started") from None
        fut = slot.submit(fn, *args)
        try:
            result = fut.result(time_limit)
        except FutureTimeout:
            self._replace(slot)
            raise JobTimeout(f"the job ran past its time limit ({time_limit:g} s)") from None
        except BrokenProcessPool:
            self._replace(slot)
            raise WorkerCrashed("the worker process died during the job") from None
        except BaseException:
            self._idle.put(slot)  # the job raised: the worker is fine
            raise
        self._idle.put(slot)
        return result

    def submit(self, fn: Callable[..., Any], *args: Any, time_limit: float | None = None) -> Future[Any]:
        """``run`` in the background; at most ``workers`` jobs run at once, the rest wait their turn."""
        if self._threads is None:
            self._threads = ThreadPoolExecutor(self.workers, thread_name_prefix="killable-pool")
        return self._threads.submit(self.run, fn, *args, time_limit=time_limit)

    def close(self) -> None:
        """Stop every worker now (jobs in progress fail)."""
        self._closed = True
        for slot in self._slots:
            slot.kill()
        if self._threads is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)
