"""A claim that divides its premise through by a quantity the premise keeps nonzero follows
exactly where z3 says so."""

from __future__ import annotations

import random

import pytest
from faithsieve.obligations.checkers import smt
from faithsieve.obligations.checkers.portfolio import Z3Checker
from faithsieve.obligations.kinds.models import DerivationObligation
from faithsieve.obligations.procedures import cleared
from faithsieve.obligations.procedures.cleared import cleared_derivation

from tests.obligations.test_fastpaths import BASE, outcome, rel


def _small(rng: random.Random, names: list[str]) -> str:
    terms = [str(rng.randint(-4, 4))]
    for v in names:
        if rng.random() < 0.6:
            terms.append(f"{rng.choice((1, 2, 3, -1, -2))}*{v}")
    if len(names) > 1 and rng.random() < 0.3:
        terms.append(f"{names[0]}*{names[1]}")
    return " + ".join(terms)


def _pair(rng: random.Random) -> tuple[str, str]:
    """``A·v + B = 0`` (sides shuffled, scaled) and a claim solving it for ``v``, right or wrong."""
    v, others = "x", rng.sample(["y", "z", "w"], rng.randint(1, 2))
    a, b = _small(rng, others), _small(rng, others)
    k = rng.choice((1, 2, -3))
    premise = rng.choice((f"{k}*({a})*{v} + {k}*({b}) = 0", f"({a})*{v} = -({b})", f"{v}*({a}) - 0 = -({b})"))
    wrong = rng.random() < 0.3
    claim = rng.choice((f"{v} = -({b})/({a})", f"{v} = ({b})/(-({a}))", f"{v} + ({b})/({a}) = 0"))
    if wrong:
        claim = claim.replace("-(", "(", 1)
    return premise, claim


@pytest.mark.parametrize("seed", range(4))
def test_cleared_claims_agree_with_z3(seed: int, monkeypatch) -> None:
    rng = random.Random(seed)
    decided = 0
    for _ in range(70):
        premise, claim = _pair(rng)
        ints = ("y",) if rng.random() < 0.15 else ()
        ob = DerivationObligation(**BASE, premises=(rel(premise),), claim=rel(claim), integer_vars=ints)
        fast = outcome(Z3Checker().check, ob)
        decided += cleared_derivation(rel(premise), rel(claim), bool(ints))
        with monkeypatch.context() as m:
            m.setattr(smt, "cleared_derivation", lambda *a: False)
            slow = outcome(Z3Checker().check, ob)
        assert fast == slow, (premise, claim, ints)
    assert decided >= 10


@pytest.mark.parametrize("premise,claim,expected", [
    ("9c*k = 8", "c = 8/(9k)", True),
    ("26 = c*h", "h = 26/c", True),
    ("3x*y = x + y", "y = x/(3x - 1)", True),  # at x = 1/3 the premise says y/3 = ... : -1/3 = 0
    ("x*y = 0", "x = 0/y", False),  # y = 0 satisfies the premise: 0/0 is open in SMT
    ("x*y = 6", "x = 6/(y*y)", False),  # not the premise divided through
    ("x*y = 6", "x = 6/y + 1/y - 1/y", False),  # N = y^2 (x y - 6): a multiple by a polynomial, left to z3
    ("x*y^2 = 6", "x = 6/(y*y)", False),  # y*y is not linear in y: not shown nonzero (left to z3)
])
def test_decisions(premise: str, claim: str, expected: bool) -> None:
    assert cleared_derivation(rel(premise), rel(claim), False) is expected


def test_integer_variables_are_left_to_the_solver() -> None:
    assert cleared_derivation(rel("9c*k = 8"), rel("c = 8/(9k)"), True) is False


def test_bound_on_substituted_degree(monkeypatch) -> None:
    # y = 1 makes the divisor vanish; the premise there reads x - x = 1 + 1: false
    assert cleared_derivation(rel("x*(y - 1) = y^6 + 1"), rel("x = (y^6 + 1)/(y - 1)"), False) is True
    assert cleared.MAX_SUBSTITUTED_DEGREE == 6
    assert cleared_derivation(rel("x*(y - 1) = y^7 + 1"), rel("x = (y^7 + 1)/(y - 1)"), False) is False
    monkeypatch.setattr(cleared, "MAX_SUBSTITUTED_DEGREE", 7)
    assert cleared_derivation(rel("x*(y - 1) = y^7 + 1"), rel("x = (y^7 + 1)/(y - 1)"), False) is True
