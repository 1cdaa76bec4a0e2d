"""Calculus values: reading derivatives, definite integrals and limits (``Calc`` nodes), and deciding them
with sympy within bounds (``obligations.procedures.calculus``)."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest
from faithsieve.obligations.kinds.models import Refuted, Unknown, Verified
from faithsieve.obligations.procedures.calculus import (
    check_calculus,
    definitions,
    has_calculus,
    with_definitions,
)

from faithsieve.core.proof import Proof, Step
from faithsieve.mathtext.ast import (
    Calc,
    Num,
    Rel,
    render,
    substitute,
    variables,
    walk,
)
from faithsieve.mathtext.formulas import extract_formulas
from faithsieve.pipeline import localize


def chain_of(text: str) -> tuple:
    fs = extract_formulas(text)
    assert len(fs) == 1, [f.chain for f in fs]
    return fs[0].chain


def rel_of(text: str, link: int = 0) -> Rel:
    lhs, op, rhs = chain_of(text).links()[link]
    return Rel(lhs, op, rhs)


def calc_in(e) -> Calc:
    found = [n for n in walk(e) if isinstance(n, Calc)]
    assert found, render(e)
    return found[0]


# -- reading --------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, op, var, nargs", [
    (r"$\frac{d}{dx} x^3 = 3x^2$", "diff", "x", 0),
    (r"$\dfrac{d}{dx}\left(x^2 + 5x\right) = 2x + 5$", "diff", "x", 0),
    (r"$\frac{\mathrm{d}}{\mathrm{d}t} t^2 = 2t$", "diff", "t", 0),
    (r"$(x^5)' = 5x^4$", "diff", "x", 0),
    (r"$\left.\frac{d}{dx} x^3\right|_{x=1} = 3$", "diff", "x", 1),
    (r"$\int_0^1 x^2\,dx = \frac{1}{3}$", "int", "x", 2),
    (r"$\int_0^{\pi} \sin x \, \mathrm{d}x = 2$", "int", "x", 2),
    (r"$\int_{-1}^{1} u^3 du = 0$", "int", "u", 2),
    (r"$\lim_{x \to 0} \frac{\sin x}{x} = 1$", "lim", "x", 1),
    (r"$\lim_{x\rightarrow \infty} \frac{2x+1}{x} = 2$", "lim", "x", 1),
    (r"$\displaystyle\lim_{n \to \infty} \left(1 + \frac{1}{n}\right)^n = e$", "lim", "n", 1),
])
def test_calculus_notations_are_read_as_calculus_values(text: str, op: str, var: str, nargs: int) -> None:
    r = rel_of(text)
    c = calc_in(r.lhs)
    assert (c.op, c.var, len(c.args)) == (op, var, nargs)


def test_bound_variables_stay_bound() -> None:
    integral = rel_of(r"$\int_0^1 x^2\,dx = \frac{1}{3}$")
    limit = rel_of(r"$\lim_{x \to 2} (x^2 + 1) = 5$")
    assert variables(integral.lhs) == frozenset() and variables(limit.lhs) == frozenset()
    # a known value of x never enters the integral
    three = Num(Fraction(3), "3", 0)
    assert substitute(integral.lhs, {"x": three}) == integral.lhs
    # a derivative as a function keeps its variable free; given a value it is the derivative there
    d = rel_of(r"$\frac{d}{dx} x^3 = 3x^2$").lhs
    assert variables(d) == {"x"}
    at = substitute(d, {"x": three})
    assert isinstance(at, Calc) and at.args == (three,) and variables(at) == frozenset()


def test_limits_of_an_integral_are_no_fact() -> None:
    # the lower limit "x = 0" of a limit's subscript or an integral is never a formula of its own
    for text in (r"$\lim_{x \to 0} \frac{\sin x}{x} = 1$", r"$\int_0^1 x\,dx = \frac12$"):
        assert len(extract_formulas(text)) == 1


def test_antiderivative_bracket_is_a_difference() -> None:
    c = chain_of(r"$\int_0^2 3x^2\,dx = \left[x^3\right]_0^2 = 8$")
    assert render(c.exprs[1]) == "2^3 - 0^3"


def test_one_sided_limit_and_infinity() -> None:
    c = calc_in(rel_of(r"$\lim_{x \to 0^+} x \ln x = 0$").lhs)
    assert c.side == "+"
    c = calc_in(rel_of(r"$\lim_{x \to -\infty} \frac{2x}{x+1} = 2$").lhs)
    assert render(c.args[0]) == "-infty()"


def test_leibniz_quotient_of_a_name_is_not_a_product() -> None:
    # dy/dx is not d*y/(d*x) = y/x: it is the derivative of the name y (tests/obligations/test_leibniz_names.py)
    assert render(rel_of(r"$\frac{dy}{dx} = 2x$").lhs) == "fn:y'(x)"
    assert render(rel_of(r"$\frac{d^2y}{dx^2} = 2x$").lhs) == "fn:y''(x)"
    assert extract_formulas(r"$\frac{d^2 y z}{dx^2} = 2x$") == []


def test_plain_fractions_are_unchanged() -> None:
    r = rel_of(r"$\frac{d}{2} = 3$")
    assert not has_calculus(r)
    assert render(r.lhs) == "d / 2"


def test_to_outside_a_limit_still_breaks() -> None:
    fs = extract_formulas(r"$f: A \to B$ and $x = 2$")
    assert [render(f.chain.exprs[0]) for f in fs] == ["x"]


# -- checking -------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, verdict", [
    (r"$\frac{d}{dx} x^3 = 3x^2$", Verified),
    (r"$\frac{d}{dx} x^3 = 2x^2$", Refuted),
    (r"$\frac{d}{dx} \sin x = \cos x$", Verified),
    (r"$\frac{d}{dx} e^{2x} = e^{2x}$", Refuted),
    (r"$\frac{d^2}{dx^2} x^4 = 12x^2$", Verified),
    (r"$\int_0^1 x^2\,dx = \frac{1}{3}$", Verified),
    (r"$\int_0^1 x^2\,dx = \frac{1}{2}$", Refuted),
    (r"$\int_1^{e} \frac{1}{x}\,dx = 1$", Verified),
    (r"$\int_0^\infty e^{-x}\,dx = 1$", Verified),
    (r"$\lim_{x \to 3} \frac{x^2 - 9}{x - 3} = 6$", Verified),
    (r"$\lim_{x \to 3} \frac{x^2 - 9}{x - 3} = 3$", Refuted),
    (r"$\lim_{x \to \infty} \frac{2x + 1}{x} = 2$", Verified),
    (r"$\left.\frac{d}{dx}(x^2 + 3x)\right|_{x=1} = 4$", Refuted),
])
def test_values_are_computed_and_compared(text: str, verdict: type) -> None:
    out = check_calculus(rel_of(text))
    assert isinstance(out, verdict), out
    assert out.method == "sympy-calculus"


def test_refutation_gives_the_computed_value() -> None:
    out = check_calculus(rel_of(r"$\int_0^2 3x^2\,dx = 6$"))
    assert isinstance(out, Refuted) and out.counterexample["computed"] == "8"


def test_undecided_values_are_unknown_never_refuted() -> None:
    for text in (
        r"$\lim_{x \to 0} \frac{1}{x} = 5$",          # no two-sided limit
        r"$\lim_{x \to \infty} \sin x = 0$",           # oscillates
        r"$\int_{-1}^{1} \frac{1}{x^2}\,dx = 2$",      # diverges
        r"$\int_0^1 e^{x^2}\,dx = 1$",                 # outside the class computed symbolically
        r"$\frac{d}{dx}(x^2 - 4x) = 0$",               # an equation to solve (critical points)
    ):
        out = check_calculus(rel_of(text))
        assert isinstance(out, Unknown), (text, out)


def test_hostile_sizes_stay_bounded_and_fast() -> None:
    for text in (
        r"$\frac{d}{dx} (x+1)^{100000} = 100000 (x+1)^{99999}$",
        r"$\int_0^1 x^{24}\sin(3x) e^{2x}\,dx = 1$",
        r"$\int_0^{10^{100}} x^{20}\,dx = 1$",
        r"$\lim_{x \to 0} \frac{\sin(x)^{24} - x^{24}}{x^{26}} = 1$",
        r"$\frac{d}{dx} x^{x^{x^{x}}} = 1$",
    ):
        t0 = time.monotonic()
        out = check_calculus(rel_of(text))
        assert time.monotonic() - t0 < 3.0, text
        assert not isinstance(out, Verified) or "10^{100}" in text, (text, out)


def test_deadline_is_honoured() -> None:
    out = check_calculus(rel_of(r"$\int_0^1 x^2\,dx = \frac{1}{3}$"), deadline=time.monotonic() - 1)
    assert isinstance(out, Unknown) and "budget" in out.reason


def test_defined_function_derivatives() -> None:
    defs = definitions((rel_of("$f(x) = x^4$"),))
    assert set(defs) == {"f"}
    r = with_definitions(rel_of("$f'(2) = 16$"), defs)
    assert r is not None and isinstance(check_calculus(r), Refuted)
    r = with_definitions(rel_of("$f''(x) = 12x^2$"), defs)
    assert r is not None and isinstance(check_calculus(r), Verified)
    # a defined function outside calculus is left as written
    assert with_definitions(rel_of("$f(3) = 81$"), defs) is None


def run(problem: str, *steps: str) -> int | None:
    v = localize(Proof(problem=problem, steps=tuple(Step(index=i, text=t) for i, t in enumerate(steps, 1))))
    return v.first_error_step


def test_pipeline_flags_a_wrong_derivative_value_only() -> None:
    assert run("Let $f(x) = x^4$. Find $f'(2)$.", "We differentiate.", "$f'(x) = 4x^3$, so $f'(2) = 32$.") is None
    assert run("Let $f(x) = x^4$. Find $f'(2)$.", "We differentiate.", "$f'(x) = 4x^3$, so $f'(2) = 16$.") == 2
    assert run("Evaluate.", r"$\int_0^1 x\,dx = \frac{1}{2}$.", r"$\lim_{x \to 1} (x + 1) = 3$.") == 2


# -- values sympy builds are judged by the cost model before they are evaluated (issue 38) ---------------

VALUE_BOMBS = (
    r"$\left.\frac{d}{dx} e^{e^{e^{x}}}\right|_{x=100} = 1$",
    r"$\int_1^{e^{e^{e^{10}}}} \frac{1}{x}\,dx = 1$",
    r"$\int_1^{e^{e^{20}}} \frac{1}{x}\,dx = 1$",
)


@pytest.mark.parametrize("text", VALUE_BOMBS)
def test_a_computed_value_past_the_cost_model_is_unknown_at_once(text: str) -> None:
    """The formula as written is small; the value sympy builds (``exp(exp(exp(100)))``, ``exp(exp(20))``)
    is judged by the cost model's probe before any digit is computed."""
    t0 = time.monotonic()
    out = check_calculus(rel_of(text))
    assert time.monotonic() - t0 < 2.0, text
    assert isinstance(out, Unknown) and "too large to evaluate" in out.reason, (text, out)


