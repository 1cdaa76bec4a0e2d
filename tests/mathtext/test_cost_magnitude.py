"""The probe's cheap magnitude reading (mantissa and exponent instead of a logarithm) charges
and refuses exactly what the logarithm does."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext import cost
from faithsieve.mathtext.ast import BinOp, Call, Const, Expr, Neg, Pow
from faithsieve.mathtext.cost import DEFAULT_LIMITS, Meter, probe
from tests.obligations.symsupport import num as _n


def gen(rng: random.Random, depth: int) -> Expr:
    if depth <= 0 or rng.random() < 0.2:
        r = rng.random()
        if r < 0.1:
            return Const("pi")
        if r < 0.5:  # magnitudes on both sides of the 2^±63 window
            return _n(Fraction(rng.randint(1, 9) * 10 ** rng.randint(0, 40), 10 ** rng.randint(0, 40)))
        return _n(rng.randint(-3, 9))
    k = rng.random()
    if k < 0.5:
        return BinOp(rng.choice("+-*/"), gen(rng, depth - 1), gen(rng, depth - 1))
    if k < 0.6:
        return Neg(gen(rng, depth - 1))
    if k < 0.75:
        return Pow(gen(rng, depth - 1), _n(rng.choice((-40, -3, -1, 2, 3, 40, 300))))
    return Call(rng.choice(("sqrt", "exp", "ln", "sin", "abs")), (gen(rng, depth - 1),))


def run(e: Expr, limits=DEFAULT_LIMITS) -> tuple[str, int]:
    meter = Meter(limits.max_steps)
    try:
        probe(e, limits, meter)
        result = "ok"
    except FaithSieveError as exc:
        result = f"{type(exc).__name__}: {exc}"
    return result, meter.steps


@pytest.mark.parametrize("max_bits", [64, 200, DEFAULT_LIMITS.max_bits])
def test_the_cheap_reading_charges_what_the_logarithm_charges(max_bits: int, monkeypatch) -> None:
    from dataclasses import replace

    limits = replace(DEFAULT_LIMITS, max_bits=max_bits)
    rng = random.Random(max_bits)
    for _ in range(1500):
        e = gen(rng, 4)
        fast = run(e, limits)
        with monkeypatch.context() as m:
            m.setattr(cost, "_MPF", type(None))  # every value through the logarithm
            slow = run(e, limits)
        assert fast == slow, str(e)


def test_the_window_edges(monkeypatch) -> None:
    for k in (-70, -64, -63, -62, -61, 0, 61, 62, 63, 64, 70):
        for v in (Fraction(2) ** k, Fraction(2) ** k * Fraction(3, 2), Fraction(2) ** k - Fraction(2) ** (k - 70)):
            fast = run(_n(v))
            with monkeypatch.context() as m:
                m.setattr(cost, "_MPF", type(None))
                slow = run(_n(v))
            assert fast == slow, (k, v)


# -- the probe over values sympy built (issue 38) ---------------------------------------------------------

def test_probe_sympy_bounds_what_sympy_built() -> None:
    import sympy

    from faithsieve.core.errors import EvaluationLimit
    from faithsieve.mathtext.cost import (
        CHECKERS,
        Limits,
        probe_sympy,
        trig_expansion_within,
    )

    x = sympy.Symbol("x")
    tower = sympy.diff(sympy.exp(sympy.exp(sympy.exp(x))), x)
    probe_sympy(tower, env={"x": sympy.Integer(2)})  # e^{e^{e^2}}: about 2^2340, within the bits
    probe_sympy(tower)  # a free letter: nothing to evaluate
    with pytest.raises(EvaluationLimit):
        probe_sympy(tower, env={"x": sympy.Integer(100)})
    with pytest.raises(EvaluationLimit):  # the bit limit decides: e^{e^{e^2}} past 2000 bits
        probe_sympy(tower, Limits(max_bits=2000), env={"x": sympy.Integer(2)})
    with pytest.raises(EvaluationLimit):  # the step limit decides
        probe_sympy(sum(sympy.sin(k * x) for k in range(1, 200)), Limits(max_steps=100), env={"x": sympy.Integer(1)})
    with pytest.raises(EvaluationLimit):  # a function the probe cannot bound refuses
        probe_sympy(sympy.gamma(sympy.Rational(1, 3)))
    assert trig_expansion_within(sympy.sin(24 * x), CHECKERS)
    assert not trig_expansion_within(sympy.sin(25 * x), CHECKERS)
    assert not trig_expansion_within(sympy.tan(1000000 * x) + 1, CHECKERS)
