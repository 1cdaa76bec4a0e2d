"""Exact expansion of polynomials written with numbers, variables, ``+ - * /``, ``p%`` and small
integer powers: the polynomial arithmetic the fast paths (``fastpaths``) and the exact readers
(``ratfunc``, ``freevar``, ``cleared``) share.

* ``expand``: the expanded polynomial of an expression, a coefficient per monomial, or None past
  a bound (depth, terms, products formed, and every coefficient of every node's expansion within
  ``lim.max_bits`` bits).
* It computes with integer coefficients over one common denominator (``IntPoly``), reduced at
  each node, and makes ``Fraction`` coefficients once, at the end: the same polynomial, with its
  monomials in the same order, as one ``Fraction`` per coefficient gives (``_expand_fractions``,
  the former expansion, which it falls back to where a common denominator would outgrow the bit
  bound while every coefficient keeps within it).
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd
from typing import TypeVar

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import BinOp, Call, Expr, Neg, Num, Pow, Var
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits, evaluate

MAX_FASTPATH_NESTING = 32
"""Deepest expression a fast path reads (deeper ones go to the solver, whatever it makes of them)."""
MAX_POWER = 24
"""Largest exponent a polynomial fast path accepts (the symbolic checker's degree cap)."""


def small_int(e: Expr) -> int | None:
    if isinstance(e, Num) and e.value.denominator == 1 and 0 <= e.value.numerator <= MAX_POWER:
        return e.value.numerator
    return None


Monomial = tuple[tuple[str, int], ...]
"""Sorted ``(variable, exponent)`` pairs; ``()`` the constant."""
Poly = dict[Monomial, Fraction]
"""A polynomial: coefficient per monomial."""
C = TypeVar("C", int, Fraction)
"""A coefficient: integers (over a common denominator, ``IntPoly``) or fractions (``Poly``)."""

MAX_TERMS = 4000
"""Most monomials an expansion may hold (the symbolic checker's bound)."""


MAX_PRODUCTS = 8 * MAX_TERMS
"""Most monomial products one multiplication may form (bounds the work before the term cap)."""


def _mono_mul(ma: tuple[tuple[str, int], ...], mb: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    """The product of two monomials (each sorted by variable, no variable twice), sorted the same
    way: a merge of the two."""
    if not ma:
        return mb
    if not mb:
        return ma
    out = []
    i = j = 0
    while i < len(ma) and j < len(mb):
        (va, ka), (vb, kb) = ma[i], mb[j]
        if va == vb:
            out.append((va, ka + kb))
            i += 1
            j += 1
        elif va < vb:
            out.append(ma[i])
            i += 1
        else:
            out.append(mb[j])
            j += 1
    out.extend(ma[i:])
    out.extend(mb[j:])
    return tuple(out)


def pmul(a: dict[Monomial, C], b: dict[Monomial, C]) -> dict[Monomial, C] | None:
    if len(a) * len(b) > MAX_PRODUCTS:
        return None
    out: dict[Monomial, C] = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            key = _mono_mul(ma, mb)
            c = out.get(key)
            out[key] = ca * cb if c is None else c + ca * cb
    out = {m: c for m, c in out.items() if c}
    return out if len(out) <= MAX_TERMS else None


def pconst(p: Poly) -> Fraction | None:
    return p.get((), Fraction(0)) if all(not m for m in p) else None


def pneg(p: Poly) -> Poly:
    return {m: -c for m, c in p.items()}


IntPoly = tuple[dict[Monomial, int], int]
"""A polynomial as integer coefficients over one positive common denominator ``(coefficients, d)``,
the coefficient of a monomial being ``c / d``; ``d`` shares no factor with every coefficient."""


def _reduced(p: dict[Monomial, int], den: int) -> IntPoly:
    """``(p, den)`` with the common factor of the coefficients and the denominator divided out."""
    if den != 1:
        g = gcd(den, *p.values())
        if g != 1:
            return {m: c // g for m, c in p.items()}, den // g
    return p, den


class _Wide(Exception):
    """The common denominator grew past the bit bound while every coefficient kept within it."""


def _within(p: IntPoly, max_bits: int) -> bool:
    """Every coefficient, as a reduced fraction, has numerator and denominator within ``max_bits``
    bits (the bound ``expand`` puts on each node). Dividing out a common factor only shortens
    numbers, so the unreduced ones within the bound settle it; otherwise each is reduced.

    Raises ``_Wide`` when the coefficients are within the bound but their common denominator (the
    least common multiple of theirs) is not: it keeps every integer formed below about twice the
    bound, so the work stays what ``Fraction`` coefficients would cost."""
    coefficients, den = p
    if den.bit_length() <= max_bits and all(c.bit_length() <= max_bits for c in coefficients.values()):
        return True
    for c in coefficients.values():
        g = gcd(c, den)
        if (c // g).bit_length() > max_bits or (den // g).bit_length() > max_bits:
            return False
    if den.bit_length() > max_bits:
        raise _Wide
    return True


def _isub(a: dict[Monomial, int], b: dict[Monomial, int]) -> dict[Monomial, int]:
    d = dict(a)
    for m, c in b.items():
        d[m] = d.get(m, 0) - c
    return {m: c for m, c in d.items() if c}


def _icombine(a: IntPoly, b: IntPoly, sign: int) -> IntPoly:
    """``a - b`` (``sign`` -1) or ``a + b`` (``sign`` 1), over the least common denominator."""
    (pa, da), (pb, db) = a, b
    if da != db:
        lcm = da // gcd(da, db) * db
        pa = {m: c * (lcm // da) for m, c in pa.items()}
        pb = {m: c * (lcm // db) for m, c in pb.items()}
        da = lcm
    return _reduced(_isub(pa, pb) if sign < 0 else _isub(pa, {m: -c for m, c in pb.items()}), da)


def _iconst(p: IntPoly) -> Fraction | None:
    return Fraction(p[0].get((), 0), p[1]) if all(not m for m in p[0]) else None


def fractions_of(p: IntPoly | tuple[Poly, int]) -> Poly:
    return {m: Fraction(c, p[1]) for m, c in p[0].items()}


def _number(v: Fraction) -> IntPoly:
    return ({(): v.numerator} if v else {}), v.denominator


def _iexpand(e: Expr, lim: Limits, depth: int, quotients: bool) -> IntPoly | None:
    """``expand`` with integer coefficients over a common denominator: the same polynomial (the
    same monomials, in the same order, with the same values), the same bounds checked at the same
    nodes, without a ``Fraction`` operation per coefficient."""
    if depth > MAX_FASTPATH_NESTING:
        return None
    out: IntPoly | None
    if isinstance(e, Num):
        out = _number(e.value)
    elif isinstance(e, Var):
        return {((e.name, 1),): 1}, 1  # coefficient 1: within every bound
    elif isinstance(e, Neg):
        a = _iexpand(e.operand, lim, depth + 1, quotients)
        return None if a is None else ({m: -c for m, c in a[0].items()}, a[1])  # the operand's sizes
    elif isinstance(e, Call) and e.fn == "percent" and len(e.args) == 1:
        a = _iexpand(e.args[0], lim, depth + 1, quotients)
        out = None if a is None else _reduced(a[0], a[1] * 100)
    elif isinstance(e, BinOp) and e.op in ("+", "-", "*", "/"):
        out = _ibinop(e, lim, depth, quotients)
    elif isinstance(e, Pow) and small_int(e.exponent) is not None:
        out = _ipower(e, lim, depth, quotients)
    else:
        return None
    if out is None or not _within(out, lim.max_bits):
        return None
    return out


def _ibinop(e: BinOp, lim: Limits, depth: int, quotients: bool) -> IntPoly | None:
    """``_iexpand`` of ``+ - * /`` before its bound on the result."""
    a, b = _iexpand(e.left, lim, depth + 1, quotients), _iexpand(e.right, lim, depth + 1, quotients)
    if a is None or b is None:
        return None
    if e.op == "*":
        product = pmul(a[0], b[0])
        return None if product is None else _reduced(product, a[1] * b[1])
    if e.op == "/":
        d = _iconst(b)
        if d is None and quotients:
            return {((_quotient_name(fractions_of(a), fractions_of(b)), 1),): 1}, 1
        if not d:
            return None  # a variable or a zero divisor
        k = d.denominator if d > 0 else -d.denominator
        return _reduced({m: c * k for m, c in a[0].items()}, a[1] * abs(d.numerator))
    return _icombine(a, b, -1 if e.op == "-" else 1)


def _ipower(e: Pow, lim: Limits, depth: int, quotients: bool) -> IntPoly | None:
    """``_iexpand`` of a small integer power before its bound on the result."""
    base = _iexpand(e.base, lim, depth + 1, quotients)
    if base is None:
        return None
    if _iconst(base) is not None:
        try:
            v = evaluate(e, None, lim)
        except FaithSieveError:
            return None
        return _number(v)
    k = small_int(e.exponent) or 0
    power: dict[Monomial, int] | None = {(): 1}
    for _ in range(k):
        power = pmul(power, base[0]) if power is not None else None
    return None if power is None else _reduced(power, base[1] ** k)


def _expand_fractions(e: Expr, lim: Limits, depth: int, quotients: bool) -> Poly | None:
    """``expand`` with one ``Fraction`` per coefficient: what ``_iexpand`` computes, for the
    expressions whose common denominator would outgrow the bit bound (``_Wide``)."""
    if depth > MAX_FASTPATH_NESTING:
        return None
    out: Poly | None
    if isinstance(e, Num):
        out = {(): e.value} if e.value else {}
    elif isinstance(e, Var):
        return {((e.name, 1),): Fraction(1)}
    elif isinstance(e, Neg):
        a = _expand_fractions(e.operand, lim, depth + 1, quotients)
        return None if a is None else {m: -c for m, c in a.items()}
    elif isinstance(e, Call) and e.fn == "percent" and len(e.args) == 1:
        a = _expand_fractions(e.args[0], lim, depth + 1, quotients)
        out = None if a is None else {m: c / 100 for m, c in a.items()}
    elif isinstance(e, BinOp) and e.op in ("+", "-", "*", "/"):
        out = _fbinop(e, lim, depth, quotients)
    elif isinstance(e, Pow) and small_int(e.exponent) is not None:
        out = _fpower(e, lim, depth, quotients)
    else:
        return None
    if out is None or any(c.numerator.bit_length() > lim.max_bits or c.denominator.bit_length() > lim.max_bits
                          for c in out.values()):
        return None
    return out


def _fbinop(e: BinOp, lim: Limits, depth: int, quotients: bool) -> Poly | None:
    """``_expand_fractions`` of ``+ - * /`` before its bound on the result."""
    a = _expand_fractions(e.left, lim, depth + 1, quotients)
    b = _expand_fractions(e.right, lim, depth + 1, quotients)
    if a is None or b is None:
        return None
    if e.op == "*":
        return pmul(a, b)
    if e.op == "/":
        d = pconst(b)
        if d is None and quotients:
            return {((_quotient_name(a, b), 1),): Fraction(1)}
        if not d:
            return None
        return {m: c / d for m, c in a.items()}
    return psub(a, b) if e.op == "-" else psub(a, {m: -c for m, c in b.items()})


def _fpower(e: Pow, lim: Limits, depth: int, quotients: bool) -> Poly | None:
    """``_expand_fractions`` of a small integer power before its bound on the result."""
    base = _expand_fractions(e.base, lim, depth + 1, quotients)
    if base is None:
        return None
    if pconst(base) is not None:
        try:
            v = evaluate(e, None, lim)
        except FaithSieveError:
            return None
        return {(): v} if v else {}
    out: Poly | None = {(): Fraction(1)}
    for _ in range(small_int(e.exponent) or 0):
        out = pmul(out, base) if out is not None else None
    return out

def poly_difference(lhs: Expr, rhs: Expr, lim: Limits, quotients: bool) -> IntPoly | tuple[Poly, int] | None:
    """``lhs - rhs`` expanded, as ``(coefficients, denominator)``: integers over a common
    denominator, or, where one would outgrow the bit bound, ``Fraction`` coefficients over 1; None
    where either side does not expand."""
    try:
        a, b = _iexpand(lhs, lim, 0, quotients), _iexpand(rhs, lim, 0, quotients)
    except _Wide:
        fa, fb = expand(lhs, lim, quotients=quotients), expand(rhs, lim, quotients=quotients)
        return None if fa is None or fb is None else (psub(fa, fb), 1)
    return None if a is None or b is None else _icombine(a, b, -1)


def expand(e: Expr, lim: Limits = DEFAULT_LIMITS, depth: int = 0, quotients: bool = False) -> Poly | None:
    """The expanded polynomial of ``e`` (numbers, variables, ``+ - *``, ``p%``, division by a
    variable-free divisor, powers with a small non-negative integer exponent), exactly; None for
    any other node and past the term, size or depth bounds (every coefficient of every node's
    expansion within ``lim.max_bits`` bits). A power of a number is evaluated as the symbolic
    conversion evaluates it, so it meets the same limits.

    With ``quotients``, a quotient by a divisor with a variable is one opaque quantity (an atom:
    a name no variable has, made of the expanded dividend and divisor), instead of None."""
    try:
        out = _iexpand(e, lim, depth, quotients)
    except _Wide:
        return _expand_fractions(e, lim, depth, quotients)
    return None if out is None else fractions_of(out)


QUOTIENT = "\0"
"""First character of a quotient atom's name (no variable name has it)."""


def _quotient_name(a: Poly, b: Poly) -> str:
    def canon(p: Poly) -> str:
        return " ".join(f"{'*'.join(f'{v}^{k}' for v, k in m)}:{c}" for m, c in sorted(p.items()))

    return f"{QUOTIENT}({canon(a)})/({canon(b)})"


def psub(a: Poly, b: Poly) -> Poly:
    d = dict(a)
    for m, c in b.items():
        d[m] = d.get(m, Fraction(0)) - c
    return {m: c for m, c in d.items() if c}
