"""Exact, bounded evaluation of formula ASTs.

``evaluate`` computes with ``fractions.Fraction``. Every potentially huge
operation is checked *before* it runs: exponent size, factorial argument,
binomial size and the bit length of every intermediate result; a ``Meter`` counts
the work against a deterministic step limit. A value the rational field cannot
hold (sqrt 2, pi, sin 1) raises ``NotRational``; the caller may then try
``to_sympy`` (same guards, plus the cost model of ``faithsieve.mathtext.cost`` for
exp, trigonometry, logarithms and irrational powers) instead. The walk over the tree is the one
the magnitude probe uses (``cost.Interpreter``); this module gives it the exact algebra (``_Exact``).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from faithsieve.core.errors import EvaluationLimit, NotRational
from faithsieve.mathtext import numtheory
from faithsieve.mathtext.ast import (
    BinOp,
    Call,
    Const,
    Expr,
    Neg,
    Num,
    Pow,
    Var,
    literals,
    variables,
    walk,
)
from faithsieve.mathtext.cost import (
    CHECKERS,
    DEFAULT_LIMITS,
    Interpreter,
    Limits,
    Meter,
    probe,
)
from faithsieve.runtime.lazy import lazy_module

__all__ = ["CHECKERS", "DEFAULT_LIMITS", "Limits", "Meter", "evaluate", "to_sympy"]

if TYPE_CHECKING:
    import sympy
else:
    sympy = lazy_module("sympy", globals())  # imported on the first symbolic check


def _guard(x: Fraction, lim: Limits, meter: Meter) -> Fraction:
    bits = max(x.numerator.bit_length(), x.denominator.bit_length())
    if bits > lim.max_bits:
        raise EvaluationLimit("intermediate value too large")
    meter.charge_bits(bits)
    return x


def _as_int(x: Fraction, what: str) -> int:
    if x.denominator != 1:
        raise NotRational(f"{what} is not an integer")
    return x.numerator


def _exact_root(x: Fraction, n: int) -> Fraction:
    if n <= 0:
        raise NotRational("bad root index")
    if x < 0:
        if n % 2 == 0:
            raise NotRational("even root of a negative number")
        return -_exact_root(-x, n)

    def iroot(v: int) -> int:
        if v < 2:
            return v
        r = int(round(v ** (1.0 / n))) if v.bit_length() < 1000 else _int_nth_root(v, n)
        for c in (r - 1, r, r + 1):
            if c >= 0 and c**n == v:
                return c
        raise NotRational("not a perfect power")

    return Fraction(iroot(x.numerator), iroot(x.denominator))


def _int_nth_root(v: int, n: int) -> int:
    lo, hi = 0, 1 << (v.bit_length() // n + 1)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if mid**n <= v:
            lo = mid
        else:
            hi = mid - 1
    return lo


def evaluate(e: Expr, env: dict[str, Fraction] | None = None, lim: Limits = DEFAULT_LIMITS,
             meter: Meter | None = None) -> Fraction:
    """Exact rational value of ``e`` with variables from ``env``. ``meter`` counts the work (a
    fresh one with ``lim.max_steps`` when not given)."""
    if meter is None:
        meter = Meter(lim.max_steps)
    return _Exact(env, lim, meter).value(e)


class _Exact(Interpreter[Fraction]):
    """Exact evaluation's algebra over the walk every interpreter shares (``cost.Interpreter``)."""

    __slots__ = ("env",)

    def __init__(self, env: dict[str, Fraction] | None, lim: Limits, meter: Meter) -> None:
        self.lim = lim  # (``Interpreter.__init__``'s fields, set here: one call less on a hot path)
        self.meter = meter
        self.env = env

    def num(self, e: Num) -> Fraction:
        return e.value

    def var(self, e: Var) -> Fraction:
        env = self.env
        if env is not None and e.name in env:
            return env[e.name]
        raise NotRational(f"free variable {e.name}")

    def const(self, e: Const) -> Fraction:
        raise NotRational(f"constant {e.name}")

    def neg(self, a: Fraction) -> Fraction:
        return -a

    def bounded(self, v: Fraction) -> Fraction:
        return _guard(v, self.lim, self.meter)

    def mod(self, a: Fraction, b: Fraction) -> Fraction:
        return _mod(a, b)

    def power(self, base: Fraction, exp: Fraction) -> Fraction:
        return _pow(base, exp, self.lim, self.meter)

    def power_past_limit(self, e: Pow, base: Fraction, exc: EvaluationLimit) -> Fraction:
        if base == 1 or base == 0 and _surely_positive(e.exponent, self.meter):
            return base  # 1^e = 1, and 0^e = 0 for e > 0, however large e is (0^(5^6431564))
        raise exc

    def call(self, e: Call) -> Fraction:
        fn, ev, lim, meter = e.fn, self.value, self.lim, self.meter
        if fn == "percent":
            return ev(e.args[0]) / 100
        if fn == "deg":
            return ev(e.args[0])  # degrees are consistent units outside trigonometry
        if fn == "factorial":
            return _factorial(_as_int(ev(e.args[0]), "factorial argument"), lim, meter)
        if fn == "binom":
            n = _as_int(ev(e.args[0]), "binomial n")
            return _binom(n, _as_int(ev(e.args[1]), "binomial k"), lim, meter)
        if fn == "sqrt":
            return _exact_root(ev(e.args[0]), 2)
        if fn == "root":
            idx = _as_int(ev(e.args[1]), "root index")
            if idx > 64:
                raise EvaluationLimit("root index too large")
            return _exact_root(ev(e.args[0]), idx)
        if fn == "abs":
            return abs(ev(e.args[0]))
        if fn == "floor":
            return Fraction(math.floor(ev(e.args[0])))
        if fn == "ceil":
            return Fraction(math.ceil(ev(e.args[0])))
        if fn in numtheory.FUNCTIONS:
            return numtheory.apply(fn, [ev(a) for a in e.args], lim, meter)
        raise NotRational(f"function {fn}")


