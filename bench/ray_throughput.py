"""`faithsieve score` on Ray with 1 and 2 local worker nodes against the local pool, and the grader's
calls per second from Ray actors against in-process, measured in one run (ratios within the run).

Score: the first ``--limit`` items of ``--data`` (default ProcessBench's gsm8k + math) are scored
three times into fresh directories: by the local killable pool (``--workers`` processes), then on a
local Ray cluster whose head has no CPUs and which has one worker node, then two worker nodes, each
node with ``--node-cpus`` CPUs (one scoring actor per CPU). Walls include each run's start-up
(Ray's actors, the pools' fork servers), as a user sees it; the cluster itself is started before the
clock. The predictions of the three runs must agree item by item (``stable_view``).

Grader: ``--calls`` distinct completions graded by an in-process ``Grader`` (its ``grade_many`` over
``--workers`` worker processes), by a ``GraderActorPool`` of ``--workers`` one-CPU actors
(``grade_batch``), and by per-call ``compute_score`` on those actors (all calls in flight); the
rewards must equal the in-process ones.

    python bench/ray_throughput.py [--data ../shared/datasets/raw/processbench] [--limit 300] [--calls 2000]
    python bench/ray_throughput.py --identity ../shared/datasets/raw --limit 100   # Ray == local, per source

The numbers depend on the machine: on one with fewer cores than the nodes' CPUs, a second node
adds processes, not compute.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any


def _default_data() -> Path:
    return Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "raw" / "processbench"


def _score(data: Path, out: Path, limit: int, **kw: Any) -> dict[str, Any]:
    from faithsieve.scoring.run import ScoreRequest, run_score

    t0 = time.perf_counter()
    res = run_score(ScoreRequest(path=data, out=out, limit=limit, sample="first", progress=False, resamples=10,
                                 report=False, **kw))
    wall = time.perf_counter() - t0
    return {"items": res.processed, "wall_s": round(wall, 2), "proofs_per_second": round(res.processed / wall, 1)}


def _records(out: Path) -> list[Any]:
    from faithsieve.scoring.run import stable_view

    return [stable_view(json.loads(x)) for x in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]


def bench_score(data: Path, limit: int, workers: int, node_cpus: int, tmp: Path) -> dict[str, Any]:
    import ray
    from ray.cluster_utils import Cluster

    rows: dict[str, Any] = {"local_pool": {"workers": workers, **_score(data, tmp / "local", limit, workers=workers)}}
    for nodes in (1, 2):
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False,
                                                                  "object_store_memory": 100 * 1024 * 1024})
        try:
            for _ in range(nodes):
                cluster.add_node(num_cpus=node_cpus, object_store_memory=100 * 1024 * 1024)
            ray.init(address=cluster.address, log_to_driver=False)
            cluster.wait_for_nodes()
            rows[f"ray_{nodes}_node"] = {"nodes": nodes, "actors": nodes * node_cpus,
                                         **_score(data, tmp / f"ray{nodes}", limit, ray=cluster.address)}
        finally:
            ray.shutdown()
            cluster.shutdown()
    base = _records(tmp / "local")
    for name in ("ray_1_node", "ray_2_node"):
        other = _records(tmp / name.replace("ray_", "ray").replace("_node", ""))
        rows[name]["identical_to_local"] = other == base
        rows[name]["ratio_to_local"] = round(rows[name]["proofs_per_second"] / rows["local_pool"]["proofs_per_second"], 2)
    return rows


def _samples(n: int) -> list[tuple[str, str, str, dict[str, str]]]:
    out = []
    for i in range(n):
        a, b = 3 + i, 7 + i % 13
        total = a * b + (1 if i % 3 == 0 else 0)
        text = f"First, {a} * {b} = {total}.\nThen {total} + {a} = {total + a}.\nThe answer is \\boxed{{{total + a}}}."
        out.append(("bench", text, str(a * b + a), {"question": f"What is {a} times {b}, plus {a}?"}))
    return out


def bench_grader(calls: int, workers: int) -> dict[str, Any]:
    import ray

    from faithsieve.grader import Grader, GraderConfig
    from faithsieve.grading.onray import GraderActorPool

    cfg = GraderConfig(time_budget_s=5.0, workers=workers)
    samples = _samples(calls)
    items = [(s, g, e["question"]) for _, s, g, e in samples]
    local = Grader()
    local.warmup(cfg)
    t0 = time.perf_counter()
    expected = local.grade_many(items, cfg)
    in_process = time.perf_counter() - t0
    local.close()

    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, object_store_memory=100 * 1024 * 1024)
    try:
        pool = GraderActorPool(workers, num_cpus=1, config=cfg.model_copy(update={"workers": 1}))
        ray.get([a.pids.remote() for a in pool.actors])  # started and warm before the clock
        t0 = time.perf_counter()
        batched = pool.grade_batch(items)
        batch_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        per_call = pool.compute_scores(samples)
        call_s = time.perf_counter() - t0
        pool.close()
    finally:
        ray.shutdown()
    same = [r.score for r in batched] == [r.score for r in expected] == [d["score"] for d in per_call]
    return {"calls": calls, "workers": workers, "rewards_identical": same,
            "in_process_grade_many_calls_per_s": round(calls / in_process, 1),
            "ray_actor_pool_grade_batch_calls_per_s": round(calls / batch_s, 1),
            "ray_actor_compute_score_calls_per_s": round(calls / call_s, 1)}


def identity(raw: Path, limit: int | None, workers: int, tmp: Path) -> dict[str, Any]:
    """Every source under ``raw`` scored locally and on a local Ray cluster: items compared one by one."""
    import ray

    from faithsieve.core.errors import FaithSieveError

    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, object_store_memory=100 * 1024 * 1024)
    rows: dict[str, Any] = {}
    try:
        for src in sorted(d for d in raw.iterdir() if d.is_dir()):
            kw: dict[str, Any] = {"limit": limit, "progress": False, "resamples": 10, "report": False,
                                  "skip_invalid": True}
            try:
                from faithsieve.scoring.run import ScoreRequest, run_score

                t0 = time.perf_counter()
                run_score(ScoreRequest(path=src, out=tmp / src.name / "local", workers=workers, **kw))
                t1 = time.perf_counter()
                run_score(ScoreRequest(path=src, out=tmp / src.name / "ray", ray="auto", **kw))
                t2 = time.perf_counter()
            except FaithSieveError as exc:
                rows[src.name] = {"error": exc.message[:200]}
                continue
            if not (tmp / src.name / "local" / "predictions.jsonl").exists():
                rows[src.name] = {"items": 0, "note": "no step-labelled item the adapters read"}
                continue
            a, b = _records(tmp / src.name / "local"), _records(tmp / src.name / "ray")
            rows[src.name] = {"items": len(a), "identical": sum(x == y for x, y in zip(a, b, strict=False)),
                              "all_identical": a == b, "local_s": round(t1 - t0, 1), "ray_s": round(t2 - t1, 1)}
            print(src.name, json.dumps(rows[src.name]), flush=True)
    finally:
        ray.shutdown()
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=_default_data())
    ap.add_argument("--limit", type=int, default=300, help="items scored per run (the first N)")
    ap.add_argument("--workers", type=int, default=2, help="local pool processes; grader workers and actors")
    ap.add_argument("--node-cpus", type=int, default=2, help="CPUs of each Ray worker node")
    ap.add_argument("--calls", type=int, default=2000, help="grader calls per measurement")
    ap.add_argument("--identity", type=Path, metavar="RAW",
                    help="instead: score every source folder under RAW locally and on Ray, compare item by item "
                         "(--limit items of each, a stratified sample; 0: all)")
    ap.add_argument("--skip-score", action="store_true")
    ap.add_argument("--skip-grader", action="store_true")
    args = ap.parse_args()
    out: dict[str, Any] = {}
    if args.identity is not None:
        with tempfile.TemporaryDirectory() as tmp:
            rows = identity(args.identity, args.limit or None, args.workers, Path(tmp))
        print(json.dumps(rows, indent=1))
        return 0 if all(r.get("all_identical", "error" in r or not r.get("items")) for r in rows.values()) else 1
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_score:
            out["score"] = bench_score(args.data, args.limit, args.workers, args.node_cpus, Path(tmp))
            print(json.dumps(out["score"], indent=1), flush=True)
    if not args.skip_grader:
        out["grader"] = bench_grader(args.calls, args.workers)
        print(json.dumps(out["grader"], indent=1), flush=True)
    return 0 if all(v.get("identical_to_local", True) for v in out.get("score", {}).values()) and \
        out.get("grader", {}).get("rewards_identical", True) else 1


if __name__ == "__main__":
    raise SystemExit(main())
