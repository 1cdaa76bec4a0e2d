"""Obligations as Lean 4 theorem statements (pure: no Lean needed to render).

``render(ob, flavour)`` returns a ``LeanStatement`` or an ``Unrenderable`` value saying why
no faithful statement exists. Two flavours: ``mathlib`` (``import Mathlib``; ``ℤ ℚ ℝ``,
``Real.sqrt``, ``Nat.factorial``, ``|x|``, ``⌊x⌋``, ``Even n``) and ``core`` (no imports;
``Int``/``Rat`` from Lean's prelude, which holds ``Rat`` from Lean v4.24.0 on: ``Rat`` is rendered
only when ``lean_version`` says so, otherwise the obligation is Unrenderable with that reason; nothing real).
The statement value lives in ``faithsieve.lean.statement``, formulas as terms (scalar types,
names, expressions, relations) in ``faithsieve.lean.terms``; this module renders whole obligations.

Number types, one scalar type ``T`` per obligation:

========================================  =====================================================
what the formulas contain                 ``T``
========================================  =====================================================
integer literals, ``+ - * ^n mod``, n!     ``ℤ`` (never ``ℕ``: ``2 - 5`` would truncate to 0)
``/``, decimals, ``%``, floor/ceil         ``ℚ`` (``/`` on ``ℤ`` would round down)
``sqrt pi e sin cos tan ln log_b exp``     ``ℝ`` (mathlib only; core: Unrenderable)
========================================  =====================================================

Variables: identities range over ``ℚ`` (equivalent to ``ℝ`` for rational expressions with
``|.|`` and ``=``, ``≤``, ``≥``; floor/ceil, radicals with variables, and nonlinear ``<``, ``>``, ``≠``
need ``ℝ``: ``x ^ 2 ≠ 2`` holds on ``ℚ``; core refuses those); derivations and real coverage over
``ℝ`` in mathlib and over ``Rat`` in core only when every relation is linear (where ``ℚ`` and
``ℝ`` agree); ``integer_vars`` and integer coverage over ``ℤ``, cast as ``(n : T)`` where the
arithmetic is in a larger ``T``. ``ℕ`` appears only as the literal arguments of
``Nat.factorial``/``Nat.choose`` and as exponents (natural literals; others are Unrenderable).
Decimals are exact fractions of the digits written (``2.5`` → ``25 / 10``); percent ``p%`` is
``(p / 100)``. Lean's total functions (``x / 0 = 0``, ``x % 0 = x``, ``Real.sqrt`` of negatives ``= 0``,
``Real.log 0 = 0``, ``Real.tan`` where ``cos = 0``) are made explicit: a variable denominator
or modulus adds ``(hd : den ≠ 0)``, a variable radicand ``(hd : 0 ≤ r)``, a logarithm
``(hd : 0 < a)``, a tangent ``(hd : Real.cos a ≠ 0)``. Closed arguments (and, for substitutions
and solutions, arguments at the established values) are decided instead
(``faithsieve.lean.domains.closed_sign``): a zero denominator, a negative radicand, a logarithm
of a non-positive number, a tangent at a zero of the cosine, or a sign that cannot be decided is
Unrenderable with the reason. The domain hypotheses must hold somewhere together with the
premises (``faithsieve.lean.domains.satisfiable``): a set that no point is found to satisfy
(``x - x ≠ 0``) is Unrenderable, never a vacuously true statement. Approximate claims (``≈``, rounded values) are Unrenderable: Lean cannot check
"rounds to".
"""


from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Literal

from faithsieve.lean.domains import satisfiable
from faithsieve.lean.statement import Flavour, LeanStatement, Unrenderable
from faithsieve.lean.terms import (
    _Q,
    _R,
    _Z,
    MAX_NODES,
    MAX_RENDER_DEPTH,
    _check_size,
    _Ctx,
    _frac,
    _linear,
    _needs,
    _Refuse,
    _rel,
    _value_need,
    sanitize,
)
from faithsieve.lean.versions import CORE_RAT, at_least, shown
from faithsieve.obligations.checkers.exact import dropped_roots
from faithsieve.obligations.kinds.models import (
    ArithmeticObligation,
    CoverageObligation,
    DerivationObligation,
    IdentityObligation,
    Obligation,
    SolutionObligation,
    SubstitutionObligation,
)

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import Call, Expr, Rel, variables, walk
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, evaluate

