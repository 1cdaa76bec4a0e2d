"""Closed values with square roots and pi compared exactly: a 'radicals' verification is exactly
where sympy verifies, and everything else is left to sympy unchanged."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest
from faithsieve.obligations.kinds.models import ArithmeticObligation, Verified
from faithsieve.obligations.procedures.radicals import (
    MAX_BITS,
    MAX_POWER,
    MAX_RADICAND,
    radical_equal,
    radical_value,
    square_part,
)

from faithsieve.mathtext.ast import BinOp, Call, Const, Expr, Neg, Num, Pow, Rel
from tests.obligations.symsupport import BASE, check, rel, sympy_alone, view
from tests.obligations.symsupport import num as _n
from tests.obligations.symsupport import rewrite as rewrite_generic


def both(claim: Rel, monkeypatch) -> tuple[Any, Any]:
    ob = ArithmeticObligation(**BASE, claim=claim, approx=False, rounded=())
    return check(ob), sympy_alone(ob, monkeypatch)


def agrees(fast: Any, slow: Any) -> bool:
    """A 'radicals' verification where sympy verifies (by expansion or to 40 digits); otherwise the same."""
    if isinstance(fast, Verified) and fast.method == "radicals":
        return isinstance(slow, Verified) and slow.method in ("sympy", "sympy-numeric")
    return view(fast) == view(slow)


CASES = [
    r"\sqrt{8} = 2\sqrt{2}", r"\sqrt{2}\sqrt{6} = 2\sqrt{3}", r"\frac{1}{\sqrt{2}} = \frac{\sqrt{2}}{2}",
    r"\pi \cdot 6^2 = 36\pi", r"2 \cdot \pi \cdot 1 \cdot 3.5 / \pi = 7", r"(\sqrt{7} + \sqrt{5})^2 = 12 + 2\sqrt{35}",
    r"\sqrt{2 \cdot 13^2 \cdot 11^2} = 143\sqrt{2}", r"7^{5/2} = 49\sqrt{7}", r"\sqrt{1/2} = \sqrt{2}/2",
    r"\sqrt{7!} / \sqrt{1} = \sqrt{7!}", r"\sqrt{8} = 3", r"\pi = 3.14", r"\sqrt{2} = 1.414",
    r"2 / (2 + 4/\sqrt{2}) = 2 - \sqrt{2}", r"\sqrt{0} = 0", r"0^{-1} \cdot \pi = \pi", r"(2 - 2)^{-1/2} = 1",
    r"\sqrt{-4} = 2", r"50\% \cdot \pi = \pi / 2", r"(\sqrt{3})^{32} = 3^{16}", r"(\sqrt{3})^{34} = 3^{17}",
    r"\sqrt{10^{30} + 1 - 10^{30}} \cdot \pi = \pi", r"1 / (10^{30} + \sqrt{2} - 10^{30}) = \sqrt{2}/2",
    r"\pi^{33} / \pi^{32} = \pi", r"\sqrt{4 \cdot 10^{12} + 4} = 2\sqrt{10^{12} + 1}",
    r"(1 + \sqrt{2})^3 = 7 + 5\sqrt{2}", r"(\sqrt{0})^0 \cdot \pi = \pi", r"0^0 + \pi = \pi",
    r"\sqrt[2]{8} = 2\sqrt{2}", r"\sqrt[3]{8} = 2", r"\cos(60°) = 1/2", r"\tan(30°) = 1/\sqrt{3}",
    r"\sin(75°) \sin(15°) = 1/4", r"\sin(1998° + 237°) = \sin(198° + 237°)", r"\tan(315°) = -\tan(45°)",
    r"\cos(2\pi - \pi/3) = \cos(\pi/3)", r"\tan(180°) = \sin(180°)/\cos(180°)", r"\tan(90°) = \tan(90°)",
    r"\cos(144°) = -\cos(36°)", r"\sin(5\pi/3) = -\sin(\pi/3)", r"\tan(75°) = 2 + \sqrt{3}", r"\cos(0) = 1",
    r"1/\sin(10^{30}° + 30° - 10^{30}°) = 2", r"\sin(30° + \pi) = 1/2", r"\cos(\pi/5) = 1/2", r"\sin(15°) = 1/4",
]


@pytest.mark.parametrize("text", CASES)
def test_hand_picked_claims_agree_with_sympy(text: str, monkeypatch) -> None:
    fast, slow = both(rel(text), monkeypatch)
    assert agrees(fast, slow), (view(fast), view(slow))


def test_it_reads_radicals_and_pi() -> None:
    assert radical_equal(*_sides(r"\sqrt{12} / \sqrt{3} = 2"))
    assert radical_equal(*_sides(r"\pi / 4 + \pi / 4 = \pi / 2"))
    assert radical_equal(*_sides(r"\cos(60°) = 1/2"))
    assert radical_equal(*_sides(r"\sin(-1455°) = -\sin(15°)"))
    assert radical_equal(*_sides(r"\tan(5\pi/12) = 2 + \sqrt{3}"))
    assert not radical_equal(*_sides(r"\sqrt{8} = 3"))
    for text in (r"2 / (1 + \sqrt{2}) = 2\sqrt{2} - 2", r"x = \sqrt{2}", r"\sqrt{-4} = 2", r"\sqrt[3]{8} = 2",
                 r"\cos(144°) = -\cos(36°)", r"\tan(90°) = \tan(90°)", r"\sin(1) = \sin(1)", r"e^2 = e^2"):
        assert not radical_equal(*_sides(text)), text


def _sides(text: str) -> tuple[Expr, Expr]:
    r = rel(text)
    return r.lhs, r.rhs


def test_square_part() -> None:
    assert square_part(72) == (6, 2)
    assert square_part(1) == (1, 1)
    assert square_part(999983**2) == (999983, 1)
    assert square_part(999983 * 999979) == (1, 999983 * 999979)
    assert square_part(2**3 * 3**5 * 7) == (2 * 9, 2 * 3 * 7)
    for n in range(1, 3000):
        s, f = square_part(n)
        assert s * s * f == n and all(f % (p * p) for p in range(2, 60))
    assert square_part(MAX_RADICAND + 1) is None


def test_bounds() -> None:
    big = Num(Fraction(2) ** (MAX_BITS - 1), "", 0)
    assert radical_value(big) is not None
    assert radical_value(BinOp("*", big, Num(Fraction(4), "4", 0))) is None
    assert radical_value(Pow(Const("pi"), Num(Fraction(MAX_POWER), "", 0))) is not None
    assert radical_value(Pow(Const("pi"), Num(Fraction(MAX_POWER + 1), "", 0))) is None
    assert radical_value(Call("sqrt", (Num(Fraction(MAX_RADICAND), "", 0),))) is not None
    assert radical_value(Call("sqrt", (Num(Fraction(MAX_RADICAND + 1), "", 0),))) is None


def test_a_sum_in_a_divisor_is_left_to_sympy() -> None:
    """The probe's 64-bit value of a divisor with a sum may cancel to 0, which the conversion refuses."""
    lhs, rhs = _sides(r"1 / (10^{30} + \sqrt{2} - 10^{30}) = \sqrt{2}/2")
    assert radical_value(lhs) is None
    assert radical_value(BinOp("/", Num(Fraction(1), "1", 0), Call("sqrt", (Num(Fraction(2), "2", 0),)))) is not None


