"""Bounded floating-point evaluation of an answer's expression tree.

Two uses, both cheap and bounded whatever the input:

* the magnitude guard: before an arbitrary-precision evaluation (``sympy.N``) the value is
  estimated in doubles; a value or an intermediate past ``MAX_MAGNITUDE`` (``\\exp(\\exp(\\exp(64)))``,
  ``10^{10^{10}}``) is never evaluated to many digits — that evaluation can take hours;
* identities that rational sample points cannot show (``\\tan^2 y + 1`` vs ``\\sec^2 y``): both sides
  are compared in doubles at fixed points, to a relative tolerance.

Every operation is a constant-time double (or complex) operation on a tree whose size the caller
bounds; overflow, domain errors and unknown nodes give None.
"""

from __future__ import annotations

import cmath
import math
from collections.abc import Mapping
from fractions import Fraction

from faithsieve.mathtext.ast import BinOp, Call, Const, Expr, Neg, Num, Pow, Var

MAX_MAGNITUDE = 1e200
"""A value or intermediate larger than this (in absolute value) is 'too large to evaluate'."""
MAX_NODES = 200

_FUNCS = {
    "sin": cmath.sin, "cos": cmath.cos, "tan": cmath.tan, "exp": cmath.exp, "ln": cmath.log, "log": cmath.log,
    "sqrt": cmath.sqrt, "sec": lambda z: 1 / cmath.cos(z), "csc": lambda z: 1 / cmath.sin(z),
    "cot": lambda z: 1 / cmath.tan(z), "arcsin": cmath.asin, "arccos": cmath.acos, "arctan": cmath.atan,
    "sinh": cmath.sinh, "cosh": cmath.cosh, "tanh": cmath.tanh,
}


class _TooBig(Exception):
    pass


def approx(e: Expr, env: Mapping[str, complex] | None = None) -> complex | None:
    """The value of ``e`` as a complex double (variables from ``env``), or None when it is too large,
    undefined, or uses a node this evaluator does not know."""
    budget = [MAX_NODES]
    try:
        return _ev(e, env or {}, budget)
    except (_TooBig, ArithmeticError, ValueError, TypeError, RecursionError):
        return None


def _chk(z: complex) -> complex:
    if not (abs(z.real) <= MAX_MAGNITUDE and abs(z.imag) <= MAX_MAGNITUDE):  # also catches nan
        raise _TooBig
    return z


def _ev(e: Expr, env: Mapping[str, complex], budget: list[int]) -> complex:
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig
    if isinstance(e, Num):
        v = e.value
        if abs(v.numerator) > 10**200 * v.denominator:
            raise _TooBig
        return complex(float(v))
    if isinstance(e, Var):
        if e.name in env:
            return env[e.name]
        if e.name == "e":
            return complex(math.e)
        raise _TooBig
    if isinstance(e, Const):
        return {"pi": complex(math.pi), "i": 1j}.get(e.name, complex(math.e))
    if isinstance(e, Neg):
        return -_ev(e.operand, env, budget)
    if isinstance(e, BinOp):
        a, b = _ev(e.left, env, budget), _ev(e.right, env, budget)
        if e.op == "+":
            return _chk(a + b)
        if e.op == "-":
            return _chk(a - b)
        if e.op == "*":
            return _chk(a * b)
        if e.op == "/":
            return _chk(a / b)
        raise _TooBig
    if isinstance(e, Pow):
        base, ex = _ev(e.base, env, budget), _ev(e.exponent, env, budget)
        if base == 0:
            return 0j if ex.real > 0 else _chk(complex(math.inf))
        # |base^ex| = exp(Re(ex·log base)): refuse before computing a huge power
        if (ex * cmath.log(base)).real > math.log(MAX_MAGNITUDE):
            raise _TooBig
        if ex.imag == 0 and base.imag == 0 and float(ex.real).is_integer():
            return _chk(complex(base.real ** int(ex.real)))
        if ex.imag == 0 and base.imag == 0 and base.real < 0 and _odd_root(ex.real):
            return _chk(complex(-((-base.real) ** ex.real)))  # (-8)^{1/3} = -2, as written
        return _chk(base**ex)
    if isinstance(e, Call):
        args = [_ev(a, env, budget) for a in e.args]
        fn = e.fn
        if fn == "percent" and len(args) == 1:
            return args[0] / 100
        if fn in ("abs",) and len(args) == 1:
            return complex(abs(args[0]))
        if fn == "deg" and len(args) == 1:
            return args[0] * math.pi / 180
        if fn == "root" and len(args) == 2:
            return _ev(Pow(e.args[0], BinOp("/", Num(Fraction(1), "1", 0), e.args[1])), env, budget)
        if fn == "factorial" and len(args) == 1 and args[0].imag == 0 and 0 <= args[0].real <= 170:
            return complex(math.gamma(args[0].real + 1))
        if fn.startswith("log_") and len(args) == 1:
            base = fn[4:]
            b = float(base) if base.replace(".", "", 1).isdigit() else None
            if b is None or b <= 0 or b == 1:
                raise _TooBig
            return _chk(cmath.log(args[0]) / math.log(b))
        f = _FUNCS.get(fn)
        if f is not None and len(args) == 1:
            if fn == "exp" and args[0].real > math.log(MAX_MAGNITUDE):
                raise _TooBig
            if fn in ("sinh", "cosh") and abs(args[0].real) > math.log(MAX_MAGNITUDE):
                raise _TooBig
            return _chk(f(args[0]))
    raise _TooBig


def _odd_root(x: float) -> bool:
    if x == 0:
        return False
    inv = 1 / x
    return abs(inv - round(inv)) < 1e-12 and int(round(inv)) % 2 == 1


def close(a: complex, b: complex, rel: float = 1e-9) -> bool:
    """Equal to a relative tolerance (absolute near zero)."""
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))
