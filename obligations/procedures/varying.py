""""Not an identity" without ``together``: a variable outside every denominator whose change
changes the difference.

The sympy checker calls a claim "not an identity" when the numerator ``N`` that ``together`` +
``fraction`` + ``expand`` leave for ``lhs - rhs`` is not a number. ``varying_difference`` proves
that for claims with roots, trigonometry, logarithms, absolute values and quotients that the exact
readers (``fastpaths``, ``ratfunc``, ``freevar``) leave, when

* the claim has no ``mod``, no ``i``, and only functions the conversion builds (``sqrt``,
  ``root``, ``sin``, ``cos``, ``tan``, ``ln``, ``log``, ``exp``, ``abs``, ``deg``, ``percent``,
  and ``factorial``, ``binom``, ``floor``, ``ceil`` of written numbers);
* some variable ``s`` is *outside every denominator*: in no divisor (the right operand of
  ``/``), no exponent, no base of a negative power and no argument of ``exp``; and
* at two exact rational points that differ only in the values of such variables, the difference
  ``d = lhs - rhs`` has real values, each enclosed in an interval computed in floating point
  with every rounding directed outward, and the two intervals are disjoint.

Why ``N`` is then not a number. The conversion builds, node for node, the expression read here
(a degree inside a sine, cosine or tangent scales its whole argument by ``pi/180``, as in
``to_sympy``); sympy's automatic simplification, ``together``, ``fraction`` and ``expand`` keep
values wherever every part is finite (for symbols without assumptions sympy rewrites only by
identities that hold for all complex values, principal branches included). ``together`` puts
``d`` over a product ``D`` of its terms' denominators, and a denominator is made only of
divisors, bases of negative powers and ``exp`` of a negative quantity (sympy splits a quotient
out of a power, an absolute value or a product, never out of another function): so ``D`` holds
no variable outside every denominator, and ``N = D·d`` wherever the parts are finite. At both
points every node's value is real and finite (a root or a fractional power only of a
non-negative value, a logarithm only of a positive one, a tangent only away from its poles, a
divisor only away from 0), so the principal complex values sympy means are the real ones
computed, and ``D`` has one and the same value at both, which is not 0 (its factors are divisors
and powers of them, finite and nonzero there). Hence ``N`` takes two different values: it is
not constant, so neither ``N`` nor its expansion is a number (nor 0), which is sympy's "not an
identity" (``_not_identity``). The caller returns it only after converting both sides (so every
conversion failure is sympy's as before) and checking that no part is already infinite or
undefined. With no variable in any denominator, ``D`` is a number and the points may differ in
every variable.

The intervals are sound: a rational is rounded to the nearest float and widened by one unit in
the last place; ``+ - * /`` and ``sqrt`` are correctly rounded in IEEE arithmetic, so one step
outward encloses each exact result; ``sin`` and ``cos`` are 1-Lipschitz, so on ``[lo, hi]`` they
stay within ``hi - lo`` of their value at ``lo``; ``exp``, ``log`` and powers are monotone on
the intervals read. The library functions (``sin``, ``cos``, ``exp``, ``log``, ``pow``) are
trusted only to within ``REL_PAD`` of their result plus ``ABS_PAD``: many orders above the few
units in the last place their implementations guarantee, and above the rounding of a fractional
exponent to a float (at most ``2^-53`` relative, times ``|log x| <= 745`` and the exponent's
size, at most ``MAX_EXPONENT``: below ``2^-37``). Angles are read only up to ``MAX_ANGLE``.
Anything else answers False and sympy decides as before.
"""

from __future__ import annotations

import math
from fractions import Fraction

from faithsieve.obligations.procedures.polynomials import MAX_FASTPATH_NESTING

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import (
    BinOp,
    Call,
    Const,
    Expr,
    Neg,
    Num,
    Pow,
    Var,
    variables,
    walk,
)
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits, evaluate

Interval = tuple[float, float]

REL_PAD = 2.0**-30
"""Relative error allowed to a library function's result (sin, cos, exp, log, pow)."""
ABS_PAD = 2.0**-60
"""Absolute error allowed to it besides (results near 0)."""
MAX_ANGLE = 1e6
"""Largest argument (in radians) of a sine, cosine or tangent that is read."""
MAX_EXPONENT = 64
"""Largest absolute exponent read (integer or fractional), and largest root index."""
MAX_VARIABLES = 8
"""Most variables a claim may have."""
OFFSETS = (0, 1, 3, 8, -2)
"""The points tried: the ``i``-th variable at ``(2i + 3)/(2i + 7) + k·(i + 1)`` for each offset ``k``."""

_FUNCTIONS = frozenset({"sqrt", "root", "sin", "cos", "tan", "ln", "log", "exp", "abs", "deg", "percent"})
_WRITTEN = frozenset({"factorial", "binom", "floor", "ceil"})
"""Functions the conversion reads only of written numbers (evaluated exactly)."""
_TRIG = frozenset({"sin", "cos", "tan"})


