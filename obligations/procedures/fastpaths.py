"""Cheap decisions taken before building solver state, each only where it provably gives the
outcome the solver would give.

* ``polynomial_class`` (over ``polynomials.expand``): for an identity claim whose sides are polynomials with
  rational coefficients, the exact expansion of the difference is zero exactly when sympy's
  numerator of ``together`` + ``fraction`` + ``expand`` is zero, and has a variable exactly when
  that numerator is not a number (the denominators are numbers): "identity" or "not an
  identity" without building sympy expressions. A nonzero constant difference goes to sympy,
  which writes the difference shown in the evidence.
* ``linear_derivation``: a relation derived from one relation that is, as polynomials, the
  premise scaled by a factor of the right sign plus a constant of the right sign holds wherever
  the premise holds: the SMT query "premise and not claim" is unsatisfiable. Two linear
  equations that are not proportional are independent: both SMT queries are satisfiable.
* ``outside_smt``: whether translating relations to SMT stops on a node outside the fragment
  (the translation itself, ``smt_term``, run with a builder that builds nothing), so that no z3
  context is made only to be thrown away.

Every function is bounded: sizes and depths are capped, and exact values keep to the limits of
``evaluate``; on anything unexpected they answer "undecided" (``False``/``None``) and the
solver decides as before.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from fractions import Fraction
from typing import Any, Protocol, TypeVar

from faithsieve.obligations.procedures.polynomials import (
    MAX_FASTPATH_NESTING,
    QUOTIENT,
    Poly,
    fractions_of,
    poly_difference,
    small_int,
)

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import BinOp, Call, Expr, Neg, Num, Pow, Rel, Var
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits, evaluate


def polynomial_class(lhs: Expr, rhs: Expr, lim: Limits = DEFAULT_LIMITS) -> str | None:
    """``"zero"`` or ``"nonconstant"`` for ``lhs - rhs`` when both sides expand as polynomials: the
    classes in which sympy's numerator of ``together(lhs - rhs)``, expanded, is ``0`` or has free
    symbols (with numeric denominators only, that numerator is the difference times a number).
    None for a nonzero constant (its exact form is left to sympy), other expressions, or past a bound."""
    difference = poly_difference(lhs, rhs, lim, False)
    if difference is None:
        return None
    d = difference[0]
    if not d:
        return "zero"
    return "nonconstant" if any(m for m in d) else None


def rational_expr(e: Expr, depth: int = 0) -> bool:
    """``e`` is a rational function as written: numbers, variables, ``+ - * /``, ``p%``, and powers
    with a small integer exponent (negative too)."""
    if depth > MAX_FASTPATH_NESTING:
        return False
    if isinstance(e, (Num, Var)):
        return True
    if isinstance(e, Neg):
        return rational_expr(e.operand, depth + 1)
    if isinstance(e, BinOp):
        return e.op in ("+", "-", "*", "/") and rational_expr(e.left, depth + 1) and rational_expr(e.right, depth + 1)
    if isinstance(e, Pow):
        k = e.exponent.operand if isinstance(e.exponent, Neg) else e.exponent
        return small_int(k) is not None and rational_expr(e.base, depth + 1)
    if isinstance(e, Call):
        return e.fn == "percent" and len(e.args) == 1 and rational_expr(e.args[0], depth + 1)
    return False


def numerator_has_root(lhs: Expr, rhs: Expr, lim: Limits = DEFAULT_LIMITS) -> bool:
    """For rational-function sides: an exact rational point where ``lhs = rhs`` holds with every
    divisor nonzero, and one where it fails. Then ``lhs - rhs`` is not identically zero, and any
    numerator ``N`` of it over a denominator made of its divisors (what ``together`` + ``fraction``
    give) vanishes at the first point: ``N`` is a polynomial with a root and not zero, so not a
    number ("not an identity"). The root is sought along one variable at a time by a secant step
    from two points and checked exactly; False when none is found (sympy decides)."""
    if not (rational_expr(lhs) and rational_expr(rhs)):
        return False
    names = sorted(_names(lhs) | _names(rhs))
    if not names or len(names) > 8:
        return False
    base = {n: Fraction(2 * i + 3, 7 + 2 * i) for i, n in enumerate(names)}

    def f(env: dict[str, Fraction]) -> Fraction | None:
        try:
            return evaluate(lhs, env, lim) - evaluate(rhs, env, lim)
        except FaithSieveError:
            return None

    for v in names:
        t0, t1 = base[v], base[v] + 1
        f0, f1 = f(base), f({**base, v: t1})
        if f0 is None or f1 is None or f0 == f1:
            continue
        root = t0 - f0 * (t1 - t0) / (f1 - f0)
        if abs(root.numerator).bit_length() > 256 or root.denominator.bit_length() > 256:
            continue
        if f({**base, v: root}) == 0:
            return True  # f0 != f1: one of the two points fails the equation
    return False


def _degrees(e: Expr) -> tuple[int, int]:
    """Bounds on the degrees of a numerator and a denominator of a ``rational_expr`` expression, read
    off its syntax (a sum over a common denominator, products, quotients, integer powers)."""
    if isinstance(e, Num):
        return 0, 0
    if isinstance(e, Var):
        return 1, 0
    if isinstance(e, Neg):
        return _degrees(e.operand)
    if isinstance(e, Call):
        return _degrees(e.args[0])
    if isinstance(e, Pow):
        neg = isinstance(e.exponent, Neg)
        k = small_int(e.exponent.operand if isinstance(e.exponent, Neg) else e.exponent) or 0
        n, d = _degrees(e.base)
        return (k * d, k * n) if neg else (k * n, k * d)
    assert isinstance(e, BinOp)
    (na, da), (nb, db) = _degrees(e.left), _degrees(e.right)
    if e.op in ("+", "-"):
        return max(na + db, nb + da), da + db
    if e.op == "*":
        return na + nb, da + db
    return na + db, da + nb


MAX_DIFF_ORDER = 40
"""Highest finite difference ``numerator_not_constant`` takes."""


def numerator_not_constant(lhs: Expr, rhs: Expr, lim: Limits = DEFAULT_LIMITS) -> bool:
    """For rational-function sides: ``lhs - rhs`` is not of the form ``c / D`` (a number over a
    polynomial), so the numerator sympy's ``together`` + ``fraction`` leave is not a number.

    If it were ``c / D``, then along any line its reciprocal would be a polynomial of degree at
    most the degree of the reduced denominator, which divides every denominator the syntax
    builds: the finite difference of order (that degree bound + 1) of the reciprocal at
    equally spaced exact points would be zero. A nonzero one disproves the form; the points must
    all be defined and nonzero (a zero is a root, which ``numerator_has_root`` covers)."""
    if not (rational_expr(lhs) and rational_expr(rhs)):
        return False
    names = sorted(_names(lhs) | _names(rhs))
    if not names or len(names) > 8:
        return False
    d = _degrees(lhs)[1] + _degrees(rhs)[1]
    if d + 1 > MAX_DIFF_ORDER:
        return False
    base = {n: Fraction(2 * i + 3, 7 + 2 * i) for i, n in enumerate(names)}
    v = names[0]
    values = []
    for j in range(d + 2):
        try:
            env = {**base, v: base[v] + j}
            f = evaluate(lhs, env, lim) - evaluate(rhs, env, lim)
        except FaithSieveError:
            return False
        if f == 0:
            return False
        values.append(1 / f)
    for _ in range(d + 1):
        values = [b - a for a, b in zip(values, values[1:], strict=False)]
    return values[0] != 0


def _names(e: Expr) -> set[str]:
    from faithsieve.mathtext.ast import variables

    return set(variables(e))


def normal_form(r: Rel, quotients: bool = False) -> tuple[Poly, str] | None:
    """``r`` as ``f R 0`` with R one of ``= > >=`` (sides moved left, ``<`` and ``<=`` flipped)."""
    if r.op in ("=", ">", ">="):  # the difference over one denominator: Fractions made once, at the end
        d = poly_difference(r.lhs, r.rhs, DEFAULT_LIMITS, quotients)
        return None if d is None else (fractions_of(d), r.op)
    if r.op in ("<", "<="):
        d = poly_difference(r.rhs, r.lhs, DEFAULT_LIMITS, quotients)
        return None if d is None else (fractions_of(d), {"<": ">", "<=": ">="}[r.op])
    return None


def multiple_of(f: Poly, g: Poly) -> tuple[Fraction, Fraction] | None:
    """``(k, c)`` with ``g = k·f + c`` when the non-constant parts are proportional (``f`` is not constant)."""
    fv = [m for m in f if m]
    if not fv or any(m and m not in f for m in g):
        return None
    k = g.get(fv[0], Fraction(0)) / f[fv[0]]
    if any(g.get(m, Fraction(0)) != k * f[m] for m in fv):
        return None
    return k, g.get((), Fraction(0)) - k * f.get((), Fraction(0))


def _linear(f: Poly) -> bool:
    return all(len(m) == 0 or (len(m) == 1 and m[0][1] == 1) for m in f)


def linear_derivation(premise: Rel, claim: Rel, integer_vars: bool) -> str | None:
    """Decide "``claim`` follows from ``premise``" the way the SMT query (premise and not claim; then
    premise and claim) would, where a polynomial identity shows it:

    * ``"follows"``: the premise can never hold (a false constant relation), or the claim holds
      everywhere, or the claim is the premise scaled by a factor of the right sign plus a constant
      of the right sign, so "premise and not claim" is unsatisfiable over the reals, hence over
      the integers too (integer points are real points). With integer variables and non-linear
      sides the solver works in non-linear integer arithmetic, where it may give up on a query
      this identity settles: there "follows" is a proof the solver might not find, never a
      different answer (it cannot find a counterexample that does not exist);
    * ``"independent"``: over the reals, a linear premise that holds everywhere or is not
      proportional to a linear claim equation: points satisfy the premise with and without the
      claim (no integer variables);
    * None: anything else (the solver decides).
    """
    p, c = normal_form(premise), normal_form(claim)
    if p is None or c is None:
        return None
    return _decide(p, c, integer_vars)


def quotient_derivation(premise: Rel, claim: Rel, integer_vars: bool) -> str | None:
    """``"follows"`` where ``linear_derivation`` would say so with every quotient by a divisor
    with a variable read as one opaque quantity (``x - 1/x = 3`` then ``x = 1/x + 3``); None
    otherwise, and always with integer variables (the solver's arithmetic is then non-linear).

    Sound whatever the solver makes of a quotient: SMT division is a function of the values of
    dividend and divisor (total: ``a/0`` is some value fixed by ``a``), so two quotients whose
    dividends and divisors expand alike are equal in every model, and a claim that follows for
    every value of the opaque quantities follows for the ones a model gives them."""
    if integer_vars:
        return None
    p, c = normal_form(premise, quotients=True), normal_form(claim, quotients=True)
    if p is None or c is None or not any(v.startswith(QUOTIENT) for f, _ in (p, c) for m in f for v, _k in m):
        return None
    return "follows" if _decide(p, c, False) == "follows" else None


def _decide(p: tuple[Poly, str], c: tuple[Poly, str], integer_vars: bool) -> str | None:
    (f, rp), (g, rc) = p, c
    if not any(f):
        fc = f.get((), Fraction(0))
        if not {"=": fc == 0, ">": fc > 0, ">=": fc >= 0}[rp]:
            return "follows"  # no point satisfies the premise
    if not any(g):
        gc = g.get((), Fraction(0))
        return "follows" if {"=": gc == 0, ">": gc > 0, ">=": gc >= 0}[rc] else None
    m = multiple_of(f, g)
    if m is None:
        linear_eqs = rp == rc == "=" and _linear(f) and _linear(g) and not integer_vars
        return "independent" if linear_eqs and (not f or any(f)) else None
    k, c0 = m
    if rc == "=":
        return "follows" if rp == "=" and c0 == 0 else None
    if rp == "=":
        ok = c0 > 0 if rc == ">" else c0 >= 0
    elif rc == ">=":
        ok = k >= 0 and c0 >= 0
    else:  # claim strict
        ok = k >= 0 and (c0 > 0 or (k > 0 and c0 >= 0 and rp == ">"))
    return "follows" if ok else None


class OutsideSMT(Exception):
    """The SMT translation stops on a node, a power, a function or a relation outside its fragment."""


SMT_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
}
"""The operations the SMT translation states (another one stops it with ``KeyError``, not ``OutsideSMT``:
``outside_smt`` leaves it to the translation)."""
SMT_RELATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "=": operator.eq, "!=": operator.ne, "<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge,
}
"""The relations the SMT translation states."""
MAX_SMT_POWER = 12
"""Largest exponent the SMT translation writes out as a product."""

T = TypeVar("T")
R = TypeVar("R", covariant=True)


class SMTBuilder(Protocol[T, R]):
    """What the SMT translation (``smt_term``) builds its terms (``T``) and relations (``R``) with: z3
    terms in one context (``smt._Syms``), or nothing at all (``_DRY``: the translation run for where it
    stops)."""

    def number(self, value: Fraction) -> T: ...

    def variable(self, name: str) -> T: ...

    def neg(self, a: T) -> T: ...

    def arith(self, op: str, a: T, b: T) -> T:
        """``a op b``, ``op`` a key of ``SMT_OPERATORS``."""

    def power(self, base: T, times: int) -> T:
        """``base`` multiplied ``times`` times (0 to ``MAX_SMT_POWER``)."""

    def percent(self, a: T) -> T: ...

    def absolute(self, a: T) -> T: ...

    def relation(self, op: str, a: T, b: T) -> R:
        """``a op b``, ``op`` a key of ``SMT_RELATIONS``."""


def smt_term(e: Expr, build: SMTBuilder[T, Any]) -> T:
    """The SMT translation of ``e``, built with ``build``; the one walk that says what the fragment is.
    Numbers, variables, ``-``, ``+ - * /``, powers with an exponent from 0 to ``MAX_SMT_POWER``
    (``smt_power``), ``p%`` and ``abs``; anything else raises ``OutsideSMT``, except an operation outside
    ``SMT_OPERATORS`` (``KeyError``) and a function without arguments (``IndexError``). The builder may
    stop too: z3 does not take a number past the printing bound (``smt._Syms.number``), which
    ``outside_smt`` and ``translates`` do not look at."""
    if isinstance(e, Num):
        return build.number(e.value)
    if isinstance(e, Var):
        return build.variable(e.name)
    if isinstance(e, Neg):
        return build.neg(smt_term(e.operand, build))
    if isinstance(e, BinOp):
        a, b = smt_term(e.left, build), smt_term(e.right, build)
        if e.op not in SMT_OPERATORS:
            raise KeyError(e.op)
        return build.arith(e.op, a, b)
    if isinstance(e, Pow):
        times = smt_power(e.exponent)
        if times is None:
            raise OutsideSMT
        return build.power(smt_term(e.base, build), times)
    if isinstance(e, Call) and e.fn == "percent":
        return build.percent(smt_term(e.args[0], build))
    if isinstance(e, Call) and e.fn == "abs":
        return build.absolute(smt_term(e.args[0], build))
    raise OutsideSMT


def smt_relation(r: Rel, build: SMTBuilder[T, R]) -> R:
    """The SMT translation of ``r`` (its sides, then its relation), built with ``build``."""
    a, b = smt_term(r.lhs, build), smt_term(r.rhs, build)
    if r.op not in SMT_RELATIONS:
        raise OutsideSMT
    return build.relation(r.op, a, b)


class _Dry:
    """Builds nothing: the SMT translation run only for where it stops."""

    def number(self, value: Fraction) -> None:
        return None

    def variable(self, name: str) -> None:
        return None

    def neg(self, a: None) -> None:
        return None

    def arith(self, op: str, a: None, b: None) -> None:
        return None

    def power(self, base: None, times: int) -> None:
        return None

    def percent(self, a: None) -> None:
        return None

    def absolute(self, a: None) -> None:
        return None

    def relation(self, op: str, a: None, b: None) -> None:
        return None


_DRY = _Dry()


def _stop(r: Rel) -> bool | None:
    """Where translating the relation ``r`` stops. None: it translates; True: it stops outside the
    fragment; False: it stops some other way."""
    try:
        smt_relation(r, _DRY)
    except OutsideSMT:
        return True
    except Exception:  # noqa: BLE001 (whatever the translation would meet, it meets itself)
        return False
    return None


def outside_smt(rels: list[Rel]) -> bool:
    """Translating ``rels`` in order (``smt_relation``, as the z3 checker does) would stop on a node
    outside the SMT fragment before anything else could go wrong. False when translation would succeed
    or end some other way (that is left to the translation itself)."""
    for r in rels:
        verdict = _stop(r)
        if verdict is not None:
            return verdict
    return False


def smt_power(exponent: Expr) -> int | None:
    """How many times the SMT translation multiplies a base for this exponent: an integer from 0
    to ``MAX_SMT_POWER``; None where the translation stops (outside the fragment)."""
    try:
        k = evaluate(exponent)
    except FaithSieveError:
        return None
    return k.numerator if k.denominator == 1 and 0 <= k.numerator <= MAX_SMT_POWER else None


def translates(r: Rel) -> bool:
    """Every node of ``r`` is in the SMT fragment and its relation is one SMT states: translating
    it succeeds, and it means there what exact evaluation computes where every divisor is nonzero."""
    return _stop(r) is None
