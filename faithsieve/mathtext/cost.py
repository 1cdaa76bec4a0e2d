"""The evaluator's cost model: what a numeric evaluation may cost, checked before it runs.

Two guards, both deterministic (the same input always gets the same answer, whatever the
machine's speed):

* **Magnitudes.** ``probe`` walks the variable-free parts of a formula bottom-up and evaluates
  them with mpmath at a small fixed precision. Before it applies a function it checks the size
  of the argument against the limits (``exp`` of at most ``max_bits·ln 2``, trigonometry of an
  argument below ``2^max_bits``, powers whose result has at most ``max_bits`` bits, factorials
  and binomials within ``max_factorial``/``max_binom_n``), and every value it produces must lie
  between ``2^-max_bits`` and ``2^max_bits`` (or be 0). A formula that passes can be built in
  sympy and evaluated at 50 digits without unbounded work; one that does not raises
  ``EvaluationLimit`` and its check ends as ``unknown``.
* **Steps.** A ``Meter`` counts work units (one per node, plus the bits of every large
  intermediate) and raises ``EvaluationLimit`` past ``max_steps``.

A meter also honours the time budget of the check that created it: ``budget(deadline)``
(a context manager; ``run_portfolio`` opens one around each checker) makes every meter built
inside it stop with ``EvaluationLimit`` once ``time.monotonic()`` passes the deadline.
"""

from __future__ import annotations

import contextvars
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import mpmath

from faithsieve.core.errors import EvaluationLimit, NotRational
from faithsieve.mathtext.ast import BinOp, Call, Const, Expr, Neg, Num, Pow, Var


@dataclass(frozen=True)
class Limits:
    """Size guards for evaluation."""

    max_bits: int = 20_000
    """Largest bit length of any numerator/denominator produced; numeric values must also lie
    within ``2^±max_bits``."""
    max_exponent: int = 10_000
    """Largest absolute integer exponent."""
    max_factorial: int = 1_000
    """Largest factorial argument."""
    max_binom_n: int = 100_000
    """Largest n in binom(n, k)."""
    max_steps: int = 20_000
    """Work units one evaluation may use (a unit per node, plus one per 64 bits of each large
    intermediate); past it the evaluation stops with ``EvaluationLimit``."""
    probe_precision: int = 64
    """Bits of precision of the magnitude probe (``probe``)."""


DEFAULT_LIMITS = Limits()

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("faithsieve_eval_deadline", default=None)
_CLOCK_EVERY = 1024
"""Steps between two looks at the clock."""


@contextmanager
def budget(deadline: float | None) -> Iterator[None]:
    """Meters created inside the block stop once ``time.monotonic()`` passes ``deadline``."""
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


