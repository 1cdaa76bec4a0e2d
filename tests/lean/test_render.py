"""Obligations rendered as Lean 4 statements.

The expected texts are golden strings written by hand from Lean 4 syntax: ``binop%`` typing
(one ascription fixes a closed side), ``^`` with natural exponents, ``¬``/``∧``/``∨``
precedences, ``|x|`` with no inner spaces (Mathlib's ``noWs``)."""

from fractions import Fraction

import pytest
from faithsieve.lean.render import (
    MAX_CHARS,
    LeanStatement,
    Unrenderable,
    render,
    sanitize,
)
from faithsieve.obligations.kinds.models import (
    ArithmeticObligation,
    CoverageObligation,
    DerivationObligation,
    IdentityObligation,
    SolutionObligation,
    SubstitutionObligation,
)

from faithsieve.mathtext import extract_formulas
from faithsieve.mathtext.ast import BinOp, Call, Const, Neg, Num, Pow, Rel, Var

BASE = {"id": "o0", "step": 1, "span": (0, 1), "edge": "e0", "source": ""}


def rel(text: str, link: int = 0) -> Rel:
    a, op, b = extract_formulas(text)[0].chain.links()[link]
    return Rel(a, op, b)


def num(v: int) -> Num:
    return Num(Fraction(v), str(v), 0)


def arith(text: str, **kw: object) -> ArithmeticObligation:
    return ArithmeticObligation(**BASE, claim=rel(text), **kw)


def ident(text: str, asserted: bool = True) -> IdentityObligation:
    return IdentityObligation(**BASE, claim=rel(text), asserted_identity=asserted)


def parity_cover(parity: tuple[str, ...], constraints: tuple[Rel, ...] = ()) -> CoverageObligation:
    return CoverageObligation(**BASE, variable="n", cases=parity, parity=parity, case_sizes=tuple(0 for _ in parity),
                              domain="integer", domain_constraints=constraints)


CORE_RAT_LEAN = "v4.24.0"
"""A toolchain whose prelude has ``Rat`` (core statements over ``Rat`` are refused on older ones)."""


def header(ob, flavour: str = "mathlib", lean_version: str | None = CORE_RAT_LEAN) -> str:
    st = render(ob, flavour, lean_version)
    assert isinstance(st, LeanStatement), st
    return st.text()


def refused(ob, flavour: str = "mathlib", lean_version: str | None = CORE_RAT_LEAN) -> str:
    st = render(ob, flavour, lean_version)
    assert isinstance(st, Unrenderable), st
    return st.reason


SUBST = SubstitutionObligation(**BASE, claim=rel("3x + 1 = 16"), env={"x": Fraction(5)})
DERIV = DerivationObligation(**BASE, premises=(rel("2x + 3 = 11"),), claim=rel("x = 4"))
SOLUTION = SolutionObligation(**BASE, equations=(rel("2x + y = 7"), rel("x - y = -1")),
                              values={"x": Fraction(2), "y": Fraction(3)})
PARITY = parity_cover(("even", "odd"), (rel("n > 0"),))

# one obligation of each type, both flavours
KINDS = [
    (arith("12 × 15 - 200 = -20"),
     "theorem fs_arith_o0 : (12 * 15 - 200 : ℤ) = -20",
     "theorem fs_arith_o0 : (12 * 15 - 200 : Int) = -20"),
    (ident(r"\( (x+3)^2 = x^2 + 6x + 9 \)"),
     "theorem fs_ident_o0 (x : ℚ) : (x + 3) ^ 2 = x ^ 2 + 6 * x + 9",
     "theorem fs_ident_o0 (x : Rat) : (x + 3) ^ 2 = x ^ 2 + 6 * x + 9"),
    (SUBST,
     "theorem fs_subst_o0 (x : ℤ) (hx : x = 5) : 3 * x + 1 = 16",
     "theorem fs_subst_o0 (x : Int) (hx : x = 5) : 3 * x + 1 = 16"),
    (DERIV,
     "theorem fs_deriv_o0 (x : ℝ) (h1 : 2 * x + 3 = 11) : x = 4",
     "theorem fs_deriv_o0 (x : Rat) (h1 : 2 * x + 3 = 11) : x = 4"),
    (SOLUTION,
     "theorem fs_sol_o0 : (2 * 2 + 3 : ℤ) = 7 ∧ (2 - 3 : ℤ) = -1",
     "theorem fs_sol_o0 : (2 * 2 + 3 : Int) = 7 ∧ (2 - 3 : Int) = -1"),
    (PARITY,
     "theorem fs_cover_o0 (n : ℤ) (h1 : n > 0) : Even n ∨ Odd n",
     "theorem fs_cover_o0 (n : Int) (h1 : n > 0) : n % 2 = 0 ∨ n % 2 = 1"),
]


