"""The outcome memo returns exactly what a fresh check returns (the same text with other content
is checked again), keeps only what no clock cut short, stays within its size, and leaves
verdicts independent of the order of items."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from faithsieve.obligations.checkers import memo
from faithsieve.obligations.checkers.memo import OutcomeMemo, memo_key
from faithsieve.obligations.checkers.portfolio import (
    SympyChecker,
    Z3Checker,
    run_portfolio,
)
from faithsieve.obligations.kinds.models import (
    DerivationObligation,
    IdentityObligation,
    SubstitutionObligation,
    Unknown,
    Verified,
)

from faithsieve.core.settings import Settings
from faithsieve.scoring.run import stable_view
from tests.obligations.test_fastpaths import BASE, rel

LATER = float("inf")
MINI = Path(__file__).resolve().parents[2] / "datasets" / "proofloc-mini" / "proofloc-mini.jsonl"


def _at(ob: Any, **place: Any) -> Any:
    return ob.model_copy(update=place)


OBLIGATIONS = [
    IdentityObligation(**BASE, claim=rel("(x+1)^2 = x^2 + 2x + 1")),
    IdentityObligation(**BASE, claim=rel("sqrt(x^2) = x"), asserted_identity=True),
    IdentityObligation(**BASE, claim=rel("x^3 - 1 = (x + 1)(x^2 - x + 1)")),
    DerivationObligation(**BASE, premises=(rel("x/y = 3"),), claim=rel("x = 3y")),
    DerivationObligation(**BASE, premises=(rel("m^2 - 32 > 0"),), claim=rel("(m - 4)(m + 8) > 0")),
    DerivationObligation(**BASE, premises=(rel("x^2 - 4x - 2 = 0"),), claim=rel("x^2 - 4x + 2 = 0")),
]


def soon() -> float:
    return time.monotonic() + 60


MEMO = OutcomeMemo()
"""The memo of this module's tests (each test starts with it empty)."""


@pytest.fixture(autouse=True)
def fresh_memo():
    for ob in OBLIGATIONS:  # the solvers load on first use: a first check slower than the clock rule
        run_portfolio(ob, [SympyChecker(), Z3Checker()], time.monotonic() + 60)
    MEMO.clear()


@pytest.mark.parametrize("ob", OBLIGATIONS)
def test_a_hit_is_the_fresh_outcome(ob: Any) -> None:
    checkers = [SympyChecker(memo=MEMO), Z3Checker(memo=MEMO)]
    first = run_portfolio(ob, checkers, soon())
    lookups = MEMO.misses
    assert lookups >= 1 and MEMO.hits == 0
    again = run_portfolio(_at(ob, id="o9", step=4, span=(3, 9), edge="e7"), checkers, soon())  # same text elsewhere
    assert MEMO.hits == lookups and MEMO.misses == lookups  # each checker's outcome came from the memo
    fresh = next(o for o in (ch.check(ob, soon()) for ch in (SympyChecker(), Z3Checker())) if o is not None)
    assert again == first == fresh


def test_the_key_ignores_only_where_an_obligation_sits() -> None:
    ch = SympyChecker()
    ob = SubstitutionObligation(**BASE, claim=rel("x + 1 = 3"), env={"x": 2})
    assert memo_key(ch, ob) == memo_key(ch, _at(ob, id="o5", step=3, span=(1, 2), edge="e1", source="x+1=3"))
    for change in ({"env": {"x": 3}}, {"approx": True}, {"claim": rel("x + 1 = 4")}, {"origins": {"x": "step 1"}}):
        assert memo_key(ch, ob) != memo_key(ch, _at(ob, **change)), change
    assert memo_key(ch, ob) != memo_key(SympyChecker(seed=1), ob)  # the checker's settings are part of it
    assert memo_key(Z3Checker(timeout_ms=300), ob) != memo_key(Z3Checker(timeout_ms=301), ob)


def test_the_same_text_with_other_content_is_checked_again() -> None:
    ch = SympyChecker()
    first = SubstitutionObligation(**{**BASE, "source": "x + 1 = 3"}, claim=rel("x + 1 = 3"), env={"x": 2})
    other = _at(first, env={"x": 3})  # the same words, another established value
    runs: list[str] = []
    assert MEMO.check(ch, first, LATER, lambda: runs.append("first") or Verified("exact")) == Verified("exact")
    out = MEMO.check(ch, other, LATER, lambda: runs.append("other") or Unknown("sympy", "differs"))
    assert out == Unknown("sympy", "differs") and runs == ["first", "other"]
    again = MEMO.check(ch, _at(other, id="o7"), LATER, lambda: runs.append("again") or Verified("exact"))
    assert again == Unknown("sympy", "differs") and runs == ["first", "other"]  # the slot now holds the latest