MAX_CHARS = 6000
"""Longest theorem statement produced."""
_STRICT = ("<", ">", "!=")
"""Relations whose truth for every rational value does not give their truth for every real one."""
_KIND_PREFIX = {"arithmetic": "arith", "identity": "ident", "substitution": "subst", "derivation": "deriv",
                "solution": "sol", "coverage": "cover"}


# --- obligations -------------------------------------------------------------------------------

def render(ob: Obligation, flavour: Flavour = "mathlib", lean_version: str | None = None) -> LeanStatement | Unrenderable:
    """The Lean 4 statement of one obligation, or why there is none. ``lean_version`` (``v4.24.0``)
    matters for the core flavour only: ``Rat`` is used when it is known to be in the prelude."""
    try:
        return _render(ob, flavour, lean_version)
    except _Refuse as exc:
        return Unrenderable(str(exc))


def _gate(ctx: _Ctx, premises: list[Rel], integers: frozenset[str], lean_version: str | None) -> None:
    """Refuse core ``Rat`` where the toolchain may lack it, and domain hypotheses no point satisfies."""
    if ctx.flavour == "core" and (ctx.t == _Q or _Q in ctx.var_types.values()) and not at_least(lean_version, CORE_RAT):
        have = f"this toolchain is {lean_version}" if lean_version else "the Lean version is not known"
        raise _Refuse(f"needs core Lean's Rat, in the prelude only from Lean {shown(CORE_RAT)} ({have}; "
                      "use the Mathlib flavour or a newer toolchain)")
    if (ctx.guards or premises) and not satisfiable(premises, ctx.guards, integers):
        if not ctx.guards:
            raise _Refuse("no point found where the premises hold: the statement could be vacuously true "
                          "(a proof of it would verify nothing)")
        raise _Refuse("no point found where the domain conditions (" + ", ".join(dict.fromkeys(ctx.domain))
                      + ") hold together with the premises: the statement could be vacuously true")


def _render(ob: Obligation, flavour: Flavour, lean_version: str | None) -> LeanStatement:
    name = f"fs_{_KIND_PREFIX[ob.kind.value]}_{sanitize(ob.id)}"
    if isinstance(ob, CoverageObligation):
        return _coverage(ob, flavour, name, lean_version)
    rels = list(ob.equations) if isinstance(ob, SolutionObligation) else [ob.claim]
    if isinstance(ob, DerivationObligation):
        rels = list(ob.premises) + rels
    exprs = [x for r in rels for x in (r.lhs, r.rhs)]
    _check_size(exprs)
    if getattr(ob, "approx", False) or any(r.op == "~" for r in rels):
        raise _Refuse("approximate claim (Lean cannot check 'rounds to')")
    need = max(_needs(x) for x in exprs)
    vs = sorted(set().union(*(variables(x) for x in exprs)))
    ctx, refute, notes = _context(ob, flavour, exprs, vs, need)
    hyps, concl = _claim(ob, ctx, vs)
    premises = list(ob.premises) if isinstance(ob, DerivationObligation) else []
    _gate(ctx, premises, frozenset(getattr(ob, "integer_vars", ())), lean_version)
    hyps += [(ctx.fresh(f"hd{i}"), d) for i, d in enumerate(dict.fromkeys(ctx.domain), 1)]
    binders = tuple((ctx.names[v], ctx.ty(ctx.var_types[v])) for v in vs if v not in ctx.env)
    return _finish(LeanStatement(name=name, conclusion=concl, binders=binders, hypotheses=tuple(hyps),
                                 imports=_imports(flavour), flavour=flavour, refute=refute, notes=tuple(notes)))


_Refute = Literal["negation", "contradiction", "none"]


