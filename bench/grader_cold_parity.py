"""Math-Verify's own default-configuration cases (``tests/grader/mathverify_cases.py``) through the verl
entry point (``faithsieve.grader.compute_score``, ``process=False``), in a fresh process: ``cold`` makes
the first calls with no ``warmup()`` (the worker pool starts under them), ``warm`` calls ``warmup()`` first.
Prints the count that match Math-Verify's expected value and the ``status`` values seen.

    python bench/grader_cold_parity.py cold
    python bench/grader_cold_parity.py warm
"""

from __future__ import annotations

import collections
import re
import sys
import time


def _completion(pred: str) -> str:
    if "\\boxed" in pred or re.search(r"(?i)answer", pred) or len(pred) > 100:
        return pred
    return f"So the final answer is \\boxed{{{pred}}}."


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "cold"
    sys.path.insert(0, ".")
    from faithsieve.grader import compute_score, warmup
    from tests.grader.mathverify_cases import CASES

    if mode == "warm":
        warmup()
    t0 = time.perf_counter()
    ok = 0
    statuses: collections.Counter[str] = collections.Counter()
    for _, gold, pred, expected in CASES:
        out = compute_score("math", _completion(pred), gold, None, process=False)
        ok += int(out["acc"]) == expected
        statuses[str(out.get("status", "-"))] += 1
    n = len(CASES)
    print(f"{mode}: {ok}/{n} match Math-Verify's expected value; statuses {dict(statuses)}; "
          f"{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
