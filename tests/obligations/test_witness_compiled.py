"""The witness search reads each relation once into a function; at every point that function
gives what reading the tree at the point gives (the reference below, the search's former
evaluator): the same value, or the same exception."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest
from faithsieve.obligations.procedures import witness
from faithsieve.obligations.procedures.witness import (
    MAX_FASTPATH_NESTING,
    _compile,
    _Missing,
    _Undefined,
)

from faithsieve.mathtext.ast import BinOp, Call, Expr, Neg, Num, Pow, Rel, Var
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits, evaluate


def reference(e: Expr, env: dict[str, Fraction], holes: dict[Fraction, Fraction], lim: Limits, depth: int = 0) -> Fraction:
    if depth > MAX_FASTPATH_NESTING:
        raise _Undefined
    if isinstance(e, Num):
        return e.value
    if isinstance(e, Var):
        return env[e.name]
    if isinstance(e, Neg):
        return -reference(e.operand, env, holes, lim, depth + 1)
    if isinstance(e, Call):
        v = reference(e.args[0], env, holes, lim, depth + 1)
        return v / 100 if e.fn == "percent" else abs(v)
    if isinstance(e, Pow):
        base = reference(e.base, env, holes, lim, depth + 1)
        out = Fraction(1)
        for _ in range(evaluate(e.exponent).numerator):
            out = _sized(out * base, lim)
        return out
    assert isinstance(e, BinOp)
    a = reference(e.left, env, holes, lim, depth + 1)
    b = reference(e.right, env, holes, lim, depth + 1)
    if e.op == "+":
        return _sized(a + b, lim)
    if e.op == "-":
        return _sized(a - b, lim)
    if e.op == "*":
        return _sized(a * b, lim)
    if b == 0:
        if a in holes:
            return holes[a]
        raise _Missing(a)
    return _sized(a / b, lim)


def _sized(x: Fraction, lim: Limits) -> Fraction:
    if max(x.numerator.bit_length(), x.denominator.bit_length()) > lim.max_bits:
        raise _Undefined
    return x


def _num(v: Fraction) -> Num:
    return Num(v, str(v), 0)


def _tree(rng: random.Random, depth: int) -> Expr:
    if depth <= 0 or rng.random() < 0.25:
        if rng.random() < 0.5:
            return Var(rng.choice("xyz"))
        return _num(Fraction(rng.randint(-9, 9), rng.choice((1, 1, 2, 3))))
    r = rng.random()
    if r < 0.1:
        return Neg(_tree(rng, depth - 1))
    if r < 0.15:
        return Call(rng.choice(("percent", "abs")), (_tree(rng, depth - 1),))
    if r < 0.25:
        return Pow(_tree(rng, depth - 1), _num(Fraction(rng.randint(0, 12))))
    return BinOp(rng.choice("+-*//"), _tree(rng, depth - 1), _tree(rng, depth - 1))


def _run(f: Any, *args: Any) -> tuple[str, Any]:
    try:
        return "value", f(*args)
    except _Missing as gap:
        return "missing", gap.dividend
    except _Undefined:
        return "undefined", None


@pytest.mark.parametrize("seed", range(4))
def test_compiled_relations_read_as_the_tree_does(seed: int) -> None:
    rng = random.Random(seed)
    kinds = set()
    for i in range(400):
        small = Limits(max_bits=24) if i % 2 else DEFAULT_LIMITS  # small limits: _Undefined is met too
        e = _tree(rng, rng.randint(1, 7))
        f = _compile(e, small)
        for _ in range(4):
            env = {v: Fraction(rng.randint(-3, 3), rng.choice((1, 2))) for v in "xyz"}
            holes = {Fraction(k): Fraction(rng.randint(-2, 2)) for k in range(-2, 3) if rng.random() < 0.5}
            want = _run(reference, e, env, holes, small)
            # the search passes integers as int (``_Search.residual``): the same rationals
            ints = {k: v.numerator if v.denominator == 1 else v for k, v in env.items()}
            for point in (env, ints):
                got = _run(f, point, holes)
                assert got == want, (e, point, holes)
                assert got[0] != "missing" or type(got[1]) is Fraction  # a dividend keys ``holes`` as before
            kinds.add(want[0])
    assert kinds == {"value", "missing", "undefined"}


def test_integer_arithmetic_stays_exact() -> None:
    # an int quotient that does not divide evenly is a Fraction, never a float
    x = Var("x")
    cases = [(BinOp("/", x, _num(Fraction(3))), Fraction(7, 3)), (Call("percent", (x,)), Fraction(7, 100)),
             (BinOp("/", _num(Fraction(14)), x), Fraction(2)), (Pow(BinOp("/", x, _num(Fraction(2))), _num(Fraction(3))), Fraction(343, 8))]
    for e, value in cases:
        got = _compile(e, DEFAULT_LIMITS)({"x": 7}, {})
        assert got == value and type(got) in (int, Fraction), e
    s = witness._Search([], Rel(Var("x"), "=", _num(Fraction(1))), frozenset(), DEFAULT_LIMITS)
    assert type(s.residual(Rel(x, "=", _num(Fraction(1))), {"x": Fraction(4)})) is Fraction  # as the search reads it


def test_depth_past_the_bound_is_undefined() -> None:
    e: Expr = Var("x")
    for _ in range(MAX_FASTPATH_NESTING + 1):
        e = Neg(e)
    env = {"x": Fraction(1)}
    assert _run(_compile(e, DEFAULT_LIMITS), env, {}) == ("undefined", None) == _run(reference, e, env, {}, DEFAULT_LIMITS)
    assert _compile(Neg(e).operand.operand, DEFAULT_LIMITS)(env, {}) == Fraction(1)  # MAX_FASTPATH_NESTING levels: read
    assert witness.MAX_FASTPATH_NESTING == MAX_FASTPATH_NESTING