@pytest.mark.parametrize(("ob", "mathlib", "core"), KINDS, ids=[k[0].kind.value for k in KINDS])
def test_each_kind_in_both_flavours(ob, mathlib: str, core: str) -> None:
    assert header(ob, "mathlib") == mathlib
    assert header(ob, "core") == core


def test_theorem_snippet() -> None:
    ob = arith("2 + 3 = 5")
    m, c = render(ob, "mathlib"), render(ob, "core", CORE_RAT_LEAN)
    assert isinstance(m, LeanStatement) and isinstance(c, LeanStatement)
    assert m.theorem() == "import Mathlib\n\ntheorem fs_arith_o0 : (2 + 3 : ℤ) = 5 := sorry\n"
    assert c.theorem("by decide") == "theorem fs_arith_o0 : (2 + 3 : Int) = 5 := by decide\n"
    assert m.theorem("by\n  norm_num\n") == "import Mathlib\n\ntheorem fs_arith_o0 : (2 + 3 : ℤ) = 5 := by\n  norm_num\n"
    assert m.imports == ("Mathlib",) and c.imports == ()


@pytest.mark.parametrize(
    ("ob", "expected"),
    [
        (arith("7 / 2 = 3"), "theorem fs_arith_o0 : (7 / 2 : ℚ) = 3"),
        (arith("2.5 * 4 / 2 = 5"), "theorem fs_arith_o0 : ((25 / 10) * 4 / 2 : ℚ) = 5"),
        (arith("25% of 80 = 20"), "theorem fs_arith_o0 : ((25 / 100) * 80 : ℚ) = 20"),
        (arith("0.1 + 0.2 = 0.3"), "theorem fs_arith_o0 : (1 / 10 + 2 / 10 : ℚ) = 3 / 10"),
        (arith(r"\( -2^2 = -4 \)"), "theorem fs_arith_o0 : (-(2 ^ 2) : ℤ) = -4"),
        (arith(r"\( (-2)^2 - -3 = 7 \)"), "theorem fs_arith_o0 : ((-2) ^ 2 - (-3) : ℤ) = 7"),
        (arith(r"\( 10 - (3 - 2) = 9 \)"), "theorem fs_arith_o0 : (10 - (3 - 2) : ℤ) = 9"),
        (ArithmeticObligation(**BASE, claim=Rel(BinOp("*", num(2), BinOp("mod", num(7), num(3))), "=", num(2))),
         "theorem fs_arith_o0 : (2 * (7 % 3) : ℤ) = 2"),
        (arith(r"\( \binom{6}{2} + 5! = 135 \)"),
         "theorem fs_arith_o0 : (Nat.choose 6 2 : ℤ) + (Nat.factorial 5 : ℤ) = 135"),
        (arith(r"\( |2 - 5| = 3 \)"), "theorem fs_arith_o0 : |(2 - 5 : ℤ)| = 3"),
        (arith(r"\( \lfloor 7/2 \rfloor = 3 \)"), "theorem fs_arith_o0 : (⌊(7 / 2 : ℚ)⌋ : ℚ) = 3"),
        (arith(r"\( \sqrt{8} = 2\sqrt{2} \)"), "theorem fs_arith_o0 : Real.sqrt 8 = 2 * Real.sqrt 2"),
        (arith(r"\( \cos 60^\circ = \frac12 \)"), "theorem fs_arith_o0 : Real.cos (60 * Real.pi / 180) = 1 / 2"),
        (arith(r"\( \log_2 8 = 3 \)"), "theorem fs_arith_o0 : Real.logb 2 8 = 3"),
        (ArithmeticObligation(**BASE, claim=Rel(Pow(Const("e"), num(2)), ">", num(7))),
         "theorem fs_arith_o0 : (Real.exp 1) ^ 2 > 7"),
        (arith("2^100 > 10^30"), "theorem fs_arith_o0 : (2 ^ 100 : ℤ) > 10 ^ 30"),
    ],
)
def test_closed_arithmetic(ob, expected: str) -> None:
    assert header(ob) == expected


