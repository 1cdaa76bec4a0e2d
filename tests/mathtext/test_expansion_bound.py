"""The cost model's expansion bound (``expansion_terms``) works through function arguments and bars:
a power of a sum inside ``sqrt``, ``|…|``, ``floor``, ``sin``, ``\\frac``… costs the expansion it implies,
and the sympy checker refuses it before ``expand`` (issue 24: ``sqrt((√2+…+√13)^60) = 5`` took 24 s)."""

from __future__ import annotations

import math
import time

import pytest
from faithsieve.obligations.checkers.symbolic import _too_large

from faithsieve.core.proof import Proof, Step
from faithsieve.mathtext.ast import Expr, Rel
from faithsieve.mathtext.cost import (
    CHECKERS,
    SERVICE,
    expansion_terms,
    expansion_within,
    text_cost,
)
from faithsieve.mathtext.formulas import extract_formulas
from faithsieve.pipeline import localize

SIX_ROOTS = "sqrt(2)+sqrt(3)+sqrt(5)+sqrt(7)+sqrt(11)+sqrt(13)"
BOMB = f"sqrt(({SIX_ROOTS})^60) = 5"
LATEX_BOMB = r"\(\left|(\sqrt{2}+\sqrt{3}+\sqrt{5}+\sqrt{7}+\sqrt{11}+\sqrt{13})^{60}\right| = 5\)"


def _claim(text: str) -> Rel:
    (f,) = extract_formulas(text)
    lhs, rhs = f.chain.exprs
    return Rel(lhs, "=", rhs)


def _lhs(text: str) -> Expr:
    return _claim(text).lhs


@pytest.mark.parametrize("wrap", ["sqrt({})", "abs({})", "floor({})", "ceil({})", "sin({})",
                                  "ln({})", "2*sqrt({})+1", "sqrt(sqrt({}))", "({})!"])
@pytest.mark.parametrize(("base", "n"), [("a+b+c", 3), ("sqrt(2)+sqrt(3)+sqrt(5)", 3), ("x+1", 2)])
def test_a_power_inside_a_call_costs_its_expansion(wrap: str, base: str, n: int) -> None:
    """Exactly the multinomial count C(n+k-1, k) of the power inside, whatever wraps it (a guard that
    counted the call as one term, as before, answers 1 and fails here)."""
    for k in (5, 12, 40):
        e = _lhs(wrap.format(f"({base})^{k}") + " = 5")
        assert expansion_terms(e) == math.comb(n - 1 + k, k), (wrap, base, k)


@pytest.mark.parametrize("text", [r"\(\sqrt{(a+b+c)^{12}} = 5\)", "$|(a+b+c)^{12}| = 5$",
                                  r"\(\left|(a+b+c)^{12}\right| = 5\)",
                                  r"\(\lfloor (a+b+c)^{12} \rfloor = 5\)",
                                  r"\(\frac{(a+b+c)^{12}}{2} = 5\)", r"\(\sqrt[3]{(a+b+c)^{12}} = 5\)"])
def test_latex_functions_and_bars_cost_their_expansion(text: str) -> None:
    assert expansion_terms(_lhs(text)) == math.comb(14, 12)


def test_the_bound_sits_at_max_terms() -> None:
    """(a+b+c)^43 expands to 990 terms, ^44 to 1035: the checkers take the first and refuse the second,
    inside a root as outside it (raising ``max_terms`` or counting calls as one term fails this)."""
    assert CHECKERS.max_terms == 1000
    for wrap in ("{}", "sqrt({})", "abs({})"):
        at, past = (_claim(wrap.format(f"(a+b+c)^{k}") + " = 5") for k in (43, 44))
        assert expansion_terms(at.lhs) == 990 and expansion_terms(past.lhs) == 1035
        assert expansion_within((at.lhs, at.rhs), CHECKERS) and not expansion_within((past.lhs, past.rhs), CHECKERS)
    # the degree guard still refuses powers of variables past 24; radicals are not variables
    assert not _too_large(_claim("sqrt((sqrt(2)+sqrt(3)+sqrt(5))^43) = 5"))
    assert _too_large(_claim("sqrt((sqrt(2)+sqrt(3)+sqrt(5))^44) = 5"))


def test_rational_and_negative_powers_expand_their_integer_part() -> None:
    assert expansion_terms(_lhs("(sqrt(2)+sqrt(3)+sqrt(5))^(61/2) = 5")) == math.comb(32, 30)
    assert expansion_terms(_lhs("1/(a+b+c)^12 = 5")) == math.comb(14, 12)
    assert expansion_terms(_lhs("(a+b)^x = 5")) >= 10**9  # a variable exponent of a sum: unbounded
    assert expansion_terms(_lhs("2^x = 5")) == 1


@pytest.mark.parametrize("text", [BOMB, LATEX_BOMB, f"sin(({SIX_ROOTS})^60) = 5", f"({SIX_ROOTS})^60 = 5"])
def test_the_bomb_ends_unknown_in_milliseconds(text: str) -> None:
    proof = Proof(problem="p", steps=(Step(index=1, text=text),))
    localize(Proof(problem="p", steps=(Step(index=1, text="1 + 1 = 2"),)))  # warm
    t0 = time.perf_counter()
    v = localize(proof)
    took = time.perf_counter() - t0
    assert took < 1.0, took  # 24 s before the bound went through call arguments
    statuses = {ev.status for st in v.steps for ev in st.evidence}
    assert "verified" not in statuses and v.verdict == "correct"  # nothing decided: correct with no coverage
    assert text_cost(text, SERVICE) is not None  # and the service runs it in the heavy lane


def test_exp_of_a_sum_and_a_sum_in_an_exponent_cost_the_square() -> None:
    """``expand`` turns ``exp(s)`` and ``2^s`` into a product of one factor per term of ``s`` and
    multiplies it out: ``exp((a+b+c+d)^12)`` (455 terms) took sympy 10 s, so it costs 455^2."""
    assert expansion_terms(_lhs("exp((a+b+c+d)^12) = 5")) == 455**2
    assert expansion_terms(_lhs("2^((a+b+c+d)^12) = 5")) == 455**2
    assert expansion_terms(_lhs("exp(x+1) = 5")) == 4
    assert not expansion_within((_lhs("exp((a+b+c+d)^12) = 5"),), CHECKERS)
