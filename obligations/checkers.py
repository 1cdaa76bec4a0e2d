"""The cheap checkers, cheapest first: exact rationals, sympy, z3.

A checker returns ``None`` when an obligation is not its kind, otherwise an
``Outcome`` value: ``Verified``, ``Refuted`` (counterexample confirmed exactly)
or ``Unknown``. Checkers never raise for a bad formula: size limits and
unsupported nodes become ``Unknown`` with the reason.

Rounding is the main source of false alarms, so a numeric mismatch is refuted
only when no reading of the precision shown explains it: rounding or
truncation to the digits written, values rounded earlier in the proof,
running-total chains (``3 × 4 = 12 + 5 = 17``), and percent-of-base notation.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import TYPE_CHECKING, Protocol

from faithsieve.errors import FaithSieveError, NotRational
from faithsieve.lazy import lazy_module
from faithsieve.mathtext.ast import (
    BinOp, Call, Expr, Neg, Num, Pow, Var, leftmost_operand, literals, render, substitute, variables, walk,
)
from faithsieve.mathtext.cost import budget
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits, evaluate, to_sympy
from faithsieve.obligations.fastpaths import (
    linear_derivation, numerator_has_root, numerator_not_constant, outside_smt, polynomial_class,
)
from faithsieve.obligations.models import (
    ArithmeticObligation, CoverageObligation, DerivationObligation, IdentityObligation, Obligation, Outcome, Refuted,
    Rel, SolutionObligation, SubstitutionObligation, Unknown, Verified,
)

if TYPE_CHECKING:
    import sympy
    import z3
else:  # imported on the first symbolic or SMT check, not at start-up
    sympy = lazy_module("sympy", globals())
    z3 = lazy_module("z3", globals())


class Checker(Protocol):
    """One checking backend."""

    name: str

    def check(self, ob: Obligation, deadline: float) -> Outcome | None:
        """Decide ``ob`` before ``deadline`` (``time.monotonic()`` value), or return None if not applicable."""


def _big_int(n: int) -> str:
    """Integers too long to print (Python refuses str() past 4300 digits): sign, leading digits, size."""
    digits = int(abs(n).bit_length() * 0.30103)
    head = abs(n) >> max(0, abs(n).bit_length() - 64)
    return f"{'-' if n < 0 else ''}{str(head)[:6]}… (about {digits + 1} digits)"


def fmt(x: Fraction) -> str:
    """A readable exact value: integers plainly, short decimals as decimals, else p/q (≈ decimal)."""
    if max(x.numerator.bit_length(), x.denominator.bit_length()) > 2000:
        if x.denominator == 1:
            return _big_int(x.numerator)
        return f"{_big_int(x.numerator)} / {_big_int(x.denominator)}"
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


# ---------------------------------------------------------------------------
# Precision shown, intervals for earlier-rounded literals
# ---------------------------------------------------------------------------

def _shown_tolerance(e: Expr) -> Fraction:
    """Rounding tolerance implied by how a literal side is written (one unit in the last place)."""
    if isinstance(e, Neg):
        return _shown_tolerance(e.operand)
    if isinstance(e, Num) and e.decimals:
        return Fraction(1, 10**e.decimals)
    if isinstance(e, Call) and e.fn == "percent" and isinstance(e.args[0], Num):
        return _shown_tolerance(e.args[0]) / 100 if e.args[0].decimals else Fraction(1, 100)
    return Fraction(0)


def _interval(e: Expr, rounded: set[str], env: dict[str, Fraction] | None, lim: Limits) -> tuple[Fraction, Fraction]:
    """Interval of values when each literal in ``rounded`` may be off by one unit in its last place."""
    if isinstance(e, Num):
        if e.text in rounded and e.decimals:
            u = Fraction(1, 10**e.decimals)
            return e.value - u, e.value + u
        return e.value, e.value
    if isinstance(e, Neg):
        lo, hi = _interval(e.operand, rounded, env, lim)
        return -hi, -lo
    if isinstance(e, BinOp):
        a, b = _interval(e.left, rounded, env, lim), _interval(e.right, rounded, env, lim)
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
        lo, hi = _interval(e.args[0], rounded, env, lim)
        return lo / 100, hi / 100
    v = evaluate(e, env, lim)
    return v, v


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


def compare_values(
    lhs: Expr, op: str, rhs: Expr, *, approx: bool, rounded: Iterable[str] = (),
    env: dict[str, Fraction] | None = None, lim: Limits = DEFAULT_LIMITS, method: str = "exact",
) -> Outcome:
    """Decide a closed relation with exact rationals and the rounding rules."""
    a = evaluate(lhs, env, lim)
    b = evaluate(rhs, env, lim)
    cx = {"lhs": fmt(a), "rhs": fmt(b)}
    if op in ("<", ">", "<=", ">=", "!="):
        ok = {"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b, "!=": a != b}[op]
        if ok:
            return Verified(method)
        if op in ("<=", ">=") or approx:
            return Unknown(method, "inequality fails only within rounding") if abs(a - b) <= max(
                _shown_tolerance(lhs), _shown_tolerance(rhs)) else Refuted(method, cx)
        return Refuted(method, cx)
    if a == b:
        return Verified(method)
    # "2/4 × 100 = 50%", "1/26 × 100 ≈ 3.85%": a percentage written as the number of percent
    for value, pct, other in ((a, rhs, b), (b, lhs, a)):
        if isinstance(pct, Neg):
            pct = pct.operand
        if isinstance(pct, Call) and pct.fn == "percent":
            if value == other * 100:
                return Verified(method, "percent notation")
            inner = pct.args[0]
            ptol = _shown_tolerance(inner) or (Fraction(1) if value.denominator != 1 else Fraction(0))
            if ptol and abs(value - other * 100) < ptol:
                return Verified(f"{method}-rounding", "percent notation, rounded to the digits shown")
    diff = a - b
    tol = max(_shown_tolerance(lhs), _shown_tolerance(rhs))
    # an integer written for a non-integer value: rounding, floor or ceiling
    if tol == 0 and (a.denominator != 1 or b.denominator != 1) and (
        (isinstance(rhs, Num) and b.denominator == 1) or (isinstance(lhs, Num) and a.denominator == 1)
    ):
        tol = Fraction(1)
    if tol and abs(diff) < tol:
        return Verified(f"{method}-rounding", f"agrees to the precision shown ({fmt(a)} vs {fmt(b)})")
    rset = set(rounded)
    if rset:
        try:
            lo1, hi1 = _interval(lhs, rset, env, lim)
            lo2, hi2 = _interval(rhs, rset, env, lim)
            if lo1 - tol <= hi2 and lo2 - tol <= hi1:
                return Verified(f"{method}-rounding", "agrees within the rounding of values rounded earlier")
        except FaithSieveError:
            pass
    if op == "~" or approx:
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
            return Unknown(method, "approximation within 5%: too loose to decide", cx)
        cx["difference"] = fmt(diff)
        return Refuted(method, cx, "off by more than 5% in an approximation")
    # running-total chains: "3 × 4 = 12 + 5 = 17" writes the next computation into the chain
    try:
        if evaluate(leftmost_operand(rhs), env, lim) == a and isinstance(rhs, BinOp):
            return Unknown(method, "running-total notation: the chain continues with a new computation", cx)
    except FaithSieveError:
        pass
    try:
        # "20%/100 = 0.20": a percentage also written as its number of percent
        if _has_percent(lhs) or _has_percent(rhs):
            a2, b2 = evaluate(_strip_percent(lhs), env, lim), evaluate(_strip_percent(rhs), env, lim)
            if a2 == b2 or a2 == b or a == b2:
                return Unknown(method, "percent sign used for the number of percent", cx)
    except FaithSieveError:
        pass
    try:
        pb = _percent_of_base(lhs, env, lim)
        if pb is not None and abs(pb - b) <= max(tol, Fraction(0)):
            return Unknown(method, "percent-of-base notation (a + p% meaning a·(1 + p/100))", cx)
    except FaithSieveError:
        pass
    cx["difference"] = fmt(diff)
    return Refuted(method, cx)


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
                c = ob.claim
                return compare_values(c.lhs, c.op, c.rhs, approx=ob.approx, rounded=ob.rounded, lim=self.lim)
            if isinstance(ob, SubstitutionObligation):
                c = ob.claim
                out = compare_values(c.lhs, c.op, c.rhs, approx=ob.approx, env=dict(ob.env), lim=self.lim)
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

MAX_SYMPY_NODES = 400
MAX_DEGREE = 24


def _size(e: Expr) -> int:
    return sum(1 for _ in walk(e))


MAX_TERMS = 4000


def _term_bound(e: Expr) -> int:
    """Upper bound on the number of terms after expanding (products multiply, sums add)."""
    if isinstance(e, BinOp):
        a, b = _term_bound(e.left), _term_bound(e.right)
        return min(a + b if e.op in "+-" else a * b, 10**9)
    if isinstance(e, Neg):
        return _term_bound(e.operand)
    if isinstance(e, Pow):
        try:
            k = evaluate(e.exponent)
        except FaithSieveError:
            return 10**9 if variables(e.exponent) else 1
        if k.denominator != 1 or k.numerator < 0:
            return _term_bound(e.base)
        return min(_term_bound(e.base) ** min(k.numerator, 64), 10**9)
    return 1


def _degree_ok(e: Expr) -> bool:
    """Reject expressions whose expansion would be large before asking sympy to expand."""
    if _term_bound(e) > MAX_TERMS:
        return False
    for x in walk(e):
        if isinstance(x, Pow) and variables(x.base):
            try:
                k = evaluate(x.exponent)
            except FaithSieveError:
                return False
            if abs(k) > MAX_DEGREE:
                return False
    return True


def _decimal_literals(c: Rel) -> bool:
    return any(n.decimals for n in literals(c.lhs) + literals(c.rhs))


class SympyChecker:
    """Symbolic checks: closed values with radicals/pi, polynomial identities, random exact points."""

    name = "sympy"

    def __init__(self, limits: Limits = DEFAULT_LIMITS, seed: int = 0) -> None:
        self.lim = limits
        self.seed = seed

    def check(self, ob: Obligation, deadline: float) -> Outcome | None:
        try:
            if isinstance(ob, (ArithmeticObligation, SubstitutionObligation)):
                c = ob.claim
                if c.op not in ("=", "~"):
                    return None
                env = dict(ob.env) if isinstance(ob, SubstitutionObligation) else {}
                return self._closed(c, env, ob.approx)
            if isinstance(ob, IdentityObligation):
                return self._identity(ob)
        except FaithSieveError as exc:
            return Unknown(self.name, f"{exc.code}: {exc.message}")
        except (ValueError, TypeError, ZeroDivisionError, RecursionError, OverflowError) as exc:
            return Unknown(self.name, f"sympy could not decide: {type(exc).__name__}")
        return None

    def _closed(self, c: Rel, env: dict[str, Fraction], approx: bool) -> Outcome:
        if _size(c.lhs) + _size(c.rhs) > MAX_SYMPY_NODES or not (_degree_ok(c.lhs) and _degree_ok(c.rhs)):
            return Unknown(self.name, "formula too large for symbolic checking")
        vals = {Var(k): Num(v, str(v), 0) for k, v in env.items()}
        lhs = substitute(c.lhs, {k: n for k, n in ((v.name, n) for v, n in vals.items())})
        rhs = substitute(c.rhs, {k: n for k, n in ((v.name, n) for v, n in vals.items())})
        a, b = to_sympy(lhs, self.lim), to_sympy(rhs, self.lim)
        d = sympy.expand(a - b)
        if d == 0:
            return Verified("sympy")
        if d.free_symbols:
            return Unknown(self.name, "symbolic value")
        dv = d.evalf(50)
        av = a.evalf(30)
        if not (dv.is_real and av.is_real):
            return Unknown(self.name, "non-real value")
        tol = max(_shown_tolerance(c.lhs), _shown_tolerance(c.rhs))
        mag = max(abs(av), 1)
        if abs(dv) < sympy.Float(10) ** -40 * mag:
            return Verified("sympy-numeric", "equal to 40 significant digits")
        if tol and abs(dv) < sympy.Rational(tol.numerator, tol.denominator):
            return Verified("sympy-rounding", "agrees to the precision shown")
        if isinstance(c.rhs, Num) and c.rhs.decimals == 0 and not c.rhs.value == 0 and abs(dv) < 1 and not tol:
            return Unknown(self.name, "integer written for an irrational value")
        if approx or c.op == "~":
            if abs(dv) / mag <= sympy.Rational(5, 100):
                return Unknown(self.name, "approximation within 5%")
        if abs(dv) / mag <= sympy.Rational(1, 500) and _decimal_literals(c):
            # "pi = 25.12 / 8": pi or a radical stood in for by a rounded decimal
            return Unknown(self.name, "irrational value against rounded decimals")
        cx = {"lhs": str(a.evalf(12)), "rhs": str(b.evalf(12)), "difference": str(dv.evalf(6))}
        return Refuted("sympy-numeric", cx, "sides differ (evaluated to 50 digits)")

    def _identity(self, ob: IdentityObligation) -> Outcome:
        c = ob.claim
        if _size(c.lhs) + _size(c.rhs) > MAX_SYMPY_NODES or not (_degree_ok(c.lhs) and _degree_ok(c.rhs)):
            return Unknown(self.name, "expression too large for symbolic checking")
        # polynomial sides: an exact expansion puts the difference in the class together + fraction +
        # expand would (numerator zero, or not a number) without building sympy expressions
        cls = polynomial_class(c.lhs, c.rhs, self.lim)
        if cls == "zero":
            return Verified("sympy-poly", "identity")
        if cls == "nonconstant" or (cls is None and (numerator_has_root(c.lhs, c.rhs, self.lim)
                                                     or numerator_not_constant(c.lhs, c.rhs, self.lim))):
            return self._not_identity(ob)
        a, b = to_sympy(c.lhs, self.lim), to_sympy(c.rhs, self.lim)
        num, _den = sympy.fraction(sympy.together(a - b))
        num = sympy.expand(num)
        if num == 0:
            return Verified("sympy-poly", "identity")
        if num.is_number:
            if num.is_real and num != 0:
                return Refuted("sympy-poly", {"difference": str(num)},
                               "the sides differ by a nonzero constant: no value of the variables satisfies it")
            return Unknown(self.name, "constant difference of unknown sign")
        return self._not_identity(ob)

    def _not_identity(self, ob: IdentityObligation) -> Outcome:
        if ob.asserted_identity:
            return self._random_points(ob.claim)
        return Unknown(self.name, "not an identity; may be an equation in its unknowns")

    def _holds_for_positive(self, c: Rel, names: list[str], rng: random.Random) -> bool:
        """No positive rational point separates the sides (8 tries)."""
        for _ in range(8):
            env = {n: Fraction(rng.randint(1, 9), rng.randint(1, 5)) for n in names}
            try:
                if evaluate(c.lhs, env, self.lim) != evaluate(c.rhs, env, self.lim):
                    return False
            except FaithSieveError:
                continue
        return True

    def _random_points(self, c: Rel) -> Outcome:
        rng = random.Random(self.seed)
        names = sorted(variables(c.lhs) | variables(c.rhs))
        for _ in range(8):
            env = {n: Fraction(rng.randint(-9, 9), rng.randint(1, 5)) for n in names}
            try:
                a, b = evaluate(c.lhs, env, self.lim), evaluate(c.rhs, env, self.lim)
            except FaithSieveError:
                continue
            if a != b:
                if self._holds_for_positive(c, names, rng):
                    # letters often name lengths, counts or sizes: the domain is guessed ("sqrt(a^2) = a")
                    return Unknown(self.name, "fails only where some letter is negative or zero: the letters "
                                              "may denote positive quantities (the domain is guessed)")
                cx = {n: fmt(v) for n, v in env.items()}
                cx.update({"lhs": fmt(a), "rhs": fmt(b)})
                return Refuted("random-points", cx, "claimed identity fails at an exact rational point")
        return Unknown(self.name, "no exact point separated the sides")


# ---------------------------------------------------------------------------
# z3: implications, inequalities, coverage
# ---------------------------------------------------------------------------

class _NoZ3(Exception):
    pass


class _Syms(dict[str, "z3.ArithRef"]):
    """Variables of one check, all in one fresh z3 context (so results never depend on
    what the process checked before)."""

    def __init__(self, ctx: z3.Context) -> None:
        super().__init__()
        self.ctx = ctx


def _z3_expr(e: Expr, syms: _Syms) -> z3.ArithRef:
    if isinstance(e, Num):
        return z3.RealVal(f"{e.value.numerator}/{e.value.denominator}", syms.ctx)
    if isinstance(e, Var):
        if e.name not in syms:
            syms[e.name] = z3.Real(e.name, syms.ctx)
        return syms[e.name]
    if isinstance(e, Neg):
        return -_z3_expr(e.operand, syms)
    if isinstance(e, BinOp):
        a, b = _z3_expr(e.left, syms), _z3_expr(e.right, syms)
        return {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[e.op]
    if isinstance(e, Pow):
        try:
            k = evaluate(e.exponent)
        except FaithSieveError:
            raise _NoZ3 from None
        if k.denominator != 1 or not 0 <= k.numerator <= 12:
            raise _NoZ3
        base = _z3_expr(e.base, syms)
        out: z3.ArithRef = z3.RealVal(1, syms.ctx)
        for _ in range(k.numerator):
            out = out * base
        return out
    if isinstance(e, Call) and e.fn == "percent":
        return _z3_expr(e.args[0], syms) / 100
    if isinstance(e, Call) and e.fn == "abs":
        x = _z3_expr(e.args[0], syms)
        return z3.If(x >= 0, x, -x)
    raise _NoZ3


def _z3_rel(r: Rel, syms: _Syms) -> z3.BoolRef:
    a, b = _z3_expr(r.lhs, syms), _z3_expr(r.rhs, syms)
    ops: dict[str, Callable[[z3.ArithRef, z3.ArithRef], z3.BoolRef]] = {
        "=": lambda x, y: x == y, "!=": lambda x, y: x != y, "<": lambda x, y: x < y, ">": lambda x, y: x > y,
        "<=": lambda x, y: x <= y, ">=": lambda x, y: x >= y,
    }
    if r.op not in ops:
        raise _NoZ3
    return ops[r.op](a, b)


def _model_values(m: z3.ModelRef, syms: _Syms) -> dict[str, Fraction] | None:
    out: dict[str, Fraction] = {}
    for name, s in syms.items():
        v = m.eval(s, model_completion=True)
        if not z3.is_rational_value(v):
            return None
        out[name] = Fraction(v.numerator_as_long(), v.denominator_as_long())
    return out


def _holds(r: Rel, env: dict[str, Fraction]) -> bool | None:
    try:
        a, b = evaluate(r.lhs, env), evaluate(r.rhs, env)
    except FaithSieveError:
        return None
    return {"=": a == b, "!=": a != b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}.get(r.op)


def _constant_gap(p: Rel, c: Rel) -> str | None:
    """For equations P: a = b and C: c = d, the nonzero constant (a - b) ∓ (c - d), if there is one."""
    if p.op != "=" or c.op != "=" or not all(_degree_ok(e) for e in (p.lhs, p.rhs, c.lhs, c.rhs)):
        return None
    try:
        dp = to_sympy(p.lhs) - to_sympy(p.rhs)
        dc = to_sympy(c.lhs) - to_sympy(c.rhs)
    except FaithSieveError:
        return None
    for gap in (sympy.expand(dp - dc), sympy.expand(dp + dc)):
        if gap.is_number and gap.is_real and gap != 0:
            return str(gap)
    return None


def _residue(par: str) -> tuple[int, int]:
    """'even' -> (2, 0), 'odd' -> (2, 1), 'mod 3 1' -> (3, 1)."""
    if par == "even":
        return 2, 0
    if par == "odd":
        return 2, 1
    _, m, r = par.split()
    return int(m), int(r)


def _uncovered(ob: CoverageObligation, val: Fraction) -> bool:
    """Confirmed exactly: no case condition holds at ``val`` and the problem's constraints allow it."""
    env = {ob.variable: val}
    k = 0
    for i, par in enumerate(ob.parity):
        if par:
            mod, rem = _residue(par)
            if val.denominator == 1 and val.numerator % mod == rem:
                return False
        else:
            n = ob.case_sizes[i]
            if all(_holds(r, env) for r in ob.conditions[k : k + n]):
                return False
            k += n
    return all(_holds(r, env) is not False for r in ob.domain_constraints)


