"""The cost model: what working on a formula may cost, checked before the work runs.

One model serves every caller, each with its own limits (a ``CostProfile``): the checkers
(``CHECKERS``), the service's lanes (``SERVICE``) and the RL grader (``GRADER``). Its parts, all
deterministic (the same input always gets the same answer, whatever the machine's speed):

* **Size.** ``within`` is the one node guard: trees of at most ``max_nodes`` nodes in all, counted
  iteratively and stopping past the limit (the parser bounds nesting depth as it reads).
* **Magnitudes, exactly.** ``probe`` (below) bounds every value before exact or 50-digit work.
* **Magnitudes, in doubles.** ``approx`` evaluates in complex doubles, refusing any value or
  intermediate past ``10^max_magnitude_digits`` and any tree past ``float_nodes`` nodes: the
  grader's guard before ``sympy.N`` and its comparison at sample points.
* **Expansion.** ``expansion_terms`` bounds the terms an expansion builds anywhere in a formula,
  inside function arguments and bars included (sympy's ``expand`` works inside them):
  ``expansion_within`` is the checkers' guard before ``expand``.
* **Lanes.** ``text_cost`` estimates, from a proof's text alone, whether checking it may use the
  whole budget (the service puts such proofs in its heavy lane).

The exact guards:

* **Magnitudes.** ``probe`` walks the variable-free parts of a formula bottom-up and evaluates
  them with mpmath at a small fixed precision. Before it applies a function it checks the size
  of the argument against the limits (``exp`` of at most ``max_bits·ln 2``, trigonometry of an
  argument below ``2^max_bits``, powers whose result has at most ``max_bits`` bits, factorials
  and binomials within ``max_factorial``/``max_binom_n``), and every value it produces must lie
  between ``2^-max_bits`` and ``2^max_bits`` (or be 0). A formula that passes can be built in
  sympy and evaluated at 50 digits without unbounded work; one that does not raises
  ``EvaluationLimit`` and its check ends as ``unknown``. Its walk over the tree (``Interpreter``) is
  the one exact evaluation (``evaluate``) uses, with another algebra.
* **Steps.** A ``Meter`` counts work units (one per node, plus the bits of every large
  intermediate) and raises ``EvaluationLimit`` past ``max_steps``.

A meter also honours the time budget of the check that created it: ``budget(deadline)``
(a context manager; ``run_portfolio`` opens one around each checker) makes every meter built
inside it stop with ``EvaluationLimit`` once ``time.monotonic()`` passes the deadline.
"""

from __future__ import annotations

import cmath
import contextvars
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Generic, TypeVar

import mpmath

from faithsieve.core.errors import EvaluationLimit, FaithSieveError, NotRational
from faithsieve.mathtext.ast import (
    BinOp,
    Calc,
    Call,
    Const,
    Expr,
    Neg,
    Num,
    Pow,
    Var,
    nodes_within,
)


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

_COSTLY_FUNCTIONS = frozenset({"exp", "sin", "cos", "tan", "ln", "log", "binom"})


@dataclass(frozen=True)
class CostProfile:
    """What one caller lets the work on a formula cost."""

    name: str
    limits: Limits = DEFAULT_LIMITS
    """Exact evaluation and the magnitude probe."""
    max_nodes: int = 400
    """The node guard (``within``): larger trees get no symbolic work."""
    float_nodes: int = 200
    """Nodes one double-precision evaluation (``approx``) may visit."""
    max_terms: int = 1000
    """Terms one expansion may build anywhere in a formula (``expansion_within``): sympy's ``expand``
    cannot be interrupted, and a thousand terms cost it about 0.1-0.3 s (``bench/bomb_search.py``),
    within an obligation's default budget."""
    max_magnitude_digits: int = 200
    """``approx`` refuses a value or intermediate past ``10^max_magnitude_digits``."""
    costly_functions: frozenset[str] = _COSTLY_FUNCTIONS
    """Functions whose checking the cost model must bound (the lane estimate: one makes a proof heavy)."""
    max_light_exponent: int = 99
    """Lane estimate: a literal integer exponent past this makes a formula heavy."""
    max_light_power: int = 9
    """Lane estimate: an exponent past this on a base that is not a plain number (a root, an absolute
    value, a sum, a variable) makes a formula heavy (its expansion is costly)."""
    max_operator_run: int = 15
    """Lane estimate: a run of more operator characters than this makes a proof heavy."""
    max_trig_multiple: int = 24
    """``trig_expansion_within``: the largest integer multiple ``k`` of a trigonometric argument (``sin(k·x)``)
    that an expansion with ``trig=True`` may meet (it builds about ``k`` terms)."""
    inline_work: frozenset[str] = frozenset({"exact"})
    """The work a caller that can isolate (the grader's answer comparison) runs in its own thread:
    exact arithmetic on parsed values; ``numeric`` (50-digit), ``symbolic`` (sympy) and ``samples``
    (evaluation at sample points) go where they can be killed."""

    @property
    def max_magnitude(self) -> float:
        return float(f"1e{self.max_magnitude_digits}")


