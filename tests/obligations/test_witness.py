"""Exact witness points stand in for the SMT queries of a derivation only where z3 answers the same."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from faithsieve.obligations.checkers.portfolio import Z3Checker
from faithsieve.obligations.checkers.smt import _holds, _Syms, _z3_rel
from faithsieve.obligations.kinds.models import DerivationObligation, Unknown
from faithsieve.obligations.procedures import witness
from faithsieve.obligations.procedures.witness import separating_points

from faithsieve.mathtext.ast import Rel
from tests.obligations.test_fastpaths import BASE, outcome, rel

DOES_NOT_FOLLOW = "does not follow from the previous relation alone"
NEGATED = {"=": "!=", "!=": "=", "<": ">=", ">": "<=", "<=": ">", ">=": "<"}


def z3_not(r: Rel) -> Rel:
    return Rel(r.lhs, NEGATED[r.op], r.rhs)

DERIVATIONS = [
    ("k < 30/7", "k <= 4", ()), ("x < 5", "x > -13", ("x",)), ("x < 5", "-x - 4 < 9", ("x",)),
    ("28 + x = 2J", "x = 28 - 2J", ()), ("x^2 + y^2 + 2x*y = 196", "x^2 + y^2 + 38 = 196", ()),
    ("2x*y = 1", "x^2 - y^2 = 0", ()), ("n < 6k", "5k + 1 <= n", ("k", "n")), ("n <= 6", "n + 1 >= 13 - n", ("n",)),
    ("S/n = 91", "S = 91n", ()), ("(91n + 98)/(n + 1) = 92", "91n + 98 = 92(n + 1)", ()),
    ("x/(x + 6) = 1/2", "2x = x + 6", ()), ("3/6 = x/x", "1/2 = 1/x", ()), ("x^2 - 3x = 1", "(x - 1)(x - 3) = 0", ()),
    ("m^2 - 32 > 0", "(m - 4)(m + 8) > 0", ()), ("x > 3", "x > 2", ()), ("x = 3", "x < 2", ()),
    ("(a + b + c)^2 = 49", "49 = a^2 + b^2 + c^2 - 22", ()), ("abs(x) > 6", "x > 6", ("x",)),
    ("abs(x) + 1 > 7", "abs(x + 1) <= 7", ("x",)), ("x <= 6", "abs(x + 1) <= 7", ("x",)), ("25% * x = 5", "y = x", ()),
    ("1/a^2 = 16/d^2", "d = 4 * a", ()), ("(x - 5)^2 + (y - 15)^2 = 130", "x = 2y", ("x", "y")),
    ("t < 12.25", "t > 4", ("t",)), ("4x^2 + 11y^2 = 29", "x^2 - 6y^2 = 6", ()), ("2x = 3", "x = 1.5", ("x",)),
    ("x + y = 10", "x - y = 2", ("x", "y")), ("a + b = 1", "a*b <= 1/4", ()), ("x^2 = 4", "x = 2", ()),
]


DIVISION_BY_ZERO = [
    ("x/(x + 6) = 1/2", "2x = x + 6", ()), ("3/6 = x/x", "1/2 = 1/x", ()), ("1/x = 1/(5 - x)", "x = 5 - x", ()),
    ("S/n = 91", "S = 91n", ()), ("(91n + 98)/(n + 1) = 92", "91n + 98 = 92(n + 1)", ()),
    ("2/3 = 4/(x - 5)", "2(x - 5) = 3 * 4", ()), ("(c + d)/(d - c) = 2", "c + d = 2(d - c)", ("c", "d")),
    ("(m + 2)/(2(m + 2)) = 1/2", "m != -2", ()), ("1 = (4 + A)/(2B)", "2B = 4 + A", ()),
    ("28b = 30c", "b/c = 15/14", ()), ("x/y = 3", "x = 3y", ()), ("x/y = 3", "x = 3y", ("x", "y")),
    ("1/x + 1/x = 2/x", "x = 1", ()), ("x/0 = 1", "x = 2", ()), ("x/(y - y) = 1", "x/(y - y) = 2", ()),
    ("(x + 1)/x - 1/2 >= 0", "(2(x + 1) - x)/(2x) >= 0", ()), ("1/(x - 1) - 1/(x - 7) > 1", "x > 1", ()),
    # divisors that are products: their factors are solved one by one
    ("10k/((5 + k)(4 + k)) = 10/21", "k - (5 + k)(4 + k)/21 = 0", ()), ("x/((x - 3)^2 * (x + 1)) = 1", "x > 5", ()),
    ("y/(2(y - 1)(y + 2)) = 1/4", "y = 2", ("y",)), ("a/(b * (a - 2)) = 3", "a = 3b * (a - 2)", ()),
]


@pytest.mark.parametrize("premise,claim,ints", DERIVATIONS + DIVISION_BY_ZERO)
def test_witness_points_give_the_z3_outcome(premise: str, claim: str, ints: tuple[str, ...]) -> None:
    ob = DerivationObligation(**BASE, premises=(rel(premise),), claim=rel(claim), integer_vars=ints)
    fast = outcome(Z3Checker().check, ob)
    slow_checker = Z3Checker()
    slow_checker.witness_points = False
    assert fast == outcome(slow_checker.check, ob)


def _z3_sat_at(rels: list[Any], point: witness.Point, ints: tuple[str, ...]) -> bool:
    """z3 itself, on the query with the variables fixed at the point: satisfiable?"""
    import z3

    syms = _Syms(z3.Context())
    s = z3.Solver(ctx=syms.ctx)
    s.add(*[_z3_rel(r, syms) for r in rels])
    s.add(*[syms[v] == z3.RealVal(f"{x.numerator}/{x.denominator}", syms.ctx) for v, x in point.values.items() if v in syms])
    s.add(*[z3.IsInt(syms[v]) for v in ints if v in syms])
    return s.check() == z3.sat


@pytest.mark.parametrize("premise,claim,ints", DERIVATIONS + DIVISION_BY_ZERO)
def test_witness_points_are_models_of_the_smt_queries(premise: str, claim: str, ints: tuple[str, ...]) -> None:
    import z3

    p, c = rel(premise), rel(claim)
    found = separating_points([p], c, ints)
    if found is None:
        return
    fails, holds = found
    assert _z3_sat_at([p, z3_not(c)], fails, ints)
    assert _z3_sat_at([p, c], holds, ints)
    for point in found:
        assert all(point.values[v].denominator == 1 for v in ints if v in point.values)
        if not point.div0:  # no division by zero read: exact evaluation agrees
            assert _holds(p, point.values) is True
    assert _holds(c, fails.values) in (False, None) and _holds(c, holds.values) in (True, None)
    del z3


def test_witness_points_decide_without_a_solver(monkeypatch) -> None:
    import z3

    made: list[int] = []
    real = z3.Context
    monkeypatch.setattr(z3, "Context", lambda *a, **k: made.append(1) or real(*a, **k))
    ob = DerivationObligation(**BASE, premises=(rel("k < 30/7"),), claim=rel("k <= 4"))
    out = Z3Checker().check(ob, float("inf"))
    assert out == Unknown("witness", DOES_NOT_FOLLOW) and made == []
    assert separating_points([rel("k < 30/7")], rel("k <= 4"), ("k",)) is None  # no integer in (4, 30/7)


def test_a_root_is_an_integer_for_an_integer_variable() -> None:
    # 2x = 3 holds only at x = 3/2: no integer point satisfies the premise
    assert separating_points([rel("2x = 3")], rel("x > 0"), ("x",)) is None
    assert separating_points([rel("2x = 3")], rel("x > 1"), ()) is None  # the claim holds wherever the premise does
    assert separating_points([rel("2x = 3 + y")], rel("x > 1"), ()) is not None


def _sum_of(names: list[str]) -> str:
    return " + ".join(names)


def test_bound_on_variables(monkeypatch) -> None:
    monkeypatch.setattr(witness, "MAX_EVALUATIONS", 10_000)  # this test is about the number of variables
    names = list("pqrstuvw"[: witness.MAX_NAMES])
    claim = rel(f"{names[0]} = 1")
    assert separating_points([rel(f"{_sum_of(names)} = 10")], claim) is not None
    more = [*names, "z"]
    assert separating_points([rel(f"{_sum_of(more)} = 10")], claim) is None


def test_bound_on_relations() -> None:
    extra = [rel(f"y > {-i}") for i in range(witness.MAX_RELATIONS - 2)]
    claim = rel("x = 1")
    assert separating_points([rel("x + y = 10"), *extra], claim) is not None
    assert separating_points([rel("x + y = 10"), *extra, rel("y > -50")], claim) is None
    assert witness.MAX_RELATIONS == 4


def test_bound_on_evaluations(monkeypatch) -> None:
    # the holding point comes from the last stage: two equations solved along two variables
    args: tuple[list[Rel], Rel] = ([rel("x + y = 10")], rel("x - y = 2"))
    assert separating_points(*args) is not None
    monkeypatch.setattr(witness, "MAX_EVALUATIONS", 20)
    assert separating_points(*args) is None


def test_bound_on_root_size(monkeypatch) -> None:
    args: tuple[list[Rel], Rel] = ([rel(f"x = {10**30} * y")], rel("y = 0"))
    assert separating_points(*args) is not None
    monkeypatch.setattr(witness, "MAX_ROOT_BITS", 96)  # 10^30 needs 100 bits
    assert separating_points(*args) is None


def test_nodes_outside_the_fragment_are_left_to_the_solver() -> None:
    for premise in ("x = sqrt(y)", "x = 2^y", "x = y^13", "x ≈ 3", "x = π * y", "x = 5 mod y"):
        assert separating_points([rel(premise)], rel("x > 1")) is None, premise
    assert separating_points([rel("x = y^12")], rel("x > 1")) is not None


def test_a_division_by_zero_reads_one_value_per_dividend() -> None:
    # "x/(x + 6) = 1/2" at x = -6: -6/0 is given the value 1/2, and the claim fails there
    found = separating_points([rel("x/(x + 6) = 1/2")], rel("2x = x + 6"))
    assert found is not None
    fails, _ = found
    assert fails.values == {"x": -6} and fails.div0 == {-6: Fraction(1, 2)}
    # both sides divide 1 by zero at x = 0: one value for both, so they cannot differ there
    assert separating_points([rel("1/x = 1/(x*x)")], rel("x = 1")) is None or \
        all(not p.div0 for p in separating_points([rel("1/x = 1/(x*x)")], rel("x = 1")) or ())


def test_bound_on_dividends(monkeypatch) -> None:
    # three different dividends over zero at x = 0 (1, 2 and 3): three values to choose
    args: tuple[list[Rel], Rel] = ([rel("1/x + 2/x + 3/x = 6")], rel("x = 1"))
    monkeypatch.setattr(witness, "MAX_HOLES", 3)
    assert separating_points(*args) is not None
    monkeypatch.setattr(witness, "MAX_HOLES", 2)
    assert separating_points(*args) is None
    assert witness.MAX_HOLES == 2


def test_bound_on_divisors(monkeypatch) -> None:
    # x/(x - 5) = 1 holds only where the fifth divisor, x - 5, vanishes (5/0 then reads 1)
    fractions = "1/(y + 1) + 1/(y + 2) + 1/(y + 3) + 1/(y + 4)"
    premise = f"{fractions} = {fractions} + x/(x - 5) - 1"
    args: tuple[list[Rel], Rel] = ([rel(premise)], rel("y > 0"))
    monkeypatch.setattr(witness, "MAX_EVALUATIONS", 10_000)  # this test is about the number of divisors
    monkeypatch.setattr(witness, "MAX_DIVISORS", 5)
    assert separating_points(*args) is not None
    monkeypatch.setattr(witness, "MAX_DIVISORS", 4)
    assert separating_points(*args) is None
    assert witness.MAX_DIVISORS == 4


def test_bound_on_depth() -> None:
    deep = "x" + " + 1" * (witness.MAX_FASTPATH_NESTING + 2)
    assert separating_points([rel(f"{deep} = y")], rel("y = 0")) is None
    shallow = "x" + " + 1" * (witness.MAX_FASTPATH_NESTING - 2)
    assert separating_points([rel(f"{shallow} = y")], rel("y = 0")) is not None


def test_the_search_is_deterministic() -> None:
    runs: list[Any] = [separating_points([rel("x + y = 10")], rel("x - y = 2"), ()) for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]


def test_a_product_divisor_vanishes_where_a_factor_does() -> None:
    # (5 + k)(4 + k) vanishes at k = -5 and k = -4, which no secant step on the product reaches:
    # solved factor by factor, k = -5 gives -50/0 the value 10/21, and the claim fails there
    premise, claim = rel("10k/((5 + k)(4 + k)) = 10/21"), rel("k - (5 + k)(4 + k)/21 = 0")
    found = separating_points([premise], claim)
    assert found is not None
    fails, holds = found
    assert fails.values["k"] in (-5, -4) and fails.div0
    assert holds.values == {"k": 2} and not holds.div0
    assert witness._divisors([premise]) == [rel("k = 5 + k").rhs, rel("k = 4 + k").rhs]
    # factors count towards MAX_DIVISORS, powers give their base, constants are left out
    assert witness._divisors([rel("1/(2 * (x - 1)^3 * (x + 1) * x * (x - 2) * (x - 3)) = 1")]) == \
        [rel("k = x - 1").rhs, rel("k = x + 1").rhs, rel("k = x").rhs, rel("k = x - 2").rhs]
