"""Indefinite integrals (``\\int f\\,dx = F + C``): read as a ``Calc`` with no bounds and checked by
differentiating the claimed antiderivative, never by integrating."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest
from faithsieve.obligations.kinds.models import Refuted, Unknown, Verified
from faithsieve.obligations.procedures.calculus import check_calculus

from faithsieve.core.proof import Proof, Step
from faithsieve.mathtext.ast import Calc, Num, Rel, substitute, variables
from faithsieve.mathtext.formulas import extract_formulas
from faithsieve.pipeline import localize


def rel_of(text: str) -> Rel:
    fs = extract_formulas(text)
    assert len(fs) == 1, [f.chain for f in fs]
    lhs, op, rhs = fs[0].chain.links()[0]
    return Rel(lhs, op, rhs)


def test_an_indefinite_integral_reads_with_its_variable_free() -> None:
    r = rel_of(r"$\int 2x\,dx = x^2 + C$")
    assert isinstance(r.lhs, Calc) and r.lhs.op == "int" and r.lhs.args == ()
    assert variables(r.lhs) == {"x"}
    # a value for x never enters the body of the antiderivative
    assert substitute(r.lhs, {"x": Num(Fraction(3), "3", 0)}) == r.lhs


@pytest.mark.parametrize("text", [
    r"$\int 2x\,dx = x^2 + C$",
    r"$\int 2x\,dx = x^2$",
    r"$\int (3x^2 + 1)\,dx = x^3 + x + C$",
    r"$\int \sin x\,dx = -\cos x + C$",
    r"$\int e^{2x}\,dx = \frac{1}{2}e^{2x} + C$",
    r"$\int x e^x\,dx = (x - 1)e^x + C$",
    r"$\int \frac{1}{x}\,dx = \ln x + C$",
    r"$\int \cos(2x)\,dx = \frac{\sin(2x)}{2} + C$",
    r"$\int t^3\,dt = C + \frac{t^4}{4}$",
])
def test_a_true_antiderivative_is_verified(text: str) -> None:
    out = check_calculus(rel_of(text))
    assert isinstance(out, Verified), out


@pytest.mark.parametrize("text", [
    r"$\int 2x\,dx = x^2 + x + C$",
    r"$\int \sin x\,dx = \cos x + C$",
    r"$\int x e^x\,dx = x e^x + C$",
    r"$\int x^2\,dx = \frac{x^3}{2} + C$",
    r"$\int 2\,dx = 3x$",
])
def test_a_wrong_antiderivative_is_refuted_at_a_point(text: str) -> None:
    out = check_calculus(rel_of(text))
    assert isinstance(out, Refuted), out
    assert "integrand" in out.counterexample and "derivative of the claim" in out.counterexample


@pytest.mark.parametrize("text", [
    r"$\int a x\,dx = x^2 + C$",  # a parameter: not compared
    r"$\int 2x\,dx = 5 + C$",  # no variable on the claimed side (a value substituted before)
    r"$\int \frac{1}{x}\,dx = \ln|x| + C$",  # equal at every sample point, not shown identical
    r"$2\int x\,dx = x^2$",  # an antiderivative inside a larger expression
])
def test_undecided_antiderivatives_are_unknown(text: str) -> None:
    assert isinstance(check_calculus(rel_of(text)), Unknown)


def test_a_known_value_of_the_variable_leaves_it_unknown() -> None:
    assert isinstance(check_calculus(rel_of(r"$\int 2x\,dx = x^2 + C$"), {"x": Fraction(3)}), Unknown)


def test_a_huge_claimed_antiderivative_is_bounded() -> None:
    t0 = time.monotonic()
    out = check_calculus(rel_of(r"$\int 2x\,dx = (x+1)^{100000} + C$"))
    assert isinstance(out, Unknown) and time.monotonic() - t0 < 3


def test_pipeline_flags_a_wrong_antiderivative() -> None:
    def run(*steps: str) -> int | None:
        proof = Proof(problem="Find the antiderivative.", steps=tuple(Step(index=i, text=t) for i, t in enumerate(steps, 1)))
        return localize(proof).first_refutation
    assert run(r"We have $\int 3x^2\,dx = x^3 + C$.", "So we are done.") is None
    assert run("We integrate term by term.", r"We have $\int 3x^2\,dx = x^3 + 3x + C$.") == 2
