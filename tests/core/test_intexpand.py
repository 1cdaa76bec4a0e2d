"""``expand`` over integer coefficients with a common denominator gives what the former
``Fraction``-per-coefficient expansion gave: the same polynomial (monomials in the same order, the
same coefficients) or None at the same bounds; ``polynomial_class`` the same class."""

from __future__ import annotations

import random
from fractions import Fraction

from faithsieve.errors import FaithSieveError
from faithsieve.mathtext.ast import BinOp, Call, Expr, Neg, Num, Pow, Var
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits, evaluate
from faithsieve.obligations import fastpaths
from faithsieve.obligations.models import Rel
from faithsieve.obligations.fastpaths import (
    MAX_DEPTH, Poly, _const, _pmul, _quotient_name, _small_int, _sub, _within, expand, polynomial_class,
)


def former_expand(e: Expr, lim: Limits = DEFAULT_LIMITS, depth: int = 0, quotients: bool = False) -> Poly | None:
    """The expansion as it was written before (c48ad5f): one ``Fraction`` per coefficient."""
    if depth > MAX_DEPTH:
        return None
    out: Poly | None
    if isinstance(e, Num):
        out = {(): e.value} if e.value else {}
    elif isinstance(e, Var):
        return {((e.name, 1),): Fraction(1)}
    elif isinstance(e, Neg):
        a = former_expand(e.operand, lim, depth + 1, quotients)
        return None if a is None else {m: -c for m, c in a.items()}
    elif isinstance(e, Call) and e.fn == "percent" and len(e.args) == 1:
        a = former_expand(e.args[0], lim, depth + 1, quotients)
        out = None if a is None else {m: c / 100 for m, c in a.items()}
    elif isinstance(e, BinOp) and e.op in ("+", "-", "*", "/"):
        a, b = former_expand(e.left, lim, depth + 1, quotients), former_expand(e.right, lim, depth + 1, quotients)
        if a is None or b is None:
            return None
        if e.op == "*":
            out = _pmul(a, b)
        elif e.op == "/":
            d = _const(b)
            if d is None and quotients:
                out = {((_quotient_name(a, b), 1),): Fraction(1)}
            elif not d:
                return None
            else:
                out = {m: c / d for m, c in a.items()}
        else:
            out = _sub(a, b) if e.op == "-" else _sub(a, {m: -c for m, c in b.items()})
    elif isinstance(e, Pow) and _small_int(e.exponent) is not None:
        base = former_expand(e.base, lim, depth + 1, quotients)
        if base is None:
            return None
        if _const(base) is not None:
            try:
                v = evaluate(e, None, lim)
            except FaithSieveError:
                return None
            out = {(): v} if v else {}
        else:
            out = {(): Fraction(1)}
            for _ in range(_small_int(e.exponent) or 0):
                out = _pmul(out, base) if out is not None else None
    else:
        return None
    if out is None or any(c.numerator.bit_length() > lim.max_bits or c.denominator.bit_length() > lim.max_bits
                          for c in out.values()):
        return None
    return out


def former_class(lhs: Expr, rhs: Expr, lim: Limits = DEFAULT_LIMITS) -> str | None:
    a, b = former_expand(lhs, lim), former_expand(rhs, lim)
    if a is None or b is None:
        return None
    d = _sub(a, b)
    if not d:
        return "zero"
    return "nonconstant" if any(m for m in d) else None


def _n(v: Fraction | int) -> Num:
    v = Fraction(v)
    return Num(v, str(v), 0)


def gen(rng: random.Random, depth: int, big: bool) -> Expr:
    if depth <= 0 or rng.random() < 0.2:
        r = rng.random()
        if r < 0.45:
            return Var(rng.choice("xyz"))
        if big and r < 0.6:
            return _n(Fraction(rng.randint(-10**30, 10**30), rng.randint(1, 10**25)))
        return _n(Fraction(rng.randint(-12, 12), rng.choice((1, 1, 2, 3, 6, 10))))
    k = rng.random()
    if k < 0.6:
        return BinOp(rng.choice("+-*/+-*"), gen(rng, depth - 1, big), gen(rng, depth - 1, big))
    if k < 0.7:
        return Neg(gen(rng, depth - 1, big))
    if k < 0.8:
        return Call("percent", (gen(rng, depth - 1, big),))
    return Pow(gen(rng, depth - 1, big), _n(rng.choice((0, 1, 2, 3, 5))))


