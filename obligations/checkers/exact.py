"""The exact-rational checker and the value comparison every checker shares (rounding to the digits
shown, running totals, percent of a base): the cheapest check, first in the portfolio."""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from fractions import Fraction
from typing import Protocol

from faithsieve.obligations.kinds.models import (
    ArithmeticObligation,
    Obligation,
    Outcome,
    Refuted,
    SolutionObligation,
    SubstitutionObligation,
    Unknown,
    Verified,
)
from faithsieve.obligations.procedures.intfuncs import reduce_rel
from faithsieve.obligations.procedures.polynomials import poly_difference
from faithsieve.obligations.procedures.realroots import (
    MAX_DEGREE,
    OPS,
    Poly1,
    cells,
    rational_value,
    trim,
)

from faithsieve.core.errors import EvaluationLimit, FaithSieveError, NotRational
from faithsieve.mathtext.ast import (
    BinOp,
    Call,
    Expr,
    Neg,
    Num,
    Pow,
    Rel,
    leftmost_operand,
    literals,
    shown_tolerance,
    walk,
)
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits, evaluate
from faithsieve.mathtext.literals import show_number


class Checker(Protocol):
    """One checking backend."""

    name: str

    def check(self, ob: Obligation, deadline: float) -> Outcome | None:
        """Decide ``ob`` before ``deadline`` (``time.monotonic()`` value), or return None if not applicable."""


def fmt(x: Fraction) -> str:
    """A readable exact value: integers plainly, short decimals as decimals, else p/q (≈ decimal)."""
    if max(x.numerator.bit_length(), x.denominator.bit_length()) > 2000:
        return show_number(x, 600)  # 10^5000, ≈ 1.4377 × 10^5000: correct leading digits, never str() of it
    if x.denominator == 1:
        return str(x.numerator)
    d = x.denominator
    while d % 2 == 0:
        d //= 2
    while d % 5 == 0:
        d //= 5
    if d == 1 and x.denominator <= 10**12:
        places = 0
        while (x * 10**places).denominator != 1:
            places += 1
        return f"{float(x):.{places}f}" if places <= 15 else str(x)
    if abs(x.numerator).bit_length() > 200:
        return f"{str(x)[:60]}…"
    return f"{x} (≈ {float(x):.6g})"


PRINTABLE_BITS = 1000
"""Numerators up to this many bits: ``fmt`` never raises on them."""


def _printable(x: Fraction) -> bool:
    """``fmt(x)`` cannot raise. It raises only where it converts to a float (``OverflowError`` at
    ``|x| >= 2^1024``), which it does only at most 2000 bits; a numerator of at most
    ``PRINTABLE_BITS`` bits keeps ``|x| < 2^1000``, and ``str`` of at most 2000 bits is below
    Python's digit limit. So the comparison may format its evidence only when an answer needs it."""
    return x.numerator.bit_length() <= PRINTABLE_BITS


# ---------------------------------------------------------------------------
# Precision shown, intervals for earlier-rounded literals
# ---------------------------------------------------------------------------


def _interval(e: Expr, rounded: set[str], env: dict[str, Fraction] | None, lim: Limits,
              half: frozenset[str] = frozenset()) -> tuple[Fraction, Fraction]:
    """Interval of values when each literal in ``rounded`` may be off by one unit in its last place (half a
    unit for those in ``half``: long decimals read as rounded to nearest)."""
    if isinstance(e, Num):
        if e.text in rounded and e.decimals:
            u = Fraction(1, 10**e.decimals) / (2 if e.text in half else 1)
            return e.value - u, e.value + u
        return e.value, e.value
    if isinstance(e, Neg):
        lo, hi = _interval(e.operand, rounded, env, lim, half)
        return -hi, -lo
    if isinstance(e, BinOp):
        a, b = _interval(e.left, rounded, env, lim, half), _interval(e.right, rounded, env, lim, half)
        if e.op == "+":
            return a[0] + b[0], a[1] + b[1]
        if e.op == "-":
            return a[0] - b[1], a[1] - b[0]
        if e.op == "/":
            if b[0] <= 0 <= b[1]:
                raise FaithSieveError("interval division by zero")
            b = (1 / b[1], 1 / b[0])
        ps = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
        return min(ps), max(ps)
    if isinstance(e, Call) and e.fn == "percent":
        lo, hi = _interval(e.args[0], rounded, env, lim, half)
        return lo / 100, hi / 100
    if isinstance(e, Pow) and (k := _small_exponent(e.exponent, lim)) is not None:
        lo, hi = _interval(e.base, rounded, env, lim, half)
        if max(x.numerator.bit_length() + x.denominator.bit_length() for x in (lo, hi)) * k > lim.max_bits:
            raise EvaluationLimit("interval power too large")
        ends = sorted((lo**k, hi**k))
        return (Fraction(0) if k % 2 == 0 and lo < 0 < hi else ends[0]), ends[1]
    v = evaluate(e, env, lim)
    return v, v