def _surely_positive(e: Expr, meter: Meter) -> bool:
    """``e`` is positive by its form alone, without computing it: a positive literal, a power of a
    positive base, or a sum, product or quotient of positive parts (``5^{6431564}``, ``2^{100} + 1``)."""
    meter.charge()
    if isinstance(e, Num):
        return e.value > 0
    if isinstance(e, Pow):
        return _surely_positive(e.base, meter)
    if isinstance(e, BinOp) and e.op in ("+", "*", "/"):
        return _surely_positive(e.left, meter) and _surely_positive(e.right, meter)
    return False


def _mod(a: Fraction, b: Fraction) -> Fraction:
    if a.denominator != 1 or b.denominator != 1:
        raise NotRational("mod of non-integers")
    return Fraction(a.numerator % b.numerator)


def _pow(base: Fraction, exp: Fraction, lim: Limits, meter: Meter) -> Fraction:
    if exp.denominator != 1:
        # rational exponent: exact only for perfect powers
        if abs(exp.numerator) > lim.max_exponent or exp.denominator > 64:
            raise EvaluationLimit("exponent too large")
        root = _exact_root(base, exp.denominator)
        return _pow(root, Fraction(exp.numerator), lim, meter)
    n = exp.numerator
    if abs(n) > lim.max_exponent:
        raise EvaluationLimit("exponent too large")
    if base == 0 and n < 0:
        raise NotRational("division by zero")
    if base in (0, 1):
        return base
    if base == -1:
        return Fraction(1 if n % 2 == 0 else -1)
    bits = max(base.numerator.bit_length(), base.denominator.bit_length())
    if bits * abs(n) > lim.max_bits:
        raise EvaluationLimit("power too large")
    meter.charge_bits(bits * abs(n))
    return base**n


def _factorial(n: int, lim: Limits, meter: Meter) -> Fraction:
    if n < 0:
        raise NotRational("factorial of a negative number")
    if n > lim.max_factorial:
        raise EvaluationLimit("factorial argument too large")
    meter.charge_bits(int(n * math.log2(n + 1)))
    return Fraction(math.factorial(n))


def _binom(n: int, k: int, lim: Limits, meter: Meter) -> Fraction:
    if n < 0 or n > lim.max_binom_n:
        raise EvaluationLimit("binomial n out of range")
    if k < 0 or k > n:
        return Fraction(0)
    k = min(k, n - k)
    if k * max(1, n.bit_length()) > lim.max_bits:
        raise EvaluationLimit("binomial too large")
    meter.charge_bits(k * max(1, n.bit_length()))
    return Fraction(math.comb(n, k))


# ---------------------------------------------------------------------------
# Symbolic conversion (same guards, built node by node: never sympify text)
# ---------------------------------------------------------------------------

class _SympyFuncs(dict[str, str]):
    """Function name -> the sympy function, looked up when used (sympy is imported lazily)."""

    def __getitem__(self, fn: str) -> Any:
        return getattr(sympy, super().__getitem__(fn))


_SYM_FUNCS = _SympyFuncs(sin="sin", cos="cos", tan="tan", ln="log", log="log", exp="exp")