def test_core_helpers_without_mathlib() -> None:
    assert header(arith(r"\( |2 - 5| = 3 \)"), "core") == (
        "theorem fs_arith_o0 : (if (2 - 5 : Int) < 0 then -(2 - 5 : Int) else (2 - 5 : Int)) = 3")
    assert header(arith(r"\( \lfloor 7/2 \rfloor = 3 \)"), "core") == (
        "theorem fs_arith_o0 : (Rat.floor (7 / 2 : Rat) : Rat) = 3")
    assert header(ident(r"\( |x + 1| = |1 + x| \)"), "core") == (
        "theorem fs_ident_o0 (x : Rat) : (if (x + 1) < 0 then -(x + 1) else (x + 1))"
        " = (if (1 + x) < 0 then -(1 + x) else (1 + x))")


@pytest.mark.parametrize("flavour", ["mathlib", "core"])
@pytest.mark.parametrize(
    "ob",
    [
        arith("2 - 5 = -3"),
        arith("5 - 2 = 3"),
        arith("10 / 4 = 2.5"),
        SubstitutionObligation(**BASE, claim=rel("x - 7 = -2"), env={"x": Fraction(5)}),
        SolutionObligation(**BASE, equations=(rel("x - 9 = 1"),), values={"x": Fraction(10)}),
        DerivationObligation(**BASE, premises=(rel("n - 3 = 4"),), claim=rel("n = 7"), integer_vars=("n",)),
        parity_cover(("mod 3 0", "mod 3 1", "mod 3 2"), (rel("n >= 0"),)),
    ],
)
def test_never_natural_subtraction(ob, flavour: str) -> None:
    st = render(ob, flavour, CORE_RAT_LEAN)
    assert isinstance(st, LeanStatement), st
    text = st.theorem()
    assert "ℕ" not in text and "Nat" not in text  # truncated subtraction can never decide a claim


def test_integer_variables_meet_division_in_q() -> None:
    # (2 n = 7 over an integer n has no point: refused as vacuous, test_unsatisfiable_premises_are_refused)
    ob = DerivationObligation(**BASE, premises=(rel("2n = 6"),), claim=rel("n = 3.5"), integer_vars=("n",))
    assert header(ob) == "theorem fs_deriv_o0 (n : ℤ) (h1 : 2 * (n : ℚ) = 6) : (n : ℚ) = 35 / 10"
    assert header(ob, "core") == "theorem fs_deriv_o0 (n : Int) (h1 : 2 * (n : Rat) = 6) : (n : Rat) = 35 / 10"
    ints = DerivationObligation(**BASE, premises=(rel("n + 1 = 4"),), claim=rel("n = 3"), integer_vars=("n",))
    assert header(ints) == "theorem fs_deriv_o0 (n : ℤ) (h1 : n + 1 = 4) : n = 3"


def test_domain_hypotheses_make_total_functions_explicit() -> None:
    assert header(ident(r"\( \frac{x^2 - 1}{x - 1} = x + 1 \)")) == (
        "theorem fs_ident_o0 (x : ℚ) (hd1 : x - 1 ≠ 0) : (x ^ 2 - 1) / (x - 1) = x + 1")
    assert header(ident(r"\( \sqrt{x^2} = x \)")) == (
        "theorem fs_ident_o0 (x : ℝ) (hd1 : 0 ≤ x ^ 2) : Real.sqrt (x ^ 2) = x")
    ob = DerivationObligation(**BASE, premises=(rel(r"\( x y = 6 \)"),), claim=rel(r"\( x = 6/y \)"))
    assert header(ob) == "theorem fs_deriv_o0 (x : ℝ) (y : ℝ) (h1 : x * y = 6) (hd1 : y ≠ 0) : x = 6 / y"
    # the established values fix the variables: no domain hypothesis, and a zero denominator is refused
    sub = SubstitutionObligation(**BASE, claim=rel("12 / x = 4"), env={"x": Fraction(3)})
    assert header(sub) == "theorem fs_subst_o0 (x : ℚ) (hx : x = 3) : 12 / x = 4"
    zero = SubstitutionObligation(**BASE, claim=rel("1 / (x - 5) = 1"), env={"x": Fraction(5)})
    assert "division by zero" in refused(zero)


