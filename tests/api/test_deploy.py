"""The production deployment of ``docs/serve.md``: gunicorn with FaithSieve's uvicorn worker class
(``uvicorn[standard]``), two server processes, the same connection limits as ``faithsieve serve``.

Slow (two server processes start their checking pools); ``.ci/run`` runs it with the
``production`` extra installed."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_gunicorn_deployment_keeps_the_limits(tmp_path) -> None:
    pytest.importorskip("gunicorn", reason="pip install 'faithsieve[production]'")
    port = _free_port()
    env = {**os.environ, "FAITHSIEVE_WORKERS": "1", "FAITHSIEVE_HEADER_READ_TIMEOUT_S": "1",
           "FAITHSIEVE_SHUTDOWN_GRACE_S": "3"}
    gunicorn = shutil.which("gunicorn", path=os.path.dirname(sys.executable)) or "gunicorn"
    log = (tmp_path / "gunicorn.log").open("w+")
    proc = subprocess.Popen([gunicorn, "faithsieve.api.server:make_app()", "-k", "faithsieve.api.gunicorn_worker.Worker",
                             "-w", "2", "-b", f"127.0.0.1:{port}", "--graceful-timeout", "3", "--keep-alive", "5"],
                            env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        ready = 0
        while ready < 4:  # both server processes answer ready (connections alternate between them)
            assert proc.poll() is None, "gunicorn exited early"
            assert time.monotonic() < deadline, "not ready in 120 s"
            try:
                ready = ready + 1 if httpx.get(f"{base}/readyz", timeout=2).status_code == 200 else 0
            except httpx.TransportError:
                ready = 0
            time.sleep(0.2)
        # the guarded protocol is in use: a connection that never completes its headers is closed
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        t0 = time.monotonic()
        s.settimeout(10)
        assert s.recv(100) == b""
        assert time.monotonic() - t0 < 5
        # and the httptools parser (uvicorn[standard]) or h11 answers real requests
        r = httpx.post(f"{base}/localize", json={"problem": "Solve 5x - 7 = 18.", "steps": ["5x = 25", "x = 25 / 5 = 6"]},
                       timeout=30)
        assert r.status_code == 200 and r.json()["first_error_step"] == 2
    finally:
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        stopped = time.monotonic() - t0
        log.seek(0)
        output = log.read()
    assert rc == 0, output
    assert stopped < 10, f"took {stopped:.1f} s to stop"
    assert "Traceback" not in output, output
