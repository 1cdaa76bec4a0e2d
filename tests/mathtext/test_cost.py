"""The evaluator's cost model: every guard refuses before computing, counted in work units.

Each test fails when its guard is loosened: a looser bound lets the input through (the
outcome changes from unknown) or lets the work happen (the meter counts it).
"""

import time
from dataclasses import replace

import pytest
from faithsieve.obligations.checkers.portfolio import (
    ExactChecker,
    SympyChecker,
    run_portfolio,
)
from faithsieve.obligations.kinds.models import ArithmeticObligation, Unknown

from faithsieve.core.errors import EvaluationLimit, NotRational
from faithsieve.mathtext import evaluate, extract_formulas, to_sympy
from faithsieve.mathtext.ast import Rel
from faithsieve.mathtext.cost import DEFAULT_LIMITS, Meter, budget, probe

BASE = dict(id="o0", step=1, span=(0, 1), edge="e0", source="")


def expr(text: str, member: int = 0):
    return extract_formulas(text)[0].chain.exprs[member]


def outcome(text: str):
    a, op, b = extract_formulas(text)[0].chain.links()[0]
    ob = ArithmeticObligation(**BASE, claim=Rel(a, op, b), approx=False, rounded=())
    return run_portfolio(ob, [ExactChecker(), SympyChecker()], time.monotonic() + 60)


@pytest.mark.parametrize("text", [
    r"\( 7^{10000} = 5 \)",                          # 28,074 bits > max_bits
    r"\(\exp(\exp(\exp(64))) = 5\)",                 # exp of exp(6e27)
    r"\( \sin(\exp(\exp(64))) = 5 \)",               # trigonometry of a 2^(8.6e27) argument
    r"\( \exp(14000) = 5 \)",                        # exp argument > max_bits·ln 2 ≈ 13,863
    r"\( \pi^{20000} = 5 \)",                        # irrational power of 33,000 bits
    r"\( 2^{\pi \cdot 10000} = 5 \)",                # irrational exponent, 31,416 bits
    r"\( \ln(\exp(\exp(64))) = 5 \)",
    r"\( \cos(10^{7000}) = 5 \)",                    # 23,253-bit argument
    r"\( \tan(\frac{1}{10^{7000}}) = 5 \)",          # 2^-23,253: too small as well
])
def test_oversized_values_are_unknown(text: str) -> None:
    out = outcome(text)
    assert isinstance(out, Unknown), out
    assert "evaluation_limit" in out.reason


@pytest.mark.parametrize("text", [
    r"\( \exp(\exp(\exp(64))) = 5 \)", r"\( \sin(\exp(\exp(64))) = 5 \)", r"\( \exp(14000) = 5 \)",
    r"\( \pi^{20000} = 5 \)", r"\( \cos(10^{7000}) = 5 \)",
])
def test_probe_refuses_before_computing(text: str) -> None:
    meter = Meter(DEFAULT_LIMITS.max_steps)
    with pytest.raises(EvaluationLimit):
        probe(expr(text), DEFAULT_LIMITS, meter)
    assert meter.steps < 100  # a handful of nodes: nothing large was computed


@pytest.mark.parametrize("text", [
    r"\( \exp(13000) = 5 \)", r"\( \sin(10^{5000}) = 5 \)", r"\( \ln(10^{5000}) = 5 \)",
])
def test_large_but_bounded_values_are_decided(text: str) -> None:
    # just inside the bounds: evaluated (at bounded precision) and refuted, not given up on
    assert type(outcome(text)).__name__ == "Refuted"


def test_power_guard_counts_no_work() -> None:
    # (10^1000)^6000 has 20 million bits; the guard refuses it before computing. Loosen max_bits
    # and max_exponent a thousandfold and the power runs: the meter then counts ~300,000 units.
    meter = Meter(10**9)
    with pytest.raises(EvaluationLimit, match="too large"):
        evaluate(expr(r"\( (10^{1000})^{6000} = 1 \)"), None, DEFAULT_LIMITS, meter)
    assert meter.steps < 1000


def test_loosened_power_guard_would_do_the_work() -> None:
    # the same input under a thousandfold looser guard costs the meter what the work costs,
    # so the step limit catches it (the meter is not decorative)
    loose = replace(DEFAULT_LIMITS, max_bits=DEFAULT_LIMITS.max_bits * 1000,
                    max_exponent=DEFAULT_LIMITS.max_exponent * 1000)
    meter = Meter(loose.max_steps)
    with pytest.raises(EvaluationLimit, match="step limit"):
        evaluate(expr(r"\( (10^{1000})^{6000} = 1 \)"), None, loose, meter)


def test_seven_to_the_ten_thousand_is_refused_by_the_bit_guard() -> None:
    meter = Meter(10**9)
    with pytest.raises(EvaluationLimit, match="power too large"):
        evaluate(expr(r"\( 7^{10000} = 5 \)"), None, DEFAULT_LIMITS, meter)
    assert meter.steps < 10


def test_step_limit_stops_long_sums_of_large_terms() -> None:
    # 60 terms of 9,000 bits: about 25,000 work units, past the default limit of 20,000
    text = r"\( " + " + ".join([r"2^{9000}"] * 60) + r" = 1 \)"
    e = expr(text)
    with pytest.raises(EvaluationLimit, match="step limit"):
        evaluate(e)
    assert evaluate(e, lim=replace(DEFAULT_LIMITS, max_steps=10**7)) == 60 * 2**9000


def test_evaluation_stops_at_the_budget_deadline() -> None:
    e = expr(r"\( " + " + ".join(["2^{1000}"] * 60) + r" = 1 \)")  # about 2,000 work units
    assert evaluate(e) == 60 * 2**1000
    with budget(time.monotonic() - 1), pytest.raises(EvaluationLimit, match="time budget"):
        evaluate(e)
    with budget(time.monotonic() - 1), pytest.raises(EvaluationLimit, match="time budget"):
        probe(e)


def test_logarithm_of_zero_is_not_a_value() -> None:
    with pytest.raises(NotRational):
        to_sympy(expr(r"\( \ln(0) = 5 \)"))


def test_one_cost_model_with_a_profile_per_caller() -> None:
    """The checkers, the grader and the service's lanes read one model with their own limits."""
    from faithsieve.grading import approx as grading_approx
    from faithsieve.grading.normalize import LIMITS
    from faithsieve.mathtext import cost
    from faithsieve.mathtext.evaluate import DEFAULT_LIMITS as EVAL_LIMITS

    assert set(cost.PROFILES) == {"checkers", "grader", "service"}
    assert cost.CHECKERS.limits is DEFAULT_LIMITS is EVAL_LIMITS
    assert cost.GRADER.limits is LIMITS and cost.GRADER.max_nodes == 80
    assert grading_approx.MAX_MAGNITUDE == 1e200 and cost.GRADER.float_nodes == grading_approx.MAX_NODES
    e = expr(r"\( (2 + 3) \cdot 4 = 20 \)")
    assert cost.within((e,), 5) and not cost.within((e,), 4)  # the one node guard: 5 nodes
    assert cost.approx(e) == 20 and grading_approx.approx(e) == 20
    tower = expr(r"\( 10^{10^{10}} = 5 \)")
    assert cost.approx(tower) is None  # past 10^200: never evaluated
    assert cost.formula_cost(tower) == "magnitude" and cost.formula_cost(e) is None