def test_values_as_literals() -> None:
    sub = SubstitutionObligation(**BASE, claim=rel("x / 2 + y = 1"), env={"x": Fraction(-3), "y": Fraction(5, 2)})
    assert header(sub) == "theorem fs_subst_o0 (x : ℚ) (y : ℚ) (hx : x = -3) (hy : y = 5 / 2) : x / 2 + y = 1"
    half = SolutionObligation(**BASE, equations=(rel("2x = 5"),), values={"x": Fraction(5, 2)})
    assert header(half) == "theorem fs_sol_o0 : (2 * (5 / 2) : ℚ) = 5"
    neg = SolutionObligation(**BASE, equations=(rel("x^2 + x = 6"),), values={"x": Fraction(-3)})
    assert header(neg) == "theorem fs_sol_o0 : ((-3) ^ 2 + (-3) : ℤ) = 6"


def test_coverage_forms() -> None:
    real = CoverageObligation(**BASE, variable="x", cases=("0 < x < 1", "x >= 1", "x <= 0"),
                              conditions=(rel("0 < x < 1"), rel("0 < x < 1", 1), rel("x >= 1"), rel("x <= 0")),
                              case_sizes=(2, 1, 1), parity=("", "", ""), domain="real")
    assert header(real) == "theorem fs_cover_o0 (x : ℝ) : (0 < x ∧ x < 1) ∨ x ≥ 1 ∨ x ≤ 0"
    assert header(real, "core") == "theorem fs_cover_o0 (x : Rat) : (0 < x ∧ x < 1) ∨ x ≥ 1 ∨ x ≤ 0"
    mod3 = parity_cover(("mod 3 0", "mod 3 1", "mod 3 2"))
    assert header(mod3) == "theorem fs_cover_o0 (n : ℤ) : n % 3 = 0 ∨ n % 3 = 1 ∨ n % 3 = 2"


@pytest.mark.parametrize(
    "ob",
    [
        arith("100 / 3 = 33.33", approx=True),
        arith(r"\( \sqrt{2} \approx 1.414 \)"),
        arith("12 × 15 = 180", rounded=("180",)),
        SubstitutionObligation(**BASE, claim=rel("x / 3 = 1.67"), env={"x": Fraction(5)}, approx=True),
        SolutionObligation(**BASE, equations=(rel("3x = 1"),), values={"x": Fraction(333, 1000)}, approx=True,
                           decimals=3),
    ],
)
def test_approximate_claims_are_unrenderable(ob) -> None:
    assert "approximate" in refused(ob) or "rounded" in refused(ob)


