"""Exact witness points for a derivation "premises ⇒ claim", found without a solver.

The SMT check of a derivation asks two questions: can the premises hold while the claim fails
(no: the claim follows), and can they hold together with it (no: a contradiction)? When both
answers are yes the outcome is "does not follow from the previous relation alone", and each
yes has a certificate: a point, in exact rationals, where every premise holds and the claim
fails, and one where every premise and the claim hold. ``separating_points`` looks for the two
points among a fixed, small set of candidates; when it finds both, the solver would answer
"satisfiable" to both queries (each point is a model of the query as translated to SMT: every
node is in the translated fragment and every division is by a nonzero value, where real
division and SMT division agree), so no solver state is built.

Candidates, in a fixed order (the search is deterministic and depends on nothing but the
relations): base points that give each variable a value from a fixed list (integers for the
integer variables); the same points with one variable moved to make an equation hold (a secant
step along that variable, exact when the equation is linear in it); and, for a premise equation
and a claim equation, a secant step along a second variable on the first solve. Every
candidate is checked exactly by evaluation; a candidate never counts unless every relation
involved is defined at it and the integer variables are integers there.

Bounded: at most ``MAX_NAMES`` variables, ``MAX_RELATIONS`` relations, ``MAX_EVALUATIONS``
relation evaluations per obligation, and ``MAX_ROOT_BITS`` bits in a solved value; each
evaluation keeps to the limits of ``evaluate``. When the points are not found (an irrational
root, an empty premise, a bound reached) the answer is None and the solver decides as before.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from fractions import Fraction

from faithsieve.errors import FaithSieveError
from faithsieve.mathtext.ast import variables
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits, evaluate
from faithsieve.obligations.fastpaths import translates
from faithsieve.obligations.models import Rel

MAX_NAMES = 6
"""Most variables a derivation may have for the search (more go to the solver)."""
MAX_RELATIONS = 4
"""Most relations (premises and claim together)."""
MAX_EVALUATIONS = 160
"""Most relation evaluations one search may spend before giving up."""
MAX_ROOT_BITS = 128
"""Largest numerator or denominator, in bits, of a value a secant step may produce."""

_VALUES = tuple(Fraction(v) for v in ("3/7", "2", "-1", "5/2", "7", "-5/3", "1/4", "11", "0", "-9", "100", "-1/2"))
_INTEGERS = tuple(Fraction(v) for v in (2, -1, 7, 3, 11, 0, -9, 100, 1, -4, 5, 13))
_SOLVED_BASES = 4
"""Base points the later stages start from."""
_STEP = Fraction(1, 64)
"""How far either side of an inequality's boundary a candidate lies."""
_STRIDE = 5
"""Offset between the value lists of neighbouring variables (so two variables differ at a base point)."""

Env = dict[str, Fraction]
_OPS = {"=": lambda d: d == 0, "!=": lambda d: d != 0, "<": lambda d: d < 0, ">": lambda d: d > 0,
        "<=": lambda d: d <= 0, ">=": lambda d: d >= 0}


class _Spent(Exception):
    """The evaluation budget of one search is used up."""


class _Search:
    def __init__(self, premises: list[Rel], claim: Rel, integers: frozenset[str], lim: Limits) -> None:
        self.premises, self.claim, self.integers, self.lim = premises, claim, integers, lim
        self.left = MAX_EVALUATIONS

    def residual(self, r: Rel, env: Env) -> Fraction | None:
        """``lhs - rhs`` at ``env``; None where either side is undefined."""
        if self.left <= 0:
            raise _Spent
        self.left -= 1
        try:
            return evaluate(r.lhs, env, self.lim) - evaluate(r.rhs, env, self.lim)
        except FaithSieveError:
            return None

    def holds(self, r: Rel, env: Env) -> bool | None:
        d = self.residual(r, env)
        return None if d is None else _OPS[r.op](d)

    def solve(self, r: Rel, env: Env, v: str, exact: bool = True) -> Env | None:
        """``env`` with ``v`` moved by one secant step towards a zero of ``r``'s residual (exact
        when the residual is linear in ``v``; the caller checks the point anyway)."""
        t0 = env[v]
        t1 = t0 + 1
        f0, f1 = self.residual(r, env), self.residual(r, {**env, v: t1})
        if f0 is None or f1 is None or f0 == f1:
            return None
        root = t0 - f0 * (t1 - t0) / (f1 - f0)
        if max(abs(root.numerator).bit_length(), root.denominator.bit_length()) > MAX_ROOT_BITS:
            return None
        if exact and v in self.integers and root.denominator != 1:
            return None
        return {**env, v: root}

    def nested(self, first: Rel, v: str, second: Rel, w: str, env: Env) -> Env | None:
        """Solve ``first`` for ``v``, then a secant step along ``w`` on the residual of ``second``
        at that solution (exact when it is linear in ``w``)."""
        def g(t: Fraction) -> tuple[Fraction | None, Env | None]:
            point = self.solve(first, {**env, w: t}, v)
            return (None, None) if point is None else (self.residual(second, point), point)

        t0 = env[w]
        t1 = t0 + 1
        (g0, _), (g1, _) = g(t0), g(t1)
        if g0 is None or g1 is None or g0 == g1:
            return None
        root = t0 - g0 * (t1 - t0) / (g1 - g0)
        if max(abs(root.numerator).bit_length(), root.denominator.bit_length()) > MAX_ROOT_BITS:
            return None
        if w in self.integers and root.denominator != 1:
            return None
        return g(root)[1]


