"""Relations restricted to a line: every variable but one fixed at a rational value, read as
sign conditions on polynomials in the free variable (``realroots``), away from division by zero.

Along the line, an expression in the SMT fragment (``fastpaths.translates``: numbers, variables,
``+ - * /``, ``p%``, integer powers 0..12; ``abs`` is left out) is a quotient ``N/D`` of two
polynomials in the free variable, built node by node exactly as the SMT translation computes
(a power as repeated products, ``p%`` as ``p/100``). Where the numerator of every divisor met is
nonzero, every denominator built is a product of such numerators and is nonzero too, and each
division means the exact quotient in SMT (division by zero is the only place SMT leaves a value
open). So a relation ``lhs R rhs`` holds at such a point exactly when ``N·D R 0`` for
``lhs - rhs = N/D``, and a real point satisfying those conditions together with "every divisor
numerator ≠ 0" is a point of the SMT query (whatever values it gives division by zero).

``conditions`` returns those conditions for a list of relations, with the divisors (None
outside the fragment or past a bound). They say nothing about the points where a divisor
vanishes: there SMT gives each division by zero a value of its own choosing.
"""

from __future__ import annotations

from fractions import Fraction

from faithsieve.obligations.procedures import realroots
from faithsieve.obligations.procedures.fastpaths import smt_power
from faithsieve.obligations.procedures.polynomials import MAX_FASTPATH_NESTING
from faithsieve.obligations.procedures.realroots import Poly1, trim

from faithsieve.mathtext.ast import BinOp, Call, Expr, Neg, Num, Pow, Rel, Var

Quotient = tuple[Poly1, Poly1]
"""``N / D`` along the line (``D`` never the zero polynomial)."""

_ONE: Poly1 = [Fraction(1)]


class _Outside(Exception):
    """A node outside the fragment, or a bound reached."""


def _mul(a: Poly1, b: Poly1) -> Poly1:
    if not a or not b:
        return []
    if len(a) + len(b) - 2 > realroots.MAX_DEGREE:
        raise _Outside
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    for c in out:
        if c.numerator.bit_length() > realroots.MAX_BITS or c.denominator.bit_length() > realroots.MAX_BITS:
            raise _Outside
    return trim(out)


_ZERO = Fraction(0)


def _add(a: Poly1, b: Poly1, sign: int = 1) -> Poly1:
    n = max(len(a), len(b))
    return trim([(a[i] if i < len(a) else _ZERO) + sign * (b[i] if i < len(b) else _ZERO) for i in range(n)])


class _Line:
    def __init__(self, free: str, point: dict[str, Fraction]) -> None:
        self.free, self.point = free, point
        self.divisors: list[Poly1] = []

    def quotient(self, e: Expr, depth: int = 0) -> Quotient:
        if depth > MAX_FASTPATH_NESTING:
            raise _Outside
        if isinstance(e, Num):
            return trim([e.value]), _ONE
        if isinstance(e, Var):
            return ([Fraction(0), Fraction(1)] if e.name == self.free else trim([self.point[e.name]])), _ONE
        if isinstance(e, Neg):
            n, d = self.quotient(e.operand, depth + 1)
            return [-c for c in n], d
        if isinstance(e, Call) and e.fn == "percent" and len(e.args) == 1:
            n, d = self.quotient(e.args[0], depth + 1)
            return n, [c * 100 for c in d]
        if isinstance(e, Pow):
            times = smt_power(e.exponent)
            if times is None:
                raise _Outside
            n, d = self.quotient(e.base, depth + 1)
            on, od = _ONE, _ONE
            for _ in range(times):
                on, od = _mul(on, n), _mul(od, d)
            return on, od
        if isinstance(e, BinOp) and e.op in ("+", "-", "*", "/"):
            (a, b), (c, d) = self.quotient(e.left, depth + 1), self.quotient(e.right, depth + 1)
            if e.op == "*":
                return _mul(a, c), _mul(b, d)
            if e.op == "/":
                if not c:
                    raise _Outside  # a divisor that is zero all along the line
                self.divisors.append(c)
                return _mul(a, d), _mul(b, c)
            return _add(_mul(a, d), _mul(c, b), 1 if e.op == "+" else -1), _mul(b, d)
        raise _Outside


def conditions(rels: list[Rel], free: str, point: dict[str, Fraction]) -> tuple[list[tuple[Poly1, str]], list[Poly1]] | None:
    """Sign conditions in ``free`` (the others at ``point``), one per relation, that hold exactly
    where the relations' SMT translations hold, at every point where none of the divisors
    returned (numerators of every divisor met, non-constant, each once) vanishes; None outside
    the fragment or past a bound."""
    line = _Line(free, point)
    out: list[tuple[Poly1, str]] = []
    try:
        for r in rels:
            (a, b), (c, d) = line.quotient(r.lhs), line.quotient(r.rhs)
            n, den = _add(_mul(a, d), _mul(c, b), -1), _mul(b, d)
            out.append((_mul(n, den), r.op))
    except _Outside:
        return None
    divisors: list[Poly1] = []
    for p in line.divisors:
        if len(p) > 1 and p not in divisors:
            divisors.append(p)
    return out, divisors