class _Off(Exception):
    """A node outside what is read, or a value not shown real and finite at this point."""


def _down(x: float) -> float:
    return math.nextafter(x, -math.inf)


def _up(x: float) -> float:
    return math.nextafter(x, math.inf)


def _finite(lo: float, hi: float) -> Interval:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise _Off
    return lo, hi


_EXACT_INTS = 2**53
"""Integers up to this size are floats exactly."""


def _exact(v: Fraction) -> Interval:
    try:
        f = float(v)  # the nearest float (integer division is correctly rounded)
    except OverflowError:
        raise _Off from None
    if v.denominator == 1 and -_EXACT_INTS <= v.numerator <= _EXACT_INTS:
        return f, f
    return _finite(_down(f), _up(f))  # one unit either way holds the value, exact or rounded


def _padded(lo: float, hi: float) -> Interval:
    """A library function's results widened by the error it is trusted to."""
    return _finite(_down(lo - abs(lo) * REL_PAD - ABS_PAD), _up(hi + abs(hi) * REL_PAD + ABS_PAD))


def _add(a: Interval, b: Interval) -> Interval:
    return _finite(_down(a[0] + b[0]), _up(a[1] + b[1]))


def _neg(a: Interval) -> Interval:
    return -a[1], -a[0]


def _mul(a: Interval, b: Interval) -> Interval:
    if a == (1.0, 1.0):
        return b
    ps = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return _finite(_down(min(ps)), _up(max(ps)))


def _div(a: Interval, b: Interval) -> Interval:
    if b[0] <= 0 <= b[1]:
        raise _Off  # the divisor may be 0
    qs = (a[0] / b[0], a[0] / b[1], a[1] / b[0], a[1] / b[1])
    return _finite(_down(min(qs)), _up(max(qs)))


def _power(base: Interval, k: Fraction) -> Interval:
    """``base^k`` as sympy's ``Pow`` means it (``x^0 = 1``; principal branch, so a fractional
    power only of a non-negative base)."""
    if abs(k) > MAX_EXPONENT or k.denominator > MAX_EXPONENT:
        raise _Off
    if k.denominator == 1:
        n = abs(k.numerator)
        out: Interval = (1.0, 1.0)
        for _ in range(n):
            out = _mul(out, base)
        if n % 2 == 0 and n and base[0] < 0 < base[1]:
            out = (0.0, out[1])  # an even power is never negative
        return _div((1.0, 1.0), out) if k < 0 else out
    lo, hi = base
    if lo < 0 or (k < 0 and lo <= 0):
        raise _Off
    e = float(k)
    try:
        a, b = math.pow(lo, e), math.pow(hi, e)
    except (OverflowError, ValueError):
        raise _Off from None
    return _padded(min(a, b), max(a, b))


def _sin_cos(fn: str, x: Interval) -> Interval:
    lo, hi = x
    if max(abs(lo), abs(hi)) > MAX_ANGLE:
        raise _Off
    f = math.sin if fn == "sin" else math.cos
    v = f(lo)
    w = _up(hi - lo)  # 1-Lipschitz: within hi - lo of the value at lo
    a, b = _padded(v, v)
    return max(-1.0, _down(a - w)), min(1.0, _up(b + w))


def _has_degree(e: Expr) -> bool:
    return any(isinstance(n, Call) and n.fn == "deg" for n in walk(e))


_PI = (_down(math.pi), _up(math.pi))
_E = (_down(math.e), _up(math.e))


