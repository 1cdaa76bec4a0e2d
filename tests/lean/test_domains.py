"""Domain guards of the renderer: no statement whose truth in Lean rests on a junk value.

Lean's total functions give ``Real.sqrt (-4) = 0``, ``Real.log 0 = 0``, ``Real.log (-1) = 0`` and
``Real.tan (π / 2) = 0``, which Mathlib proves by ``norm_num``/``simp``: each claim below has no
real value (sympy leaves it ``unknown``), so it must be refused, not rendered. A guard that no point
satisfies (``x - x ≠ 0``) would make a statement vacuously true, so it is refused too. The values
in the comments were checked with sympy (``sqrt(-4)`` is ``2*I``, ``log(0)`` is ``zoo``,
``tan(pi/2)`` is ``zoo``, ``cos(pi/4)`` is ``sqrt(2)/2``)."""

from fractions import Fraction

import pytest
from faithsieve.lean.domains import MARGIN, Undecided, closed_sign, guard, satisfiable
from faithsieve.lean.render import LeanStatement, Unrenderable, render
from faithsieve.obligations.kinds.models import (
    ArithmeticObligation,
    DerivationObligation,
    IdentityObligation,
    SolutionObligation,
    SubstitutionObligation,
)

from faithsieve.mathtext import extract_formulas
from faithsieve.mathtext.ast import BinOp, Call, Const, Num, Rel, Var

BASE = {"id": "o0", "step": 1, "span": (0, 1), "edge": "e0", "source": ""}


def rel(text: str) -> Rel:
    a, op, b = extract_formulas(text)[0].chain.links()[0]
    return Rel(a, op, b)


def num(v: int | str) -> Num:
    return Num(Fraction(v), str(v), 0)


def arith(text: str) -> ArithmeticObligation:
    return ArithmeticObligation(**BASE, claim=rel(text))


def ident(text: str) -> IdentityObligation:
    return IdentityObligation(**BASE, claim=rel(text), asserted_identity=True)


def refused(ob: object, flavour: str = "mathlib") -> str:
    st = render(ob, flavour)  # type: ignore[arg-type]
    assert isinstance(st, Unrenderable), st
    return st.reason


def rendered(ob: object) -> LeanStatement:
    st = render(ob)  # type: ignore[arg-type]
    assert isinstance(st, LeanStatement), st
    return st


@pytest.mark.parametrize(("text", "why"), [
    (r"\sqrt{-4} = 0", "√(-4) has no real value"),           # sympy: 2*I
    (r"\ln 0 = 0", "log(0) has no real value"),              # sympy: zoo
    (r"\ln(-1) = 0", "log(-1) has no real value"),           # sympy: I*pi
    (r"\tan(\pi/2) = 0", "tan(pi / 2) has no value"),        # sympy: zoo
    (r"\tan(90°) = 0", "tan(90°) has no value"),
    (r"\sqrt{3 - 7} = 0", "has no real value"),              # closed, evaluated: -4
    (r"\frac{1}{\sqrt{2} - \sqrt{2}} = 0", "cannot decide the denominator"),
    (r"\log_1 5 = 0", "logarithm base 1"),
])
def test_closed_arguments_without_a_real_value_are_refused(text: str, why: str) -> None:
    assert why in refused(arith(text))


@pytest.mark.parametrize(("text", "conclusion"), [
    (r"\sqrt{4} = 2", "Real.sqrt 4 = 2"),
    (r"\sqrt{2} - 1 > 0", "Real.sqrt 2 - 1 > 0"),              # radicand 2 > 0: no guard needed
    (r"\tan(\pi/4) = 1", "Real.tan (Real.pi / 4) = 1"),        # sympy: cos(pi/4) = sqrt(2)/2 ≠ 0
    (r"\ln(\sqrt{2} - 1) < 0", "Real.log (Real.sqrt 2 - 1) < 0"),  # sqrt(2) - 1 ≈ 0.414 > 0
])
def test_closed_arguments_inside_their_domain_are_rendered_without_guards(text: str, conclusion: str) -> None:
    st = rendered(arith(text))
    assert st.conclusion == conclusion and st.hypotheses == ()


def test_substitutions_are_checked_at_the_established_values() -> None:
    # √(x - 9) at x = 5 is √(-4); log(x - 5) at x = 5 is log 0; tan(x) at x = π/2 ... stays with x = 0 fine
    bad = SubstitutionObligation(**BASE, claim=rel(r"\sqrt{x - 9} = 0"), env={"x": Fraction(5)})
    assert "√(x - 9) has no real value" in refused(bad)
    assert "has no real value" in refused(SubstitutionObligation(**BASE, claim=rel(r"\ln(x - 5) = 0"),
                                                                 env={"x": Fraction(5)}))
    assert "division by zero" in refused(SubstitutionObligation(**BASE, claim=rel(r"\frac{3}{x - 2} = 0"),
                                                               env={"x": Fraction(2)}))
    good = rendered(SubstitutionObligation(**BASE, claim=rel(r"\sqrt{x - 1} = 2"), env={"x": Fraction(5)}))
    assert good.hypotheses == (("hx", "x = 5"),)  # decided at x = 5: no domain hypothesis left
    assert "has no real value" in refused(SolutionObligation(**BASE, equations=(rel(r"\sqrt{x} = 0"),),
                                                             values={"x": Fraction(-4)}))


