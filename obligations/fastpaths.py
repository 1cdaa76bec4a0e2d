"""Cheap decisions taken before building solver state, each only where it provably gives the
outcome the solver would give.

* ``expand`` / ``polynomial_class``: for an identity claim whose sides are polynomials with
  rational coefficients, the exact expansion of the difference is zero exactly when sympy's
  numerator of ``together`` + ``fraction`` + ``expand`` is zero, and has a variable exactly when
  that numerator is not a number (the denominators are numbers): "identity" or "not an
  identity" without building sympy expressions. A nonzero constant difference goes to sympy,
  which writes the difference shown in the evidence.
* ``linear_derivation``: a relation derived from one relation that is, as polynomials, the
  premise scaled by a factor of the right sign plus a constant of the right sign holds wherever
  the premise holds: the SMT query "premise and not claim" is unsatisfiable. Two linear
  equations that are not proportional are independent: both SMT queries are satisfiable.
* ``outside_smt``: whether translating relations to SMT stops on a node outside the fragment
  (the same walk, in the same order, as ``smt._z3_expr``), so that no z3 context is made
  only to be thrown away.

Every function is bounded: sizes and depths are capped, and exact values keep to the limits of
``evaluate``; on anything unexpected they answer "undecided" (``False``/``None``) and the
solver decides as before.
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd

from faithsieve.errors import FaithSieveError
from faithsieve.mathtext.ast import BinOp, Call, Expr, Neg, Num, Pow, Var
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits, evaluate
from faithsieve.obligations.models import Rel

MAX_DEPTH = 32
"""Deepest expression a fast path reads (deeper ones go to the solver, whatever it makes of them)."""
MAX_POWER = 24
"""Largest exponent a polynomial fast path accepts (the symbolic checker's degree cap)."""


def _small_int(e: Expr) -> int | None:
    if isinstance(e, Num) and e.value.denominator == 1 and 0 <= e.value.numerator <= MAX_POWER:
        return e.value.numerator
    return None


Poly = dict[tuple[tuple[str, int], ...], Fraction]
"""A polynomial: coefficient per monomial (sorted ``(variable, exponent)`` pairs; ``()`` the constant)."""

MAX_TERMS = 4000
"""Most monomials an expansion may hold (the symbolic checker's bound)."""


MAX_PRODUCTS = 8 * MAX_TERMS
"""Most monomial products one multiplication may form (bounds the work before the term cap)."""


def _mono_mul(ma: tuple[tuple[str, int], ...], mb: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    """The product of two monomials (each sorted by variable, no variable twice), sorted the same
    way: a merge of the two."""
    if not ma:
        return mb
    if not mb:
        return ma
    out = []
    i = j = 0
    while i < len(ma) and j < len(mb):
        (va, ka), (vb, kb) = ma[i], mb[j]
        if va == vb:
            out.append((va, ka + kb))
            i += 1
            j += 1
        elif va < vb:
            out.append(ma[i])
            i += 1
        else:
            out.append(mb[j])
            j += 1
    out.extend(ma[i:])
    out.extend(mb[j:])
    return tuple(out)


def _pmul(a: Poly, b: Poly) -> Poly | None:
    if len(a) * len(b) > MAX_PRODUCTS:
        return None
    out: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            key = _mono_mul(ma, mb)
            c = out.get(key)
            out[key] = ca * cb if c is None else c + ca * cb
    out = {m: c for m, c in out.items() if c}
    return out if len(out) <= MAX_TERMS else None


def _const(p: Poly) -> Fraction | None:
    return p.get((), Fraction(0)) if all(not m for m in p) else None


IntPoly = tuple[dict[tuple[tuple[str, int], ...], int], int]
"""A polynomial as integer coefficients over one positive common denominator ``(coefficients, d)``,
the coefficient of a monomial being ``c / d``; ``d`` shares no factor with every coefficient."""


def _reduced(p: dict[tuple[tuple[str, int], ...], int], den: int) -> IntPoly:
    """``(p, den)`` with the common factor of the coefficients and the denominator divided out."""
    if den != 1:
        g = gcd(den, *p.values())
        if g != 1:
            return {m: c // g for m, c in p.items()}, den // g
    return p, den


def _within(p: IntPoly, max_bits: int) -> bool:
    """Every coefficient, as a reduced fraction, has numerator and denominator within ``max_bits``
    bits (the bound ``expand`` puts on each node). Dividing out a common factor only shortens
    numbers, so the unreduced ones within the bound settle it; otherwise each is reduced."""
    coefficients, den = p
    if den.bit_length() <= max_bits and all(c.bit_length() <= max_bits for c in coefficients.values()):
        return True
    for c in coefficients.values():
        g = gcd(c, den)
        if (c // g).bit_length() > max_bits or (den // g).bit_length() > max_bits:
            return False
    return True


def _isub(a: dict[tuple[tuple[str, int], ...], int], b: dict[tuple[tuple[str, int], ...], int]) -> dict:
    d = dict(a)
    for m, c in b.items():
        d[m] = d.get(m, 0) - c
    return {m: c for m, c in d.items() if c}


def _icombine(a: IntPoly, b: IntPoly, sign: int) -> IntPoly:
    """``a - b`` (``sign`` -1) or ``a + b`` (``sign`` 1), over the least common denominator."""
    (pa, da), (pb, db) = a, b
    if da != db:
        lcm = da // gcd(da, db) * db
        pa = {m: c * (lcm // da) for m, c in pa.items()}
        pb = {m: c * (lcm // db) for m, c in pb.items()}
        da = lcm
    return _reduced(_isub(pa, pb) if sign < 0 else _isub(pa, {m: -c for m, c in pb.items()}), da)


def _iconst(p: IntPoly) -> Fraction | None:
    return Fraction(p[0].get((), 0), p[1]) if all(not m for m in p[0]) else None


def _fractions(p: IntPoly) -> Poly:
    return {m: Fraction(c, p[1]) for m, c in p[0].items()}


def _number(v: Fraction) -> IntPoly:
    return ({(): v.numerator} if v else {}), v.denominator


def _iexpand(e: Expr, lim: Limits, depth: int, quotients: bool) -> IntPoly | None:
    """``expand`` with integer coefficients over a common denominator: the same polynomial (the
    same monomials, in the same order, with the same values), the same bounds checked at the same
    nodes, without a ``Fraction`` operation per coefficient."""
    if depth > MAX_DEPTH:
        return None
    out: IntPoly | None
    if isinstance(e, Num):
        out = _number(e.value)
    elif isinstance(e, Var):
        return {((e.name, 1),): 1}, 1  # coefficient 1: within every bound
    elif isinstance(e, Neg):
        a = _iexpand(e.operand, lim, depth + 1, quotients)
        return None if a is None else ({m: -c for m, c in a[0].items()}, a[1])  # the operand's sizes
    elif isinstance(e, Call) and e.fn == "percent" and len(e.args) == 1:
        a = _iexpand(e.args[0], lim, depth + 1, quotients)
        out = None if a is None else _reduced(a[0], a[1] * 100)
    elif isinstance(e, BinOp) and e.op in ("+", "-", "*", "/"):
        a, b = _iexpand(e.left, lim, depth + 1, quotients), _iexpand(e.right, lim, depth + 1, quotients)
        if a is None or b is None:
            return None
        if e.op == "*":
            product = _pmul(a[0], b[0])
            out = None if product is None else _reduced(product, a[1] * b[1])
        elif e.op == "/":
            d = _iconst(b)
            if d is None and quotients:
                out = {((_quotient_name(_fractions(a), _fractions(b)), 1),): 1}, 1
            elif not d:
                return None  # a variable or a zero divisor
            else:
                k = d.denominator if d > 0 else -d.denominator
                out = _reduced({m: c * k for m, c in a[0].items()}, a[1] * abs(d.numerator))
        else:
            out = _icombine(a, b, -1 if e.op == "-" else 1)
    elif isinstance(e, Pow) and _small_int(e.exponent) is not None:
        base = _iexpand(e.base, lim, depth + 1, quotients)
        if base is None:
            return None
        if _iconst(base) is not None:
            try:
                v = evaluate(e, None, lim)
            except FaithSieveError:
                return None
            out = _number(v)
        else:
            k = _small_int(e.exponent) or 0
            power: dict | None = {(): 1}
            for _ in range(k):
                power = _pmul(power, base[0]) if power is not None else None
            out = None if power is None else _reduced(power, base[1] ** k)
    else:
        return None
    if out is None or not _within(out, lim.max_bits):
        return None
    return out


def expand(e: Expr, lim: Limits = DEFAULT_LIMITS, depth: int = 0, quotients: bool = False) -> Poly | None:
    """The expanded polynomial of ``e`` (numbers, variables, ``+ - *``, ``p%``, division by a
    variable-free divisor, powers with a small non-negative integer exponent), exactly; None for
    any other node and past the term, size or depth bounds (every coefficient of every node's
    expansion within ``lim.max_bits`` bits). A power of a number is evaluated as the symbolic
    conversion evaluates it, so it meets the same limits.

    With ``quotients``, a quotient by a divisor with a variable is one opaque quantity (an atom:
    a name no variable has, made of the expanded dividend and divisor), instead of None."""
    out = _iexpand(e, lim, depth, quotients)
    return None if out is None else _fractions(out)


QUOTIENT = "\0"
"""First character of a quotient atom's name (no variable name has it)."""


def _quotient_name(a: Poly, b: Poly) -> str:
    def canon(p: Poly) -> str:
        return " ".join(f"{'*'.join(f'{v}^{k}' for v, k in m)}:{c}" for m, c in sorted(p.items()))

    return f"{QUOTIENT}({canon(a)})/({canon(b)})"


def polynomial_class(lhs: Expr, rhs: Expr, lim: Limits = DEFAULT_LIMITS) -> str | None:
    """``"zero"`` or ``"nonconstant"`` for ``lhs - rhs`` when both sides expand as polynomials: the
    classes in which sympy's numerator of ``together(lhs - rhs)``, expanded, is ``0`` or has free
    symbols (with numeric denominators only, that numerator is the difference times a number).
    None for a nonzero constant (its exact form is left to sympy), other expressions, or past a bound."""
    a, b = _iexpand(lhs, lim, 0, False), _iexpand(rhs, lim, 0, False)
    if a is None or b is None:
        return None
    d = _icombine(a, b, -1)[0]
    if not d:
        return "zero"
    return "nonconstant" if any(m for m in d) else None


def _rational(e: Expr, depth: int = 0) -> bool:
    """``e`` is a rational function as written: numbers, variables, ``+ - * /``, ``p%``, and powers
    with a small integer exponent (negative too)."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(e, (Num, Var)):
        return True
    if isinstance(e, Neg):
        return _rational(e.operand, depth + 1)
    if isinstance(e, BinOp):
        return e.op in ("+", "-", "*", "/") and _rational(e.left, depth + 1) and _rational(e.right, depth + 1)
    if isinstance(e, Pow):
        k = e.exponent.operand if isinstance(e.exponent, Neg) else e.exponent
        return _small_int(k) is not None and _rational(e.base, depth + 1)
    if isinstance(e, Call):
        return e.fn == "percent" and len(e.args) == 1 and _rational(e.args[0], depth + 1)
    return False


def numerator_has_root(lhs: Expr, rhs: Expr, lim: Limits = DEFAULT_LIMITS) -> bool:
    """For rational-function sides: an exact rational point where ``lhs = rhs`` holds with every
    divisor nonzero, and one where it fails. Then ``lhs - rhs`` is not identically zero, and any
    numerator ``N`` of it over a denominator made of its divisors (what ``together`` + ``fraction``
    give) vanishes at the first point: ``N`` is a polynomial with a root and not zero, so not a
    number ("not an identity"). The root is sought along one variable at a time by a secant step
    from two points and checked exactly; False when none is found (sympy decides)."""
    if not (_rational(lhs) and _rational(rhs)):
        return False
    names = sorted(_names(lhs) | _names(rhs))
    if not names or len(names) > 8:
        return False
    base = {n: Fraction(2 * i + 3, 7 + 2 * i) for i, n in enumerate(names)}

    def f(env: dict[str, Fraction]) -> Fraction | None:
        try:
            return evaluate(lhs, env, lim) - evaluate(rhs, env, lim)
        except FaithSieveError:
            return None

    for v in names:
        t0, t1 = base[v], base[v] + 1
        f0, f1 = f(base), f({**base, v: t1})
        if f0 is None or f1 is None or f0 == f1:
            continue
        root = t0 - f0 * (t1 - t0) / (f1 - f0)
        if abs(root.numerator).bit_length() > 256 or root.denominator.bit_length() > 256:
            continue
        if f({**base, v: root}) == 0:
            return True  # f0 != f1: one of the two points fails the equation
    return False


def _degrees(e: Expr) -> tuple[int, int]:
    """Bounds on the degrees of a numerator and a denominator of a ``_rational`` expression, read
    off its syntax (a sum over a common denominator, products, quotients, integer powers)."""
    if isinstance(e, Num):
        return 0, 0
    if isinstance(e, Var):
        return 1, 0
    if isinstance(e, Neg):
        return _degrees(e.operand)
    if isinstance(e, Call):
        return _degrees(e.args[0])
    if isinstance(e, Pow):
        neg = isinstance(e.exponent, Neg)
        k = _small_int(e.exponent.operand if isinstance(e.exponent, Neg) else e.exponent) or 0
        n, d = _degrees(e.base)
        return (k * d, k * n) if neg else (k * n, k * d)
    assert isinstance(e, BinOp)
    (na, da), (nb, db) = _degrees(e.left), _degrees(e.right)
    if e.op in ("+", "-"):
        return max(na + db, nb + da), da + db
    if e.op == "*":
        return na + nb, da + db
    return na + db, da + nb


MAX_DIFF_ORDER = 40
"""Highest finite difference ``numerator_not_constant`` takes."""


def numerator_not_constant(lhs: Expr, rhs: Expr, lim: Limits = DEFAULT_LIMITS) -> bool:
    """For rational-function sides: ``lhs - rhs`` is not of the form ``c / D`` (a number over a
    polynomial), so the numerator sympy's ``together`` + ``fraction`` leave is not a number.

    If it were ``c / D``, then along any line its reciprocal would be a polynomial of degree at
    most the degree of the reduced denominator, which divides every denominator the syntax
    builds: the finite difference of order (that degree bound + 1) of the reciprocal at
    equally spaced exact points would be zero. A nonzero one disproves the form; the points must
    all be defined and nonzero (a zero is a root, which ``numerator_has_root`` covers)."""
    if not (_rational(lhs) and _rational(rhs)):
        return False
    names = sorted(_names(lhs) | _names(rhs))
    if not names or len(names) > 8:
        return False
    d = _degrees(lhs)[1] + _degrees(rhs)[1]
    if d + 1 > MAX_DIFF_ORDER:
        return False
    base = {n: Fraction(2 * i + 3, 7 + 2 * i) for i, n in enumerate(names)}
    v = names[0]
    values = []
    for j in range(d + 2):
        try:
            env = {**base, v: base[v] + j}
            f = evaluate(lhs, env, lim) - evaluate(rhs, env, lim)
        except FaithSieveError:
            return False
        if f == 0:
            return False
        values.append(1 / f)
    for _ in range(d + 1):
        values = [b - a for a, b in zip(values, values[1:])]
    return values[0] != 0


def _names(e: Expr) -> set[str]:
    from faithsieve.mathtext.ast import variables

    return set(variables(e))


def _sub(a: Poly, b: Poly) -> Poly:
    d = dict(a)
    for m, c in b.items():
        d[m] = d.get(m, Fraction(0)) - c
    return {m: c for m, c in d.items() if c}


def _normal(r: Rel, quotients: bool = False) -> tuple[Poly, str] | None:
    """``r`` as ``f R 0`` with R one of ``= > >=`` (sides moved left, ``<`` and ``<=`` flipped)."""
    a, b = _iexpand(r.lhs, DEFAULT_LIMITS, 0, quotients), _iexpand(r.rhs, DEFAULT_LIMITS, 0, quotients)
    if a is None or b is None:
        return None
    if r.op in ("=", ">", ">="):  # the difference over one denominator: Fractions made once, at the end
        return _fractions(_icombine(a, b, -1)), r.op
    if r.op in ("<", "<="):
        return _fractions(_icombine(b, a, -1)), {"<": ">", "<=": ">="}[r.op]
    return None


def _multiple(f: Poly, g: Poly) -> tuple[Fraction, Fraction] | None:
    """``(k, c)`` with ``g = k·f + c`` when the non-constant parts are proportional (``f`` is not constant)."""
    fv = [m for m in f if m]
    if not fv or any(m and m not in f for m in g):
        return None
    k = g.get(fv[0], Fraction(0)) / f[fv[0]]
    if any(g.get(m, Fraction(0)) != k * f[m] for m in fv):
        return None
    return k, g.get((), Fraction(0)) - k * f.get((), Fraction(0))


def _linear(f: Poly) -> bool:
    return all(len(m) == 0 or (len(m) == 1 and m[0][1] == 1) for m in f)


def linear_derivation(premise: Rel, claim: Rel, integer_vars: bool) -> str | None:
    """Decide "``claim`` follows from ``premise``" the way the SMT query (premise and not claim; then
    premise and claim) would, where a polynomial identity shows it:

    * ``"follows"``: the premise can never hold (a false constant relation), or the claim holds
      everywhere, or the claim is the premise scaled by a factor of the right sign plus a constant
      of the right sign, so "premise and not claim" is unsatisfiable over the reals, hence over
      the integers too (integer points are real points). With integer variables and non-linear
      sides the solver works in non-linear integer arithmetic, where it may give up on a query
      this identity settles: there "follows" is a proof the solver might not find, never a
      different answer (it cannot find a counterexample that does not exist);
    * ``"independent"``: over the reals, a linear premise that holds everywhere or is not
      proportional to a linear claim equation: points satisfy the premise with and without the
      claim (no integer variables);
    * None: anything else (the solver decides).
    """
    p, c = _normal(premise), _normal(claim)
    if p is None or c is None:
        return None
    return _decide(p, c, integer_vars)


def quotient_derivation(premise: Rel, claim: Rel, integer_vars: bool) -> str | None:
    """``"follows"`` where ``linear_derivation`` would say so with every quotient by a divisor
    with a variable read as one opaque quantity (``x - 1/x = 3`` then ``x = 1/x + 3``); None
    otherwise, and always with integer variables (the solver's arithmetic is then non-linear).

    Sound whatever the solver makes of a quotient: SMT division is a function of the values of
    dividend and divisor (total: ``a/0`` is some value fixed by ``a``), so two quotients whose
    dividends and divisors expand alike are equal in every model, and a claim that follows for
    every value of the opaque quantities follows for the ones a model gives them."""
    if integer_vars:
        return None
    p, c = _normal(premise, quotients=True), _normal(claim, quotients=True)
    if p is None or c is None or not any(v.startswith(QUOTIENT) for f, _ in (p, c) for m in f for v, _k in m):
        return None
    return "follows" if _decide(p, c, False) == "follows" else None


def _decide(p: tuple[Poly, str], c: tuple[Poly, str], integer_vars: bool) -> str | None:
    (f, rp), (g, rc) = p, c
    if not any(f):
        fc = f.get((), Fraction(0))
        if not {"=": fc == 0, ">": fc > 0, ">=": fc >= 0}[rp]:
            return "follows"  # no point satisfies the premise
    if not any(g):
        gc = g.get((), Fraction(0))
        return "follows" if {"=": gc == 0, ">": gc > 0, ">=": gc >= 0}[rc] else None
    m = _multiple(f, g)
    if m is None:
        linear_eqs = rp == rc == "=" and _linear(f) and _linear(g) and not integer_vars
        return "independent" if linear_eqs and (not f or any(f)) else None
    k, c0 = m
    if rc == "=":
        return "follows" if rp == "=" and c0 == 0 else None
    if rp == "=":
        ok = c0 > 0 if rc == ">" else c0 >= 0
    elif rc == ">=":
        ok = k >= 0 and c0 >= 0
    else:  # claim strict
        ok = k >= 0 and (c0 > 0 or (k > 0 and c0 >= 0 and rp == ">"))
    return "follows" if ok else None


def outside_smt(rels: list[Rel]) -> bool:
    """Translating ``rels`` in order (as ``smt._z3_rel`` does) would stop on a node outside
    the SMT fragment before anything else could go wrong. False when translation would succeed
    or end some other way (that is left to the translation itself)."""
    for r in rels:
        for side in (r.lhs, r.rhs):
            verdict = _walk(side)
            if verdict is not None:
                return verdict
        if r.op not in ("=", "!=", "<", ">", "<=", ">="):
            return True
    return False


MAX_SMT_POWER = 12
"""Largest exponent the SMT translation writes out as a product."""


def smt_power(exponent: Expr) -> int | None:
    """How many times the SMT translation multiplies a base for this exponent: an integer from 0
    to ``MAX_SMT_POWER``; None where the translation stops (outside the fragment)."""
    try:
        k = evaluate(exponent)
    except FaithSieveError:
        return None
    return k.numerator if k.denominator == 1 and 0 <= k.numerator <= MAX_SMT_POWER else None


def translates(r: Rel) -> bool:
    """Every node of ``r`` is in the SMT fragment and its relation is one SMT states: translating
    it succeeds, and it means there what exact evaluation computes where every divisor is nonzero."""
    return r.op in ("=", "!=", "<", ">", "<=", ">=") and _walk(r.lhs) is None and _walk(r.rhs) is None


def _walk(e: Expr) -> bool | None:
    """None: translates; True: stops outside the fragment; False: stops some other way."""
    if isinstance(e, (Num, Var)):
        return None
    if isinstance(e, Neg):
        return _walk(e.operand)
    if isinstance(e, BinOp):
        for side in (e.left, e.right):
            v = _walk(side)
            if v is not None:
                return v
        return None if e.op in ("+", "-", "*", "/") else False
    if isinstance(e, Pow):
        try:
            k = evaluate(e.exponent)
        except FaithSieveError:
            return True
        except Exception:  # noqa: BLE001 (whatever the translation would meet, it meets itself)
            return False
        if k.denominator != 1 or not 0 <= k.numerator <= 12:
            return True
        return _walk(e.base)
    if isinstance(e, Call) and e.fn in ("percent", "abs"):
        return _walk(e.args[0]) if e.args else False
    return True
