"""Integer functions on integers, and logarithms with a numeric base: their exact values.

The reader writes ``\\gcd(12, 18)`` as ``Call("gcd", ...)``, ``\\varphi(12)`` as ``totient``, ``\\tau(n)``
as ``numdivisors``, ``\\sigma(n)`` as ``divsigma``, ``v_p(n)`` as ``padicval(p, n)``, ``\\operatorname{lcm}``
as ``lcm`` and ``\\log_2 8`` as ``log_2``. ``reduce_rel`` replaces each such call whose arguments
evaluate exactly to integers (within the cost model's limits) by its value, so the exact checker decides
``\\varphi(12) = 4`` like ``12 - 8 = 4``; a logarithm whose value is not rational becomes the quotient
``ln x / ln b``, which the symbolic checker evaluates. A call it cannot reduce is left as written (the
checkers then answer ``unknown`` for it).

Bounds: the integer functions are evaluated by ``mathtext.numtheory`` (factoring up to its
``MAX_FACTOR``, charged to the evaluation's meter); a logarithm's rational value is searched with denominators up to
``MAX_LOG_DENOMINATOR`` and powers within the limits' bit bound.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

from faithsieve.core.errors import EvaluationLimit, FaithSieveError, NotRational
from faithsieve.mathtext import numtheory
from faithsieve.mathtext.ast import BinOp, Call, Expr, Neg, Num, Rel, map_nodes, of_type
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits, evaluate
from faithsieve.mathtext.literals import show_number
from faithsieve.runtime.lazy import lazy_module

if TYPE_CHECKING:
    import sympy
else:  # imported on the first call that factors
    sympy = lazy_module("sympy", globals())

MAX_LOG_DENOMINATOR = 12
"""Largest q tried for a logarithm's rational value p/q."""

INTEGER_FUNCTIONS = numtheory.FUNCTIONS


def has_reducible(r: Rel) -> bool:
    """``r`` holds a call this module may reduce (cheap: a walk over the nodes)."""
    return any(n.fn in INTEGER_FUNCTIONS or _log_base_of(n.fn) is not None
               for side in (r.lhs, r.rhs) for n in of_type(side, Call))


def reduce_rel(r: Rel, lim: Limits = DEFAULT_LIMITS) -> Rel:
    """``r`` with every reducible call replaced by its exact value (the same object when none is)."""
    if not has_reducible(r):
        return r
    return Rel(reduce_expr(r.lhs, lim), r.op, reduce_expr(r.rhs, lim))


def reduce_expr(e: Expr, lim: Limits = DEFAULT_LIMITS) -> Expr:
    """``e`` with every reducible call replaced by its value, innermost first (``gcd(φ(12), 6)``)."""
    return map_nodes(e, lambda n: _reduced(n, lim))


def _reduced(e: Expr, lim: Limits) -> Expr:
    if not isinstance(e, Call):
        return e
    try:
        return _reduced_call(e, lim)
    except FaithSieveError:
        return e


def _num(v: Fraction) -> Expr:
    n = Num(abs(v), show_number(abs(v)), 0)
    return Neg(n) if v < 0 else n


def _reduced_call(e: Call, lim: Limits) -> Expr:
    fn = e.fn
    if fn in numtheory.FUNCTIONS:
        # the exact evaluator reads these calls itself (mathtext.numtheory, bounded by its meter)
        return _num(evaluate(e, None, lim))
    base = _log_base_of(fn)
    if base is not None and len(e.args) == 1:
        return _log_value(e.args[0], base, lim)
    return e


def _log_base_of(fn: str) -> Fraction | None:
    """The base of ``log_2``, ``log_10``, ``log_0.5`` (None for any other name)."""
    if not fn.startswith("log_"):
        return None
    try:
        b = Fraction(fn[4:])
    except (ValueError, ZeroDivisionError):
        return None
    return b if b > 0 and b != 1 else None


def _log_value(arg: Expr, base: Fraction, lim: Limits) -> Expr:
    """``log_b x``: its rational value ``p/q`` when ``x^q = b^p`` exactly, else ``ln x / ln b`` (also for a
    symbolic ``x``: ``log_8(x)`` is ``ln x / ln 8`` in an identity)."""
    quotient = BinOp("/", Call("ln", (arg,)), Call("ln", (_num(base),)))
    try:
        x = evaluate(arg, None, lim)
    except NotRational:
        return quotient
    if x <= 0:
        raise EvaluationLimit("logarithm of a non-positive number")
    exact = _rational_log(x, base, lim)
    return quotient if exact is None else _num(exact)


def _rational_log(x: Fraction, b: Fraction, lim: Limits) -> Fraction | None:
    if x == 1:
        return Fraction(0)
    ratio = math.log(abs(x.numerator)) - math.log(x.denominator)
    per = math.log(b.numerator) - math.log(b.denominator)
    for q in range(1, MAX_LOG_DENOMINATOR + 1):
        p = round(q * ratio / per)
        if p == 0:
            continue
        bits = max(b.numerator.bit_length(), b.denominator.bit_length()) * abs(p)
        if bits > lim.max_bits or max(x.numerator.bit_length(), x.denominator.bit_length()) * q > lim.max_bits:
            return None
        if x**q == b**p:
            return Fraction(p, q)
    return None
