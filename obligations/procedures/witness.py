"""Exact witness points for a derivation "premises ⇒ claim", found without a solver.

The SMT check of a derivation asks two questions: can the premises hold while the claim fails
(no: the claim follows), and can they hold together with it (no: a contradiction)? When both
answers are yes the outcome is "does not follow from the previous relation alone", and each
yes has a certificate: a point, in exact rationals, where every premise holds and the claim
fails, and one where every premise and the claim hold. ``separating_points`` looks for the two
points among a fixed, small set of candidates; when it finds both, the solver would answer
"satisfiable" to both queries, so no solver state is built. Each point is a model of the query
as translated to SMT: every node is in the translated fragment and is evaluated as the
translation means it (``_compile``), and where a divisor is zero the point also gives the value
of that division. SMT division is total: ``a / 0`` is an unspecified value that depends on the
dividend alone, so a point fixes one value per dividend (``Point.div0``) and every division by
zero of that dividend reads it ("x/(x + 6) = 1/2" holds at x = -6 when -6/0 is 1/2, which is
how the solver shows that "2x = x + 6" does not follow).

Candidates, in a fixed order (the search is deterministic and depends on nothing but the
relations): base points that give each variable a value from a fixed list (integers for the
integer variables); the same points with one variable moved to make an equation hold (a secant
step along that variable, exact when the equation is linear in it); for a premise equation
and a claim equation, a secant step along a second variable on the first solve; and last, with
a budget of its own, the rational roots of each equation of degree two as written along one
variable, read at three points (``(a - 1)^2 + (b - 1)^2 = 5`` at ``a = 2``). Every candidate is checked
exactly by evaluation; a candidate never counts unless every relation involved is defined at it
and the integer variables are integers there. The last stage runs only where the others ended
without both points, after them: whatever they found, they still find.

Bounded: at most ``MAX_NAMES`` variables, ``MAX_RELATIONS`` relations, ``MAX_EVALUATIONS``
relation evaluations per obligation (and ``MAX_QUADRATIC_EVALUATIONS`` more for the last stage), ``MAX_HOLES`` dividends divided by zero per point,
``MAX_ROOT_BITS`` bits in a solved value, ``MAX_FASTPATH_NESTING`` levels of nesting, and the bit limit of
``evaluate`` on every intermediate value. When the points are not found (an irrational
root, an empty premise, a bound reached) the answer is None and the solver decides as before.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction

from faithsieve.obligations.procedures.fastpaths import translates
from faithsieve.obligations.procedures.polynomials import MAX_FASTPATH_NESTING
from faithsieve.obligations.procedures.quadratics import quadratic_in, rational_roots

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
    variables,
    walk,
)
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits, evaluate

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
Holes = dict["Value", Fraction]
"""Values of division by zero, by dividend: SMT division is total, ``a / 0`` an unspecified value
that depends on ``a`` alone (the same for every division by zero of the same dividend)."""

_OPS = {"=": lambda d: d == 0, "!=": lambda d: d != 0, "<": lambda d: d < 0, ">": lambda d: d > 0,
        "<=": lambda d: d <= 0, ">=": lambda d: d >= 0}
_HOLE_VALUES = tuple(Fraction(v) for v in ("0", "1", "-1", "2", "1/2", "-7", "100"))
"""Values tried for a division by zero that an inequality, or the claim, reads."""
MAX_HOLES = 2
"""Most dividends whose division by zero one point may give a value."""
MAX_DIVISORS = 4
"""Most divisors a search makes vanish (one at a time)."""


class _Spent(Exception):
    """The evaluation budget of one search is used up."""


class _Undefined(Exception):
    """A value past the size limits."""


class _Missing(Exception):
    """A division by zero of a dividend that has no value yet."""

    def __init__(self, dividend: Fraction) -> None:
        super().__init__()
        self.dividend = dividend


def _sized(x: Value, lim: Limits) -> Value:
    if max(x.numerator.bit_length(), x.denominator.bit_length()) > lim.max_bits:
        raise _Undefined
    return x


Value = int | Fraction
"""An exact rational: an ``int`` where the denominator is 1 (cheaper arithmetic), else a ``Fraction``."""
Values = dict[str, Value]
"""A point as ``_compile``'s functions read it: ``int`` where a value is an integer."""
Compiled = Callable[[Values, Holes], Value]


def _exact(a: Value, b: Value) -> Value:
    """``a / b`` exactly (``b`` nonzero): an ``int`` where two ``int`` divide evenly, else a ``Fraction``
    (``/`` on two ``int`` would give a float)."""
    if isinstance(a, Fraction):
        return a / b
    if isinstance(b, Fraction):
        return a / b
    q, r = divmod(a, b)
    return q if r == 0 else Fraction(a, b)


