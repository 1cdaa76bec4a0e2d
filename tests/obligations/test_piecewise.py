""""Follows" proved by splitting ``abs`` and eliminating is z3's "unsat"."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from faithsieve.obligations.checkers.portfolio import Z3Checker
from faithsieve.obligations.checkers.smt import _Syms, _z3_rel
from faithsieve.obligations.kinds.models import DerivationObligation, Verified
from faithsieve.obligations.procedures import piecewise
from faithsieve.obligations.procedures.piecewise import empty, follows

from tests.obligations.test_fastpaths import BASE, outcome, rel

OPS = ("=", "<", ">", "<=", ">=", "!=")


def _z3_unsat(premises: list[str], claim: str, ints: tuple[str, ...]) -> str:
    """z3's own answer to "premises ∧ ¬claim", as the checker asks it."""
    import z3

    syms = _Syms(z3.Context())
    s = z3.Solver(ctx=syms.ctx)
    s.set("timeout", 10_000)
    s.add(*[_z3_rel(rel(p), syms) for p in premises], z3.Not(_z3_rel(rel(claim), syms)))
    s.add(*[z3.IsInt(syms[v]) for v in ints if v in syms])
    return str(s.check())


def _atom(rng: random.Random, names: str) -> str:
    v = rng.choice(names)
    shape = rng.random()
    if shape < 0.35:
        return v
    if shape < 0.55:
        return f"{v}^2"
    if shape < 0.7:
        return f"{v}*{rng.choice(names)}"
    if shape < 0.9:
        return f"abs({_linear(rng, names)})"
    return f"({_linear(rng, names)})/{rng.choice(('2', '(3 - 3)', '(1 - 5)', 'x'))}"


def _linear(rng: random.Random, names: str) -> str:
    terms = [f"{rng.choice(('1', '2', '-1', '3', '1/2', '-4'))}*{rng.choice(names)}" for _ in range(rng.randint(1, 2))]
    return " + ".join([*terms, str(rng.randint(-6, 6))])


def _side(rng: random.Random, names: str) -> str:
    parts = [f"{rng.choice(('1', '2', '-1', '5', '1/3'))}*{_atom(rng, names)}" for _ in range(rng.randint(1, 2))]
    return " + ".join([*parts, str(rng.randint(-8, 8))])


def _claim(rng: random.Random, premise: str, names: str) -> str:
    """Often a consequence of the premise (moved, scaled, loosened, squared, an ``abs`` taken)."""
    lhs, op, rhs = premise.split(" ", 2)[0], None, None
    for o in (" <= ", " >= ", " != ", " = ", " < ", " > "):
        if o in premise:
            lhs, rhs = premise.split(o, 1)
            op = o.strip()
            break
    r = rng.random()
    if r < 0.2:
        return f"{lhs} - ({rhs}) {op} 0"
    if r < 0.35 and op in ("<", "<=", ">", ">="):
        return f"2*({lhs}) {op} 2*({rhs}) {'-' if op in ('<', '<=') else '+'} {rng.randint(-1, 3)}"
    if r < 0.5 and op == "=":
        return f"({lhs})^2 = ({rhs})^2"
    if r < 0.6 and op == "=":
        return f"abs({lhs}) = abs({rhs})"
    if r < 0.7:
        return f"abs({lhs} - ({rhs})) >= {rng.randint(-1, 1)}"
    if r < 0.8:
        return f"{rng.choice(names)} {rng.choice(OPS)} {rng.randint(-5, 5)}"
    return f"{_side(rng, names)} {rng.choice(OPS)} {_side(rng, names)}"


@pytest.mark.parametrize("seed", range(4))
def test_every_proof_is_z3s_unsat(seed: int) -> None:
    rng = random.Random(seed)
    proved = 0
    for _ in range(250):
        names = rng.choice(("x", "xy", "xyz"))
        premises = [f"{_side(rng, names)} {rng.choice(OPS)} {_side(rng, names)}" for _ in range(rng.choice((1, 1, 2)))]
        claim = _claim(rng, premises[0], names)
        ints = tuple(v for v in names if rng.random() < 0.3)
        if follows([rel(p) for p in premises], rel(claim), ints):
            proved += 1
            assert _z3_unsat(premises, claim, ints) == "unsat", (premises, claim, ints)
    assert proved >= 50  # the generator reaches the proofs, not only the refusals


def _quotient_derivation(rng: random.Random) -> tuple[list[str], str]:
    """A premise with a quotient and a claim that multiplies it out, squares it, or reuses it."""
    names = rng.choice(("x", "xy"))
    num, den = _linear(rng, names), rng.choice((_linear(rng, names), f"{rng.choice(names)}^2 + {rng.randint(0, 2)}",
                                                 rng.choice(names), "(2 - 2)"))
    c = rng.choice(("3", "-1", "1/2", "0", rng.choice(names)))
    op = rng.choice(("=", "=", "<", ">=", "!="))
    premise = f"({num})/({den}) {op} {c}"
    r = rng.random()
    if r < 0.4:
        claim = f"{num} {op} ({c})*({den})"
    elif r < 0.55:
        claim = f"(({num})/({den}))^2 {'=' if op == '=' else '>='} ({c})^2"
    elif r < 0.7:
        claim = f"({num})/({den}) + 1 {op} {c} + 1"
    elif r < 0.85:
        claim = f"{rng.choice(names)} {rng.choice(OPS)} {rng.randint(-3, 3)}"
    else:
        claim = f"({den})/({num}) {op} 1/({c})"
    return [premise], claim


