"""Obligations as Lean 4 theorem statements (pure: no Lean needed to render).

``render(ob, flavour)`` returns a ``LeanStatement`` or an ``Unrenderable`` value saying why
no faithful statement exists. Two flavours: ``mathlib`` (``import Mathlib``; ``ℤ ℚ ℝ``,
``Real.sqrt``, ``Nat.factorial``, ``|x|``, ``⌊x⌋``, ``Even n``) and ``core`` (no imports;
``Int``/``Rat`` from Lean's prelude, which holds ``Rat`` in recent toolchains; nothing real).

Number types, one scalar type ``T`` per obligation:

========================================  =====================================================
what the formulas contain                 ``T``
========================================  =====================================================
integer literals, ``+ - * ^n mod``, n!     ``ℤ`` (never ``ℕ``: ``2 - 5`` would truncate to 0)
``/``, decimals, ``%``, floor/ceil         ``ℚ`` (``/`` on ``ℤ`` would round down)
``sqrt pi e sin cos tan ln log_b exp``     ``ℝ`` (mathlib only; core: Unrenderable)
========================================  =====================================================

Variables: identities range over ``ℚ`` (equivalent to ``ℝ`` for rational expressions with
``|.|``; floor/ceil or radicals with variables need ``ℝ``); derivations and real coverage over
``ℝ`` in mathlib and over ``Rat`` in core only when every relation is linear (where ``ℚ`` and
``ℝ`` agree); ``integer_vars`` and integer coverage over ``ℤ``, cast as ``(n : T)`` where the
arithmetic is in a larger ``T``. ``ℕ`` appears only as the literal arguments of
``Nat.factorial``/``Nat.choose`` and as exponents (natural literals; others are Unrenderable).
Decimals are exact fractions of the digits written (``2.5`` → ``25 / 10``); percent ``p%`` is
``(p / 100)``. Lean's total division (``x / 0 = 0``) and ``Real.sqrt`` of negatives (``= 0``)
are made explicit: a variable denominator adds ``(hd : den ≠ 0)``, a variable radicand
``(hd : 0 ≤ r)``, a logarithm ``(hd : 0 < a)``; a closed denominator equal to zero is
Unrenderable. Approximate claims (``≈``, rounded values) are Unrenderable: Lean cannot check
"rounds to".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from faithsieve.obligations.models import (
    ArithmeticObligation,
    CoverageObligation,
    DerivationObligation,
    IdentityObligation,
    Obligation,
    Rel,
    SolutionObligation,
    SubstitutionObligation,
)

from faithsieve.errors import FaithSieveError
from faithsieve.mathtext.ast import (
    BinOp,
    Call,
    Const,
    Expr,
    Neg,
    Num,
    Pow,
    Var,
    children,
    variables,
    walk,
)
from faithsieve.mathtext.evaluate import evaluate

Flavour = Literal["mathlib", "core"]
MAX_NODES = 300
"""Most AST nodes one obligation may have (all its relations together)."""
MAX_DEPTH = 40
"""Deepest expression rendered."""
MAX_CHARS = 6000
"""Longest theorem statement produced."""
MAX_EXPONENT = 10_000
"""Largest natural exponent / binomial argument written (factorials: 1000, as in evaluation)."""
MAX_LITERAL_BITS = 3400
"""Largest numeric literal written (about 1000 decimal digits)."""

_Z, _Q, _R = 0, 1, 2
_TYPE_NAMES = {"mathlib": ("ℤ", "ℚ", "ℝ"), "core": ("Int", "Rat", "Real")}
_KIND_PREFIX = {"arithmetic": "arith", "identity": "ident", "substitution": "subst", "derivation": "deriv",
                "solution": "sol", "coverage": "cover"}
_REL_OPS = {"=": "=", "!=": "≠", "<": "<", ">": ">", "<=": "≤", ">=": "≥"}
_KEYWORDS = frozenset((  # noqa: SIM905
    "at by do fun have show from let in if then else match with end def theorem lemma example abbrev sorry admit "
    "Type Prop Sort where calc open import suffices obtain using for mut return unless try catch finally deriving "
    "instance structure class inductive namespace section variable universe axiom private protected noncomputable "
    "partial unsafe macro syntax elab attribute local scoped this nomatch nofun forall exists").split())
_GREEK_ASCII = {"α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta", "η": "eta",
                "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lam", "μ": "mu", "ν": "nu", "ξ": "xi", "π": "pi_",
                "ρ": "rho", "σ": "sigma", "τ": "tau", "φ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega"}


@dataclass(frozen=True)
class Unrenderable:
    """No faithful Lean statement for this obligation in this flavour, and why."""

    reason: str


@dataclass(frozen=True)
class LeanStatement:
    """A theorem statement: ``theorem name binders hypotheses : conclusion``.

    ``binders`` and ``hypotheses`` are ``(name, type)`` / ``(name, proposition)`` pairs, written
    ``(x : ℚ)`` / ``(h1 : x = 5)``. ``refute`` says what refutes the obligation: ``negation``
    (a proof of ``negation()``), ``contradiction`` (a proof of ``refutation()``: the claim
    contradicts its premises, the project's meaning of a wrong derivation) or ``none`` (nothing
    Lean proves counts as an error: an equation not asserted as an identity)."""

    name: str
    conclusion: str
    binders: tuple[tuple[str, str], ...] = ()
    hypotheses: tuple[tuple[str, str], ...] = ()
    imports: tuple[str, ...] = ("Mathlib",)
    opens: tuple[str, ...] = ()
    flavour: Flavour = "mathlib"
    refute: Literal["negation", "contradiction", "none"] = "negation"
    notes: tuple[str, ...] = field(default=())

    def text(self) -> str:
        """The one-line header, without ``:=``."""
        parts = [f"theorem {self.name}"]
        parts += [f"({n} : {t})" for n, t in self.binders]
        parts += [f"({n} : {p})" for n, p in self.hypotheses]
        return " ".join(parts) + f" : {self.conclusion}"

    def theorem(self, proof: str = "sorry") -> str:
        """The whole self-contained snippet: imports, opens, then ``header := proof``."""
        blocks = []
        if self.imports:
            blocks.append("\n".join(f"import {i}" for i in self.imports))
        if self.opens:
            blocks.append("open " + " ".join(self.opens))
        blocks.append(f"{self.text()} := {proof.strip()}")
        return "\n\n".join(blocks) + "\n"

    def negation(self) -> LeanStatement:
        """The statement whose proof refutes this one: ``¬ (claim)`` when closed, else the
        counterexample form ``∃ binders, hyp₁ ∧ … ∧ ¬ (claim)``."""
        body = " ∧ ".join([_paren_prop(p) for _, p in self.hypotheses] + [f"¬ ({self.conclusion})"])
        if self.binders:
            concl = "∃ " + " ".join(f"({n} : {t})" for n, t in self.binders) + ", " + body
        else:
            concl = body
        return LeanStatement(name=self.name + "_neg", conclusion=concl, imports=self.imports, opens=self.opens,
                             flavour=self.flavour, refute="negation", notes=self.notes)

    def refutation(self) -> LeanStatement | None:
        """What a refutation must prove (see ``refute``), or ``None`` when nothing counts."""
        if self.refute == "none":
            return None
        if self.refute == "negation":
            return self.negation()
        return LeanStatement(name=self.name + "_contra", conclusion=f"¬ ({self.conclusion})", binders=self.binders,
                             hypotheses=self.hypotheses, imports=self.imports, opens=self.opens,
                             flavour=self.flavour, refute="negation", notes=self.notes)


def _paren_prop(p: str) -> str:
    return f"({p})" if any(c in p for c in "∧∨→↔∀∃¬") else p


class _Refuse(Exception):
    pass


def sanitize(name: str) -> str:
    """A valid ASCII Lean identifier for a formula variable (``x_1``, ``alpha``, ``fun_``)."""
    out = []
    for ch in name:
        if ch in _GREEK_ASCII:
            out.append(_GREEK_ASCII[ch])
        elif ch.isascii() and (ch.isalnum() or ch == "_"):
            out.append(ch)
        elif ch == "'" and out:
            out.append("'")
        else:
            out.append("_")
    s = "".join(out).strip("_") or "v"
    if s[0].isdigit() or s[0] == "'":
        s = "v" + s
    return s + "_" if s in _KEYWORDS else s


class _Ctx:
    def __init__(self, flavour: Flavour, t: int, var_types: dict[str, int], env: dict[str, Fraction] | None = None):
        self.flavour, self.t, self.env = flavour, t, env or {}
        if t == _R and flavour == "core":
            raise _Refuse("real numbers need Mathlib (core Lean has no ℝ)")
        self.var_types, self.used, self.domain = var_types, set[str](), list[str]()
        self.names = {v: self.fresh(sanitize(v)) for v in sorted(var_types)}

    def ty(self, rank: int | None = None) -> str:
        return _TYPE_NAMES[self.flavour][self.t if rank is None else rank]

    def fresh(self, base: str) -> str:
        n = base
        while n in self.used:
            n += "'"
        self.used.add(n)
        return n

    def mathlib(self, what: str) -> None:
        if self.flavour != "mathlib":
            raise _Refuse(f"{what} needs Mathlib")

    def free(self, e: Expr) -> bool:
        return bool(variables(e) - set(self.env))


# --- number types ----------------------------------------------------------------------------

_REAL_FNS = ("sqrt", "root", "sin", "cos", "tan", "ln", "exp")


def _needs(e: Expr) -> int:
    """Smallest scalar type the expression's operations need."""
    need = _Z
    for n in walk(e):
        if isinstance(n, Const) and n.name not in ("pi", "e"):
            raise _Refuse(f"constant {n.name} has no real-number counterpart")
        if isinstance(n, Const) or isinstance(n, Call) and (n.fn in _REAL_FNS or n.fn.startswith("log")):
            need = _R
        elif _field_node(n):
            need = max(need, _Q)
    return need


