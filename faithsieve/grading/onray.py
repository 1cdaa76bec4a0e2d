"""The grader inside Ray workers, the way RL frameworks run reward functions (verl, OpenRLHF).

Three shapes, one rule: the grader's killable worker pool inside a Ray worker is sized from the CPUs
Ray gave that worker (``faithsieve.runtime.raycluster.assigned_cpus``), so a reward task or actor with
``num_cpus=k`` checks ``k`` completions at once and never more.

* **Plain tasks.** ``compute_score`` and ``reward_func`` here are the verl and OpenRLHF functions of
  ``faithsieve.grader`` with ``workers`` set from the task's CPUs; call them from any ``@ray.remote``
  function (or name this module's ``compute_score`` as verl's custom reward function). The pool lives in
  the Ray worker process and is reused by every later task that lands there.
* **Actors.** ``GraderActor`` is a plain class (``ray.remote`` is applied by ``grader_actor``, so
  importing this module needs no Ray) that owns one ``Grader``: ``compute_score`` (verl's signature),
  ``grade_batch`` (``grade_many``), ``reward_func`` (OpenRLHF's ``{"rewards", "scores", "extra_logs"}``).
* **A pool of actors.** ``GraderActorPool(n, num_cpus)`` spreads a batch over ``n`` actors and
  gathers the results in order; ``close`` ends the actors.

No orphans: the grader's worker processes watch the process that started them (the Ray worker) and
exit within a second when it dies — killed by ``ray.kill``, by the raylet when the job ends, or
from outside — and the fork server they come from exits with it. Results are those of the in-process
grader: the same ``grade`` runs, on the same config (send one ``GraderConfig`` to every actor).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from faithsieve.grading.adapters import _verl_problem, openrlhf_reward
from faithsieve.grading.adapters import compute_score as _compute_score
from faithsieve.grading.config import GraderConfig, _apply_overrides
from faithsieve.grading.result import GradeResult
from faithsieve.grading.reward import Grader, replace_default_grader
from faithsieve.runtime.raycluster import assigned_cpus, import_ray, refuse_shadowing

__all__ = ["GraderActor", "GraderActorPool", "compute_score", "grader_actor", "ray_config", "reward_func"]


def ray_config(config: GraderConfig | None = None, **overrides: Any) -> GraderConfig:
    """``config`` (default: ``GraderConfig()`` from the environment) with ``overrides``, its ``workers``
    set to the CPUs Ray assigned to the calling task or actor (unless ``workers`` is overridden)."""
    return _apply_overrides(config, {"workers": min(64, assigned_cpus()), **overrides})


def compute_score(data_source: Any = None, solution_str: Any = "", ground_truth: Any = None,
                  extra_info: Any = None, **kwargs: Any) -> dict[str, Any]:
    """verl's ``compute_score`` with the worker pool sized from the calling Ray worker's CPUs."""
    return _compute_score(data_source, solution_str, ground_truth, extra_info,
                          **{"workers": min(64, assigned_cpus()), **kwargs})


def reward_func(queries: Sequence[Any], prompts: Sequence[Any], labels: Sequence[Any], **kwargs: Any) -> dict[str, Any]:
    """OpenRLHF's ``reward_func`` with the worker pool sized from the calling Ray worker's CPUs."""
    return openrlhf_reward(queries, prompts, labels, ray_config(None, **kwargs))


class GraderActor:
    """A grader owned by one Ray actor: its pool (``workers`` = the actor's CPUs) starts with the actor."""

    def __init__(self, config: GraderConfig | None = None, **overrides: Any) -> None:
        self.config = ray_config(config, **overrides)
        # one actor per process: its grader is the process's default, which the adapters use too
        self.grader = replace_default_grader(Grader())
        self.grader.warmup(self.config)

    def compute_score(self, data_source: Any = None, solution_str: Any = "", ground_truth: Any = None,
                      extra_info: Any = None) -> dict[str, float]:
        """verl's reward for one sample: ``{"score": float, ...numeric extras}``."""
        r = self.grader.grade(solution_str, ground_truth, _verl_problem(extra_info), self.config)
        return {"score": r.score, **r.log_values()}

    def grade_batch(self, items: Sequence[tuple[Any, Any, Any]]) -> list[GradeResult]:
        """``(solution, reference, problem)`` items graded over this actor's workers, in order."""
        return self.grader.grade_many(items, self.config)

    def reward_func(self, queries: Sequence[Any], prompts: Sequence[Any], labels: Sequence[Any]) -> dict[str, Any]:
        """OpenRLHF's remote reward for a batch (``query`` = prompt + response)."""
        return openrlhf_reward(queries, prompts, labels, self.config)  # graded by self.grader, the default here

    def workers(self) -> int:
        """The size of this actor's grader pool."""
        return self.config.workers

    def pids(self) -> list[int]:
        """This actor's process and its grader's worker processes."""
        pool = self.grader.pool.processes
        return [os.getpid(), *(pool.worker_pids if pool is not None else [])]

    def close(self) -> None:
        """Stop the grader's workers (the actor stays usable: they start again on the next call)."""
        self.grader.close()


def grader_actor(num_cpus: float = 1, **ray_options: Any) -> Any:
    """``GraderActor`` as a Ray actor class with ``num_cpus`` (its pool's size, floored, at least 1);
    ``RayUnavailable`` with the fix when the working directory would shadow the package on the workers."""
    refuse_shadowing()  # (first: the fix is the same whether Ray is installed or not)
    ray = import_ray()
    return ray.remote(num_cpus=num_cpus, **ray_options)(GraderActor)


class GraderActorPool:
    """``actors`` grader actors of ``num_cpus`` each; a batch is cut into one slice per actor."""

    def __init__(self, actors: int, num_cpus: float = 1, config: GraderConfig | None = None,
                 **overrides: Any) -> None:
        self._ray = import_ray()
        cls = grader_actor(num_cpus)
        self.actors = [cls.remote(config, **overrides) for _ in range(actors)]

    def grade_batch(self, items: Sequence[tuple[Any, Any, Any]]) -> list[GradeResult]:
        """Every item's result, in order."""
        items = list(items)
        n = len(self.actors)
        size = -(-len(items) // n) if items else 0
        refs = [a.grade_batch.remote(items[i * size:(i + 1) * size]) for i, a in enumerate(self.actors) if i * size < len(items)]
        return [r for part in self._ray.get(refs) for r in part]

    def compute_scores(self, samples: Sequence[tuple[Any, Any, Any, Any]]) -> list[dict[str, float]]:
        """verl's ``compute_score`` for each ``(data_source, solution_str, ground_truth, extra_info)``,
        round-robin over the actors, in order."""
        refs = [self.actors[i % len(self.actors)].compute_score.remote(*s) for i, s in enumerate(samples)]
        return list(self._ray.get(refs))

    def close(self) -> None:
        """End the actors (their grader workers follow within a second)."""
        for a in self.actors:
            self._ray.kill(a)
        self.actors = []
