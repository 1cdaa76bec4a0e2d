"""The witness search's last stage: rational roots of equations read as quadratics along one
variable. Every point it finds is a model of its SMT query, and the checker's outcome is z3's."""

from __future__ import annotations

import random

import pytest
from faithsieve.obligations.checkers.portfolio import Z3Checker
from faithsieve.obligations.kinds.models import DerivationObligation
from faithsieve.obligations.procedures import witness
from faithsieve.obligations.procedures.witness import witness_points

from tests.obligations.test_fastpaths import BASE, outcome, rel
from tests.obligations.test_witness import _z3_sat_at, z3_not


def _quadratic(rng: random.Random, names: str) -> str:
    a, b = rng.sample(names, 2) if len(names) > 1 else (names, names)
    k = rng.choice((1, 2, 3, -1))
    shape = rng.random()
    if shape < 0.4:
        return f"{a}^2 + {k}*{b}^2 = {rng.randint(1, 40)}"
    if shape < 0.6:
        return f"({a} - {rng.randint(-3, 3)})^2 + ({b} + {rng.randint(-3, 3)})^2 = {rng.randint(1, 30)}"
    if shape < 0.8:
        return f"{a}*{b} + {k}*{a}^2 = {rng.randint(-9, 9)}"
    return f"{a}^2 = {k}*{b} + {rng.randint(-5, 5)}"


def _derivation(rng: random.Random) -> tuple[list[str], str, tuple[str, ...]]:
    names = rng.choice(("ab", "abc", "xy"))
    premise = rng.choice((
        f"{names[0]} + {names[1]} = {names[1]} + {names[0]}",  # holds everywhere
        f"{names[0]} {rng.choice(('>', '<', '>=', '!='))} {rng.randint(-3, 3)}",
        _quadratic(rng, names),
    ))
    claim = _quadratic(rng, names) if rng.random() < 0.8 else f"{names[1]} > {rng.randint(-3, 3)}"
    ints = tuple(v for v in names if rng.random() < 0.15)
    return [premise], claim, ints


@pytest.mark.parametrize("seed", range(3))
def test_points_found_are_models_of_the_smt_queries(seed: int) -> None:
    rng = random.Random(seed)
    late = 0
    for _ in range(120):
        premises, claim, ints = _derivation(rng)
        ps, c = [rel(p) for p in premises], rel(claim)
        fails, holds = witness_points(ps, c, ints)
        for point, rels in ((fails, [*ps, z3_not(c)]), (holds, [*ps, c])):
            if point is not None:
                assert _z3_sat_at(rels, point, ints), (premises, claim, ints, point)
        if fails is not None and holds is not None:
            late += _found_late(ps, c, ints)
    assert late >= 10  # the last stage does find points the others miss


def _found_late(ps, c, ints) -> bool:
    saved = witness.MAX_QUADRATIC_EVALUATIONS
    witness.MAX_QUADRATIC_EVALUATIONS = 0
    try:
        return None in witness_points(ps, c, ints)
    finally:
        witness.MAX_QUADRATIC_EVALUATIONS = saved


@pytest.mark.parametrize("seed", range(2))
def test_the_checker_gives_the_solvers_outcome(seed: int) -> None:
    rng = random.Random(50 + seed)
    fast, slow = Z3Checker(), Z3Checker()
    for ch in (fast, slow):
        ch.real_sections = ch.piecewise = False  # the solver decides what the search leaves
    slow.witness_points = False
    for _ in range(80):
        premises, claim, ints = _derivation(rng)
        ob = DerivationObligation(**BASE, premises=tuple(rel(p) for p in premises), claim=rel(claim), integer_vars=ints)
        assert outcome(fast.check, ob) == outcome(slow.check, ob), (premises, claim, ints)


def test_a_rational_point_on_a_conic() -> None:
    # (a - 1)^2 + (b - 1)^2 = 5 at a = 2: b = 3 or -1; the secant steps before miss both
    args = ([rel("-1 - a^2 + 2 * b - b^2 + 2 * a - 1 = -a^2 - b^2 + 2 * a + 2 * b - 2")],
            rel("-a^2 - b^2 + 2 * a + 2 * b - 2 = -5"))
    fails, holds = witness_points(*args)
    assert fails is not None and holds is not None
    assert _found_late(*args, ())  # found by the last stage only


def test_bound_on_evaluations(monkeypatch) -> None:
    within = ([rel("a^2 + b^2 + c^2 = c^2 + b^2 + a^2")], rel("c^2 - a^2 = 3"))  # 47 evaluations
    beyond = ([rel("a^2 + b^2 = b^2 + a^2")], rel("c^2 + 2 * b^2 = 1"))  # 50 evaluations
    assert witness.MAX_QUADRATIC_EVALUATIONS == 48
    assert None not in witness_points(*within)
    assert None in witness_points(*beyond)
    monkeypatch.setattr(witness, "MAX_QUADRATIC_EVALUATIONS", 50)
    assert None not in witness_points(*beyond)
    monkeypatch.setattr(witness, "MAX_QUADRATIC_EVALUATIONS", 0)
    assert None in witness_points(*within)  # the last stage found it


def test_bound_on_root_size(monkeypatch) -> None:
    # b^2 = 10^80 along b: b = 10^40, 133 bits, past MAX_ROOT_BITS; 10^30 (100 bits) is within
    assert None not in witness_points([rel("a + b = b + a")], rel(f"b^2 = {10**60}"))
    assert None in witness_points([rel("a + b = b + a")], rel(f"b^2 = {10**80}"))
    monkeypatch.setattr(witness, "MAX_ROOT_BITS", 140)
    assert None not in witness_points([rel("a + b = b + a")], rel(f"b^2 = {10**80}"))
