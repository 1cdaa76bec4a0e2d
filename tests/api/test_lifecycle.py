"""Shutdown: a server with a request in progress stops within ``shutdown_grace_s`` (plus the time
to stop the workers), and its workers are gone afterwards."""

from __future__ import annotations

import os
import threading
import time

import httpx
import uvicorn
from faithsieve.api.app import create_app
from faithsieve.api.server import uvicorn_config
from faithsieve.api.worker import sleep_job

from .conftest import free_port, settings


def test_shutdown_within_the_grace_period() -> None:
    s = settings(shutdown_grace_s=1.0, proof_time_limit_s=5, request_time_limit_s=60)
    app = create_app(s, job=sleep_job)
    port = free_port()
    server = uvicorn.Server(uvicorn_config(app, s, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive()
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    pids = [app.state.service.pool.worker_pids[0]]
    answered: list[object] = []

    def long_request() -> None:
        try:
            answered.append(httpx.post(f"{base}/localize", json={"problem": "30", "steps": ["x"]}, timeout=60).status_code)
        except httpx.HTTPError as exc:
            answered.append(type(exc).__name__)

    client = threading.Thread(target=long_request)
    client.start()
    time.sleep(0.5)  # the 30 s job is running
    t0 = time.monotonic()
    server.should_exit = True  # what SIGTERM does
    thread.join(30)
    stopped = time.monotonic() - t0
    client.join(10)
    assert not thread.is_alive()
    assert stopped < 1.0 + 3.0, f"stopped after {stopped:.1f} s"  # grace, plus stopping the workers
    assert answered and answered[0] != 200  # the request was cut off, not waited for
    deadline = time.monotonic() + 5
    while True:
        try:
            os.kill(pids[0], 0)
        except ProcessLookupError:
            break
        assert time.monotonic() < deadline, "worker still running after shutdown"
        time.sleep(0.1)
