"""Neighbours beside bombs: from 8 threads, completions whose step check does not finish within the
budget (``BOMB``, the tests' bomb) interleaved with completions that have a refuted step and a right
answer (``NEIGHBOUR``, 0.5 when checked). Counts, per kind, the rewards paid and the statuses; the
property the grader keeps: no neighbour and no bomb is paid more than the refuted neighbour (0.5), and
every bomb pays ``budget_exceeded`` (or, when no worker could take it, is unchecked and pays the same).

* ``inproc``: ``faithsieve.grader.grade`` from 8 threads (default config: 2 workers, 1 s budget);
* ``service``: the service's ``POST /get_reward`` (in-process ASGI client), 8 threads, one sample each call;
* ``inline``: ``isolation="inline"`` bombs, each call's wall time (the budget must hold: about 1 s).

    python bench/grader_bombs.py [--rounds 6] [--mode inproc|service|inline|all] [--json out.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# the bomb and the 8-thread runner of the tests (tests/grader/test_bombs.py), so both measure the same thing
from tests.grader.test_bombs import BOMB, eight_threads

NEIGHBOUR = ("We compute the product first.\n$12 \\times 15 = 170$.\nThen $170 + 10 = 180$.\n"
             "The answer is $\\boxed{{180}}$. (call {i})")
"""A refuted step with the right answer: 0.5 when checked."""


def _summary(rows: list[tuple[str, float, str]], seconds: float) -> dict[str, Any]:
    summary: dict[str, Any] = {"seconds": round(seconds, 1)}
    for kind in ("bomb", "neighbour"):
        mine = [r for r in rows if r[0] == kind]
        summary[kind] = {"n": len(mine), "rewards": dict(collections.Counter(r[1] for r in mine)),
                         "statuses": dict(collections.Counter(r[2] for r in mine)),
                         "paid_above_0.5": sum(r[1] > 0.5 for r in mine)}
    return summary


def inproc(rounds: int) -> dict[str, Any]:
    from faithsieve.grader import grade, warmup

    warmup()

    def call(i: int) -> tuple[str, float, str]:
        kind = "bomb" if i % 2 == 0 else "neighbour"
        r = grade((BOMB if kind == "bomb" else NEIGHBOUR).format(i=i), "1" if kind == "bomb" else "180", "",
                  cache_size=0)
        return kind, r.score, getattr(r, "status", ",".join(r.flags) or "ok")

    t = time.perf_counter()
    rows = eight_threads(call, 8 * rounds)
    return _summary(rows, time.perf_counter() - t)


def service(rounds: int) -> dict[str, Any]:
    from faithsieve.api.app import create_app
    from faithsieve.api.settings import ServiceSettings
    from fastapi.testclient import TestClient

    app = create_app(ServiceSettings(workers=1, max_pending=64, batch_max_items=8))
    with TestClient(app) as client:
        def call(i: int) -> tuple[str, float, str]:
            kind = "bomb" if i % 2 == 0 else "neighbour"
            text = (BOMB if kind == "bomb" else NEIGHBOUR).format(i=i)
            body = {"query": [text], "prompts": [""], "labels": ["1" if kind == "bomb" else "180"]}
            res = client.post("/get_reward", json=body)
            if res.status_code != 200:
                return kind, float("nan"), f"http {res.status_code}"
            out = res.json()
            logs = out["extra_logs"]
            status = "ok" if logs.get("decided", [1.0])[0] == 1.0 else "undecided"
            if logs.get("budget_exceeded", [0.0])[0] == 1.0:
                status = "budget_exceeded"
            return kind, out["rewards"][0], status

        t = time.perf_counter()
        rows = eight_threads(call, 8 * rounds)
    return _summary(rows, time.perf_counter() - t)


def inline(rounds: int) -> dict[str, Any]:
    from faithsieve.grader import grade

    times = []
    scores = []
    for i in range(rounds):
        t = time.perf_counter()
        r = grade(BOMB.format(i=i), "1", "", isolation="inline", cache_size=0, time_budget_s=1.0)
        times.append(round(time.perf_counter() - t, 2))
        scores.append(r.score)
    return {"seconds_per_call": times, "scores": scores}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--mode", default="all", choices=["inproc", "service", "inline", "all"])
    ap.add_argument("--json")
    args = ap.parse_args()
    modes = ["inproc", "service", "inline"] if args.mode == "all" else [args.mode]
    fns = {"inproc": inproc, "service": service, "inline": inline}
    out = {}
    for m in modes:
        out[m] = fns[m](args.rounds if m != "inline" else min(args.rounds, 3))
        print(m, json.dumps(out[m]), flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