def _field_node(n: Expr) -> bool:
    """Division, a non-integer literal, percent or floor/ceil: the arithmetic needs a field."""
    if isinstance(n, Num):
        return n.value.denominator != 1 or n.decimals > 0
    return isinstance(n, Call) and n.fn in ("percent", "floor", "ceil") or isinstance(n, BinOp) and n.op == "/"


def _value_need(values: dict[str, Fraction]) -> int:
    return _Q if any(v.denominator != 1 for v in values.values()) else _Z


def _linear(e: Expr) -> bool:
    """No product, quotient, power or function of the variables (abs and percent allowed)."""
    for n in walk(e):
        if isinstance(n, BinOp) and n.op == "*" and variables(n.left) and variables(n.right):
            return False
        if isinstance(n, BinOp) and n.op == "/" and variables(n.right):
            return False
        if isinstance(n, Pow) and variables(n.base):
            return False
        if isinstance(n, Call) and n.fn not in ("abs", "percent", "deg") and variables(n):
            return False
    return True


def _check_size(exprs: list[Expr]) -> None:
    nodes = 0
    for root in exprs:
        stack = [(root, 1)]
        while stack:
            n, d = stack.pop()
            nodes += 1
            if d > MAX_DEPTH or nodes > MAX_NODES:
                raise _Refuse(f"expression too large (over {MAX_NODES} nodes or {MAX_DEPTH} levels)")
            stack.extend((c, d + 1) for c in children(n))


