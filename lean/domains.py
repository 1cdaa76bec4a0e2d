"""Where Lean's total functions would answer for a formula that has no value (pure, bounded).

Lean's arithmetic is total: ``x / 0 = 0``, ``x % 0 = x``, ``Real.sqrt x = 0`` for ``x < 0``,
``Real.log 0 = 0`` and ``Real.log x = Real.log |x|``, ``Real.tan x = 0`` where ``cos x = 0``,
``Real.logb 1 x = 0``. Mathlib proves ``Real.sqrt (-4) = 0`` by ``norm_num``: a claim with no real
value would be *verified*. So the renderer (``faithsieve.lean.terms``) asks two things here:

- ``closed_sign(e, env)``: the sign of a closed argument (a denominator, a radicand, a logarithm's
  argument, the cosine under a tangent), decided by exact rational evaluation
  (``faithsieve.mathtext.evaluate``) and otherwise by interval arithmetic
  (``faithsieve.lean.intervals``: an enclosure that excludes zero proves the sign), once the cost
  model's bounded double evaluation (``faithsieve.mathtext.cost.approx``) has shown the value small
  enough to compute. Doubles alone are not trusted with a sign: ``√2·10¹⁷ − 141421356237309505`` is
  ``−0.1198…`` and doubles say ``+16``. A value it cannot place (non-real, zero or not separated from
  zero, too large, a function the enclosure does not cover) raises ``Undecided``: the renderer
  refuses rather than guesses.
- ``satisfiable(premises, guards, integers)``: a point where every premise holds exactly and every
  domain guard holds (with ``MARGIN``), so that neither the premises nor the guards added as
  hypotheses can make a statement vacuously true (``1 / (x - x)`` adds ``x - x ≠ 0``, which no ``x``
  satisfies; ``(n : ℤ) (h1 : 2 * n = 7) : n = 5`` has premises no integer satisfies). Polynomial
  conditions in one real letter are decided exactly by Sturm sign tables (``x ^ 2 = 2`` has only
  irrational points); an inequality with irrational constants holds at a point when interval arithmetic
  proves its sign there; one polynomial equation over real constants (``x + x + 50° = 180°``) is met
  where its difference is proved to change sign along a line (intermediate value theorem). The
  points tried: a fixed grid (``MAX_GRID`` points) and, with premises, the exact witness search of
  ``faithsieve.obligations.procedures.witness`` (its own evaluation budget). No point found: ``False``, and the
  renderer refuses.
"""

from __future__ import annotations

from fractions import Fraction

from faithsieve.lean.intervals import NoSign, interval_sign
from faithsieve.obligations.checkers.exact import univariate
from faithsieve.obligations.procedures.fastpaths import translates
from faithsieve.obligations.procedures.realroots import OPS
from faithsieve.obligations.procedures.realroots import satisfiable as real_satisfiable
from faithsieve.obligations.procedures.witness import witness_points

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import (
    BinOp,
    Call,
    Expr,
    Neg,
    Num,
    Pow,
    Rel,
    Var,
    substitute,
    variables,
)
from faithsieve.mathtext.cost import approx
from faithsieve.mathtext.evaluate import evaluate

__all__ = ["MARGIN", "MAX_GRID", "ZERO", "Undecided", "closed_sign", "guard", "satisfiable"]

MARGIN = 1e-9
"""A guard holds at a grid point only with this margin; a double value whose imaginary part is larger than
this (relative to its size) has no real value."""
MAX_GRID = 12
"""Grid points tried for a set of guards (each variable takes a value from ``_VALUES``)."""

_VALUES = tuple(Fraction(v) for v in ("2", "3/7", "-1", "5/2", "7", "-5/3", "1/4", "11", "-9", "100", "1/2", "0"))
_INTEGERS = tuple(Fraction(v) for v in (2, 3, -1, 5, 7, -4, 1, 11, -9, 100, 13, 0))
_STRIDE = 5
ZERO = Num(Fraction(0), "0", 0)
_TRUE = Rel(ZERO, "=", ZERO)


class Undecided(Exception):
    """The sign of a closed expression could not be decided (the message says why)."""


def _num(v: Fraction) -> Num:
    return Num(v, str(v), 0)


def closed_sign(e: Expr, env: dict[str, Fraction] | None = None) -> int:
    """-1, 0 or 1: the sign of the closed real expression ``e`` (variables from ``env``)."""
    env = env or {}
    try:
        v = evaluate(e, env)
        return (v > 0) - (v < 0)
    except FaithSieveError:
        pass
    if variables(e) - set(env):
        raise Undecided("it has free variables")
    z = approx(substitute(e, {k: _num(x) for k, x in env.items()}))  # the cost bound, not the sign
    if z is None:
        raise Undecided("it cannot be evaluated within the cost limits")
    if abs(z.imag) > MARGIN * max(1.0, abs(z)):
        raise Undecided("it has no real value")
    try:
        return interval_sign(e, env)
    except NoSign as exc:
        raise Undecided(str(exc)) from None