def _context(ob: Obligation, flavour: Flavour, exprs: list[Expr], vs: list[str],
             need: int) -> tuple[_Ctx, _Refute, list[str]]:
    """The number types of the obligation's variables, how a refutation is proved, and notes (per kind)."""
    refute: _Refute = "negation"
    notes: list[str] = []
    if isinstance(ob, ArithmeticObligation):
        if ob.rounded:
            raise _Refuse(f"uses rounded values from earlier steps ({', '.join(ob.rounded)})")
        ctx = _Ctx(flavour, max(_Z, need), {})
    elif isinstance(ob, SolutionObligation):
        if set(vs) - set(ob.values):
            raise _Refuse("equation has variables with no claimed value")
        if ob.sole and len(ob.values) == 1 and len(ob.equations) == 1 and _may_solve(ob.equations[0], ob.values):
            (var, v), = ob.values.items()
            dropped = dropped_roots(ob.equations[0], var, v, ob.constraints, DEFAULT_LIMITS)
            if dropped:  # "3 ^ 2 = 9" would prove that 3 is a root, not that x = 3 follows (a non-root is refutable)
                raise _Refuse(f"the step gives {var} = {v} as the value of {var} and drops the real root(s) "
                              f"{', '.join(dropped)}")
        ctx = _Ctx(flavour, max(need, _value_need(ob.values)), {}, dict(ob.values))
    elif isinstance(ob, SubstitutionObligation):
        t = max(need, _value_need(ob.env))
        ctx = _Ctx(flavour, t, {v: t for v in vs})
    elif isinstance(ob, IdentityObligation):
        steps = any(isinstance(n, Call) and n.fn in ("floor", "ceil") for x in exprs for n in walk(x))
        # ∀ x ∈ ℚ and ∀ x ∈ ℝ agree for continuous sides and =, ≤, ≥ (ℚ is dense); a strict relation or ≠
        # can fail at irrational points only: (x : ℚ) : x ^ 2 ≠ 2 is true, over ℝ it is false
        strict = ob.claim.op in _STRICT and bool(vs) and not all(_linear(x) for x in exprs)
        if strict and flavour == "core":
            raise _Refuse("a strict inequality or ≠ in variables can hold over ℚ and fail over ℝ (x ^ 2 ≠ 2); "
                          "it needs Mathlib's ℝ")
        t = max(_Q, need, _R if steps or strict else _Q)  # a floor identity can hold on ℚ and fail on ℝ
        ctx = _Ctx(flavour, t, {v: t for v in vs})
        if not ob.asserted_identity:
            refute = "none"
            notes.append("not asserted as an identity: a proof of its negation is no evidence of an error")
    else:
        assert isinstance(ob, DerivationObligation)
        ints = set(ob.integer_vars)
        real_vs = [v for v in vs if v not in ints]
        vt = _R if flavour == "mathlib" else _Q
        if real_vs and flavour == "core" and not all(_linear(x) for x in exprs):
            raise _Refuse("nonlinear relation over real variables needs Mathlib's ℝ (ℚ would change its truth)")
        t = max(need, vt if real_vs else _Z)
        ctx = _Ctx(flavour, t, {v: (_Z if v in ints else t) for v in vs})
        refute = "contradiction"
    return ctx, refute, notes


def _may_solve(eq: Rel, values: Mapping[str, Fraction]) -> bool:
    """The value may satisfy the equation: it does exactly, or exact arithmetic cannot tell."""
    try:
        return evaluate(eq.lhs, dict(values)) == evaluate(eq.rhs, dict(values))
    except FaithSieveError:
        return True


def _claim(ob: Obligation, ctx: _Ctx, vs: list[str]) -> tuple[list[tuple[str, str]], str]:
    """The hypotheses (established values, premises) and the conclusion of the statement."""
    hyps: list[tuple[str, str]] = []
    if isinstance(ob, SubstitutionObligation):
        for v in vs:
            if v not in ob.env:
                raise _Refuse(f"no established value for {v}")
            val, _ = _frac(ob.env[v])
            hyps.append((ctx.fresh("h" + ctx.names[v]), f"{ctx.names[v]} = {val}"))
        ctx.env = dict(ob.env)
        _rel(ob.claim, ctx)  # denominators checked at the established values: zero is refused
        ctx.env = {}
        concl = _rel(ob.claim, ctx)
        ctx.domain.clear()  # the values fix every variable, and the domains were decided at them
        ctx.guards.clear()
    elif isinstance(ob, DerivationObligation):
        hyps += [(ctx.fresh(f"h{i}"), _rel(p, ctx)) for i, p in enumerate(ob.premises, 1)]
        concl = _rel(ob.claim, ctx)
    elif isinstance(ob, SolutionObligation):
        concl = " ∧ ".join(_rel(r, ctx) for r in ob.equations)
    else:
        assert not isinstance(ob, CoverageObligation)  # rendered by _coverage
        concl = _rel(ob.claim, ctx)
    return hyps, concl


