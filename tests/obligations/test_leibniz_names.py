"""``\\frac{dy}{dx}`` and ``y'(x)`` where the proof wrote ``y = <expression in x>`` (in the problem, an
earlier step or earlier in the same step), and derivatives of functions defined in earlier steps."""

from __future__ import annotations

import pytest
from faithsieve.obligations.kinds.models import Refuted, Unknown, Verified
from faithsieve.obligations.procedures.calculus import (
    check_calculus,
    definitions,
    with_definitions,
)

from faithsieve.core.proof import Proof, Step
from faithsieve.mathtext.ast import Call, Rel, Var
from faithsieve.mathtext.formulas import extract_formulas
from faithsieve.pipeline import localize


def rel_of(text: str) -> Rel:
    fs = extract_formulas(text)
    assert len(fs) == 1, [f.chain for f in fs]
    lhs, op, rhs = fs[0].chain.links()[0]
    return Rel(lhs, op, rhs)


def test_dy_dx_reads_as_the_derivative_of_a_name() -> None:
    r = rel_of(r"$\frac{dy}{dx} = 2x$")
    assert r.lhs == Call("fn:y'", (Var("x"),))
    # undefined y: undecided, never d/dx of a constant
    assert isinstance(check_calculus(r), Unknown)


def test_a_definition_of_y_writes_dy_dx_out() -> None:
    defs = definitions((rel_of("$y = x^3 + 2x$"),))
    r = with_definitions(rel_of(r"$\frac{dy}{dx} = 3x^2 + 2$"), defs)
    assert r is not None and isinstance(check_calculus(r), Verified)
    r = with_definitions(rel_of(r"$\frac{dy}{dx} = 3x^2 + 2x$"), defs)
    assert r is not None and isinstance(check_calculus(r), Refuted)
    r = with_definitions(rel_of("$y'(x) = 3x^2$"), defs)
    assert r is not None and isinstance(check_calculus(r), Refuted)


def test_y_in_another_letter_or_redefined_is_left_alone() -> None:
    # y = t^3 says nothing of dy/dx
    assert with_definitions(rel_of(r"$\frac{dy}{dx} = 0$"), definitions((rel_of("$y = t^3$"),))) is None
    # a later y = 7 ends the definition
    assert with_definitions(rel_of(r"$\frac{dy}{dx} = 2x$"),
                            definitions((rel_of("$y = x^2$"), rel_of("$y = 7$")))) is None
    # a bare y' may be a new quantity's name
    assert with_definitions(rel_of("$y' = 5$"), definitions((rel_of("$y = x^2$"),))) is None


def test_a_constant_derivative_equal_to_a_letter_is_an_equation() -> None:
    assert isinstance(check_calculus(rel_of(r"$\frac{d}{dx}(3x) = n + 1$")), Unknown)


def run(*steps: str, problem: str = "Find the slope.") -> int | None:
    proof = Proof(problem=problem, steps=tuple(Step(index=i, text=t) for i, t in enumerate(steps, 1)))
    return localize(proof).first_refutation


@pytest.mark.parametrize("steps, first", [
    (("Let $y = x^3 + 2x$.", r"So $\frac{dy}{dx} = 3x^2 + 2x$."), 2),
    (("Let $y = x^3 + 2x$.", r"So $\frac{dy}{dx} = 3x^2 + 2$."), None),
    ((r"Let $y = x^3 + 2x$, so $\frac{dy}{dx} = 3x^2 + 2x$.", "Done."), 1),
    (("Let $y = x^3$, then $y'(x) = 3x$.", "Done."), 1),
    (("Let $y = t^3$.", r"Then $\frac{dy}{dx} = 0$."), None),
    (("Let $f(x) = x^2$.", "Then $f'(x) = 3x$."), 2),
    (("Let $f(x) = x^2$.", "Then $f'(x) = 2x$."), None),
])
def test_pipeline(steps: tuple[str, ...], first: int | None) -> None:
    assert run(*steps) == first


def test_second_leibniz_derivative_of_a_defined_name() -> None:
    defs = definitions((rel_of("$y = x^4$"),))
    r = with_definitions(rel_of(r"$\frac{d^2y}{dx^2} = 12x^2$"), defs)
    assert r is not None and isinstance(check_calculus(r), Verified)
    r = with_definitions(rel_of(r"$\frac{d^2y}{dx^2} = 4x^3$"), defs)
    assert r is not None and isinstance(check_calculus(r), Refuted)