def to_sympy(e: Expr, lim: Limits = DEFAULT_LIMITS, numeric: bool = True) -> sympy.Expr:
    """Build a sympy expression from the AST. Raises ``EvaluationLimit`` on unsafe sizes
    and ``NotRational`` on nodes that have no sympy meaning here.

    With ``numeric`` (the default) the cost model (``faithsieve.mathtext.cost.probe``) checks every
    variable-free part first, so what comes back can be evaluated numerically (``evalf``) at bounded
    cost. ``numeric=False`` skips that probe for callers that only compare structurally (``a - b == 0``)
    and check magnitudes themselves before any numeric evaluation; exact powers stay guarded."""
    if numeric:
        probe(e, lim)
    return _to_sympy(e, lim)


def _to_sympy(e: Expr, lim: Limits) -> sympy.Expr:
    if isinstance(e, Num):
        return sympy.Rational(e.value.numerator, e.value.denominator)
    if isinstance(e, Var):
        return sympy.Symbol(e.name)
    if isinstance(e, Const):
        return {"pi": sympy.pi, "i": sympy.I}.get(e.name, sympy.E)
    if isinstance(e, Neg):
        return -_to_sympy(e.operand, lim)
    if isinstance(e, BinOp):
        return _sympy_binop(e, lim)
    if isinstance(e, Pow):
        _check_power(e, lim)
        return sympy.Pow(_to_sympy(e.base, lim), _to_sympy(e.exponent, lim))
    if isinstance(e, Call):
        return _sympy_call(e, lim)
    raise NotRational("unsupported node")


def _sympy_binop(e: BinOp, lim: Limits) -> sympy.Expr:
    a, b = _to_sympy(e.left, lim), _to_sympy(e.right, lim)
    if e.op == "+":
        return a + b
    if e.op == "-":
        return a - b
    if e.op == "*":
        return a * b
    if b == 0:
        raise NotRational("division by zero")
    if e.op == "mod":
        return sympy.Mod(a, b)
    return a / b


def _check_power(e: Pow, lim: Limits) -> None:
    """The exact guards of a power before sympy builds it: a bounded exponent, a numeric power's size,
    a symbolic exponent only with small literals."""
    exp = e.exponent
    try:
        ev = evaluate(exp, None, lim)
        if abs(ev.numerator) > lim.max_exponent or ev.denominator > 64:
            raise EvaluationLimit("exponent too large")
        base_is_num = not _has_var(e.base)
        if base_is_num and ev.denominator == 1:
            # a numeric power: check the size first
            try:
                evaluate(e, None, lim)
            except NotRational:
                if abs(ev.numerator) > 64:
                    raise EvaluationLimit("power of an irrational base too large") from None
    except NotRational:
        if not _is_small_symbolic(exp):
            raise EvaluationLimit("symbolic exponent") from None


def _sympy_call(e: Call, lim: Limits) -> sympy.Expr:
    if e.fn in ("factorial", "binom", "percent", "floor", "ceil") or e.fn in numtheory.FUNCTIONS:
        return _sympy_exact_call(e, lim)
    if e.fn == "deg":
        return _to_sympy(e.args[0], lim)  # degrees are plain numbers outside trigonometry
    if e.fn == "sqrt":
        return sympy.sqrt(_to_sympy(e.args[0], lim))
    if e.fn == "root":
        idx = evaluate(e.args[1], None, lim)
        if idx.denominator != 1 or not 0 < idx.numerator <= 64:
            raise NotRational("root index")
        return sympy.root(_to_sympy(e.args[0], lim), idx.numerator)
    if e.fn == "abs":
        return sympy.Abs(_to_sympy(e.args[0], lim))
    if e.fn.startswith("log_") and e.fn[4:].isdigit() and 1 < int(e.fn[4:]) < 10**6:
        return sympy.log(_to_sympy(e.args[0], lim), int(e.fn[4:]))  # \log_3 9: a base written as a number
    if e.fn in _SYM_FUNCS:
        arg = e.args[0]
        if e.fn in ("sin", "cos", "tan") and any(isinstance(n, Call) and n.fn == "deg" for n in walk(arg)):
            return _SYM_FUNCS[e.fn](_to_sympy(arg, lim) * sympy.pi / 180)  # sin(45° + 105°)
        return _SYM_FUNCS[e.fn](_to_sympy(arg, lim))
    raise NotRational(f"function {e.fn}")


def _sympy_exact_call(e: Call, lim: Limits) -> sympy.Expr:
    """factorial, binom, percent, floor, ceil: their exact value (a symbolic percent stays a quotient)."""
    try:
        v = evaluate(e, None, lim)
        return sympy.Rational(v.numerator, v.denominator)
    except NotRational:
        pass
    if e.fn == "percent":
        return _to_sympy(e.args[0], lim) / 100
    raise NotRational(f"symbolic {e.fn}")


def _has_var(e: Expr) -> bool:
    return bool(variables(e))


def _is_small_symbolic(e: Expr) -> bool:
    return all(abs(n.value) <= 100 for n in literals(e))
