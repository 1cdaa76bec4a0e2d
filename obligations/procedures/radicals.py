"""Exact arithmetic on closed values with square roots and pi: is a closed equation true?

A value here is a finite sum ``Σ c · √r · π^k`` with rational ``c``, ``r`` a square-free positive
integer and ``k`` an integer. The numbers ``√r · π^k`` are linearly independent over the
rationals (the square roots of distinct square-free integers are, and π is transcendental), so
this form is unique: two values are equal exactly when their forms are equal.

``radical_equal(lhs, rhs)`` is True only when both sides are read into this form and the forms
are equal. It reads numbers, ``pi``, ``+ - * /``, ``p%``, degrees outside trigonometry (the
number itself, as the conversion reads them), integer powers (``|n| <= MAX_POWER``), powers with
a half-integer exponent and square roots of a non-negative rational, factorials, binomials,
floors and ceilings of written numbers, and sin, cos and tan of a multiple of 15° (π/12), whose
values lie in Q(√2, √3) (an argument with a degree in it is in degrees, as the conversion reads
it; tan at its poles is not read); anything else (a variable, ``e``, ``i``, another function,
angle or root, division by a sum of distinct terms) answers False.

Why a True is the outcome the sympy checker gives for that claim (``Verified``):

* ``to_sympy`` does not raise. Its probe evaluates every node at 64 bits: coefficients keep
  within ``MAX_BITS`` bits, radicands below ``MAX_RADICAND`` and powers of π within
  ``MAX_POWER``, so each exact value, and each 64-bit value the probe forms (a cancelling sum
  is off by at most one unit in the 64th bit of its terms), lies within ``2^±271``; a power
  with an exponent of at most ``MAX_POWER`` then stays far inside ``2^±max_bits``, and the
  probe's step count (at most two charges of ``2 + 271/64`` per node over at most
  ``MAX_SYMPY_NODES`` nodes) under its limit. Exponents are integers or halves of at most
  ``MAX_POWER``, inside the conversion's exponent limits, and factorials, binomials, floors and
  ceilings are read only of a written number. The probe refuses a division by a divisor whose
  64-bit value is 0, and takes every power of 0 for 0 (``0^0`` too): a power of 0 is not read,
  and a divisor is a single nonzero term written without ``+`` or ``-`` (products, quotients
  and powers of numbers, π, roots of rationals and sin, cos or tan of a written angle), so its
  64-bit value cannot be 0 (the probe takes a degree for the number itself: a sine, cosine or
  tangent of a nonzero 64-bit number is not 0); sympy, whose automatic simplification keeps
  values, cannot make it the literal 0 the conversion refuses either. The only pole read, tan at
  an odd multiple of 90°, is refused: sympy would make it infinite.
* The sides are real and equal, so sympy's ``expand(a - b)`` is the literal 0
  (``Verified("sympy")``) or a real expression of value 0, which ``evalf(50)`` puts below
  ``10^-40`` times the size of the left side (``Verified("sympy-numeric")``). Either way the
  claim is verified; the method recorded is ``radicals``. (No reader downstream of the checker
  looks at the method of a verified outcome.)

A False is "undecided": the sympy checker decides as before, so every refutation keeps sympy's
counterexample and text.
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd, isqrt

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import BinOp, Call, Const, Expr, Neg, Num, Pow, walk
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits, evaluate

MAX_BITS = 128
"""Largest bit length of a coefficient's numerator or denominator."""
MAX_RADICAND = 10**12
"""Largest square-free radicand; a square root of a rational whose ``numerator·denominator``
exceeds it is not read."""
MAX_POWER = 32
"""Largest absolute integer exponent, and power of π."""
MAX_TERMS = 64
"""Most terms a value may have."""
MAX_RADICAL_NESTING = 32
"""Deepest expression read."""

Value = dict[tuple[int, int], Fraction]
"""``{(r, k): c}``: the sum of ``c · √r · π^k`` (no zero coefficients; ``{}`` is 0)."""


