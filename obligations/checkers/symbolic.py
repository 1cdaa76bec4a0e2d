"""The sympy checker: polynomial identities, radicals, numeric evaluation to 50 digits and exact random
rational points, each bounded in size and degree before any symbolic work."""

from __future__ import annotations

import random
import re
from fractions import Fraction
from typing import TYPE_CHECKING

from faithsieve.obligations.checkers.conversions import ConversionCache
from faithsieve.obligations.checkers.exact import fmt
from faithsieve.obligations.checkers.memo import OutcomeMemo
from faithsieve.obligations.kinds.models import (
    ArithmeticObligation,
    IdentityObligation,
    Obligation,
    Outcome,
    Refuted,
    SubstitutionObligation,
    Unknown,
    Verified,
)
from faithsieve.obligations.procedures.calculus import check_calculus, has_calculus
from faithsieve.obligations.procedures.fastpaths import (
    numerator_has_root,
    numerator_not_constant,
    polynomial_class,
)
from faithsieve.obligations.procedures.freevar import polynomial_variable
from faithsieve.obligations.procedures.intfuncs import reduce_rel
from faithsieve.obligations.procedures.polynomials import poly_difference
from faithsieve.obligations.procedures.radicals import radical_equal
from faithsieve.obligations.procedures.ratfunc import rational_identity
from faithsieve.obligations.procedures.varying import varying_difference

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import (
    Call,
    Const,
    Expr,
    Num,
    Pow,
    Rel,
    Var,
    literals,
    of_type,
    render,
    shown_tolerance,
    substitute,
    variables,
    walk,
)
from faithsieve.mathtext.cost import CHECKERS, expansion_terms, expansion_within
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits, evaluate
from faithsieve.mathtext.literals import show_number
from faithsieve.runtime.lazy import lazy_module

if TYPE_CHECKING:
    import sympy
else:  # imported on the first symbolic or SMT check, not at start-up
    sympy = lazy_module("sympy", globals())


MAX_SYMPY_NODES = CHECKERS.max_nodes
"""The checkers' node guard (the cost model's ``CHECKERS`` profile)."""
MAX_DEGREE = 24


def _too_large(c: Rel) -> bool:
    """``c`` has more than ``MAX_SYMPY_NODES`` nodes, or an expansion anywhere in it (inside function
    arguments and bars too) past ``MAX_TERMS`` terms (the cost model's ``expansion_within``), or a
    variable power past ``MAX_DEGREE``: what ``degree_ok`` of both sides answers."""
    return not expansion_within((c.lhs, c.rhs), CHECKERS) or not (_powers_ok(c.lhs) and _powers_ok(c.rhs))


def _exponent(e: Expr) -> Fraction:
    """``evaluate(e)``: a written number is its value (what ``evaluate`` returns for it, after the
    one step it charges, which no step limit refuses)."""
    return e.value if type(e) is Num else evaluate(e)


MAX_TERMS = CHECKERS.max_terms


def _term_bound(e: Expr) -> int:
    """Upper bound on the number of terms expanding builds anywhere in ``e`` (the cost model's)."""
    return expansion_terms(e)


def degree_ok(e: Expr) -> bool:
    """Reject expressions whose expansion would be large before asking sympy to expand."""
    return _term_bound(e) <= MAX_TERMS and _powers_ok(e)


def _powers_ok(e: Expr) -> bool:
    """Every power of a variable expression in ``e`` has a readable exponent of at most ``MAX_DEGREE``."""
    for x in of_type(e, Pow):
        if variables(x.base):
            try:
                k = _exponent(x.exponent)
            except FaithSieveError:
                return False
            if abs(k) > MAX_DEGREE:
                return False
    return True


def _undefined(*exprs: sympy.Expr) -> bool:
    """Some part of the sympy expressions is infinite or undefined (``zoo``, ``oo``, ``nan``)."""
    bad = (sympy.S.ComplexInfinity, sympy.S.Infinity, sympy.S.NegativeInfinity, sympy.S.NaN)
    return any(x.has(*bad) for x in exprs)


def _decimal_literals(c: Rel) -> bool:
    return any(n.decimals for n in literals(c.lhs) + literals(c.rhs))


