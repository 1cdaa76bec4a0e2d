"""Workbench weight and run-browser responsiveness.

    python bench/web_workbench.py [RUN_DIR] [--items N] [--browser]

Reports the bytes the page ships (``GET /`` and every asset it loads), then, for a scoring run
(RUN_DIR, or a synthetic run of N predictions written to a temporary directory), the time the
run routes take through the ASGI app: the summary, the first page of the table, each outcome
filter, a page deep in the table, an id search. With ``--browser`` (chromium + Playwright) it also
times the page itself: navigation to the first rendered table, an outcome filter, and ten pages.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn
from faithsieve.api.app import create_app
from faithsieve.api.settings import ServiceSettings
from fastapi.testclient import TestClient


def synthetic_run(path: Path, n: int, seed: int = 0) -> Path:
    """A run directory with ``n`` prediction records of every outcome (no text: the table only)."""
    rng = random.Random(seed)
    path.mkdir(parents=True, exist_ok=True)
    with (path / "predictions.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(n):
            label: Any = rng.choice(["correct", rng.randint(1, 12)])
            pred: Any = rng.choice(["correct", label, rng.randint(1, 12)])
            fh.write(json.dumps({"id": f"item-{i:06d}", "subset": f"s{i % 8}", "label": label, "predicted": pred,
                                 "reason": "step k: a claim refuted by exact" if pred != "correct" else None,
                                 "time_ms": round(rng.uniform(1, 40), 3), "error": None}) + "\n")
    (path / "metrics.json").write_text(json.dumps({"n": n}), encoding="utf-8")
    return path


def page_weight(client: TestClient) -> dict[str, int]:
    """Bytes of the page and of every asset it references (scripts follow their imports)."""
    sizes: dict[str, int] = {}
    page = client.get("/")
    sizes["/"] = len(page.content)
    todo = [r for r in re.findall(r'(?:src|href)="(/web/static/[^"]+)"', page.text)]
    while todo:
        url = todo.pop()
        if url in sizes:
            continue
        r = client.get(url)
        assert r.status_code == 200, url
        sizes[url] = len(r.content)
        todo += ["/web/static/" + m[2:] for m in re.findall(r'from "(\./[^"]+)"', r.text)]
    return sizes


def timed(client: TestClient, url: str, repeat: int = 20) -> dict[str, float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = client.get(url)
        times.append((time.perf_counter() - t0) * 1000)
        assert r.status_code == 200, (url, r.text[:200])
    times.sort()
    return {"p50_ms": round(statistics.median(times), 2), "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2)}


def browser_timings(app: Any, run_id: str, port: int) -> dict[str, float]:
    from playwright.sync_api import expect, sync_playwright

    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    while not srv.started:
        time.sleep(0.05)
    out: dict[str, float] = {}
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            pg = b.new_page(viewport={"width": 1280, "height": 800})
            t0 = time.perf_counter()
            pg.goto(f"http://127.0.0.1:{port}/#run={run_id}")
            expect(pg.locator("#run-table tbody tr").first).to_be_visible()
            out["load_to_table_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            t0 = time.perf_counter()
            pg.click('button[data-outcome="missed"]')
            expect(pg.locator("#run-table tbody tr:not(.row-missed)")).to_have_count(0)
            out["filter_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            pg.click('button[data-outcome="all"]')
            expect(pg.locator("#run-caption")).to_contain_text("Items 1–")
            t0 = time.perf_counter()
            for k in range(2, 12):
                pg.click("#run-next")
                expect(pg.locator("#run-page")).to_contain_text(f"page {k} of")
            out["ten_pages_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            out["rows_in_dom"] = pg.locator("#run-table tbody tr").count()
            b.close()
    finally:
        srv.should_exit = True
        thread.join(30)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", nargs="?", help="a scoring run (default: a synthetic one)")
    ap.add_argument("--items", type=int, default=3000, help="size of the synthetic run")
    ap.add_argument("--browser", action="store_true", help="also time the page in chromium (Playwright)")
    ap.add_argument("--port", type=int, default=8158)
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory()
    run_dir = Path(args.run_dir) if args.run_dir else synthetic_run(Path(tmp.name) / "synthetic", args.items)
    app = create_app(ServiceSettings(workers=1))
    run = app.state.workbench_runs.add(run_dir)
    report: dict[str, Any] = {"run": str(run_dir)}
    with TestClient(app) as client:
        sizes = page_weight(client)
        report["page_bytes"] = {"total": sum(sizes.values()), **sizes}
        t0 = time.perf_counter()
        summary = client.get(f"/web/runs/{run.id}").json()
        report["first_summary_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        report["items"] = summary["items"]
        base = f"/web/runs/{run.id}"
        report["routes"] = {
            "summary": timed(client, base),
            "first page": timed(client, f"{base}/items?limit=100"),
            **{f"filter {o}": timed(client, f"{base}/items?outcome={o}&limit=100")
               for o in ("exact", "early", "late", "missed", "correct")},
            "deep page": timed(client, f"{base}/items?offset={max(0, summary['items'] - 100)}&limit=100"),
            "id search": timed(client, f"{base}/items?q=9&limit=100"),
        }
    if args.browser:
        report["browser"] = browser_timings(app, run.id, args.port)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
