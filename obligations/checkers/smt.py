"""The z3 checker: derivations (implication, consistency), solution claims and case coverage, a fresh
context and a time limit per check; the SMT translation of our expressions."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, ClassVar

from faithsieve.obligations.checkers.exact import fmt
from faithsieve.obligations.checkers.memo import OutcomeMemo
from faithsieve.obligations.checkers.symbolic import degree_ok
from faithsieve.obligations.kinds.models import (
    CoverageObligation,
    DerivationObligation,
    Obligation,
    Outcome,
    Refuted,
    Unknown,
    Verified,
)
from faithsieve.obligations.procedures.cleared import cleared_derivation
from faithsieve.obligations.procedures.fastpaths import (
    SMT_OPERATORS,
    SMT_RELATIONS,
    OutsideSMT,
    linear_derivation,
    outside_smt,
    quotient_derivation,
    smt_relation,
)
from faithsieve.obligations.procedures.ordering import nonreal_order
from faithsieve.obligations.procedures.piecewise import (
    contradicts as piecewise_contradicts,
)
from faithsieve.obligations.procedures.piecewise import follows as piecewise_follows
from faithsieve.obligations.procedures.registry import procedures_for
from faithsieve.obligations.procedures.sections import univariate_decision
from faithsieve.obligations.procedures.witness import Point, witness_points

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import (
    Rel,
    literals,
)
from faithsieve.mathtext.evaluate import evaluate, to_sympy
from faithsieve.mathtext.literals import number_within
from faithsieve.runtime.lazy import lazy_module

if TYPE_CHECKING:
    import sympy
    import z3
else:  # imported on the first symbolic or SMT check, not at start-up
    sympy = lazy_module("sympy", globals())
    z3 = lazy_module("z3", globals())


class _Syms(dict[str, "z3.ArithRef"]):
    """Variables of one check, all in one fresh z3 context (so results never depend on
    what the process checked before); the builder of the SMT translation's z3 terms (``smt_term``)."""

    def __init__(self, ctx: z3.Context) -> None:
        super().__init__()
        self.ctx = ctx

    def number(self, value: Fraction) -> z3.ArithRef:
        if not number_within(value):
            raise OutsideSMT  # written out to the solver in digits: past the printing bound
        return z3.RealVal(f"{value.numerator}/{value.denominator}", self.ctx)

    def variable(self, name: str) -> z3.ArithRef:
        if name not in self:
            self[name] = z3.Real(name, self.ctx)
        return self[name]

    def neg(self, a: z3.ArithRef) -> z3.ArithRef:
        return -a

    def arith(self, op: str, a: z3.ArithRef, b: z3.ArithRef) -> z3.ArithRef:
        # every operation is built, in this order, and one kept: z3 numbers its terms as they are made
        terms = {k: f(a, b) for k, f in SMT_OPERATORS.items()}
        return terms[op]

    def power(self, base: z3.ArithRef, times: int) -> z3.ArithRef:
        out: z3.ArithRef = z3.RealVal(1, self.ctx)
        for _ in range(times):
            out = out * base
        return out

    def percent(self, a: z3.ArithRef) -> z3.ArithRef:
        return a / 100

    def absolute(self, a: z3.ArithRef) -> z3.ArithRef:
        return z3.If(a >= 0, a, -a)

    def relation(self, op: str, a: z3.ArithRef, b: z3.ArithRef) -> z3.BoolRef:
        out: z3.BoolRef = SMT_RELATIONS[op](a, b)
        return out


def _z3_rel(r: Rel, syms: _Syms) -> z3.BoolRef:
    return smt_relation(r, syms)


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
    if p.op != "=" or c.op != "=" or not all(degree_ok(e) for e in (p.lhs, p.rhs, c.lhs, c.rhs)):
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


def _refutation(ob: DerivationObligation, point: dict[str, Fraction], method: str = "z3") -> Refuted | None:
    """The refutation shown with ``point``, confirmed exactly (every premise holds there and the
    claim fails); None where it is not confirmed."""
    if not all(_holds(p, point) for p in ob.premises) or _holds(ob.claim, point) is not False:
        return None
    cx = {k: fmt(v) for k, v in point.items()}
    cx["premise"] = "; ".join(str(p) for p in ob.premises)
    return Refuted(method, cx, "contradicts the relation it is derived from (no value satisfies both)")