# --- expressions -------------------------------------------------------------------------------

_ATOM = 1024
_NEG = 60  # below every arithmetic operator: a negation inside one is always parenthesised
_FRAC = 69  # a fraction literal is parenthesised inside * / % ^ but not inside + -


def _frac(v: Fraction, decimals: int = 0) -> tuple[str, int]:
    """An exact rational literal and its precedence: ``5``, ``-3``, ``5 / 2``, ``25 / 10`` (as written)."""
    num, den = abs(v), 1
    if decimals and (v * 10**decimals).denominator == 1:
        num, den = abs(v) * 10**decimals, 10**decimals
    elif v.denominator != 1:
        num, den = Fraction(abs(v.numerator)), v.denominator
    if max(num.numerator.bit_length(), den.bit_length()) > MAX_LITERAL_BITS:
        raise _Refuse("numeric literal too large")
    s = str(num.numerator) if den == 1 else f"{num.numerator} / {den}"
    if v < 0:
        return (f"-{s}" if den == 1 else f"-({s})"), _NEG
    return s, (_ATOM if den == 1 else _FRAC)


def _wrap(text: str, prec: int, need: int) -> str:
    return text if prec >= need else f"({text})"


def _expr(e: Expr, c: _Ctx) -> tuple[str, int, bool]:
    """(text, precedence, typed): ``typed`` when a leaf fixes the type to the context's."""
    if isinstance(e, Num):
        return (*_frac(e.value, e.decimals), False)
    if isinstance(e, Var):
        if e.name in c.env:
            return (*_frac(c.env[e.name]), False)
        if e.name not in c.names:
            raise _Refuse(f"free variable {e.name} in a claim without variables")
        name = c.names[e.name]
        if c.var_types[e.name] != c.t:
            return f"({name} : {c.ty()})", _ATOM, True
        return name, _ATOM, True
    if isinstance(e, Const):
        c.mathlib(f"constant {e.name}")
        if e.name not in ("pi", "e"):
            raise _Refuse(f"constant {e.name} has no real-number counterpart")
        return ("Real.pi", _ATOM, True) if e.name == "pi" else ("Real.exp 1", 1000, True)
    if isinstance(e, Neg):  # operand and the negation itself parenthesised under any operator
        s, p, typed = _expr(e.operand, c)
        return f"-{_wrap(s, p, _ATOM)}", _NEG, typed
    if isinstance(e, BinOp):
        return _binop(e, c)
    if isinstance(e, Pow):
        if c.free(e.exponent):
            raise _Refuse("exponent with variables")
        n = _closed_value(e.exponent, c)
        if n is None or n.denominator != 1 or n < 0:
            raise _Refuse("exponent that is not a natural number (would need zpow or rpow)")
        if n > MAX_EXPONENT:
            raise _Refuse("exponent too large")
        s, p, typed = _expr(e.base, c)
        return f"{_wrap(s, p, _ATOM)} ^ {n.numerator}", 75, typed
    assert isinstance(e, Call)
    return _call(e, c)


