"""The cheap decisions before solver state give exactly the outcomes the solvers give."""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

import pytest
from faithsieve.obligations.checkers import smt, symbolic
from faithsieve.obligations.checkers.portfolio import SympyChecker, Z3Checker
from faithsieve.obligations.checkers.smt import _Syms, _z3_rel
from faithsieve.obligations.kinds.models import (
    DerivationObligation,
    IdentityObligation,
    Unknown,
)
from faithsieve.obligations.procedures import fastpaths
from faithsieve.obligations.procedures.fastpaths import (
    MAX_FASTPATH_NESTING,
    OutsideSMT,
    outside_smt,
    polynomial_class,
)
from faithsieve.obligations.procedures.polynomials import MAX_TERMS, expand

from faithsieve.mathtext.ast import BinOp, Num, Pow, Rel, Var
from faithsieve.mathtext.formulas import extract_formulas

BASE: dict[str, Any] = {"id": "o0", "step": 1, "span": (0, 1), "edge": "e0", "source": ""}
LATER = float("inf")


def soon() -> float:
    return time.monotonic() + 60


def rel(text: str) -> Rel:
    a, op, b = extract_formulas(text)[0].chain.links()[0]
    return Rel(a, op, b)


def view(out: Any) -> dict[str, Any]:
    """What an outcome decides: its type and fields, except ``method``, which names the procedure that
    decided (a shortcut and the solver it stands in for give the same outcome under their own names)."""
    return {"type": type(out).__name__, **{k: v for k, v in asdict(out).items() if k != "method"}}


def outcome(check: Any, ob: Any) -> dict[str, Any]:
    try:
        return view(check(ob, soon()))
    except Exception as exc:  # noqa: BLE001 (the slow path raising is mirrored too)
        return {"raised": type(exc).__name__}


IDENTITIES = [
    "4x - 13 + 5 = 4x - 8", "x - x/3 = 2x/3", "(x+1)^2 = x^2 + 2x + 1", "(p+q)^3 = p^3 + 3*p^2*q + 3*p*q^2 + q^3",
    "51 = 3x", "x + x + 60 = 100", "x^3 - 1 = (x + 1)(x^2 - x + 1)", "x + 2 - 16 = x", "2(x + 3) = 2x + 5",
    "x/2 + 1/3 = (3x + 2)/6", "x/0 = 1", "x/(2 - 2) = x", "(x - x)^2 = 0", "x^0 = 1", "25% * x = x/4",
    "(x + 1)/(x + 1) = 1", "1/x = 2", "B/S = 5/6", "sqrt(x) = 2", "x^2 = x*x*1", "2^10 * x = 1024 * x",
    "(10^900)^20 * x = x", "x^24 = x^24 + 1", "3/4 * A = 3/4 * A", "(y - 3)(y + 3) = y^2 - 9 + 0.5",
    "x + 1/y = 5", "y = 1/(5 - x)", "x/x^2 = 1/x", "1/x = 0", "(x^2 - 1)/(x - 1) = 2", "(x^2 - 1)/(x - 1) = 3",
    "1/x + y = 1/x + 1/(5 - x)", "S = 7/(1 - r)", "x/(y - y) = 1", "2/(x - x) = x", "20% * x = y/4",
    "1/(x^2 + 1) = 0", "x/(x^2 + 1) = 0", "(x + 1)/(x + 2) = 3/5", "1/(x*y) = 2/(2*x*y)", "3/(x - 1)^2 = 0",
    "(x+1)*(x-3)/(5*(x+2)*(x-4)) + (x+3)*(x-5)/(9*(x+4)*(x-6)) = 92/585",
]


@pytest.mark.parametrize("asserted", [False, True])
@pytest.mark.parametrize("text", IDENTITIES)
def test_identity_fast_path_gives_the_sympy_outcome(text: str, asserted: bool, monkeypatch) -> None:
    ob = IdentityObligation(**BASE, claim=rel(text), asserted_identity=asserted)
    fast = SympyChecker().check(ob, LATER)
    monkeypatch.setattr(symbolic, "polynomial_class", lambda *a, **k: None)
    slow = SympyChecker().check(ob, LATER)
    assert view(fast) == view(slow)


