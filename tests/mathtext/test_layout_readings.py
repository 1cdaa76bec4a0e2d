"""Readings of how a proof lays its formulas out: a display on its own line belongs to the sentence that
introduces it (``Formula.lead_sentence``); the rows of an aligned chain share the first row's sentence
(``Formula.aligned``, ``Formula.opening``); a row ``v = N`` right after ``v = <computation>`` names the
computation's value (``extract._restated_value``); a numeral with its base written under it (``1202_7``)
is read in that base (``lexer._BASE_SUBSCRIPT``, ``parser._in_base``)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from faithsieve.core.proof import Proof, Step
from faithsieve.mathtext import extract_formulas, render_chain
from faithsieve.mathtext.ast import Num
from faithsieve.pipeline import localize


def _flag(text: str, problem: str = "Simplify the expression.") -> int | None:
    proof = Proof(problem=problem, steps=(Step(index=1, text="We compute."), Step(index=2, text=text)))
    return localize(proof).first_refutation


# -- a display on its own line ------------------------------------------------------------------------


def test_display_on_its_own_line_keeps_the_introducing_sentence() -> None:
    (f,) = extract_formulas("First, we factor the numerator and the denominator:\n\\[\n\\frac{x^2 - 1}{x - 1} = x + 1\n\\]")
    assert "factor the numerator" in f.lead_sentence


def test_a_full_stop_before_the_display_still_ends_the_sentence() -> None:
    (f,) = extract_formulas("We factor the numerator.\n\\[ x^2 - 1 = (x - 1)(x + 1) \\]")
    assert "factor" not in f.lead_sentence


@pytest.mark.parametrize(("rhs", "flag"), [
    # (x^3 - x^2 + x)/(6x^2 - 9x) is (x^2 - x + 1)/(3(2x - 3)) for x != 0
    ("\\frac{x^2 - x + 1}{3(2x - 3)}", None),
    ("\\frac{(x - 1)(x + 1)}{3(2x - 3)}", 2),
])
def test_a_factoring_display_on_its_own_line_is_a_rewriting(rhs: str, flag: int | None) -> None:
    text = f"First, let's factor the numerator and denominator: \n\\[\n\\frac{{x^3 - x^2 + x}}{{6x^2 - 9x}} = {rhs}\n\\]"
    assert _flag(text) == flag


def test_an_equation_rewritten_is_not_an_identity() -> None:
    # "This can be rewritten as": the relation before it restated, both sides changed (a true step)
    text = ("This can be rewritten as:\n\\[ \\frac{a + b + c + d}{4} = \\frac{4abcd}{bcd + acd + abd + abc}. \\]")
    assert _flag(text, "Solve (a+b+c+d)/4 = 4/(1/a+1/b+1/c+1/d).") is None


# -- aligned rows ---------------------------------------------------------------------------------------


def test_aligned_rows_carry_the_whole_chain_and_the_opening_sentence() -> None:
    fs = extract_formulas("Combining like terms: \\begin{align*} x + 2x + 3 &= 3x + 3 \\\\ &= 3(x + 1) \\end{align*}")
    assert [render_chain(f.chain) for f in fs] == ["x + 2 * x + 3 = 3 * x + 3", "3 * x + 3 = 3 * (x + 1)"]
    assert fs[1].aligned is not None and len(fs[1].aligned.exprs) == 3
    assert "Combining like terms" in fs[1].opening


@pytest.mark.parametrize(("row", "flag"), [("x^3 + (3x^2 - 3x^2) + 3x - 6", None), ("x^3 + (-x^2) + 3x - 6", 2)])
def test_a_false_row_of_an_aligned_rewriting_chain(row: str, flag: int | None) -> None:
    text = ("Combining like terms: \\begin{align*} x^2 + x^3 + 2x^2 - 3x^2 + 3x - 6 &= x^3 + (x^2 - 3x^2 + 2x^2) + 3x - 6 "
            f"\\\\ &= {row} \\\\ &= x^3 + 3x - 6 \\end{{align*}}")
    assert _flag(text) == flag


def test_aligned_equations_solved_row_by_row_stay_equations() -> None:
    text = "Simplifying: \\begin{align*} x^2 + 2x &= 3x \\\\ &= 9 \\end{align*}"
    assert _flag(text, "Solve x^2 + 2x = 3x.") is None


# -- a letter's value restated on the next row -------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("\\[ R = 2310 \\bmod 42 \\] \\[ R = 18 \\]", ["R = 2310 mod 42", "2310 mod 42 = 18"]),
    ("\\[ E = 6 - 6 + 1 \\] \\[ E = 1 \\]", ["E = 6 - 6 + 1", "6 - 6 + 1 = 1"]),
    # a value after a value, a root after a root, rows joined by words: separate claims
    ("\\[ x = 3 \\] \\[ x = -2 \\]", ["x = 3", "x = -2"]),
    ("\\[ x = \\frac{5 + 1}{2} \\] \\[ x = \\frac{5 - 1}{2} \\]", ["x = (5 + 1) / 2", "x = (5 - 1) / 2"]),
    ("\\( x = 2 + 3 \\) or \\( x = 4 \\)", ["x = 2 + 3", "x = 4"]),
    ("\\[ y = 2 + 3 \\] \\[ x = 4 \\]", ["y = 2 + 3", "x = 4"]),
])
def test_restated_value_rows(text: str, expected: list[str]) -> None:
    assert [render_chain(f.chain) for f in extract_formulas(text)] == expected


@pytest.mark.parametrize(("value", "flag"), [("0", None), ("18", 2)])
def test_a_restated_value_is_checked(value: str, flag: int | None) -> None:
    text = f"Now divide by 42 and find the remainder: \\[ R = 2310 \\bmod 42 \\] \\[ R = {value} \\]"
    assert _flag(text, "Find the remainder of 2310 divided by 42.") == flag


# -- numerals in a written base -----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "value"), [
    ("$1202_7 = 1$", Fraction(443)),  # 343 + 2*49 + 0*7 + 2
    ("$441_{10} = 1$", Fraction(441)),
    ("$101_2 = 1$", Fraction(5)),
    ("$0.1_2 = 1$", Fraction(1, 2)),
    ("$3.25_{10} = 1$", Fraction(13, 4)),
])
def test_a_numeral_in_a_written_base(text: str, value: Fraction) -> None:
    (f,) = extract_formulas(text)
    lhs = f.chain.exprs[0]
    assert isinstance(lhs, Num) and lhs.value == value


@pytest.mark.parametrize("text", ["$19_8 = 17$", "$a_1 = 2$", "$x_{10} = 5$", "$12_{11} = 13$"])
def test_what_is_no_numeral_in_a_base(text: str) -> None:
    # a digit at or above the base, a letter's index, a base above ten: not read as a numeral in a base
    for f in extract_formulas(text):
        assert not any(isinstance(e, Num) and "_" in e.text for e in f.chain.exprs)


@pytest.mark.parametrize(("rhs", "flag"), [("1201_7", None), ("1202_7", 2)])
def test_a_base_conversion_is_checked(rhs: str, flag: int | None) -> None:
    text = f"Reading the remainders in reverse order, we find that $442_{{10}} = {rhs}$."
    assert _flag(text, "Write 442 in base 7.") == flag


# -- one side of the relation before rewritten ---------------------------------------------------------------


@pytest.mark.parametrize(("text", "flag"), [
    # m^2 - 32 is not (m - 4)(m + 8) = m^2 + 4m - 32
    ("Thus \\(m^2 - 32 > 0\\), which implies \\((m - 4)(m + 8) > 0\\).", 2),
    ("Thus \\(m^2 - 16 > 0\\), which implies \\((m - 4)(m + 4) > 0\\).", None),
    # the common denominator of 1/(r-1) + 1/(r-4) has numerator (r - 4) + (r - 1)
    ("So \\(\\frac{1}{r} > \\frac{1}{r-1} + \\frac{1}{r-4}\\), hence \\(\\frac{1}{r} > \\frac{(r-4) + r}{(r-1)(r-4)}\\).", 2),
    ("So \\(\\frac{1}{r} > \\frac{1}{r-1} + \\frac{1}{r-4}\\), hence \\(\\frac{1}{r} > \\frac{(r-4) + (r-1)}{(r-1)(r-4)}\\).", None),
])
def test_one_side_rewritten_is_checked_as_an_identity(text: str, flag: int | None) -> None:
    assert _flag(text, "Solve the inequality.") == flag


@pytest.mark.parametrize("text", [
    # a factor of a product that is 0, both sides divided by a number, both sides squared
    "So \\(3n(n^2 - 4) = 0\\), and then \\(n^2 - 4 = 0\\).",
    "So \\(2x^2 - 10x + 12 = 0\\), which gives \\((x - 2)(x - 3) = 0\\).",
    "Since \\(w + \\frac{1}{w} = 1\\), we have \\((w + \\frac{1}{w})^2 = 1\\).",
    # an identity before it implies nothing; a fact of the problem used (xy = 19)
    "We have \\(2(p^2 + 2) = 2p^2 + 4\\). Equating the two expressions, \\(4p^2 + 2 = 2p^2 + 4\\).",
    "So \\(x^2 + y^2 + 2xy = 196\\), and with \\(xy = 19\\), \\(x^2 + y^2 + 38 = 196\\).",
])
def test_what_is_no_rewriting_of_one_side(text: str) -> None:
    assert _flag(text, "Solve the equations.") is None


# -- powers of 0 and 1 with an exponent too large to compute ----------------------------------------------


@pytest.mark.parametrize(("text", "flag"), [
    ("Raising 0 to this power, \\(0^{(5^{6431564})} = 0\\).", None),
    ("Raising 0 to this power, \\(0^{(5^{6431564})} = 1\\).", 2),
    ("Raising 1 to this power, \\(1^{(5^{6431564})} = 1\\).", None),
    ("Raising 1 to this power, \\(1^{(5^{6431564})} = 0\\).", 2),
])
def test_a_power_of_zero_or_one_with_a_huge_exponent(text: str, flag: int | None) -> None:
    assert _flag(text, "Compute the power.") == flag


def test_zero_to_an_exponent_of_unknown_sign_is_not_evaluated() -> None:
    # 5^6431564 - 3 is positive, but not by its form alone: no value is claimed for it
    assert _flag("So \\(0^{(5^{6431564} - 3)} = 1\\).", "Compute the power.") is None


# -- an expression broken over display lines -----------------------------------------------------------


@pytest.mark.parametrize("text", [
    "\\[ s = 1 + 2 \\\\ + 3 + 4 \\]",  # the next row opens with an operator
    "\\[ s = 1 + 2 \\\\ \\quad + 3 + 4 = 10 \\]",
    "\\[ s = 1 + 2 \\\\ - 3x \\]",  # a minus, and no relation in the row
    "$10101001110_{2} = 010\\\\ 101\\\\ 001\\\\ 110_{2}$",  # digits grouped over lines
])
def test_a_row_cut_by_a_line_break_that_continues_is_not_a_claim(text: str) -> None:
    assert not any(f.text.endswith(("1 + 2", "010")) for f in extract_formulas(text))  # the cut first row
    assert _flag(text, "Compute.") is None


@pytest.mark.parametrize(("text", "rows"), [
    ("\\[ 2x = 4 \\\\ -3x + 1 = 0 \\]", ["2x = 4", "-3x + 1 = 0"]),  # a row with its own relation
    ("$x = 5 \\\\ y = 7$", ["x = 5", "y = 7"]),
])
def test_a_row_with_its_own_relation_is_its_own_formula(text: str, rows: list[str]) -> None:
    assert [f.text for f in extract_formulas(text)] == rows


def test_an_aligned_row_after_a_line_break_still_continues_the_chain() -> None:
    fs = extract_formulas("\\begin{align*} a &= 2 + 3 \\\\ &= 6 \\end{align*}")
    assert len(fs) == 2 and fs[1].aligned is not None
    assert _flag("\\begin{align*} a &= 2 + 3 \\\\ &= 6 \\end{align*}", "Compute $a = 2 + 3$.") == 2


def test_a_text_read_again_gives_the_same_reading_in_a_list_of_its_own() -> None:
    text = "So \\( x^2 - 1 = (x - 1)(x + 1) \\) and \\( 2 + 3 = 5 \\)."
    first = extract_formulas(text)
    first.clear()  # the caller's list is its own: the next read is whole
    again, other = extract_formulas(text), extract_formulas(text, imaginary=True)
    assert [f.text for f in again] == ["x^2 - 1 = (x - 1)(x + 1)", "2 + 3 = 5"] == [f.text for f in other]
    assert extract_formulas(text) == again and extract_formulas(text) is not again