def test_generated_expansions_match_the_former_expansion() -> None:
    rng = random.Random(16)
    small = Limits(max_bits=48)  # the coefficient bound bites often
    kept = bounded = 0
    for i in range(3000):
        big = i % 3 == 0
        e = gen(rng, rng.choice((3, 4, 5)), big)
        for lim in (DEFAULT_LIMITS, small):
            for quotients in (False, True):
                new, old = expand(e, lim, quotients=quotients), former_expand(e, lim, quotients=quotients)
                assert (None if new is None else list(new.items())) == (None if old is None else list(old.items())), e
                kept += new is not None
                bounded += lim is small and new is None and expand(e, DEFAULT_LIMITS, quotients=quotients) is not None
        lhs, rhs = gen(rng, 3, big), gen(rng, 3, big)
        for lim in (DEFAULT_LIMITS, small):
            assert polynomial_class(lhs, rhs, lim) == former_class(lhs, rhs, lim)
            assert polynomial_class(lhs, lhs, lim) == former_class(lhs, lhs, lim)
    assert kept > 3000 and bounded > 300  # both outcomes reached, the bit bound among the causes


def test_the_bit_bound_is_on_reduced_coefficients() -> None:
    """``_within`` reads the reduced fractions: a large common factor does not count, and a bound
    one bit tighter rejects what fits exactly."""
    assert _within(({(): 2**60 * 3}, 2**60), 2)  # 3/1
    assert not _within(({(): 2**60 * 3}, 2**60), 1)
    assert not _within(({(): 5}, 2**61), 61)  # 5 / 2^61: a 62-bit denominator
    assert _within(({(): 5}, 2**61), 62)
    x = Var("x")
    e = BinOp("*", _n(Fraction(2**40 + 1, 3)), x)
    assert expand(e, Limits(max_bits=41)) == {(("x", 1),): Fraction(2**40 + 1, 3)}
    assert expand(e, Limits(max_bits=40)) is None


def test_the_expansion_keeps_one_denominator_small() -> None:
    """A sum of many fractions is carried over the least common denominator, reduced at each node."""
    e: Expr = _n(0)
    for k in range(1, 30):
        e = BinOp("+", e, BinOp("/", Var("x"), _n(k)))
    coefficients, den = fastpaths._iexpand(e, DEFAULT_LIMITS, 0, False)  # type: ignore[misc]
    h = sum(Fraction(1, k) for k in range(1, 30))
    assert coefficients == {(("x", 1),): h.numerator} and den == h.denominator


def test_normal_forms_match_the_former_subtraction() -> None:
    """``_normal`` (the derivation fast paths' ``f R 0``) gives the former ``_sub`` of the two
    former expansions: the same monomials in the same order, the same coefficients."""
    rng = random.Random(17)
    ops = ("=", ">", ">=", "<", "<=", "!=")
    compared = 0
    for i in range(2000):
        r = Rel(gen(rng, 3, i % 4 == 0), rng.choice(ops), gen(rng, 3, i % 4 == 0))
        for quotients in (False, True):
            new = fastpaths._normal(r, quotients)
            a, b = former_expand(r.lhs, quotients=quotients), former_expand(r.rhs, quotients=quotients)
            if a is None or b is None or r.op == "!=":
                assert new is None
                continue
            old = (_sub(a, b), r.op) if r.op in ("=", ">", ">=") else (_sub(b, a), {"<": ">", "<=": ">="}[r.op])
            assert new is not None and list(new[0].items()) == list(old[0].items()) and new[1] == old[1], str(r)
            compared += 1
    assert compared > 1500