@pytest.mark.parametrize(
    ("ob", "flavour", "words"),
    [
        (arith(r"\( \sqrt{8} = 2\sqrt{2} \)"), "core", "Mathlib"),
        (arith("5! = 120"), "core", "Mathlib"),
        (arith(r"\( \binom{6}{2} = 15 \)"), "core", "Mathlib"),
        (arith(r"\( \log 100 = 2 \)"), "mathlib", "ambiguous"),
        (arith("f(3) = 3"), "mathlib", "function f"),
        (ArithmeticObligation(**BASE, claim=Rel(Const("i"), "=", num(1))), "mathlib", "constant i"),
        (arith(r"\( 2^{-1} = 1/2 \)"), "mathlib", "natural number"),
        (arith(r"\( 4^{1/2} = 2 \)"), "mathlib", "natural number"),
        (arith(r"\( \sqrt[3]{27} = 3 \)"), "mathlib", "root"),
        (arith("1 / 0 = 0"), "mathlib", "division by zero"),
        (arith("7.5 mod 2 = 1.5"), "mathlib", "mod"),
        (ident(r"\( x^n = x \cdot x^{n-1} \)"), "mathlib", "exponent with variables"),
        (DerivationObligation(**BASE, premises=(rel("x^2 = 2"),), claim=rel("x > 1")), "core", "nonlinear"),
        (ident(r"\( \lfloor x \rfloor = x \)"), "core", "Mathlib"),
        (CoverageObligation(**BASE, variable="x", cases=("even", "odd"), parity=("even", "odd"), case_sizes=(0, 0),
                            domain="real"), "mathlib", "residue"),
        (SolutionObligation(**BASE, equations=(rel("x + y = 3"),), values={"x": Fraction(1)}), "mathlib", "no claimed"),
        (ArithmeticObligation(**BASE, claim=rel("x + 1 = 2")), "mathlib", "free variable"),
    ],
)
def test_unrenderable(ob, flavour: str, words: str) -> None:
    assert words in refused(ob, flavour)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [("x", "x"), ("x_1", "x_1"), ("θ_2", "theta_2"), ("α", "alpha"), ("λ", "lam"), ("fun", "fun_"), ("at", "at_"),
     ("by", "by_"), ("Type", "Type_"), ("x'", "x'"), ("1x", "v1x"), ("_", "v"), ("a b", "a_b"), ("exp", "exp")],
)
def test_sanitize(raw: str, clean: str) -> None:
    assert sanitize(raw) == clean


def test_identifiers_sanitised_in_statements() -> None:
    ob = IdentityObligation(**BASE, claim=Rel(BinOp("+", Var("fun"), Var("λ")), "=", BinOp("+", Var("λ"), Var("fun"))),
                            asserted_identity=True)
    assert header(ob) == "theorem fs_ident_o0 (fun_ : ℚ) (lam : ℚ) : fun_ + lam = lam + fun_"
    clash = IdentityObligation(**BASE, claim=Rel(Var("a b"), "=", Var("a_b")), asserted_identity=True)
    assert header(clash) == "theorem fs_ident_o0 (a_b : ℚ) (a_b' : ℚ) : a_b = a_b'"
    dotted = ArithmeticObligation(**{**BASE, "id": "u3.o1"}, claim=rel("1 + 1 = 2"))
    assert header(dotted) == "theorem fs_arith_u3_o1 : (1 + 1 : ℤ) = 2"


def test_negation_and_refutation_forms() -> None:
    closed = render(arith("2 + 2 = 5"))
    assert isinstance(closed, LeanStatement)
    assert closed.negation().text() == "theorem fs_arith_o0_neg : ¬ ((2 + 2 : ℤ) = 5)"
    assert closed.refutation() == closed.negation()
    sub = render(SUBST)
    assert isinstance(sub, LeanStatement)
    assert sub.negation().text() == "theorem fs_subst_o0_neg : ∃ (x : ℤ), x = 5 ∧ ¬ (3 * x + 1 = 16)"
    cover = render(PARITY)
    assert isinstance(cover, LeanStatement)
    assert cover.negation().text() == "theorem fs_cover_o0_neg : ∃ (n : ℤ), n > 0 ∧ ¬ (Even n ∨ Odd n)"
    ident_st = render(ident(r"\( (x+3)^2 = x^2 + 9 \)"))
    assert isinstance(ident_st, LeanStatement)
    assert ident_st.negation().text() == "theorem fs_ident_o0_neg : ∃ (x : ℚ), ¬ ((x + 3) ^ 2 = x ^ 2 + 9)"
    # a derivation is refuted by contradicting its premises, not by failing to follow from them
    deriv = render(DERIV)
    assert isinstance(deriv, LeanStatement) and deriv.refute == "contradiction"
    assert deriv.negation().text() == "theorem fs_deriv_o0_neg : ∃ (x : ℝ), 2 * x + 3 = 11 ∧ ¬ (x = 4)"
    ref = deriv.refutation()
    assert ref is not None and ref.text() == "theorem fs_deriv_o0_contra (x : ℝ) (h1 : 2 * x + 3 = 11) : ¬ (x = 4)"
    # an equation not asserted as an identity: nothing Lean proves refutes it
    loose = render(ident(r"\( (x+3)^2 = x^2 + 9 \)", asserted=False))
    assert isinstance(loose, LeanStatement) and loose.refute == "none" and loose.refutation() is None and loose.notes
    both = render(SOLUTION)
    assert isinstance(both, LeanStatement)
    assert both.negation().text() == "theorem fs_sol_o0_neg : ¬ ((2 * 2 + 3 : ℤ) = 7 ∧ (2 - 3 : ℤ) = -1)"


