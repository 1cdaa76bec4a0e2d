"""A claim that is its premise equation divided through by a quantity the premise keeps nonzero.

"9ck = 8" then "c = 8/(9k)"; "3xy = x + y" then "y = x/(3x - 1)". The SMT query "premise and not
claim" is unsatisfiable over the reals when, for a premise equation ``f = 0`` with no division:

1. every divisor the claim divides by is nonzero wherever ``f = 0``: its numerator (as a
   polynomial) is ``a·v + r`` for a variable ``v``, a nonzero number ``a`` and an ``r`` without
   ``v``, and ``f`` with ``v = -r/a`` substituted is a nonzero number — so no point where ``f``
   vanishes makes the divisor vanish; and
2. the claim ``lhs = rhs``, read as one quotient ``N/D`` of ``lhs - rhs`` built node by node (a
   product of divisor numerators as ``D``), has ``N = k·f`` for a nonzero number ``k``.

At a real point where ``f = 0``, every division in the claim is then an exact division (SMT
division differs from it only by zero), ``D ≠ 0`` and ``N = 0``: the claim holds. So the query
has no real point, and z3 answers "unsat", the outcome "follows from the previous relation"
(the standard ``fastpaths.quotient_derivation`` holds its "follows" to). Only without integer
variables (the solver's arithmetic is then non-linear over the integers). Anything else is
undecided (None) and the solver decides.
"""

from __future__ import annotations

from fractions import Fraction

from faithsieve.obligations.procedures.fastpaths import (
    multiple_of,
    normal_form,
    smt_power,
    translates,
)
from faithsieve.obligations.procedures.polynomials import (
    MAX_FASTPATH_NESTING,
    Poly,
    pmul,
    psub,
)

from faithsieve.mathtext.ast import BinOp, Call, Expr, Neg, Num, Pow, Rel, Var

MAX_SUBSTITUTED_DEGREE = 6
"""Highest power of the solved variable in the premise that the substitution expands."""

_ONE: Poly = {(): Fraction(1)}


class _Outside(Exception):
    """A node outside what is read here, or a bound reached."""


def _mul(a: Poly, b: Poly) -> Poly:
    out = pmul(a, b)
    if out is None:
        raise _Outside
    return out


def _quotient(e: Expr, divisors: list[Poly], depth: int = 0) -> tuple[Poly, Poly]:
    """``e`` as ``N / D``, exactly as SMT computes it wherever every divisor met (collected in
    ``divisors``, as numerators) is nonzero."""
    if depth > MAX_FASTPATH_NESTING:
        raise _Outside
    if isinstance(e, Num):
        return ({(): e.value} if e.value else {}), _ONE
    if isinstance(e, Var):
        return {((e.name, 1),): Fraction(1)}, _ONE
    if isinstance(e, Neg):
        n, d = _quotient(e.operand, divisors, depth + 1)
        return {m: -c for m, c in n.items()}, d
    if isinstance(e, Call) and e.fn == "percent" and len(e.args) == 1:
        n, d = _quotient(e.args[0], divisors, depth + 1)
        return n, {m: c * 100 for m, c in d.items()}
    if isinstance(e, Pow):
        times = smt_power(e.exponent)
        if times is None:
            raise _Outside
        n, d = _quotient(e.base, divisors, depth + 1)
        on, od = _ONE, _ONE
        for _ in range(times):
            on, od = _mul(on, n), _mul(od, d)
        return on, od
    if isinstance(e, BinOp) and e.op in ("+", "-", "*", "/"):
        (a, b), (c, d) = _quotient(e.left, divisors, depth + 1), _quotient(e.right, divisors, depth + 1)
        if e.op == "*":
            return _mul(a, c), _mul(b, d)
        if e.op == "/":
            if not c:
                raise _Outside
            divisors.append(c)
            return _mul(a, d), _mul(b, c)
        right = _mul(c, b) if e.op == "-" else {m: -x for m, x in _mul(c, b).items()}
        return psub(_mul(a, d), right), _mul(b, d)
    raise _Outside


def _nonzero_where_zero(d: Poly, f: Poly) -> bool:
    """``d`` has no zero at which ``f`` vanishes, shown by solving ``d = 0`` for a variable it has
    linearly with a number as coefficient and substituting into ``f``: a nonzero number remains."""
    if all(not m for m in d):
        return bool(d)  # a nonzero number (zero divisors were refused)
    for mono in sorted(d):
        if len(mono) != 1 or mono[0][1] != 1:
            continue
        v, a = mono[0][0], d[mono]
        if any(x == v for m in d if m != mono for x, _k in m):
            continue  # v also occurs elsewhere in d
        value: Poly = {m: -c / a for m, c in d.items() if m != mono}  # v = -r/a
        result: Poly = {}
        for m, c in f.items():
            term: Poly = {tuple((x, k) for x, k in m if x != v): c}
            k = next((k for x, k in m if x == v), 0)
            if k > MAX_SUBSTITUTED_DEGREE:
                return False
            for _ in range(k):
                term = _mul(term, value)
            result = psub(result, {mm: -cc for mm, cc in term.items()})
        if result and all(not m for m in result):
            return True
    return False


def cleared_derivation(premise: Rel, claim: Rel, integer_vars: bool) -> bool:
    """True where the module docstring shows "follows"; False: undecided."""
    if integer_vars or premise.op != "=" or claim.op != "=" or not (translates(premise) and translates(claim)):
        return False
    normal = normal_form(premise)
    if normal is None:
        return False
    f = normal[0]
    if not any(m for m in f):
        return False
    divisors: list[Poly] = []
    try:
        (a, b), (c, d) = _quotient(claim.lhs, divisors), _quotient(claim.rhs, divisors)
        n = psub(_mul(a, d), _mul(c, b))
        if not divisors:
            return False  # no division: ``linear_derivation``'s case
        shown = all(_nonzero_where_zero(x, f) for x in divisors)
    except _Outside:
        return False
    multiple = multiple_of(f, n)
    return shown and multiple is not None and multiple[0] != 0 and multiple[1] == 0
