"""Time limits, saturation, cancellation and body limits, with the diagnostic ``sleep_job``
(its ``problem`` is the number of seconds to sleep) so that timing does not depend on the
pipeline's speed. Includes the tests that need a real socket (a live uvicorn server)."""

from __future__ import annotations

import asyncio
import re
import socket
import threading
import time
from typing import Any

import httpx
import pytest
from faithsieve.api.errors import Saturated
from faithsieve.api.metrics import ServiceMetrics
from faithsieve.api.pool import WorkerPool
from faithsieve.api.worker import sleep_job

from faithsieve.core.settings import Settings


def _sleep(seconds: float) -> dict[str, Any]:
    return {"problem": str(seconds), "steps": ["x"], "options": {"use_cache": False}}


def _metric(text: str, name: str) -> float:
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    return float(m.group(1)) if m else 0.0


def _wait_metric(get_text: Any, name: str, value: float, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while _metric(get_text(), name) < value:
        assert time.monotonic() < deadline, f"{name} did not reach {value}"
        time.sleep(0.05)


def test_time_limit_is_504_and_the_worker_is_replaced(sleepy):
    before = sleepy.post("/localize", json=_sleep(0)).json()["pid"]
    t0 = time.monotonic()
    r = sleepy.post("/localize", json=_sleep(30))
    elapsed = time.monotonic() - t0
    assert r.status_code == 504, r.text
    assert r.json()["error"]["code"] == "timeout"
    assert 1.4 <= elapsed < 4.0
    t0 = time.monotonic()
    after = sleepy.post("/localize", json=_sleep(0))
    assert after.status_code == 200 and time.monotonic() - t0 < 5.0
    assert after.json()["pid"] != before
    text = sleepy.get("/metrics").text
    assert _metric(text, 'faithsieve_timeouts_total{stage="worker"}') >= 1
    assert _metric(text, 'faithsieve_worker_restarts_total{reason="timeout"}') >= 1


def test_saturation_is_429_with_retry_after(sleepy):
    results: list[int] = []

    def slow() -> None:
        results.append(sleepy.post("/localize", json=_sleep(0.5)).status_code)

    threads = [threading.Thread(target=slow) for _ in range(2)]  # max_pending = 2: both admitted
    for t in threads:
        t.start()
    deadline = time.monotonic() + 5
    while _metric(sleepy.get("/metrics").text, "faithsieve_pending_proofs") < 2:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    r = sleepy.post("/localize", json=_sleep(0))
    assert r.status_code == 429, r.text
    assert r.json()["error"]["code"] == "saturated"
    assert int(r.headers["retry-after"]) >= 1
    batch = sleepy.post("/localize/batch", json={"items": [_sleep(0)]})
    assert batch.status_code == 429
    for t in threads:
        t.join()
    assert results == [200, 200]
    assert sleepy.post("/localize", json=_sleep(0)).status_code == 200
    assert _metric(sleepy.get("/metrics").text, 'faithsieve_rejections_total{reason="saturated"}') >= 2


def test_batch_item_past_its_limit_fails_alone(sleepy):
    r = sleepy.post("/localize/batch", json={"items": [_sleep(0.05), _sleep(30)]})
    assert r.status_code == 200, r.text
    res = r.json()["results"]
    assert [x["status"] for x in res] == [200, 504]
    assert res[1]["error"]["code"] == "timeout"
    assert r.json()["counts"] == {"correct": 1, "error": 0, "failed": 1}


def test_waiting_for_a_worker_past_the_deadline_is_429():
    """Pool level: one worker busy for 2 s; a job whose deadline is 0.4 s away gives up waiting."""

    async def scenario() -> None:
        pool = WorkerPool(1, 4, 0, ServiceMetrics(), sleep_job)
        await pool.start()
        try:
            loop = asyncio.get_running_loop()
            busy = asyncio.ensure_future(pool.run({"problem": "2"}, Settings(), loop.time() + 10, 10))
            await asyncio.sleep(0.2)
            t0 = loop.time()
            with pytest.raises(Saturated) as info:
                await pool.run({"problem": "0"}, Settings(), loop.time() + 0.4, 10)
            assert 0.3 < loop.time() - t0 < 1.5
            assert int(info.value.headers["Retry-After"]) >= 1
            assert (await busy).status == 200
        finally:
            await pool.close()

    asyncio.run(scenario())


def test_cancelling_a_running_job_kills_only_its_worker():
    async def scenario() -> None:
        metrics = ServiceMetrics()
        pool = WorkerPool(2, 4, 0, metrics, sleep_job)
        await pool.start()
        try:
            loop = asyncio.get_running_loop()
            doomed = asyncio.ensure_future(pool.run({"problem": "30"}, Settings(), loop.time() + 60, 60))
            other = asyncio.ensure_future(pool.run({"problem": "0.5"}, Settings(), loop.time() + 60, 60))
            await asyncio.sleep(0.2)
            doomed.cancel()
            with pytest.raises(asyncio.CancelledError):
                await doomed
            assert (await other).status == 200  # the other worker was not disturbed
            assert metrics.restarts.get("cancelled") == 1
            deadline = loop.time() + 10
            while pool.up < 2:
                assert loop.time() < deadline, "the killed worker was not replaced"
                await asyncio.sleep(0.05)
            assert (await pool.run({"problem": "0"}, Settings(), loop.time() + 10, 10)).status == 200
        finally:
            await pool.close()

    asyncio.run(scenario())


# -- over a real socket ---------------------------------------------------------------------------


def _raw(host_port: tuple[str, int], request: bytes) -> socket.socket:
    s = socket.create_connection(host_port, timeout=10)
    s.sendall(request)
    return s


def _reply(s: socket.socket) -> bytes:
    """Read one HTTP response (headers and a Content-Length body) from a raw socket."""
    s.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    m = re.search(rb"(?i)content-length: (\d+)", head)
    while m and len(body) < int(m.group(1)):
        chunk = s.recv(65536)
        if not chunk:
            break
        body += chunk
    s.close()
    return head + b"\r\n\r\n" + body


def _addr(base: str) -> tuple[str, int]:
    host, port = base.removeprefix("http://").split(":")
    return host, int(port)


def test_client_disconnect_cancels_its_work(make_server):
    with make_server(sleep_job, proof_time_limit_s=5, request_time_limit_s=60) as base:
        body = b'{"problem": "30", "steps": ["x"], "options": {"use_cache": false}}'
        s = _raw(_addr(base), b"POST /localize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

        def get() -> str:
            return httpx.get(f"{base}/metrics").text

        _wait_metric(get, "faithsieve_pending_proofs", 1)
        s.close()
        _wait_metric(get, "faithsieve_client_disconnects_total", 1)
        _wait_metric(get, 'faithsieve_worker_restarts_total{reason="cancelled"}', 1)
        assert _metric(get(), "faithsieve_pending_proofs") == 0
        t0 = time.monotonic()
        r = httpx.post(f"{base}/localize", json=_sleep(0), timeout=30)  # the replaced worker serves the next one
        assert r.status_code == 200 and time.monotonic() - t0 < 10


def test_slow_body_is_408(make_server):
    with make_server(body_read_time_limit_s=0.5) as base:
        s = _raw(_addr(base), b"POST /localize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 100\r\n\r\n{\"problem\":")
        t0 = time.monotonic()
        reply = _reply(s)
        assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
        assert b'"code":"body_timeout"' in reply
        assert time.monotonic() - t0 < 5


def test_declared_oversized_body_is_refused_before_it_is_sent(make_server):
    with make_server(max_body_bytes=1000) as base:
        s = _raw(_addr(base), b"POST /localize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 50000000\r\n\r\n")
        reply = _reply(s)
        assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
        assert b'"code":"input_too_large"' in reply