def square_part(n: int) -> tuple[int, int] | None:
    """``(s, f)`` with ``n = s² · f`` and ``f`` square-free, for ``1 <= n <= MAX_RADICAND``.

    Primes are divided out up to the cube root of what is left; what remains then has at most
    two prime factors, so it is a square or square-free."""
    if not 1 <= n <= MAX_RADICAND:
        return None
    s = f = 1
    p = 2
    while p * p * p <= n:
        if n % p == 0:
            e = 0
            while n % p == 0:
                n //= p
                e += 1
            s *= p ** (e // 2)
            f *= p ** (e % 2)
        p += 1 if p == 2 else 2
    r = isqrt(n)
    if r * r == n:
        s *= r
    else:
        f *= n
    return s, f


def _bounded(v: Value | None) -> Value | None:
    if v is None or len(v) > MAX_TERMS:
        return None
    for (r, k), c in v.items():
        if r > MAX_RADICAND or abs(k) > MAX_POWER or c.numerator.bit_length() > MAX_BITS \
                or c.denominator.bit_length() > MAX_BITS:
            return None
    return v


def _rational(q: Fraction) -> Value:
    return {(1, 0): q} if q else {}


def _add(a: Value, b: Value, sign: int) -> Value:
    out = dict(a)
    for key, c in b.items():
        out[key] = out.get(key, Fraction(0)) + sign * c
    return {key: c for key, c in out.items() if c}


def _mul(a: Value, b: Value) -> Value | None:
    if len(a) * len(b) > MAX_TERMS * MAX_TERMS:
        return None
    out: Value = {}
    for (r1, k1), c1 in a.items():
        for (r2, k2), c2 in b.items():
            g = gcd(r1, r2)  # √r1·√r2 = g·√(r1·r2/g²), square-free again
            key = ((r1 // g) * (r2 // g), k1 + k2)
            out[key] = out.get(key, Fraction(0)) + c1 * c2 * g
    return _bounded({key: c for key, c in out.items() if c})


def _inverse(a: Value) -> Value | None:
    """``1/a`` for a single nonzero term: ``1/(c·√r·π^k) = √r·π^-k / (c·r)``."""
    if len(a) != 1:
        return None
    ((r, k), c), = a.items()
    return _bounded({(r, -k): 1 / (c * r)})


def _sqrt(q: Fraction) -> Value | None:
    """``√q`` for a rational ``q >= 0``: ``√(n·d)/d``."""
    if q < 0:
        return None
    if q == 0:
        return {}
    parts = square_part(q.numerator * q.denominator)
    if parts is None:
        return None
    s, f = parts
    return _bounded({(f, 0): Fraction(s, q.denominator)})


def _power(base: Value, n: int) -> Value | None:
    if n < 0:
        inv = _inverse(base)
        return None if inv is None else _power(inv, -n)
    out: Value | None = {(1, 0): Fraction(1)}
    for _ in range(n):
        out = _mul(out, base) if out is not None else None
    return out


def _no_sum(e: Expr) -> bool:
    """``e`` is written without ``+`` or ``-``: its 64-bit value cannot cancel to 0."""
    if isinstance(e, BinOp):
        return e.op in ("*", "/") and _no_sum(e.left) and _no_sum(e.right)
    if isinstance(e, Neg):
        return _no_sum(e.operand)
    if isinstance(e, Pow):
        return _no_sum(e.base) and _no_sum(e.exponent)
    if isinstance(e, Call):
        return all(_no_sum(a) for a in e.args)
    return True


def _exact(e: Expr, lim: Limits) -> Fraction | None:
    try:
        return evaluate(e, None, lim)
    except FaithSieveError:
        return None


def _value(e: Expr, lim: Limits, depth: int) -> Value | None:
    if depth > MAX_RADICAL_NESTING:
        return None
    if isinstance(e, Num):
        return _bounded(_rational(e.value))
    if isinstance(e, Const):
        return {(1, 1): Fraction(1)} if e.name == "pi" else None
    if isinstance(e, Neg):
        a = _value(e.operand, lim, depth + 1)
        return None if a is None else {key: -c for key, c in a.items()}
    if isinstance(e, BinOp) and e.op in ("+", "-", "*", "/"):
        if e.op == "/" and not _no_sum(e.right):
            return None
        a, b = _value(e.left, lim, depth + 1), _value(e.right, lim, depth + 1)
        if a is None or b is None:
            return None
        if e.op == "*":
            return _mul(a, b)
        if e.op == "/":
            inv = _inverse(b)
            return None if inv is None else _mul(a, inv)
        return _bounded(_add(a, b, 1 if e.op == "+" else -1))
    if isinstance(e, Pow):
        return _pow(e, lim, depth)
    if isinstance(e, Call):
        return _call(e, lim, depth)
    return None


def _pow(e: Pow, lim: Limits, depth: int) -> Value | None:
    exponent = _value(e.exponent, lim, depth + 1)
    if exponent is None or any(key != (1, 0) for key in exponent):
        return None
    k = exponent.get((1, 0), Fraction(0))
    if k.denominator not in (1, 2) or abs(k.numerator) > MAX_POWER:
        return None
    base = _value(e.base, lim, depth + 1)
    if not base:
        return None  # 0^k: the probe takes every power of 0 for 0 (0^0 too), sympy does not
    if k.denominator == 2:  # q^(n/2) = (√q)^n, for a rational q >= 0
        if any(key != (1, 0) for key in base):
            return None
        root = _sqrt(base.get((1, 0), Fraction(0)))
        return None if root is None else _power(root, k.numerator)
    return _power(base, k.numerator)


def _call(e: Call, lim: Limits, depth: int) -> Value | None:
    if e.fn in ("factorial", "binom", "floor", "ceil"):  # the conversion evaluates them exactly, or refuses
        if not all(isinstance(a, Num) for a in e.args):
            return None  # a computed argument: the probe's 64-bit value of it might not be an integer
        v = _exact(e, lim)
        return None if v is None else _bounded(_rational(v))
    arity = len(e.args)  # counted once: a root's index is read below, as written
    if arity != 1 and not (e.fn == "root" and arity == 2):
        return None
    if e.fn == "deg":  # outside trigonometry a degree is the number itself
        return _value(e.args[0], lim, depth + 1)
    if e.fn == "percent":
        a = _value(e.args[0], lim, depth + 1)
        return None if a is None else _bounded({key: c / 100 for key, c in a.items()})
    if e.fn in ("sin", "cos", "tan"):
        return _trig(e, lim, depth)
    if e.fn == "sqrt" or (e.fn == "root" and isinstance(e.args[1], Num) and e.args[1].value == 2):
        a = _value(e.args[0], lim, depth + 1)
        if a is None or any(key != (1, 0) for key in a):
            return None
        return _sqrt(a.get((1, 0), Fraction(0)))
    return None


_HALF, _QUARTER = Fraction(1, 2), Fraction(1, 4)
_COS: tuple[Value, ...] = (  # cos(nπ/12), n = 0..6
    {(1, 0): Fraction(1)}, {(6, 0): _QUARTER, (2, 0): _QUARTER}, {(3, 0): _HALF}, {(2, 0): _HALF},
    {(1, 0): _HALF}, {(6, 0): _QUARTER, (2, 0): -_QUARTER}, {},
)
_TAN: tuple[Value, ...] = (  # tan(nπ/12), n = 0..5 (n = 6 is a pole)
    {}, {(1, 0): Fraction(2), (3, 0): Fraction(-1)}, {(3, 0): Fraction(1, 3)}, {(1, 0): Fraction(1)},
    {(3, 0): Fraction(1)}, {(1, 0): Fraction(2), (3, 0): Fraction(1)},
)


def _cos12(n: int) -> Value:
    n %= 24
    if n > 12:
        n = 24 - n  # cos is even, of period 2π
    if n <= 6:
        return dict(_COS[n])
    return {key: -c for key, c in _COS[12 - n].items()}  # cos(π - x) = -cos(x)


def _trig(e: Call, lim: Limits, depth: int) -> Value | None:
    """sin, cos or tan of a multiple of 15° (π/12): exact values in Q(√2, √3). As the conversion
    reads it, an argument with a degree anywhere in it is a number of degrees, else of radians."""
    arg = e.args[0]
    a = _value(arg, lim, depth + 1)
    if a is None:
        return None
    if any(isinstance(n, Call) and n.fn == "deg" for n in walk(arg)):
        if any(key != (1, 0) for key in a):
            return None
        turns = a.get((1, 0), Fraction(0)) / 180  # the angle over π
    else:
        if any(key != (1, 1) for key in a):
            return None
        turns = a.get((1, 1), Fraction(0))
    twelfths = turns * 12
    if twelfths.denominator != 1:
        return None
    n = twelfths.numerator
    if e.fn == "cos":
        return _cos12(n)
    if e.fn == "sin":
        return _cos12(6 - n)  # sin(x) = cos(π/2 - x)
    n %= 12  # tan has period π
    if n == 6:
        return None  # a pole: sympy makes it infinite
    if n < 6:
        return dict(_TAN[n])
    return {key: -c for key, c in _TAN[12 - n].items()}  # tan(π - x) = -tan(x)


def radical_value(e: Expr, lim: Limits = DEFAULT_LIMITS) -> Value | None:
    """The exact form of ``e``, or None when it is outside what this module reads."""
    return _value(e, lim, 0)


def radical_equal(lhs: Expr, rhs: Expr, lim: Limits = DEFAULT_LIMITS) -> bool:
    """Both sides are read and are the same real number (see the module docstring)."""
    a = radical_value(lhs, lim)
    if a is None:
        return False
    b = radical_value(rhs, lim)
    return b is not None and a == b
