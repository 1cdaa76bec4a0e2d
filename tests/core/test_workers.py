"""The shared killable pool (``faithsieve.workers``): time limit, crash, memory cap, restart,
orphan watch. Jobs are standard-library callables (a worker cannot import test modules)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from faithsieve.workers import JobTimeout, KillablePool, WorkerCrashed


@pytest.fixture(scope="module")
def pool():
    with KillablePool(1, memory_mb=400) as p:
        yield p


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie child not yet reaped counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def test_runs_jobs_and_keeps_the_worker(pool) -> None:
    first = pool.run(os.getpid, time_limit=30)
    assert first != os.getpid()
    assert pool.run(os.getpid, time_limit=30) == first
    assert pool.run(sum, [1, 2, 3], time_limit=30) == 6


def test_time_limit_kills_and_replaces_the_worker(pool) -> None:
    before = pool.run(os.getpid, time_limit=30)
    restarts = pool.restarts
    t0 = time.monotonic()
    with pytest.raises(JobTimeout):
        pool.run(time.sleep, 30, time_limit=0.5)
    assert time.monotonic() - t0 < 20  # not the 30 s the job asked for (start-up of the new worker included)
    assert _gone(before) and pool.restarts == restarts + 1
    assert pool.run(os.getpid, time_limit=30) not in (before, None)


def test_a_dying_worker_is_replaced(pool) -> None:
    with pytest.raises(WorkerCrashed):
        pool.run(os._exit, 3, time_limit=30)
    assert pool.run(sum, [2, 2], time_limit=30) == 4


def test_memory_cap_is_a_memory_error_in_the_job(pool) -> None:
    pid = pool.run(os.getpid, time_limit=30)
    with pytest.raises(MemoryError):
        pool.run(bytearray, 1024 * 1024 * 1024, time_limit=30)  # 1 GiB against a 400 MiB cap
    assert pool.run(os.getpid, time_limit=30) == pid  # the worker survives it


def test_workers_exit_when_the_parent_dies(tmp_path) -> None:
    script = textwrap.dedent("""
        import sys, time
        from faithsieve.workers import KillablePool
        pool = KillablePool(2).start()
        print(" ".join(map(str, pool.worker_pids)), flush=True)
        time.sleep(600)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]  # type: ignore[union-attr]
        assert len(pids) == 2 and not any(_gone(p) for p in pids)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 10
        while not all(_gone(p) for p in pids):
            assert time.monotonic() < deadline, "orphaned workers still running"
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            proc.kill()