CHECKERS = CostProfile("checkers")
"""The decision procedures (``evaluate``, ``to_sympy``, the symbolic checkers' size guard)."""
GRADER = CostProfile("grader", limits=Limits(max_bits=2048, max_exponent=2048, max_factorial=300, max_binom_n=10_000),
                     max_nodes=80)
"""The RL grader's answers: short, so tighter limits; at most 80 nodes go to sympy."""
SERVICE = CostProfile("service", limits=Limits(max_bits=1024, max_factorial=99, max_binom_n=1000, max_steps=5000),
                      max_nodes=400)
"""The service's lane estimate: a proof past these limits runs in the heavy lane."""
PROFILES = {p.name: p for p in (CHECKERS, GRADER, SERVICE)}


def within(exprs: Iterable[Expr], profile: CostProfile | int) -> bool:
    """The node guard: the trees in ``exprs`` have at most ``profile.max_nodes`` (or the given number)
    nodes in all (counting stops past it)."""
    return nodes_within(exprs, profile if isinstance(profile, int) else profile.max_nodes)



# ---------------------------------------------------------------------------
# The expansion bound
# ---------------------------------------------------------------------------

_NO_BOUND = 10**9
"""``expansion_terms``'s answer past any limit a caller uses."""


def _exponent_size(e: Expr) -> float | None:
    """``|e|`` for an exponent without variables (the magnitude probe's value, at most ``2^max_bits``),
    or None when it has variables or no real value."""
    if type(e) is Num:
        return abs(float(e.value)) if abs(e.value) < _NO_BOUND else float(_NO_BOUND)
    if type(e) is Neg:
        return _exponent_size(e.operand)  # x^{-1}: the same magnitude
    if type(e) is BinOp and e.op == "/" and type(e.left) is Num and type(e.right) is Num and e.right.value:
        # x^{1/2}: the quotient of two written numbers, exactly (what the probe computes, without its setup)
        q = abs(e.left.value / e.right.value)
        return float(q) if q < _NO_BOUND else float(_NO_BOUND)
    try:
        _CTX.prec = DEFAULT_LIMITS.probe_precision
        v = _value(e, DEFAULT_LIMITS, Meter(DEFAULT_LIMITS.max_steps, deadline=None))
    except (EvaluationLimit, NotRational):
        return float(_NO_BOUND)
    if v is None or _CTX.im(v) != 0:
        return None if v is None else float(_NO_BOUND)
    return min(abs(float(_CTX.re(v))), float(_NO_BOUND))


def _power_terms(n: int, k: float) -> int:
    """Terms of ``s^k`` expanded, ``s`` a sum of ``n`` terms: the multinomial count ``C(n+m-1, m)`` for
    ``m = ⌊|k|⌋`` (a negative power expands its denominator; sympy writes ``s^(61/2)`` as ``s^30·√s``
    and ``√(s^60)`` of a positive ``s`` as ``s^30``)."""
    m = math.floor(k)
    if n <= 1 or m == 0:
        return 1
    if m > 4096:
        return _NO_BOUND
    return min(math.comb(n - 1 + m, m), _NO_BOUND)


def _split_cost(terms: int) -> int:
    """What expanding ``exp(s)`` or ``b^s`` costs when ``s`` expands to ``terms`` terms: ``expand``
    splits it into a product of ``terms`` factors and multiplies them out pairwise (``exp((a+b+c+d)^12)``,
    455 terms, took sympy 10 s), so the square."""
    return 1 if terms <= 1 else min(terms * terms, _NO_BOUND)


def _terms_and_work(e: Expr) -> tuple[int, int]:
    """``(terms of e expanded, the largest expansion anywhere inside e)``; recursion as deep as the
    tree (callers bound its size first)."""
    t = type(e)
    if t is Num or t is Var or t is Const:
        return _LEAF  # (the common case first)
    if isinstance(e, BinOp):
        (a, wa), (b, wb) = _terms_and_work(e.left), _terms_and_work(e.right)
        terms = min(a + b if e.op in "+-" else a * b, _NO_BOUND)
        return terms, max(terms, wa, wb)
    if isinstance(e, Neg):
        return _terms_and_work(e.operand)
    if isinstance(e, Pow):
        (base, wb), (ex, we) = _terms_and_work(e.base), _terms_and_work(e.exponent)
        we = max(we, _split_cost(ex))
        k = _exponent_size(e.exponent)
        # an exponent with variables (expand splits it) is cheap only on one term
        terms = (1 if base == 1 else _NO_BOUND) if k is None else _power_terms(base, k)
        return terms, max(terms, wb, we)
    if isinstance(e, Call):
        work = 1
        exp = e.fn == "exp"
        for arg in e.args:
            terms, inner = _terms_and_work(arg)
            work = max(work, terms, inner, _split_cost(terms) if exp else 1)
        return 1, work  # one term outside; expand works inside the arguments
    return _LEAF