def test_polynomial_class_reads_only_polynomials() -> None:
    assert polynomial_class(rel("(x+1)^2 = x^2 + 2x + 1").lhs, rel("(x+1)^2 = x^2 + 2x + 1").rhs) == "zero"
    r = rel("x + 2 = x + 3")
    assert polynomial_class(r.lhs, r.rhs) is None  # a nonzero constant: sympy writes the difference
    r = rel("1/x = 2")
    assert polynomial_class(r.lhs, r.rhs) is None
    r = rel("2x = 3")
    assert polynomial_class(r.lhs, r.rhs) == "nonconstant"


def test_numerator_root_is_checked_exactly() -> None:
    r = rel("B/S = 5/6")
    assert fastpaths.numerator_has_root(r.lhs, r.rhs)
    for text in ("1/x = 0", "(x^2 - 1)/(x - 1) = 2", "x/(y - y) = 1", "sqrt(x) = 2", "x^2 = -1"):
        r = rel(text)
        assert not fastpaths.numerator_has_root(r.lhs, r.rhs), text


def test_numerator_not_constant_needs_a_nonzero_difference() -> None:
    for text in ("x/(x^2 + 1) = 0", "(x + 1)/(x + 2) = 3/5"):
        r = rel(text)
        assert fastpaths.numerator_not_constant(r.lhs, r.rhs), text
    for text in ("1/(x^2 + 1) = 0", "3/(x - 1)^2 = 0", "1/(x*y) = 0", "2x = 3 + 2x"):
        r = rel(text)  # a number over a polynomial (or a constant): the form sympy may write
        assert not fastpaths.numerator_not_constant(r.lhs, r.rhs), text


def test_expand_bounds() -> None:
    x = Var("x")
    deep = x
    for _ in range(MAX_FASTPATH_NESTING + 1):
        deep = BinOp("+", deep, Num(1, "1", 0))  # type: ignore[arg-type]
    assert expand(deep) is None
    shallow = x
    for _ in range(MAX_FASTPATH_NESTING - 1):
        shallow = BinOp("+", shallow, Num(1, "1", 0))  # type: ignore[arg-type]
    assert expand(shallow) is not None
    many = BinOp("+", BinOp("+", Var("a"), Var("b")), BinOp("+", Var("c"), BinOp("+", Var("d"), Var("e"))))
    two = Num(2, "2", 0)
    assert expand(Pow(many, Num(24, "24", 0))) is None  # C(28, 4) = 20,475 monomials > MAX_TERMS
    assert len(expand(Pow(many, Num(4, "4", 0))) or {}) == 70  # C(8, 4)
    assert expand(Pow(x, Num(25, "25", 0))) is None  # over the degree cap
    assert expand(Pow(two, Num(3, "3", 0))) == {(): 8}
    assert MAX_TERMS == 4000
    level: list[Any] = [Var(f"x{i}") for i in range(256)]
    while len(level) > 1:  # a balanced sum of 256 variables (shallow)
        level = [BinOp("+", level[i], level[i + 1]) for i in range(0, len(level), 2)]
    wide = level[0]
    assert len(expand(wide) or {}) == 256
    assert expand(BinOp("*", wide, wide)) is None  # 256 × 256 products > MAX_PRODUCTS: not even formed
    block: Any = Pow(BinOp("+", Num(1, "1", 0), x), Num(24, "24", 0))
    for _ in range(3):  # (1 + x)^192 as a balanced product: 193 terms
        block = BinOp("*", block, block)
    assert len(expand(block) or {}) == 193
    # 193 × 193 = 37,249 products would give only 385 terms: the work bound, not the term cap, says no
    assert expand(BinOp("*", block, block)) is None


