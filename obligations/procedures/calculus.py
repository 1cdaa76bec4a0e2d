"""Values of calculus (``Calc`` nodes: derivatives, definite integrals, limits) checked with sympy.

A relation with a ``Calc`` node on a side is decided here: each node is computed with sympy from our
AST (never from text), inside bounds set before any symbolic work, and the sides are compared.

- The bounds: the claim within the checkers' node and expansion guards (the cost model's ``CHECKERS``
  profile), every power of a variable expression at most ``MAX_DEGREE``; an integral or a limit only of
  a body in a class sympy computes quickly (``_tame``: at most ``MAX_BODY_TERMS`` terms, each a
  polynomial of small degree times at most two of exp, sin, cos, log, a root, of arguments linear in
  the variable; rational functions with a denominator of small degree). Outside them, ``unknown``.
- ``e`` is Euler's number inside a calculus claim (``e^{2x}``, ``\\int_1^e``) unless it is the bound
  variable.
- A derivative that is still a function of its variable is compared with the other side as a function:
  equal after cancelling (``verified``), or different at an exact positive point (``refuted``: the
  difference evaluated there to 50 digits). Set equal to a constant (``f'(x) = 0``) it is an equation to
  solve, never refuted.
- Values (integrals, limits, derivatives at a point) compare exactly: equal after expansion, or to 40
  digits, or within the precision shown; a limit or integral that sympy finds infinite, undefined,
  oscillating or leaves unevaluated is ``unknown``.

The method of every outcome is ``sympy-calculus``; a refutation gives the computed value.
"""

from __future__ import annotations

import time
from fractions import Fraction
from typing import TYPE_CHECKING

from faithsieve.obligations.kinds.models import Outcome, Refuted, Unknown, Verified

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import (
    BinOp,
    Calc,
    Call,
    Const,
    Expr,
    Neg,
    Num,
    Pow,
    Rel,
    Var,
    literals,
    nodes_within,
    of_type,
    shown_tolerance,
    substitute,
    variables,
    walk,
)
from faithsieve.mathtext.cost import (
    CHECKERS,
    expansion_within,
    probe_sympy,
    trig_expansion_within,
)
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits, evaluate, to_sympy
from faithsieve.mathtext.literals import show_number
from faithsieve.runtime.lazy import lazy_module

if TYPE_CHECKING:
    import sympy
else:
    sympy = lazy_module("sympy", globals())

METHOD = "sympy-calculus"
MAX_DEGREE = 24
"""The largest exponent of a variable expression inside a calculus claim."""
MAX_BODY_NODES = 60
"""The largest body of an integral or a limit (nodes of our AST)."""
MAX_BODY_TERMS = 12
"""The most terms the expanded body of an integral or a limit may have."""
MAX_TAME_DEGREE = 3
"""The largest polynomial degree beside a transcendental factor in an integral's or a limit's body (two
transcendental factors only with none)."""
MAX_DENOMINATOR_DEGREE = 2
"""The largest degree of a rational body's denominator (partial fractions of higher degrees are slow)."""
MAX_RESULT_OPS = 400
"""The largest computed value (sympy's ``count_ops``) compared further."""
_POINTS = (Fraction(1, 3), Fraction(7, 5), Fraction(2), Fraction(5, 2), Fraction(3, 7), Fraction(11, 3))
"""Exact positive points where two functions of one variable are compared."""


def has_calculus(c: Rel) -> bool:
    """A side of ``c`` holds a calculus value (a ``Calc`` node)."""
    return bool(of_type(c.lhs, Calc) or of_type(c.rhs, Calc))


class _Undecided(Exception):
    """The computation left the bounds or the class this module decides: the reason, for ``unknown``."""


def _euler(e: Expr, bound: frozenset[str]) -> Expr:
    """``e`` as Euler's number (unless a calculus node binds the letter)."""
    return e if "e" in bound else substitute(e, {"e": Const("e")})


def _bound_names(c: Rel) -> frozenset[str]:
    return frozenset(n.var for side in (c.lhs, c.rhs) for n in walk(side) if type(n) is Calc)