_LEAF = (1, 1)


def expansion_terms(e: Expr) -> int:
    """An upper bound on the terms expanding ``e`` builds anywhere in it (at most ``10^9``): sums add,
    products multiply, a power ``k`` of a sum of ``n`` terms has at most ``C(n+k-1, k)``, and a function
    call or a bar (``sqrt``, ``|…|``, ``floor``, ``sin``, …) is one term outside but costs what the
    expansion of its arguments costs, since ``expand`` works inside them (``√((√2+√3+…+√13)^60)``: sympy
    rewrites it as the 30th power of the sum and expands that); ``exp`` of a sum and a power whose
    exponent is a sum cost the square of its terms (``_split_cost``). Call ``within`` first: the walk is as
    deep as the tree."""
    return _terms_and_work(e)[1]


def expansion_within(exprs: Iterable[Expr], profile: CostProfile) -> bool:
    """Every tree in ``exprs`` has at most ``profile.max_nodes`` nodes in all and expands to at most
    ``profile.max_terms`` terms anywhere (``expansion_terms``): the guard before symbolic expansion."""
    exprs = list(exprs)
    return within(exprs, profile) and all(expansion_terms(e) <= profile.max_terms for e in exprs)


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
# The walk every interpreter of a formula shares
# ---------------------------------------------------------------------------

V = TypeVar("V")


class Interpreter(ABC, Generic[V]):
    """One walk over a formula's AST, shared by its interpreters: exact values (``evaluate``'s algebra in
    ``faithsieve.mathtext.evaluate``) and values at probe precision (the magnitude probe, ``_Probe``).

    The walk charges the meter one work unit per node, dispatches on the node's type, evaluates the
    operand of a negation and the operands of an operation and of a power left to right before the
    node's own operation, and refuses a node no interpreter reads (``NotRational("unsupported
    node")``). An interpreter gives each node type its meaning (its algebra). A function call's
    arguments are evaluated by the interpreter (``value``), in the order and as far as the function
    needs (exact ``root`` reads its index first); an exponent past a limit (``EvaluationLimit``) goes to
    ``power_past_limit``, where an interpreter may still know the power (``1^e``). A new node type is
    added here: a branch, and the abstract operation it calls, which every interpreter then defines."""

    __slots__ = ("lim", "meter")

    def __init__(self, lim: Limits, meter: Meter) -> None:
        self.lim = lim
        self.meter = meter

    def value(self, e: Expr) -> V:
        """The value of ``e`` in this interpreter's algebra."""
        self.meter.charge()
        if isinstance(e, Num):
            return self.num(e)
        if isinstance(e, Var):
            return self.var(e)
        if isinstance(e, Const):
            return self.const(e)
        if isinstance(e, Neg):
            return self.neg(self.value(e.operand))
        if isinstance(e, BinOp):
            a = self.value(e.left)
            return self.binop(e.op, a, self.value(e.right))
        if isinstance(e, Pow):
            base = self.value(e.base)
            try:
                exp = self.value(e.exponent)
            except EvaluationLimit as exc:
                return self.power_past_limit(e, base, exc)
            return self.power(base, exp)
        if isinstance(e, Call):
            return self.call(e)
        raise NotRational("unsupported node")

    @abstractmethod
    def num(self, e: Num) -> V: ...

    @abstractmethod
    def var(self, e: Var) -> V: ...

    @abstractmethod
    def const(self, e: Const) -> V: ...

    @abstractmethod
    def neg(self, a: V) -> V: ...

    def binop(self, op: str, a: V, b: V) -> V:
        """``a op b``, ``op`` one of ``+ - * / mod``: the algebra's own operation, its result bounded
        (``bounded``); a division or ``mod`` by zero is refused before ``mod`` is asked."""
        x: Any = a  # the values of every algebra here add, subtract, multiply, divide and compare with 0
        if op == "+":
            return self.bounded(x + b)
        if op == "-":
            return self.bounded(x - b)
        if op == "*":
            return self.bounded(x * b)
        if b == 0:
            raise NotRational("division by zero")
        if op == "mod":
            return self.mod(a, b)
        return self.bounded(x / b)

    @abstractmethod
    def bounded(self, v: V) -> V:
        """``v``, a sum, difference, product or quotient, charged to the meter; ``EvaluationLimit`` when it
        is too large to keep."""

    @abstractmethod
    def mod(self, a: V, b: V) -> V:
        """``a mod b`` (``b`` is not zero)."""

    @abstractmethod
    def power(self, base: V, exp: V) -> V: ...

    def power_past_limit(self, e: Pow, base: V, exc: EvaluationLimit) -> V:
        """``e`` whose exponent stopped with ``exc`` (its base has value ``base``): raise ``exc`` unless the
        power is known without the exponent."""
        raise exc

    @abstractmethod
    def call(self, e: Call) -> V:
        """A function applied to its arguments, evaluated here through ``value``."""


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



