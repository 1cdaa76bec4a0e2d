"""Killable worker processes: one implementation for everything that runs the pipeline out of process.

A *slot* is one worker process in its own single-process executor, so a job past its time
limit (or whose caller went away) can be stopped by killing that one process without
breaking the others; the slot is then started again. Every worker process

* has its address space capped (``memory_mb``, the soft ``RLIMIT_AS``, or the lower cap it inherited; 0
  leaves it as inherited), so a runaway allocation ends as ``MemoryError`` inside the job, not as the
  machine swapping; the hard limit is left as inherited, so a process the worker starts (the Lean REPL)
  can be given more, up to it;
* ignores Ctrl-C (the parent decides when to stop) and
* watches its parent: if the parent dies (killed, crashed), the worker exits within a second
  instead of lingering as an orphan;
* runs ``warm`` once at start-up, before it counts as ready, so the first job is not charged
  for imports (``start`` is awaited, never a caller's time limit).

``KillablePool`` is the synchronous, thread-safe pool over slots: ``run(fn, *args,
time_limit=..., wait_s=..., deadline=...)`` returns the result or raises ``JobTimeout`` (the worker
was killed; its replacement starts in the background), ``WorkerCrashed`` or ``WorkerUnavailable``
(no worker free in time). ``faithsieve score`` and the RL grader (``faithsieve.grading.pool``) use it;
the HTTP service builds its asynchronous pool (admission, lanes: ``faithsieve.api.pool``) on the
same ``Slot``.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import multiprocessing as mp
import os
import queue
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import spawn as mp_spawn
from pathlib import Path
from typing import Any

from faithsieve.core.errors import FaithSieveError

log = logging.getLogger(__name__)

ORPHAN_CHECK_S = 1.0
"""How often a worker checks that its parent is alive."""

_RESTART_DELAYS = (0.0, 0.5, 1.0, 2.0, 5.0)
"""Pauses before the attempts to restart a slot (the last one repeats until it starts)."""


class JobTimeout(FaithSieveError):
    """The job ran past its time limit; its worker was killed and is being replaced."""

    code = "job_timeout"
    status = 504


class WorkerCrashed(FaithSieveError):
    """The worker process died while running the job (killed from outside, a crash in native code)."""

    code = "worker_crashed"
    status = 500


def mp_context(preload: Sequence[str] = ()) -> Any:
    """``forkserver`` (modules in ``preload`` imported once in the server) where available, else ``spawn``.

    The fork server is started as ``python -c``, which puts the current directory first on its
    ``sys.path`` (multiprocessing passes it the parent's path and ignores it): run from a source checkout
    with the package installed (``pip install .``), it imported the checkout's ``faithsieve/`` instead of
    the installed one (``No module named 'faithsieve.lean'``). In that case only it is started with
    ``PYTHONSAFEPATH=1``, which keeps that directory off; Python 3.10 has no such switch and gets ``spawn``
    there (its children take the parent's path)."""
    shadowed = _cwd_shadows_package()
    if "forkserver" in mp.get_all_start_methods() and (sys.version_info >= (3, 11) or not shadowed):
        ctx = mp.get_context("forkserver")
        if preload:
            ctx.set_forkserver_preload(list(preload))
        if shadowed:
            _start_forkserver_safe_path()
        return ctx
    return mp.get_context("spawn")


def _cwd_shadows_package() -> bool:
    """The current directory holds a ``faithsieve/`` that is not the package this process imported."""
    here = Path.cwd() / "faithsieve"
    ours = Path(__file__).resolve().parents[1]
    try:
        return here.is_dir() and here.resolve() != ours
    except OSError:
        return False


_ENV_LOCK = threading.Lock()


def _start_forkserver_safe_path() -> None:
    """Start (or find running) the fork server with ``PYTHONSAFEPATH=1`` in its environment only."""
    from multiprocessing import forkserver

    with _ENV_LOCK:
        before = os.environ.get("PYTHONSAFEPATH")
        os.environ["PYTHONSAFEPATH"] = "1"
        try:
            forkserver.ensure_running()
        finally:
            if before is None:
                os.environ.pop("PYTHONSAFEPATH", None)
            else:
                os.environ["PYTHONSAFEPATH"] = before


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


_PR_SET_PDEATHSIG = 1


def _set_pdeathsig() -> bool:
    try:
        import ctypes

        return int(ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _start_killer(parent: int) -> None:
    """Linux: a forked watcher (no threads, so no GIL to wait for) that SIGKILLs this worker once ``parent``
    (the pool's process) is gone, and dies with the worker (PR_SET_PDEATHSIG). The orphan watch's thread
    cannot run while a job holds the GIL in one long C call (a big integer power): a killed ``score``'s
    workers lived on 75 s holding its pipes."""
    if not sys.platform.startswith("linux"):
        return
    worker = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        return
    if pid:
        return
    try:  # the watcher: only system calls from here on
        if _set_pdeathsig() and os.getppid() == worker:
            while _alive(parent) and os.getppid() == worker:
                time.sleep(ORPHAN_CHECK_S)
            if os.getppid() == worker:
                os.kill(worker, signal.SIGKILL)
    finally:
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
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            if hard != resource.RLIM_INFINITY:
                limit = min(limit, hard)  # already capped lower from outside (prlimit, ulimit -v): keep that cap
            # the soft limit only: the hard one stays as inherited, so a child this worker starts (the Lean REPL,
            # which maps GiBs of Mathlib .olean files) can raise its own soft limit up to it without privileges
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        except (ImportError, ValueError, OSError) as exc:  # not on this platform, or above the hard limit
            log.warning("could not set the worker memory limit: %s", exc)
    _start_killer(parent)  # before any thread of ours: the fork copies only the calling thread
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="orphan-watch").start()
    if initializer is not None:
        initializer(*initargs)


def worker_pid() -> int:
    """The default ``warm``: nothing to warm, answers the worker's pid."""
    return os.getpid()


class WorkerUnavailable(FaithSieveError):
    """No worker became free (or could be started) within the wait allowed; the job did not run."""

    code = "worker_unavailable"
    status = 503


_LAUNCH = threading.local()
_ORIGINAL_PREPARATION = mp_spawn.get_preparation_data


def _preparation_data(name: str) -> dict[str, Any]:
    """``multiprocessing.spawn.get_preparation_data``, less the parent's ``__main__`` while this thread
    starts a ``clean_main`` slot (every other process start is left as it was)."""
    data = _ORIGINAL_PREPARATION(name)
    if getattr(_LAUNCH, "clean_main", False):
        for key in ("init_main_from_name", "init_main_from_path", "main_path"):
            data.pop(key, None)
    return data


mp_spawn.get_preparation_data = _preparation_data


class Slot:
    """One worker process in its own single-process executor. ``clean_main``: the worker does not
    import the parent's ``__main__`` (a trainer script need not be import-safe, and its imports are
    not paid again in every worker); jobs must then be functions of importable modules."""

    def __init__(self, index: int, ctx: Any, memory_mb: int = 0, initializer: Callable[..., None] | None = None,
                 initargs: tuple[Any, ...] = (), warm: Callable[[], int] = worker_pid,
                 clean_main: bool = False) -> None:
        self.index = index
        self._ctx = ctx
        self._memory_mb = memory_mb
        self._initializer = initializer
        self._initargs = initargs
        self._warm = warm
        self._clean_main = clean_main
        self.executor: ProcessPoolExecutor | None = None
        self.pid: int | None = None

    def start(self) -> Future[int]:
        """Start the process; the future gives its pid once ``warm`` has run there and ``self.pid`` holds it
        (the future answers only after the pid is recorded: a slot whose start has answered never reads as
        dead for want of a pid)."""
        self.executor = ProcessPoolExecutor(1, mp_context=self._ctx, initializer=init_worker,
                                            initargs=(self._memory_mb, os.getpid(), self._initializer, self._initargs))
        _LAUNCH.clean_main = self._clean_main
        try:
            fut = self.executor.submit(self._warm)  # the executor starts its process here
        except (EOFError, ConnectionError, BrokenProcessPool) as exc:  # the fork server died, or no process
            self.kill()
            raise WorkerUnavailable(f"a worker process could not be started ({type(exc).__name__}: the fork server "
                                    "died at start-up, or the system refused a new process)") from None
        finally:
            _LAUNCH.clean_main = False
        started: Future[int] = Future()
        fut.add_done_callback(lambda done: self._started(done, started))
        return started

    def _started(self, warm: Future[int], started: Future[int]) -> None:
        """``warm``'s outcome passed on to ``started``, the pid recorded first. (The executor's own future wakes
        its waiters before it runs its callbacks, so a waiter on it could see the start done and no pid yet.)"""
        if warm.cancelled():  # the slot was stopped before its process ran ``warm``
            started.set_exception(WorkerUnavailable("the worker was stopped before it started"))
            return
        exc = warm.exception()
        if exc is not None:
            started.set_exception(exc)
            return
        self.pid = warm.result()
        started.set_result(self.pid)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        assert self.executor is not None, "slot not started"
        return self.executor.submit(fn, *args)

    def alive(self) -> bool:
        """The process exists and is not a zombie (started slots only)."""
        if self.executor is None or self.pid is None or not _alive(self.pid):
            return False
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as fh:
                return fh.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
        except OSError:  # no /proc here: os.kill said it exists
            return True

    def signal_kill(self) -> None:
        """SIGKILL the process (constant time; ``kill`` also drops the executor)."""
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def kill(self, settle_s: float = 0.0) -> None:
        """Stop the process now (whatever it is doing) and drop the executor. With ``settle_s``, wait that long
        at most for the executor's manager thread to finish its cleanup: at interpreter exit,
        ``concurrent.futures`` wakes every manager thread through a pipe that thread closes as it ends,
        and a thread still ending then makes the wake-up write to a closed pipe ("Exception ignored ...
        Bad file descriptor" on stderr). A killed process's manager thread ends within milliseconds."""
        self.signal_kill()
        executor = self.executor
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
            manager = getattr(executor, "_executor_manager_thread", None)
            if settle_s > 0 and isinstance(manager, threading.Thread) and manager is not threading.current_thread():
                manager.join(settle_s)
        self.executor, self.pid = None, None


class _Idle:
    """The free slots, first in first out; ``get`` keeps to its timeout under contention (a
    ``queue.SimpleQueue.get(timeout=...)`` with many waiting threads was measured overrunning its
    timeout by seconds)."""

    def __init__(self) -> None:
        self._slots: deque[Slot] = deque()
        self._cond = threading.Condition()

    def put(self, slot: Slot) -> None:
        with self._cond:
            self._slots.append(slot)
            self._cond.notify()

    def get(self, timeout: float | None = None) -> Slot:
        """The next free slot; ``queue.Empty`` when none is free within ``timeout`` seconds."""
        end = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._slots:
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    raise queue.Empty
                self._cond.wait(left)
            return self._slots.popleft()

    def qsize(self) -> int:
        return len(self._slots)


_SETTLE_S = 2.0
"""How long ``close`` waits at most for each killed worker's executor to finish its cleanup (``Slot.kill``)."""


class KillablePool:
    """``workers`` slots for synchronous callers (any thread): each job gets a time limit; a job past
    it, or a dead worker, costs that one slot a restart, done in the background (the caller gets its
    answer at once; the other slots keep serving).

    ``retire(result)``: when true, the worker that produced ``result`` is replaced after answering
    (say, after a ``MemoryError`` that may have left it in a bad state). A pool used in a process
    forked from the one that built it starts its own workers there (the parent's are not touched)."""

    def __init__(self, workers: int, memory_mb: int = 0, initializer: Callable[..., None] | None = None,
                 initargs: tuple[Any, ...] = (), preload: Sequence[str] = (),
                 warm: Callable[[], int] = worker_pid, startup_timeout_s: float = 120.0,
                 retire: Callable[[Any], bool] | None = None, clean_main: bool = False) -> None:
        self.workers = workers
        self.restarts = 0
        """Slots restarted after a timeout, a crash or a retiring result."""
        self._ctx = mp_context(preload)
        self._slot_args = (memory_mb, initializer, initargs, warm, clean_main)
        self._startup_timeout_s = startup_timeout_s
        self._retire_if = retire
        self._lock = threading.Lock()
        self._generation = 0
        self._pid: int  # the process that owns the slots: set by _own
        self._own(force=True)

    def _own(self, force: bool = False) -> None:
        """(Re)build the per-process state: at construction, after ``close``, and in a forked child on
        first use."""
        if not force and self._pid == os.getpid():
            return
        with self._lock:
            if not force and self._pid == os.getpid():
                return
            if not force:  # a forked child: the parent's fork server is not its child; start workers afresh
                self._ctx = mp.get_context("spawn")
            self._pid = os.getpid()
            self._generation += 1  # restarts still pending from before are dropped
            self._start_lock = threading.Lock()
            self._slots = [Slot(i, self._ctx, *self._slot_args) for i in range(self.workers)]
            self._idle = _Idle()
            self._janitor: queue.SimpleQueue[Slot] | None = None
            self._threads: ThreadPoolExecutor | None = None
            self._started = False
            self._closed = False

    @property
    def ready(self) -> bool:
        """Started in this process (a forked child's copy is not) and not closed."""
        return self._pid == os.getpid() and self._started and not self._closed

    def start(self) -> KillablePool:
        """Start every worker and wait until each has run ``warm`` (so no job is charged for a start-up).
        Raises ``WorkerUnavailable`` when one does not come up within ``startup_timeout_s``."""
        self._own(force=self._closed and self._pid == os.getpid())
        with self._start_lock:
            if self.ready:  # another thread started it meanwhile
                return self
            try:
                self._start_slots(self._slots)
            finally:
                self._started = True  # a slot that failed is being restarted in the background
        return self

    def start_soon(self) -> Future[KillablePool]:
        """``start`` in a background thread, so the workers come up (the fork server importing the preloaded
        modules) while the caller does other work; the future holds the start's outcome (``WorkerUnavailable``
        when a worker did not come up). A job run meanwhile waits for that start."""
        started: Future[KillablePool] = Future()

        def start() -> None:
            try:
                started.set_result(self.start())
            except BaseException as exc:  # noqa: BLE001 - handed to whoever waits on the future
                started.set_exception(exc)

        threading.Thread(target=start, daemon=True, name="killable-pool-start").start()
        return started

    def _start_slots(self, slots: list[Slot]) -> None:
        futures = [s.start() for s in slots]
        failed = None
        for slot, fut in zip(slots, futures, strict=True):
            try:
                fut.result(self._startup_timeout_s)
            except Exception as exc:  # noqa: BLE001 - reported below; the slot is retried in the background
                failed = failed or exc
                self._retire(slot)
                continue
            self._idle.put(slot)
        if failed is not None:
            raise WorkerUnavailable(f"a worker did not start: {failed!r}")

    def grow(self, workers: int) -> None:
        """Add slots up to ``workers`` (started and warm before this returns)."""
        self._own()
        with self._lock:
            new = [Slot(i, self._ctx, *self._slot_args) for i in range(len(self._slots), workers)]
            self._slots.extend(new)
            self.workers = len(self._slots)
        if new and self._started:
            self._start_slots(new)

    def __enter__(self) -> KillablePool:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def worker_pids(self) -> list[int]:
        return [s.pid for s in self._slots if s.pid is not None]

    @property
    def idle(self) -> int:
        """Workers up and free now."""
        return self._idle.qsize() if self.ready else 0

    def _retire(self, slot: Slot) -> None:
        """Kill ``slot``'s process now; its replacement starts in the background."""
        slot.signal_kill()
        with self._lock:
            self.restarts += 1
            if self._janitor is None:
                self._janitor = queue.SimpleQueue()
                threading.Thread(target=self._restarts, args=(self._janitor, self._generation), daemon=True,
                                 name="killable-pool-restart").start()
            self._janitor.put(slot)

    def _restarts(self, jobs: queue.SimpleQueue[Slot], generation: int) -> None:
        while True:
            slot = jobs.get()
            slot.kill()
            for attempt in itertools.count():
                if self._closed or self._generation != generation:
                    break
                delay = _RESTART_DELAYS[min(attempt, len(_RESTART_DELAYS) - 1)]
                time.sleep(delay)
                try:
                    slot.start().result(self._startup_timeout_s)
                except Exception as exc:  # noqa: BLE001 - fork failed, out of memory...: try again
                    slot.kill()
                    if isinstance(exc, RuntimeError) and not isinstance(exc, BrokenProcessPool):
                        return  # a new executor refuses work only while the interpreter exits
                    log.error("restarting worker %d failed: %r", slot.index, exc)
                    continue
                if self._closed or self._generation != generation:
                    slot.kill()
                else:
                    self._idle.put(slot)
                break

    def _acquire(self, until: float | None) -> Slot:
        try:
            if until is None:
                return self._idle.get()
            return self._idle.get(timeout=max(0.0, until - time.monotonic()))
        except queue.Empty:
            raise WorkerUnavailable("no worker became free in time") from None

    def run(self, fn: Callable[..., Any], *args: Any, time_limit: float | None = None,
            wait_s: float | None = None, deadline: float | None = None,
            on_submit: Callable[[], None] | None = None) -> Any:
        """``fn(*args)`` in a worker. ``time_limit``: seconds for the job once a worker has it (None: no
        limit); ``wait_s``: how long to wait for a free worker (None: as long as it takes, else
        ``WorkerUnavailable``); ``deadline``: a ``time.monotonic()`` by which both end; ``on_submit``: called
        once a worker has taken the job (the caller learns how long it waited). A pool not yet started here
        is started first, whatever the limits (start-up is never charged to a job)."""
        if not self.ready:
            if self._closed and self._pid == os.getpid():
                raise WorkerUnavailable("the pool is closed")
            self.start()
        wait_until = None if wait_s is None else time.monotonic() + wait_s
        if deadline is not None:
            wait_until = deadline if wait_until is None else min(wait_until, deadline)
        while True:
            slot = self._acquire(wait_until)
            if not slot.alive():  # died while idle (killed from outside): replace it, take another
                self._retire(slot)
                continue
            if deadline is None or deadline > time.monotonic():
                try:
                    fut = slot.submit(fn, *args)
                except (BrokenProcessPool, RuntimeError, AssertionError):  # died while idle: replace, take another
                    self._retire(slot)
                    continue
                if on_submit is not None:
                    on_submit()
                break
            self._idle.put(slot)  # the wait took all the time: the job does not run (and nobody is killed)
            raise JobTimeout("no time left for the job")
        limit = time_limit
        if deadline is not None:
            left = max(0.0, deadline - time.monotonic())
            limit = left if limit is None else min(limit, left)
        try:
            result = fut.result(limit)
        except FutureTimeout:
            self._retire(slot)
            raise JobTimeout(f"the job ran past its time limit ({limit:g} s)") from None
        except BrokenProcessPool:
            self._retire(slot)
            raise WorkerCrashed("the worker process died during the job") from None
        except BaseException:
            self._idle.put(slot)  # the job raised: the worker is fine
            raise
        if self._retire_if is not None and self._retire_if(result):
            self._retire(slot)
        else:
            self._idle.put(slot)
        return result

    def submit(self, fn: Callable[..., Any], *args: Any, time_limit: float | None = None) -> Future[Any]:
        """``run`` in the background; at most ``workers`` jobs run at once, the rest wait their turn."""
        self._own()
        if self._threads is None:
            self._threads = ThreadPoolExecutor(self.workers, thread_name_prefix="killable-pool")
        return self._threads.submit(self.run, fn, *args, time_limit=time_limit)

    def close(self) -> None:
        """Stop every worker now (jobs in progress fail). In a forked child, the parent's workers are
        left alone."""
        if self._pid != os.getpid():
            return
        self._closed = True
        for slot in self._slots:
            slot.kill(settle_s=_SETTLE_S)
        if self._threads is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)