MAX_GAP_CANDIDATES = 64


def _gap_outcome(ob: CoverageObligation, val: Fraction) -> Outcome:
    """Refute only a gap the text fixes: a value inside the range the cases themselves mark out.

    The domain of a split is guessed when the problem states it in words. A residue class left
    out may be excluded there ("p prime, p > 3"); a value below or above every case may lie
    outside a range it fixes ("N = 3 and N >= 4" for N >= 3); and when every case boundary is an
    integer, the cases may mean an integer variable, so a gap that holds no integer is not one."""
    note = f"no case covers {ob.variable} = {fmt(val)}"
    if ob.domain_stated:
        return Refuted("z3", {ob.variable: fmt(val)}, f"{note}, and the text fixes the domain")
    if any(ob.parity):
        return Unknown("z3", f"{note}, but the problem's conditions may exclude that residue class (the domain is guessed)")
    bounds = sorted({lit.value for r in ob.conditions for lit in literals(r.lhs) + literals(r.rhs)})[:MAX_GAP_CANDIDATES]
    integer = ob.domain == "integer" or (bool(bounds) and all(b.denominator == 1 for b in bounds))
    candidates: list[Fraction] = list(bounds)
    for a, b in zip(bounds, bounds[1:]):
        if integer:
            lo = math.floor(a)
            candidates += [Fraction(i) for i in range(lo, min(math.ceil(b), lo + MAX_GAP_CANDIDATES) + 1)]
        else:
            candidates.append((a + b) / 2)
    for c in candidates:
        if (not integer or c.denominator == 1) and _uncovered(ob, c):
            return Refuted("z3", {ob.variable: fmt(c)}, f"no case covers {ob.variable} = {fmt(c)}, inside the range the cases mark out")
    why = "the cases cover every integer in their range: the variable may range over the integers" if integer and \
        ob.domain == "real" else "it lies beyond every case: the problem's domain may end before it"
    return Unknown("z3", f"{note}, but {why} (the domain is guessed)")