DERIVATIONS = [
    ("x + x + 60 = 100", "2x + 60 = 100", ()), ("2x = 100 - 60", "2x = 40", ()), ("9x - 21 = 339", "9x = 360", ()),
    ("10n + 10 <= 120", "10n <= 110", ("n",)), ("10n <= 110", "n <= 11", ("n",)), ("33 + T >= 40", "T >= 7", ()),
    ("x > 3", "x > 2", ()), ("x > 3", "x >= 3", ()), ("x >= 3", "x > 3", ()), ("x > 3", "x < 5", ()),
    ("x > 3", "2x > 6", ()), ("x < 3", "-x > -3", ()), ("x = 3", "x > 2", ()), ("x = 3", "x < 2", ()),
    ("x^2 = 3x + 1", "x^2 - 3x = 1", ()), ("x^2 = 3x + 1", "2x^2 - 6x = 2", ("x",)), ("6r^2 = 12r", "3r = 12", ()),
    ("28 + x = 2J", "x = 28 - 2J", ()), ("5b + 3a = 16", "a - 2b = 5", ()), ("x + 69 - 25 = x + 44", "x + 44 = 78", ()),
    ("x + 69 - 25 = x + 44", "x + 44 = 78", ("x",)), ("2 = 3", "x = 5", ()), ("2x = 1", "x = 5", ("x",)),
    ("x + 1 = x + 2", "y = 1", ()), ("2x + 4 = 10", "x + 2 = 5", ()), ("2x + 4 = 10", "x + 2 = 6", ()),
    ("4 * 2^n > 20", "2^n > 5", ()), ("x = 2", "x = 2 + 0 * y", ()), ("25% * x = 5", "x = 20", ()),
    ("x/2 = 3", "x = 6", ()), ("x/y = 3", "x = 3y", ()), ("3/6 = x/x", "1/2 = 1/x", ()), ("x = 5 mod 3", "x = 2", ()),
    ("x^13 = 1", "x = 1", ()), ("c + d = 7", "2c - 2d = -2", ()), ("c + d = 7", "2c + 2d = 14", ("c", "d")),
    # quotients read as opaque quantities
    ("x - 1/x = 3", "x = 1/x + 3", ()), ("-(1/x^2) + 1/(5-x)^2 = 0", "1/x^2 = 1/(5-x)^2", ()),
    ("2^2/a^2 - 12^2/b^2 = 1", "4/a^2 - 144/b^2 = 1", ()), ("(x + 1)/x >= 1/2", "(x + 1)/x - 1/2 >= 0", ()),
    ("(x^2 - 3)/(x + 2) = 2*x/(x^2 - 4)", "(x^2 - 3)/(x + 2) = 2*x/((x + 2)*(x - 2))", ()),
    ("(2*(x + 1) - x)/(2*x) >= 0", "(x + 2)/(2*x) >= 0", ()), ("(x+x)/y = 1", "2*x/y = 1", ()),
    ("x - 1/x = 3", "x = 1/x + 3", ("x",)), ("9*c*k = 8", "c = 8/(9*k)", ()), ("1/x > 2", "1/x + 1 > 2", ()),
    ("1/x > 2", "1/x > 3", ()), ("x/y + x/y = 4", "x/y = 2", ()), ("x/(y - y) = 1", "x/(y - y) = 1", ()),
    ("(1/x)^2 = 4", "2(1/x)^2 = 8", ()), ("x/0 = 1", "x/0 = 1", ()),
    # non-linear with integer variables (the solver decides these small ones: the same answer)
    ("x^2 = 4", "2x^2 = 8", ("x",)), ("n*(n + 1) = 30", "n^2 + n - 30 = 0", ("n",)),
    ("a*b >= 6", "2*a*b + 1 > 12", ("a", "b")), ("k^3 - k = 24", "k^3 = k + 24", ("k",)),
]


@pytest.mark.parametrize("premise,claim,ints", DERIVATIONS)
def test_derivation_fast_paths_give_the_z3_outcome(premise: str, claim: str, ints: tuple[str, ...], monkeypatch) -> None:
    ob = DerivationObligation(**BASE, premises=(rel(premise),), claim=rel(claim), integer_vars=ints)
    fast = outcome(Z3Checker().check, ob)
    monkeypatch.setattr(smt, "linear_derivation", lambda *a, **k: None)
    monkeypatch.setattr(smt, "quotient_derivation", lambda *a, **k: None)
    monkeypatch.setattr(smt, "outside_smt", lambda *a, **k: False)
    solver_only = Z3Checker()
    solver_only.witness_points = False
    slow = outcome(solver_only.check, ob)
    assert fast == slow