def _closed_value(e: Expr, c: _Ctx) -> Fraction | None:
    try:
        return evaluate(e, c.env)
    except FaithSieveError:
        return None


def _binop(e: BinOp, c: _Ctx) -> tuple[str, int, bool]:
    if e.op == "/":
        if c.t == _Z:
            raise _Refuse("division outside a field")  # never: "/" makes T at least ℚ
        if c.free(e.right):
            den, _, typed = _expr(e.right, c)
            c.domain.append(f"{den} ≠ 0" if typed else f"{_ascribe(den, c.ty())} ≠ 0")
        elif _closed_value(e.right, c) == 0:
            raise _Refuse("division by zero (Lean's x / 0 = 0 would decide it)")
    if e.op == "mod" and c.t != _Z:
        raise _Refuse("mod outside integer arithmetic")
    op, p = {"+": ("+", 65), "-": ("-", 65), "*": ("*", 70), "/": ("/", 70), "mod": ("%", 70)}[e.op]
    ls, lp, lt = _expr(e.left, c)
    rs, rp, rt = _expr(e.right, c)
    return f"{_wrap(ls, lp, p)} {op} {_wrap(rs, rp, p + 1)}", p, lt or rt


def _ascribe(s: str, ty: str) -> str:
    """``(s : ty)``, merged into an outer pair of parentheses that encloses all of ``s``."""
    if s.startswith("(") and s.endswith(")"):
        depth = 0
        for i, ch in enumerate(s):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth == 0:
                if i == len(s) - 1:
                    return f"{s[:-1]} : {ty})"
                break
    return f"({s} : {ty})"


