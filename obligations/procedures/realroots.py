"""Whether a conjunction of sign conditions on polynomials in ONE real variable has a real
solution, decided exactly over the rationals (no solver, no floating point).

A condition is a polynomial with rational coefficients and a relation to zero (``= != < > <= >=``).
Let ``S`` be the square-free part of the product of the non-constant polynomials. Its real roots
cut the line into finitely many cells: the roots themselves and the open intervals between and
beyond them. No polynomial of the conjunction changes sign inside an interval (each of its roots
is a root of ``S``), so every condition has one truth value per cell and the conjunction has a
solution exactly when it holds in some cell. ``satisfiable`` checks every cell:

* an interval through one rational point in it (an endpoint of an isolating interval, or the
  isolating interval's endpoint beyond the last root);
* a root ``α`` through its isolating interval ``(a, b)``: rational endpoints, neither a root of
  ``S``, and ``α`` the only root of ``S`` inside. A polynomial ``q`` of the conjunction vanishes
  at ``α`` exactly when ``gcd(S, q)`` has a root in ``(a, b)`` (its roots are roots of ``S``;
  Sturm's theorem counts them); otherwise ``q`` has no root in ``[a, b]`` and its sign at ``α`` is
  its sign at ``a``.

The roots are isolated by bisection of the Cauchy interval with Sturm counts (a split point that
is itself a root is replaced by another rational in the interval; ``S`` has finitely many).

So the answer is the truth, not an approximation: ``True`` when a real solution exists, ``False``
when none does; ``None`` only when a bound is reached (degree ``MAX_DEGREE`` of one polynomial,
``MAX_PRODUCT_DEGREE`` of ``S``, ``MAX_BITS`` bits in any coefficient or point,
``MAX_STEPS`` bisection steps), and then the caller decides some other way.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

Poly1 = list[Fraction]
"""A univariate polynomial: coefficients from the constant term up, no trailing zeros (``[]`` is 0)."""

MAX_DEGREE = 16
"""Highest degree of one polynomial of a conjunction."""
MAX_PRODUCT_DEGREE = 16
"""Highest degree of the square-free part of the product of a conjunction's polynomials."""
MAX_BITS = 4096
"""Most bits in a numerator or denominator of any coefficient or point computed."""
MAX_STEPS = 2000
"""Most bisection steps (Sturm counts) one decision may take."""

OPS: dict[str, Callable[[Fraction | int], bool]] = {"=": lambda s: s == 0, "!=": lambda s: s != 0, "<": lambda s: s < 0, ">": lambda s: s > 0,
        "<=": lambda s: s <= 0, ">=": lambda s: s >= 0}


class _TooHard(Exception):
    """A bound was reached."""


def _sized(x: Fraction) -> Fraction:
    if x.numerator.bit_length() > MAX_BITS or x.denominator.bit_length() > MAX_BITS:
        raise _TooHard
    return x


def trim(p: Poly1) -> Poly1:
    out = list(p)
    while out and out[-1] == 0:
        out.pop()
    return out


def value(p: Poly1, x: Fraction) -> Fraction:
    acc = Fraction(0)
    for c in reversed(p):
        acc = _sized(acc * x + c)
    return acc


def _sign(x: Fraction) -> int:
    return (x > 0) - (x < 0)


def _mul(a: Poly1, b: Poly1) -> Poly1:
    if not a or not b:
        return []
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return trim([_sized(c) for c in out])


def _divmod(a: Poly1, b: Poly1) -> tuple[Poly1, Poly1]:
    """Quotient and remainder of ``a`` by a nonzero ``b``."""
    r = list(a)
    q = [Fraction(0)] * max(0, len(a) - len(b) + 1)
    lead = b[-1]
    while len(r) >= len(b) and r:
        k = _sized(r[-1] / lead)
        shift = len(r) - len(b)
        q[shift] = k
        for i, c in enumerate(b):
            r[shift + i] = _sized(r[shift + i] - k * c)
        r = trim(r[:-1])
    return trim(q), r