def test_variable_tangent_gets_its_cosine_guard() -> None:
    st = rendered(ident(r"\tan(x) = \frac{\sin(x)}{\cos(x)}"))
    assert ("hd1", "Real.cos x ≠ 0") in st.hypotheses


@pytest.mark.parametrize("text", [
    r"\frac{1}{x - x} = 0",            # x - x ≠ 0: never
    r"\sqrt{-x^2 - 1} = 0",            # 0 ≤ -x² - 1: never
    r"\ln(-(x^2)) = 0",                # 0 < -x²: never
])
def test_an_unsatisfiable_guard_is_refused_never_a_vacuous_statement(text: str) -> None:
    assert "vacuously true" in refused(ident(text))


def test_guards_must_hold_together_with_the_premises() -> None:
    # 2x = 10 forces x = 5, where x - 5 ≠ 0 fails: the statement would be vacuous
    vacuous = DerivationObligation(**BASE, premises=(rel("2x = 10"),), claim=rel(r"\frac{1}{x - 5} = 3"))
    assert "vacuously true" in refused(vacuous)
    fine = rendered(DerivationObligation(**BASE, premises=(rel("2x = 12"),), claim=rel(r"\frac{1}{x - 5} = 1")))
    assert [p for _, p in fine.hypotheses] == ["2 * x = 12", "x - 5 ≠ 0"]


def test_closed_sign_is_exact_where_it_can_be_and_refuses_near_zero() -> None:
    assert closed_sign(BinOp("-", num(3), num(7))) == -1
    assert closed_sign(Var("x"), {"x": Fraction(-1, 3)}) == -1
    assert closed_sign(BinOp("-", Const("pi"), num(3))) == 1
    with pytest.raises(Undecided, match="zero or too close"):
        closed_sign(Call("cos", (BinOp("/", Const("pi"), num(2)),)))
    with pytest.raises(Undecided, match="no real value"):
        closed_sign(Call("sqrt", (num(-4),)))
    tiny = BinOp("-", BinOp("+", num(1), Num(Fraction(1, 10**12), "1e-12", 12)), num(1))
    assert closed_sign(tiny) == 1  # exact: 10^-12 is rational, no double is consulted
    near = BinOp("-", Call("sqrt", (num(2),)), Num(Fraction(14142135623731, 10**13), "1.4142135623731", 13))
    assert abs(2 ** 0.5 - 1.4142135623731) < MARGIN
    # closer to zero than doubles can tell, but an interval enclosure proves it (√2 = 1.41421356237309504…)
    assert closed_sign(near) == -1
    # a double evaluation gives +16 for this one; the enclosure gives its true sign (the value is −0.1198…)
    big = BinOp("-", BinOp("*", Call("sqrt", (num(2),)), num(10**17)), num(141421356237309505))
    assert closed_sign(big) == -1


def test_satisfiable_finds_points_and_says_no_where_there_are_none() -> None:
    x = Var("x")
    assert satisfiable([], [guard(BinOp("-", x, num(3)), "!=")])
    assert not satisfiable([], [guard(BinOp("-", x, x), "!=")])
    assert satisfiable([rel("x = 7")], [guard(BinOp("-", x, num(3)), ">")])
    assert not satisfiable([rel("x = 7")], [guard(BinOp("-", x, num(7)), "!=")])
    assert satisfiable([], [])  # no guard: nothing to satisfy


@pytest.mark.parametrize(("claim", "why"), [
    (rel(r"(-8)^{\frac{1}{3}} = -2"), "not a natural number"),        # Real.rpow (-8) (1/3) is not -2
    (rel(r"\sqrt[3]{-8} = -2"), "other than the square root"),
    (rel(r"17 \bmod 0 = 17"), "mod by zero"),                          # Lean: 17 % 0 = 17
    (Rel(Call("arcsin", (num(2),)), "=", num(1)), "no Lean counterpart"),  # sympy: asin(2) is complex
    (Rel(Call("arccos", (num(2),)), "=", num(0)), "no Lean counterpart"),
])
def test_the_other_functions_with_domains_are_refused(claim: Rel, why: str) -> None:
    assert why in refused(ArithmeticObligation(**BASE, claim=claim))
