"""FaithSieve as a reward function inside RL training loops.

One core, ``grade(solution, reference, problem, config)``, and thin adapters in the
shapes the common frameworks call:

* verl: ``compute_score(data_source, solution_str, ground_truth, extra_info=None, **overrides)``
  returns ``{"score": float, ...numeric extras}``;
* TRL: ``make_trl_reward(...)`` returns ``reward(prompts, completions, **kwargs) -> list[float | None]``;
* OpenRLHF: ``reward_func(queries, prompts, labels, **overrides)`` (the ``--remote_rm_url file.py``
  form) and ``openrlhf_reward(query, prompts, labels, config)``, the pure function behind the
  service's ``POST /get_reward``. Both return ``{"rewards", "scores", "extra_logs"}`` as plain
  lists (no torch import here).

Reward (every weight is a ``GraderConfig`` field; the README (RL section) has the table)::

    score = outcome_term - error_penalty * [a step of the solution is refuted]

    outcome_term = correct_reward    if the final answer equals the reference (as a value)
                 = incorrect_reward  if an answer was found and differs
                 = no_answer_reward  if no final answer could be read (or no reference given: 0)

The process term comes from ``faithsieve.pipeline.localize`` on the solution split into
steps exactly as the service splits it (``faithsieve.split.proof_from_text``). Only a
refutation backed by an exact counterexample counts. With ``step_rewards`` on, the result
also carries one reward per step: ``step_reward_before`` for steps before the first refuted
one, ``step_reward_error`` for it, ``step_reward_after`` for later steps.

Time: each call has one hard budget (``time_budget_s``, default 1 s) covering answer extraction,
answer comparison and the step check, held from any thread (no signals). With the default
``isolation="process"`` the step check, and any answer comparison that needs more than exact
arithmetic, run in a small pool of worker processes (the shared killable pool, ``faithsieve.runtime.workers``)
that the grader kills and replaces when they overrun, so no completion can hold the trainer
longer than the budget. When the step check
does not finish for a reason the text controls (out of budget, too long, too many steps, the
checker fails or its worker dies) the score is the outcome term minus ``error_penalty``, what a
refuted step pays, so defeating the check never pays; when it does not run for a reason outside the
text (workers busy or still starting: call ``warmup()`` first) the score is the outcome term alone.
``budget_exceeded`` / ``flags`` say why; nothing raises into the trainer. Every input is cleaned
first (``faithsieve.mathtext.textnorm.clean_text``: invisible and control characters removed,
compatibility forms folded). Nothing in a completion is ever evaluated as code.

The parts live in ``faithsieve.grading``: ``stated_answer`` / ``normalize`` / ``parse`` / ``equivalence``
/ ``approx`` (the answer check), ``inputs``, ``config``, ``result``, ``check`` and ``pool`` (the
worker processes), ``reward`` (``Grader``, ``grade``), ``adapters`` (verl, TRL, OpenRLHF).

Determinism: the answer comparison and the pipeline are deterministic; a result that did not
finish within budget is flagged and carries no process term, so the same input gives the same
reward on any worker unless it sits on the time boundary (then it is flagged).
"""

from __future__ import annotations

from faithsieve.grading.adapters import (
    compute_score,
    compute_score_async,
    make_compute_score,
    make_trl_reward,
    openrlhf_reward,
    reward_func,
    warmup_in_background,
)
from faithsieve.grading.check import _run_check, _settings  # noqa: F401 - kept under faithsieve.grader for callers (tests clear _settings' cache)
from faithsieve.grading.config import GraderConfig, default_config
from faithsieve.grading.equivalence import answers_equal
from faithsieve.grading.result import LOG_KEYS, GradeResult
from faithsieve.grading.reward import (
    Grader,
    default_grader,
    grade,
    grade_many,
    replace_default_grader,
    shutdown,
    warmup,
)

__all__ = [
    "LOG_KEYS",
    "answers_equal",
    "GradeResult",
    "Grader",
    "GraderConfig",
    "compute_score",
    "compute_score_async",
    "default_config",
    "default_grader",
    "grade",
    "grade_many",
    "make_compute_score",
    "make_trl_reward",
    "openrlhf_reward",
    "replace_default_grader",
    "reward_func",
    "shutdown",
    "warmup",
    "warmup_in_background",
]