@pytest.mark.parametrize("seed", range(3))
def test_quotients_proved_are_z3s_unsat(seed: int) -> None:
    # where a divisor may vanish, SMT gives each dividend's division by zero a value of its own
    rng = random.Random(200 + seed)
    proved = 0
    for _ in range(150):
        premises, claim = _quotient_derivation(rng)
        ints = ("x",) if rng.random() < 0.2 else ()
        if follows([rel(p) for p in premises], rel(claim), ints):
            proved += 1
            assert _z3_unsat(premises, claim, ints) == "unsat", (premises, claim, ints)
    assert proved >= 20


@pytest.mark.parametrize("seed", range(2))
def test_the_checker_gives_the_solvers_outcome(seed: int) -> None:
    rng = random.Random(100 + seed)
    fast, slow = Z3Checker(), Z3Checker()
    slow.piecewise = False
    for _ in range(100):
        names = rng.choice(("x", "xy"))
        premise = f"{_side(rng, names)} {rng.choice(OPS)} {_side(rng, names)}"
        claim = _claim(rng, premise, names)
        ints = tuple(v for v in names if rng.random() < 0.3)
        ob = DerivationObligation(**BASE, premises=(rel(premise),), claim=rel(claim), integer_vars=ints)
        assert outcome(fast.check, ob) == outcome(slow.check, ob), (premise, claim, ints)


@pytest.mark.parametrize("premises,claim,ints", [
    (["abs(x + 1) <= 7"], "-7 <= x + 1", ("x",)),
    (["abs(x) + 1 > 7"], "abs(x) > 6", ("x",)),
    (["abs(r - R) <= 5 / 10"], "abs(r - R) <= 0.5", ()),
    (["abs(abs(x) - x) = 0"], "x >= 0", ()),
    (["b^2 < -168"], "abs(b) < 12.97", ()),  # no real point satisfies the premise
    (["a < b"], "abs(a - b) = b - a", ()),
    (["x + y = 14"], "(x + y)^2 = 196", ()),  # substituted, the claim is 196 = 196
    (["29 = abs(a) * 29"], "abs(a) = 29 / 29", ()),
    (["abs(u - w) = abs(b - 2 * c)"], "(u - w)^2 = (b - 2 * c)^2", ()),
    (["abs(x^2 + 2) < 5"], "x^2 + 2 < 5", ()),
    (["40 * r^9 / (8 * r^4) = 5 * r^9 / r^4"], "r^(4 + -4) = r^0", ()),  # a premise not read is left out
    (["2 * x^2 / (x^2 + y^2) - 1 = 4"], "2 * x^2 - (x^2 + y^2) = 4 * (x^2 + y^2)", ()),  # x = y = 0: 2x^2 = 0
    (["b^2 / (b^2 + 4 * a^2) = 9 / 25"], "25 * b^2 = 9 * (b^2 + 4 * a^2)", ()),
    (["w + 1 / w = 1"], "(w + 1 / w)^2 = 1", ()),  # at w = 0, 1/0 is 1 in both
    (["x / (3 - 3) = 1"], "x / (2 - 2) = 1", ()),  # one dividend: one value of x/0
    (["(x - y)^2 = y^2 - 17"], "(x - y)^2 >= 0", ()),  # an even power as written is never negative
])
def test_proofs_seen_in_proofs(premises: list[str], claim: str, ints: tuple[str, ...]) -> None:
    assert follows([rel(p) for p in premises], rel(claim), ints)
    assert _z3_unsat(premises, claim, ints) == "unsat"


@pytest.mark.parametrize("premises,claim,ints", [
    (["a <= 7 / 2"], "a <= 3", ("a",)),  # follows over the integers only
    (["abs(x) + 1 > 7"], "abs(x + 1) <= 7", ()),
    (["x^2 = 4"], "x = 2", ()),
    (["x + y = 2"], "x/(3 - 3) = 1", ()),  # the claim divides by zero: SMT leaves the value open
    (["x/(3 - 3) = 1"], "x = 1", ()),  # a premise not read, left out: nothing is left to prove it
    (["x^2 + y^2 = 0"], "x = 0", ()),  # true, but not shown by the relaxation
    (["(x - y)^3 = y^2 - 17"], "(x - y)^3 >= 0", ()),  # an odd power may be negative
    (["x^2 >= 1"], "x^2 + x^4 >= 1", ("x",)),  # integer variables: only linear conjunctions
    (["x / y = 3"], "x = 3 * y", ()),  # at y = 0, x/0 may be 3 for any x
    (["1 / x = 2"], "x = 1 / 2", ()),
    (["x / (3 - 3) = 1"], "(x + 1) / (3 - 3) = 1", ()),  # two dividends: two values
])
def test_left_to_the_solver(premises: list[str], claim: str, ints: tuple[str, ...]) -> None:
    assert not follows([rel(p) for p in premises], rel(claim), ints)