def test_size_bounds() -> None:
    deep = num(1)
    for _ in range(60):
        deep = BinOp("+", deep, num(1))
    assert "too large" in refused(ArithmeticObligation(**BASE, claim=Rel(deep, "=", num(61))))
    nested = num(1)
    for _ in range(50):
        nested = Neg(nested)
    assert "too large" in refused(ArithmeticObligation(**BASE, claim=Rel(nested, "=", num(1))))
    huge = Num(Fraction(10**2000), "1" + "0" * 2000, 0)
    assert "too large" in refused(ArithmeticObligation(**BASE, claim=Rel(huge, ">", num(1))))
    big = Num(Fraction(7**1000), str(7**1000), 0)  # 846 digits: one literal is fine, ten are not
    one = render(ArithmeticObligation(**BASE, claim=Rel(big, ">", num(1))))
    assert isinstance(one, LeanStatement) and len(one.theorem()) < MAX_CHARS
    total = big
    for _ in range(9):
        total = BinOp("+", total, big)
    assert "longer than" in refused(ArithmeticObligation(**BASE, claim=Rel(total, ">", num(1))))
    assert "exponent too large" in refused(ArithmeticObligation(**BASE, claim=Rel(Pow(num(2), num(10**6)), ">", num(1))))
    assert "natural-number literal" in refused(ArithmeticObligation(
        **BASE, claim=Rel(Call("factorial", (num(5000),)), ">", num(1))))


def test_nested_absolute_values_are_parenthesised() -> None:
    x = Var("x")
    inner = BinOp("-", Call("abs", (x,)), num(1))
    st = render(IdentityObligation(**BASE, claim=Rel(Call("abs", (inner,)), ">=", num(0)), asserted_identity=True))
    assert isinstance(st, LeanStatement)
    assert st.conclusion == "|(|x| - 1)| ≥ 0"  # `||x| - 1|` would parse `||` as boolean or
    assert "||" not in st.theorem()
    flat = render(IdentityObligation(**BASE, claim=Rel(Call("abs", (BinOp("-", x, num(1)),)), ">=", num(0)),
                                     asserted_identity=True))
    assert isinstance(flat, LeanStatement) and flat.conclusion == "|x - 1| ≥ 0"


@pytest.mark.parametrize(("version", "ok"), [("v4.24.0", True), ("v4.25.1", True), ("4.24.0-rc1", True),
                                             ("v4.23.0", False), ("v4.19.0", False), (None, False)])
def test_core_rat_is_gated_on_the_lean_version(version: str | None, ok: bool) -> None:
    st = render(arith("10 / 4 = 2.5"), "core", version)
    if ok:
        assert isinstance(st, LeanStatement) and st.text() == "theorem fs_arith_o0 : (10 / 4 : Rat) = 25 / 10"
    else:
        assert isinstance(st, Unrenderable) and "v4.24.0" in st.reason
        assert ("not known" in st.reason) if version is None else (version in st.reason)
    ints = render(arith("2 - 5 = -3"), "core", version)  # Int needs no gate
    assert isinstance(ints, LeanStatement)


# --- issue 39: signs by interval arithmetic, ℝ for strict relations and ≠, premises satisfiable ---

def _refused(ob, flavour: str = "mathlib") -> str:
    st = render(ob, flavour, CORE_RAT_LEAN)
    assert isinstance(st, Unrenderable), st.text()
    return st.reason


