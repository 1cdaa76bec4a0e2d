""""Not an identity" read off a variable free in the claim gives the outcome sympy's
together/fraction/expand gives."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest
from faithsieve.obligations.kinds.models import IdentityObligation
from faithsieve.obligations.procedures.freevar import polynomial_variable

from faithsieve.mathtext.ast import BinOp, Call, Const, Expr, Neg, Pow, Rel, Var
from tests.obligations.symsupport import BASE, check, rel, sympy_alone, view
from tests.obligations.symsupport import num as _n


def both(claim: Rel, monkeypatch, asserted: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    ob = IdentityObligation(**BASE, claim=claim, asserted_identity=asserted)
    return view(check(ob)), view(sympy_alone(ob, monkeypatch))


CASES = [
    r"y = \sqrt{4 - (2x - 2)^2} - 2", r"D = \sqrt{x^2 + y^2}", r"A = \pi r^2", r"V = \pi r^2 h", r"C = 2\pi r",
    r"u = \sin(x)", r"x = r\cos(\theta)", r"x + T = x + 2m\pi", r"3x + 3y = 150°", r"4x_A = 14 + 6\sqrt{5}",
    r"y = |x - 1| + |x - 3|", r"y = \tan(90°)", r"y = \ln(0 \cdot x)", r"y = \frac{1}{(x+1)^2 - x^2 - 2x - 1}",
    r"y - y = \sqrt{x}", r"y + \sqrt{y} = 2", r"y = \frac{\sin(x)}{\sqrt{x}}", r"y = \log(x^2 - x^2)",
    r"y = \tan(x) + \frac{1}{x}", r"y = 2^x", r"y^2 = \sqrt{x} + \sqrt{2}", r"y = x^{1/2} + x^{-1/2}",
    r"y \cdot \sqrt{2} = \sqrt{2}", r"\sqrt{3} + b + c = \sqrt{3}^3", r"y = \frac{x}{\sqrt{3}}",
    r"y = \frac{1}{(1 + \sqrt{2})^2 - 3 - 2\sqrt{2}}", r"y = \ln((1 + \sqrt{2})^2 - 3 - 2\sqrt{2})",
    r"\pi r^2 = 36\pi", r"x^2 = \sqrt{2} y", r"y\sqrt{0} + \sqrt{x} = 1", r"(\sqrt{2}^2 - 2) y = \sqrt{x}",
    r"\sqrt{2}\sqrt{2} y = \sqrt{x} + 2y", r"\pi r^2 h = 72\pi", r"(x - x) y = \sqrt{t}", r"x y = \sqrt{x}",
]


@pytest.mark.parametrize("asserted", [False, True])
@pytest.mark.parametrize("text", CASES)
def test_hand_picked_claims_match_sympy(text: str, asserted: bool, monkeypatch) -> None:
    fast, slow = both(rel(text), monkeypatch, asserted)
    assert fast == slow


def test_what_it_reads() -> None:
    for text in (r"y = \sqrt{4 - (2x - 2)^2} - 2", r"A = \pi r^2", r"x + T = x + 2m\pi", r"y = \tan(x) + \frac{1}{x}",
                 r"\pi r^2 = 36\pi", r"x^2 = \sqrt{2} y"):
        assert polynomial_variable(rel(text).lhs, rel(text).rhs), text
    for text in (r"y - y = \sqrt{x}", r"y + \sqrt{y} = 2", r"y = \frac{1}{(x+1)^2 - x^2 - 2x - 1}",
                 r"y = \log(x^2 - x^2)", r"y = 2^x", r"y = \frac{\sin(x)}{\sqrt{x}}", r"y\sqrt{0} + \sqrt{x} = 1",
                 r"(\sqrt{2}^2 - 2) y = \sqrt{x}",
                 r"y = \ln((1 + \sqrt{2})^2 - 3 - 2\sqrt{2})", r"y = \tan(\sqrt{x})"):
        assert not polynomial_variable(rel(text).lhs, rel(text).rhs), text


# --- differential test on generated claims ---------------------------------------------

VARS = ("x", "y", "t")


def gen(rng: random.Random, depth: int) -> Expr:
    if depth <= 0 or rng.random() < 0.25:
        r = rng.random()
        if r < 0.08:
            return Const("pi")
        if r < 0.16:  # closed roots, zero among them: coefficients sympy may simplify
            return Call("sqrt", (_n(rng.choice((0, 2, 4, 8))),))
        if r < 0.6:
            return Var(rng.choice(VARS))
        return _n(Fraction(rng.randint(-3, 6), rng.choice((1, 1, 2))))
    k = rng.random()
    if k < 0.5:
        return BinOp(rng.choice("+-*/"), gen(rng, depth - 1), gen(rng, depth - 1))
    if k < 0.58:
        return Neg(gen(rng, depth - 1))
    if k < 0.72:
        return Pow(gen(rng, depth - 1), _n(rng.choice((-1, 2, 3, Fraction(1, 2), Fraction(-1, 2)))))
    fn = rng.choice(("sqrt", "sin", "cos", "tan", "ln", "abs", "exp"))
    return Call(fn, (gen(rng, depth - 1),))


def test_generated_claims_match_sympy(monkeypatch) -> None:
    rng = random.Random(20261201)
    decided = 0
    for _ in range(300):
        rhs = gen(rng, 3)
        r = rng.random()
        if r < 0.4:  # "s = f(...)", s maybe inside f too
            lhs: Expr = Var(rng.choice(VARS))
        elif r < 0.7:  # "k·s + g = f"
            lhs = BinOp("+", BinOp("*", _n(rng.randint(-2, 3)), Var(rng.choice(VARS))), gen(rng, 2))
        else:
            lhs = gen(rng, 3)
        claim = Rel(lhs, "=", rhs)
        fast, slow = both(claim, monkeypatch, asserted=rng.random() < 0.3)
        assert fast == slow, str(claim)
        decided += polynomial_variable(lhs, rhs)
    assert decided > 60  # the generator does reach the shortcut