class SympyChecker:
    """Symbolic checks: closed values with radicals/pi, polynomial identities, random exact points."""

    name = "sympy"
    memo_kinds: tuple[type, ...] = (ArithmeticObligation, SubstitutionObligation, IdentityObligation)
    """The obligations whose outcome is a function of the obligation and the settings alone."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS, seed: int = 0, off: frozenset[str] = frozenset(),
                 memo: OutcomeMemo | None = None, conversions: ConversionCache | None = None) -> None:
        self.lim = limits
        self.seed = seed
        self.radicals = "radicals" not in off
        """Closed values with square roots and pi decided exactly (``radicals``)."""
        self.ratfunc = "ratfunc" not in off
        """Rational-function identities decided exactly (``ratfunc``)."""
        self.freevar = "freevar" not in off
        """"Not an identity" from a variable entering the difference polynomially (``freevar``)."""
        self.varying = "varying" not in off
        """"Not an identity" from a difference that takes two values (``varying``)."""
        self.memo = memo
        """The outcome memo this checker's outcomes are kept in (owned by whoever built the checkers)."""
        self.conversions = conversions if conversions is not None else ConversionCache()
        """This checker's cache of sympy conversions."""

    def check(self, ob: Obligation, deadline: float) -> Outcome | None:
        if isinstance(ob, (ArithmeticObligation, SubstitutionObligation, IdentityObligation)) and has_calculus(ob.claim):
            # a derivative, an integral or a limit: computed and compared by ``calculus`` alone
            env = dict(ob.env) if isinstance(ob, SubstitutionObligation) else None
            return check_calculus(ob.claim, env, self.lim, deadline)
        try:
            if isinstance(ob, (ArithmeticObligation, SubstitutionObligation)):
                c = reduce_rel(ob.claim, self.lim)
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
        if _too_large(c):
            return Unknown(self.name, "formula too large for symbolic checking")
        vals = {Var(k): Num(v, show_number(v), 0) for k, v in env.items()}
        lhs = substitute(c.lhs, {k: n for k, n in ((v.name, n) for v, n in vals.items())})
        rhs = substitute(c.rhs, {k: n for k, n in ((v.name, n) for v, n in vals.items())})
        if self.radicals and radical_equal(lhs, rhs, self.lim):  # equal in exact arithmetic with square roots and pi
            return Verified("radicals", "equal in exact arithmetic with square roots and pi")
        a, b = self.conversions.convert(lhs, self.lim), self.conversions.convert(rhs, self.lim)
        d = sympy.expand(a - b)
        if d == 0:
            return Verified("sympy")
        if d.free_symbols:
            return Unknown(self.name, "symbolic value")
        dv = d.evalf(50)
        av = a.evalf(30)
        if not (dv.is_real and av.is_real):
            return self._complex(a, b, dv, c, approx)
        tol = max(shown_tolerance(c.lhs), shown_tolerance(c.rhs))
        mag = max(abs(av), 1)
        if abs(dv) < sympy.Float(10) ** -40 * mag:
            return Verified("sympy-numeric", "equal to 40 significant digits")
        if tol and abs(dv) < sympy.Rational(tol.numerator, tol.denominator):
            return Verified("sympy-rounding", "agrees to the precision shown")
        if d.is_Rational and not (approx or c.op == "~"):
            # both sides exact and their difference a nonzero rational (``\sin(\pi/3)^2 = 1`` is 3/4 = 1):
            # no irrational value is being rounded, so the sides differ as written
            cx = {"lhs": str(a), "rhs": str(b), "difference": str(d)}
            return Refuted("sympy", cx, "sides differ exactly (rational difference)")
        if isinstance(c.rhs, Num) and c.rhs.decimals == 0 and c.rhs.value != 0 and abs(dv) < 1 and not tol:
            return Unknown(self.name, "integer written for an irrational value")
        if (approx or c.op == "~") and abs(dv) / mag <= sympy.Rational(5, 100):
            return Unknown(self.name, "approximation within 5%")
        if abs(dv) / mag <= sympy.Rational(1, 500) and _decimal_literals(c):
            # "pi = 25.12 / 8": pi or a radical stood in for by a rounded decimal
            return Unknown(self.name, "irrational value against rounded decimals")
        cx = {"lhs": str(a.evalf(12)), "rhs": str(b.evalf(12)), "difference": str(dv.evalf(6))}
        return Refuted("sympy-numeric", cx, "sides differ (evaluated to 50 digits)")

    def _complex(self, a: sympy.Expr, b: sympy.Expr, dv: sympy.Expr, c: Rel, approx: bool) -> Outcome:
        """A closed value with ``i`` written: exact sides that differ by a nonzero complex number are unequal
        (``(1 + i)^2 = 2`` is ``2i = 2``); with decimals or ``≈`` shown, rounding may explain it. A complex
        value the proof did not write (``log(-1)``) is a real-domain claim: unknown."""
        mag = max(abs(a.evalf(30)), abs(b.evalf(30)), 1)
        written_i = any(isinstance(n, Const) and n.name == "i" for side in (c.lhs, c.rhs) for n in walk(side))
        if not written_i or approx or c.op == "~" or _decimal_literals(c) or abs(dv) < sympy.Float(10) ** -30 * mag:
            return Unknown(self.name, "non-real value")
        if any(isinstance(side, Const) and side.name == "i" and not any(isinstance(n, Const) and n.name == "i" for n in walk(other))
               for side, other in ((c.lhs, c.rhs), (c.rhs, c.lhs))):
            # a bare "i = 1" sets an index (nobody claims the imaginary unit equals a number): not complex
            # arithmetic; "i^3 = i" computes with the unit on both sides
            return Unknown(self.name, "a bare i may name an index")
        cx = {"lhs": str(a.evalf(12)), "rhs": str(b.evalf(12)), "difference": str(dv.evalf(6))}
        return Refuted("sympy-numeric", cx, "complex sides differ (evaluated to 50 digits)")

    def _identity(self, ob: IdentityObligation) -> Outcome:
        peeled = _same_injective(ob.claim.lhs, ob.claim.rhs)
        if peeled is not None:
            out = self._apart_by_constant(*peeled)
            if out is not None:
                return out
        reduced = reduce_rel(ob.claim, self.lim)  # log_2 8, log_8(x), gcd(12, 18): their values, or ln quotients
        if reduced is not ob.claim:  # (the same object when nothing is reducible)
            ob = ob.model_copy(update={"claim": reduced})
        c = ob.claim
        if _too_large(c):
            return Unknown(self.name, "expression too large for symbolic checking")
        # polynomial sides: an exact expansion puts the difference in the class together + fraction +
        # expand would (numerator zero, or not a number) without building sympy expressions
        cls = polynomial_class(c.lhs, c.rhs, self.lim)
        if cls == "zero":
            return Verified("polynomial", "identity")
        if cls == "nonconstant":
            return self._not_identity(ob, "polynomial")
        if cls is None and (numerator_has_root(c.lhs, c.rhs, self.lim) or numerator_not_constant(c.lhs, c.rhs, self.lim)):
            return self._not_identity(ob, "polynomial")
        if self.ratfunc and rational_identity(c.lhs, c.rhs, self.lim):
            return Verified("ratfunc", "identity")  # rational functions, exactly: sympy's numerator is 0
        a, b = self.conversions.convert(c.lhs, self.lim), self.conversions.convert(c.rhs, self.lim)
        # a variable free in the claim, or one outside every denominator whose change changes the
        # difference: the numerator is not a number
        varies = ("freevar" if self.freevar and polynomial_variable(c.lhs, c.rhs, self.lim) else
                  "varying" if self.varying and varying_difference(c.lhs, c.rhs, self.lim) else None)
        if varies is not None and not _undefined(a, b):
            return self._not_identity(ob, varies)
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

    def _apart_by_constant(self, a: Expr, b: Expr) -> Outcome | None:
        """``f(a) = f(b)`` for a one-to-one ``f`` (``_same_injective``) where ``a - b`` is a nonzero rational:
        no value of the letters satisfies it (``\\sqrt{b^2 + 37^2} = \\sqrt{b^2 + 1225}``)."""
        difference = poly_difference(a, b, self.lim, False)
        if difference is None or not difference[0] or any(m for m in difference[0]):
            return None  # not polynomials, equal, or apart by a polynomial that has roots
        return Refuted("sympy-poly", {"lhs": render(a), "rhs": render(b), "difference": "nonzero constant"},
                       "the same one-to-one function of arguments that differ by a nonzero constant: "
                       "no value of the variables satisfies it")

    def _not_identity(self, ob: IdentityObligation, by: str = "sympy") -> Outcome:
        """Not an identity (shown by the procedure ``by``): a claimed identity goes to random points."""
        if ob.asserted_identity:
            return self._random_points(ob.claim)
        return Unknown(by, "not an identity; may be an equation in its unknowns")

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
                    return Unknown("random-points", "fails only where some letter is negative or zero: the letters "
                                              "may denote positive quantities (the domain is guessed)")
                cx = {n: fmt(v) for n, v in env.items()}
                cx.update({"lhs": fmt(a), "rhs": fmt(b)})
                return Refuted("random-points", cx, "claimed identity fails at an exact rational point")
        return Unknown("random-points", "no exact point separated the sides")


