"""Throughput of faithsieve.grader, single process, calls one after another (as verl/TRL make them).

Sets (from ../shared/datasets/raw beside the project, or --data):

* gsm8k-ref      GSM8K test reference solutions as completions (calculator tags ``<<..>>`` removed),
                 their ``#### N`` answer as reference (~270 chars, 3-5 steps);
* gsm8k-model    ProcessBench GSM8K model solutions (steps joined by blank lines), reference from
                 GSM8K test by question (~900 chars);
* math-model     ProcessBench MATH model solutions (~1.3k chars, up to 6k), no reference;
* long           8 ProcessBench MATH solutions concatenated (~10-20k chars, near ``max_chars``);
* hostile        adversarial completions (huge numbers, towers, garbage, 100k chars ...).

For each: calls/s, mean/p50/p90/p99/max ms per call, and how many calls were fully checked,
flagged over budget, or found an error. The result cache is off (every call does the work).

    python bench/grader_throughput.py                 # default: process isolation, budget 1 s
    python bench/grader_throughput.py --isolation inline --limit 300 --json out.json
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from faithsieve import grader as g
from faithsieve.grader import GraderConfig

RAW = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "raw"
"""``../shared/datasets/raw`` relative to the project root (the shared evaluation data)."""
NEEDED = ("gsm8k/test.jsonl", "processbench/gsm8k.json", "processbench/math.json")
"""The files of ``--data`` the sets are built from."""


def missing_data(raw: Path) -> str | None:
    """Why ``raw`` cannot serve as ``--data`` (one line naming the path), or ``None``."""
    lacking = [n for n in NEEDED if not (raw / n).is_file()]
    if not lacking:
        return None
    return f"{raw}: no {', '.join(lacking)} there; pass --data DIR (the datasets/raw folder of ../shared)"


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def load_sets(raw: Path, limit: int, seed: int) -> dict[str, list[tuple[str, Any, str]]]:
    rng = random.Random(seed)
    gsm = [json.loads(line) for line in (raw / "gsm8k" / "test.jsonl").read_text().splitlines() if line.strip()]
    by_q = {r["question"].strip(): r["answer"].split("####")[-1].strip() for r in gsm}
    sets: dict[str, list[tuple[str, Any, str]]] = {}
    sets["gsm8k-ref"] = [(re.sub(r"<<[^>]*>>", "", r["answer"]), r["answer"].split("####")[-1].strip(), r["question"])
                         for r in gsm][:limit]
    pb_gsm = json.loads((raw / "processbench" / "gsm8k.json").read_text())
    sets["gsm8k-model"] = [("\n\n".join(x["steps"]), by_q.get(x["problem"].strip()), x["problem"]) for x in pb_gsm][:limit]
    pb_math = json.loads((raw / "processbench" / "math.json").read_text())
    sets["math-model"] = [("\n\n".join(x["steps"]), None, x["problem"]) for x in pb_math][:limit]
    longs = []
    for _ in range(max(1, limit // 8)):
        picks = rng.sample(pb_math, 8)
        longs.append(("\n\n".join("\n\n".join(x["steps"]) for x in picks)[:19_500], None, picks[0]["problem"]))
    sets["long"] = longs
    return sets


def hostile_set() -> list[tuple[str, Any, str]]:
    rng = random.Random(7)
    items = {
        "empty": "",
        "100k_chars": "2+2=4. " * 15_000,
        "100k_garbage": "".join(rng.choice("ab$\\{}()^_=+-*/0123456789 \n") for _ in range(100_000)),
        "19k_garbage": "".join(rng.choice("ab$\\{}()^_=+-*/0123456789 \n") for _ in range(19_000)),
        "huge_number": "So 9" + "9" * 10_000 + " + 1 = 10. #### " + "9" * 5000,
        "towers": "Thus 2^2^2^2^2^2^2 = 5 and $2^{2^{2^{2^{2^{2}}}}} = 5$ and $10^{10^{10}} = 1$. #### 5",
        "factorials": "Hence $1000! \\cdot 999! = 5$. The answer is 18.",
        "nesting": "So " + "(" * 3000 + "1" + ")" * 3000 + " = 2 and $" + "\\frac{1}{" * 500 + "2" + "}" * 500 + " = 2$",
        "braces": "\\boxed{" * 4000 + "18",
        "400_steps": "\n".join(f"Step {i}: {i} + {i} = {2 * i}." for i in range(1, 400)),
        "199_steps_sqrt": "\n".join(f"Step {i}: So $\\sqrt{{{i + 1}}} \\cdot \\sqrt{{{i + 2}}} + \\pi^{{{i % 30}}} = {i}$."
                                    for i in range(1, 199)),
        "polynomials": "\n\n".join(["Thus $((a+b+c)^{24})^{24} = c^{24}$ and $(x+y+z+w)^{24} = 1$."] * 30),
        "special_tokens": "2 + 2 = 4. #### 4" + "<|im_end|>" * 500 + " " * 50_000,
    }
    return [(v, "18", name) for name, v in items.items()]


def run_set(items: list[tuple[str, Any, str]], cfg: GraderConfig) -> dict[str, Any]:
    times, flags = [], {"process_checked": 0, "budget_exceeded": 0, "error_found": 0, "correct_answer": 0}
    t_all = time.perf_counter()
    for sol, ref, prob in items:
        t = time.perf_counter()
        r = g.grade(sol, ref, prob, cfg)
        times.append((time.perf_counter() - t) * 1000)
        flags["process_checked"] += r.process_checked
        flags["budget_exceeded"] += r.budget_exceeded
        flags["error_found"] += r.first_error_step is not None
        flags["correct_answer"] += bool(r.outcome)
    wall = time.perf_counter() - t_all
    return {
        "n": len(items), "chars_mean": round(statistics.mean(len(s) for s, _, _ in items)),
        "calls_per_s": round(len(items) / wall, 1), "mean_ms": round(statistics.mean(times), 2),
        "p50_ms": round(_pct(times, 0.5), 2), "p90_ms": round(_pct(times, 0.9), 2),
        "p99_ms": round(_pct(times, 0.99), 2), "max_ms": round(max(times), 2), **flags,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=RAW, help=f"raw datasets folder (default {RAW})")
    ap.add_argument("--limit", type=int, default=1000, help="items per set (long: limit/8)")
    ap.add_argument("--isolation", choices=["process", "inline"], default="process")
    ap.add_argument("--budget", type=float, default=1.0, help="time_budget_s")
    ap.add_argument("--sets", default="gsm8k-ref,gsm8k-model,math-model,long,hostile")
    ap.add_argument("--json", type=Path, help="also write the table here")
    args = ap.parse_args(argv)
    problem = missing_data(args.data)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2

    cfg = GraderConfig(isolation=args.isolation, time_budget_s=args.budget, cache_size=0)
    t = time.perf_counter()
    g.warmup(cfg)
    print(f"isolation={args.isolation} budget={args.budget}s workers={cfg.workers} "
          f"(pool start {time.perf_counter() - t:.2f}s, not counted)")
    sets = load_sets(args.data, args.limit, seed=0)
    sets["hostile"] = hostile_set()
    wanted = [s for s in args.sets.split(",") if s]
    # warm-up pass so that first-call effects (lazy imports, caches) do not count
    run_set(sets["gsm8k-ref"][:20], cfg)
    rows = {}
    head = f"{'set':12s} {'n':>5s} {'chars':>6s} {'calls/s':>8s} {'mean':>7s} {'p50':>7s} {'p90':>7s} {'p99':>8s} " \
           f"{'max':>8s} {'checked':>7s} {'over':>5s} {'err':>5s} {'acc':>5s}"
    print(head)
    for name in wanted:
        row = run_set(sets[name], cfg)
        rows[name] = row
        print(f"{name:12s} {row['n']:5d} {row['chars_mean']:6d} {row['calls_per_s']:8.1f} {row['mean_ms']:7.2f} "
              f"{row['p50_ms']:7.2f} {row['p90_ms']:7.2f} {row['p99_ms']:8.2f} {row['max_ms']:8.2f} "
              f"{row['process_checked']:7d} {row['budget_exceeded']:5d} {row['error_found']:5d} {row['correct_answer']:5d}")
    if "hostile" in wanted:
        print("\nhostile completions, one by one:")
        for sol, ref, name in sets["hostile"]:
            t = time.perf_counter()
            r = g.grade(sol, ref, "Compute.", cfg)
            print(f"  {name:16s} {len(sol):7d} chars {1000 * (time.perf_counter() - t):8.1f} ms  score={r.score:+.2f} "
                  f"checked={r.process_checked} flags={','.join(r.flags) or '-'}")
    if args.json:
        args.json.write_text(json.dumps({"config": cfg.model_dump(), "sets": rows}, indent=2))
    g.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
