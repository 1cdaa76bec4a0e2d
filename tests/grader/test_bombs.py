"""A bomb frees no neighbour: completions whose step check does not finish within the budget (a
non-linear derivation in two variables that z3 works on until its time is up: slow on the checker as it
stands) graded from 8 threads beside completions with a refuted step. Every neighbour is checked or,
when no worker could take it, pays as refuted; every bomb pays ``budget_exceeded`` (or, unchecked, the
same). No completion is paid more than the checked refuted neighbour. The same through the service's
``POST /get_reward``, and the inline mode keeps its budget.

The tests are about the grader's budget semantics, not about this bomb: if the checker learns to decide
the bomb quickly, ``test_the_bomb_is_a_bomb`` says so and the bomb must be replaced by a slower one."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from faithsieve import grader as g
from faithsieve.grader import GraderConfig

pytestmark = pytest.mark.slow

BOMB = ("We are given $x^3 y^2 - 7x y^3 + 5x^2 - y = 3$.\nThen $x^5 y - 11 x^2 y^4 + x^3 = 2y + 1$.\n"
        "So the answer is $\\boxed{{1}}$. (call {i})")
"""A claim whose check does not finish within a 1 s budget on the current checker (a 'looping' bomb; also
``bench/grader_bombs.py``'s): a non-linear derivation in two real variables from the relation before it,
which no fast path decides. z3 works on it until its wall-clock limit (its resource limit does not stop
it: given a minute, it gives up at the minute); a solver call may take 4 times the obligation limit
(800 ms in the grader), at least what a 1 s budget leaves the pipeline, so the check runs to the budget.
With a budget of a few seconds it ends in about 1 s, undecided ("solver gave up")."""
NEIGHBOUR = "We compute the product first.\n$12 \\times 15 = 170$.\nThen $170 + 10 = 180$.\nThe answer is $\\boxed{{180}}$. ({i})"
CFG = GraderConfig(cache_size=0)


def eight_threads(call: Callable[[int], tuple[str, float, str]], n: int) -> list[tuple[str, float, str]]:
    """``call(i)`` for ``i`` in ``range(n)`` from 8 threads; the rows in the order they finished (also
    ``bench/grader_bombs.py``'s runner)."""
    out: list[tuple[str, float, str]] = []
    lock = threading.Lock()
    todo = iter(range(n))

    def run() -> None:
        while True:
            with lock:
                i = next(todo, None)
            if i is None:
                return
            row = call(i)
            with lock:
                out.append(row)

    threads = [threading.Thread(target=run) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return out


def test_the_bomb_is_a_bomb() -> None:
    assert g.warmup(CFG)
    r = g.grade(BOMB.format(i=-1), "1", "", CFG)
    assert r.status == "budget_exceeded" and r.score == 0.5, "the checker now decides the bomb: pick a slower one"


def test_neighbours_beside_bombs_in_process() -> None:
    assert g.warmup(CFG)

    def call(i: int) -> tuple[str, float, str]:
        kind = "bomb" if i % 2 == 0 else "neighbour"
        r = g.grade((BOMB if kind == "bomb" else NEIGHBOUR).format(i=i), "1" if kind == "bomb" else "180", "", CFG)
        return kind, r.score, r.status

    rows = eight_threads(call, 16)
    assert max(score for _, score, _ in rows) == 0.5, rows  # nobody is paid more than the refuted neighbour
    assert {status for kind, _, status in rows if kind == "bomb"} <= {"budget_exceeded", "worker_unavailable"}
    checked = [status for kind, _, status in rows if kind == "neighbour"]
    assert checked.count("ok") >= 3 * len(checked) // 4, rows  # waits for replaced workers are credited


def test_neighbours_beside_bombs_on_get_reward() -> None:
    from faithsieve.api.app import create_app
    from faithsieve.api.settings import ServiceSettings
    from fastapi.testclient import TestClient

    with TestClient(create_app(ServiceSettings(workers=1, max_pending=64, batch_max_items=8))) as client:
        def call(i: int) -> tuple[str, float, str]:
            kind = "bomb" if i % 2 == 0 else "neighbour"
            body = {"query": [(BOMB if kind == "bomb" else NEIGHBOUR).format(i=i)], "prompts": [""],
                    "labels": ["1" if kind == "bomb" else "180"]}
            res = client.post("/get_reward", json=body)
            assert res.status_code == 200, res.text
            logs = res.json()["extra_logs"]
            return kind, res.json()["rewards"][0], "ok" if logs["decided"][0] == 1.0 else "undecided"

        rows = eight_threads(call, 16)
    assert max(score for _, score, _ in rows) == 0.5, rows
    assert all(status == "undecided" for kind, _, status in rows if kind == "bomb")


def test_inline_keeps_its_budget() -> None:
    t = time.perf_counter()
    r = g.grade(BOMB.format(i=-2), "1", "", GraderConfig(cache_size=0, isolation="inline", time_budget_s=1.0))
    assert time.perf_counter() - t < 1.5
    assert r.status == "budget_exceeded" and r.score == 0.5
