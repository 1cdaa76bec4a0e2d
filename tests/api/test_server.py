"""``faithsieve serve`` for real: a uvicorn server in a subprocess on 127.0.0.1, called over a socket."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import httpx


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_subprocess_answers_over_a_socket_and_stops_cleanly(tmp_path):
    port = _free_port()
    env = {**os.environ, "FAITHSIEVE_MAX_PENDING": "16", "FAITHSIEVE_API_KEY": "k"}
    log = (tmp_path / "serve.log").open("w+")
    proc = subprocess.Popen([sys.executable, "-m", "faithsieve.cli.serve", "--host", "127.0.0.1", "--port", str(port),
                             "--workers", "1", "--log-level", "warning"], stdout=log, stderr=subprocess.STDOUT,
                            env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, "server exited early"
            try:
                if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "server not ready in 60 s"
            time.sleep(0.2)
        proof = {"problem": "Solve 5x - 7 = 18.", "steps": ["5x = 25", "x = 25 / 5 = 6"]}
        assert httpx.post(f"{base}/localize", json=proof, timeout=30).status_code == 401
        r = httpx.post(f"{base}/localize", json=proof, headers={"X-API-Key": "k"}, timeout=30)
        assert r.status_code == 200, r.text
        assert r.json()["first_error_step"] == 2
        limits = httpx.get(f"{base}/limits", timeout=5).json()
        assert limits["max_pending"] == 16 and limits["workers"] == 1
        metrics = httpx.get(f"{base}/metrics", headers={"Authorization": "Bearer k"}, timeout=5).text
        assert 'faithsieve_http_requests_total{route="/localize",method="POST",status="200"} 1' in metrics
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            rc = proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        log.seek(0)
        output = log.read()
    assert rc == 0, output
    assert "Traceback" not in output, output


def test_serve_rejects_invalid_settings():
    env = {**os.environ, "FAITHSIEVE_REQUEST_TIME_LIMIT_S": "1", "FAITHSIEVE_PROOF_TIME_LIMIT_S": "5"}
    done = subprocess.run([sys.executable, "-m", "faithsieve.cli.serve", "--port", "0"], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert "request_time_limit_s" in done.stderr
