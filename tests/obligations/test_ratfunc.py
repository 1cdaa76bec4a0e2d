"""Rational-function identities decided exactly give the outcome sympy's together/fraction/expand gives."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest
from faithsieve.obligations.kinds.models import IdentityObligation, Verified
from faithsieve.obligations.procedures.ratfunc import (
    MAX_BITS,
    as_ratfn,
    rational_identity,
)

from faithsieve.mathtext.ast import BinOp, Expr, Neg, Num, Pow, Rel, Var
from tests.obligations.symsupport import (
    BASE,
    check,
    num,
    plain_rel,
    rewrite,
    sympy_alone,
    view,
)


def both(ob: IdentityObligation, monkeypatch) -> tuple[dict[str, Any], dict[str, Any]]:
    """The checker with the rational-function check as the only shortcut, and with none."""
    return view(sympy_alone(ob, monkeypatch, keep=("rational_identity",))), view(sympy_alone(ob, monkeypatch))


CASES = [
    "(x+1)*(x-3)/(5*(x+2)*(x-4)) = (x^2 - 2x - 3)/(5*(x^2 - 2x - 8))", "(m^6 - 1)/(m^2 - 1) = m^4 + m^2 + 1",
    "(m + 2)/(2*(m + 2)) = 1/2", "x/y * y/z * z/x = 1", "a^(-1) = 1/a", "(2/k)^3 = 2^3/k^3",
    "4 - 1/a + 3 - 1/a + 2 - 1/a = 9 - 3/a", "(w^2 + 1/w^2)^2 = w^4 + 2 + 1/w^4",
    "x/(x - x) = 1", "1/((x+1)^2 - x^2 - 2x - 1) = 1/((x+1)^2 - x^2 - 2x - 1)", "(2 - 2)^(-1) * x = x",
    "x/(y - y) = x/(y - y)", "1/x = 1/x + 0", "(x^2 - 1)/(x - 1) = x + 1", "(x^2 - 1)/(x - 1) = x - 1",
    "25% * x / y = x / (4y)", "(10^900)^20 / x = 1/x", "x^24 / x^23 = x", "(x + 1)^(-2) = 1/(x^2 + 2x + 1)",
]


@pytest.mark.parametrize("text", CASES)
def test_hand_picked_identities_match_sympy(text: str, monkeypatch) -> None:
    fast, slow = both(IdentityObligation(**BASE, claim=plain_rel(text)), monkeypatch)
    assert fast == slow


def test_it_decides_identities_sympy_needed_together_for() -> None:
    r = plain_rel("(x+1)*(x-3)/(5*(x+2)*(x-4)) = (x^2 - 2x - 3)/(5*(x^2 - 2x - 8))")
    assert rational_identity(r.lhs, r.rhs)
    out = check(IdentityObligation(**BASE, claim=r))
    assert out == Verified("ratfunc", "identity")
    for text in ("(x^2 - 1)/(x - 1) = x - 1", "x/(x - x) = 1", "sqrt(x)/x = 1/sqrt(x)", "x/(y - y) = x/(y - y)"):
        r = plain_rel(text)
        assert not rational_identity(r.lhs, r.rhs), text


def test_coefficient_bound() -> None:
    big = Num(Fraction(2) ** (MAX_BITS - 8), str(2 ** (MAX_BITS - 8)), 0)
    x = Var("x")
    assert as_ratfn(BinOp("/", x, big)) is not None
    assert as_ratfn(BinOp("/", x, BinOp("*", big, Num(Fraction(2**16), str(2**16), 0)))) is None


# --- differential test on generated claims ---------------------------------------------

VARS = ("x", "y", "z")


def _num(rng: random.Random) -> Num:
    return num(Fraction(rng.randint(0, 9), rng.choice((1, 1, 1, 2, 3))))


def gen(rng: random.Random, depth: int) -> Expr:
    if depth <= 0 or rng.random() < 0.25:
        return Var(rng.choice(VARS)) if rng.random() < 0.6 else _num(rng)
    k = rng.random()
    if k < 0.6:
        return BinOp(rng.choice("+-*/"), gen(rng, depth - 1), gen(rng, depth - 1))
    if k < 0.75:
        return Neg(gen(rng, depth - 1))
    e = rng.choice((0, 1, 2, 2, 3))
    exp: Expr = Num(Fraction(e), str(e), 0)
    return Pow(gen(rng, depth - 1), Neg(exp) if rng.random() < 0.3 else exp)


def test_generated_claims_match_sympy(monkeypatch) -> None:
    rng = random.Random(20261201)
    decided = 0
    for _ in range(300):
        lhs = gen(rng, 4)
        rhs = rewrite(rng, lhs) if rng.random() < 0.7 else gen(rng, 3)
        ob = IdentityObligation(**BASE, claim=Rel(lhs, "=", rhs))
        fast, slow = both(ob, monkeypatch)
        assert fast == slow, str(ob.claim)
        decided += rational_identity(lhs, rhs)
    assert decided > 60  # the generator does reach the shortcut
