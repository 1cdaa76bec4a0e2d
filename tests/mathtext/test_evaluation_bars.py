"""Evaluation bars written with sized bars (``F \\Big|_{x=a}``, ``F \\bigg|_a^b``) and sized brackets
(``\\Big[ F \\Big]_a^b``), besides ``\\left. F \\right|``."""

from __future__ import annotations

import pytest
from faithsieve.obligations.kinds.models import Refuted, Verified
from faithsieve.obligations.procedures.calculus import check_calculus

from faithsieve.mathtext.ast import Rel
from faithsieve.mathtext.formulas import extract_formulas, tokenize_latex
from faithsieve.mathtext.tokens import BAR, EVALBAR


def rel_of(text: str) -> Rel:
    fs = extract_formulas(text)
    assert len(fs) == 1, [f.chain for f in fs]
    lhs, op, rhs = fs[0].chain.links()[0]
    return Rel(lhs, op, rhs)


@pytest.mark.parametrize("text, right", [
    (r"$\frac{d}{dx} x^3 \Big|_{x=1} = 3$", True),
    (r"$\frac{d}{dx} x^3 \Big|_{x=1} = 4$", False),
    (r"$3x^2 \bigg|_{x=2} = 12$", True),
    (r"$\frac{x^2}{2}\bigg|_{0}^{1} = \frac{1}{2}$", True),
    (r"$\frac{x^2}{2}\Bigg|_0^2 = 1$", False),
    (r"$\left.\frac{x^3}{3}\right|_0^3 = 9$", True),
    (r"$\Big[ x^3 \Big]_0^2 = 8$", True),
    (r"$\bigg[ \frac{t^2}{2} \bigg]_1^3 = 3$", False),
])
def test_sized_evaluation_bars(text: str, right: bool) -> None:
    out = check_calculus(rel_of(text))
    assert isinstance(out, Verified if right else Refuted), out


def test_a_sized_bar_closing_an_absolute_value_is_not_an_evaluation_bar() -> None:
    kinds = [t.kind for t in tokenize_latex(r"\Big| x - 3 \Big|_{2} = 2")]
    assert EVALBAR not in kinds and kinds.count(BAR) == 2
    assert EVALBAR in [t.kind for t in tokenize_latex(r"x^2 \Big|_{x=2} = 4")]


def test_the_bar_acts_on_the_whole_member_before_it() -> None:
    r = rel_of(r"$x^2 + 1 \Big|_{x=2} = 5$")
    assert isinstance(check_calculus(r), Verified)