@dataclass
class Meter:
    """Counts the work of one evaluation against a step limit (and the current time budget)."""

    limit: int
    steps: int = 0
    deadline: float | None = field(default_factory=_DEADLINE.get)
    _next_clock: int = _CLOCK_EVERY

    def charge(self, units: int = 1) -> None:
        """Add ``units`` of work; raise ``EvaluationLimit`` past the limit or the deadline."""
        self.steps += units
        if self.steps > self.limit:
            raise EvaluationLimit(f"evaluation step limit reached ({self.limit} steps)")
        if self.deadline is not None and self.steps >= self._next_clock:
            self._next_clock = self.steps + _CLOCK_EVERY
            if time.monotonic() > self.deadline:
                raise EvaluationLimit("time budget exhausted during evaluation")

    def charge_bits(self, bits: int) -> None:
        """Charge for producing a value of ``bits`` bits."""
        self.charge(1 + bits // 64)


# ---------------------------------------------------------------------------
# The magnitude probe
# ---------------------------------------------------------------------------

_CTX: Any = mpmath.MPContext()
_LN2 = math.log(2)


def probe(e: Expr, lim: Limits = DEFAULT_LIMITS, meter: Meter | None = None) -> None:
    """Check that every variable-free part of ``e`` has a bounded numeric cost; raise
    ``EvaluationLimit`` if not. Never computes anything whose size was not checked first."""
    _CTX.prec = lim.probe_precision
    _value(e, lim, meter if meter is not None else Meter(lim.max_steps))


def _log2_abs(v: Any) -> float:
    return float(_CTX.log(abs(v), 2))


_MPF = type(_CTX.mpf(1))


def _bounded(v: Any, lim: Limits, meter: Meter) -> Any:
    if type(v) is _MPF and lim.max_bits >= 64:
        _sign, man, exp, bc = v._mpf_
        if man and -62 <= exp + bc <= 63:
            # 2^(exp+bc-1) <= |v| < 2^(exp+bc): |log2 |v|| < 64, so the charge below is one unit
            # and the size is within max_bits (no logarithm needed)
            meter.charge(1)
            return v
    if not _CTX.isfinite(v):
        raise EvaluationLimit("value is not finite")
    if v != 0:
        size = _log2_abs(v)
        if abs(size) > lim.max_bits:
            raise EvaluationLimit("value too large or too small to evaluate")
        meter.charge_bits(int(abs(size)))
    return v


def _int_arg(v: Any, what: str) -> int:
    if _CTX.im(v) != 0 or _CTX.re(v) != _CTX.floor(_CTX.re(v)):
        raise NotRational(f"{what} is not an integer")
    return int(_CTX.re(v))


def _value(e: Expr, lim: Limits, meter: Meter) -> Any:
    """The value of ``e`` at probe precision, or None when it has free variables."""
    meter.charge()
    if isinstance(e, Num):
        return _bounded(_CTX.mpf(e.value.numerator) / e.value.denominator, lim, meter)
    if isinstance(e, Var):
        return None
    if isinstance(e, Const):
        return {"pi": _CTX.pi, "i": _CTX.mpc(0, 1)}.get(e.name, _CTX.e)
    if isinstance(e, Neg):
        a = _value(e.operand, lim, meter)
        return None if a is None else -a
    if isinstance(e, BinOp):
        a, b = _value(e.left, lim, meter), _value(e.right, lim, meter)
        if a is None or b is None:
            return None
        if e.op == "+":
            return _bounded(a + b, lim, meter)
        if e.op == "-":
            return _bounded(a - b, lim, meter)
        if e.op == "*":
            return _bounded(a * b, lim, meter)
        if b == 0:
            raise NotRational("division by zero")
        if e.op == "mod":
            if _CTX.im(a) != 0 or _CTX.im(b) != 0:
                raise NotRational("mod of complex numbers")
            return _bounded(_CTX.fmod(_CTX.re(a), _CTX.re(b)), lim, meter)
        return _bounded(a / b, lim, meter)
    if isinstance(e, Pow):
        base, exp = _value(e.base, lim, meter), _value(e.exponent, lim, meter)
        if base is None or exp is None:
            return None
        if base == 0:
            return _CTX.mpf(0)
        size = abs(exp) * max(abs(_log2_abs(base)), 1.0)
        if size > lim.max_bits:
            raise EvaluationLimit("power too large")
        return _bounded(_CTX.power(base, exp), lim, meter)
    if isinstance(e, Call):
        return _call(e, lim, meter)
    raise NotRational("unsupported node")


def _call(e: Call, lim: Limits, meter: Meter) -> Any:
    args = [_value(a, lim, meter) for a in e.args]
    if any(a is None for a in args):
        return None
    if not args:
        return None
    x = args[0]
    fn = e.fn
    if fn == "exp":
        if abs(x) > lim.max_bits * _LN2:
            raise EvaluationLimit("exponential of a too large argument")
        return _bounded(_CTX.exp(x), lim, meter)
    if fn in ("sin", "cos", "tan"):
        # argument reduction needs as many extra bits as the argument has: bounded by max_bits
        if x != 0:
            meter.charge_bits(max(0, int(_log2_abs(x))))
        return _bounded({"sin": _CTX.sin, "cos": _CTX.cos, "tan": _CTX.tan}[fn](x), lim, meter)
    if fn in ("ln", "log"):
        if x == 0:
            raise NotRational("logarithm of zero")
        return _bounded(_CTX.log(x), lim, meter)
    if fn == "sqrt":
        return _bounded(_CTX.sqrt(x), lim, meter)
    if fn == "root" and len(args) == 2:
        n = _int_arg(args[1], "root index")
        if not 0 < n <= 64:
            raise EvaluationLimit("root index too large")
        return _bounded(_CTX.root(x, n), lim, meter)
    if fn == "factorial":
        n = _int_arg(x, "factorial argument")
        if n < 0:
            raise NotRational("factorial of a negative number")
        if n > lim.max_factorial:
            raise EvaluationLimit("factorial argument too large")
        return _bounded(_CTX.factorial(n), lim, meter)
    if fn == "binom" and len(args) == 2:
        n, k = _int_arg(x, "binomial n"), _int_arg(args[1], "binomial k")
        if n < 0 or n > lim.max_binom_n:
            raise EvaluationLimit("binomial n out of range")
        return _bounded(_CTX.binomial(n, k), lim, meter)
    if fn == "abs":
        return abs(x)
    if fn in ("floor", "ceil"):
        if _CTX.im(x) != 0:
            raise NotRational(f"{fn} of a complex number")
        return (_CTX.floor if fn == "floor" else _CTX.ceil)(x)
    if fn == "percent":
        return x / 100
    if fn == "deg":
        return x
    return None  # a function the evaluator does not know: to_sympy refuses it