class _Probe(Interpreter[Any]):
    """The magnitude probe's algebra: a value at probe precision, or None when it has free variables
    (a None operand makes the node None, unchecked)."""

    __slots__ = ()

    def num(self, e: Num) -> Any:
        return _bounded(_CTX.mpf(e.value.numerator) / e.value.denominator, self.lim, self.meter)

    def var(self, e: Var) -> Any:
        return None

    def const(self, e: Const) -> Any:
        return {"pi": _CTX.pi, "i": _CTX.mpc(0, 1)}.get(e.name, _CTX.e)

    def neg(self, a: Any) -> Any:
        return None if a is None else -a

    def binop(self, op: str, a: Any, b: Any) -> Any:
        if a is None or b is None:
            return None
        return super().binop(op, a, b)

    def bounded(self, v: Any) -> Any:
        return _bounded(v, self.lim, self.meter)

    def mod(self, a: Any, b: Any) -> Any:
        if _CTX.im(a) != 0 or _CTX.im(b) != 0:
            raise NotRational("mod of complex numbers")
        return _bounded(_CTX.fmod(_CTX.re(a), _CTX.re(b)), self.lim, self.meter)

    def power(self, base: Any, exp: Any) -> Any:
        if base is None or exp is None:
            return None
        if base == 0:
            return _CTX.mpf(0)
        size = abs(exp) * max(abs(_log2_abs(base)), 1.0)
        if size > self.lim.max_bits:
            raise EvaluationLimit("power too large")
        return _bounded(_CTX.power(base, exp), self.lim, self.meter)

    def call(self, e: Call) -> Any:
        args = [self.value(a) for a in e.args]
        if any(a is None for a in args):
            return None
        if not args:
            return None
        handler = _PROBE_FUNCS.get(e.fn)
        if handler is None:
            return None  # a function the evaluator does not know: to_sympy refuses it
        return handler(e.fn, args, self.lim, self.meter)


def _value(e: Expr, lim: Limits, meter: Meter) -> Any:
    """The value of ``e`` at probe precision, or None when it has free variables."""
    return _Probe(lim, meter).value(e)


_ProbeFn = Callable[[str, list[Any], Limits, Meter], Any]


def _p_exp(fn: str, args: list[Any], lim: Limits, meter: Meter) -> Any:
    if abs(args[0]) > lim.max_bits * _LN2:
        raise EvaluationLimit("exponential of a too large argument")
    return _bounded(_CTX.exp(args[0]), lim, meter)


def _p_trig(fn: str, args: list[Any], lim: Limits, meter: Meter) -> Any:
    x = args[0]
    # argument reduction needs as many extra bits as the argument has: bounded by max_bits
    if x != 0:
        meter.charge_bits(max(0, int(_log2_abs(x))))
    return _bounded({"sin": _CTX.sin, "cos": _CTX.cos, "tan": _CTX.tan}[fn](x), lim, meter)


def _p_log(fn: str, args: list[Any], lim: Limits, meter: Meter) -> Any:
    if args[0] == 0:
        raise NotRational("logarithm of zero")
    return _bounded(_CTX.log(args[0]), lim, meter)


def _p_sqrt(fn: str, args: list[Any], lim: Limits, meter: Meter) -> Any:
    return _bounded(_CTX.sqrt(args[0]), lim, meter)


def _p_root(fn: str, args: list[Any], lim: Limits, meter: Meter) -> Any:
    if len(args) != 2:
        return None
    n = _int_arg(args[1], "root index")
    if not 0 < n <= 64:
        raise EvaluationLimit("root index too large")
    return _bounded(_CTX.root(args[0], n), lim, meter)


