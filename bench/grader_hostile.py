"""The grader under attack: hostile calls from many threads, a fresh process's first call, and the
step-reward evasions (invisible characters, budget bombs), in one run.

* ``hostile``: N calls of ``grade`` (default 10,000) from 8 threads, budget 1 s, over adversarial
  inputs (huge closed forms, towers, 100k-char garbage, 3,000-deep nesting, lone surrogates, raising
  ``__str__``, >4,300-digit integers, 2,000 boxed answers, proofs that overrun, invisible characters
  inside false claims). The pool is *not* warmed first: the calls made while it starts are part of the
  run. Counts exceptions and calls whose own time (wall time less ``waited_ms``, the waits for the pool's
  start or a free worker, which are not charged to a call) is over budget + 0.1 s and + 0.25 s, the
  slowest by kind.
* ``first_call``: ``grade`` in a fresh interpreter (``python -c``), the time of its first call.
* ``evasions``: the scores of a false step with and without each invisible character, and of a
  proof whose step check a formula bomb exhausts, next to the same proof's honest refutation.

    python bench/grader_hostile.py                      # all three
    python bench/grader_hostile.py --hostile 800 --json out.json
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from faithsieve import grader as g
from faithsieve.grader import GraderConfig

INVISIBLE = {"none": "", "ZWSP": "\u200b", "NUL": "\x00", "BOM": "\ufeff", "soft hyphen": "\u00ad",
             "RLO": "\u202e", "word joiner": "\u2060", "ZWJ": "\u200d", "invisible times": "\u2062"}
"""Characters an attacker puts inside a false claim so that it cannot be read."""


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no")


def _nested(depth: int) -> Any:
    x: Any = "#### 18"
    for _ in range(depth):
        x = [x]
    return x


def hostile_inputs(seed: int) -> list[tuple[str, Any, Any]]:
    rng = random.Random(seed)
    garbage = "".join(rng.choice("ab$\\{}()^_=+-*/0123456789 \n") for _ in range(100_000))
    long_proof = "\n".join(f"Step {i}: So $\\sqrt{{{i + 1}}} \\cdot \\sqrt{{{i + 2}}} + {i} = {i}$." for i in range(1, 150))
    return [
        ("exp_tower", "So \\boxed{\\exp(\\exp(\\exp(64)))}", "5"),
        ("power_tower", "$2^{2^{2^{2^{2^{2}}}}}$ so \\boxed{10^{10^{10}}}", "10^{10^{10}}+1"),
        ("sin_huge", "\\boxed{\\sin(10^{300}) + \\sqrt{2}}", "\\sqrt{2}"),
        ("factorials", "Hence $1000! \\cdot 999! = 5$ and $(10^{9})! = 3$. The answer is \\boxed{(10^9)!}", "3"),
        ("garbage_100k", garbage, "18"),
        ("garbage_19k", garbage[:19_000], "18"),
        ("nesting_parens", "So " + "(" * 3000 + "1" + ")" * 3000 + " = 2. #### 2", "2"),
        ("nesting_frac", "$" + "\\frac{1}{" * 500 + "2" + "}" * 500 + "$ \\boxed{" + "\\sqrt{" * 200 + "2" + "}" * 201, "2"),
        ("open_boxes", "\\boxed{" * 4000 + "18", "18"),
        ("nested_lists", _nested(3000), "18"),
        ("nested_reference", "#### 18", _nested(3000)),
        ("surrogates", "\ud800 9 * 2 = 18 \udfff\n#### 18", "18\ud801"),
        ("raising_str", _Unprintable(), "18"),
        ("raising_reference", "#### 18", _Unprintable()),
        ("big_int_reference", "#### 5", 10**5000),
        ("many_boxes", " and ".join(f"\\boxed{{{i}}}" for i in range(2000)), "1, 2"),
        ("long_proof_overrun", long_proof + "\n#### 5", "5"),
        ("huge_set", "\\boxed{" + ", ".join(f"\\sqrt{{{i}}}" for i in range(2, 60)) + "}",
         ", ".join(f"\\sqrt{{{i}}}" for i in range(59, 1, -1))),
        ("identity_poly", "\\boxed{((a+b+c)^{24})^{24}}", "((c+b+a)^{24})^{24}"),
        ("ok_gsm", "Janet sells 16 - 3 - 4 = 9 eggs.\nShe makes 9 * 2 = $18.\n#### 18", "18"),
        *((f"invisible_{k}", f"Step 1: 3 + 4 = 8{c}.\nStep 2: So the answer is 7.", "7") for k, c in INVISIBLE.items()),
        ("fullwidth", "Step 1: ３ + ４ ＝ ８.\nStep 2: So the answer is 7.", "7"),
    ]


def hostile_run(n: int, threads: int, budget: float, seed: int) -> dict[str, Any]:
    cfg = GraderConfig(cache_size=0, time_budget_s=budget)
    g.shutdown()  # a cold pool: the calls made while it starts are part of the run
    inputs = hostile_inputs(seed)
    lock = threading.Lock()
    stats: dict[str, Any] = {"calls": 0, "exceptions": 0, "over_budget_100ms": 0, "over_budget_250ms": 0,
                             "max_s": 0.0, "flags": {}, "by_kind": {}}
    counter = iter(range(n))
    progress_every = max(1, n // 10)

    def worker() -> None:
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                return
            name, sol, ref = inputs[i % len(inputs)]
            t = time.perf_counter()
            flags: tuple[str, ...] = ()
            waited = 0.0
            try:
                r = g.grade(sol, ref, "Compute.", cfg)
                flags, waited = r.flags, r.waited_ms / 1000
                exc = False
            except BaseException:  # noqa: BLE001 - counted
                exc = True
            dt = time.perf_counter() - t - waited  # the call's own time: waits for the pool are not its budget
            with lock:
                stats["calls"] += 1
                stats["exceptions"] += exc
                stats["over_budget_100ms"] += dt > budget + 0.1
                stats["over_budget_250ms"] += dt > budget + 0.25
                for f in flags:
                    stats["flags"][f] = stats["flags"].get(f, 0) + 1
                stats["max_s"] = max(stats["max_s"], dt)
                k = stats["by_kind"].setdefault(name, {"calls": 0, "max_s": 0.0})
                k["calls"] += 1
                k["max_s"] = round(max(k["max_s"], dt), 4)
                if stats["calls"] % progress_every == 0:
                    print(f"  hostile: {stats['calls']}/{n} calls, {stats['exceptions']} exceptions, "
                          f"{stats['over_budget_100ms']} over budget+100ms, max {stats['max_s']:.3f}s", flush=True)

    t0 = time.perf_counter()
    ts = [threading.Thread(target=worker) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    stats["seconds"] = round(time.perf_counter() - t0, 2)
    stats["max_s"] = round(stats["max_s"], 4)
    stats["threads"], stats["budget_s"] = threads, budget
    return stats





def summary(h: dict[str, Any]) -> str:
    return (f"  {h['calls']} calls from {h['threads']} threads in {h['seconds']} s: {h['exceptions']} exceptions, "
            f"{h['over_budget_250ms']} over budget + 0.25 s ({h['over_budget_100ms']} over + 0.1 s), "
            f"slowest {h['max_s']} s; flags {h['flags']}")


_FIRST_CALL = """
import time
from faithsieve.grader import grade
t = time.perf_counter()
r = grade("Janet sells 16 - 3 - 4 = 8 eggs.\\nShe makes 9 * 2 = $18.\\n#### 18", "18")
print(time.perf_counter() - t, r.score, ",".join(r.flags) or r.status, r.waited_ms)
"""


def first_calls(runs: int) -> list[dict[str, Any]]:
    """The first ``grade`` call of a fresh interpreter, ``runs`` times (default config: budget 1 s)."""
    out = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-c", _FIRST_CALL], capture_output=True, text=True, timeout=120)
        secs, score, flags = done.stdout.split()[0], done.stdout.split()[1], done.stdout.strip().split(" ")[2:]
        out.append({"seconds": round(float(secs), 3), "score": float(score), "flags": flags})
    return out


def evasions() -> dict[str, Any]:
    """Scores of the same false step hidden behind each invisible character, and of a budget bomb."""
    g.warmup()
    cfg = GraderConfig(cache_size=0)
    out: dict[str, Any] = {}
    for name, c in INVISIBLE.items():
        r = g.grade(f"Step 1: 3 + 4 = 8{c}.\nStep 2: So the answer is 7.", "7", "", cfg)
        out[name] = {"score": r.score, "flags": list(r.flags)}
    r = g.grade("Step 1: 3 + 4 ＝ 8.\nStep 2: So the answer is 7.", "7", "", cfg)
    out["fullwidth ="] = {"score": r.score, "flags": list(r.flags)}
    bomb = "\n".join(f"Step {i}: So $\\sqrt{{{i + 1}}} \\cdot \\sqrt{{{i + 2}}} + {i} = {i}$." for i in range(1, 150))
    for name, budget in (("bomb, budget 0.05 s", 0.05), ("bomb, budget 30 s", 30.0)):
        r = g.grade(bomb + "\n#### 5", "5", "", GraderConfig(cache_size=0, time_budget_s=budget))
        out[name] = {"score": r.score, "flags": list(r.flags)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hostile", type=int, default=10_000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--budget", type=float, default=1.0)
    ap.add_argument("--first-calls", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    out: dict[str, Any] = {}
    if args.first_calls:
        out["first_call"] = first_calls(args.first_calls)
        print("first call in a fresh process:", out["first_call"], flush=True)
    out["evasions"] = evasions()
    for k, v in out["evasions"].items():
        print(f"  {k:22s} score {v['score']:5.2f}  flags {v['flags']}", flush=True)
    if args.hostile:
        print(f"hostile: {args.hostile} calls from {args.threads} threads, budget {args.budget}s", flush=True)
        out["hostile"] = hostile_run(args.hostile, args.threads, args.budget, args.seed)
        print(summary(out["hostile"]), flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, ensure_ascii=True))
    g.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
