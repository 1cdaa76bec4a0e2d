"""The grader inside Ray workers: tasks and actors give the in-process rewards, the pool is sized from
the CPUs Ray assigns, and no grader process outlives its Ray worker."""

from __future__ import annotations

import time
from dataclasses import replace

from faithsieve.grader import Grader, GraderConfig, GradeResult
from faithsieve.grading.onray import GraderActorPool, compute_score, grader_actor

from .conftest import RAY_MARKS, descendants, ray

pytestmark = RAY_MARKS

CONFIG = GraderConfig(time_budget_s=5.0, workers=1)
"""A budget no check here comes near on a busy machine, so every reward is decided, never cut short."""


def samples(n: int, salt: int) -> list[tuple[str, str, str, dict[str, str]]]:
    """``n`` distinct verl samples: right and wrong arithmetic, right and wrong final answers."""
    out = []
    for i in range(n):
        a, b = 3 + i, 7 + salt
        total = a * b + (1 if i % 3 == 0 else 0)  # every third product is wrong by one: a refuted step
        answer = total if i % 4 else total + 2  # every fourth answer differs from the reference
        text = f"First, {a} * {b} = {total}.\nThen the answer is \\boxed{{{answer}}}."
        out.append(("synthetic", text, str(total), {"question": f"What is {a} times {b}?"}))
    return out


TIMING = ("time_ms", "waited_ms")
"""A result's timing fields: how long the check and its wait for a worker took, not what it decided."""


def verl(r: GradeResult) -> dict[str, float]:
    """verl's dict for a result, without its timing."""
    return {"score": r.score, **{k: v for k, v in r.log_values().items() if k not in TIMING}}


def untimed(d: dict[str, float]) -> dict[str, float]:
    return {k: v for k, v in d.items() if k not in TIMING}


def _gone(pids: list[int], within_s: float) -> bool:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if not descendants(pids):
            return True
        time.sleep(0.2)
    return False


def test_four_actors_500_calls_each_equal_in_process(cluster: str) -> None:
    batches = [samples(500, salt) for salt in range(4)]
    local = Grader()
    try:
        expected = [[verl(r) for r in
                     local.grade_many([(s, g, e["question"]) for _, s, g, e in batch], CONFIG)] for batch in batches]
    finally:
        local.close()
    actor_cls = grader_actor(num_cpus=0.5)
    actors = [actor_cls.remote(CONFIG) for _ in range(4)]
    try:
        pids = [p for a in actors for p in ray.get(a.pids.remote())]
        refs = [[a.compute_score.remote(*s) for s in batch] for a, batch in zip(actors, batches, strict=True)]
        got = [[untimed(d) for d in ray.get(r)] for r in refs]  # raises if any call raised: 0 exceptions
        assert got == expected
        assert sum(1 for batch in got for r in batch if r["error_found"]) > 0  # the refuted steps count
        assert not any(r["budget_exceeded"] for batch in got for r in batch)
    finally:
        for a in actors:
            ray.kill(a)
    assert len(pids) == 8  # each actor: itself and its one grader worker (0.5 CPU: a pool of 1)
    assert _gone(pids, 15), f"left after the actors ended: {sorted(descendants(pids))}"


def test_pool_is_sized_from_the_cpus_ray_assigns(cluster: str) -> None:
    two = grader_actor(num_cpus=2).remote(CONFIG.model_copy(update={"workers": 7}))
    try:
        assert ray.get(two.workers.remote()) == 2
        assert len(ray.get(two.pids.remote())) == 3  # the actor and two grader workers
    finally:
        ray.kill(two)

    @ray.remote(num_cpus=1)
    def task() -> tuple[dict[str, float], int]:
        from faithsieve.grading.reward import default_grader

        r = compute_score("d", "2 + 2 = 5. The answer is \\boxed{5}.", "4", {"question": "2+2?"},
                          time_budget_s=5.0)
        pool = default_grader().pool.processes
        return r, pool.workers if pool is not None else 0

    r, workers = ray.get(task.remote())
    assert workers == 1 and r["score"] == -0.5 and r["error_found"] == 1.0


def test_killed_actor_leaves_no_grader_process(cluster: str) -> None:
    actor = grader_actor(num_cpus=0.5).remote(CONFIG)
    pids = ray.get(actor.pids.remote())
    assert len(descendants(pids)) >= 3  # the actor, the fork server, its worker
    ray.kill(actor)  # SIGKILL to the Ray worker: nobody tells the grader's processes
    assert _gone(pids, 15), f"orphans: {sorted(descendants(pids))}"


def test_actor_pool_and_openrlhf_shape_equal_in_process(cluster: str) -> None:
    batch = samples(40, 9)
    items = [(s, g, e["question"]) for _, s, g, e in batch]
    local = Grader()
    try:
        expected = local.grade_many(items, CONFIG)
    finally:
        local.close()
    pool = GraderActorPool(2, num_cpus=0.5, config=CONFIG)
    try:
        assert [replace(r, time_ms=0.0, waited_ms=0.0) for r in pool.grade_batch(items)] == [
            replace(r, time_ms=0.0, waited_ms=0.0) for r in expected]
        assert [untimed(d) for d in pool.compute_scores(batch[:6])] == [verl(r) for r in expected[:6]]
        out = ray.get(pool.actors[0].reward_func.remote([q + s for q, s in zip(["Q: "] * 6, [i[0] for i in items[:6]],
                                                                              strict=True)],
                                                        ["Q: "] * 6, [i[1] for i in items[:6]]))
        assert out["rewards"] == [r.score for r in expected[:6]]
    finally:
        pool.close()