def _p_factorial(fn: str, args: list[Any], lim: Limits, meter: Meter) -> Any:
    n = _int_arg(args[0], "factorial argument")
    if n < 0:
        raise NotRational("factorial of a negative number")
    if n > lim.max_factorial:
        raise EvaluationLimit("factorial argument too large")
    return _bounded(_CTX.factorial(n), lim, meter)


def _p_binom(fn: str, args: list[Any], lim: Limits, meter: Meter) -> Any:
    if len(args) != 2:
        return None
    n, k = _int_arg(args[0], "binomial n"), _int_arg(args[1], "binomial k")
    if n < 0 or n > lim.max_binom_n:
        raise EvaluationLimit("binomial n out of range")
    return _bounded(_CTX.binomial(n, k), lim, meter)


def _p_rounding(fn: str, args: list[Any], lim: Limits, meter: Meter) -> Any:
    x = args[0]
    if _CTX.im(x) != 0:
        raise NotRational(f"{fn} of a complex number")
    return (_CTX.floor if fn == "floor" else _CTX.ceil)(x)


_PROBE_FUNCS: dict[str, _ProbeFn] = {
    "exp": _p_exp, "sin": _p_trig, "cos": _p_trig, "tan": _p_trig, "ln": _p_log, "log": _p_log,
    "sqrt": _p_sqrt, "root": _p_root, "factorial": _p_factorial, "binom": _p_binom,
    "abs": lambda fn, args, lim, meter: abs(args[0]),
    "floor": _p_rounding, "ceil": _p_rounding,
    "percent": lambda fn, args, lim, meter: args[0] / 100,
    "deg": lambda fn, args, lim, meter: args[0],
}


# ---------------------------------------------------------------------------
# The magnitude probe over values sympy built (derivatives, integrals, limits)
# ---------------------------------------------------------------------------

_SYMPY_FUNCS: dict[str, str] = {"exp": "exp", "log": "ln", "sin": "sin", "cos": "cos", "tan": "tan",
                                "factorial": "factorial", "binomial": "binom", "floor": "floor",
                                "ceiling": "ceil"}
"""sympy's function names -> the probe's handlers (``_PROBE_FUNCS``)."""
_SYMPY_MPMATH: frozenset[str] = frozenset({"sec", "csc", "cot", "asin", "acos", "atan", "sinh", "cosh", "tanh",
                                           "asinh", "acosh", "atanh", "sign", "re", "im"})
"""Functions of bounded growth (or whose growth the meter bounds) evaluated by mpmath of the same name."""
_SYMPY_CONSTANTS: dict[str, str] = {"Pi": "pi", "Exp1": "e", "ImaginaryUnit": "j", "EulerGamma": "euler",
                                    "GoldenRatio": "phi", "Catalan": "catalan"}


def probe_sympy(v: Any, lim: Limits = DEFAULT_LIMITS, env: Mapping[str, Any] | None = None) -> None:
    """The magnitude probe (``probe``) over an expression sympy built: every variable-free part (and
    every part whose letters ``env`` gives a value, an exact rational or a sympy number) has a bounded
    numeric cost, checked before it is computed; raise ``EvaluationLimit`` if not. A sympy value is
    evaluated to digits (``evalf``), or at a point (``subs``), only after this answers: a derivative at a
    point is ``exp(exp(exp(100)))``, an integral up to ``e^{e^{e^{10}}}`` is ``exp(exp(10))`` (the
    formula as written says nothing of either). Functions the probe does not bound refuse."""
    _CTX.prec = lim.probe_precision
    meter = Meter(lim.max_steps)
    values = {k: _sympy_value(x, lim, meter, {}) for k, x in (env or {}).items()}
    _sympy_value(v, lim, meter, values)


def _sympy_atom(v: Any, lim: Limits, meter: Meter, env: Mapping[str, Any]) -> Any:
    if isinstance(v, Fraction):
        return _bounded_rational(v.numerator, v.denominator, lim, meter)
    if getattr(v, "is_Rational", False):
        return _bounded_rational(int(v.p), int(v.q), lim, meter)
    if getattr(v, "is_Float", False):
        return _bounded(_CTX.mpf(v), lim, meter)
    if getattr(v, "is_Symbol", False):
        return env.get(str(v))
    name = type(v).__name__
    if name in _SYMPY_CONSTANTS:
        c = _SYMPY_CONSTANTS[name]
        return _CTX.mpc(0, 1) if c == "j" else getattr(_CTX, c)
    if getattr(v, "is_infinite", False) or name in ("NaN", "ComplexInfinity", "Infinity", "NegativeInfinity"):
        raise EvaluationLimit("value is not finite")
    raise EvaluationLimit(f"a value the cost model does not bound ({name})")


