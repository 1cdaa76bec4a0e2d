"""Comparing two read answers as values (``answers_equal``).

Bounded in the caller's thread: every arbitrary-precision evaluation is preceded by a double-precision
magnitude check (``faithsieve.grading.approx``) and runs at a fixed precision; with a ``deadline``
the comparison stops between steps once it has passed and raises ``AnswerTimeout``.
"""

from __future__ import annotations

import random
import re
import threading
import time
from fractions import Fraction

from faithsieve.core.errors import FaithSieveError
from faithsieve.grading.approx import approx, close
from faithsieve.grading.normalize import LIMITS, normalize_answer
from faithsieve.grading.parse import ParsedAnswer, parse_answer
from faithsieve.grading.stated_answer import DEFAULT_POLICY, AnswerPolicy
from faithsieve.mathtext.ast import BinOp, Expr, Neg, Num, Pow, variables
from faithsieve.mathtext.cost import GRADER, within
from faithsieve.mathtext.evaluate import evaluate, to_sympy

MAX_SYMPY_NODES = GRADER.max_nodes
_POINTS = 6
_TL = threading.local()


class AnswerTimeout(FaithSieveError):
    """The comparison passed its deadline (raised only when ``answers_equal`` was given one)."""

    code = "answer_timeout"

    def __init__(self, message: str = "the answer comparison passed its deadline", detail: object | None = None) -> None:
        super().__init__(message, detail)


class NeedsIsolation(FaithSieveError):
    """A ``light`` comparison reached a step whose cost is not tiny (sympy, evaluation at sample points):
    the caller runs the comparison again where it can be killed (a worker process)."""

    code = "needs_isolation"

    def __init__(self, message: str = "the answer comparison needs a worker process", detail: object | None = None) -> None:
        super().__init__(message, detail)


def _heavy(work: str) -> None:
    """About to do ``work`` (``numeric``, ``symbolic``, ``samples``): in a ``light`` comparison, work the
    grader's cost profile does not run inline (``GRADER.inline_work``) asks for isolation."""
    if getattr(_TL, "light", False) and work not in GRADER.inline_work:
        raise NeedsIsolation