def _typed_arg(e: Expr, c: _Ctx, atomic: bool = False) -> str:
    """The argument of a type-generic function, typed ``T`` (and parenthesised for ``atomic``)."""
    s, p, typed = _expr(e, c)
    return _wrap(s, p, _ATOM if atomic else 0) if typed else _ascribe(s, c.ty())


def _nat_literal(e: Expr, what: str, limit: int = MAX_EXPONENT) -> int:
    if not (isinstance(e, Num) and e.value.denominator == 1 and 0 <= e.value <= limit and not e.decimals):
        raise _Refuse(f"{what} argument is not a natural-number literal")
    return e.value.numerator


def _call(e: Call, c: _Ctx) -> tuple[str, int, bool]:
    fn, a = e.fn, e.args
    if fn == "percent":
        s, p, typed = _expr(a[0], c)
        return f"({_wrap(s, p, 70)} / 100)", _ATOM, typed
    if fn == "deg":
        return _expr(a[0], c)
    if fn == "factorial":
        c.mathlib("factorial (Nat.factorial)")
        return f"(Nat.factorial {_nat_literal(a[0], 'factorial', 1000)} : {c.ty()})", _ATOM, True
    if fn == "binom":
        c.mathlib("binomial (Nat.choose)")
        n, k = _nat_literal(a[0], "binomial"), _nat_literal(a[1], "binomial")
        return f"(Nat.choose {n} {k} : {c.ty()})", _ATOM, True
    if fn in ("abs", "floor", "ceil") and c.flavour == "mathlib":
        arg = _typed_arg(a[0], c)
        if fn == "abs":
            return f"|{arg}|", _ATOM, True
        return f"({'⌊' if fn == 'floor' else '⌈'}{arg}{'⌋' if fn == 'floor' else '⌉'} : {c.ty()})", _ATOM, True
    if fn in ("abs", "floor", "ceil"):
        arg = _typed_arg(a[0], c, atomic=True)
        if fn == "abs":
            return f"(if {arg} < 0 then -{arg} else {arg})", _ATOM, True
        return f"(Rat.{fn} {arg} : {c.ty()})", _ATOM, True
    if fn == "root":
        idx = _closed_value(a[1], c)
        if idx != 2:
            raise _Refuse("n-th root other than the square root (Real.rpow differs on negative bases)")
        fn, a = "sqrt", a[:1]
    c.mathlib(f"{fn}")
    if fn in ("sin", "cos", "tan"):
        has_deg = any(isinstance(n, Call) and n.fn == "deg" for n in walk(a[0]))
        s, p, _ = _expr(a[0], c)
        arg = f"({_wrap(s, p, 70)} * Real.pi / 180)" if has_deg else _wrap(s, p, _ATOM)
        return f"Real.{fn} {arg}", 1000, True
    if fn == "sqrt" or fn in ("ln", "exp") or fn.startswith("log_"):
        if fn == "sqrt":
            lean, dom = "Real.sqrt", "0 ≤ {}"
        elif fn == "exp":
            lean, dom = "Real.exp", ""
        elif fn == "ln" or fn == "log_e":
            lean, dom = "Real.log", "0 < {}"
        elif fn[4:].isdigit():
            lean, dom = f"Real.logb {fn[4:]}", "0 < {}"
        else:
            raise _Refuse(f"logarithm base {fn[4:]!r}")
        s, p, typed = _expr(a[0], c)
        if dom and c.free(a[0]):
            c.domain.append(dom.format(s if typed else _ascribe(s, c.ty())))
        return f"{lean} {_wrap(s, p, _ATOM)}", 1000, True
    if fn == "log":
        raise _Refuse("log without a base is ambiguous (ln or log₁₀)")
    raise _Refuse(f"function {fn.removeprefix('fn:')} has no Lean counterpart here")


def _rel(r: Rel, c: _Ctx) -> str:
    if r.op not in _REL_OPS:
        raise _Refuse("approximate relation (Lean cannot check 'rounds to')")
    ls, _, lt = _expr(r.lhs, c)
    rs, _, rt = _expr(r.rhs, c)
    if not (lt or rt):
        ls = _ascribe(ls, c.ty())
    return f"{ls} {_REL_OPS[r.op]} {rs}"