def _primitive(p: Poly1) -> Poly1:
    """``p`` times a positive number: integer coefficients with no common factor (same signs
    everywhere, same roots; keeps the remainder sequences below from growing)."""
    if not p:
        return p
    m = math.lcm(*(c.denominator for c in p))
    ints = [int(c * m) for c in p]
    g = math.gcd(*ints)
    return [Fraction(c // g) for c in ints]


def _gcd(a: Poly1, b: Poly1) -> Poly1:
    while b:
        a, b = b, _primitive(_divmod(a, b)[1])
    return _primitive(a)


def _derivative(p: Poly1) -> Poly1:
    return trim([c * i for i, c in enumerate(p)][1:])


def _square_free(p: Poly1) -> Poly1:
    return _primitive(_divmod(p, _gcd(p, _derivative(p)))[0])


IntPoly = list[int]
"""A polynomial scaled by a positive number to integer coefficients (same signs everywhere)."""


def _integral(p: Poly1) -> IntPoly:
    m = math.lcm(*(c.denominator for c in p))
    return [int(c * m) for c in p]


def _sign_at(p: IntPoly, x: Fraction) -> int:
    """The sign of ``p`` at ``x``: of ``d^deg · p(n/d)``, in integers (``d > 0``)."""
    n, d = x.numerator, x.denominator
    acc, dk = 0, 1
    for c in reversed(p):  # Horner on the homogeneous form: c_i is met with d^(deg - i)
        acc = acc * n + c * dk
        dk *= d
    return (acc > 0) - (acc < 0)


def _sturm(p: Poly1) -> list[IntPoly]:
    seq = [p, _primitive(_derivative(p))]
    while seq[-1] and len(seq[-1]) > 1:
        r = _divmod(seq[-2], seq[-1])[1]
        if not r:
            break
        seq.append([-c for c in _primitive(r)])
    return [_integral(s) for s in seq if s]


def _variations(seq: list[IntPoly], x: Fraction) -> int:
    signs = [s for s in (_sign_at(p, x) for p in seq) if s]
    return sum(1 for u, v in zip(signs, signs[1:], strict=False) if u != v)


def _roots_between(seq: list[IntPoly], a: Fraction, b: Fraction) -> int:
    """Distinct real roots in ``(a, b)`` of the square-free polynomial whose Sturm sequence is
    ``seq`` (``a`` and ``b`` not roots)."""
    return _variations(seq, a) - _variations(seq, b)


class _Steps:
    def __init__(self) -> None:
        self.left = MAX_STEPS

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise _TooHard


def _split(s: Poly1, a: Fraction, b: Fraction) -> Fraction:
    """A rational strictly inside ``(a, b)`` that is not a root of ``s`` (the midpoint first)."""
    si = _integral(s)
    for k in range(2, len(s) + 3):
        m = _sized(a + (b - a) / k)
        if _sign_at(si, m) != 0:
            return m
    raise _TooHard  # unreachable: s has fewer roots than the points tried


def isolate(s: Poly1, steps: _Steps) -> list[tuple[Fraction, Fraction]]:
    """Disjoint isolating intervals ``(a, b)``, in increasing order, one per real root of the
    square-free, non-constant ``s``; no endpoint is a root."""
    cauchy = 2 + max(abs(c / s[-1]) for c in s[:-1])  # every root has |x| <= cauchy - 1
    bound = _sized(Fraction(2 ** math.ceil(cauchy).bit_length()))  # a power of two: dyadic midpoints
    seq = _sturm(s)
    out: list[tuple[Fraction, Fraction]] = []
    todo = [(-bound, bound)]
    while todo:
        a, b = todo.pop()
        steps.spend()
        n = _roots_between(seq, a, b)
        if n == 1:
            out.append((a, b))
        elif n > 1:
            m = _split(s, a, b)
            todo += [(m, b), (a, m)]
    return sorted(out)


def satisfiable(conditions: list[tuple[Poly1, str]]) -> bool | None:
    """Some real ``x`` satisfies every ``p(x) R 0``: True or False exactly, None past a bound."""
    table = sign_table([p for p, _ in conditions])
    if table is None:
        return None
    return any(all(OPS[op](sign) for sign, (_, op) in zip(row, conditions, strict=False)) for row in table)


def sign_table(polys: list[Poly1]) -> list[tuple[int, ...]] | None:
    """The signs (-1, 0, 1) of ``polys`` in every cell of the line (one row per cell, in no
    particular order; a row may repeat); None past a bound."""
    found = cells(polys)
    return None if found is None else [c.signs for c in found]


@dataclass(frozen=True)
class Cell:
    """A cell of the line: its signs, and for a root its isolating interval of the square-free
    product ``s`` (None for an open interval, which holds rational points)."""

    signs: tuple[int, ...]
    root: tuple[Fraction, Fraction] | None
    s: Poly1


def cells(polys: list[Poly1]) -> list[Cell] | None:
    """Every cell of the line for ``polys`` (as ``sign_table``); None past a bound."""
    try:
        return _cells([trim(p) for p in polys])
    except (_TooHard, ZeroDivisionError):
        return None


def _square_free_product(distinct: list[Poly1]) -> Poly1:
    """The square-free part of the product of the non-constant ``distinct``, primitive, built as
    the least common multiple of their square-free parts: a polynomial over the rationals is
    square-free with exactly the distinct complex roots of the product, so both constructions give
    the same polynomial up to a nonzero constant (Sturm counts, isolating intervals and the roots'
    rationality do not depend on it). Raises ``_TooHard`` once its degree passes
    ``MAX_PRODUCT_DEGREE`` (a repeated factor, ``x^4`` beside ``x^4 (x^2 - 3)``, counts once)."""
    s: Poly1 = [Fraction(1)]
    for p in distinct:
        q = _square_free(p)
        s = _primitive(_divmod(_mul(s, q), _gcd(s, q))[0])
        if len(s) - 1 > MAX_PRODUCT_DEGREE:
            raise _TooHard
    return s


def _cells(polys: list[Poly1]) -> list[Cell]:
    if any(len(p) - 1 > MAX_DEGREE for p in polys):
        raise _TooHard
    distinct: list[Poly1] = []
    for p in polys:
        if len(p) > 1 and p not in distinct:
            distinct.append(p)
    scaled = [_integral(p) if p else [] for p in polys]

    def signs_at(x: Fraction) -> tuple[int, ...]:
        return tuple(_sign_at(p, x) for p in scaled)

    if not distinct:
        return [Cell(signs_at(Fraction(0)), None, [])]
    s = _square_free_product(distinct)
    intervals = isolate(s, _Steps())
    if not intervals:
        return [Cell(signs_at(Fraction(0)), None, s)]
    # one rational point per open cell: left of the first root, between roots, right of the last
    out = [Cell(signs_at(intervals[0][0]), None, s)] + [Cell(signs_at(b), None, s) for _, b in intervals]
    # at a root: a polynomial vanishes there exactly when its common factor with s has a root in
    # the isolating interval; otherwise it keeps the sign it has at the interval's left end
    common = [_sturm(g) if len(g) > 1 else None for g in (_gcd(s, p) if len(p) > 1 else [] for p in polys)]
    for a, b in intervals:
        out.append(Cell(tuple(0 if seq is not None and _roots_between(seq, a, b) > 0 else _sign_at(pi, a)
                              for seq, pi in zip(common, scaled, strict=False)), (a, b), s))
    return out


def rational_root(cell: Cell) -> bool | None:
    """Whether the root of a root cell is a rational number; None past a bound (``rational_value``)."""
    try:
        return _rational_guess(cell) is not None
    except (_TooHard, ZeroDivisionError):
        return None


def rational_value(cell: Cell) -> Fraction | None:
    """The root of a root cell when it is a rational number; None when it is irrational or a bound
    is reached."""
    try:
        return _rational_guess(cell)
    except (_TooHard, ZeroDivisionError):
        return None


def _rational_guess(cell: Cell) -> Fraction | None:
    """The root of a root cell if it is rational, None if it is not; raises past a bound.

    ``s`` is primitive with integer coefficients, so a rational root ``u/t`` in lowest terms has
    ``t`` dividing its leading coefficient ``L`` (Gauss): ``t <= |L|``. Two distinct fractions with
    denominators at most ``|L|`` lie at least ``1/L^2`` apart, so once the isolating interval is
    narrower than ``1/(2 L^2)``, the fraction nearest its midpoint with denominator at most ``|L|``
    is the root when the root is rational; it is checked exactly."""
    assert cell.root is not None
    a, b = cell.root
    lead = abs(int(cell.s[-1]))
    width = Fraction(1, 2 * lead * lead)
    seq, steps = _sturm(cell.s), _Steps()
    while b - a >= width:
        steps.spend()
        m = _split(cell.s, a, b)
        if _roots_between(seq, a, m) == 1:
            b = m
        else:
            a = m
    guess = ((a + b) / 2).limit_denominator(lead)
    return guess if a < guess < b and _sign_at(_integral(cell.s), guess) == 0 else None
