"""Equations read as quadratics along one variable, for the witness search's last stage
(``witness._quadratic_candidates``): which equations are of degree two in a variable as written,
and the rational roots of a quadratic known by its values at three consecutive points.

``degree_along`` reads an upper bound on the degree off the syntax (a power as repeated
products, as the SMT translation writes it); an equation whose two sides are polynomials of
degree at most two in ``v`` has a residual that is exactly the quadratic through its values at
``t``, ``t + 1`` and ``t + 2``, so ``rational_roots`` gives its roots exactly. Elsewhere the roots
are only candidates, and the search checks every candidate exactly anyway.
"""

from __future__ import annotations

import math
from fractions import Fraction

from faithsieve.obligations.procedures.fastpaths import smt_power
from faithsieve.obligations.procedures.polynomials import MAX_FASTPATH_NESTING

from faithsieve.mathtext.ast import (
    BinOp,
    Call,
    Expr,
    Neg,
    Num,
    Pow,
    Rel,
    Var,
    variables,
)


def degree_along(e: Expr, v: str, depth: int = 0) -> int | None:
    """The degree of ``e`` as a polynomial in ``v`` read off its syntax (an upper bound); None
    where ``v`` is in a divisor, under ``abs``, in an exponent, or past ``MAX_FASTPATH_NESTING``."""
    if depth > MAX_FASTPATH_NESTING:
        return None
    if isinstance(e, Num):
        return 0
    if isinstance(e, Var):
        return int(e.name == v)
    if isinstance(e, Neg):
        return degree_along(e.operand, v, depth + 1)
    if isinstance(e, Call):
        if e.fn == "percent":
            return degree_along(e.args[0], v, depth + 1)
        return 0 if v not in variables(e) else None
    if isinstance(e, Pow):
        times, d = smt_power(e.exponent), degree_along(e.base, v, depth + 1)
        return None if times is None or d is None else times * d
    if isinstance(e, BinOp):
        a, b = degree_along(e.left, v, depth + 1), degree_along(e.right, v, depth + 1)
        if a is None or b is None:
            return None
        if e.op == "/":
            return a if b == 0 else None
        return a + b if e.op == "*" else max(a, b)
    return None


def quadratic_in(r: Rel, v: str) -> bool:
    """``lhs - rhs`` is, as written, a polynomial of degree two in ``v``."""
    a, b = degree_along(r.lhs, v), degree_along(r.rhs, v)
    return a is not None and b is not None and max(a, b) == 2


def rational_sqrt(x: Fraction) -> Fraction | None:
    """The rational square root of ``x``, where it has one."""
    if x < 0:
        return None
    n, d = math.isqrt(x.numerator), math.isqrt(x.denominator)
    return Fraction(n, d) if n * n == x.numerator and d * d == x.denominator else None


def rational_roots(f0: Fraction, f1: Fraction, f2: Fraction) -> list[Fraction]:
    """The rational roots ``u`` of the quadratic ``f0 + b·u + a·u²`` that takes the values ``f0``,
    ``f1``, ``f2`` at ``u = 0, 1, 2``, ``(-b - √D)/2a`` first (a double root twice); none where it
    is of lower degree (a line: the secant steps of the earlier stages meet its root) or its
    roots are irrational."""
    a = (f2 - 2 * f1 + f0) / 2
    b = f1 - f0 - a
    if a == 0:
        return []
    root = rational_sqrt(b * b - 4 * a * f0)
    if root is None:
        return []
    return [(-b - root) / (2 * a), (-b + root) / (2 * a)]
