"""Sign conditions on one real variable: realroots answers exactly what z3 answers."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from faithsieve.obligations.procedures import realroots
from faithsieve.obligations.procedures.realroots import satisfiable

OPS = ("=", "!=", "<", ">", "<=", ">=")


def _from_roots(roots: list[Fraction], lead: Fraction) -> list[Fraction]:
    p = [lead]
    for r in roots:  # p * (x - r)
        p = [(p[i - 1] if i > 0 else 0) - r * (p[i] if i < len(p) else 0) for i in range(len(p) + 1)]
    return p


def _random_poly(rng: random.Random) -> list[Fraction]:
    kind = rng.random()
    if kind < 0.35:  # rational roots, repeated ones included
        roots = [Fraction(rng.randint(-4, 4), rng.choice((1, 2, 3))) for _ in range(rng.randint(1, 4))]
        return _from_roots(roots, Fraction(rng.choice((-3, -1, 1, 2))))
    degree = rng.choice((0, 1, 2, 2, 3, 3, 4, 5, 6))
    return [Fraction(rng.randint(-7, 7), rng.choice((1, 1, 2, 5))) for _ in range(degree + 1)]


def _z3_answer(conds: list[tuple[list[Fraction], str]]) -> bool | None:
    import z3

    ctx = z3.Context()
    x = z3.Real("x", ctx)
    s = z3.Solver(ctx=ctx)
    for p, op in conds:
        e = z3.RealVal(0, ctx)
        for k, c in enumerate(p):
            e = e + z3.RealVal(f"{c.numerator}/{c.denominator}", ctx) * x ** k
        s.add({"=": e == 0, "!=": e != 0, "<": e < 0, ">": e > 0, "<=": e <= 0, ">=": e >= 0}[op])
    r = s.check()
    return True if r == z3.sat else False if r == z3.unsat else None


@pytest.mark.parametrize("seed", range(6))
def test_satisfiable_agrees_with_z3_on_random_conjunctions(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(250):
        conds = [(_random_poly(rng), rng.choice(OPS)) for _ in range(rng.randint(1, 3))]
        mine = satisfiable(conds)
        assert mine is not None, conds
        assert mine == _z3_answer(conds), conds


@pytest.mark.parametrize("seed", range(3))
def test_close_and_repeated_roots_agree_with_z3(seed: int) -> None:
    # roots a hair apart, double roots, a root shared by two conditions: the isolation must tell them apart
    rng = random.Random(100 + seed)
    for _ in range(120):
        base = Fraction(rng.randint(-5, 5), rng.choice((1, 3, 7)))
        eps = Fraction(1, rng.choice((1000, 10**6, 10**9)))
        roots = [base, base + eps, base - eps][: rng.randint(1, 3)]
        p = _from_roots(roots + ([base] if rng.random() < 0.5 else []), Fraction(1))
        q = _from_roots([base + eps * rng.choice((0, 1, 2, -1))], Fraction(rng.choice((1, -1))))
        conds = [(p, rng.choice(OPS)), (q, rng.choice(OPS))]
        assert satisfiable(conds) == _z3_answer(conds), conds


def test_irrational_roots() -> None:
    x2_minus_2 = [Fraction(-2), Fraction(0), Fraction(1)]
    assert satisfiable([(x2_minus_2, "="), ([Fraction(0), Fraction(1)], ">")]) is True  # sqrt 2
    assert satisfiable([(x2_minus_2, "="), ([Fraction(-3, 2), Fraction(1)], ">")]) is False  # sqrt 2 < 3/2
    assert satisfiable([(x2_minus_2, "="), ([Fraction(-141421, 100000), Fraction(1)], ">")]) is True
    assert satisfiable([(x2_minus_2, "="), ([Fraction(-141422, 100000), Fraction(1)], ">")]) is False
    # x^2 + 1 = 0 has no real root
    assert satisfiable([([Fraction(1), Fraction(0), Fraction(1)], "=")]) is False


def test_constant_conditions() -> None:
    assert satisfiable([([], "=")]) is True  # 0 = 0
    assert satisfiable([([Fraction(3)], "<")]) is False
    assert satisfiable([([Fraction(3)], ">"), ([Fraction(-1), Fraction(1)], "=")]) is True


def test_bound_on_degree() -> None:
    p = [Fraction(-1)] + [Fraction(0)] * (realroots.MAX_DEGREE - 1) + [Fraction(1)]  # x^MAX_DEGREE = 1
    assert satisfiable([(p, "=")]) is True
    longer = [Fraction(-1)] + [Fraction(0)] * realroots.MAX_DEGREE + [Fraction(1)]
    assert satisfiable([(longer, "=")]) is None
    assert realroots.MAX_DEGREE == 16


def test_bound_on_product_degree() -> None:
    assert realroots.MAX_PRODUCT_DEGREE == 16
    quartics = [[Fraction(-k), Fraction(0), Fraction(0), Fraction(0), Fraction(1)] for k in (1, 2, 3, 5, 7)]
    assert satisfiable([(p, ">") for p in quartics[:4]]) is True  # x^4 > 1, 2, 3, 5: degree 16
    assert satisfiable([(p, ">") for p in quartics]) is None  # degree 20
    assert satisfiable([(quartics[0], ">")] * 5) is True  # the same polynomial counts once
    # a factor shared by several polynomials counts once: x^4 (x^4 - 1), x^4 (x^4 - 2), (x^4 - 3)^2,
    # x^4 - 5 multiply to degree 28, their square-free part x (x^4 - 1)(x^4 - 2)(x^4 - 3)(x^4 - 5) is 17
    x4 = [Fraction(0)] * 4 + [Fraction(1)]
    shared = [_times(x4, quartics[0]), _times(x4, quartics[1]), _times(quartics[2], quartics[2]), quartics[3]]
    assert satisfiable([(p, ">") for p in shared]) is None
    assert satisfiable([(p, ">") for p in shared[:3]]) is True  # square-free part of degree 13


def _times(a: list[Fraction], b: list[Fraction]) -> list[Fraction]:
    return [sum((a[i] * b[d - i] for i in range(len(a)) if 0 <= d - i < len(b)), Fraction(0))
            for d in range(len(a) + len(b) - 1)]


@pytest.mark.parametrize("seed", range(3))
def test_shared_factors_agree_with_z3(seed: int) -> None:
    # conjunctions whose product is past MAX_PRODUCT_DEGREE while its square-free part is within:
    # polynomials built from a few common factors, some repeated
    rng = random.Random(300 + seed)
    decided = 0
    for _ in range(80):
        factors = [realroots.trim(_random_poly(rng)) for _ in range(3)]
        factors = [f for f in factors if len(f) > 1 and len(f) <= 4] or [[Fraction(-1), Fraction(1)]]
        conds = []
        for _ in range(rng.randint(2, 4)):
            p = [Fraction(rng.choice((1, -2, 3)))]
            for _ in range(rng.randint(1, 4)):
                p = _times(p, rng.choice(factors))
            if len(p) - 1 <= realroots.MAX_DEGREE:
                conds.append((p, rng.choice(OPS)))
        mine = satisfiable(conds)
        if mine is not None:
            decided += 1
            assert mine == _z3_answer(conds), conds
    assert decided > 60


@pytest.mark.parametrize("seed", range(3))
def test_square_free_product_is_the_product_made_square_free(seed: int) -> None:
    rng = random.Random(400 + seed)
    for _ in range(100):
        polys = [p for p in (realroots.trim(_random_poly(rng)) for _ in range(rng.randint(1, 3))) if len(p) > 1]
        distinct = [p for i, p in enumerate(polys) if p not in polys[:i]]
        if not distinct:
            continue
        product = [Fraction(1)]
        for p in distinct:
            product = _times(product, p)
        whole = realroots._square_free(product)
        mine = realroots._square_free_product(distinct)
        assert mine in (whole, [-c for c in whole]), (distinct, mine, whole)


def test_bound_on_steps(monkeypatch) -> None:
    # two roots 2^-60 apart need about 60 bisections to separate
    assert realroots.MAX_STEPS == 2000
    p = _from_roots([Fraction(1, 3), Fraction(1, 3) + Fraction(1, 2**60)], Fraction(1))
    assert satisfiable([(p, "<")]) is True
    monkeypatch.setattr(realroots, "MAX_STEPS", 40)
    assert satisfiable([(p, "<")]) is None


def test_bound_on_bits(monkeypatch) -> None:
    assert realroots.MAX_BITS == 4096
    p = [Fraction(-(10**40)), Fraction(1)]  # x = 10^40 (133 bits)
    assert satisfiable([(p, "="), ([Fraction(0), Fraction(1)], ">")]) is True
    monkeypatch.setattr(realroots, "MAX_BITS", 100)
    assert satisfiable([(p, "="), ([Fraction(0), Fraction(1)], ">")]) is None


@pytest.mark.parametrize("seed", range(3))
def test_rational_roots_are_told_from_irrational_ones(seed: int) -> None:
    rng = random.Random(200 + seed)
    for _ in range(60):
        rational = [Fraction(rng.randint(-9, 9), rng.randint(1, 12)) for _ in range(rng.randint(0, 2))]
        k = rng.choice((2, 3, 5, 6, 7, 10))  # x^2 = k/m^2 has the irrational roots ±sqrt(k)/m
        m = rng.randint(1, 9)
        p = _from_roots(rational, Fraction(rng.choice((1, 3, -4)))) if rational else [Fraction(1)]
        quad = [Fraction(-k, m * m), Fraction(0), Fraction(1)]
        p = [sum((p[i] * quad[j] for i in range(len(p)) for j in range(len(quad)) if i + j == d), Fraction(0))
             for d in range(len(p) + 2)]
        found = realroots.cells([p])
        assert found is not None
        roots = [c for c in found if c.root is not None]
        assert len(roots) == len(set(rational)) + 2
        told = sorted(realroots.rational_root(c) for c in roots)
        assert told == sorted([True] * len(set(rational)) + [False, False]), (rational, k, m)