@pytest.mark.parametrize("text", ["x = 2^n", "x = sqrt(2)", "x = y^13", "x = y^12", "x ≈ 3", "x = abs(y) + 5%",
                                  "x = π", "x = 2^(1/2)", "x = 5 mod 3", "x != y", "x = y^(2 + 1)", "x = 2^x"])
def test_outside_smt_mirrors_the_translation(text: str) -> None:
    import z3

    r = rel(text)
    try:
        _z3_rel(r, _Syms(z3.Context()))
        stops = "translates"
    except OutsideSMT:
        stops = "outside"
    except Exception:  # noqa: BLE001
        stops = "other"
    assert outside_smt([r]) == (stops == "outside")


def test_no_context_is_made_for_a_derivation_outside_the_fragment(monkeypatch) -> None:
    import z3

    made = []
    real = z3.Context
    monkeypatch.setattr(z3, "Context", lambda *a, **k: made.append(1) or real(*a, **k))
    ob = DerivationObligation(**BASE, premises=(rel("4 * 2^n > 20"),), claim=rel("2^n > 5"))
    out = Z3Checker().check(ob, soon())
    assert isinstance(out, Unknown) and "outside the fragment" in out.reason
    assert made == []
    # a claim that contradicts the premise where it holds (x = ±2): the solver shows a counterexample
    ob = DerivationObligation(**BASE, premises=(rel("x^2 = 4"),), claim=rel("x = 1"))
    Z3Checker().check(ob, soon())
    assert made == [1]


def test_quotients_are_opaque_only_where_that_is_sound() -> None:
    q = fastpaths.quotient_derivation
    assert q(rel("x - 1/x = 3"), rel("x = 1/x + 3"), False) == "follows"
    assert q(rel("x - 1/x = 3"), rel("x = 1/x + 3"), True) is None  # integer variables: left to the solver
    assert q(rel("x = 3"), rel("2x = 6"), False) is None  # no quotient: linear_derivation's case
    assert q(rel("x/y = 3"), rel("x = 3y"), False) is None  # needs the divisor to be nonzero: not shown
    assert q(rel("1/x > 2"), rel("1/x > 3"), False) is None
    assert q(rel("1/x = 2"), rel("2/x = 4"), False) is None  # 2/0 and 1/0 need not be related
    a = expand(rel("2x/(x + 1) = 0").lhs, quotients=True)
    b = expand(rel("(x + x)/(1 + x) = 0").lhs, quotients=True)
    assert a == b and a is not None and all(v.startswith(fastpaths.QUOTIENT) for m in a for v, _ in m)
    assert expand(rel("x/(2 - 2) = 0").lhs, quotients=True) is None  # a zero divisor is not a quotient atom
    assert expand(rel("x/y = 0").lhs) is None  # only when asked for


def test_linear_derivation_is_undecided_for_what_it_cannot_show() -> None:
    assert fastpaths.linear_derivation(rel("x/y = 3"), rel("x = 3y"), False) is None
    # non-linear with integer variables: a rescaled premise is a proof over the reals, so over the integers
    assert fastpaths.linear_derivation(rel("x^2 = 4"), rel("2x^2 = 8"), True) == "follows"
    assert fastpaths.linear_derivation(rel("x^2 = 4"), rel("2x^2 = 9"), True) is None
    assert fastpaths.linear_derivation(rel("n^2 + n > 1"), rel("2n^2 + 2n > 1"), True) == "follows"
    assert fastpaths.linear_derivation(rel("n^2 + n > 1"), rel("-n^2 - n > -1"), True) is None
    assert fastpaths.linear_derivation(rel("2x = 1"), rel("x = 5"), True) is None  # integers: no independence
    assert fastpaths.linear_derivation(rel("x > 3"), rel("x = 3"), False) is None
