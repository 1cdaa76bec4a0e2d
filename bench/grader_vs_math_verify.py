"""faithsieve's grader against Hugging Face Math-Verify, side by side in one run, and a hostile run.

Pairs (1,000 by default, from /work/shared/datasets/raw or --data; nothing is copied):

* 400 GSM8K-style: ProcessBench ``gsm8k.json`` model solutions (steps joined by blank lines), gold =
  the GSM8K test answer (``#### N``) of the same question;
* 100 GSM8K-style: GSM8K test reference solutions (calculator tags removed) against their own answer;
* 500 MATH-style: MR-MATH model solutions (``mr-math_invalid_errors`` model_output, then
  ``mr-math_redundant_errors`` and ``perturbation`` steps joined) against ``ground_truth_answer``.

Timed, one call after another in this process (as verl/TRL call a reward function), first calls
excluded (imports, worker start):

* ``math_verify``:  ``verify(parse(gold), parse(completion))`` — gold wrapped in ``$...$`` so its LaTeX
  extraction reads it;
* ``answer_check``: ``compute_score(..., process=False)`` — our extraction + equivalence;
* ``with_process``: ``compute_score(...)`` with the step check (default config: worker processes,
  1 s budget).

Caches are off (every call does its work). Agreement between the two answer checks is counted.

Hostile run (``--hostile N``): N calls of ``grade`` from 8 threads over adversarial inputs (huge
closed forms, towers, 100k-char garbage, 3,000-deep nesting, lone surrogates, raising ``__str__``,
>4,300-digit integers, long proofs that overrun); counts exceptions and calls over budget + 100 ms.

    pip install -e '.[math-verify]'
    python bench/grader_vs_math_verify.py                       # 1,000 pairs, then 10,000 hostile calls
    python bench/grader_vs_math_verify.py --pairs 200 --hostile 0 --json out.json
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

from faithsieve import grader as g
from faithsieve.grader import GraderConfig

RAW = Path("/work/shared/datasets/raw")


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _steps(x: Any) -> str:
    if isinstance(x, str):
        return x
    return "\n".join(_steps(s) for s in x)


def load_pairs(raw: Path, n: int) -> list[tuple[str, str, str]]:
    """(kind, gold, completion) pairs: half GSM8K-style, half MATH-style."""
    gsm = _jsonl(raw / "gsm8k" / "test.jsonl")
    by_q = {r["question"].strip(): r["answer"].split("####")[-1].strip() for r in gsm}
    pb = json.loads((raw / "processbench" / "gsm8k.json").read_text())
    gsm_pairs = [("gsm8k", by_q[x["problem"].strip()], "\n\n".join(x["steps"])) for x in pb if x["problem"].strip() in by_q]
    gsm_pairs += [("gsm8k", r["answer"].split("####")[-1].strip(), re.sub(r"<<[^>]*>>", "", r["answer"])) for r in gsm]
    mm = raw / "mr-math"
    math_pairs = [("math", r["ground_truth_answer"], r["model_output"]) for r in _jsonl(mm / "mr-math_invalid_errors.json")]
    math_pairs += [("math", r["ground_truth_answer"], _steps(r["model_output_step_format"]))
                   for r in _jsonl(mm / "mr-math_redundant_errors.json")]
    math_pairs += [("math", r["ground_truth_answer"], _steps(r["hypothesis_steps"])) for r in _jsonl(mm / "perturbation.json")]
    half = n // 2
    return gsm_pairs[:half] + math_pairs[: n - half]


def _timed(fn: Any, pairs: list[tuple[str, str, str]]) -> tuple[float, list[int]]:
    out = []
    t = time.perf_counter()
    for _, gold, comp in pairs:
        out.append(fn(gold, comp))
    return time.perf_counter() - t, out


def side_by_side(pairs: list[tuple[str, str, str]]) -> dict[str, Any]:
    from math_verify import parse, verify  # the optional extra

    def mv(gold: str, comp: str) -> int:
        try:
            return int(bool(verify(parse(f"${gold}$"), parse(comp))))
        except Exception:  # noqa: BLE001 - counted as 'not equal', as its own callers do
            return 0

    outcome_only = GraderConfig(process=False, cache_size=0)
    full = GraderConfig(cache_size=0)

    def ours(gold: str, comp: str) -> int:
        return int(g.compute_score("bench", comp, gold, None, **{"process": False, "cache_size": 0})["acc"])

    def ours_full(gold: str, comp: str) -> int:
        return int(g.compute_score("bench", comp, gold, None, cache_size=0)["acc"])

    assert g.warmup(full)
    for fn in (mv, ours, ours_full):  # first calls: imports, caches of parsers
        for _, gold, comp in pairs[:5]:
            fn(gold, comp)
    rows: dict[str, Any] = {}
    results: dict[str, list[int]] = {}
    for name, fn in (("math_verify", mv), ("answer_check", ours), ("with_process", ours_full)):
        secs, res = _timed(fn, pairs)
        results[name] = res
        rows[name] = {"seconds": round(secs, 3), "calls_per_s": round(len(pairs) / secs, 1), "equal": sum(res)}
        print(f"  {name:13s} {rows[name]['calls_per_s']:9.1f} calls/s  ({secs:.2f} s, {sum(res)} judged equal)",
              flush=True)
    agree = sum(a == b for a, b in zip(results["math_verify"], results["answer_check"], strict=True))
    rows["speedup_answer_check"] = round(rows["answer_check"]["calls_per_s"] / rows["math_verify"]["calls_per_s"], 1)
    rows["speedup_with_process"] = round(rows["with_process"]["calls_per_s"] / rows["math_verify"]["calls_per_s"], 2)
    rows["agreement"] = agree
    rows["disagreements"] = [
        {"kind": k, "gold": gold, "answer": (g.grade(comp, gold, "", outcome_only).answer or "")[:120],
         "math_verify": a, "ours": b}
        for (k, gold, comp), a, b in zip(pairs, results["math_verify"], results["answer_check"], strict=True) if a != b
    ]
    print(f"  answer check {rows['speedup_answer_check']}x Math-Verify; with the process check "
          f"{rows['speedup_with_process']}x; agreement {agree}/{len(pairs)}", flush=True)
    return rows


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
    ]


def hostile_run(n: int, threads: int, budget: float, seed: int) -> dict[str, Any]:
    cfg = GraderConfig(cache_size=0, time_budget_s=budget)
    assert g.warmup(cfg)
    inputs = hostile_inputs(seed)
    lock = threading.Lock()
    stats: dict[str, Any] = {"calls": 0, "exceptions": 0, "over_budget_100ms": 0, "max_s": 0.0, "by_kind": {}}
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
            try:
                g.grade(sol, ref, "Compute.", cfg)
                exc = False
            except BaseException:  # noqa: BLE001 - counted
                exc = True
            dt = time.perf_counter() - t
            with lock:
                stats["calls"] += 1
                stats["exceptions"] += exc
                stats["over_budget_100ms"] += dt > budget + 0.1
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=RAW)
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--hostile", type=int, default=10_000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--budget", type=float, default=1.0, help="time_budget_s of the hostile run")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    out: dict[str, Any] = {}
    if args.pairs:
        pairs = load_pairs(args.data, args.pairs)
        print(f"side by side on {len(pairs)} pairs ({sum(k == 'gsm8k' for k, _, _ in pairs)} GSM8K, "
              f"{sum(k == 'math' for k, _, _ in pairs)} MATH)", flush=True)
        out["side_by_side"] = side_by_side(pairs)
    if args.hostile:
        print(f"hostile: {args.hostile} calls from {args.threads} threads, budget {args.budget}s", flush=True)
        out["hostile"] = hostile_run(args.hostile, args.threads, args.budget, args.seed)
        h = out["hostile"]
        print(f"  {h['calls']} calls in {h['seconds']} s: {h['exceptions']} exceptions, "
              f"{h['over_budget_100ms']} over budget + 100 ms, slowest {h['max_s']} s", flush=True)
    if args.json:
        tmp = args.json.with_suffix(args.json.suffix + ".tmp")
        tmp.write_text(json.dumps(out, indent=2, ensure_ascii=True))
        tmp.replace(args.json)
    g.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