def _bounded_rational(p: int, q: int, lim: Limits, meter: Meter) -> Any:
    if max(p.bit_length(), q.bit_length()) > lim.max_bits:
        raise EvaluationLimit("value too large or too small to evaluate")
    return _bounded(_CTX.mpf(p) / q, lim, meter)


def _sympy_value(v: Any, lim: Limits, meter: Meter, env: Mapping[str, Any]) -> Any:
    """The value of the sympy expression ``v`` at probe precision, or None when it has free letters."""
    meter.charge()
    args = getattr(v, "args", ())
    if isinstance(v, Fraction) or not args:
        return _sympy_atom(v, lim, meter, env)
    vals = [_sympy_value(a, lim, meter, env) for a in args]
    if any(a is None for a in vals):
        return None
    if v.is_Add:
        return _bounded(_CTX.fsum(vals), lim, meter)
    if v.is_Mul:
        out = _CTX.mpf(1)
        for a in vals:
            out = _bounded(out * a, lim, meter)
        return out
    if v.is_Pow:
        base, ex = vals
        if base == 0:
            return _CTX.mpf(0)
        if abs(ex) * max(abs(_log2_abs(base)), 1.0) > lim.max_bits:
            raise EvaluationLimit("power too large")
        return _bounded(_CTX.power(base, ex), lim, meter)
    return _sympy_call(type(v).__name__, vals, lim, meter)


def _sympy_call(name: str, vals: list[Any], lim: Limits, meter: Meter) -> Any:
    fn = _SYMPY_FUNCS.get(name)
    if fn is not None:
        return _PROBE_FUNCS[fn](fn, vals, lim, meter)
    if name == "Abs":
        return abs(vals[0])
    if name in _SYMPY_MPMATH and len(vals) == 1:
        if name in ("sinh", "cosh") and abs(vals[0]) > lim.max_bits * _LN2:
            raise EvaluationLimit("hyperbolic function of a too large argument")
        if name in ("sec", "csc", "cot") and vals[0] != 0:
            meter.charge_bits(max(0, int(_log2_abs(vals[0]))))
        try:
            return _bounded(getattr(_CTX, name)(vals[0]), lim, meter)
        except (ValueError, ZeroDivisionError) as exc:
            raise NotRational(f"{name} is undefined here") from exc
    raise EvaluationLimit(f"a function the cost model does not bound ({name})")


_TRIG_NAMES = frozenset({"sin", "cos", "tan", "sec", "csc", "cot", "sinh", "cosh", "tanh"})


def trig_expansion_within(v: Any, profile: CostProfile) -> bool:
    """sympy's ``expand(trig=True)`` writes ``sin(k·x)`` as a polynomial of degree ``k`` in ``sin x`` and
    ``cos x`` (``tan(1000000x)``: a million terms, gigabytes): every trigonometric function in ``v`` has an
    argument whose integer multiples are at most ``profile.max_trig_multiple`` (a rational coefficient
    counts its numerator), and ``v`` has at most ``profile.max_nodes`` nodes."""
    stack, seen = [v], 0
    while stack:
        n = stack.pop()
        seen += 1
        if seen > profile.max_nodes:
            return False
        args = getattr(n, "args", ())
        if type(n).__name__ in _TRIG_NAMES and args:
            for term in getattr(args[0], "args", ()) if args[0].is_Add else (args[0],):
                coeff = term.as_coeff_Mul()[0]
                if coeff.is_Rational and max(abs(int(coeff.p)), int(coeff.q)) > profile.max_trig_multiple:
                    return False
        stack.extend(args)
    return True


# ---------------------------------------------------------------------------
# The double-precision probe
# ---------------------------------------------------------------------------

_DOUBLE_FUNCS: dict[str, Callable[[complex], complex]] = {
    "sin": cmath.sin, "cos": cmath.cos, "tan": cmath.tan, "exp": cmath.exp, "ln": cmath.log, "log": cmath.log,
    "sqrt": cmath.sqrt, "sec": lambda z: 1 / cmath.cos(z), "csc": lambda z: 1 / cmath.sin(z),
    "cot": lambda z: 1 / cmath.tan(z), "arcsin": cmath.asin, "arccos": cmath.acos, "arctan": cmath.atan,
    "sinh": cmath.sinh, "cosh": cmath.cosh, "tanh": cmath.tanh,
}


class _TooBig(FaithSieveError):
    """A value past the profile's magnitude, or a node the double evaluator does not know."""

    def __init__(self) -> None:
        super().__init__("too large to evaluate in doubles")


