"""Killable worker processes for the grader's checks, one budget per call (``python -m faithsieve.grading.pool --worker``)."""

from __future__ import annotations

import atexit
import json
import logging
import os
import queue
import select
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from faithsieve.grading.check import _run_check, run_answer_check, run_math_verify
from faithsieve.grading.config import GraderConfig, default_config, work_deadline

log = logging.getLogger("faithsieve.grader")


class _WorkerDied(Exception):
    pass


class _Worker:
    """One ``python -m faithsieve.grader --worker`` child speaking JSON lines over pipes."""

    def __init__(self, memory_mb: int) -> None:
        env = dict(os.environ)
        env["FAITHSIEVE_GRADER_WORKER_MEMORY_MB"] = str(memory_mb)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "faithsieve.grading.pool", "--worker"],
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
        """Stop it now (a signal: constant time); closing its pipes and reaping it is ``reap``'s work."""
        try:
            self.proc.kill()
        except OSError:
            pass

    def reap(self) -> None:
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()  # type: ignore[union-attr]
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


class _Janitor:
    """One background thread that reaps killed workers and starts their replacements, so a call that
    gives up on a worker returns at once (no process wait, no thread start on the caller's path)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.jobs: queue.SimpleQueue[tuple[_Pool, _Worker]] = queue.SimpleQueue()
        threading.Thread(target=self._run, daemon=True, name="faithsieve-grader-janitor").start()

    def _run(self) -> None:
        while True:
            pool, w = self.jobs.get()
            try:
                w.reap()
                pool._replace()
            except Exception as exc:  # noqa: BLE001 - the janitor must keep running
                log.error("faithsieve.grader: replacing a worker failed: %s", exc)


_JANITOR: _Janitor | None = None
_JANITOR_LOCK = threading.Lock()


def _janitor() -> _Janitor:
    global _JANITOR
    with _JANITOR_LOCK:
        if _JANITOR is None or _JANITOR.pid != os.getpid():
            _JANITOR = _Janitor()
        return _JANITOR


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
        _janitor().jobs.put((self, w))  # reaped and replaced off the caller's thread

    def _replace(self) -> None:
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
            w.reap()


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


def executor(size: int) -> ThreadPoolExecutor:
    """The threads that spread a batch over the workers (``grade_many``), at least ``size`` of them."""
    global _EXECUTOR
    with _POOL_LOCK:
        if _EXECUTOR is None or getattr(_EXECUTOR, "_fs_size", 0) < size:
            _EXECUTOR = ThreadPoolExecutor(max_workers=size, thread_name_prefix="faithsieve-grader")
            _EXECUTOR._fs_size = size  # type: ignore[attr-defined]
        return _EXECUTOR


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
    """The step check of ``text`` in a worker, answered by ``deadline`` (else status ``timeout``)."""
    return _in_worker({"problem": problem, "text": text, "settings": key}, cfg, deadline)


def math_verify_in_worker(text: str, refs: list[str], cfg: GraderConfig, deadline: float) -> dict[str, Any]:
    """Math-Verify's ``verify(parse(ref), parse(text))`` for each reference, in a worker (killable:
    Math-Verify's own timeouts use signals, which do not work outside the main thread)."""
    return _in_worker({"op": "math_verify", "text": text, "refs": refs}, cfg, deadline)


def answer_in_worker(answer: str, refs: list[str], percent: str, decimal_rounding: bool, cfg: GraderConfig,
                     deadline: float) -> dict[str, Any]:
    """Our answer comparison in a worker: for the comparisons that need sympy or sample points."""
    return _in_worker({"op": "answer", "answer": answer, "refs": refs, "percent": percent,
                       "decimal_rounding": decimal_rounding}, cfg, deadline)


def _in_worker(request: dict[str, Any], cfg: GraderConfig, deadline: float) -> dict[str, Any]:
    pool = _pool(cfg)
    if pool.broken is not None and pool.size == 0:
        return {"status": "worker_unavailable", "error": pool.broken}
    def wait_s() -> float:  # a warm pool is waited for within the call's budget only
        if not pool.warm:
            return cfg.startup_timeout_s
        return max(0.0, min(cfg.acquire_timeout_s, deadline - time.monotonic()))

    w = pool.acquire(wait_s())
    if w is not None and not w.alive():  # died while idle (e.g. killed from outside): replace, retry once
        pool.release(w, False)
        w = pool.acquire(wait_s())
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
                deadline = work_deadline(cfg)  # the one-time start is not charged
        payload = json.dumps(request, ensure_ascii=False).encode() + b"\n"
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
    proto.write(b"READY\n")
    for line in sys.stdin.buffer:
        restart = False
        try:
            req = json.loads(line)
            if req.get("op") == "answer":
                res = run_answer_check(str(req["answer"]), [str(r) for r in req["refs"]], str(req["percent"]),
                                       bool(req["decimal_rounding"]))
            elif req.get("op") == "math_verify":
                res = run_math_verify(str(req["text"]), [str(r) for r in req["refs"]])
            else:
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
        print("usage: python -m faithsieve.grading.pool --worker  (started by faithsieve.grader itself)", file=sys.stderr)
        sys.exit(2)
