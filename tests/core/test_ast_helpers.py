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
    BinOp, Call, Const, Expr, Neg, Num, Pow, Var, children, literals, nodes, variables, walk,
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
            v = rng.randint(-20, 20)
            return Num(Fraction(v), str(v), 0)
        if kind == 1:
            return Var(rng.choice(["x", "y", "z", "a_1", "\\alpha"]))
        return Const(rng.choice(["pi", "e"]))
    kind = rng.randrange(5)
    if kind == 0:
        return BinOp(rng.choice("+-*/"), _random_expr(rng, depth - 1), _random_expr(rng, depth - 1))
    if kind == 1:
        return Neg(_random_expr(rng, depth - 1))
    if kind == 2:
        return Pow(_random_expr(rng, depth - 1), _random_expr(rng, depth - 1))
    if kind == 3:
        return Call(rng.choice(["sqrt", "sin", "binom"]), tuple(_random_expr(rng, depth - 1) for _ in range(rng.randint(1, 3))))
    return _Tagged("+", _random_expr(rng, depth - 1), _random_expr(rng, depth - 1))


def test_helpers_match_the_reference_definitions() -> None:
    rng = random.Random(11)
    for _ in range(3000):
        e = _random_expr(rng, rng.randint(0, 6))
        ref = _reference_walk(e)
        assert list(walk(e)) == ref
        assert nodes(e) == ref
        assert literals(e) == [n for n in ref if isinstance(n, Num)]
        assert variables(e) == frozenset(n.name for n in ref if isinstance(n, Var))


def test_subclass_nodes_are_walked_into() -> None:
    e = _Tagged("+", Var("x"), Num(Fraction(2), "2", 0))
    assert variables(e) == {"x"}
    assert [type(n) for n in nodes(e)] == [_Tagged, Num, Var]