def _compile(e: Expr, lim: Limits, depth: int = 0) -> Compiled:
    """``e`` as its SMT translation means it (``fastpaths.smt_term``), as a function of the point and the
    values of division by zero: the same nodes, integer powers as repeated products, a division by
    zero the value ``holes`` gives its dividend (``_Missing`` where it has none), ``_Undefined``
    past the size limits or ``MAX_FASTPATH_NESTING``. The tree is read once per search, not at every point;
    an exponent is a constant, evaluated here once (far below the step count at which an
    evaluation looks at the clock, so no different from evaluating it at every point).

    Values are exact rationals, held as ``int`` where the denominator is 1 (numbers written as
    integers, and every sum, difference, product and even quotient of them) and as ``Fraction``
    otherwise; Python's arithmetic between the two is exact, and a quotient is taken by
    ``_exact``. An ``int`` and the equal ``Fraction`` compare and hash alike and have the same
    numerator and denominator, so the size checks, the lookups of ``holes`` and every comparison
    read the same rational number as before: the same value, or the same exception."""
    if depth > MAX_FASTPATH_NESTING:
        def deeper(env: Values, holes: Holes) -> Fraction:
            raise _Undefined
        return deeper
    if isinstance(e, Num):
        v: Value = e.value.numerator if e.value.denominator == 1 else e.value
        return lambda env, holes: v
    if isinstance(e, Var):
        name = e.name
        return lambda env, holes: env[name]
    if isinstance(e, Neg):
        inner = _compile(e.operand, lim, depth + 1)
        return lambda env, holes: -inner(env, holes)
    if isinstance(e, Call):  # percent or abs (``translates`` let nothing else through)
        arg = _compile(e.args[0], lim, depth + 1)
        if e.fn == "percent":
            return lambda env, holes: _exact(arg(env, holes), 100)

        def absolute(env: Values, holes: Holes) -> Value:
            x = arg(env, holes)
            return -x if x < 0 else x
        return absolute
    if isinstance(e, Pow):
        return _compile_power(e, lim, depth)
    assert isinstance(e, BinOp)
    return _compile_binop(e, lim, depth)


def _compile_binop(e: BinOp, lim: Limits, depth: int) -> Compiled:
    """``+ - *`` within the size limits; a quotient, or the value ``holes`` gives division by zero."""
    left, right, bits = _compile(e.left, lim, depth + 1), _compile(e.right, lim, depth + 1), lim.max_bits

    def sized(x: Value) -> Value:
        if type(x) is int:
            if x.bit_length() > bits:
                raise _Undefined
        elif x.numerator.bit_length() > bits or x.denominator.bit_length() > bits:
            raise _Undefined
        return x

    if e.op == "+":
        return lambda env, holes: sized(left(env, holes) + right(env, holes))
    if e.op == "-":
        return lambda env, holes: sized(left(env, holes) - right(env, holes))
    if e.op == "*":
        return lambda env, holes: sized(left(env, holes) * right(env, holes))

    def quotient(env: Values, holes: Holes) -> Value:
        a = left(env, holes)
        b = right(env, holes)
        if b == 0:
            if a in holes:
                return holes[a]
            raise _Missing(Fraction(a))
        return sized(_exact(a, b))

    return quotient


def _compile_power(e: Pow, lim: Limits, depth: int) -> Compiled:
    base = _compile(e.base, lim, depth + 1)
    try:
        times = evaluate(e.exponent).numerator  # 0..12, as ``translates`` checked
    except Exception as exc:  # noqa: BLE001 (raised where reading the tree at a point would: after the base)
        error = exc

        def failing(env: Values, holes: Holes) -> Value:
            base(env, holes)
            raise error
        return failing

    def power(env: Values, holes: Holes) -> Value:
        b = base(env, holes)
        out: Value = 1
        for _ in range(times):
            out = _sized(out * b, lim)
        return out

    return power