class Z3Checker:
    """SMT over the reals (integers where known): Γ ∧ ¬G unsat = verified; sat = counterexample."""

    name = "z3"

    def __init__(self, timeout_ms: int = 300, rlimit: int = 2_000_000) -> None:
        self.timeout_ms = timeout_ms
        self.rlimit = rlimit

    def _solver(self, deadline: float, ctx: z3.Context) -> z3.Solver:
        s = z3.Solver(ctx=ctx)
        left_ms = int((deadline - time.monotonic()) * 1000)
        # a deterministic resource limit decides first; the wall-clock timeout is only a safety net
        s.set("rlimit", self.rlimit)
        s.set("timeout", max(1, min(self.timeout_ms * 4, left_ms)))
        return s

    def check(self, ob: Obligation, deadline: float) -> Outcome | None:
        try:
            if isinstance(ob, DerivationObligation):
                return self._derivation(ob, deadline)
            if isinstance(ob, CoverageObligation):
                return self._coverage(ob, deadline)
        except _NoZ3:
            return Unknown(self.name, "outside the fragment translated to SMT")
        except z3.Z3Exception as exc:
            return Unknown(self.name, f"z3 error: {exc}")
        return None

    def _derivation(self, ob: DerivationObligation, deadline: float) -> Outcome:
        # decided before a context is made: translation would stop outside the fragment, or one
        # linear equation is a multiple of the other (z3 answers unsat: the same verdict)
        if outside_smt([*ob.premises, ob.claim]):
            raise _NoZ3
        linear = linear_derivation(ob.premises[0], ob.claim, bool(ob.integer_vars)) if len(ob.premises) == 1 else None
        if linear == "follows":
            return Verified("z3", "follows from the previous relation")
        if linear == "independent":
            return Unknown(self.name, "does not follow from the previous relation alone")
        syms = _Syms(z3.Context())
        prem = [_z3_rel(p, syms) for p in ob.premises]
        goal = _z3_rel(ob.claim, syms)
        ints = [z3.IsInt(syms[v]) for v in ob.integer_vars if v in syms]
        s = self._solver(deadline, syms.ctx)
        s.add(*prem, *ints, z3.Not(goal))
        r1 = s.check()
        if r1 == z3.unsat:
            return Verified("z3", "follows from the previous relation")
        witness = _model_values(s.model(), syms) if r1 == z3.sat else None
        s2 = self._solver(deadline, syms.ctx)
        s2.add(*prem, *ints, goal)
        r2 = s2.check()
        if r2 == z3.unsat and witness is not None:
            # confirm exactly: the witness satisfies the premises and falsifies the claim
            if all(_holds(p, witness) for p in ob.premises) and _holds(ob.claim, witness) is False:
                if ints and self._consistent_over_reals(ob, deadline):
                    return Unknown(self.name, "contradicts its premises only if the variables are integers "
                                              "(the domain is guessed from the problem's words)")
                cx = {k: fmt(v) for k, v in witness.items()}
                cx["premise"] = "; ".join(str(p) for p in ob.premises)
                return Refuted("z3", cx, "contradicts the relation it is derived from (no value satisfies both)")
        if r2 == z3.unsat and witness is None and len(ob.premises) == 1:
            # the premise has no rational solution to show; an exact certificate still exists when
            # the two equations differ by a constant ("x^2 - 4x - 2 = 0" then "x^2 - 4x + 2 = 0")
            c = _constant_gap(ob.premises[0], ob.claim)
            if c is not None:
                return Refuted("sympy-poly", {"premise": str(ob.premises[0]), "premise − claim": c},
                               "the equations differ by a nonzero constant: no value satisfies both")
        if r1 == z3.unknown or r2 == z3.unknown:
            return Unknown(self.name, "solver gave up (timeout or nonlinear)")
        return Unknown(self.name, "does not follow from the previous relation alone")

    def _consistent_over_reals(self, ob: DerivationObligation, deadline: float) -> bool:
        """Premises and claim hold together for some real values (or the solver cannot exclude it)."""
        syms = _Syms(z3.Context())
        s = self._solver(deadline, syms.ctx)
        s.add(*[_z3_rel(p, syms) for p in ob.premises], _z3_rel(ob.claim, syms))
        return s.check() != z3.unsat

    def _coverage(self, ob: CoverageObligation, deadline: float) -> Outcome:
        ctx = z3.Context()
        x = z3.Int(ob.variable, ctx) if ob.domain == "integer" else z3.Real(ob.variable, ctx)
        syms = _Syms(ctx)
        syms[ob.variable] = x
        cases: list[z3.BoolRef] = []
        k = 0
        for i, par in enumerate(ob.parity):
            if par:
                if ob.domain != "integer":
                    raise _NoZ3
                mod, rem = _residue(par)
                cases.append(x % mod == rem)
            else:
                n = ob.case_sizes[i]
                cases.append(z3.And(*[_z3_rel(r, syms) for r in ob.conditions[k : k + n]]))
                k += n
        cons = [_z3_rel(r, syms) for r in ob.domain_constraints]
        s = self._solver(deadline, ctx)
        s.add(*cons, z3.Not(z3.Or(*cases)))
        res = s.check()
        if res == z3.unsat:
            return Verified("z3", "the cases exhaust the domain")
        if res == z3.sat:
            v = s.model().eval(x, model_completion=True)
            if z3.is_int_value(v) or z3.is_rational_value(v):
                val = Fraction(v.as_long()) if z3.is_int_value(v) else Fraction(v.numerator_as_long(), v.denominator_as_long())
                if _uncovered(ob, val):
                    return _gap_outcome(ob, val)
        return Unknown(self.name, "coverage undecided")


