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

The hostile run (10,000 calls from 8 threads) is ``bench/grader_hostile.py``; ``--hostile N`` here runs
it after the pairs.

    pip install -e '.[math-verify]'
    python bench/grader_vs_math_verify.py                       # 1,000 pairs
    python bench/grader_vs_math_verify.py --pairs 200 --json out.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=RAW)
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--hostile", type=int, default=0, help="also run bench/grader_hostile.py's run")
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
        sys.path.insert(0, str(Path(__file__).parent))
        from grader_hostile import hostile_run, summary

        out["hostile"] = hostile_run(args.hostile, args.threads, args.budget, args.seed)
        print(summary(out["hostile"]), flush=True)
    if args.json:
        tmp = args.json.with_suffix(args.json.suffix + ".tmp")
        tmp.write_text(json.dumps(out, indent=2, ensure_ascii=True))
        tmp.replace(args.json)
    g.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