class _Search:
    def __init__(self, premises: list[Rel], claim: Rel, integers: frozenset[str], lim: Limits) -> None:
        self.premises, self.claim, self.integers, self.lim = premises, claim, integers, lim
        self.left = MAX_EVALUATIONS
        self._compiled: dict[int, tuple[Rel, Compiled, Compiled]] = {}

    def _sides(self, r: Rel) -> tuple[Compiled, Compiled]:
        known = self._compiled.get(id(r))
        if known is None:  # the relation is kept with its functions, so its id stays its own
            known = self._compiled[id(r)] = (r, _compile(r.lhs, self.lim), _compile(r.rhs, self.lim))
        return known[1], known[2]

    def residual(self, r: Rel, env: Env, holes: Holes | None = None) -> Fraction | None:
        """``lhs - rhs`` at ``env``; None where a value grows past the limits; ``_Missing`` where
        a division by zero has no value in ``holes``."""
        if self.left <= 0:
            raise _Spent
        self.left -= 1
        lhs, rhs = self._sides(r)
        point = {k: v.numerator if v.denominator == 1 else v for k, v in env.items()}  # ``_compile``: ints where exact
        try:
            d = lhs(point, holes or {}) - rhs(point, holes or {})
        except (_Undefined, RecursionError, FaithSieveError):
            return None
        return d if type(d) is Fraction else Fraction(d)

    def holds(self, r: Rel, env: Env, holes: Holes | None = None) -> bool | None:
        d = self.residual(r, env, holes)
        return None if d is None else _OPS[r.op](d)

    def settle(self, env: Env, want: bool) -> Holes | None:
        """Values for the divisions by zero at ``env`` under which every premise holds and the
        claim's truth is ``want``; None when none is found (at most ``MAX_HOLES`` dividends)."""
        holes: Holes = {}
        while True:
            current, target = self.claim, want
            try:
                for p in self.premises:
                    current, target = p, True
                    if not self.holds(p, env, holes):
                        return None
                current, target = self.claim, want
                return holes if self.holds(self.claim, env, holes) is want else None
            except _Missing as gap:
                more = self._hole_values(current, target, env, holes, gap.dividend)
                if more is None:
                    return None
                holes.update(more)

    def _hole_values(self, r: Rel, target: bool, env: Env, holes: Holes, a: Fraction) -> Holes | None:
        """Values of ``a / 0`` (and of any other division by zero ``r`` reads, set to 0) under which
        ``r`` has the truth ``target``: the secant root for an equation that must hold, else the
        first of ``_HOLE_VALUES`` that does it. None past ``MAX_HOLES`` dividends."""
        others: Holes = {}

        def residual(h: Fraction) -> Fraction | None:
            while True:
                if len(holes) + len(others) + 1 > MAX_HOLES:
                    raise _Missing(a)
                try:
                    return self.residual(r, env, {**holes, **others, a: h})
                except _Missing as gap:
                    others[gap.dividend] = Fraction(0)

        try:
            if r.op == "=" and target:
                f0, f1 = residual(Fraction(0)), residual(Fraction(1))
                if f0 is None or f1 is None or f0 == f1:
                    return None
                candidates: tuple[Fraction, ...] = (-f0 / (f1 - f0),)
            else:
                candidates = _HOLE_VALUES
            for h in candidates:
                d = residual(h)
                if d is not None and _OPS[r.op](d) is target:
                    return {**others, a: h}
        except _Missing:
            return None
        return None

    def classify(self, env: Env) -> bool | None | str:
        """The claim's truth at ``env`` where every premise holds with no division by zero; None
        where some premise fails or is undefined; ``"holes"`` where a division by zero is read."""
        try:
            if not all(self.holds(p, env) for p in self.premises):
                return None
            return self.holds(self.claim, env)
        except _Missing:
            return "holes"

    def solve(self, r: Rel, env: Env, v: str, exact: bool = True) -> Env | None:
        """``env`` with ``v`` moved by one secant step towards a zero of ``r``'s residual (exact
        when the residual is linear in ``v``; the caller checks the point anyway)."""
        t0 = env[v]
        t1 = t0 + 1
        try:
            f0, f1 = self.residual(r, env), self.residual(r, {**env, v: t1})
        except _Missing:
            return None
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
            if point is None:
                return None, None
            try:
                return self.residual(second, point), point
            except _Missing:
                return None, None

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


def _factors(e: Expr, depth: int = 0) -> Iterator[Expr]:
    """The factors of a product (through ``*`` and positive integer powers), which vanish where
    the product does: a secant step solves a linear factor exactly where it would miss the
    product's roots (``(5 + k)(4 + k)``)."""
    if depth < MAX_FASTPATH_NESTING and isinstance(e, BinOp) and e.op == "*":
        yield from _factors(e.left, depth + 1)
        yield from _factors(e.right, depth + 1)
    elif depth < MAX_FASTPATH_NESTING and isinstance(e, Pow) and isinstance(e.exponent, Num) and \
            e.exponent.value.denominator == 1 and e.exponent.value > 0:
        yield from _factors(e.base, depth + 1)
    else:
        yield e