def _bases(names: list[str], integers: frozenset[str]) -> Iterator[Env]:
    for j in range(len(_VALUES)):
        yield {n: (_INTEGERS if n in integers else _VALUES)[(j + _STRIDE * i) % len(_VALUES)]
               for i, n in enumerate(names)}


def _shifted(s: _Search, r: Rel, env: Env, v: str) -> Iterator[Env | None]:
    """Points just either side of where ``r``'s two sides meet along ``v`` (an inequality's
    boundary): a step of ``_STEP``, or the integers either side for an integer variable."""
    point = s.solve(r, env, v, exact=False)
    if point is None:
        return
    t = point[v]
    if v in s.integers:
        yield {**env, v: Fraction(math.floor(t))}
        yield {**env, v: Fraction(math.floor(t) + 1)}
    else:
        yield {**env, v: t - _STEP}
        yield {**env, v: t + _STEP}


def _candidates(s: _Search, names: list[str], stage: int) -> Iterator[Env | None]:
    """Stage 0: the base points; stage 1: one variable moved onto an equation or either side of
    an inequality's boundary; stage 2: a premise equation and a claim equation solved along two
    variables (points where the claim holds)."""
    equations = [p for p in s.premises if p.op == "="]
    claim_eq = [s.claim] if s.claim.op == "=" else []
    bases = list(_bases(names, s.integers))
    if stage == 0:
        yield from bases
    elif stage == 1:
        for base in bases[:_SOLVED_BASES]:
            for r in (*s.premises, s.claim):
                for v in names:
                    if r.op == "=":
                        yield s.solve(r, base, v)
                    elif r.op != "!=":
                        yield from _shifted(s, r, base, v)
    else:
        for base in bases[:_SOLVED_BASES]:
            for p in equations:
                for c in claim_eq:
                    for v in names:
                        for w in names:
                            if w != v:
                                yield s.nested(p, v, c, w, base)


def separating_points(premises: list[Rel], claim: Rel, integer_vars: tuple[str, ...] = (),
                      lim: Limits = DEFAULT_LIMITS) -> tuple[Env, Env] | None:
    """A point where every premise holds and the claim fails, and one where every premise and
    the claim hold (integer variables at integers), both checked exactly; None when the bounded
    search does not find both (the solver decides)."""
    rels = [*premises, claim]
    if not premises or len(rels) > MAX_RELATIONS or not all(translates(r) for r in rels):
        return None
    names = sorted(set().union(*(variables(r.lhs) | variables(r.rhs) for r in rels)))
    if not names or len(names) > MAX_NAMES:
        return None
    s = _Search(list(premises), claim, frozenset(integer_vars), lim)
    fails: Env | None = None
    holds: Env | None = None
    try:
        for stage in range(3):
            if stage == 2 and fails is None:
                return None  # the last stage only finds points where the claim holds
            for env in _candidates(s, names, stage):
                if env is None or any(v in s.integers and x.denominator != 1 for v, x in env.items()):
                    continue
                if not all(s.holds(p, env) for p in premises):
                    continue
                verdict = s.holds(claim, env)
                if verdict is False and fails is None:
                    fails = env
                elif verdict is True and holds is None:
                    holds = env
                if fails is not None and holds is not None:
                    return fails, holds
    except _Spent:
        return None
    return None