# --- obligations -------------------------------------------------------------------------------

def render(ob: Obligation, flavour: Flavour = "mathlib") -> LeanStatement | Unrenderable:
    """The Lean 4 statement of one obligation, or why there is none."""
    try:
        return _render(ob, flavour)
    except _Refuse as exc:
        return Unrenderable(str(exc))


def _render(ob: Obligation, flavour: Flavour) -> LeanStatement:
    name = f"fs_{_KIND_PREFIX[ob.kind.value]}_{sanitize(ob.id)}"
    if isinstance(ob, CoverageObligation):
        return _coverage(ob, flavour, name)
    rels = list(ob.equations) if isinstance(ob, SolutionObligation) else [ob.claim]
    if isinstance(ob, DerivationObligation):
        rels = list(ob.premises) + rels
    exprs = [x for r in rels for x in (r.lhs, r.rhs)]
    _check_size(exprs)
    if getattr(ob, "approx", False) or any(r.op == "~" for r in rels):
        raise _Refuse("approximate claim (Lean cannot check 'rounds to')")
    need = max(_needs(x) for x in exprs)
    vs = sorted(set().union(*(variables(x) for x in exprs)))
    refute: Literal["negation", "contradiction", "none"] = "negation"
    notes: list[str] = []
    if isinstance(ob, ArithmeticObligation):
        if ob.rounded:
            raise _Refuse(f"uses rounded values from earlier steps ({', '.join(ob.rounded)})")
        ctx = _Ctx(flavour, max(_Z, need), {})
    elif isinstance(ob, SolutionObligation):
        if set(vs) - set(ob.values):
            raise _Refuse("equation has variables with no claimed value")
        ctx = _Ctx(flavour, max(need, _value_need(ob.values)), {}, dict(ob.values))
    elif isinstance(ob, SubstitutionObligation):
        t = max(need, _value_need(ob.env))
        ctx = _Ctx(flavour, t, {v: t for v in vs})
    elif isinstance(ob, IdentityObligation):
        steps = any(isinstance(n, Call) and n.fn in ("floor", "ceil") for x in exprs for n in walk(x))
        t = max(_Q, need, _R if steps else _Q)  # a floor identity can hold on ℚ and fail on ℝ
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
        ctx.domain.clear()  # the values fix every variable: no domain hypotheses needed
    elif isinstance(ob, DerivationObligation):
        hyps += [(ctx.fresh(f"h{i}"), _rel(p, ctx)) for i, p in enumerate(ob.premises, 1)]
        concl = _rel(ob.claim, ctx)
    elif isinstance(ob, SolutionObligation):
        concl = " ∧ ".join(_rel(r, ctx) for r in ob.equations)
    else:
        concl = _rel(ob.claim, ctx)
    hyps += [(ctx.fresh(f"hd{i}"), d) for i, d in enumerate(dict.fromkeys(ctx.domain), 1)]
    binders = tuple((ctx.names[v], ctx.ty(ctx.var_types[v])) for v in vs if v not in ctx.env)
    return _finish(LeanStatement(name=name, conclusion=concl, binders=binders, hypotheses=tuple(hyps),
                                 imports=_imports(flavour), flavour=flavour, refute=refute, notes=tuple(notes)))


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


def _coverage(ob: CoverageObligation, flavour: Flavour, name: str) -> LeanStatement:
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
    for par, size in zip(ob.parity, ob.case_sizes):
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
    hyps += [(ctx.fresh(f"hd{i}"), d) for i, d in enumerate(dict.fromkeys(ctx.domain), 1)]
    return _finish(LeanStatement(name=name, conclusion=concl, binders=((n, ctx.ty(vt)),), hypotheses=tuple(hyps),
                                 imports=_imports(flavour), flavour=flavour))


__all__ = ["MAX_CHARS", "MAX_DEPTH", "MAX_NODES", "Flavour", "LeanStatement", "Unrenderable", "render", "sanitize"]
