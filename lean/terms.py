"""Formulas as Lean 4 terms: the scalar type an obligation needs, variable names, expressions, relations.

Pure and bounded (``MAX_NODES``, ``MAX_RENDER_DEPTH``, ``MAX_EXPONENT``, ``MAX_LITERAL_BITS``). What has no
faithful term raises ``_Refuse`` with the reason; ``faithsieve.lean.render`` turns it into an
``Unrenderable`` value. The typing and notation rules are described in ``render``'s docstring.
"""

from __future__ import annotations

from fractions import Fraction

from faithsieve.lean.domains import Undecided, closed_sign, guard
from faithsieve.lean.statement import Flavour

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import (
    BinOp,
    Call,
    Const,
    Expr,
    Neg,
    Num,
    Pow,
    Rel,
    Var,
    children,
    variables,
    walk,
)
from faithsieve.mathtext.ast import render as render_text
from faithsieve.mathtext.evaluate import evaluate

__all__ = ["MAX_RENDER_DEPTH", "MAX_EXPONENT", "MAX_LITERAL_BITS", "MAX_NODES", "sanitize"]

MAX_NODES = 300
"""Most AST nodes one obligation may have (all its relations together)."""
MAX_RENDER_DEPTH = 40
"""Deepest expression rendered."""
MAX_EXPONENT = 10_000
"""Largest natural exponent / binomial argument written (factorials: 1000, as in evaluation)."""
MAX_LITERAL_BITS = 3400
"""Largest numeric literal written (about 1000 decimal digits)."""

_Z, _Q, _R = 0, 1, 2
_TYPE_NAMES = {"mathlib": ("ℤ", "ℚ", "ℝ"), "core": ("Int", "Rat", "Real")}
_REL_OPS = {"=": "=", "!=": "≠", "<": "<", ">": ">", "<=": "≤", ">=": "≥"}
_KEYWORDS = frozenset((  # noqa: SIM905
    "at by do fun have show from let in if then else match with end def theorem lemma example abbrev sorry admit "
    "Type Prop Sort where calc open import suffices obtain using for mut return unless try catch finally deriving "
    "instance structure class inductive namespace section variable universe axiom private protected noncomputable "
    "partial unsafe macro syntax elab attribute local scoped this nomatch nofun forall exists").split())
_GREEK_ASCII = {"α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta", "η": "eta",
                "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lam", "μ": "mu", "ν": "nu", "ξ": "xi", "π": "pi_",
                "ρ": "rho", "σ": "sigma", "τ": "tau", "φ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega"}


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
        self.guards: list[Rel] = []
        """The domain conditions of ``domain`` as relations (``e op 0``), for the satisfiability check."""
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

    def require(self, text: str, e: Expr, op: str) -> None:
        """Add the domain hypothesis ``text`` (``e op 0``, on the obligation's variables)."""
        self.domain.append(text)
        self.guards.append(guard(e, op))

    def sign(self, e: Expr, what: str) -> int:
        """The sign of a closed ``e`` (at the established values), or a refusal saying why it is unknown."""
        try:
            return closed_sign(e, self.env)
        except Undecided as exc:
            raise _Refuse(f"cannot decide the {what} {render_text(e)}: {exc}") from None


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
            if d > MAX_RENDER_DEPTH or nodes > MAX_NODES:
                raise _Refuse(f"expression too large (over {MAX_NODES} nodes or {MAX_RENDER_DEPTH} levels)")
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
    if not isinstance(e, Call):  # a derivative, an integral or a limit (``Calc``)
        raise _Refuse("a derivative, an integral or a limit: no Lean rendering here (checked by sympy-calculus)")
    return _call(e, c)


def _closed_value(e: Expr, c: _Ctx) -> Fraction | None:
    try:
        return evaluate(e, c.env)
    except FaithSieveError:
        return None


def _binop(e: BinOp, c: _Ctx) -> tuple[str, int, bool]:
    if e.op == "/" and c.t == _Z:
        raise _Refuse("division outside a field")  # never: "/" makes T at least ℚ
    if e.op == "mod" and c.t != _Z:
        raise _Refuse("mod outside integer arithmetic")
    if e.op in ("/", "mod"):
        if c.free(e.right):
            den, _, typed = _expr(e.right, c)
            c.require(f"{den} ≠ 0" if typed else f"{_ascribe(den, c.ty())} ≠ 0", e.right, "!=")
        elif c.sign(e.right, "denominator" if e.op == "/" else "modulus") == 0:
            raise _Refuse("division by zero (Lean's x / 0 = 0 would decide it)" if e.op == "/"
                          else "mod by zero (Lean's x % 0 = x would decide it)")
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
    if fn in ("abs", "floor", "ceil"):
        return _rounding(fn, a[0], c)
    if fn == "root":
        idx = _closed_value(a[1], c)
        if idx != 2:
            raise _Refuse("n-th root other than the square root (Real.rpow differs on negative bases)")
        fn, a = "sqrt", a[:1]
    c.mathlib(f"{fn}")
    return _analytic(fn, a, c)