# ---------------------------------------------------------------------------
# Registry and portfolio
# ---------------------------------------------------------------------------

CheckerFactory = Callable[..., Checker]
CHECKERS: dict[str, CheckerFactory] = {}


def register_checker(name: str, factory: CheckerFactory) -> None:
    """Register a checker factory under ``name`` (e.g. the Lean backend registers ``lean``)."""
    CHECKERS[name] = factory


register_checker("exact", lambda limits=DEFAULT_LIMITS, **_: ExactChecker(limits))
register_checker("sympy", lambda limits=DEFAULT_LIMITS, **_: SympyChecker(limits))
register_checker("z3", lambda timeout_ms=300, **_: Z3Checker(timeout_ms))


ESCALATED_KINDS = frozenset({"identity", "derivation"})
"""Symbolic obligations (no rounding rule applies to them) that a checker marked
``escalates_unknown`` (Lean) may still decide after a cheaper checker said ``unknown``."""


def run_portfolio(ob: Obligation, checkers: list[Checker], deadline: float) -> Outcome:
    """Cheapest first. A checker answers ``None`` when the obligation is outside what it can
    read (e.g. an irrational value for the exact checker); the first answer wins, so a
    rounding rule that made one checker say ``unknown`` is never overridden by a later one.

    One exception: for an identity or a derivation (symbolic claims, no rounding), an ``unknown``
    is passed on to the later checkers that declare ``escalates_unknown`` (the Lean checker); the
    first of them that decides wins, otherwise the first ``unknown`` stands."""
    first: Outcome | None = None
    for ch in checkers:
        if first is not None and not getattr(ch, "escalates_unknown", False):
            continue
        if time.monotonic() > deadline:
            return first or Unknown("budget", "time budget exhausted")
        with budget(deadline):  # evaluation inside the checker stops at the deadline
            out = ch.check(ob, deadline)
        if out is None:
            continue
        if first is not None and isinstance(out, Unknown):
            continue
        if first is None and isinstance(out, Unknown) and ob.kind.value in ESCALATED_KINDS:
            first = out
            continue
        return out
    return first or Unknown("none", "no checker applies to this obligation")


__all__ = ["CHECKERS", "Checker", "ExactChecker", "SympyChecker", "Z3Checker", "compare_values", "render",
           "register_checker", "run_portfolio"]
