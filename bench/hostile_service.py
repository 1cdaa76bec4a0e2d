"""The service under attack, over loopback: hostile reproducers, a mixed load with bombs, slowloris.

Starts ``faithsieve serve`` (``python -m faithsieve.cli.serve``, default settings unless
``FAITHSIEVE_*`` says otherwise, API key ``bench``) and runs three parts:

* ``repro``: each hostile input of issue 13 once, with its status and latency (the exp/sin
  bombs, ``"<" * 19999`` alone and ten times, echo probes, an empty ``X-API-Key`` beside a valid
  bearer token, ``Content-Length`` with ``Transfer-Encoding: chunked``), then ``/readyz`` right
  after a wave of bombs, and the time to exit after SIGTERM (measured at the end).
* ``mixed``: ``--clients`` concurrent clients for ``--seconds``; one in eight (``--bomb-every``) sends bombs, the rest
  light 10-step proofs. Reports the light requests' p50/p99 and share of 429s, every status
  count (5xx must be 0), the server's RSS (server and workers) before and after, workers alive after.
* ``slowloris``: ``--idle`` connections that send part of a request head and never finish,
  held ``--seconds``, while one client polls ``/healthz`` and ``/localize``; reports how many of
  its requests were answered 200 and the latencies. Like slowloris.py, each socket trickles a
  byte every ``--cycle-s`` seconds and one the server closed (header timeout, eviction) is
  recreated at the next cycle (``--cycle-s 0``: at once, a flood of reconnections).

* ``bomb``: issue 24's function-argument bomb (``sqrt((√2+…+√13)^60) = 5`` and its ``\\left|…\\right|``
  form) once each over HTTP: status and latency.
* ``heads``: one connection sending ``X-Pad`` header lines without ending the head for ``--head-s``
  seconds; the server's RSS before, at the end, and after close, and the status it answered.
* ``slowbody``: ``--slow`` connections sending a declared 1 MB body at 1 byte/s while one client
  probes ``/healthz`` every 0.5 s; probes answered 200 out of all.
* ``reward``: ``--attackers`` clients posting 32-sample ``/get_reward`` batches of slow completions
  while one client posts one-sample calls; their latencies and statuses.

    python bench/hostile_service.py [--parts repro mixed slowloris bomb heads slowbody reward] [--seconds 60]
        [--clients 64] [--idle 330] [--json out.json]

Run it with ``PYTHONPATH=<another checkout>`` to measure that code instead (the "before" figures).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_service import _free_port, _percentile, _wait_ready, ten_step_proof

HOST = "127.0.0.1"
KEY = "bench"
AUTH = {"Authorization": f"Bearer {KEY}"}
SIX_ROOTS = "sqrt(2)+sqrt(3)+sqrt(5)+sqrt(7)+sqrt(11)+sqrt(13)"
ARG_BOMBS = [
    {"problem": "p", "steps": [f"sqrt(({SIX_ROOTS})^60) = 5"]},
    {"problem": "p", "steps": ["\\(\\left|(\\sqrt{2}+\\sqrt{3}+\\sqrt{5}+\\sqrt{7}+\\sqrt{11}+\\sqrt{13})^{60}\\right| = 5\\)"]},
]
"""Issue 24: a power of a sum inside a function argument or bars (24 s and 48 s per check before)."""
BOMBS = [
    {"problem": "p", "steps": ["\\(\\exp(\\exp(\\exp(64))) = 5\\)"]},
    {"problem": "p", "steps": ["\\(\\sin(\\exp(\\exp(64))) = 5\\)"]},
    {"problem": "p", "steps": ["<" * 19999]},
    {"problem": "p", "steps": ["<" * 19999] * 10},
]

MIXED_BOMBS = [*ARG_BOMBS, *BOMBS]
"""What the bomb clients of ``mixed`` send in turn."""


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children (MiB), from /proc."""
    total = 0
    pids = [pid]
    try:
        out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False).stdout
        pids += [int(p) for p in out.split()]
    except OSError:
        pass
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return round(total / 1024, 1)