def _powers_ok(e: Expr) -> bool:
    for x in walk(e):
        if isinstance(x, Pow) and variables(x.base) - {"e"}:
            try:
                k = evaluate(x.exponent)
            except FaithSieveError:
                return False
            if abs(k) > MAX_DEGREE:
                return False
    return True


class CalculusCheck:
    """One calculus claim, converted and compared under ``lim`` before ``deadline``."""

    def __init__(self, lim: Limits = DEFAULT_LIMITS, deadline: float | None = None) -> None:
        self.lim = lim
        self.deadline = deadline
        self.count = 0

    # -- public -------------------------------------------------------
    def decide(self, claim: Rel, env: dict[str, Fraction] | None = None) -> Outcome:
        try:
            return self._decide(claim, env or {})
        except _Undecided as exc:
            return Unknown(METHOD, str(exc))
        except FaithSieveError as exc:
            return Unknown(METHOD, f"{exc.code}: {exc.message}")
        except (ValueError, TypeError, ZeroDivisionError, RecursionError, OverflowError, NotImplementedError,
                AttributeError) as exc:
            return Unknown(METHOD, f"sympy could not decide: {type(exc).__name__}")

    # -- steps --------------------------------------------------------
    def _decide(self, claim: Rel, env: dict[str, Fraction]) -> Outcome:
        if claim.op not in ("=", "~"):
            return Unknown(METHOD, "only equalities of calculus values are checked")
        if not nodes_within((claim.lhs, claim.rhs), CHECKERS.max_nodes) or not expansion_within(
                (claim.lhs, claim.rhs), CHECKERS) or not (_powers_ok(claim.lhs) and _powers_ok(claim.rhs)):
            return Unknown(METHOD, "formula too large for symbolic calculus")
        for mine, other in ((claim.lhs, claim.rhs), (claim.rhs, claim.lhs)):
            if type(mine) is Calc and mine.op == "int" and not mine.args:
                return self._antiderivative(mine, other, env)
        bound = _bound_names(claim)
        values: dict[str, Expr] = {k: Num(v, show_number(v), 0) for k, v in env.items()}
        sides = []
        for side in (claim.lhs, claim.rhs):
            s = substitute(side, values) if values else side  # a known value never enters a bound variable
            sides.append(_euler(s, bound))
        a, b = (self._value(s) for s in sides)
        calc_side = 0 if any(type(n) is Calc for n in walk(sides[0])) else 1
        free = a.free_symbols | b.free_symbols
        if free:
            return self._functions(a, b, calc_side, free, claim)
        return self._numbers(a, b, claim)

    def _judged(self, v: sympy.Expr, at: dict[str, sympy.Expr] | None = None) -> None:
        """The cost model judges a value sympy built (at the point ``at`` gives its letter) before it is
        evaluated to digits or at the point: past its bounds, ``unknown`` at once."""
        try:
            probe_sympy(v, self.lim, at)
        except FaithSieveError as exc:
            raise _Undecided(f"the computed value is too large to evaluate ({exc.message})") from exc

    def _fits(self, v: sympy.Expr, at: dict[str, sympy.Expr]) -> bool:
        """``v`` at a sample point is within the cost model's bounds (a point past them says nothing)."""
        try:
            self._judged(v, at)
        except _Undecided:
            return False
        return True

    def _tick(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise _Undecided("time budget exhausted")

    def _value(self, e: Expr) -> sympy.Expr:
        """The sympy value of ``e``: each calculus node computed (innermost first), the rest converted
        by ``to_sympy`` under the same guards as every symbolic check."""
        found: dict[str, sympy.Expr] = {}
        plain = self._lift(e, found)
        out = to_sympy(plain, self.lim, numeric=False)
        return out.subs(found) if found else out

    def _lift(self, e: Expr, found: dict[str, sympy.Expr]) -> Expr:
        """``e`` with every calculus node replaced by a placeholder letter whose value is in ``found``."""
        if type(e) is Calc:
            name = f"calc__{len(found)}_{self.count}"
            self.count += 1
            found[name] = self._calc(e)
            return Var(name)
        if isinstance(e, BinOp):
            return BinOp(e.op, self._lift(e.left, found), self._lift(e.right, found))
        if isinstance(e, Neg):
            return Neg(self._lift(e.operand, found))
        if isinstance(e, Pow):
            return Pow(self._lift(e.base, found), self._lift(e.exponent, found))
        if isinstance(e, Call):
            if e.fn == "infty":
                raise _Undecided("infinity outside a limit or a bound")
            return Call(e.fn, tuple(self._lift(a, found) for a in e.args))
        return e

    def _point(self, e: Expr) -> sympy.Expr:
        if isinstance(e, Call) and e.fn == "infty":
            return sympy.oo
        if isinstance(e, Neg) and isinstance(e.operand, Call) and e.operand.fn == "infty":
            return -sympy.oo
        v = self._value(e)
        if v.free_symbols:
            raise _Undecided("a bound or a point that is not a number")
        self._judged(v)
        return v

    def _calc(self, e: Calc) -> sympy.Expr:
        self._tick()
        x = sympy.Symbol(e.var)
        body = self._value(e.body)
        if e.op == "diff":
            out = sympy.diff(body, x)
            if e.args:
                point = self._point(e.args[0])
                self._judged(out, {e.var: point})
                out = out.subs(x, point)
        elif e.op == "int":
            if not e.args:
                raise _Undecided("an indefinite integral inside a larger expression")
            lo, hi = (self._point(a) for a in e.args)
            self._tame(e, body, x)
            out = sympy.integrate(body, (x, lo, hi))
            if out.has(sympy.Integral):
                raise _Undecided("sympy left the integral unevaluated")
        elif e.op == "lim":
            self._tame(e, body, x)
            point = self._point(e.args[0])
            direction = e.side or ("+-" if point.is_finite else "+")
            out = sympy.limit(body, x, point, direction)
            if out.has(sympy.Limit) or isinstance(out, sympy.AccumBounds) or out.has(sympy.AccumBounds):
                raise _Undecided("sympy found no limit")
        else:
            raise _Undecided(f"unknown calculus operation {e.op}")
        self._tick()
        if out.has(sympy.S.NaN, sympy.S.ComplexInfinity, sympy.S.Infinity, sympy.S.NegativeInfinity):
            raise _Undecided("the value is infinite or undefined")
        if sympy.count_ops(out) > MAX_RESULT_OPS:
            raise _Undecided("computed value too large to compare")
        self._judged(out)
        return out

    def _tame(self, e: Calc, body: sympy.Expr, x: sympy.Symbol) -> None:
        """The body of an integral or a limit is in the class sympy computes quickly (module docstring)."""
        if not nodes_within((e.body,), MAX_BODY_NODES):
            raise _Undecided("body too large for symbolic calculus")
        other = body.free_symbols - {x}
        if other:
            raise _Undecided("the body has letters besides its variable")
        terms = sympy.Add.make_args(sympy.expand(body))
        if len(terms) > MAX_BODY_TERMS:
            raise _Undecided("body has too many terms")
        for term in terms:
            self._tame_term(term, x)

    def _tame_term(self, term: sympy.Expr, x: sympy.Symbol) -> None:
        functions = roots = 0
        poly_degree = 0
        denominator_degree = 0
        for f in sympy.Mul.make_args(term):
            if not f.has(x):
                continue
            base, k = (f.base, f.exp) if isinstance(f, sympy.Pow) else (f, sympy.Integer(1))
            if base == x or (base.is_polynomial(x) and not k.has(x)):
                if not k.is_Integer:
                    functions += 1  # a root of a polynomial
                    roots += 1
                    if sympy.degree(base, x) > 1:
                        raise _Undecided("root of a nonlinear expression")
                    continue
                deg = sympy.degree(base, x) * abs(int(k))
                if k > 0:
                    poly_degree += deg
                else:
                    denominator_degree += deg
                continue
            if base == sympy.E and k.is_polynomial(x) and sympy.degree(k, x) <= 1:
                functions += 1
                continue
            if isinstance(base, (sympy.sin, sympy.cos, sympy.exp, sympy.log, sympy.tan)) and k.is_Integer and 0 < k <= 2:
                arg = base.args[0]
                if not (arg.is_polynomial(x) and sympy.degree(arg, x) <= 1):
                    raise _Undecided("a function of a nonlinear argument")
                functions += int(k)
                continue
            raise _Undecided("a factor outside the class computed symbolically")
        if roots and (functions > 1 or poly_degree or denominator_degree):
            raise _Undecided("a root beside other factors: outside the class computed symbolically")
        if functions > 2 or (functions == 2 and (poly_degree or denominator_degree)) or (
                functions and (poly_degree > MAX_TAME_DEGREE or denominator_degree > 1)):
            raise _Undecided("body outside the class computed symbolically")
        if poly_degree > MAX_DEGREE or denominator_degree > MAX_DENOMINATOR_DEGREE:
            raise _Undecided("rational body of too high a degree")

    # -- antiderivatives ----------------------------------------------
    def _antiderivative(self, integral: Calc, claimed: Expr, env: dict[str, Fraction]) -> Outcome:
        """``\\int f\\,dx = F + C``: ``F`` is differentiated and ``F'`` compared with ``f`` as functions of
        ``x`` (the antiderivative itself is never computed). ``C`` is the constant of integration: one
        added letter of ``_CONSTANTS`` that the integrand does not use, or none."""
        x_name = integral.var
        if x_name in env:
            return Unknown(METHOD, "an antiderivative in a variable with a known value")
        if any(type(n) is Calc for n in walk(integral.body)) or any(type(n) is Calc for n in walk(claimed)):
            return Unknown(METHOD, "calculus inside an antiderivative claim")
        f_expr = _euler(integral.body, frozenset({x_name}))
        F_expr = _euler(_drop_constant(claimed, variables(integral.body)), frozenset({x_name}))
        if variables(f_expr) - {x_name} or variables(F_expr) - {x_name}:
            return Unknown(METHOD, "an antiderivative with letters besides its variable")
        if x_name not in variables(F_expr):
            return Unknown(METHOD, "the claimed antiderivative does not depend on the variable")
        x = sympy.Symbol(x_name, real=True)  # an antiderivative on a real interval: |x|' is sign(x)
        f, F = (to_sympy(v, self.lim, numeric=False).subs(sympy.Symbol(x_name), x) for v in (f_expr, F_expr))
        self._tick()
        dF = sympy.diff(F, x)
        if dF.has(sympy.Derivative) or sympy.count_ops(dF) > MAX_RESULT_OPS:
            return Unknown(METHOD, "the claimed antiderivative's derivative is not computed in closed form")
        self._tick()
        num, _den = sympy.fraction(sympy.together(dF - f))
        if sympy.expand(num) == 0 or (num.has(sympy.sin, sympy.cos, sympy.tan) and trig_expansion_within(num, CHECKERS)
                                      and sympy.expand(num, trig=True) == 0):
            return Verified(METHOD, f"the derivative of the claimed antiderivative is {_show(dF)}, the integrand")
        for p in _POINTS:
            self._tick()
            q = sympy.Rational(p.numerator, p.denominator)
            if not all(self._fits(v, {x_name: q}) for v in (f, dF, F)):
                continue
            fv, dv, Fv = (v.subs(x, q).evalf(50) for v in (f, dF, F))
            if not all(v.is_real and v.is_finite for v in (fv, dv, Fv)):
                continue  # a point outside the domain of a side says nothing
            if abs(dv - fv) > sympy.Float(10) ** -30 * max(abs(fv), 1):
                cx = {x_name: str(p), "integrand": str(fv.evalf(12)), "derivative of the claim": str(dv.evalf(12)),
                      "derivative": _show(dF)}
                return Refuted(METHOD, cx, "the derivative of the claimed antiderivative differs from the integrand")
        return Unknown(METHOD, "the derivative equals the integrand at sample points, not shown identical")

    # -- comparisons --------------------------------------------------
    def _numbers(self, a: sympy.Expr, b: sympy.Expr, claim: Rel) -> Outcome:
        self._tick()
        self._judged(a)
        self._judged(b)
        d = sympy.expand(a - b)
        if d == 0:
            return Verified(METHOD, f"computed value {_show(a)}")
        dv = d.evalf(50)
        av = a.evalf(30)
        if not (dv.is_real and av.is_real):
            return Unknown(METHOD, "non-real value")
        mag = max(abs(av), abs(b.evalf(30)), 1)
        if abs(dv) < sympy.Float(10) ** -40 * mag:
            return Verified(METHOD, f"computed value {_show(a)}, equal to 40 significant digits")
        tol = max(shown_tolerance(claim.lhs), shown_tolerance(claim.rhs))
        if tol and abs(dv) < sympy.Rational(tol.numerator, tol.denominator):
            return Verified(METHOD, f"computed value {_show(a)} agrees to the precision shown")
        if (claim.op == "~" or _decimals(claim)) and abs(dv) / mag <= sympy.Rational(5, 100):
            return Unknown(METHOD, "approximation within 5%")
        cx = {"computed": _show(a), "claimed": _show(b), "difference": str(dv.evalf(6))}
        return Refuted(METHOD, cx, "the calculus value differs from the claimed one")

    def _functions(self, a: sympy.Expr, b: sympy.Expr, calc_side: int, free: set[sympy.Symbol],
                   claim: Rel) -> Outcome:
        if len(free) > 1:
            return Unknown(METHOD, "a calculus value in several letters")
        other = b if calc_side == 0 else a
        mine = a if calc_side == 0 else b
        if not other.free_symbols and mine.free_symbols:
            return Unknown(METHOD, "a derivative set equal to a constant: an equation to solve")
        if not mine.free_symbols:
            return Unknown(METHOD, "a calculus value set equal to an expression in a letter: an equation to solve")
        self._tick()
        num, _den = sympy.fraction(sympy.together(a - b))
        if sympy.expand(num) == 0:
            return Verified(METHOD, f"computed {_show(a if calc_side == 0 else b)}: the same function")
        (x,) = tuple(free)
        for p in _POINTS:
            self._tick()
            if not all(self._fits(v, {str(x): sympy.Rational(p.numerator, p.denominator)}) for v in (a, b)):
                continue
            v = (a - b).subs(x, sympy.Rational(p.numerator, p.denominator)).evalf(50)
            av = a.subs(x, sympy.Rational(p.numerator, p.denominator)).evalf(30)
            if not (v.is_real and av.is_real and v.is_finite):
                continue
            if abs(v) > sympy.Float(10) ** -30 * max(abs(av), 1):
                cx = {str(x): str(p), "computed": _show(mine), "lhs": str(a.subs(x, sympy.Rational(p.numerator, p.denominator)).evalf(12)),
                      "rhs": str(b.subs(x, sympy.Rational(p.numerator, p.denominator)).evalf(12))}
                return Refuted(METHOD, cx, "the derivative differs from the claimed function")
        return Unknown(METHOD, "equal at sample points, not shown identical")


_CONSTANTS = frozenset({"C", "K", "c", "C_1", "C_0"})
"""Letters read as a constant of integration when added to a claimed antiderivative."""


def _drop_constant(e: Expr, used: frozenset[str]) -> Expr:
    """``F + C`` (or ``C + F``, ``F - C``) less the constant of integration ``C``: a letter of ``_CONSTANTS``
    the integrand does not use; ``e`` itself when there is none."""
    if isinstance(e, BinOp) and e.op in "+-":
        for keep, drop in ((e.left, e.right), (e.right, e.left)):
            if isinstance(drop, Var) and drop.name in _CONSTANTS and drop.name not in used and (
                    e.op == "+" or drop is e.right):
                return keep
        return BinOp(e.op, _drop_constant(e.left, used), e.right) if e.op in "+-" else e
    return e


def _decimals(c: Rel) -> bool:
    return any(n.decimals for n in literals(c.lhs) + literals(c.rhs))


def _show(v: sympy.Expr) -> str:
    s = str(v)
    return s if len(s) <= 120 else s[:117] + "..."


def check_calculus(claim: Rel, env: dict[str, Fraction] | None = None, lim: Limits = DEFAULT_LIMITS,
                   deadline: float | None = None) -> Outcome:
    """Decide ``claim`` (a relation with a calculus value on a side) under ``lim`` before ``deadline``."""
    return CalculusCheck(lim, deadline).decide(claim, env)


__all__ = ["METHOD", "CalculusCheck", "Definitions", "check_calculus", "definitions", "has_calculus", "with_definitions"]


# ---------------------------------------------------------------------------
# Functions the proof defined: f'(2) after f(x) = x^4
# ---------------------------------------------------------------------------

Definitions = dict[str, tuple[str, Expr]]
"""A function's name (``f``) -> its variable and the expression that defines it."""


def definitions(facts: tuple[object, ...]) -> Definitions:
    """The functions ``facts`` define: ``f(x) = <expression in x>`` (the expression calling no unknown
    function); a later definition of the same name replaces an earlier one."""
    out: Definitions = {}
    for r in facts:
        if not isinstance(r, Rel) or r.op != "=":
            continue
        if isinstance(r.lhs, Var) and len(r.lhs.name) == 1:
            # y = <expression in one other letter x>: y as a function of x (stored as "=y"); any other
            # statement of y = ... ends an earlier definition
            out.pop("=" + r.lhs.name, None)
            names = variables(r.rhs)
            if len(names) == 1 and r.lhs.name not in names and not any(
                    isinstance(n, (Call, Calc)) and (not isinstance(n, Call) or n.fn.startswith("fn:")) for n in walk(r.rhs)):
                out["=" + r.lhs.name] = (next(iter(names)), r.rhs)
            continue
        for call, body in ((r.lhs, r.rhs), (r.rhs, r.lhs)):
            if (isinstance(call, Call) and call.fn.startswith("fn:") and "'" not in call.fn and len(call.args) == 1
                    and isinstance(call.args[0], Var)):
                var = call.args[0].name
                if variables(body) <= {var} and not any(isinstance(n, Call) and n.fn.startswith("fn:") for n in walk(body)):
                    out[call.fn[3:]] = (var, body)
                break
    return out


def with_definitions(r: Rel, defs: Definitions) -> Rel | None:
    """``r`` with each derivative of a defined function written out (``f'(2)``, ``f''(x)``, and a call
    inside a calculus value, ``\\frac{d}{dx} f(x)``); None when nothing changes. A defined function
    called outside calculus is left as written."""
    if not defs:
        return None
    lhs, rhs = _expand_defs(r.lhs, defs, False), _expand_defs(r.rhs, defs, False)
    if lhs == r.lhs and rhs == r.rhs:
        return None
    return Rel(lhs, r.op, rhs)


def _expand_defs(e: Expr, defs: Definitions, inside: bool) -> Expr:
    if isinstance(e, Call) and e.fn.startswith("fn:") and len(e.args) == 1 and e.fn.endswith("'") and (
            "=" + e.fn[3:].rstrip("'") in defs):
        # dy/dx, y'(x) after y = <expression in x>: only in the variable y was defined in (a bare y' is
        # left alone: proofs also name a new quantity y')
        var, written = defs["=" + e.fn[3:].rstrip("'")]
        order = len(e.fn) - len(e.fn.rstrip("'"))
        if e.args[0] != Var(var) or order > 3:
            return e
        for _ in range(order):
            written = Calc("diff", written, var)
        return written
    if isinstance(e, Call) and e.fn.startswith("fn:") and len(e.args) == 1:
        name = e.fn[3:]
        base = name.rstrip("'")
        order = len(name) - len(base)
        if base in defs and (order or inside) and order <= 3:
            var, body = defs[base]
            arg = _expand_defs(e.args[0], defs, inside)
            if not order:
                return substitute(body, {var: arg})
            out: Expr = body
            for _ in range(order):
                out = Calc("diff", out, var)
            if isinstance(arg, Var):
                return substitute(out, {var: arg}) if arg.name != var else out
            return substitute(out, {var: arg})  # the derivative at the point
        return Call(e.fn, tuple(_expand_defs(a, defs, inside) for a in e.args))
    if isinstance(e, Calc):
        return Calc(e.op, _expand_defs(e.body, defs, True), e.var, tuple(_expand_defs(a, defs, inside) for a in e.args),
                    e.side)
    if isinstance(e, BinOp):
        return BinOp(e.op, _expand_defs(e.left, defs, inside), _expand_defs(e.right, defs, inside))
    if isinstance(e, Neg):
        return Neg(_expand_defs(e.operand, defs, inside))
    if isinstance(e, Pow):
        return Pow(_expand_defs(e.base, defs, inside), _expand_defs(e.exponent, defs, inside))
    if isinstance(e, Call):
        return Call(e.fn, tuple(_expand_defs(a, defs, inside) for a in e.args))
    return e