def approx(e: Expr, env: Mapping[str, complex] | None = None, profile: CostProfile = GRADER) -> complex | None:
    """The value of ``e`` as a complex double (variables from ``env``), or None when it is too large
    (past ``10^profile.max_magnitude_digits``, or more than ``profile.float_nodes`` nodes visited),
    undefined, or uses a node this evaluator does not know. Every operation is a constant-time double
    (or complex) operation."""
    try:
        return _Doubles(env or {}, profile).ev(e)
    except (_TooBig, EvaluationLimit, ArithmeticError, ValueError, TypeError, RecursionError):
        return None


def close(a: complex, b: complex, rel: float = 1e-9) -> bool:
    """Equal to a relative tolerance (absolute near zero)."""
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


def _odd_root(x: float) -> bool:
    if x == 0:
        return False
    inv = 1 / x
    return abs(inv - round(inv)) < 1e-12 and int(round(inv)) % 2 == 1


class _Doubles:
    """One double-precision evaluation: the environment, the magnitude bound and the node meter."""

    __slots__ = ("big", "big_int", "env", "log_big", "meter")

    def __init__(self, env: Mapping[str, complex], profile: CostProfile) -> None:
        self.env = env
        self.big = profile.max_magnitude
        self.big_int = 10**profile.max_magnitude_digits
        self.log_big = math.log(self.big)
        self.meter = Meter(profile.float_nodes, deadline=None)

    def chk(self, z: complex) -> complex:
        if not (abs(z.real) <= self.big and abs(z.imag) <= self.big):  # also catches nan
            raise _TooBig
        return z

    def ev(self, e: Expr) -> complex:
        self.meter.charge()
        if isinstance(e, Num):
            v = e.value
            if abs(v.numerator) > self.big_int * v.denominator:
                raise _TooBig
            return complex(float(v))
        if isinstance(e, Var):
            if e.name in self.env:
                return self.env[e.name]
            if e.name == "e":
                return complex(math.e)
            raise _TooBig
        if isinstance(e, Const):
            return {"pi": complex(math.pi), "i": 1j}.get(e.name, complex(math.e))
        if isinstance(e, Neg):
            return -self.ev(e.operand)
        if isinstance(e, BinOp):
            return self.binop(e)
        if isinstance(e, Pow):
            return self.power(self.ev(e.base), self.ev(e.exponent))
        if isinstance(e, Call):
            return self.call(e)
        raise _TooBig

    def binop(self, e: BinOp) -> complex:
        a, b = self.ev(e.left), self.ev(e.right)
        if e.op == "+":
            return self.chk(a + b)
        if e.op == "-":
            return self.chk(a - b)
        if e.op == "*":
            return self.chk(a * b)
        if e.op == "/":
            return self.chk(a / b)
        raise _TooBig

    def power(self, base: complex, ex: complex) -> complex:
        if base == 0:
            return 0j if ex.real > 0 else self.chk(complex(math.inf))
        # |base^ex| = exp(Re(ex·log base)): refuse before computing a huge power
        if (ex * cmath.log(base)).real > self.log_big:
            raise _TooBig
        if ex.imag == 0 and base.imag == 0 and float(ex.real).is_integer():
            return self.chk(complex(base.real ** int(ex.real)))
        if ex.imag == 0 and base.imag == 0 and base.real < 0 and _odd_root(ex.real):
            return self.chk(complex(-((-base.real) ** ex.real)))  # (-8)^{1/3} = -2, as written
        return self.chk(base**ex)

    def call(self, e: Call) -> complex:
        args = [self.ev(a) for a in e.args]
        fn = e.fn
        if len(args) == 2 and fn == "root":
            # root(a, n) is a^(1/n), evaluated (and counted) as that tree
            return self.ev(Pow(e.args[0], BinOp("/", Num(Fraction(1), "1", 0), e.args[1])))
        if len(args) != 1:
            raise _TooBig
        x = args[0]
        if fn == "percent":
            return x / 100
        if fn == "abs":
            return complex(abs(x))
        if fn == "deg":
            return x * math.pi / 180
        if fn == "factorial" and x.imag == 0 and 0 <= x.real <= 170:
            return complex(math.gamma(x.real + 1))
        if fn.startswith("log_"):
            return self.chk(cmath.log(x) / math.log(self.log_base(fn[4:])))
        return self.function(fn, x)

    def log_base(self, base: str) -> float:
        b = float(base) if base.replace(".", "", 1).isdigit() else None
        if b is None or b <= 0 or b == 1:
            raise _TooBig
        return b

    def function(self, fn: str, x: complex) -> complex:
        f = _DOUBLE_FUNCS.get(fn)
        if f is None:
            raise _TooBig
        if fn == "exp" and x.real > self.log_big:
            raise _TooBig
        if fn in ("sinh", "cosh") and abs(x.real) > self.log_big:
            raise _TooBig
        return self.chk(f(x))


