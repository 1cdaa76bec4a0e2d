"""The fast tree helpers of ``mathtext.ast`` give what the plain definitions give, in the same order.

``variables``, ``walk``, ``nodes`` and ``literals`` dispatch on exact node types; compared here with
the textbook definitions (``children`` recursion) on seeded random expressions of every node kind,
including a subclass of a node type, which must take the general path.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction

from faithsieve.mathtext.ast import (
    BinOp,
    Call,
    Const,
    Expr,
    Neg,
    Num,
    Pow,
    Var,
    children,
    literals,
    nodes,
    render,
    variables,
    walk,
)


@dataclass(frozen=True, slots=True)
class _Tagged(BinOp):
    """A subclass of a node type (none exists in the parser; the helpers must still see through it)."""


def _reference_walk(e: Expr) -> list[Expr]:
    out, stack = [], [e]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(children(n))
    return out


def _random_expr(rng: random.Random, depth: int) -> Expr:
    if depth == 0 or rng.random() < 0.25:
        kind = rng.randrange(3)
        if kind == 0:
            v = Fraction(rng.randint(-20, 20), rng.choice([1, 1, 3, 4]))
            decimals = rng.choice([0, 0, 2])
            return Num(v, f"{float(v):.{decimals}f}" if decimals else str(v), decimals)
        if kind == 1:
            return Var(rng.choice(["x", "y", "z", "a_1", "\\alpha"]))
        return Const(rng.choice(["pi", "e"]))
    kind = rng.randrange(5)
    if kind == 0:
        return BinOp(rng.choice(["+", "-", "*", "/", "mod"]), _random_expr(rng, depth - 1), _random_expr(rng, depth - 1))
    if kind == 1:
        return Neg(_random_expr(rng, depth - 1))
    if kind == 2:
        return Pow(_random_expr(rng, depth - 1), _random_expr(rng, depth - 1))
    if kind == 3:
        return Call(rng.choice(["sqrt", "sin", "binom", "factorial", "percent", "deg"]), tuple(_random_expr(rng, depth - 1) for _ in range(rng.randint(1, 3))))
    return _Tagged("+", _random_expr(rng, depth - 1), _random_expr(rng, depth - 1))


_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "mod": 2}


def _reference_render(e: Expr, parent: int = 0) -> str:
    """The rendering rules written with isinstance alone."""
    if isinstance(e, Num):
        return str(e.value) if e.value.denominator != 1 and not e.decimals else e.text
    if isinstance(e, (Var, Const)):
        return e.name
    if isinstance(e, Neg):
        s = "-" + _reference_render(e.operand, 3)
        return f"({s})" if parent >= 2 else s
    if isinstance(e, Pow):
        return f"{_reference_render(e.base, 4)}^{_reference_render(e.exponent, 4)}"
    if isinstance(e, Call):
        suffix = {"factorial": "!", "percent": "%", "deg": "°"}.get(e.fn)
        if suffix is not None:
            return f"{_reference_render(e.args[0], 4)}{suffix}"
        return f"{e.fn}({', '.join(_reference_render(a, 0) for a in e.args)})"
    assert isinstance(e, BinOp)
    p = _PREC[e.op]
    right_p = p + 1 if e.op in ("-", "/", "mod") else p
    s = f"{_reference_render(e.left, p)} {e.op} {_reference_render(e.right, right_p)}"
    return f"({s})" if p < parent else s


def test_helpers_match_the_reference_definitions() -> None:
    rng = random.Random(11)
    for _ in range(3000):
        e = _random_expr(rng, rng.randint(0, 6))
        ref = _reference_walk(e)
        assert list(walk(e)) == ref
        assert nodes(e) == ref
        assert literals(e) == [n for n in ref if isinstance(n, Num)]
        assert variables(e) == frozenset(n.name for n in ref if isinstance(n, Var))
        assert render(e) == _reference_render(e)


def test_subclass_nodes_are_walked_into() -> None:
    e = _Tagged("+", Var("x"), Num(Fraction(2), "2", 0))
    assert variables(e) == {"x"}
    assert [type(n) for n in nodes(e)] == [_Tagged, Num, Var]


def test_nodes_within_counts_every_tree_and_stops_at_the_limit() -> None:
    from faithsieve.mathtext.ast import nodes_within

    rng = random.Random(7)
    a, b = _random_expr(rng, 4), _random_expr(rng, 4)
    n = len(nodes(a)) + len(nodes(b))
    assert nodes_within([a, b], n) and not nodes_within([a, b], n - 1)
    assert nodes_within([], 0) and not nodes_within([a], 0)
