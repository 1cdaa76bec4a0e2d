"""Quadratics along one variable: degrees read off the syntax bound the true degree, and the
roots read from three values are the quadratic's rational roots."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from faithsieve.obligations.procedures.polynomials import expand
from faithsieve.obligations.procedures.quadratics import (
    degree_along,
    quadratic_in,
    rational_roots,
    rational_sqrt,
)

from tests.obligations.test_fastpaths import rel


@pytest.mark.parametrize("seed", range(3))
def test_roots_from_three_values(seed: int) -> None:
    rng = random.Random(seed)
    rational = 0
    for _ in range(400):
        a, b, c = (Fraction(rng.randint(-9, 9), rng.choice((1, 2, 3, 7))) for _ in range(3))
        if rng.random() < 0.5:  # one with rational roots r, s: a(u - r)(u - s)
            r, s = (Fraction(rng.randint(-9, 9), rng.choice((1, 2, 5))) for _ in range(2))
            b, c = -a * (r + s), a * r * s
        def p(u: Fraction, a: Fraction = a, b: Fraction = b, c: Fraction = c) -> Fraction:
            return a * u * u + b * u + c

        roots = rational_roots(p(0), p(1), p(2))
        assert all(p(u) == 0 for u in roots)
        if a == 0:
            assert roots == []
            continue
        disc = b * b - 4 * a * c
        exact = disc >= 0 and rational_sqrt(disc) is not None
        assert (len(roots) == 2) == exact
        rational += exact
    assert rational >= 150


def test_square_roots() -> None:
    assert rational_sqrt(Fraction(9, 49)) == Fraction(3, 7) and rational_sqrt(Fraction(2)) is None
    assert rational_sqrt(Fraction(-4)) is None and rational_sqrt(Fraction(0)) == 0


@pytest.mark.parametrize("seed", range(2))
def test_degree_read_off_the_syntax_bounds_the_expansion(seed: int) -> None:
    rng = random.Random(10 + seed)
    for _ in range(200):
        terms = [f"{rng.randint(-3, 3)}*{rng.choice(('x', 'y', 'x*y', 'x^2', '(x + y)^2', '(x - 1)*(y + 2)', 'y/2'))}"
                 for _ in range(rng.randint(1, 4))]
        r = rel(f"{' + '.join(terms)} = {rng.randint(-5, 5)}")
        poly = expand(r.lhs)
        assert poly is not None
        true_degree = max((k for m in poly for name, k in m if name == "x"), default=0)
        read = degree_along(r.lhs, "x")
        assert read is not None and read >= true_degree, r


def test_only_equations_of_degree_two_along_the_variable() -> None:
    assert quadratic_in(rel("x^2 + x*y = 3"), "x") and not quadratic_in(rel("x*y = 3"), "x")
    assert not quadratic_in(rel("x^4 = y"), "x") and not quadratic_in(rel("1/x^2 = y"), "x")
    assert not quadratic_in(rel("abs(x)^2 = y"), "x") and quadratic_in(rel("abs(y) = x^2/2"), "x")
    assert quadratic_in(rel("(x + 1)^2 = 25% * y"), "x") and not quadratic_in(rel("x = y"), "x")
    assert not quadratic_in(rel("2^x = x^2"), "x")  # the variable in an exponent
