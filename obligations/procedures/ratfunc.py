"""Exact rational-function arithmetic: is a claim whose sides are rational functions an identity?

``rational_identity(lhs, rhs)`` answers True only when both sides are rational functions as written
(numbers, variables, ``+ - * /``, ``p%``, powers with a small integer exponent) and
``lhs - rhs`` is the zero rational function: each side is brought exactly to a quotient of
expanded polynomials ``P1/Q1`` and ``P2/Q2`` (every divisor a nonzero polynomial), and
``P1·Q2 - P2·Q1`` expands to the zero polynomial.

Why that is the outcome the sympy checker gives ("identity", ``sympy-poly``):

* ``to_sympy`` does not raise. Its probe evaluates the variable-free parts, which here are
  rationals computed exactly below and kept within ``MAX_BITS`` bits (so every magnitude lies
  in ``2^±MAX_BITS`` and the probe's step count, at most two charges of ``2 + MAX_BITS/64``
  per node over at most ``MAX_SYMPY_NODES`` nodes, stays under its limit); a power of a number
  is evaluated with ``evaluate`` under the same limits the conversion applies; a divisor is a
  nonzero rational function, so sympy's automatic simplification (which keeps values) cannot
  make it the literal 0 the conversion refuses.
* sympy's ``together`` + ``fraction`` leave a numerator ``N`` that is a polynomial (the sides
  have integer powers only) and equals ``(lhs - rhs)·D`` wherever the denominator ``D`` is
  defined, a dense set; ``lhs - rhs`` is zero there, so ``N`` is the zero polynomial and its
  expansion is the literal ``0``: ``Verified("sympy-poly", "identity")``.

Anything else (not a rational function, a zero divisor, past a bound, a nonzero difference)
answers False and the sympy checker decides as before.
"""

from __future__ import annotations

from fractions import Fraction

from faithsieve.obligations.procedures.fastpaths import rational_expr
from faithsieve.obligations.procedures.polynomials import (
    MAX_FASTPATH_NESTING,
    MAX_POWER,
    Poly,
    pmul,
    pneg,
    psub,
)

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import BinOp, Call, Expr, Neg, Num, Pow, Var
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits, evaluate

MAX_BITS = 2048
"""Largest bit length of any coefficient (numerator or denominator) formed along the way."""

RatFn = tuple[Poly, Poly]
"""A quotient of expanded polynomials (the denominator is never the zero polynomial)."""

_ONE: Poly = {(): Fraction(1)}


def _exponent(e: Expr) -> int | None:
    """A small integer exponent as written: ``k`` or ``-k`` with ``0 <= k <= MAX_POWER``."""
    neg = isinstance(e, Neg)
    k = e.operand if isinstance(e, Neg) else e
    if isinstance(k, Num) and k.value.denominator == 1 and 0 <= k.value.numerator <= MAX_POWER:
        return -k.value.numerator if neg else k.value.numerator
    return None


def _bounded(p: Poly | None) -> Poly | None:
    if p is None or any(c.numerator.bit_length() > MAX_BITS or c.denominator.bit_length() > MAX_BITS
                        for c in p.values()):
        return None
    return p


def _mul(a: RatFn, b: RatFn) -> RatFn | None:
    p, q = _bounded(pmul(a[0], b[0])), _bounded(pmul(a[1], b[1]) if b[1] != _ONE else a[1])
    return None if p is None or q is None else (p, q)


def _add(a: RatFn, b: RatFn, sign: int) -> RatFn | None:
    """``a + b`` (``sign`` 1) or ``a - b`` (``sign`` -1)."""
    if a[1] == b[1]:  # a common denominator as written ("x/3 + 1/3"): no cross products
        p = _bounded(psub(a[0], pneg(b[0]) if sign > 0 else b[0]))
        return None if p is None else (p, a[1])
    left, right = pmul(a[0], b[1]), pmul(b[0], a[1])
    q = _bounded(pmul(a[1], b[1]))
    if left is None or right is None or q is None:
        return None
    p = _bounded(psub(left, pneg(right) if sign > 0 else right))
    return None if p is None else (p, q)


def _ratfn(e: Expr, lim: Limits, depth: int) -> RatFn | None:
    if depth > MAX_FASTPATH_NESTING:
        return None
    if isinstance(e, Num):
        p = _bounded({(): e.value} if e.value else {})
        return None if p is None else (p, _ONE)
    if isinstance(e, Var):
        return {((e.name, 1),): Fraction(1)}, _ONE
    if isinstance(e, Neg):
        a = _ratfn(e.operand, lim, depth + 1)
        return None if a is None else (pneg(a[0]), a[1])
    if isinstance(e, Call):
        if e.fn != "percent" or len(e.args) != 1:
            return None
        a = _ratfn(e.args[0], lim, depth + 1)
        p = None if a is None else _bounded({m: c / 100 for m, c in a[0].items()})
        return None if a is None or p is None else (p, a[1])
    if isinstance(e, BinOp) and e.op in ("+", "-", "*", "/"):
        return _ratfn_binop(e, lim, depth)
    if isinstance(e, Pow):
        return _ratfn_power(e, lim, depth)
    return None


def _ratfn_binop(e: BinOp, lim: Limits, depth: int) -> RatFn | None:
    a, b = _ratfn(e.left, lim, depth + 1), _ratfn(e.right, lim, depth + 1)
    if a is None or b is None:
        return None
    if e.op == "*":
        return _mul(a, b)
    if e.op == "/":
        if not b[0]:
            return None  # a zero divisor: the conversion refuses it, or sympy makes it infinite
        return _mul(a, (b[1], b[0]))
    return _add(a, b, 1 if e.op == "+" else -1)


def _ratfn_power(e: Pow, lim: Limits, depth: int) -> RatFn | None:
    k = _exponent(e.exponent)
    if k is None:
        return None
    base = _ratfn(e.base, lim, depth + 1)
    if base is None:
        return None
    if all(not m for m in base[0]) and all(not m for m in base[1]):
        try:  # a power of a number: evaluated as the conversion evaluates it, under the same limits
            v = evaluate(e, None, lim)
        except FaithSieveError:
            return None
        p = _bounded({(): v} if v else {})
        return None if p is None else (p, _ONE)
    if k < 0:
        if not base[0]:
            return None
        base, k = (base[1], base[0]), -k
    out: RatFn | None = (_ONE, _ONE)
    for _ in range(k):
        out = _mul(out, base) if out is not None else None
    return out

def as_ratfn(e: Expr, lim: Limits = DEFAULT_LIMITS) -> RatFn | None:
    """``e`` as an exact quotient of expanded polynomials, or None (not a rational function as
    written, a zero divisor, or past a bound)."""
    return _ratfn(e, lim, 0)


def rational_identity(lhs: Expr, rhs: Expr, lim: Limits = DEFAULT_LIMITS) -> bool:
    """Both sides are rational functions and ``lhs - rhs`` is the zero rational function (see the
    module docstring for why sympy then finds the numerator 0)."""
    if not (rational_expr(lhs) and rational_expr(rhs)):  # a cheap look at the syntax first
        return False
    a, b = as_ratfn(lhs, lim), as_ratfn(rhs, lim)
    if a is None or b is None:
        return False
    left, right = pmul(a[0], b[1]), pmul(b[0], a[1])
    return left is not None and right is not None and not psub(left, right)