def test_the_checker_builds_no_solver(monkeypatch) -> None:
    import z3

    made: list[int] = []
    real = z3.Context
    monkeypatch.setattr(z3, "Context", lambda *a, **k: made.append(1) or real(*a, **k))
    ob = DerivationObligation(**BASE, premises=(rel("a < b"),), claim=rel("abs(a - b) = b - a"))
    assert Z3Checker().check(ob, float("inf")) == Verified("piecewise", "follows from the previous relation")
    assert made == []


def _nested_abs(k: int) -> str:
    e = "x"
    for i in range(k):
        e = f"abs({e} - {i + 1})"
    return e


def test_bound_on_pieces() -> None:
    # each abs around a non-constant argument doubles the pieces of its side
    assert follows([rel("x = 100")], rel(f"{_nested_abs(4)} >= 0"))  # 16 pieces
    assert not follows([rel("x = 100")], rel(f"{_nested_abs(5)} >= 0"))
    assert piecewise.MAX_PIECES == 16


def test_bound_on_cases() -> None:
    # two sides of three abs each: 8 × 8 conjunctions, one more abs is past the bound
    left, right = "abs(x - 1) + abs(x - 2) + abs(x - 3)", "abs(x - 7) + abs(x - 8) + abs(x - 9) - 100"
    assert follows([rel("x = 7")], rel(f"{left} >= {right}"))
    assert not follows([rel("x = 7")], rel(f"{left} + abs(x - 4) >= {right}"))
    assert piecewise.MAX_CASES == 64


def test_bound_on_names() -> None:
    names = "abcdefg"
    total = " + ".join(names[: piecewise.MAX_NAMES])
    assert follows([rel(f"{total} = 1")], rel(f"{total} <= 1"))
    assert not follows([rel(f"{total} + g = 1")], rel(f"{total} + g <= 1"))
    assert piecewise.MAX_NAMES == 6


def test_bound_on_degree() -> None:
    assert follows([rel("x^8 < -1")], rel("x = 0"))
    assert not follows([rel("x^9*x < -1")], rel("x = 0"))
    assert piecewise.MAX_DEGREE == 8


def test_bound_on_rows() -> None:
    # n lower and n upper bounds on one variable combine into n² rows
    def system(n: int) -> list[piecewise.Atom]:
        lows = [({(("x", 1),): Fraction(1), (): Fraction(i)}, ">=") for i in range(n)]
        highs = [({(("x", 1),): Fraction(-1), (): Fraction(-n - i)}, ">=") for i in range(n)]
        return lows + highs  # x >= -i and x <= -n - i: no common point

    assert empty(system(9))  # 81 rows
    assert not empty(system(10))  # 100 rows: past the bound, not shown
    assert piecewise.MAX_ROWS == 96


def _z3_consistent(premises: list[str], claim: str) -> str:
    """z3's answer to "premises ∧ claim" over the reals, as ``smt._consistent_over_reals`` asks it."""
    import z3

    syms = _Syms(z3.Context())
    s = z3.Solver(ctx=syms.ctx)
    s.set("timeout", 10_000)
    s.add(*[_z3_rel(rel(p), syms) for p in premises], _z3_rel(rel(claim), syms))
    return str(s.check())


@pytest.mark.parametrize("seed", range(3))
def test_every_contradiction_is_z3s_unsat(seed: int) -> None:
    rng = random.Random(300 + seed)
    proved = 0
    for _ in range(300):
        names = rng.choice(("x", "xy", "xyz"))
        premises = [f"{_side(rng, names)} {rng.choice(OPS)} {_side(rng, names)}" for _ in range(rng.choice((1, 1, 2)))]
        claim = _claim(rng, premises[0], names) if rng.random() < 0.5 else \
            f"{_side(rng, names)} {rng.choice(OPS)} {_side(rng, names)}"
        if piecewise.contradicts([rel(p) for p in premises], rel(claim)):
            proved += 1
            assert _z3_consistent(premises, claim) == "unsat", (premises, claim)
    assert proved >= 20


def test_a_refutation_over_the_integers_checks_the_reals_without_a_second_context(monkeypatch) -> None:
    import z3

    ob = DerivationObligation(**BASE, premises=(rel("x > 6"),), claim=rel("x < -6"), integer_vars=("x",))
    slow = Z3Checker()
    slow.piecewise = False
    want = outcome(slow.check, ob)
    assert want["type"] == "Refuted"
    made: list[int] = []
    real = z3.Context
    monkeypatch.setattr(z3, "Context", lambda *a, **k: made.append(1) or real(*a, **k))
    assert outcome(Z3Checker().check, ob) == want and len(made) == 1  # the slow path makes two
    assert piecewise.contradicts([rel("x > 6")], rel("x < -6"))
    assert not piecewise.contradicts([rel("x > 6")], rel("x < 7"))
