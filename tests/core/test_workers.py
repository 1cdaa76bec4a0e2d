"""The shared killable pool (``faithsieve.runtime.workers``): time limit, crash, memory cap, restart,
orphan watch. Jobs are standard-library callables (a worker cannot import test modules)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from faithsieve.runtime.workers import (
    JobTimeout,
    KillablePool,
    WorkerCrashed,
    WorkerUnavailable,
)


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


def _wait_for(cond, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "condition not reached"
        time.sleep(0.05)


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
    assert time.monotonic() - t0 < 1.5  # the caller does not wait for the replacement to start
    assert pool.restarts == restarts + 1
    _wait_for(lambda: _gone(before))
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
        from faithsieve.runtime.workers import KillablePool
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


def test_wait_and_deadline_bound_the_call(pool) -> None:
    busy = pool.submit(time.sleep, 1.0)
    _wait_for(lambda: pool.idle == 0)
    t0 = time.monotonic()
    with pytest.raises(WorkerUnavailable):
        pool.run(os.getpid, wait_s=0.2)
    assert 0.15 < time.monotonic() - t0 < 0.6
    t0 = time.monotonic()
    with pytest.raises(WorkerUnavailable):  # the deadline ends the wait too; nobody is killed
        pool.run(os.getpid, deadline=time.monotonic() + 0.2, wait_s=5)
    assert time.monotonic() - t0 < 0.6
    restarts = pool.restarts
    busy.result(30)
    assert pool.restarts == restarts
    restarts = pool.restarts
    t0 = time.monotonic()
    with pytest.raises(JobTimeout):  # the deadline also bounds the job
        pool.run(time.sleep, 30, time_limit=60, deadline=time.monotonic() + 0.3)
    assert time.monotonic() - t0 < 1.0 and pool.restarts == restarts + 1


def test_retire_replaces_the_worker_after_its_answer() -> None:
    with KillablePool(1, retire=lambda r: r == 4) as p:
        first = p.run(os.getpid, time_limit=30)
        assert p.run(sum, [1, 2], time_limit=30) == 3 and p.run(os.getpid, time_limit=30) == first
        assert p.run(sum, [2, 2], time_limit=30) == 4  # answered, then retired
        assert p.restarts == 1 and p.run(os.getpid, time_limit=30) != first


def test_a_worker_killed_while_idle_is_skipped() -> None:
    with KillablePool(2) as p:
        a, b = p.worker_pids
        os.kill(a, signal.SIGKILL)
        _wait_for(lambda: _gone(a))
        assert [p.run(os.getpid, time_limit=30) for _ in range(4)] == [b] * 4  # no WorkerCrashed
        _wait_for(lambda: len(p.worker_pids) == 2 and a not in p.worker_pids)


def test_start_waits_for_every_worker_and_grow_adds_started_ones() -> None:
    with KillablePool(2) as p:
        assert len(p.worker_pids) == 2 and p.idle == 2 and p.ready
        p.grow(3)
        assert len(set(p.worker_pids)) == 3 and p.idle == 3


def _run_script(body: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(body)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


def test_a_forked_process_starts_its_own_workers() -> None:
    out = _run_script("""
        import os
        from faithsieve.runtime.workers import KillablePool
        pool = KillablePool(1).start()
        parent = pool.run(os.getpid, time_limit=30)
        child = os.fork()
        if child == 0:
            ok = not pool.ready and pool.run(os.getppid, time_limit=60) == os.getpid()
            pool.close()  # its own workers only
            os._exit(0 if ok else 1)
        _, status = os.waitpid(child, 0)
        print(os.waitstatus_to_exitcode(status), pool.run(os.getpid, time_limit=30) == parent)
    """)
    assert out == ["0", "True"]  # the child's worker is its own; the parent's survived the child


def test_clean_main_does_not_import_the_callers_script(tmp_path) -> None:
    script = tmp_path / "trainer.py"  # no __main__ guard, as many training scripts
    script.write_text("import os\nfrom faithsieve.runtime.workers import KillablePool\nprint('top-level', flush=True)\n"
                      "with KillablePool(2, clean_main=True) as p:\n    print(p.run(sum, [1, 2], time_limit=30))\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["top-level", "3"]


def test_first_jobs_from_many_threads_start_the_pool_once() -> None:
    from concurrent.futures import ThreadPoolExecutor

    p = KillablePool(2)
    try:
        with ThreadPoolExecutor(6) as threads:
            pids = set(threads.map(lambda _: p.run(os.getpid, time_limit=30), range(12)))
        assert len(p.worker_pids) == 2 and pids <= set(p.worker_pids) and p.idle == 2
    finally:
        p.close()


def test_start_after_close_gives_fresh_workers_only() -> None:
    p = KillablePool(2).start()
    old = set(p.worker_pids)
    p.close()
    assert not p.ready
    with pytest.raises(WorkerUnavailable):
        p.run(os.getpid, time_limit=30)
    p.start()
    try:
        assert p.idle == 2 and len(set(p.worker_pids)) == 2 and not old & set(p.worker_pids)
    finally:
        p.close()


def test_deadline_holds_with_many_threads_waiting() -> None:
    """12 threads share one worker for 3 s, each call with a 50 ms deadline: every call ends (answer,
    WorkerUnavailable or JobTimeout) within 150 ms of its deadline, however the waiters interleave."""
    import threading

    worst = [0.0]
    lock = threading.Lock()
    with KillablePool(1) as p:
        end = time.monotonic() + 3.0

        def caller() -> None:
            while time.monotonic() < end:
                deadline = time.monotonic() + 0.05
                with contextlib.suppress(WorkerUnavailable, JobTimeout):
                    p.run(sum, [1, 2], deadline=deadline)
                with lock:
                    worst[0] = max(worst[0], time.monotonic() - deadline)

        threads = [threading.Thread(target=caller) for _ in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert worst[0] < 0.15