def test_a_computed_value_within_the_bounds_is_still_decided() -> None:
    """The probe refuses by size, not by shape: towers of small values are decided as before."""
    assert isinstance(check_calculus(rel_of(r"$\left.\frac{d}{dx} e^{e^{x}}\right|_{x=0} = e$")), Verified)
    assert isinstance(check_calculus(rel_of(r"$\int_1^{e^{e^{2}}} \frac{1}{x}\,dx = 1$")), Refuted)


def test_a_defined_tower_does_not_take_the_rest_of_the_proof() -> None:
    assert run("Let $f(x) = \\exp(\\exp(\\exp(x)))$.", "We have $f(x) = \\exp(\\exp(\\exp(x)))$.",
               "Then $f'(100) = 1$.", "So $2 + 2 = 5$.") == 3
    assert run("Compute.", VALUE_BOMBS[0], "So $2 + 2 = 5$.") == 2


def test_an_antiderivative_with_a_large_trigonometric_multiple_is_not_expanded() -> None:
    """``expand(trig=True)`` of ``tan(1000000x)`` builds a million terms; the claim is decided at sample
    points instead (its derivative differs from the integrand)."""
    t0 = time.monotonic()
    out = check_calculus(rel_of(r"$\int \cos x\,dx = \tan(1000000x) + C$"))
    assert time.monotonic() - t0 < 3.0
    assert isinstance(out, Refuted)
    assert isinstance(check_calculus(rel_of(r"$\int 2\sin(x)\cos(x)\,dx = -\frac{\cos(2x)}{2} + C$")), Verified)