# ---------------------------------------------------------------------------
# The lane estimate: a proof's cost from its text alone
# ---------------------------------------------------------------------------

_OPERATOR_CHARS = frozenset("=<>+*/^-")
_COST_HINTS = ("^", "!", "|", "√", "∛", "∜", "⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹",
               "exp", "sin", "cos", "tan", "ln", "log", "binom", "sqrt", "root", "abs", "floor", "ceil",
               "'", "′", "int", "lim", "frac{d", "∫", "d/d")
"""What a costly formula must contain (a power, a factorial, a function name, a calculus notation: a prime,
an integral, a limit, a derivative) unless it is long."""


def _quick_light(text: str, profile: CostProfile) -> bool:
    """Certainly cheap without reading it: short enough that its formulas have at most
    ``profile.max_nodes`` nodes (a character makes at most two) and their literals fit the bit limit
    (a digit is under 4 bits), with no power, factorial or function name in it."""
    return (2 * len(text) + 1 <= profile.max_nodes and 4 * len(text) <= profile.limits.max_bits
            and not any(h in text for h in _COST_HINTS))


def formula_cost(e: Expr, profile: CostProfile = SERVICE) -> str | None:
    """Why checking ``e`` may use the whole budget under ``profile`` (``"size"``, ``"expansion"``, ``"function"``,
    ``"exponent"``, ``"power"``, ``"magnitude"``, ``"calculus"``), or None when it is cheap. Calculus (a
    derivative, an integral, a limit, ``f'(a)``) is always costly: its value is built by sympy, and only
    that value, not the formula as written, says what evaluating it costs (``probe_sympy``)."""
    if not within((e,), profile):
        return "size"
    if expansion_terms(e) > profile.max_terms:
        return "expansion"
    stack = [e]
    while stack:
        n = stack.pop()
        if isinstance(n, Call):
            if n.fn in profile.costly_functions or n.fn.startswith("log_"):
                return "function"
            if n.fn.startswith("fn:") and n.fn.endswith("'"):
                return "calculus"
            stack.extend(n.args)
        elif isinstance(n, Calc):
            return "calculus"
        elif isinstance(n, Pow):
            why = _power_cost(n, profile)
            if why is not None:
                return why
            stack.extend((n.base, n.exponent))
        elif isinstance(n, BinOp):
            stack.extend((n.left, n.right))
        elif isinstance(n, Neg):
            stack.append(n.operand)
    try:
        probe(e, profile.limits)
    except EvaluationLimit:
        return "magnitude"
    except NotRational:
        pass  # undefined somewhere (a division by zero): the check says so at once
    return None


def _power_cost(n: Pow, profile: CostProfile) -> str | None:
    exp = n.exponent.operand if isinstance(n.exponent, Neg) else n.exponent
    if not (isinstance(exp, Num) and exp.value.denominator == 1):
        return None
    k = abs(exp.value.numerator)
    if k > profile.max_light_exponent:
        return "exponent"
    if k > profile.max_light_power and not isinstance(n.base, Num):
        return "power"
    return None


def _operator_run(text: str, longest: int) -> bool:
    """More than ``longest`` operator characters in a row (the reader's own work on them)."""
    run = 0
    for ch in text:
        if ch in _OPERATOR_CHARS:
            run += 1
            if run > longest:
                return True
        else:
            run = 0
    return False


def text_cost(text: str, profile: CostProfile = SERVICE) -> str | None:
    """Why checking a step written as ``text`` may use the whole budget (``"operators"``, a function
    the reader names, or ``formula_cost``'s reason for one of its formulas), or None when it is cheap.
    Reads the text the way the checkers do (``extract_formulas``); nothing is evaluated past the
    profile's limits."""
    from faithsieve.mathtext.formulas import extract_formulas, find_segments
    from faithsieve.mathtext.lexer import FUNC, tokenize_latex, tokenize_plain

    if _operator_run(text, profile.max_operator_run):
        return "operators"
    if _quick_light(text, profile):
        return None
    if any(name in text for name in profile.costly_functions):  # else no token can name one: one reading only
        for seg in find_segments(text):
            tokenize = tokenize_latex if seg.latex else tokenize_plain
            for tok in tokenize(text[seg.start:seg.end]):
                if tok.kind == FUNC and (tok.value in profile.costly_functions or tok.value.startswith("log")):
                    return "function"
    for f in extract_formulas(text):
        for e in f.chain.exprs:
            why = formula_cost(e, profile)
            if why is not None:
                return why
    return None