def _divisors(rels: list[Rel]) -> list[Expr]:
    """The first ``MAX_DIVISORS`` distinct factors with a variable in them of the divisors (where
    one vanishes, the solver may give the division any value)."""
    out: list[Expr] = []
    for r in rels:
        for side in (r.lhs, r.rhs):
            for n in walk(side):
                if not (isinstance(n, BinOp) and n.op == "/"):
                    continue
                for f in _factors(n.right):
                    if variables(f) and f not in out:
                        out.append(f)
                        if len(out) == MAX_DIVISORS:
                            return out
    return out


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
        vanish = [Rel(d, "=", Num(Fraction(0), "0", 0)) for d in _divisors([*s.premises, s.claim])]
        for base in bases[:_SOLVED_BASES]:
            for r in (*s.premises, s.claim, *vanish):
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


@dataclass(frozen=True)
class Point:
    """Values of the variables, and of the divisions by zero the relations read there."""

    values: Env
    div0: Holes


def separating_points(premises: list[Rel], claim: Rel, integer_vars: tuple[str, ...] = (),
                      lim: Limits = DEFAULT_LIMITS) -> tuple[Point, Point] | None:
    """A point where every premise holds and the claim fails, and one where every premise and
    the claim hold (integer variables at integers), both checked exactly; None when the bounded
    search does not find both (the solver decides)."""
    fails, holds = witness_points(premises, claim, integer_vars, lim)
    return (fails, holds) if fails is not None and holds is not None else None


def witness_points(premises: list[Rel], claim: Rel, integer_vars: tuple[str, ...] = (),
                   lim: Limits = DEFAULT_LIMITS) -> tuple[Point | None, Point | None]:
    """The two points of ``separating_points``, each None where the search did not find it (it
    stops looking once it knows both cannot be found, or past a bound)."""
    rels = [*premises, claim]
    if not premises or len(rels) > MAX_RELATIONS or not all(translates(r) for r in rels):
        return None, None
    names = sorted(set().union(*(variables(r.lhs) | variables(r.rhs) for r in rels)))
    if not names or len(names) > MAX_NAMES:
        return None, None
    s = _Search(list(premises), claim, frozenset(integer_vars), lim)
    found: list[Point | None] = [None, None]
    try:
        for stage in range(3):
            if stage == 2 and found[0] is None:
                break  # the last stage only finds points where the claim holds
            if _search(s, _candidates(s, names, stage), found):
                return found[0], found[1]
    except _Spent:
        pass
    s.left = MAX_QUADRATIC_EVALUATIONS
    with contextlib.suppress(_Spent):
        _search(s, _quadratic_candidates(s, names), found)
    return found[0], found[1]


def _search(s: _Search, candidates: Iterator[Env | None], found: list[Point | None]) -> bool:
    """Classify ``candidates`` in order, keeping the first point where the premises hold and the
    claim fails (``found[0]``) and the first where all hold (``found[1]``); True once both are known."""
    for env in candidates:
        if env is None or any(v in s.integers and x.denominator != 1 for v, x in env.items()):
            continue
        verdict = s.classify(env)
        if verdict == "holes":
            if found[0] is None and (h := s.settle(env, False)) is not None:
                found[0] = Point(env, h)
            if found[1] is None and (h := s.settle(env, True)) is not None:
                found[1] = Point(env, h)
        elif verdict is False and found[0] is None:
            found[0] = Point(env, {})
        elif verdict is True and found[1] is None:
            found[1] = Point(env, {})
        if found[0] is not None and found[1] is not None:
            return True
    return False


MAX_QUADRATIC_EVALUATIONS = 48
"""Evaluations the last stage (``_quadratic_candidates``) may spend, after the others' budget."""


def _quadratic_candidates(s: _Search, names: list[str]) -> Iterator[Env | None]:
    """The last stage: each equation's residual along one variable in which it is a polynomial
    of degree two as written, read at three points as a quadratic, and its rational roots
    (``(a - 1)^2 + (b - 1)^2 = 5`` at ``a = 2``; every candidate is checked exactly anyway)."""
    pairs = [(r, v) for r in (*s.premises, s.claim) if r.op == "=" for v in names if quadratic_in(r, v)]
    for base in list(_bases(names, s.integers))[:_SOLVED_BASES] if pairs else []:
        for r, v in pairs:
            t0 = base[v]
            try:
                f0, f1, f2 = (s.residual(r, {**base, v: t0 + k}) for k in range(3))
            except _Missing:
                continue
            if f0 is None or f1 is None or f2 is None:
                continue
            for u in rational_roots(f0, f1, f2):
                t = t0 + u
                if max(abs(t.numerator).bit_length(), t.denominator.bit_length()) <= MAX_ROOT_BITS:
                    yield {**base, v: t}