def _tick() -> None:
    deadline = getattr(_TL, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        raise AnswerTimeout


def _finite(e: Expr) -> bool:
    """Small enough (value and every intermediate) to evaluate to many digits: the magnitude guard."""
    return approx(e) is not None

# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------

def _readings(a: ParsedAnswer, policy: AnswerPolicy) -> list[Fraction]:
    assert a.value is not None
    if a.percent_base is None:
        return [a.value]
    if policy.percent == "value":
        return [a.value]
    if policy.percent == "strip":
        return [a.percent_base]
    return [a.value, a.percent_base]


def _terminating(x: Fraction) -> bool:
    d = x.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d == 1


def _rounded_match(dec: ParsedAnswer, other: ParsedAnswer) -> bool:
    """A decimal with >= 2 places against a value with no finite decimal expansion."""
    if dec.decimals is None or dec.decimals < 2 or dec.value is None:
        return False
    half_ulp = Fraction(1, 2 * 10**dec.decimals)
    if other.kind == "number" and other.value is not None:
        if _terminating(other.value):
            return False
        return abs(other.value - dec.value) <= half_ulp
    if other.kind == "expr" and other.expr is not None and not variables(other.expr):
        v = _numeric(other.expr)
        if v is None:
            return False
        return abs(v - dec.value) <= half_ulp
    return False


def _sympy(e: Expr):  # type: ignore[no-untyped-def]
    if not within((e,), GRADER):
        return None
    try:
        # structural: every numeric evaluation here is preceded by the ``_finite`` magnitude check
        return to_sympy(e, LIMITS, numeric=False)
    except (FaithSieveError, ArithmeticError, ValueError, TypeError, RecursionError):
        return None


def _numeric(e: Expr) -> Fraction | None:
    """A closed real value to ~40 digits, as a Fraction (None if not real or not computable)."""
    _heavy("numeric")
    import sympy

    if not _finite(e):
        return None
    s = _sympy(e)
    if s is None:
        return None
    _tick()
    try:
        v = sympy.N(s, 45)
        if not v.is_real or not v.is_finite:
            return None
        return Fraction(str(v))
    except (ArithmeticError, ValueError, TypeError, RecursionError):
        return None


def _closed_equal(a: Expr, b: Expr) -> bool:
    _heavy("symbolic")
    import sympy

    sa, sb = _sympy(a), _sympy(b)
    if sa is None or sb is None:
        return False
    _tick()
    try:
        d = sa - sb
        if d == 0:
            return True
        if not (_finite(a) and _finite(b)):
            return False  # never evaluate 10^{10^{10}} or exp(exp(exp(64))) to 50 digits
        dv = sympy.N(d, 50)
        mag = sympy.N(abs(sa), 20)
        if not (dv.is_number and mag.is_number) or not dv.is_finite:
            return False
        return bool(abs(dv) <= sympy.Float(10, 60) ** -40 * max(mag, 1))
    except (ArithmeticError, ValueError, TypeError, RecursionError):
        return False


def _exact_samples(a: Expr, b: Expr, names: list[str], seed: int):  # type: ignore[no-untyped-def]
    """(a, b) evaluated exactly at fixed pseudo-random rational points (those where both evaluate)."""
    rng = random.Random(seed)
    for _ in range(_POINTS * 3):
        _tick()
        env = {n: Fraction(rng.randint(-97, 97), rng.randint(1, 13)) for n in names}
        try:
            yield evaluate(a, env, LIMITS), evaluate(b, env, LIMITS)
        except (FaithSieveError, ArithmeticError, ValueError, RecursionError):
            continue


def _complex_equal(a: Expr, b: Expr) -> bool:
    """Closed forms in the imaginary unit ``i`` (``1+2i`` and ``i(2-i)``): equal when their values, with
    ``i`` the square root of -1, agree in complex doubles (``close``: relative 1e-9)."""
    _heavy("samples")
    env = {"i": 1j}
    va, vb = approx(a, env), approx(b, env)
    return va is not None and vb is not None and close(va, vb)


def _even(e: Expr) -> bool:
    """The exponent is even as written: an even integer, or a product with an even integer factor (``2n``,
    ``n \\cdot 4``: the letter an integer, as an exponent written so is read)."""
    if isinstance(e, Num):
        return e.value.denominator == 1 and e.value.numerator % 2 == 0
    return isinstance(e, BinOp) and e.op == "*" and (_even(e.left) or _even(e.right))


def _same_powers(a: Expr, b: Expr) -> bool | None:
    """Powers with one integer exponent compared by their bases, never expanded: ``(x-a)^{6000}`` and
    ``(a-x)^{6000}`` are equal (the exponent is even and the bases are opposite), and so are ``(x-a)^{2n}``
    and ``(a-x)^{2n}`` (one symbolic exponent written with an even factor); None when ``a`` and ``b``
    are not two such powers (or their exponent is small enough to sample)."""
    if not (isinstance(a, Pow) and isinstance(b, Pow)):
        return None
    if not (isinstance(a.exponent, Num) and isinstance(b.exponent, Num)):
        if a.exponent != b.exponent or not variables(a.exponent) or variables(a.exponent) & (variables(a.base) | variables(b.base)):
            return None
        if _identity_equal(a.base, b.base):
            return True
        return _even(a.exponent) and _identity_equal(a.base, Neg(b.base))
    n = a.exponent.value
    if n != b.exponent.value or n.denominator != 1 or abs(n) <= LIMITS.max_exponent // 64:
        return None
    if _identity_equal(a.base, b.base):
        return True
    return n % 2 == 0 and _identity_equal(a.base, Neg(b.base))


def _identity_equal(a: Expr, b: Expr) -> bool:
    """Equal as functions: agree at fixed pseudo-random rational points (bounded exact arithmetic)."""
    _heavy("samples")
    names = sorted(variables(a) | variables(b))
    if len(names) > 8:
        return False
    powers = _same_powers(a, b)
    if powers is not None:
        return powers
    agreed = 0
    for va, vb in _exact_samples(a, b, names, 1729):
        if va != vb:
            return False
        agreed += 1
        if agreed >= _POINTS:
            return True
    return agreed == 0 and _float_identity(a, b, names)


def _float_identity(a: Expr, b: Expr, names: list[str]) -> bool:
    """No rational point could be evaluated exactly (trigonometry, logarithms, fractional powers): compare
    in doubles at fixed positive points (where real powers and roots agree with their principal values);
    equal when they agree to 1e-9 wherever both are defined (at least 4 points)."""
    rng = random.Random(4099)
    agreed = 0
    for _ in range(_POINTS * 3):
        _tick()
        env = {n: complex(rng.uniform(0.1, 2.9)) for n in names}
        va, vb = approx(a, env), approx(b, env)
        if va is None or vb is None:
            continue
        if not close(va, vb):
            return False
        agreed += 1
        if agreed >= _POINTS:
            break
    return agreed >= 4


def _scalar_equal(p: ParsedAnswer, r: ParsedAnswer, policy: AnswerPolicy) -> bool:
    if p.kind == "number" and r.kind == "number":
        if set(_readings(p, policy)) & set(_readings(r, policy)):
            return True
        return policy.decimal_rounding and (_rounded_match(p, r) or _rounded_match(r, p))
    if p.kind in ("number", "expr") and r.kind in ("number", "expr"):
        assert p.expr is not None and r.expr is not None
        names = variables(p.expr) | variables(r.expr)
        if names == {"i"}:
            return _complex_equal(p.expr, r.expr)
        if names:
            return _identity_equal(p.expr, r.expr)
        if _closed_equal(p.expr, r.expr):
            return True
        return policy.decimal_rounding and (_rounded_match(p, r) or _rounded_match(r, p))
    return p.norm == r.norm and bool(p.norm)


def _set_equal(p: ParsedAnswer, r: ParsedAnswer, policy: AnswerPolicy) -> bool:
    """Equal as sets: every element of each is equal to some element of the other (order and
    repeats do not matter)."""
    for xs, ys in ((p.items, r.items), (r.items, p.items)):
        for a in xs:
            _tick()
            if not any(_equal(a, b, policy) for b in ys):
                return False
    return True


def _ratio(a: Expr, b: Expr) -> Fraction | None:
    """The constant ``c != 0`` with ``a = c·b`` as functions of their variables (``34x+45y-20z+100`` and its
    negation: -1), found at fixed rational points (a polynomial identity test, exact); None when there is
    none, or fewer than ``_POINTS`` points could be evaluated."""
    _heavy("samples")
    names = sorted(variables(a) | variables(b))
    if not names or len(names) > 8:
        return None
    ratio: Fraction | None = None
    agreed = 0
    for va, vb in _exact_samples(a, b, names, 2718):
        if va == 0 or vb == 0:
            if va != vb:
                return None
            continue
        if ratio is None:
            ratio = va / vb
        elif va / vb != ratio:
            return None
        agreed += 1
        if agreed >= _POINTS:
            return ratio
    return None


def _equation_equal(a: Expr, b: Expr) -> bool:
    """Two equations ``a = 0`` and ``b = 0`` are the same when ``a = c·b`` for a constant ``c != 0``
    (``y = 1 - x`` and ``x + y = 1``; ``2x+4y=6`` and ``x+2y=3``)."""
    return _ratio(a, b) is not None


def _relation_equal(p: ParsedAnswer, r: ParsedAnswer) -> bool:
    """Two inequalities ``a > 0`` and ``b > 0`` (each read larger side minus smaller) are the same when
    ``a = c·b`` for a constant ``c > 0`` and the operators agree (``x^2 <= 2x`` and ``2x >= x^2``; never
    ``x < 1`` and ``x <= 1``); ``a != 0`` and ``b != 0`` for any constant ``c != 0``."""
    if p.brackets != r.brackets or p.expr is None or r.expr is None:
        return False
    if p.expr == r.expr:
        return True
    c = _ratio(p.expr, r.expr)
    return c is not None and (c > 0 or p.brackets == "!=")


def _ray(p: ParsedAnswer) -> ParsedAnswer | None:
    """A relation affine in one variable (``2x > 4``, ``-3x \\le 9``) read as the interval of its solutions
    (``(2, \\infty)``, ``[-3, \\infty)``), as ``x > 2`` is read: the same inequality scaled by a constant, or
    with its sides moved, is the same set. None when it is not one (exact values at three points)."""
    if p.kind != "relation" or p.brackets not in ("<", "<=") or p.expr is None:
        return None
    names = variables(p.expr)
    if len(names) != 1:
        return None
    _heavy("samples")
    (x,) = names
    try:
        e0, e1, e2, e7 = (evaluate(p.expr, {x: Fraction(v)}, LIMITS) for v in (0, 1, 2, 7))
    except (FaithSieveError, ArithmeticError, ValueError, RecursionError):
        return None
    slope = e1 - e0
    if slope == 0 or e2 - e1 != slope or e7 - e0 != 7 * slope:
        return None
    root = -e0 / slope
    k = str(root.numerator) if root.denominator == 1 else f"\\frac{{{root.numerator}}}{{{root.denominator}}}"
    strict = p.brackets == "<"
    text = (("(" if strict else "[") + k + ", \\infty)") if slope > 0 else ("(-\\infty, " + k + (")" if strict else "]"))
    return parse_answer(text)


def _equal(p: ParsedAnswer, r: ParsedAnswer, policy: AnswerPolicy) -> bool:
    if _equal_as_read(p, r, policy):
        return True
    if "relation" in (p.kind, r.kind) and "seq" in (p.kind, r.kind):
        rel, other = (p, r) if p.kind == "relation" else (r, p)
        ray = _ray(rel)
        if ray is not None and _equal_as_read(ray, other, policy):
            return True
    # a computation written out against a single value: its last side ("7 - (-3) + 1 = 11" vs "11")
    # (never against a reference that fixes a variable: "2 + 3 = 5" does not say that x = 5)
    for a, b in ((p, r), (r, p)):
        if (a.tail is not None and b.tail is None and b.kind != "equation" and not b.labelled
                and _equal_as_read(a.tail, b, policy)):
            return True
    return False


def _intervals(s: ParsedAnswer) -> bool:
    """A union, or a list of what can only be intervals (``x < 2 \\text{ or } x > 3``: rays, closed or
    half-open brackets; a list of open pairs ``(1, 2), (3, 4)`` may be points): the same set either way."""
    if s.brackets == "cup":
        return True
    if s.brackets != "" or not all(i.kind == "seq" and i.brackets in ("()", "[]", "[)", "(]") for i in s.items):
        return False
    return any(i.brackets != "()" or "infty" in i.norm for i in s.items)


def _equal_as_read(p: ParsedAnswer, r: ParsedAnswer, policy: AnswerPolicy) -> bool:
    if p.kind == "set" and r.kind == "set":
        if (p.brackets == "cup") != (r.brackets == "cup") and not (_intervals(p) and _intervals(r)):
            return False
        return _set_equal(p, r, policy)
    if {p.kind, r.kind} == {"set", "seq"}:
        s, q = (p, r) if p.kind == "set" else (r, p)
        # a list as written against a tuple: "1, 3" is "(1, 3)", in that order
        if s.brackets == "" and q.brackets == "()" and len(s.items) == len(q.items):
            return all(_equal(a, b, policy) for a, b in zip(p.items, r.items, strict=True))
        return False
    if p.kind == "seq" or r.kind == "seq":
        if p.kind != r.kind:
            return p.norm == r.norm and bool(p.norm)
        if p.brackets != r.brackets or len(p.items) != len(r.items):
            return False
        return all(_equal(a, b, policy) for a, b in zip(p.items, r.items, strict=True))
    if p.kind == "set" or r.kind == "set":
        return p.norm == r.norm and bool(p.norm)
    if p.kind == "relation" or r.kind == "relation":
        return p.kind == r.kind and _relation_equal(p, r)
    if p.kind == "equation" or r.kind == "equation":
        a = p.expr if p.kind == "equation" else p.equation
        b = r.expr if r.kind == "equation" else r.equation
        return a is not None and b is not None and _equation_equal(a, b)
    if p.equation is not None and r.equation is not None and _equation_equal(p.equation, r.equation):
        return True  # "y = 1 - x" and "x = 1 - y"
    return _scalar_equal(p, r, policy)


def _same_text(a: str, b: str) -> bool:
    """Identical once normalized (spacing aside): equal before anything else runs, whatever the reader makes
    of them (``2^((1/5.1)*t)`` on both sides)."""
    if a == b:
        return bool(a.strip())
    ka = re.sub(r"\s+", "", normalize_answer(a, strip_label=False))
    return bool(ka) and ka == re.sub(r"\s+", "", normalize_answer(b, strip_label=False))


def answers_equal(predicted: str, reference: str, policy: AnswerPolicy = DEFAULT_POLICY,
                  deadline: float | None = None, light: bool = False) -> bool:
    """Whether two final answers denote the same value (see the module docstring). ``deadline``
    (``time.monotonic()`` seconds): past it, raise ``AnswerTimeout`` instead of finishing. ``light``:
    decide only what exact arithmetic on the parsed values decides at once (numbers, text, tuples and
    sets of them); raise ``NeedsIsolation`` at the first step that needs more."""
    if not predicted or not reference:
        return False
    if _same_text(predicted, reference):
        return True
    _TL.deadline = deadline
    _TL.light = light
    try:
        p, r = parse_answer(predicted), parse_answer(reference)
        _tick()
        return _equal(p, r, policy)
    finally:
        _TL.deadline = None
        _TL.light = False