def _small_exponent(e: Expr, lim: Limits) -> int | None:
    """A literal integer exponent from 1 to 64 (an interval's power stays within the bit bound)."""
    if isinstance(e, Num) and e.value.denominator == 1 and 1 <= e.value <= 64:
        return int(e.value)
    return None


def _has_percent(e: Expr) -> bool:
    return any(isinstance(n, Call) and n.fn == "percent" for n in walk(e))


def _strip_percent(e: Expr) -> Expr:
    """The expression with every ``p%`` read as the number ``p``."""
    if isinstance(e, Call):
        if e.fn == "percent":
            return _strip_percent(e.args[0])
        return Call(e.fn, tuple(_strip_percent(a) for a in e.args))
    if isinstance(e, BinOp):
        return BinOp(e.op, _strip_percent(e.left), _strip_percent(e.right))
    if isinstance(e, Neg):
        return Neg(_strip_percent(e.operand))
    if isinstance(e, Pow):
        return Pow(_strip_percent(e.base), _strip_percent(e.exponent))
    return e


def _percent_of_base(e: Expr, env: dict[str, Fraction] | None, lim: Limits) -> Fraction | None:
    """Read ``a ± p%`` as ``a · (1 ± p/100)`` (a common way of writing increases/discounts)."""
    if isinstance(e, BinOp) and e.op in "+-" and isinstance(e.right, Call) and e.right.fn == "percent":
        a = evaluate(e.left, env, lim)
        p = evaluate(e.right, env, lim)
        return a * (1 + p) if e.op == "+" else a * (1 - p)
    return None


