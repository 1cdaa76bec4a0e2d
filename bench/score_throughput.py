"""Throughput of `faithsieve score` on the 1,400 ProcessBench dev items (gsm8k + math).

Each measurement is a cold start: a fresh Python process runs the scoring loop into an
empty output directory, so imports, worker start-up and report writing are included.
Prints proofs/s for a single process and for ``--workers 2`` (and any other counts given),
and checks that the runs' predictions agree: the predicted step must be identical; lines
that differ in other fields (e.g. a solver's counterexample) are counted and named.

    python bench/score_throughput.py [--data ../shared/datasets/raw/processbench] [--workers 1 2]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_RUN = """
import sys, time
from pathlib import Path
t0 = time.perf_counter()
from faithsieve.scoring.run import ScoreRequest, run_score
res = run_score(ScoreRequest(path=Path(sys.argv[1]), out=Path(sys.argv[2]), workers=int(sys.argv[3]), progress=False))
print(res.metrics["n"], res.processed, time.perf_counter() - t0)
"""


def _default_data() -> Path:
    return Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "raw" / "processbench"


def measure(data: Path, workers: int, out: Path) -> dict[str, float]:
    """Run one cold scoring process; return items, wall seconds (process) and proofs/s."""
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _RUN, str(data), str(out), str(workers)],
                          check=True, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    n, processed, inner = done.stdout.split()
    metrics = json.loads((out / "metrics.json").read_text())
    return {"workers": workers, "items": int(n), "processed": int(processed), "wall_s": round(wall, 2),
            "in_process_s": round(float(inner), 2), "proofs_per_second_cold": round(int(n) / wall, 1),
            "proofs_per_second_loop": metrics.get("proofs_per_second")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=_default_data(), help="dataset path (default: the ProcessBench dev splits)")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts to measure (default: 1 2)")
    args = ap.parse_args()
    if not args.data.exists():
        print(f"no data at {args.data}", file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for w in args.workers:
            row = measure(args.data, w, Path(tmp) / f"w{w}")
            rows.append(row)
            print(json.dumps(row), flush=True)
        base = rows[0]
        from faithsieve.scoring.run import stable_view

        preds = {row["workers"]: [stable_view(json.loads(line)) for line in
                                  (Path(tmp) / f"w{row['workers']}" / "predictions.jsonl").read_text().splitlines()]
                 for row in rows}
    ref = preds[base["workers"]]
    verdict_diffs: dict[int, list[str]] = {}
    detail_diffs: dict[int, list[str]] = {}
    for w, recs in preds.items():
        verdict_diffs[w] = [a["id"] for a, b in zip(ref, recs, strict=False) if (a["id"], a["predicted"]) != (b["id"], b["predicted"])]
        detail_diffs[w] = [a["id"] for a, b in zip(ref, recs, strict=False) if a != b]
    print()
    print(f"{'workers':>8}{'items':>8}{'wall s':>10}{'proofs/s (cold)':>18}{'loop proofs/s':>16}{'speed-up':>10}")
    for row in rows:
        print(f"{row['workers']:>8}{row['items']:>8}{row['wall_s']:>10}{row['proofs_per_second_cold']:>18}"
              f"{row['proofs_per_second_loop'] or 0:>16}{row['proofs_per_second_cold'] / base['proofs_per_second_cold']:>10.2f}")
    for w in preds:
        if w == base["workers"]:
            continue
        print(f"\nworkers {w} vs {base['workers']}: {len(verdict_diffs[w])} items with a different predicted step"
              f"{' ' + str(verdict_diffs[w][:10]) if verdict_diffs[w] else ''}; "
              f"{len(detail_diffs[w])} lines differ in any field other than timings"
              f"{' ' + str(detail_diffs[w][:10]) if detail_diffs[w] else ''}")
    return 0 if not any(verdict_diffs.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