def _gap_refutation(ob: DerivationObligation) -> Outcome | None:
    """For a claim that contradicts its one premise where the premise has no rational solution to
    show: an exact certificate when the two equations differ by a constant ("x^2 - 4x - 2 = 0"
    then "x^2 - 4x + 2 = 0"); None otherwise."""
    c = _constant_gap(ob.premises[0], ob.claim) if len(ob.premises) == 1 else None
    if c is None:
        return None
    return Refuted("sympy-poly", {"premise": str(ob.premises[0]), "premise − claim": c},
                   "the equations differ by a nonzero constant: no value satisfies both")


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
    for a, b in zip(bounds, bounds[1:], strict=False):
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


@dataclass
class _Found:
    """What an earlier derivation procedure found that a later one reads."""

    fails: Point | None = None
    """An exact point where the premises hold and the claim fails (``witness``)."""
    holds: Point | None = None
    """An exact point where the premises and the claim hold (``witness``)."""


class Z3Checker:
    """SMT over the reals (integers where known): Γ ∧ ¬G unsat = verified; sat = counterexample.

    Before any solver state is built, the cheaper procedures registered for derivations
    (``obligations.procedures.registry``) decide what they can, each under its own name: ``linear``,
    ``quotients``, ``cleared``, ``witness``, ``piecewise``, ``sections``; what they leave goes to z3."""

    name = "z3"
    DERIVATION: ClassVar[tuple[Callable[[Z3Checker, DerivationObligation, _Found, float], Outcome | None], ...]] = ()
    """Set below the class from the registry: the derivation procedures this checker runs, in order."""
    memo_kinds: tuple[type, ...] = (DerivationObligation, CoverageObligation)
    """The obligations whose outcome is a function of the obligation and the settings alone."""

    def __init__(self, timeout_ms: int = 300, rlimit: int = 2_000_000,
                 off: frozenset[str] = frozenset(), memo: OutcomeMemo | None = None) -> None:
        self.timeout_ms = timeout_ms
        self.rlimit = rlimit
        self.witness_points = "witness" not in off
        """Look for exact points showing "does not follow" before building solver state (``witness``)."""
        self.real_sections = "sections" not in off
        """Decide polynomial derivations exactly along lines before building solver state (``sections``)."""
        self.piecewise = "piecewise" not in off
        """Prove "follows" (and, for integer refutations, "no real point") for polynomial pieces, ``abs``
        and quotients split, by elimination before building solver state (``piecewise``)."""
        self.quotients = "quotients" not in off
        """Read quotients as opaque quantities in one-premise derivations (``quotients``)."""
        self.cleared = "cleared" not in off
        """Divide the premise through and clear denominators (``cleared``)."""
        self.memo = memo
        """The outcome memo this checker's outcomes are kept in (owned by whoever built the checkers)."""

    @property
    def min_time_limit_s(self) -> float:
        """The shortest wall-clock limit a solver call may get (besides the deadline)."""
        return self.timeout_ms * 4 / 1000

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
        except OutsideSMT:
            return Unknown(self.name, "outside the fragment translated to SMT")
        except z3.Z3Exception as exc:
            return Unknown(self.name, f"z3 error: {exc}")
        return None

    def _derivation(self, ob: DerivationObligation, deadline: float) -> Outcome:
        nonreal = nonreal_order(ob.claim)  # "x > \\sqrt{-7}": false whatever the premises
        if nonreal is not None:
            return nonreal
        # decided before a context is made: translation would stop outside the fragment
        if outside_smt([*ob.premises, ob.claim]):
            raise OutsideSMT
        found = _Found()
        for step in self.DERIVATION:  # the registry's derivation procedures of this checker, in its order
            out = step(self, ob, found, deadline)
            if out is not None:
                return out
        raise AssertionError("the last derivation procedure (z3) always answers")  # pragma: no cover

    # One method per derivation procedure of the registry (``obligations.procedures.registry``), each under
    # the procedure's name: it answers an outcome, or None to leave the obligation to the next one. A
    # procedure switched off by the settings (its attribute above) answers None. ``found`` carries what
    # an earlier procedure found that a later one reads (the witness points).

    def _one_premise(self, ob: DerivationObligation, decide: Callable[[Rel, Rel, bool], str | None],
                     method: str) -> Outcome | None:
        """One premise: "follows", "independent" or nothing from ``decide`` (z3 answers unsat: the same verdict)."""
        if len(ob.premises) != 1:
            return None
        decided = decide(ob.premises[0], ob.claim, bool(ob.integer_vars))
        if decided == "follows":
            return Verified(method, "follows from the previous relation")
        if decided == "independent":
            return Unknown(method, "does not follow from the previous relation alone")
        return None

    def _linear(self, ob: DerivationObligation, found: _Found, deadline: float) -> Outcome | None:
        """One linear equation a multiple of the other."""
        return self._one_premise(ob, linear_derivation, "linear")

    def _quotients(self, ob: DerivationObligation, found: _Found, deadline: float) -> Outcome | None:
        """Quotients read as opaque quantities."""
        return self._one_premise(ob, quotient_derivation, "quotients") if self.quotients else None

    def _cleared(self, ob: DerivationObligation, found: _Found, deadline: float) -> Outcome | None:
        """The premise divided through, denominators cleared ("follows" only)."""
        return self._one_premise(ob, lambda p, c, ints: "follows" if cleared_derivation(p, c, ints) else None,
                                 "cleared") if self.cleared else None

    def _witness(self, ob: DerivationObligation, found: _Found, deadline: float) -> Outcome | None:
        """Exact points: one where the claim fails and one where it holds (both SMT queries below have
        them as models: both answer "sat")."""
        if self.witness_points:
            found.fails, found.holds = witness_points(list(ob.premises), ob.claim, ob.integer_vars)
        if found.fails is not None and found.holds is not None:
            return Unknown("witness", "does not follow from the previous relation alone")
        return None

    def _piecewise(self, ob: DerivationObligation, found: _Found, deadline: float) -> Outcome | None:
        """"Follows" by elimination; a point where the claim fails (``found.fails``) is a model of the first
        query: no proof to look for."""
        if found.fails is None and self.piecewise and piecewise_follows(list(ob.premises), ob.claim, ob.integer_vars):
            return Verified("piecewise", "follows from the previous relation")  # z3 answers "unsat" to the first query
        return None

    def _sections(self, ob: DerivationObligation, found: _Found, deadline: float) -> Outcome | None:
        """One-variable sections, each answer the one z3 would give."""
        shown = (found.fails is not None, found.holds is not None)
        exact, point = univariate_decision(list(ob.premises), ob.claim, ob.integer_vars, shown) \
            if self.real_sections else (None, None)
        if exact == "follows":  # "premises and not claim" has no real point: z3 answers unsat
            return Verified("sections", "follows from the previous relation")
        if exact == "independent":  # both queries have real points: z3 answers sat to both
            return Unknown("sections", "does not follow from the previous relation alone")
        if exact == "irrational":  # z3: "sat" with no rational model to show, then "unsat"
            return _gap_refutation(ob) or Unknown("sections", "does not follow from the previous relation alone")
        if exact == "contradicted" and point is not None and (refuted := _refutation(ob, point, "sections")) is not None:
            return refuted  # z3: "sat" with this point, its only model, then "unsat"
        return None

    def _z3(self, ob: DerivationObligation, found: _Found, deadline: float) -> Outcome:
        return self._solve(ob, deadline)

    def _solve(self, ob: DerivationObligation, deadline: float) -> Outcome:
        """The two SMT queries: premises and not claim (unsat: follows), premises and claim."""
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
        # confirm exactly: the witness satisfies the premises and falsifies the claim
        if r2 == z3.unsat and witness is not None and (refuted := _refutation(ob, witness)) is not None:
            if ints and self._consistent_over_reals(ob, deadline):
                return Unknown(self.name, "contradicts its premises only if the variables are integers "
                                          "(the domain is guessed from the problem's words)")
            return refuted
        if r2 == z3.unsat and witness is None and (gap := _gap_refutation(ob)) is not None:
            return gap
        if r1 == z3.unknown or r2 == z3.unknown:
            return Unknown(self.name, "solver gave up (timeout or nonlinear)")
        return Unknown(self.name, "does not follow from the previous relation alone")

    def _consistent_over_reals(self, ob: DerivationObligation, deadline: float) -> bool:
        """Premises and claim hold together for some real values (or the solver cannot exclude it)."""
        if self.piecewise and piecewise_contradicts(list(ob.premises), ob.claim):
            return False  # no real point: z3, asked over the reals, answers "unsat"
        syms = _Syms(z3.Context())
        s = self._solver(deadline, syms.ctx)
        s.add(*[_z3_rel(p, syms) for p in ob.premises], _z3_rel(ob.claim, syms))
        return bool(s.check() != z3.unsat)

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
                    raise OutsideSMT
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


_DERIVATION_STEPS: dict[str, Callable[[Z3Checker, DerivationObligation, _Found, float], Outcome | None]] = {
    "linear": Z3Checker._linear, "quotients": Z3Checker._quotients, "cleared": Z3Checker._cleared,
    "witness": Z3Checker._witness, "piecewise": Z3Checker._piecewise, "sections": Z3Checker._sections,
    "z3": Z3Checker._z3,
}
Z3Checker.DERIVATION = tuple(_DERIVATION_STEPS[p.name] for p in procedures_for("derivation") if p.checker == "z3")
"""The derivation procedures the registry gives this checker, in the registry's order (z3 last): a
procedure registered without a method here stops the import (KeyError)."""
