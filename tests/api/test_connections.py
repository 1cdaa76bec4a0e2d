"""Connection limits on a live server (configured as ``faithsieve serve`` configures uvicorn):
header-read timeout, cap on unfinished connections, cap on all connections (slowloris)."""

from __future__ import annotations

import socket
import time

import httpx
from faithsieve.api.worker import sleep_job

PARTIAL = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "


def _open(base: str, payload: bytes = PARTIAL) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    s = socket.create_connection((host, int(port)), timeout=10)
    if payload:
        s.sendall(payload)
    return s


def _closed_within(s: socket.socket, seconds: float) -> bool:
    """The server closed ``s`` (EOF or reset) within ``seconds``."""
    s.settimeout(seconds)
    try:
        while True:
            data = s.recv(4096)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except (socket.timeout, TimeoutError):
        return False


def test_unfinished_headers_time_out(make_server) -> None:
    with make_server(sleep_job, header_read_timeout_s=0.5) as base:
        partial, silent = _open(base), _open(base, b"")
        t0 = time.monotonic()
        assert _closed_within(partial, 5) and _closed_within(silent, 5)
        assert time.monotonic() - t0 < 3  # half a second, plus slack: not the keep-alive or any later timer
        # a trickling client is timed out too, however often it sends a byte
        trickle = _open(base)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 3:
            try:
                trickle.sendall(b"a")
            except OSError:
                break
            time.sleep(0.1)
        assert time.monotonic() - t0 < 2.5 and _closed_within(trickle, 2)
        assert httpx.get(f"{base}/healthz", timeout=5).status_code == 200
        metrics = httpx.get(f"{base}/metrics", timeout=5).text
        assert 'faithsieve_timeouts_total{stage="header"} 3' in metrics


def test_header_timeout_restarts_after_each_response(make_server) -> None:
    with make_server(sleep_job, header_read_timeout_s=1.0) as base:
        s = _open(base, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        s.settimeout(5)
        assert s.recv(4096).startswith(b"HTTP/1.1 200")
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # the next request's headers never complete
        t0 = time.monotonic()
        assert _closed_within(s, 5)
        assert time.monotonic() - t0 < 3


def test_oldest_unfinished_connections_are_evicted(make_server) -> None:
    with make_server(sleep_job, header_read_timeout_s=60, max_unfinished_connections=5) as base:
        idle = [_open(base) for _ in range(8)]
        time.sleep(0.7)  # past the eviction grace
        assert httpx.get(f"{base}/healthz", timeout=5).status_code == 200
        closed = [_closed_within(s, 0.3) for s in idle]
        # 8 idle + 1 client against a cap of 5: the 4 oldest idle ones made room, the newest stay
        assert closed == [True] * 4 + [False] * 4, closed


def test_connection_cap_evicts_idle_connections_first(make_server) -> None:
    with make_server(sleep_job, header_read_timeout_s=60, max_connections=4, max_unfinished_connections=100) as base:
        idle = [_open(base) for _ in range(4)]
        time.sleep(0.7)
        assert httpx.get(f"{base}/healthz", timeout=5).status_code == 200
        assert _closed_within(idle[0], 0.5)
        assert not _closed_within(idle[-1], 0.3)


def test_new_connections_get_a_grace_before_eviction(make_server) -> None:
    with make_server(sleep_job, header_read_timeout_s=60, max_unfinished_connections=3) as base:
        idle = [_open(base) for _ in range(6)]  # all within the grace: none evicted, the cap is soft
        time.sleep(0.1)
        assert not any(_closed_within(s, 0.05) for s in idle)
        time.sleep(0.6)
        late = _open(base)  # now the old ones may make room
        assert _closed_within(idle[0], 0.5) and not _closed_within(late, 0.2)


def test_330_idle_connections_do_not_starve_others(make_server) -> None:
    # the slowloris: 330 sockets that never finish their headers, default limits
    with make_server(sleep_job) as base:
        idle = [_open(base) for _ in range(330)]
        try:
            for _ in range(5):
                assert httpx.get(f"{base}/healthz", timeout=5).status_code == 200
                r = httpx.post(f"{base}/localize", json={"problem": "0", "steps": ["x"]}, timeout=10)
                assert r.status_code == 200, r.text
        finally:
            for s in idle:
                s.close()