# --- differential test on generated claims ---------------------------------------------

def gen(rng: random.Random, depth: int) -> Expr:
    if depth <= 0 or rng.random() < 0.2:
        r = rng.random()
        if r < 0.15:
            return Const("pi")
        if r < 0.45:
            return Call("sqrt", (_n(rng.choice((2, 3, 4, 5, 6, 8, 12, 18, 50, 1, 0))),))
        return _n(Fraction(rng.randint(-6, 9), rng.choice((1, 1, 2, 3))))
    k = rng.random()
    if k < 0.55:
        return BinOp(rng.choice("+-*/"), gen(rng, depth - 1), gen(rng, depth - 1))
    if k < 0.65:
        return Neg(gen(rng, depth - 1))
    if k < 0.8:
        return Pow(gen(rng, depth - 1), _n(rng.choice((-2, -1, 0, 1, 2, 3))))
    if k < 0.9:
        return Pow(_n(Fraction(rng.randint(0, 12), rng.choice((1, 2, 3)))), _n(Fraction(rng.choice((-3, -1, 1, 3, 5)), 2)))
    if k < 0.95:
        return Call("sqrt", (gen(rng, depth - 1),))
    angle = _n(15 * rng.randint(-30, 30))
    arg: Expr = Call("deg", (angle,)) if rng.random() < 0.6 else BinOp("*", _n(Fraction(rng.randint(-13, 13), 12)), Const("pi"))
    return Call(rng.choice(("sin", "cos", "tan")), (arg,))


def roots_and_angles(rng: random.Random, e: Expr) -> Expr | None:
    """Value-preserving rewrites of square roots of numbers and of sin, cos, tan of written degrees."""
    if isinstance(e, Call) and e.fn == "sqrt" and isinstance(e.args[0], Num) and e.args[0].value > 1:
        v = e.args[0].value
        for p in (4, 9, 2, 3):
            if (v / p).denominator == 1 and rng.random() < 0.7:
                return BinOp("*", Call("sqrt", (_n(p),)), Call("sqrt", (_n(v / p),)))
        return Pow(e.args[0], _n(Fraction(1, 2)))
    if isinstance(e, Call) and e.fn in ("sin", "cos", "tan") and isinstance(e.args[0], Call) \
            and e.args[0].fn == "deg" and isinstance(e.args[0].args[0], Num):
        a = e.args[0].args[0].value

        def deg(x: Fraction) -> Expr:
            return Call("deg", (_n(x),))

        r = rng.random()
        if e.fn == "tan":  # tan = sin / cos
            return BinOp("/", Call("sin", (deg(a),)), Call("cos", (deg(a),)))
        if r < 0.5:  # cofunction: sin(a) = cos(90 - a), cos(a) = sin(90 - a)
            return Call("cos" if e.fn == "sin" else "sin", (deg(90 - a),))
        return Call(e.fn, (deg(a + 360 * rng.randint(-2, 2)),))  # a whole turn
    return None


def rewrite(rng: random.Random, e: Expr) -> Expr:
    return rewrite_generic(rng, e, roots_and_angles)


def test_generated_claims_agree_with_sympy(monkeypatch) -> None:
    rng = random.Random(1201)
    decided = 0
    for _ in range(400):
        lhs = gen(rng, 4)
        rhs = rewrite(rng, lhs) if rng.random() < 0.75 else gen(rng, 3)
        fast, slow = both(Rel(lhs, "=", rhs), monkeypatch)
        assert agrees(fast, slow), (str(lhs), str(rhs), view(fast), view(slow))
        decided += isinstance(fast, Verified) and fast.method == "radicals"
    assert decided > 100  # the generator does reach the shortcut
