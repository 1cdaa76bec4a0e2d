"""Load on the HTTP service over loopback: latency (p50/p95/p99) and throughput for 10-step proofs
at 1, 8 and 32 concurrent clients, and the same proofs through the CLI for the ratio.

Starts ``faithsieve serve`` (``python -m faithsieve.cli.serve``) on 127.0.0.1 with the verdict
cache off, so every request runs the pipeline; each concurrency level sends a bounded number of
requests within a bounded time. The CLI figure is ``faithsieve localize FILE`` run once per proof
(a cold process each, as a script would call it); the warm in-process ``localize`` rate is printed
beside it. Loopback only; nothing leaves the machine.

    python bench/load_service.py [--workers 2] [--requests 200] [--levels 1 8 32] [--cli-proofs 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

HOST = "127.0.0.1"


def ten_step_proof(rng: random.Random) -> dict[str, Any]:
    """A 10-step word-problem proof with exact arithmetic, an equation and substitutions; about a
    third carry one wrong step. Distinct numbers per proof, so no two requests are alike."""
    a, b, c = rng.randint(2, 60), rng.randint(2, 60), rng.randint(2, 9)
    x = rng.randint(2, 40)
    total = a * c + b
    wrong = rng.random() < 0.35
    steps = [
        f"Each box holds {a} pens, and there are {c} boxes, so the boxes hold {a} × {c} = {a * c} pens.",
        f"With {b} loose pens the total is {a * c} + {b} = {total + (1 if wrong else 0)}.",
        f"Let x be the number of pens given away; we are told {total} - x = {total - x}.",
        f"Adding x to both sides gives {total} = {total - x} + x.",
        f"So x = {total} - {total - x} = {x}.",
        f"Check: {total} - {x} = {total - x}.",
        f"Half of the remaining pens is ({total - x}) / 2 = {(total - x) / 2:g}.",
        f"Twice the pens given away is 2 × {x} = {2 * x}.",
        f"Together that is {(total - x) / 2:g} + {2 * x} = {(total - x) / 2 + 2 * x:g}.",
        f"Therefore the answer is {(total - x) / 2 + 2 * x:g}.",
    ]
    problem = (f"A shop has {c} boxes of {a} pens and {b} loose pens. After giving some away, "
               f"{total - x} pens remain. How many were given away, and what is half the rest plus twice that?")
    return {"problem": problem, "steps": steps}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


async def _level(base: str, proofs: list[dict[str, Any]], concurrency: int, requests: int,
                 budget_s: float) -> dict[str, Any]:
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    for i in range(requests):
        queue.put_nowait(proofs[i % len(proofs)])
    deadline = time.perf_counter() + budget_s
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=60) as client:

        async def worker() -> None:
            while time.perf_counter() < deadline:
                try:
                    body = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                t0 = time.perf_counter()
                r = await client.post("/localize", json=body)
                latencies.append(time.perf_counter() - t0)
                statuses[r.status_code] = statuses.get(r.status_code, 0) + 1

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - t0
    ok = statuses.get(200, 0)
    return {
        "concurrency": concurrency, "requests": len(latencies), "ok": ok, "statuses": statuses,
        "wall_s": round(wall, 3), "throughput_rps": round(ok / wall, 2) if wall else 0.0,
        "p50_ms": round(_percentile(latencies, 50) * 1000, 1), "p95_ms": round(_percentile(latencies, 95) * 1000, 1),
        "p99_ms": round(_percentile(latencies, 99) * 1000, 1),
        "mean_ms": round(statistics.fmean(latencies) * 1000, 1) if latencies else float("nan"),
    }


def _start_server(port: int, workers: int, log: Any) -> subprocess.Popen[bytes]:
    env = {**os.environ, "FAITHSIEVE_CACHE_ENTRIES": "0", "FAITHSIEVE_MAX_PENDING": "256"}
    return subprocess.Popen([sys.executable, "-m", "faithsieve.cli.serve", "--host", HOST, "--port", str(port),
                             "--workers", str(workers), "--log-level", "warning"], env=env, stdout=log,
                            stderr=subprocess.STDOUT)


def _wait_ready(base: str, proc: subprocess.Popen[bytes], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("the server exited during start-up")
        try:
            if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError("the server was not ready in time")


def measure_cli(proofs: list[dict[str, Any]], n: int) -> dict[str, Any]:
    """``faithsieve localize FILE`` once per proof (a cold process each), and warm in-process ``localize``."""
    from faithsieve.core.settings import Settings
    from faithsieve.pipeline import localize
    from faithsieve.split import proof_from_input

    sample = proofs[:n]
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, p in enumerate(sample):
            path = Path(tmp) / f"p{i}.json"
            path.write_text(json.dumps(p), encoding="utf-8")
            paths.append(path)
        t0 = time.perf_counter()
        for path in paths:
            subprocess.run([sys.executable, "-m", "faithsieve.cli", "localize", str(path)], check=True,
                           stdout=subprocess.DEVNULL)
        cold = time.perf_counter() - t0
    settings = Settings()
    localize(proof_from_input(sample[0], settings), settings)  # warm the imports
    t0 = time.perf_counter()
    for p in proofs[:max(n, 50)]:
        localize(proof_from_input(p, settings), settings)
    warm_n = len(proofs[:max(n, 50)])
    warm = time.perf_counter() - t0
    return {"cli_proofs": len(sample), "cli_wall_s": round(cold, 3), "cli_rps": round(len(sample) / cold, 2),
            "cli_ms_per_proof": round(cold / len(sample) * 1000, 1),
            "inprocess_proofs": warm_n, "inprocess_rps": round(warm_n / warm, 2),
            "inprocess_ms_per_proof": round(warm / warm_n * 1000, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2, help="service worker processes (default 2)")
    ap.add_argument("--requests", type=int, default=200, help="requests per concurrency level (default 200)")
    ap.add_argument("--levels", type=int, nargs="+", default=[1, 8, 32], help="concurrent clients (default 1 8 32)")
    ap.add_argument("--budget-s", type=float, default=60.0, help="time budget per level (default 60 s)")
    ap.add_argument("--cli-proofs", type=int, default=20, help="proofs run through the CLI (default 20)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)

    rng = random.Random(args.seed)
    proofs = [ten_step_proof(rng) for _ in range(max(args.requests, args.cli_proofs, 50))]
    port = _free_port()
    base = f"http://{HOST}:{port}"
    results: dict[str, Any] = {"workers": args.workers, "cpus": os.cpu_count(), "steps_per_proof": 10, "levels": []}
    with tempfile.TemporaryFile() as log:
        proc = _start_server(port, args.workers, log)
        try:
            _wait_ready(base, proc)
            asyncio.run(_level(base, proofs, 1, min(10, args.requests), 30))  # warm-up, not reported
            for c in args.levels:
                res = asyncio.run(_level(base, proofs, c, args.requests, args.budget_s))
                results["levels"].append(res)
                print(f"c={c:>3}: {res['ok']}/{res['requests']} ok in {res['wall_s']} s, {res['throughput_rps']} proofs/s, "
                      f"p50 {res['p50_ms']} ms, p95 {res['p95_ms']} ms, p99 {res['p99_ms']} ms  {res['statuses']}",
                      flush=True)
        finally:
            proc.terminate()
            proc.wait(30)
    cli = measure_cli(proofs, args.cli_proofs)
    results["cli"] = cli
    print(f"CLI (cold process per proof): {cli['cli_rps']} proofs/s ({cli['cli_ms_per_proof']} ms each); "
          f"in-process localize (warm): {cli['inprocess_rps']} proofs/s ({cli['inprocess_ms_per_proof']} ms each)")
    for res in results["levels"]:
        res["ratio_to_cli"] = round(res["throughput_rps"] / cli["cli_rps"], 1) if cli["cli_rps"] else None
        res["ratio_to_inprocess"] = round(res["throughput_rps"] / cli["inprocess_rps"], 2) if cli["inprocess_rps"] else None
        print(f"c={res['concurrency']:>3}: service/CLI throughput {res['ratio_to_cli']}x, "
              f"service/in-process {res['ratio_to_inprocess']}x")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
