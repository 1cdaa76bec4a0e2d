"""The sign of a closed real expression by interval arithmetic (``mpmath``'s interval context).

An interval evaluation encloses the true value: every operation rounds its lower end down and its
upper end up, and ``π``, ``e``, ``√``, ``exp``, ``log``, ``sin``, ``cos``, ``tan`` are enclosed the
same way. So an interval entirely above (below) zero proves the value positive (negative), whatever
the rounding; an interval that contains zero proves nothing. The evaluation is repeated at
``PRECISIONS`` bits; a value still not separated from zero at the last one gets no sign (a value
that *is* zero, ``cos(π/2)``, never is). Doubles cannot do this: ``√2·10¹⁷ − 141421356237309505`` is
``−0.1198…``, and a double evaluation says ``+16``.

Each evaluation has a private context (mpmath's shared ``iv`` is global state, and the service
checks in threads). The caller bounds the work first: ``faithsieve.lean.domains.closed_sign`` runs
the cost model's bounded double evaluation before this one, so magnitudes and node counts are
already known to be small. A node this evaluator does not know, a function outside its domain on
part of an interval (``√`` of an interval reaching below zero) or an overflow raises ``NoSign``.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from faithsieve.mathtext.ast import BinOp, Call, Const, Expr, Neg, Num, Pow, Var

__all__ = ["PRECISIONS", "NoSign", "interval_sign"]

PRECISIONS = (113, 400, 1600)
"""Bits of working precision tried in turn (quadruple, then about 120 and 480 decimal digits)."""

_FUNCS = ("sqrt", "exp", "ln", "sin", "cos", "tan", "abs", "deg", "percent")
"""One-argument functions enclosed (``deg``: degrees, ``x·π/180``; ``percent``: ``x/100``), besides ``log_b`` with a whole base ``b >= 2`` (``ln x / ln b``); ``log``
without a base is ambiguous and has no sign here."""


class NoSign(Exception):
    """No sign could be proved (the message says why)."""


def interval_sign(e: Expr, env: Mapping[str, Fraction] | None = None) -> int:
    """-1 or 1: the sign of ``e`` proved by interval arithmetic; raises ``NoSign`` when the enclosure
    contains zero at every precision, or cannot be computed."""
    for prec in PRECISIONS:
        value = _Enclose(prec, env or {}).ev(e)
        if value.a > 0:
            return 1
        if value.b < 0:
            return -1
    raise NoSign(f"it is zero or too close to zero to decide (its enclosure at {PRECISIONS[-1]} bits contains 0)")


class _Enclose:
    """One interval evaluation at one precision, in its own context."""

    def __init__(self, prec: int, env: Mapping[str, Fraction]) -> None:
        from mpmath.ctx_iv import MPIntervalContext

        self.ctx = MPIntervalContext()
        self.ctx.prec = prec
        self.env = env

    def num(self, v: Fraction) -> Any:
        return self.ctx.mpf(v.numerator) / self.ctx.mpf(v.denominator)

    def ev(self, e: Expr) -> Any:
        try:
            return self._ev(e)
        except NoSign:
            raise
        except (ArithmeticError, ValueError, TypeError, OverflowError) as exc:  # ComplexResult is a ValueError
            raise NoSign(f"its enclosure cannot be computed ({type(exc).__name__})") from None

    def _ev(self, e: Expr) -> Any:
        if isinstance(e, Num):
            return self.num(e.value)
        if isinstance(e, Var):
            if e.name in self.env:
                return self.num(self.env[e.name])
            if e.name == "e":
                return self.ctx.e
            raise NoSign(f"it has the free variable {e.name}")
        if isinstance(e, Const) and e.name in ("pi", "e"):
            return self.ctx.pi if e.name == "pi" else self.ctx.e
        if isinstance(e, Neg):
            return -self._ev(e.operand)
        if isinstance(e, BinOp) and e.op in "+-*/":
            return self._binop(e.op, self._ev(e.left), self._ev(e.right))
        if isinstance(e, Pow):
            return self._power(e)
        if isinstance(e, Call) and (e.fn in _FUNCS or _whole_base(e.fn)) and len(e.args) == 1:
            return self._call(e.fn, self._ev(e.args[0]))
        raise NoSign(f"interval arithmetic does not cover {type(e).__name__.lower()} nodes like this one")

    def _binop(self, op: str, a: Any, b: Any) -> Any:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if b.a <= 0 <= b.b:
            raise NoSign("a divisor is not separated from zero")
        return a / b

    def _power(self, e: Pow) -> Any:
        ex = e.exponent.value if isinstance(e.exponent, Num) else None
        if ex is not None and ex.denominator == 1:
            return self._ev(e.base) ** int(ex)
        base = self._ev(e.base)
        if base.a <= 0:
            raise NoSign("a power with a non-integer exponent of a base not proved positive")
        return self.ctx.exp(self._ev(e.exponent) * self.ctx.log(base))

    def _call(self, fn: str, x: Any) -> Any:
        c = self.ctx
        if fn == "abs":
            return abs(x)
        if (fn in ("ln", "sqrt") or fn.startswith("log_")) and x.a <= 0:
            if fn == "sqrt" and x.a == 0 and x.b == 0:
                return x
            raise NoSign(f"the argument of {fn} is not proved positive")
        if fn == "tan":
            cos = c.cos(x)
            if cos.a <= 0 <= cos.b:
                raise NoSign("the cosine under a tangent is not separated from zero")
            return c.sin(x) / cos
        if fn == "deg":
            return x * c.pi / 180
        if fn == "percent":
            return x / 100
        if fn.startswith("log_"):
            return c.log(x) / c.log(c.mpf(int(fn[4:])))
        return {"sqrt": c.sqrt, "exp": c.exp, "ln": c.log, "sin": c.sin, "cos": c.cos}[fn](x)


def _whole_base(fn: str) -> bool:
    return fn.startswith("log_") and fn[4:].isdigit() and int(fn[4:]) >= 2