def test_signs_near_zero_are_decided_by_intervals_not_doubles() -> None:
    # √2·10^17 − 141421356237309505 = −0.1198…; double evaluation says +16, which rendered a theorem
    # that Real.sqrt's junk value (0) makes true
    why = _refused(arith(r"\sqrt{\sqrt{2} \cdot 100000000000000000 - 141421356237309505} = 0"))
    assert "radicand is negative" in why
    # 10^16 π + π/2 is a zero of the cosine: no enclosure excludes 0, so no sign, so no statement
    why = _refused(arith(r"\tan(10000000000000000 \pi + \pi/2) = 0"))
    assert "tan(" in why and "contains 0" in why
    # a positive radicand just as close to the boundary is still rendered: the enclosure proves its sign
    assert header(arith(r"\sqrt{\sqrt{2} \cdot 100000000000000000 - 141421356237309504} = 0")).startswith(
        "theorem fs_arith_o0 : Real.sqrt (Real.sqrt 2 * 100000000000000000 - 141421356237309504) = 0")


def test_strict_relations_and_not_equal_range_over_the_reals() -> None:
    # true over ℚ (no rational square root of 2), false over ℝ: the refutation must be provable
    assert header(ident("x^2 \\neq 2")) == "theorem fs_ident_o0 (x : ℝ) : x ^ 2 ≠ 2"
    assert header(ident("(x^2 - 2)^2 > 0")) == "theorem fs_ident_o0 (x : ℝ) : (x ^ 2 - 2) ^ 2 > 0"
    assert "over ℝ" in _refused(ident("x^2 \\neq 2"), "core")
    # =, ≤, ≥ and linear relations agree on ℚ and ℝ: they stay over ℚ
    assert header(ident("x^2 + 1 \\geq 2x")) == "theorem fs_ident_o0 (x : ℚ) : x ^ 2 + 1 ≥ 2 * x"
    assert header(ident("x + 1 > x")) == "theorem fs_ident_o0 (x : ℚ) : x + 1 > x"


def test_unsatisfiable_premises_are_refused() -> None:
    vacuous = DerivationObligation(**BASE, premises=(rel("2n = 7"),), claim=rel("n = 5"), integer_vars=("n",))
    assert "premises hold" in _refused(vacuous)
    # premises met only at irrational points are satisfiable (decided by Sturm sign tables, not a grid)
    irrational = DerivationObligation(**BASE, premises=(rel("x^2 = 2"),), claim=rel("x^4 = 4"))
    assert header(irrational) == "theorem fs_deriv_o0 (x : ℝ) (h1 : x ^ 2 = 2) : x ^ 4 = 4"
    real_none = DerivationObligation(**BASE, premises=(rel("x^2 = -1"),), claim=rel("x = 5"))
    assert "premises hold" in _refused(real_none)


def test_a_sole_value_that_drops_a_root_is_not_rendered_as_a_root_check() -> None:
    sole = SolutionObligation(**BASE, equations=(rel("x^2 = 9"),), values={"x": Fraction(3)}, sole=True)
    assert "drops the real root(s) x = -3" in _refused(sole)
    one_of = SolutionObligation(**BASE, equations=(rel("x^2 = 9"),), values={"x": Fraction(3)})
    assert header(one_of) == "theorem fs_sol_o0 : (3 ^ 2 : ℤ) = 9"


def test_a_sole_value_that_is_no_root_stays_refutable() -> None:
    wrong = SolutionObligation(**BASE, equations=(rel("16 + x = 27"),), values={"x": Fraction(8)}, sole=True)
    assert header(wrong) == "theorem fs_sol_o0 : (16 + 8 : ℤ) = 27"


def test_premises_met_only_at_irrational_or_unnamed_points_are_satisfiable() -> None:
    degrees = DerivationObligation(**BASE, premises=(rel(r"x + x + 50^\circ = 180^\circ"),), claim=rel("2x = 130"))
    assert isinstance(render(degrees), LeanStatement)  # x = 65 (degrees): a sign change along x shows a root
    irrational = DerivationObligation(**BASE, premises=(rel(r"b - a + \frac{1}{2} < \sqrt{\frac{1}{2}}"),),
                                      claim=rel(r"b - a < 1"))
    assert isinstance(render(irrational), LeanStatement)  # the inequality's sign proved by intervals at a point
    complex_only = DerivationObligation(**BASE, premises=(rel("b^2 + 2b + 2 = 0"),), claim=rel("(b + 1)^2 = -1"))
    assert "premises hold" in _refused(complex_only)
