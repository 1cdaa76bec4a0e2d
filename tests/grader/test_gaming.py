"""Step rewards that cannot be gamed: hiding a false claim, exhausting the check, padding past the limits,
or a hostile neighbour in a batch never raises a reward above what the honest refutation pays."""

from __future__ import annotations

import time

import pytest

from faithsieve import grader as g
from faithsieve.grader import GraderConfig
from faithsieve.grading.reward import UNCHECKED

NOCACHE = GraderConfig(cache_size=0)
FALSE_STEP = "Step 1: 3 + 4 = 8{}.\nStep 2: So the answer is 7."
BOMB = "\n".join(f"Step {i}: So $\\sqrt{{{i + 1}}} \\cdot \\sqrt{{{i + 2}}} \\cdot \\sqrt{{{i + 3}}} \\cdot \\sqrt{{{i + 5}}} + {i} = {i}$."
                 for i in range(1, 190))
"""A proof whose check takes far longer than a small budget (189 steps of radical products: ~0.3 s on an
idle machine, within the grader's step and length limits)."""


@pytest.fixture(autouse=True)
def _workers_up() -> None:
    """Every worker up and idle (a test here kills workers on purpose; they restart in the background)."""
    assert g.warmup(NOCACHE)
    pool = g.default_grader().pool.processes
    assert pool is not None
    until = time.monotonic() + 60
    while pool.idle < pool.workers:
        assert time.monotonic() < until
        time.sleep(0.05)


@pytest.mark.parametrize("ch", ["\u200b", "\x00", "\ufeff", "\u00ad", "\u202e", "\u2060", "\u200d", "\u2062"])
def test_an_invisible_character_does_not_hide_a_false_claim(ch: str) -> None:
    honest = g.grade(FALSE_STEP.format(""), "7", "", NOCACHE)
    hidden = g.grade(FALSE_STEP.format(ch), "7", "", NOCACHE)
    assert honest.score == 0.5 and honest.first_error_step == 1
    assert hidden.score == honest.score and hidden.first_error_step == 1 and hidden.flags == ()


def test_fullwidth_forms_do_not_hide_a_false_claim() -> None:
    r = g.grade("Step 1: ３ + ４ ＝ ８.\nStep 2: So the answer is 7.", "7", "", NOCACHE)
    assert r.score == 0.5 and r.first_error_step == 1


def test_a_bomb_cannot_raise_a_reward() -> None:
    """The same false proof, once checked and once with a formula bomb that exhausts the budget: the
    timed-out check pays exactly what the refutation pays (the outcome term minus ``error_penalty``)."""
    tight = GraderConfig(cache_size=0, time_budget_s=0.05)
    refuted = g.grade(FALSE_STEP.format("") , "7", "", tight)
    bombed = g.grade(BOMB + "\nSo the answer is 7.", "7", "", tight)
    assert "budget_exceeded" in bombed.flags and not bombed.process_checked
    assert bombed.score <= refuted.score == 1.0 - tight.error_penalty
    # and a wrong answer with a bomb pays no more than a wrong answer with a refuted step
    wrong_bombed = g.grade(BOMB + "\nSo the answer is 6.", "7", "", tight)
    assert wrong_bombed.score == tight.incorrect_reward - tight.error_penalty


def test_padding_past_the_limits_does_not_skip_the_check() -> None:
    padded = g.grade(FALSE_STEP.format("") + " " * 30_000 + "\nSo the answer is 7.", "7", "", NOCACHE)
    assert "too_long" in padded.flags and padded.score == 0.5
    many = "\n".join(f"Step {i}: {i} + {i} = {2 * i}." for i in range(1, 40)) + "\n#### 7"
    r = g.grade(many, "7", "", GraderConfig(cache_size=0, max_steps=10))
    assert "too_many_steps" in r.flags and r.score == 0.5


def test_what_pays_as_refuted_is_every_check_that_did_not_run() -> None:
    """What the text controls, and a check no worker could take (never better than a checked completion);
    only a choice of the config (``process_disabled``) or a missing reference leaves the outcome alone."""
    assert {"budget_exceeded", "too_long", "too_many_steps", "process_error", "worker_crashed"} <= UNCHECKED
    assert {"worker_unavailable", "pool_starting"} <= UNCHECKED
    assert not {"process_disabled", "no_reference"} & UNCHECKED
    off = g.grade(FALSE_STEP.format(""), "7", "", GraderConfig(cache_size=0, process=False))
    assert off.score == 1.0 and off.flags == ("process_disabled",)


def test_a_hostile_neighbour_costs_no_one_else_the_step_check() -> None:
    """One completion in eight overruns its budget and its worker, the only one, is killed and restarts
    (longer than a budget): the seven others in the batch are still checked, each within its own budget
    (counted from when a worker takes it, not from when the batch began)."""
    cfg = GraderConfig(cache_size=0, time_budget_s=0.1, workers=1)
    grader = g.Grader()  # its own pool of one worker: no spare to fall back on
    try:
        assert grader.warmup(cfg)
        normal = [(FALSE_STEP.format("") + f"\n(sample {i})", "7", "") for i in range(7)]
        items = [*normal[:3], (BOMB + "\n#### 7", "7", ""), *normal[3:]]
        out = grader.grade_many(items, cfg)
    finally:
        grader.close()
    assert "budget_exceeded" in out[3].flags and out[3].score == 0.5
    others = [r for k, r in enumerate(out) if k != 3]
    assert all(r.process_checked and r.first_error_step == 1 and r.score == 0.5 for r in others), \
        [r.flags for r in others]