def start_server(port: int, log: Any, extra_env: dict[str, str]) -> subprocess.Popen[bytes]:
    env = {**os.environ, "FAITHSIEVE_API_KEY": KEY, "FAITHSIEVE_CACHE_ENTRIES": "0", **extra_env}
    return subprocess.Popen([sys.executable, "-m", "faithsieve.cli.serve", "--host", HOST, "--port", str(port),
                             "--log-level", "warning"], env=env, stdout=log, stderr=subprocess.STDOUT)


def raw(port: int, request: bytes, timeout: float = 30) -> tuple[str, float]:
    """Send raw bytes; the status line of the answer and the latency."""
    t0 = time.perf_counter()
    with socket.create_connection((HOST, port), timeout=timeout) as s:
        s.sendall(request)
        data = b""
        try:
            while b"\r\n" not in data:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
        except OSError as exc:
            return f"error {type(exc).__name__}", time.perf_counter() - t0
    line = data.split(b"\r\n", 1)[0].decode("latin-1")
    return (line or "closed"), time.perf_counter() - t0


def post(base: str, body: Any, headers: dict[str, str] | None = None, timeout: float = 60) -> dict[str, Any]:
    t0 = time.perf_counter()
    try:
        r = httpx.post(f"{base}/localize", json=body, headers={**AUTH, **(headers or {})}, timeout=timeout)
        return {"status": r.status_code, "latency_s": round(time.perf_counter() - t0, 3), "body": r.text[:300]}
    except httpx.HTTPError as exc:
        return {"status": type(exc).__name__, "latency_s": round(time.perf_counter() - t0, 3)}