def _rounding(fn: str, x: Expr, c: _Ctx) -> tuple[str, int, bool]:
    """``abs``, ``floor`` and ``ceil``: Mathlib's notation, or core Lean's ``if`` and ``Rat`` functions."""
    if c.flavour == "mathlib":
        arg = _typed_arg(x, c)
        if fn == "abs":  # bars inside bars are parenthesised: `||x| - 1|` would read `||` as boolean or
            return f"|({arg})|" if "|" in arg else f"|{arg}|", _ATOM, True
        return f"({'⌊' if fn == 'floor' else '⌈'}{arg}{'⌋' if fn == 'floor' else '⌉'} : {c.ty()})", _ATOM, True
    arg = _typed_arg(x, c, atomic=True)
    if fn == "abs":
        return f"(if {arg} < 0 then -{arg} else {arg})", _ATOM, True
    return f"(Rat.{fn} {arg} : {c.ty()})", _ATOM, True


def _analytic(fn: str, a: tuple[Expr, ...], c: _Ctx) -> tuple[str, int, bool]:
    """The real functions of Mathlib (trigonometry, roots, exponentials, logarithms), with their domains."""
    if fn in ("sin", "cos", "tan"):
        has_deg = any(isinstance(n, Call) and n.fn == "deg" for n in walk(a[0]))
        s, p, _ = _expr(a[0], c)
        arg = f"({_wrap(s, p, 70)} * Real.pi / 180)" if has_deg else _wrap(s, p, _ATOM)
        if fn == "tan":  # Real.tan x = sin x / cos x is 0 where cos x = 0
            cos = Call("cos", a)
            if c.free(a[0]):
                c.require(f"Real.cos {arg} ≠ 0", cos, "!=")
            else:
                try:
                    zero = closed_sign(cos, c.env) == 0
                except Undecided as exc:
                    zero, why = True, f"its cosine: {exc}"
                else:
                    why = "its cosine is 0"
                if zero:
                    raise _Refuse(f"tan({render_text(a[0])}) has no value or cannot be told to have one ({why}; "
                                  "Lean's Real.tan gives 0 where the cosine is 0)")
        return f"Real.{fn} {arg}", 1000, True
    if fn == "sqrt" or fn in ("ln", "exp") or fn.startswith("log_"):
        lean, dom = _real_function(fn)
        s, p, typed = _expr(a[0], c)
        if dom and c.free(a[0]):
            c.require(dom.format(s if typed else _ascribe(s, c.ty())), a[0], ">=" if fn == "sqrt" else ">")
        elif dom:
            sign = c.sign(a[0], "argument of sqrt" if fn == "sqrt" else "argument of the logarithm")
            if fn == "sqrt" and sign < 0:
                raise _Refuse(f"√({render_text(a[0])}) has no real value (its radicand is negative; "
                              "Lean's Real.sqrt gives 0)")
            if fn != "sqrt" and sign <= 0:
                raise _Refuse(f"log({render_text(a[0])}) has no real value (its argument is not positive; "
                              "Lean's Real.log gives 0 at 0 and log |x| below)")
        return f"{lean} {_wrap(s, p, _ATOM)}", 1000, True
    if fn == "log":
        raise _Refuse("log without a base is ambiguous (ln or log₁₀)")
    raise _Refuse(f"function {fn.removeprefix('fn:')} has no Lean counterpart here")


def _real_function(fn: str) -> tuple[str, str]:
    """Mathlib's name for ``sqrt``, ``exp``, ``ln`` or ``log_b``, and its domain condition (``{}`` the argument)."""
    if fn == "sqrt":
        return "Real.sqrt", "0 ≤ {}"
    if fn == "exp":
        return "Real.exp", ""
    if fn == "ln" or fn == "log_e":
        return "Real.log", "0 < {}"
    if fn[4:].isdigit():
        if int(fn[4:]) < 2:
            raise _Refuse(f"logarithm base {int(fn[4:])} (no logarithm has it; Lean's Real.logb gives 0)")
        return f"Real.logb {int(fn[4:])}", "0 < {}"
    raise _Refuse(f"logarithm base {fn[4:]!r}")


def _rel(r: Rel, c: _Ctx) -> str:
    if r.op not in _REL_OPS:
        raise _Refuse("approximate relation (Lean cannot check 'rounds to')")
    ls, _, lt = _expr(r.lhs, c)
    rs, _, rt = _expr(r.rhs, c)
    if not (lt or rt):
        ls = _ascribe(ls, c.ty())
    return f"{ls} {_REL_OPS[r.op]} {rs}"