def test_only_deterministic_checkers_are_memoized() -> None:
    calls: list[int] = []

    class Counting:
        name = "counting"

        def check(self, ob: Any, deadline: float) -> Any:
            calls.append(1)
            return Verified("counting")

    assert not hasattr(Counting(), "memo")
    ob = OBLIGATIONS[0]
    for _ in range(3):
        run_portfolio(ob, [Counting(), SympyChecker(memo=MEMO)], LATER)
    assert len(calls) == 3 and len(MEMO) == 0


def test_size_bound() -> None:
    m = OutcomeMemo(max_entries=3)
    ch = SympyChecker()
    obs = [_at(IdentityObligation(**BASE, claim=rel(f"x + {i} = {i} + x")), source=f"x + {i} = {i} + x") for i in range(5)]
    for ob in obs:
        m.check(ch, ob, LATER, lambda: Verified("sympy-poly"))
    assert len(m) == 3
    runs: list[int] = []
    m.check(ch, obs[0], LATER, lambda: runs.append(1) or Verified("sympy-poly"))  # the oldest was dropped
    assert runs == [1]
    m.check(ch, obs[4], LATER, lambda: runs.append(1) or Verified("sympy-poly"))  # the newest is kept
    assert runs == [1]
    assert OutcomeMemo().max_entries == memo.MAX_ENTRIES == 4096


def test_bound_on_obligation_size() -> None:
    ch = SympyChecker()
    terms = " + ".join(["x"] * (memo.MAX_KEY_NODES // 2))  # n terms: 2n - 1 nodes
    small = IdentityObligation(**BASE, claim=rel(f"{terms} = 0"))  # 2n - 1 + 1 = MAX_KEY_NODES nodes
    assert memo_key(ch, small) is not None
    big = IdentityObligation(**BASE, claim=rel(f"{terms} = 0 + 0"))  # two more
    assert memo_key(ch, big) is None
    runs: list[int] = []
    for _ in range(2):
        MEMO.check(ch, big, LATER, lambda: runs.append(1) or Verified("sympy-poly"))
    assert runs == [1, 1] and len(MEMO) == 0
    assert memo.MAX_KEY_NODES == 256


def test_outcomes_the_clock_may_have_cut_are_not_kept() -> None:
    m = OutcomeMemo()
    ch = Z3Checker()
    ob = OBLIGATIONS[4]
    m.check(ch, ob, LATER, lambda: Unknown("z3", "solver gave up (timeout or nonlinear)"))
    m.check(ch, ob, time.monotonic() + memo.CLOCK_SAFE_S / 2, lambda: Unknown("z3", "does not follow"))
    m.check(ch, ob, LATER, lambda: Unknown("budget", "time budget exhausted"))
    assert len(m) == 0
    m.check(ch, ob, time.monotonic() + 2 * memo.CLOCK_SAFE_S, lambda: Unknown("z3", "does not follow"))
    assert len(m) == 1


def test_a_slow_check_is_not_kept() -> None:
    m = OutcomeMemo()
    ob = OBLIGATIONS[0]

    def slow() -> Any:
        time.sleep(memo.CLOCK_SAFE_S * 1.1)
        return Verified("sympy-poly")

    m.check(SympyChecker(), ob, LATER, slow)
    assert len(m) == 0
    quick = Z3Checker(timeout_ms=20)  # its solver calls may stop after 80 ms: a 50 ms check may have met that
    assert quick.min_time_limit_s == pytest.approx(0.08)

    def fifty_ms() -> Any:
        time.sleep(0.05)
        return Unknown("z3", "does not follow")

    m.check(quick, OBLIGATIONS[4], LATER, fifty_ms)
    assert len(m) == 0
    m.check(Z3Checker(), OBLIGATIONS[4], LATER, fifty_ms)  # 50 ms is well inside the default 1.2 s
    assert len(m) == 1


def test_verdicts_do_not_depend_on_the_order_of_items() -> None:
    from faithsieve.datasets.adapters import load_dataset

    from faithsieve.pipeline import checkers_for
    from faithsieve.scoring.run import predict

    items = load_dataset(MINI).items[:40]
    settings = Settings()
    owned = next(ch.memo for ch in checkers_for(settings) if getattr(ch, "memo", None) is not None)
    owned.clear()
    forward = [stable_view(predict(it, settings)) for it in items]
    owned.clear()
    backward = [stable_view(predict(it, settings)) for it in reversed(items)][::-1]
    twice = [stable_view(predict(it, settings)) for it in items]  # the memo kept: every symbolic check a hit
    assert forward == backward == twice
    assert owned.hits > 0
    assert json.dumps(forward)  # records stay serialisable
