"""``polynomials.expand`` over integer coefficients with a common denominator gives what the former
``Fraction``-per-coefficient expansion gave: the same polynomial (monomials in the same order, the
same coefficients) or None at the same bounds; ``polynomial_class`` the same class."""

from __future__ import annotations

import random
from fractions import Fraction

from faithsieve.obligations.procedures import fastpaths, polynomials
from faithsieve.obligations.procedures.fastpaths import polynomial_class
from faithsieve.obligations.procedures.polynomials import (
    Poly,
    _expand_fractions,
    _Wide,
    _within,
    expand,
    psub,
)

from faithsieve.mathtext.ast import BinOp, Call, Expr, Neg, Num, Pow, Rel, Var
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits


def former_expand(e: Expr, lim: Limits = DEFAULT_LIMITS, depth: int = 0, quotients: bool = False) -> Poly | None:
    """The expansion as it was written before (c48ad5f), one ``Fraction`` per coefficient: kept as
    the fallback for a common denominator past the bound."""
    return _expand_fractions(e, lim, depth, quotients)


def former_class(lhs: Expr, rhs: Expr, lim: Limits = DEFAULT_LIMITS) -> str | None:
    a, b = former_expand(lhs, lim), former_expand(rhs, lim)
    if a is None or b is None:
        return None
    d = psub(a, b)
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
    tiny = Limits(max_bits=9)  # and common denominators outgrow it (the fallback to Fractions)
    kept = bounded = wide = 0
    for i in range(3000):
        big = i % 3 == 0
        e = gen(rng, rng.choice((3, 4, 5)), big)
        for lim in (DEFAULT_LIMITS, small, tiny):
            for quotients in (False, True):
                new, old = expand(e, lim, quotients=quotients), former_expand(e, lim, quotients=quotients)
                assert (None if new is None else list(new.items())) == (None if old is None else list(old.items())), e
                kept += new is not None
                bounded += lim is small and new is None and expand(e, DEFAULT_LIMITS, quotients=quotients) is not None
                try:
                    polynomials._iexpand(e, lim, 0, quotients)
                except _Wide:
                    wide += 1
        lhs, rhs = gen(rng, 3, big), gen(rng, 3, big)
        for lim in (DEFAULT_LIMITS, small, tiny):
            assert polynomial_class(lhs, rhs, lim) == former_class(lhs, rhs, lim)
            assert polynomial_class(lhs, lhs, lim) == former_class(lhs, lhs, lim)
    assert kept > 3000 and bounded > 300 and wide > 20  # both outcomes reached, the bit bound among the causes,
    # and the fallback for a common denominator past the bound


def test_the_bit_bound_is_on_reduced_coefficients() -> None:
    """``_within`` reads the reduced fractions (of a polynomial over a common denominator sharing no
    factor with every coefficient): a factor one coefficient shares with the denominator does not
    count, and a bound one bit tighter rejects what fits exactly."""
    p = ({(("x", 1),): 2**60 * 3, (("y", 1),): 1}, 2**60)  # 3·x + y / 2^60
    assert _within(p, 61)  # 62 bits unreduced; 3/1 and 1/2^60 fit in 61
    assert not _within(p, 60)
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
    coefficients, den = polynomials._iexpand(e, DEFAULT_LIMITS, 0, False)  # type: ignore[misc]
    h = sum(Fraction(1, k) for k in range(1, 30))
    assert coefficients == {(("x", 1),): h.numerator} and den == h.denominator


def test_normal_forms_match_the_former_subtraction() -> None:
    """``normal_form`` (the derivation fast paths' ``f R 0``) gives the former ``psub`` of the two
    former expansions: the same monomials in the same order, the same coefficients."""
    rng = random.Random(17)
    ops = ("=", ">", ">=", "<", "<=", "!=")
    compared = 0
    for i in range(2000):
        r = Rel(gen(rng, 3, i % 4 == 0), rng.choice(ops), gen(rng, 3, i % 4 == 0))
        for quotients in (False, True):
            new = fastpaths.normal_form(r, quotients)
            a, b = former_expand(r.lhs, quotients=quotients), former_expand(r.rhs, quotients=quotients)
            if a is None or b is None or r.op == "!=":
                assert new is None
                continue
            old = (psub(a, b), r.op) if r.op in ("=", ">", ">=") else (psub(b, a), {"<": ">", "<=": ">="}[r.op])
            assert new is not None and list(new[0].items()) == list(old[0].items()) and new[1] == old[1], str(r)
            compared += 1
    assert compared > 1500


def test_a_common_denominator_past_the_bound_falls_back_to_fractions() -> None:
    """Two coefficients within 41 bits whose common denominator needs 81: the integer expansion
    stops (its integers would outgrow the bound) and the ``Fraction`` one answers, as before."""
    p, q = 2**40 + 15, 2**40 + 13  # coprime
    e = BinOp("+", BinOp("/", Var("x"), _n(p)), BinOp("/", Var("y"), _n(q)))
    lim = Limits(max_bits=48)
    try:
        polynomials._iexpand(e, lim, 0, False)
    except _Wide:
        pass
    else:
        raise AssertionError("the common denominator p·q has 81 bits: past the 48-bit bound")
    assert expand(e, lim) == {(("x", 1),): Fraction(1, p), (("y", 1),): Fraction(1, q)}
    assert polynomial_class(e, e, lim) == "zero"
    assert polynomial_class(e, Var("x"), lim) == "nonconstant"
    assert fastpaths.normal_form(Rel(e, "<", Var("x"))) is not None
    assert polynomials._iexpand(e, Limits(max_bits=81), 0, False) is not None  # the bound is what stops it
