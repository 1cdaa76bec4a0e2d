""""Not an identity" from a difference with numeric denominators taking two values gives the outcome
sympy's together/fraction/expand gives; its intervals hold the exact values."""

from __future__ import annotations

import math
import random
from fractions import Fraction
from typing import Any

import mpmath
import pytest
import sympy
from faithsieve.obligations.kinds.models import IdentityObligation
from faithsieve.obligations.procedures import varying
from faithsieve.obligations.procedures.varying import (
    denominator_variables,
    interval,
    varying_difference,
)

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import BinOp, Call, Const, Expr, Neg, Num, Pow, Rel, Var
from faithsieve.mathtext.evaluate import to_sympy
from tests.obligations.symsupport import BASE, num, rel, sympy_alone, view


def both(claim: Rel, monkeypatch, asserted: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """The checker with this shortcut as the only one, and with none."""
    ob = IdentityObligation(**BASE, claim=claim, asserted_identity=asserted)
    return (view(sympy_alone(ob, monkeypatch, keep=("varying_difference",))),
            view(sympy_alone(ob, monkeypatch)))


CASES = [
    r"\sqrt{(x - 8)^2 + (y - 3)^2} = 15", r"\cos(90° - x) = \sin(x)", r"|x + y - 1| + |x| = 0",
    r"\sqrt{x^2} = x", r"\log(y) - \log(z) = 15", r"\sin(x) + \cos(x) = \frac{2}{\sin(2)} x",
    r"\sqrt{20 - c} = 3", r"2 u^2 + 3\sqrt{1 - u^2} - 3 = 0", r"\tan(x) \tan(90° - x) = 1",
    r"(\sin(x))^2 + (\cos(x))^2 = 1", r"\sin(2x) = 2\sin(x)\cos(x)", r"\sqrt{x}\sqrt{x} = x", r"|x|^2 = x^2",
    r"\sqrt{x^4 - x^2 - 11} = 3", r"\tan(x) = 5", r"y = \tan(90°) x", r"x^{1/3} = 2", r"\sqrt[3]{x} = -2",
    r"e^{2} x = \pi y", r"\ln(x^2) = 2\ln(x)", r"\cos(x) = \cos(x + 360k)", r"0 \cdot \tan(90°) + \sqrt{x} = 1",
    r"\sqrt{x - x - 1} + x = 1", r"\frac{x}{\sqrt{2} - \sqrt{2}} = \sqrt{x}", r"5! \cdot \sqrt{x} = 3",
    r"\tan(\theta) = |\frac{m_1 - m_2}{1 + m_1 m_2}|", r"h = \frac{V}{\pi r^2}", r"\frac{x + y}{y} = 1 + \frac{x}{y}",
    r"\frac{\sqrt{x}}{y} = 2", r"|\frac{x}{y}| = \frac{|x|}{|y|}", r"\sqrt{\frac{x}{y}} = \frac{\sqrt{x}}{\sqrt{y}}",
    r"\frac{x}{x} = 1", r"\frac{\sin(x)}{y} + \frac{1}{y - y} = 0",
]


@pytest.mark.parametrize("asserted", [False, True])
@pytest.mark.parametrize("text", CASES)
def test_hand_picked_claims_match_sympy(text: str, asserted: bool, monkeypatch) -> None:
    fast, slow = both(rel(text), monkeypatch, asserted)
    assert fast == slow


def test_what_it_decides() -> None:
    for text in (r"\sqrt{(x - 8)^2 + (y - 3)^2} = 15", r"\cos(90° - x) = \sin(x)", r"\sqrt{x^2} = x",
                 r"\log(y) - \log(z) = 15", r"|x + y - 1| + |x| = 0", r"x^{1/3} = 2"):
        r = rel(text)
        assert varying_difference(r.lhs, r.rhs), text
    for text in (r"(\sin(x))^2 + (\cos(x))^2 = 1", r"\sqrt{x}\sqrt{x} = x",  # constant: no two values
                 r"\frac{1}{\sqrt{x}} = 2", r"\frac{\sin(x)}{x} = 1", r"2^x = 3", r"e^{x} = 2",  # symbolic denominators
                 r"x^{-1/2} = 2", r"x \bmod 3 = 1", r"y = \tan(90°) x", r"\sqrt{x - x - 1} + x = 1"):
        r = rel(text)
        assert not varying_difference(r.lhs, r.rhs), text


# --- differential test on generated claims ---------------------------------------------

VARS = ("x", "y", "t")


def gen(rng: random.Random, depth: int) -> Expr:
    if depth <= 0 or rng.random() < 0.25:
        r = rng.random()
        if r < 0.1:
            return Const(rng.choice(("pi", "e", "pi", "i")))
        if r < 0.18:
            return Call("sqrt", (num(rng.choice((0, 2, 4, 8))),))
        if r < 0.6:
            return Var(rng.choice(VARS))
        return num(Fraction(rng.randint(-3, 6), rng.choice((1, 1, 2))))
    k = rng.random()
    if k < 0.45:
        return BinOp(rng.choice("+-*+-*/"), gen(rng, depth - 1), gen(rng, depth - 1))
    if k < 0.52:
        return Neg(gen(rng, depth - 1))
    if k < 0.66:
        return Pow(gen(rng, depth - 1), num(rng.choice((2, 3, 0, Fraction(1, 2), Fraction(3, 2), -1))))
    fn = rng.choice(("sqrt", "sin", "cos", "tan", "ln", "abs", "exp", "deg", "sin", "cos", "abs"))
    arg = gen(rng, depth - 1)
    if fn == "deg":
        return Call(rng.choice(("sin", "cos", "tan")), (BinOp("+", Call("deg", (num(rng.choice((30, 90, 180))),)), arg),))
    return Call(fn, (arg,))


def test_generated_claims_match_sympy(monkeypatch) -> None:
    rng = random.Random(20261201)
    decided = 0
    for _ in range(400):
        lhs = Var(rng.choice(VARS)) if rng.random() < 0.3 else gen(rng, 3)
        claim = Rel(lhs, "=", gen(rng, 3))
        fast, slow = both(claim, monkeypatch, asserted=rng.random() < 0.3)
        assert fast == slow, str(claim)
        decided += varying_difference(claim.lhs, claim.rhs)
    assert decided > 100  # the generator does reach the shortcut


# --- the intervals hold the exact values ---------------------------------------------------

def _exact(e: Expr, env: dict[str, Fraction]) -> mpmath.mpf:
    """The value of ``e`` at 60 digits (real, as the intervals read it)."""
    if isinstance(e, (Num, Var)):
        v = e.value if isinstance(e, Num) else env[e.name]
        return mpmath.mpf(v.numerator) / v.denominator
    if isinstance(e, Const):
        return mpmath.pi if e.name == "pi" else mpmath.e
    if isinstance(e, Neg):
        return -_exact(e.operand, env)
    if isinstance(e, BinOp):
        a, b = _exact(e.left, env), _exact(e.right, env)
        return {"+": a + b, "-": a - b, "*": a * b}.get(e.op) if e.op != "/" else a / b
    if isinstance(e, Pow):
        k = e.exponent.value  # type: ignore[attr-defined]
        return _exact(e.base, env) ** (mpmath.mpf(k.numerator) / k.denominator)
    assert isinstance(e, Call)
    if e.fn == "deg":
        return _exact(e.args[0], env)
    x = _exact(e.args[0], env)
    if e.fn in ("sin", "cos", "tan") and any(isinstance(n, Call) and n.fn == "deg" for n in varying.walk(e.args[0])):
        x = x * mpmath.pi / 180
    return {"sqrt": mpmath.sqrt, "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan, "ln": mpmath.log,
            "abs": abs, "exp": mpmath.exp}[e.fn](x)


def test_intervals_hold_the_exact_value() -> None:
    rng = random.Random(7)
    held = 0
    for _ in range(3000):
        e = gen(rng, 4)
        env = {v: Fraction(rng.randint(-40, 40), rng.randint(1, 9)) for v in VARS}
        iv = interval(e, env)
        if iv is None:
            continue
        with mpmath.workdps(60):
            v = _exact(e, env)
        assert iv[0] <= v <= iv[1], (str(e), env, iv, v)
        held += 1
    assert held > 1000


# --- bounds ------------------------------------------------------------------------------

def test_angles_past_the_bound_are_not_read() -> None:
    r = rel(r"\sin(3000000 x) = 0")
    assert not varying_difference(r.lhs, r.rhs)
    assert varying_difference(rel(r"\sin(300000 x) = 0").lhs, num(0))


def test_exponents_past_the_bound_are_not_read() -> None:
    assert not varying_difference(Pow(Var("x"), num(Fraction(129, 2))), num(1))
    assert varying_difference(Pow(Var("x"), num(Fraction(127, 2))), num(1))
    assert not varying_difference(Call("root", (Var("x"), num(65))), num(1))
    assert varying_difference(Call("root", (Var("x"), num(64))), num(1))


def test_too_many_variables_are_not_read() -> None:
    def total(n: int) -> Expr:
        out: Expr = Call("sqrt", (Var("v0"),))
        for i in range(1, n):
            out = BinOp("+", out, Var(f"v{i}"))
        return out

    assert varying_difference(total(varying.MAX_VARIABLES), num(1))
    assert not varying_difference(total(varying.MAX_VARIABLES + 1), num(1))


def test_deep_expressions_are_not_read() -> None:
    e: Expr = Var("x")
    for _ in range(varying.MAX_FASTPATH_NESTING + 2):
        e = Call("abs", (e,))
    assert interval(e, {"x": Fraction(1)}) is None


def test_the_padding_covers_a_rounded_fractional_exponent() -> None:
    """``math.pow`` with the float nearest a fractional exponent, at the far end of the float
    range: its error relative to the exact power stays within ``REL_PAD``."""
    worst = 0.0
    for k in (Fraction(63, 64), Fraction(127, 2), Fraction(-63, 64), Fraction(1, 3), Fraction(64, 3)):
        for x in (1e-300, 3e-200, 1.7e300, 2.5e200):
            try:
                got = math.pow(x, float(k))
            except OverflowError:
                continue
            if got == 0 or math.isinf(got):
                continue
            with mpmath.workdps(60):
                true = mpmath.mpf(x) ** (mpmath.mpf(k.numerator) / k.denominator)
                worst = max(worst, float(abs(got - true) / true))
    assert 2.0**-50 < worst <= varying.REL_PAD


def test_the_padding_covers_an_absolute_library_error_near_zero(monkeypatch) -> None:
    """A library result near 0 (``exp(-50)`` is about 2e-22) trusted only to an absolute error,
    which no relative margin covers: with ``exp`` off by 2^-62 either way the interval still holds
    the exact value (``ABS_PAD`` below 2^-62 fails this)."""
    import types

    with mpmath.workdps(60):
        true = mpmath.exp(-50)
    for sign in (1, -1):
        shim = types.SimpleNamespace(**{n: getattr(math, n) for n in dir(math) if not n.startswith("_")})
        shim.exp = lambda x, s=sign: math.exp(x) + s * 2.0**-62
        monkeypatch.setattr(varying, "math", shim)
        iv = interval(Call("exp", (Var("x"),)), {"x": Fraction(-50)})
        monkeypatch.undo()
        assert iv is not None and iv[0] <= true <= iv[1], (sign, iv)


def test_denominator_variables_reads_the_syntax() -> None:
    def dv(text: str) -> frozenset[str] | None:
        return denominator_variables(rel(f"y = {text}").rhs)

    assert dv(r"\frac{\sqrt{x}}{\sqrt{2}} + \frac{3}{4} \sin(x)") == frozenset()
    assert dv(r"\frac{a}{b + c} + x^{-2} + d^{1/2} + 2^{t} + \exp(u - 1) + \frac{3}{\sin(v)}") == {"b", "c", "x", "t", "u", "v"}
    assert dv(r"x \bmod 3") is None
    assert denominator_variables(BinOp("*", Const("i"), Var("x"))) is None  # the imaginary unit


def test_a_variable_outside_the_denominators_is_varied_alone() -> None:
    for text in (r"\tan(\theta) = |\frac{m_1 - m_2}{1 + m_1 m_2}|", r"h = \frac{V}{\pi r^2}", r"\frac{\sqrt{x}}{y} = 2"):
        r = rel(text)
        assert varying_difference(r.lhs, r.rhs), text
    for text in (r"\frac{x}{x} = 1", r"\frac{x + y}{y} = 1 + \frac{x}{y}", r"\frac{1}{y} = 2"):
        r = rel(text)  # no variable outside a denominator, or the difference is constant in it
        assert not varying_difference(r.lhs, r.rhs), text


def test_sympy_forms_no_denominator_of_a_variable_outside_every_denominator() -> None:
    """The lemma the shortcut rests on, checked on sympy itself: the denominator ``fraction`` takes
    from ``together(lhs - rhs)`` holds no variable that is outside every denominator as written."""
    rng = random.Random(1000)
    checked = 0
    for _ in range(600):
        lhs = Var(rng.choice(VARS)) if rng.random() < 0.3 else gen(rng, 3)
        rhs = gen(rng, 3)
        left, right = denominator_variables(lhs), denominator_variables(rhs)
        if left is None or right is None:
            continue
        free = (varying.variables(lhs) | varying.variables(rhs)) - left - right
        try:
            a, b = to_sympy(lhs), to_sympy(rhs)
        except FaithSieveError:
            continue
        _numerator, denominator = sympy.fraction(sympy.together(a - b))
        assert not {str(s) for s in denominator.free_symbols} & free, (str(lhs), str(rhs), denominator)
        checked += bool(free)
    assert checked > 250
