"""The sympy checker's size and degree guard (``_too_large``) refuses exactly what the former guard
(a full node count of both sides, every exponent read through ``evaluate``) refused."""

from __future__ import annotations

import random
from fractions import Fraction

from faithsieve.obligations.checkers import symbolic
from faithsieve.obligations.checkers.symbolic import MAX_SYMPY_NODES, _too_large

from faithsieve.mathtext.ast import (
    BinOp,
    Call,
    Const,
    Expr,
    Neg,
    Num,
    Pow,
    Rel,
    Var,
    walk,
)
from faithsieve.mathtext.evaluate import evaluate


def _n(v: Fraction | int) -> Num:
    v = Fraction(v)
    return Num(v, str(v), 0)


def former_too_large(c: Rel, monkeypatch) -> bool:
    """The former guard: both sides' nodes counted in full, every exponent read through ``evaluate``."""
    with monkeypatch.context() as m:
        m.setattr(symbolic, "_exponent", evaluate)
        size = sum(1 for _ in walk(c.lhs)) + sum(1 for _ in walk(c.rhs))
        return size > MAX_SYMPY_NODES or not (symbolic.degree_ok(c.lhs) and symbolic.degree_ok(c.rhs))


def gen(rng: random.Random, depth: int) -> Expr:
    if depth <= 0 or rng.random() < 0.15:
        return Var(rng.choice("xyz")) if rng.random() < 0.5 else _n(rng.randint(-5, 30))
    k = rng.random()
    if k < 0.55:
        return BinOp(rng.choice("+-*/"), gen(rng, depth - 1), gen(rng, depth - 1))
    if k < 0.62:
        return Neg(gen(rng, depth - 1))
    if k < 0.9:
        exponent: Expr = rng.choice((
            _n(rng.choice((2, 3, 7, 25, 30, -2, -40))), _n(Fraction(rng.randint(-60, 60), rng.choice((1, 2, 3)))),
            BinOp("*", _n(3), _n(rng.randint(1, 12))), Var("n"), Call("sqrt", (_n(4),)), Call("sqrt", (_n(2),)),
            Neg(_n(rng.randint(1, 30))),
        ))
        return Pow(gen(rng, depth - 1), exponent)
    return Call(rng.choice(("sqrt", "sin", "abs")), (gen(rng, depth - 1),))


def test_generated_claims_are_refused_alike(monkeypatch) -> None:
    rng = random.Random(400)
    refused = 0
    for _ in range(3000):
        c = Rel(gen(rng, rng.choice((3, 5, 7, 9))), "=", gen(rng, rng.choice((2, 6, 8))))
        assert _too_large(c) == former_too_large(c, monkeypatch), str(c)
        refused += _too_large(c)
    assert 300 < refused < 2700  # both answers reached


def test_the_node_bound() -> None:
    def sum_of(n: int) -> Expr:  # 2n - 1 nodes
        out: Expr = Var("x")
        for _ in range(n - 1):
            out = BinOp("+", out, _n(1))
        return out

    at_bound = Rel(sum_of(100), "=", sum_of(101))  # 199 + 201 nodes
    assert not _too_large(at_bound)
    assert _too_large(Rel(sum_of(100), "=", BinOp("+", sum_of(101), _n(1))))  # 401
    assert MAX_SYMPY_NODES == 400


class _Derived(BinOp):
    """A node of a type derived from an AST class (read by the guards as its base class)."""


def _wide(rng: random.Random, depth: int) -> Expr:
    """Claims whose guards are reached through every node kind: constants, calls holding powers of
    variables, exponents holding powers and variables, sums raised to powers (large term bounds)."""
    if depth <= 0 or rng.random() < 0.1:
        return rng.choice((Var(rng.choice("xy")), _n(rng.randint(-3, 9)), Const("pi"), Const("e")))
    k = rng.random()
    if k < 0.4:
        node = _Derived if rng.random() < 0.1 else BinOp
        return node(rng.choice(("+", "-", "*", "/", "mod")), _wide(rng, depth - 1), _wide(rng, depth - 1))
    if k < 0.45:
        return Neg(_wide(rng, depth - 1))
    if k < 0.8:
        exponent = _wide(rng, depth - 2) if rng.random() < 0.3 else _n(rng.choice((2, 5, 9, 24, 25, -24, -25, 64, 70)))
        return Pow(_wide(rng, depth - 1), exponent)
    fn = rng.choice(("sqrt", "sin", "root", "f"))
    return Call(fn, tuple(_wide(rng, depth - 1) for _ in range(2 if fn in ("root", "f") else 1)))


def test_one_pass_guard_answers_as_the_degree_walk() -> None:
    """``_too_large`` (one pass per side) against the node count and ``degree_ok`` of both sides as
    written (the term bound, then every power of a variable expression)."""
    rng = random.Random(16)
    answers = {True: 0, False: 0}
    for _ in range(4000):
        c = Rel(_wide(rng, rng.randint(2, 7)), "=", _wide(rng, rng.randint(1, 6)))
        walked = sum(1 for _ in walk(c.lhs)) + sum(1 for _ in walk(c.rhs)) > MAX_SYMPY_NODES \
            or not (symbolic.degree_ok(c.lhs) and symbolic.degree_ok(c.rhs))
        assert _too_large(c) == walked, str(c)
        answers[walked] += 1
    assert min(answers.values()) > 800, answers