class _Evaluator:
    def __init__(self, env: dict[str, Fraction], lim: Limits) -> None:
        self.env = {k: _exact(v) for k, v in env.items()}
        self.lim = lim

    def value(self, e: Expr, depth: int = 0) -> Interval:
        if depth > MAX_FASTPATH_NESTING:
            raise _Off
        if isinstance(e, Num):
            return _exact(e.value)
        if isinstance(e, Var):
            return self.env[e.name]
        if isinstance(e, Const):
            if e.name == "pi":
                return _PI
            if e.name == "e":
                return _E
            raise _Off
        if isinstance(e, Neg):
            return _neg(self.value(e.operand, depth + 1))
        if isinstance(e, BinOp):
            a, b = self.value(e.left, depth + 1), self.value(e.right, depth + 1)
            if e.op == "+":
                return _add(a, b)
            if e.op == "-":
                return _add(a, _neg(b))
            if e.op == "*":
                return _mul(a, b)
            if e.op == "/":
                return _div(a, b)
            raise _Off
        if isinstance(e, Pow):
            return _power(self.value(e.base, depth + 1), self.exponent(e.exponent))
        if isinstance(e, Call):
            return self.call(e, depth)
        raise _Off

    def exponent(self, e: Expr) -> Fraction:
        try:
            return evaluate(e, None, self.lim)
        except FaithSieveError:
            raise _Off from None

    def call(self, e: Call, depth: int) -> Interval:
        fn = e.fn
        if fn in _WRITTEN:
            try:  # read only of written numbers, as the conversion does
                return _exact(evaluate(e, None, self.lim))
            except FaithSieveError:
                raise _Off from None
        if fn not in _FUNCTIONS or not e.args:
            raise _Off
        if fn == "root":
            k = self.exponent(e.args[1]) if len(e.args) == 2 else Fraction(0)
            if k.denominator != 1 or not 0 < k <= MAX_EXPONENT:
                raise _Off
            return _power(self.value(e.args[0], depth + 1), 1 / k)
        return self._of_value(e, self.value(e.args[0], depth + 1))

    def _of_value(self, e: Call, x: Interval) -> Interval:
        """``call`` of a function of one argument, the interval ``x``."""
        fn = e.fn
        if fn == "deg":
            return x  # the number itself outside trigonometry
        if fn == "percent":
            return _div(x, (100.0, 100.0))
        if fn == "abs":
            lo, hi = x
            return x if lo >= 0 else (-hi, -lo) if hi <= 0 else (0.0, max(-lo, hi))
        if fn == "sqrt":
            if x[0] < 0:
                raise _Off
            return _down(math.sqrt(x[0])), _up(math.sqrt(x[1]))
        if fn in _TRIG:
            if _has_degree(e.args[0]):  # an argument with a degree in it is in degrees
                x = _div(_mul(x, _PI), (180.0, 180.0))
            if fn == "tan":
                return _div(_sin_cos("sin", x), _sin_cos("cos", x))
            return _sin_cos(fn, x)
        if fn == "exp":
            try:
                return _padded(math.exp(x[0]), math.exp(x[1]))
            except OverflowError:
                raise _Off from None
        if x[0] <= 0:  # ln, log: natural logarithms of a positive value
            raise _Off
        return _padded(math.log(x[0]), math.log(x[1]))


def denominator_variables(e: Expr, lim: Limits = DEFAULT_LIMITS) -> frozenset[str] | None:
    """The variables in a divisor, an exponent, the base of a negative power or the argument of
    ``exp``; None where ``e`` has a ``mod``, an ``i``, or a function the conversion does not build."""
    out: set[str] = set()
    for n in walk(e):
        if isinstance(n, BinOp):
            if n.op not in ("+", "-", "*", "/"):
                return None
            if n.op == "/":
                out |= variables(n.right)
        elif isinstance(n, Pow):
            out |= variables(n.exponent)
            if variables(n.base):
                try:
                    negative = evaluate(n.exponent, None, lim) < 0
                except FaithSieveError:
                    negative = True
                if negative:
                    out |= variables(n.base)
        elif isinstance(n, Const):
            if n.name not in ("pi", "e"):
                return None
        elif isinstance(n, Call):
            if n.fn not in _FUNCTIONS and n.fn not in _WRITTEN:
                return None
            if n.fn == "exp":
                out |= variables(n)
    return frozenset(out)


def interval(e: Expr, env: dict[str, Fraction], lim: Limits = DEFAULT_LIMITS) -> Interval | None:
    """An interval holding the real value of ``e`` at ``env``, or None where a node is not read or
    its value is not shown real and finite."""
    try:
        return _Evaluator(env, lim).value(e)
    except (_Off, KeyError, ZeroDivisionError, OverflowError, ValueError):  # a math domain error: undecided
        return None


def varying_difference(lhs: Expr, rhs: Expr, lim: Limits = DEFAULT_LIMITS) -> bool:
    """Some variable of ``lhs - rhs`` is in no denominator, and changing it alone changes the
    value of ``lhs - rhs`` between two exact rational points (see the module docstring): sympy's
    numerator of ``together(lhs - rhs)`` is then not a number."""
    names = sorted(variables(lhs) | variables(rhs))
    if not names or len(names) > MAX_VARIABLES:
        return False
    left, right = denominator_variables(lhs, lim), denominator_variables(rhs, lim)
    if left is None or right is None:
        return False
    free = [n for n in names if n not in left and n not in right]
    if not free:
        return False
    d = BinOp("-", lhs, rhs)
    for held in ((0, 3) if len(free) < len(names) else (0,)):  # the values of the other variables
        seen: list[Interval] = []
        for k in OFFSETS:
            env = {n: Fraction(2 * i + 3, 2 * i + 7) + (k if n in free else held) * (i + 1)
                   for i, n in enumerate(names)}
            v = interval(d, env, lim)
            if v is None:
                continue
            if any(v[1] < s[0] or s[1] < v[0] for s in seen):
                return True
            seen.append(v)
        if len(seen) > 1:
            return False  # defined at several points, the same value at each: most likely constant
    return False