def _imports(flavour: Flavour) -> tuple[str, ...]:
    return ("Mathlib",) if flavour == "mathlib" else ()


def _finish(st: LeanStatement) -> LeanStatement:
    if len(st.theorem()) > MAX_CHARS:
        raise _Refuse(f"rendered statement longer than {MAX_CHARS} characters")
    return st


def _residue(par: str, n: str, flavour: Flavour) -> str:
    if par in ("even", "odd"):
        if flavour == "mathlib":
            return f"{'Even' if par == 'even' else 'Odd'} {n}"
        return f"{n} % 2 = {0 if par == 'even' else 1}"
    parts = par.split()
    if len(parts) != 3 or parts[0] != "mod" or not all(p.isdigit() for p in parts[1:]) or int(parts[1]) < 1:
        raise _Refuse(f"unreadable residue condition {par!r}")
    return f"{n} % {int(parts[1])} = {int(parts[2])}"


def _coverage(ob: CoverageObligation, flavour: Flavour, name: str, lean_version: str | None) -> LeanStatement:
    rels = list(ob.conditions) + list(ob.domain_constraints)
    exprs = [x for r in rels for x in (r.lhs, r.rhs)]
    _check_size(exprs)
    if any(variables(x) - {ob.variable} for x in exprs):
        raise _Refuse("a case condition mentions another variable")
    need = max([_needs(x) for x in exprs], default=_Z)
    if ob.domain == "integer":
        vt = _Z
    elif any(ob.parity):
        raise _Refuse("residue cases over a real variable")
    elif flavour == "core":
        if not all(_linear(x) for x in exprs):
            raise _Refuse("nonlinear conditions over a real variable need Mathlib's ℝ")
        vt = _Q
    else:
        vt = _R
    ctx = _Ctx(flavour, max(need, vt), {ob.variable: vt})
    n = ctx.names[ob.variable]
    if len(ob.case_sizes) != len(ob.parity) or sum(ob.case_sizes) != len(ob.conditions):
        raise _Refuse("case sizes do not match the conditions")
    cases: list[str] = []
    k = 0
    for par, size in zip(ob.parity, ob.case_sizes, strict=True):
        if par:
            cases.append(_residue(par, n, flavour))
            continue
        if size == 0:
            raise _Refuse("a case with no condition")
        conj = [_rel(r, ctx) for r in ob.conditions[k:k + size]]
        k += size
        cases.append(" ∧ ".join(conj))
    if not cases:
        raise _Refuse("no cases")
    concl = " ∨ ".join(f"({x})" if "∧" in x and len(cases) > 1 else x for x in cases)
    hyps = [(ctx.fresh(f"h{i}"), _rel(r, ctx)) for i, r in enumerate(ob.domain_constraints, 1)]
    _gate(ctx, list(ob.domain_constraints), frozenset({ob.variable} if ob.domain == "integer" else ()), lean_version)
    hyps += [(ctx.fresh(f"hd{i}"), d) for i, d in enumerate(dict.fromkeys(ctx.domain), 1)]
    return _finish(LeanStatement(name=name, conclusion=concl, binders=((n, ctx.ty(vt)),), hypotheses=tuple(hyps),
                                 imports=_imports(flavour), flavour=flavour))


__all__ = ["MAX_CHARS", "MAX_RENDER_DEPTH", "MAX_NODES", "Flavour", "LeanStatement", "Unrenderable", "render", "sanitize"]