def repro(base: str, port: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    names = ["exp_exp_exp", "sin_exp_exp", "lt_19999", "lt_19999_x10"]
    for name, bomb in zip(names, BOMBS, strict=False):
        r = post(base, bomb)
        out[name] = {"status": r["status"], "latency_s": r["latency_s"]}
        print(f"{name:16} {r['status']} {r['latency_s']} s", flush=True)
    evil = "<script>alert(1)</script>"
    r = post(base, {"problem": "p", "steps": ["1 = 1"], "options": {evil: 1}})
    out["echo_option_key"] = {"status": r["status"], "echoed": evil in r.get("body", "")}
    r2 = httpx.post(f"{base}/localize", content=b"{}", headers={**AUTH, "Content-Type": f"text/{evil}"}, timeout=10)
    out["echo_content_type"] = {"status": r2.status_code, "echoed": evil in r2.text}
    r3 = httpx.post(f"{base}/localize", json={"problem": "p", "steps": ["1 = 1"]},
                    headers={**AUTH, "X-API-Key": ""}, timeout=30)
    out["empty_x_api_key_with_bearer"] = {"status": r3.status_code}
    body = b'{"problem":"p","steps":["1 = 1"]}'
    line, lat = raw(port, b"POST /localize HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + KEY.encode() +
                    b"\r\nContent-Type: application/json\r\nContent-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n"
                    % len(body) + b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n")
    out["cl_and_te"] = {"status": line, "latency_s": round(lat, 3)}
    for k, v in out.items():
        if k not in names:
            print(f"{k:28} {v}", flush=True)
    return out


async def _mixed(base: str, clients: int, seconds: float, bomb_every: int = 8) -> dict[str, Any]:
    rng = random.Random(3)
    light_lat: list[float] = []
    light: dict[str, int] = {}
    bombs: dict[str, int] = {}
    proofs = [ten_step_proof(rng) for _ in range(400)]
    deadline = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=60, headers=AUTH) as client:

        async def worker(i: int) -> None:
            bomber = bomb_every > 0 and i % bomb_every == 0
            k = i
            while time.perf_counter() < deadline:
                body = MIXED_BOMBS[k % len(MIXED_BOMBS)] if bomber else proofs[k % len(proofs)]
                k += clients
                t0 = time.perf_counter()
                try:
                    r = await client.post("/localize", json=body)
                    status = str(r.status_code)
                    if status == "429":
                        await asyncio.sleep(min(2.0, float(r.headers.get("retry-after", "1"))))
                except httpx.HTTPError as exc:
                    status = type(exc).__name__
                counts = bombs if bomber else light
                counts[status] = counts.get(status, 0) + 1
                if not bomber and status == "200":
                    light_lat.append(time.perf_counter() - t0)

        await asyncio.gather(*(worker(i) for i in range(clients)))
    n_light = sum(light.values())
    return {"clients": clients, "bomb_clients": len(range(0, clients, bomb_every)) if bomb_every else 0,
            "seconds": seconds,
            "light": light, "bombs": bombs, "light_requests": n_light,
            "light_share_429": round(light.get("429", 0) / n_light, 4) if n_light else None,
            "light_p50_ms": round(_percentile(light_lat, 50) * 1000, 1),
            "light_p99_ms": round(_percentile(light_lat, 99) * 1000, 1),
            "server_errors": sum(v for d in (light, bombs) for k, v in d.items() if k.startswith("5"))}


async def _slowloris(base: str, port: int, idle: int, seconds: float, cycle_s: float) -> dict[str, Any]:
    held: list[asyncio.StreamWriter] = []
    reopened = 0
    stop = time.perf_counter() + seconds

    async def hold_one() -> None:
        nonlocal reopened
        first = True
        while time.perf_counter() < stop:
            try:
                reader, writer = await asyncio.open_connection(HOST, port)
                writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                await writer.drain()
                held.append(writer)
                reopened += 0 if first else 1
                first = False
                while time.perf_counter() < stop:  # trickle a byte each cycle, like slowloris.py
                    try:
                        data = await asyncio.wait_for(reader.read(1), cycle_s)
                        if not data:
                            break
                    except asyncio.TimeoutError:
                        writer.write(b"a")
                        await writer.drain()
            except (OSError, ConnectionError):
                pass
            await asyncio.sleep(cycle_s)  # a dropped socket is recreated at the next cycle (0: at once)

    holders = [asyncio.ensure_future(hold_one()) for _ in range(idle)]
    await asyncio.sleep(3)  # let them connect
    res: dict[str, dict[str, Any]] = {"/healthz": {"statuses": {}, "lat": []}, "/localize": {"statuses": {}, "lat": []}}
    proof = {"problem": "Solve 5x - 7 = 18.", "steps": ["5x = 25", "x = 6"]}
    async with httpx.AsyncClient(base_url=base, headers=AUTH, timeout=15) as client:
        while time.perf_counter() < stop:
            for path in ("/healthz", "/localize"):
                t0 = time.perf_counter()
                try:
                    r = await (client.get(path) if path == "/healthz" else client.post(path, json=proof))
                    status = str(r.status_code)
                except httpx.HTTPError as exc:
                    status = type(exc).__name__
                res[path]["statuses"][status] = res[path]["statuses"].get(status, 0) + 1
                res[path]["lat"].append(time.perf_counter() - t0)
            await asyncio.sleep(0.5)
    for h in holders:
        h.cancel()
    await asyncio.gather(*holders, return_exceptions=True)
    for w in held:
        w.close()
    out: dict[str, Any] = {"idle_connections": idle, "seconds": seconds, "cycle_s": cycle_s, "idle_reopened": reopened}
    for path, r in res.items():
        out[path] = {"statuses": r["statuses"], "p50_ms": round(_percentile(r["lat"], 50) * 1000, 1),
                     "max_ms": round(max(r["lat"], default=float("nan")) * 1000, 1)}
    return out


def bomb(base: str) -> dict[str, Any]:
    out = {}
    for name, body in zip(("sqrt_of_power", "bars_of_power"), ARG_BOMBS, strict=True):
        r = post(base, body, timeout=120)
        out[name] = {"status": r["status"], "latency_s": r["latency_s"]}
        print(f"{name:16} {r['status']} {r['latency_s']} s", flush=True)
    return out


def heads(port: int, pid: int, seconds: float) -> dict[str, Any]:
    before = rss_mb(pid)
    peak = before
    status = "none"
    sent = 0
    s = socket.create_connection((HOST, port), timeout=10)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    line = b"X-Pad: " + b"a" * 4000 + b"\r\n"
    stop = time.perf_counter() + seconds
    try:
        while time.perf_counter() < stop:
            s.sendall(line * 16)
            sent += 16 * len(line)
            if sent % (16 * len(line) * 64) == 0:
                peak = max(peak, rss_mb(pid))
    except OSError:
        pass
    s.settimeout(2)
    try:
        status = s.recv(200).split(b"\r\n", 1)[0].decode("latin-1") or "closed"
    except OSError as exc:
        status = f"closed ({type(exc).__name__})"
    peak = max(peak, rss_mb(pid))
    s.close()
    time.sleep(2)
    out = {"seconds": seconds, "sent_mb": round(sent / 2**20, 1), "answer": status, "rss_before_mb": before,
           "rss_peak_mb": peak, "rss_after_close_mb": rss_mb(pid)}
    print("heads:", json.dumps(out), flush=True)
    return out


async def _slowbody(base: str, port: int, n: int, seconds: float) -> dict[str, Any]:
    head = (b"POST /localize HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + KEY.encode() +
            b"\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
    stop = time.perf_counter() + seconds
    reopened = 0

    async def trickle() -> None:
        nonlocal reopened
        while time.perf_counter() < stop:
            try:
                reader, writer = await asyncio.open_connection(HOST, port)
                writer.write(head)
                await writer.drain()
                while time.perf_counter() < stop:
                    writer.write(b" ")
                    await writer.drain()
                    try:
                        if not await asyncio.wait_for(reader.read(1), 1.0):
                            break
                    except asyncio.TimeoutError:
                        continue
                writer.close()
            except (OSError, ConnectionError):
                pass
            reopened += 1
            await asyncio.sleep(1.0)

    tasks = [asyncio.ensure_future(trickle()) for _ in range(n)]
    await asyncio.sleep(5)
    statuses: dict[str, int] = {}
    fresh = httpx.Limits(max_keepalive_connections=0)  # a new connection per probe: a new client's chance
    async with httpx.AsyncClient(base_url=base, timeout=5, limits=fresh) as client:
        while time.perf_counter() < stop:
            try:
                st = str((await client.get("/healthz")).status_code)
            except httpx.HTTPError as exc:
                st = type(exc).__name__
            statuses[st] = statuses.get(st, 0) + 1
            await asyncio.sleep(0.5)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    out = {"sockets": n, "seconds": seconds, "probes": statuses,
           "probe_success": round(statuses.get("200", 0) / max(1, sum(statuses.values())), 3), "reconnects": reopened}
    print("slowbody:", json.dumps(out), flush=True)
    return out


async def _reward(base: str, attackers: int, seconds: float) -> dict[str, Any]:
    rng = random.Random(7)

    def attack() -> dict[str, Any]:  # long, checkable completions, each new (the grader's cache never answers)
        query = ["Step 1: " + " ".join(f"{k} + {k} = {2 * k}." for k in range(rng.randint(10**6, 10**7), 10**7)[:300])
                 for _ in range(32)]
        return {"query": query, "labels": ["1"] * 32}
    stop = time.perf_counter() + seconds
    counts: dict[str, int] = {}
    one_lat: list[float] = []
    one_status: dict[str, int] = {}
    async with httpx.AsyncClient(base_url=base, timeout=120, headers=AUTH) as client:

        async def attacker() -> None:
            while time.perf_counter() < stop:
                try:
                    r = await client.post("/get_reward", json=attack())
                    st = str(r.status_code)
                    if st == "429":
                        await asyncio.sleep(min(2.0, float(r.headers.get("retry-after", "1"))))
                except httpx.HTTPError as exc:
                    st = type(exc).__name__
                counts[st] = counts.get(st, 0) + 1

        async def prober() -> None:
            await asyncio.sleep(3)
            while time.perf_counter() < stop:
                t0 = time.perf_counter()
                try:
                    r = await client.post("/get_reward", json={"query": ["3 * 4 = 12. The answer is 12."],
                                                               "labels": ["12"]})
                    st = str(r.status_code)
                except httpx.HTTPError as exc:
                    st = type(exc).__name__
                one_status[st] = one_status.get(st, 0) + 1
                one_lat.append(time.perf_counter() - t0)
                await asyncio.sleep(1.0)

        await asyncio.gather(prober(), *(attacker() for _ in range(attackers)))
    out = {"attackers": attackers, "seconds": seconds, "attack_statuses": counts, "one_sample_statuses": one_status,
           "one_sample_p50_s": round(_percentile(one_lat, 50), 2), "one_sample_max_s": round(max(one_lat, default=0), 2)}
    print("reward:", json.dumps(out), flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", nargs="+", default=["repro", "mixed", "slowloris"])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--idle", type=int, default=330)
    ap.add_argument("--cycle-s", type=float, default=5.0,
                    help="slowloris: seconds between trickled bytes and before a dropped socket is recreated (0: at once)")
    ap.add_argument("--bomb-every", type=int, default=8, help="one client in N sends bombs (0: none, a light-only baseline)")
    ap.add_argument("--head-s", type=float, default=8.0, help="heads: seconds of endless header lines")
    ap.add_argument("--slow", type=int, default=1100, help="slowbody: sockets trickling a body")
    ap.add_argument("--attackers", type=int, default=8, help="reward: clients sending 32-sample batches")
    ap.add_argument("--env", nargs="*", default=[], help="extra FAITHSIEVE_X=value settings for the server")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)
    extra = dict(e.split("=", 1) for e in args.env)
    port = _free_port()
    base = f"http://{HOST}:{port}"
    results: dict[str, Any] = {"cpus": os.cpu_count(), "env": extra}
    with tempfile.TemporaryFile() as log:
        proc = start_server(port, log, extra)
        try:
            _wait_ready(base, proc, 180)
            if "repro" in args.parts:
                results["repro"] = repro(base, port)
                results["readyz_after_bombs"] = httpx.get(f"{base}/readyz", timeout=5).json()
                print("readyz after the bombs:", results["readyz_after_bombs"], flush=True)
            if "mixed" in args.parts:
                time.sleep(12)  # let the reproducers' work drain
                results["rss_before_mb"] = rss_mb(proc.pid)
                results["mixed"] = asyncio.run(_mixed(base, args.clients, args.seconds, args.bomb_every))
                time.sleep(2)
                results["rss_after_mb"] = rss_mb(proc.pid)
                ready = httpx.get(f"{base}/readyz", timeout=15)
                results["workers_after"] = ready.json().get("workers")
                print("mixed:", json.dumps(results["mixed"]), flush=True)
                print(f"RSS {results['rss_before_mb']} -> {results['rss_after_mb']} MiB; workers after: "
                      f"{results['workers_after']}", flush=True)
            if "bomb" in args.parts:
                results["bomb"] = bomb(base)
            if "heads" in args.parts:
                results["heads"] = heads(port, proc.pid, args.head_s)
            if "slowbody" in args.parts:
                results["slowbody"] = asyncio.run(_slowbody(base, port, args.slow, args.seconds))
            if "reward" in args.parts:
                results["reward"] = asyncio.run(_reward(base, args.attackers, args.seconds))
            if "slowloris" in args.parts:
                results["slowloris"] = asyncio.run(_slowloris(base, port, args.idle, args.seconds, args.cycle_s))
                print("slowloris:", json.dumps(results["slowloris"]), flush=True)
            # shut down while a bomb is running: time to exit after SIGTERM
            threading_bomb = subprocess.Popen([sys.executable, "-c", (
                "import httpx,sys; httpx.post(sys.argv[1] + '/localize', json={'problem':'p','steps':['<' * 19999] * 10},"
                " headers={'Authorization':'Bearer bench'}, timeout=60)"), base],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1.0)
            t0 = time.perf_counter()
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
                results["sigterm_exit_s"] = round(time.perf_counter() - t0, 2)
            except subprocess.TimeoutExpired:
                results["sigterm_exit_s"] = "over 60"
            threading_bomb.kill()
            print("exit after SIGTERM:", results["sigterm_exit_s"], "s", flush=True)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
            log.seek(0)
            tail = log.read().decode("utf-8", "replace")
            results["server_log_tracebacks"] = tail.count("Traceback")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