# ---------------------------------------------------------------------------
# z3: implications, inequalities, coverage
# ---------------------------------------------------------------------------


_INJECTIVE = frozenset(["sqrt", "root", "ln", "log", "exp"])
"""Functions one-to-one on the reals where defined, and as principal branches on the complex numbers
(square and n-th roots, logarithms; ``exp`` at arguments whose difference is real)."""


def _same_injective(a: Expr, b: Expr) -> tuple[Expr, Expr] | None:
    """The arguments under the same one-to-one function applied on both sides, peeled as far as it goes
    (``sqrt(A) = sqrt(B)``, ``root(A, 3) = root(B, 3)``, ``log_10(A) = log_10(B)``, ``2^A = 2^B``); None when
    the sides do not share one."""
    peeled = False
    for _ in range(8):
        if (isinstance(a, Call) and isinstance(b, Call) and a.fn == b.fn and a.args and len(a.args) == len(b.args)
                and (a.fn in _INJECTIVE or re.fullmatch(r"log_\d+", a.fn)) and a.args[1:] == b.args[1:]
                and all(not variables(x) for x in a.args[1:])):
            a, b = a.args[0], b.args[0]
        elif (isinstance(a, Pow) and isinstance(b, Pow) and a.base == b.base and isinstance(a.base, Num)
              and a.base.value > 0 and a.base.value != 1):
            a, b = a.exponent, b.exponent
        else:
            break
        peeled = True
    return (a, b) if peeled else None