_ORDER = {"<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge, "!=": operator.ne}


def _evidence(a: Fraction, b: Fraction, **more: str) -> dict[str, str]:
    return {"lhs": fmt(a), "rhs": fmt(b), **more}


def compare_values(
    lhs: Expr, op: str, rhs: Expr, *, approx: bool, rounded: Iterable[str] = (),
    env: dict[str, Fraction] | None = None, lim: Limits = DEFAULT_LIMITS, method: str = "exact", ceiling: bool = True,
    word_problem: bool = False,
) -> Outcome:
    """Decide a closed relation with exact rationals and the rounding rules. Without ``ceiling``, an
    integer written for a non-integer value is read as rounded to nearest or truncated, not rounded up."""
    a = evaluate(lhs, env, lim)
    b = evaluate(rhs, env, lim)
    if not (_printable(a) and _printable(b)):
        _evidence(a, b)  # formatting may raise (a float too large): it does so here, before any answer, as it always did
    order = _ORDER.get(op)
    if order is not None:
        if order(a, b):
            return Verified(method)
        return _failed_order(a, op, b, lhs, rhs, approx, method)
    if a == b:
        return Verified(method)
    percent = _percent_notation(a, b, lhs, rhs, method)
    if percent is not None:
        return percent
    diff = a - b
    long_decimals = _rounded_literals(lhs, rhs)
    tol = _written_tolerance(a, b, lhs, rhs, ceiling, word_problem, bool(long_decimals))
    if tol and abs(diff) < tol:
        return Verified(f"{method}-rounding", f"agrees to the precision shown ({fmt(a)} vs {fmt(b)})")
    rset = set(rounded) | long_decimals
    if rset and _within_earlier_rounding(lhs, rhs, rset, tol, env, lim, frozenset(long_decimals - set(rounded))):
        return Verified(f"{method}-rounding", "agrees within the rounding of values rounded earlier")
    if op == "~" or approx:
        return _approximation(a, b, rhs, method)
    return _other_notation(a, b, lhs, rhs, tol, env, lim, method)


def _failed_order(a: Fraction, op: str, b: Fraction, lhs: Expr, rhs: Expr, approx: bool, method: str) -> Outcome:
    """An inequality that fails exactly: unknown where it fails only within the rounding shown."""
    if op in ("<=", ">=") or approx:
        return Unknown(method, "inequality fails only within rounding") if abs(a - b) <= max(
            shown_tolerance(lhs), shown_tolerance(rhs)) else Refuted(method, _evidence(a, b))
    return Refuted(method, _evidence(a, b))


def _percent_notation(a: Fraction, b: Fraction, lhs: Expr, rhs: Expr, method: str) -> Outcome | None:
    """"2/4 × 100 = 50%", "1/26 × 100 ≈ 3.85%": a percentage written as the number of percent."""
    for value, pct, other in ((a, rhs, b), (b, lhs, a)):
        if isinstance(pct, Neg):
            pct = pct.operand
        if isinstance(pct, Call) and pct.fn == "percent":
            if value == other * 100:
                return Verified(method, "percent notation")
            inner = pct.args[0]
            ptol = shown_tolerance(inner) or (Fraction(1) if value.denominator != 1 else Fraction(0))
            if ptol and abs(value - other * 100) < ptol:
                return Verified(f"{method}-rounding", "percent notation, rounded to the digits shown")
    return None


def _written_tolerance(a: Fraction, b: Fraction, lhs: Expr, rhs: Expr, ceiling: bool, word_problem: bool = False,
                       approximate_inputs: bool = False) -> Fraction:
    """The precision the sides show, where the text licenses rounding to it (0 where it does not).

    A computation on exact numbers has an exact value; writing fewer digits is a reading the text must
    support. ``ceiling`` (a word problem whose result names what it counts or pays) licenses rounding to
    the digits shown and an integer for a non-integer value (rounding, floor or ceiling). Otherwise:

    * a decimal side is the value rounded to its digits only when the value cannot be written in them
      (its expansion does not terminate: ``2/3 = 0.67``; or it is computed from rounded inputs), or, in a
      word problem, to cents;
    * an integer side is the value rounded to nearest or truncated when, in a word problem, the value's
      expansion does not terminate; and the integer part of a quotient of two integers written as such
      (``19 / 7 = 2``: integer division, as in counting multiples).

    ``1.1^2 = 1.2`` (exactly 1.21), ``1/4 + 1/2 = 1`` and ``(4 + 9)/2 = 6`` are claims of equality."""
    tol = max(shown_tolerance(lhs), shown_tolerance(rhs))
    if tol:
        if ceiling:
            return tol
        exact = b if shown_tolerance(lhs) >= shown_tolerance(rhs) and shown_tolerance(lhs) else a
        cents = word_problem and tol == Fraction(1, 100)
        return tol if cents or approximate_inputs or not _terminates(exact) else Fraction(0)
    for n, x, side in ((b, a, lhs), (a, b, rhs)):
        if n.denominator != 1 or x.denominator == 1 or not isinstance(rhs if side is lhs else lhs, Num):
            continue
        if ceiling:
            return Fraction(1)
        truncated = n == math.trunc(x)
        if word_problem and (not _terminates(x) or approximate_inputs) and (truncated or n == math.floor(x + Fraction(1, 2))):
            return Fraction(1)
        if truncated and _integer_quotient(side):
            return Fraction(1)
    return Fraction(0)


def _terminates(x: Fraction) -> bool:
    """``x`` has a finite decimal expansion (its denominator has no prime but 2 and 5)."""
    d = x.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d == 1


def _integer_quotient(e: Expr) -> bool:
    """``a / b`` with ``a`` and ``b`` integers as written."""
    return (isinstance(e, BinOp) and e.op == "/" and isinstance(e.left, Num) and isinstance(e.right, Num)
            and e.left.decimals == 0 and e.right.decimals == 0)


ROUNDED_DIGITS = 3
"""A decimal literal with at least this many digits after the point reads as a rounded value (``2.8284``
for √8): within one unit in its last place, as a value rounded earlier in the proof is."""


def _rounded_literals(lhs: Expr, rhs: Expr) -> set[str]:
    """The long decimals a computed side uses (a bare literal side is the result shown, not an input)."""
    sides = [e for e in (lhs, rhs) if not isinstance(e, (Num, Neg))]
    return {n.text for e in sides for n in literals(e) if n.decimals >= ROUNDED_DIGITS}


def _within_earlier_rounding(lhs: Expr, rhs: Expr, rset: set[str], tol: Fraction,
                             env: dict[str, Fraction] | None, lim: Limits, half: frozenset[str] = frozenset()) -> bool:
    """The sides' intervals meet when the literals in ``rset`` may be off by one unit in their last place
    (half a unit for those in ``half``)."""
    try:
        lo1, hi1 = _interval(lhs, rset, env, lim, half)
        lo2, hi2 = _interval(rhs, rset, env, lim, half)
    except FaithSieveError:
        return False
    return lo1 - tol <= hi2 and lo2 - tol <= hi1


def _approximation(a: Fraction, b: Fraction, rhs: Expr, method: str) -> Outcome:
    """An approximate relation: verified to the significant figures shown, unknown within 5 %."""
    diff = a - b
    scale = max(abs(a), abs(b), Fraction(1))
    if isinstance(rhs, Num) and rhs.decimals == 0 and b != 0:
        t = b.numerator
        z = 0
        while t % 10 == 0 and z < 12:
            t //= 10
            z += 1
        if abs(diff) <= Fraction(10**z, 2):
            return Verified(f"{method}-rounding", "agrees to the significant figures shown")
    if abs(diff) / scale <= Fraction(5, 100):
        return Unknown(method, "approximation within 5%: too loose to decide", _evidence(a, b))
    return Refuted(method, _evidence(a, b, difference=fmt(diff)), "off by more than 5% in an approximation")


def _other_notation(a: Fraction, b: Fraction, lhs: Expr, rhs: Expr, tol: Fraction,
                    env: dict[str, Fraction] | None, lim: Limits, method: str) -> Outcome:
    """An equation that fails exactly: unknown where a common notation reads it otherwise (a running
    total, the percent sign for the number of percent, a percent of a base), else refuted."""
    # running-total chains: "3 × 4 = 12 + 5 = 17" adds the next amount into the chain; a chain that
    # divides or multiplies the value it just wrote ("7·8·15/6 = 140/2 = 70") asserts a false equation,
    # except a bare quantity restated in another unit ("4 hours = 4 × 60 = 240 minutes", the unit words
    # dropped by the reader): a conversion, not a computation
    try:
        continues = rhs.op in ("+", "-") or isinstance(lhs, Num) if isinstance(rhs, BinOp) else False
        if continues and evaluate(leftmost_operand(rhs), env, lim) == a:
            return Unknown(method, "running-total notation: the chain continues with a new computation",
                           _evidence(a, b))
    except FaithSieveError:
        pass
    try:
        # "20%/100 = 0.20": a percentage also written as its number of percent
        if _has_percent(lhs) or _has_percent(rhs):
            a2, b2 = evaluate(_strip_percent(lhs), env, lim), evaluate(_strip_percent(rhs), env, lim)
            if a2 in (b2, b) or a == b2:
                return Unknown(method, "percent sign used for the number of percent", _evidence(a, b))
    except FaithSieveError:
        pass
    try:
        pb = _percent_of_base(lhs, env, lim)
        if pb is not None and abs(pb - b) <= max(tol, Fraction(0)):
            return Unknown(method, "percent-of-base notation (a + p% meaning a·(1 + p/100))", _evidence(a, b))
    except FaithSieveError:
        pass
    return Refuted(method, _evidence(a, b, difference=fmt(a - b)))


# ---------------------------------------------------------------------------
# Exact rational checker
# ---------------------------------------------------------------------------

class ExactChecker:
    """Exact rational arithmetic with size guards checked before computing."""

    name = "exact"

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.lim = limits

    def check(self, ob: Obligation, deadline: float) -> Outcome | None:
        try:
            if isinstance(ob, ArithmeticObligation):
                c = reduce_rel(ob.claim, self.lim)
                return compare_values(c.lhs, c.op, c.rhs, approx=ob.approx, rounded=ob.rounded, lim=self.lim,
                                      ceiling=ob.ceiling, word_problem=ob.word_problem)
            if isinstance(ob, SubstitutionObligation):
                c = reduce_rel(ob.claim, self.lim)
                out = compare_values(c.lhs, c.op, c.rhs, approx=ob.approx, env=dict(ob.env), lim=self.lim,
                                     word_problem=ob.word_problem)
                if isinstance(out, Refuted):
                    cx = {**{k: fmt(v) for k, v in ob.env.items()}, **out.counterexample}
                    note = "; ".join(f"{k} established at {o}" for k, o in ob.origins.items() if o)
                    return Refuted("exact", cx, note)
                return out
            if isinstance(ob, SolutionObligation):
                return self._solution(ob)
        except NotRational:
            return None  # irrational or opaque: the symbolic checker reads it
        except FaithSieveError as exc:
            return Unknown(self.name, f"{exc.code}: {exc.message}")
        return None

    def _solution(self, ob: SolutionObligation) -> Outcome:
        env = dict(ob.values)
        for eq in ob.equations:
            a = evaluate(eq.lhs, env, self.lim)
            b = evaluate(eq.rhs, env, self.lim)
            if a == b:
                continue
            if ob.approx:
                if self._root_nearby(eq, env, ob):
                    continue
                return Unknown("exact", "rounded value: no sign change found nearby", {"lhs": fmt(a), "rhs": fmt(b)})
            cx = {k: fmt(v) for k, v in ob.values.items()}
            cx.update({"equation": str(eq), "lhs": fmt(a), "rhs": fmt(b)})
            return Refuted("exact", cx, "the claimed value does not satisfy the equation")
        if ob.listed and len(ob.equations) == 1 and len(ob.values) == 1:
            eq = ob.equations[0]
            n = real_root_count(eq, next(iter(ob.values)), self.lim)
            if n is not None and n > ob.listed:
                cx = {"equation": str(eq), "real roots": str(n), "values listed": str(ob.listed)}
                return Refuted("exact", cx, f"the equation has {n} distinct real roots; the text lists {ob.listed} as all of them")
        if ob.sole and not ob.approx and len(ob.equations) == 1 and len(ob.values) == 1:
            dropped = dropped_roots(ob.equations[0], *next(iter(ob.values.items())), ob.constraints, self.lim)
            if dropped:
                (var, v), = ob.values.items()
                return Unknown("exact", f"{var} = {fmt(v)} solves {ob.equations[0]}, but the step gives it as the value "
                               f"of {var} and drops the real root(s) {', '.join(dropped)}; not verified (a condition the "
                               "proof does not state may exclude them)", {"dropped roots": "; ".join(dropped)})
        return Verified("exact")

    def _root_nearby(self, eq: Rel, env: dict[str, Fraction], ob: SolutionObligation) -> bool:
        """For a rounded solution x ≈ v (d decimals): the equation changes sign within one unit of v."""
        if len(ob.values) != 1:
            return False
        (var, v), = ob.values.items()
        u = Fraction(1, 10 ** max(ob.decimals, 0)) if ob.decimals else Fraction(1)
        vals = []
        for x in (v - u, v + u):
            e2 = dict(env)
            e2[var] = x
            vals.append(evaluate(eq.lhs, e2, self.lim) - evaluate(eq.rhs, e2, self.lim))
        return vals[0] == 0 or vals[1] == 0 or (vals[0] < 0) != (vals[1] < 0)


# ---------------------------------------------------------------------------
# sympy: irrational closed values, polynomial identities, random exact points
# ---------------------------------------------------------------------------


def univariate(eq: Rel, var: str, lim: Limits = DEFAULT_LIMITS) -> Poly1 | None:
    """``lhs - rhs`` of ``eq`` as a polynomial in the one letter ``var`` (coefficients from the constant term
    up), or None when it is no such polynomial, is constant, or is past a bound."""
    diff = poly_difference(eq.lhs, eq.rhs, lim, quotients=False)
    if diff is None:
        return None
    coeffs, den = diff
    p: dict[int, Fraction] = {}
    for mono, c in coeffs.items():
        if any(name != var for name, _ in mono) or not c:
            if c:
                return None
            continue
        k = sum(e for _, e in mono)
        p[k] = p.get(k, Fraction(0)) + Fraction(c) / den
    if not p or max(p) < 1 or max(p) > MAX_DEGREE:
        return None
    return trim([p.get(k, Fraction(0)) for k in range(max(p) + 1)])


def dropped_roots(eq: Rel, var: str, value: Fraction, constraints: Iterable[Rel], lim: Limits) -> list[str]:
    """The real roots of the polynomial equation ``eq`` in ``var`` other than ``value`` that meet every
    one of ``constraints`` (inequalities in ``var``), each named (``x = -3``, or an interval holding an
    irrational root); empty when there are none, or when ``eq`` or a constraint is no such polynomial or
    past a bound (nothing is named that was not proved)."""
    poly = univariate(eq, var, lim)
    polys = [univariate(c, var, lim) for c in constraints]
    if poly is None or any(p is None for p in polys):
        return []
    found = cells([poly, *[p for p in polys if p is not None]])
    if found is None:
        return []
    ops = [c.op for c in constraints]
    out = []
    for cell in found:
        if cell.root is None or cell.signs[0] != 0 or not all(OPS[op](s) for op, s in zip(ops, cell.signs[1:], strict=True)):
            continue
        a, b = cell.root
        exact = rational_value(cell)
        if exact == value or exact is None and a < value < b:
            continue
        out.append(f"{var} = {fmt(exact)}" if exact is not None else
                   f"an irrational {var} between {float(a):.6g} and {float(b):.6g}")
    return out


def real_root_count(eq: Rel, var: str, lim: Limits) -> int | None:
    """How many distinct real roots the polynomial equation ``eq`` in the one letter ``var`` has,
    exactly (Sturm counts, ``obligations.procedures.realroots``); None when it is no such polynomial or past a
    bound."""
    poly = univariate(eq, var, lim)
    if poly is None:
        return None
    found = cells([poly])
    return None if found is None else sum(1 for c in found if c.root is not None)