def _holds(r: Rel, env: dict[str, Fraction], exact: bool) -> bool:
    """``r`` at ``env``: exactly (premises), or with ``MARGIN`` on the double value (guards)."""
    if exact:
        try:
            d = evaluate(r.lhs, env) - evaluate(r.rhs, env)
        except FaithSieveError:
            if r.op == "=":  # an irrational value: only exact arithmetic could show it is 0
                return False
            return _holds(r, env, False)  # an inequality: a sign proved by interval arithmetic is as good
        return {"=": d == 0, "!=": d != 0, "<": d < 0, ">": d > 0, "<=": d <= 0, ">=": d >= 0}.get(r.op, False)
    try:
        s = closed_sign(r.lhs if r.rhs == ZERO else BinOp("-", r.lhs, r.rhs), env)
    except Undecided:
        return False
    return {"!=": s != 0, "<": s < 0, ">": s > 0, "<=": s <= 0, ">=": s >= 0, "=": s == 0}.get(r.op, False)


def guard(e: Expr, op: str) -> Rel:
    """The domain condition ``e op 0`` (``op``: ``!=``, ``>=`` or ``>``)."""
    return Rel(e, op, ZERO)


def _grid(names: list[str], integers: frozenset[str]) -> list[dict[str, Fraction]]:
    points = []
    for i in range(MAX_GRID):
        points.append({n: (_INTEGERS if n in integers else _VALUES)[(i + _STRIDE * j) % len(_VALUES)]
                       for j, n in enumerate(names)})
    return points


def satisfiable(premises: list[Rel], guards: list[Rel], integers: frozenset[str] = frozenset()) -> bool:
    """True when a point is found where every premise holds (exactly) and every guard holds, or, for
    polynomial conditions in one real letter, when Sturm sign tables show that one exists. Premises
    alone are checked too: ``(n : ℤ) (h1 : 2 * n = 7) : n = 5`` is proved vacuously by ``omega``."""
    if not guards and not premises:
        return True
    if _one_real_letter(premises, guards, integers):
        return True
    names = sorted(set().union(*(variables(r.lhs) | variables(r.rhs) for r in [*premises, *guards])))
    candidates: list[dict[str, Fraction]] = [] if premises else _grid(names, integers)
    if premises:
        exact = [g for g in guards if translates(g)]
        for rels in ([*premises, *exact], list(premises)):
            fails, holds = witness_points(rels, _TRUE, tuple(sorted(integers)))
            candidates += [p.values for p in (fails, holds) if p is not None and not p.div0]
        candidates += _grid(names, integers)
    for env in candidates:
        if set(names) - set(env):
            continue
        if all(_holds(p, env, True) for p in premises) and all(_holds(g, env, False) for g in guards):
            return True
    return not guards and len(premises) == 1 and _sign_change(premises[0], integers)


_LINE = tuple(Fraction(v) for v in (-10**6, -1000, -100, -10, -5, -3, -2, -1, 0, 1, 2, 3, 5, 6, 7, 10, 100, 1000,
                                     10**6))
"""Values one letter takes, in order, while the others stay put (``_sign_change``)."""


_EVERYWHERE = ("sin", "cos", "exp", "abs", "deg", "percent")
"""Functions defined and continuous on the whole real line."""


def _continuous(e: Expr) -> bool:
    """Every letter of ``e`` sits under ``+ - *``, division by a closed expression, negation, natural powers
    and functions continuous everywhere (``_EVERYWHERE``) only: ``e`` is continuous in its letters wherever
    its closed parts have values (a point where one has none gets no sign, so it proves nothing)."""
    if not variables(e):
        return True
    if isinstance(e, Var):
        return True
    if isinstance(e, Neg):
        return _continuous(e.operand)
    if isinstance(e, BinOp) and e.op in "+-*":
        return _continuous(e.left) and _continuous(e.right)
    if isinstance(e, BinOp) and e.op == "/":
        return not variables(e.right) and _continuous(e.left)
    if isinstance(e, Call) and e.fn in _EVERYWHERE and len(e.args) == 1:
        return _continuous(e.args[0])
    if isinstance(e, Pow) and isinstance(e.exponent, Num):
        v = e.exponent.value
        return v.denominator == 1 and v >= 0 and _continuous(e.base)
    return False


def _sign_change(eq: Rel, integers: frozenset[str]) -> bool:
    """One equation in real letters whose sides are polynomials over real constants (``x + x + 50° = 180°``):
    ``lhs - rhs`` takes both signs (each proved by interval arithmetic) at two points of a line along one
    letter, so it vanishes between them (intermediate value theorem): a point exists, though not a rational
    one the search could name."""
    names = sorted(variables(eq.lhs) | variables(eq.rhs))
    diff = BinOp("-", eq.lhs, eq.rhs)
    if eq.op != "=" or not names or set(names) & integers or not _continuous(diff):
        return False
    for base in _grid(names, frozenset())[:3]:
        for name in names:
            signs = set()
            for t in _LINE:
                try:
                    signs.add(closed_sign(diff, {**base, name: t}))
                except Undecided:
                    continue
                if 0 in signs or {-1, 1} <= signs:
                    return True
    return False


def _one_real_letter(premises: list[Rel], guards: list[Rel], integers: frozenset[str]) -> bool:
    """Premises and guards are polynomial conditions in one real letter that some real value meets
    (exactly: ``faithsieve.obligations.procedures.realroots``); False when they are not, or past a bound."""
    rels = [*premises, *guards]
    names = set().union(*(variables(r.lhs) | variables(r.rhs) for r in rels))
    if len(names) != 1 or names & integers or any(r.op not in OPS for r in rels):
        return False
    (var,) = names
    conditions = []
    for r in rels:
        poly = univariate(r, var)
        if poly is None:
            return False
        conditions.append((poly, r.op))
    return real_satisfiable(conditions) is True
