"""Chains of equalities after a rewriting word ("combining like terms", "we can rewrite") claim each member
equal to the first for every value of the letters (``obligations.extraction.edgeunits._rewriting_chain``); one-to-one
functions of arguments a nonzero constant apart (``obligations.checkers.symbolic``); order relations with a non-real
side (``obligations.procedures.ordering``)."""

from __future__ import annotations

import pytest

from faithsieve.core.proof import Proof, Step
from faithsieve.pipeline import localize


def _flag(text: str, problem: str = "Simplify the expression.") -> int | None:
    proof = Proof(problem=problem, steps=(Step(index=1, text="We compute."), Step(index=2, text=text)))
    return localize(proof).first_refutation


@pytest.mark.parametrize(("last", "flag"), [("2 \\cdot 3^n", None), ("2^{n+1}", 2)])
def test_inline_chain_after_rewrite(last: str, flag: int | None) -> None:
    text = (f"We can rewrite this as \\(\\left( \\left( \\frac{{1}}{{2}} \\right)^2 \\right)^{{3^n}} = "
            f"\\left( \\frac{{1}}{{2}} \\right)^{{2 \\cdot 3^n}} = \\left( \\frac{{1}}{{2}} \\right)^{{{last}}}\\).")
    assert _flag(text) == flag


def test_aligned_equations_being_solved_are_not_rewritings() -> None:
    # each row has its own left side: an equation solved row by row, not one chain
    text = "Simplifying: \\begin{align*} 3x + 2 &= 11 \\\\ 3x &= 9 \\\\ x &= 3 \\end{align*}"
    assert _flag(text, "Solve 3x + 2 = 11.") is None
    text = "Simplifying: \\begin{align*} x^2 + 2x &= 3x \\\\ x^2 &= x \\end{align*}"
    assert _flag(text, "Solve x^2 + 2x = 3x.") is None


def test_a_two_member_chain_without_rows_stays_an_equation() -> None:
    # "Simplifying, x^2 + 2 = x^2 + 4x + 4" simplified an equation; it is not read as an identity
    assert _flag("Simplifying, we get \\(x^2 + 2 = x^2 + 4x + 4\\).", "Solve (x+2)^2 = x^2 + 2.") is None


@pytest.mark.parametrize(("text", "flag"), [
    ("The distance is \\( \\sqrt{b^2 + 37^2} = \\sqrt{b^2 + 1369} \\).", None),
    ("The distance is \\( \\sqrt{b^2 + 37^2} = \\sqrt{b^2 + 1225} \\).", 2),  # 37^2 is 1369: never equal
    ("So \\( \\sqrt[3]{x + 1} = \\sqrt[3]{x} \\).", 2),
    ("So \\( 2^{x+1} = 2^{x} \\).", 2),
    ("So \\( \\log_{10}(x+1) = \\log_{10}(x + 2) \\).", 2),
    ("So \\( \\sqrt{x^2 + 1} = \\sqrt{x^2 + 2x} \\).", None),  # an equation in x with a solution (x = 1/2)
    ("So \\( \\sin(x + 1) = \\sin(x) \\).", None),  # sin is not one-to-one
])
def test_one_to_one_functions_of_arguments_a_constant_apart(text: str, flag: int | None) -> None:
    assert _flag(text, "Find b.") == flag


@pytest.mark.parametrize(("text", "flag"), [
    ("From \\(x > -\\sqrt{3}\\) we get \\(x^2 > -7\\), so \\(x > \\sqrt{-7}\\).", 2),
    ("From \\(x^2 > -7\\) we get \\(x < -\\sqrt{-7}\\).", 2),
    ("From \\(x^2 > 7\\) we get \\(x > \\sqrt{7}\\).", None),
])
def test_an_order_relation_with_a_non_real_side(text: str, flag: int | None) -> None:
    assert _flag(text, "Solve the inequality.") == flag


# -- combining like terms inside a chain that rewrites one expression (``_collects_like_terms``) ----------


@pytest.mark.parametrize(("last", "flag"), [("9x", None), ("8x", 2)])
def test_a_chain_link_that_combines_like_terms_claims_an_identity(last: str, flag: int | None) -> None:
    assert _flag(f"Then \\( x(2 + 3) + 4x = 2x + 3x + 4x = {last} \\).") == flag


@pytest.mark.parametrize(("last", "flag"), [("-(15r + 6)", 2), ("-(11r + 6)", None)])
def test_like_terms_under_a_sign(last: str, flag: int | None) -> None:
    text = f"The coefficient of x: \\( -(1 \\cdot 6 + 2 \\cdot r + 3 \\cdot r + 6 \\cdot r) = -(6 + 2r + 3r + 6r) = {last} \\)."
    assert _flag(text, "A monic polynomial has roots 1, 2, 3 and r.") == flag


def test_an_equation_with_like_terms_is_solved_not_claimed_for_all_values() -> None:
    # two members: an equation put together from a word problem, which the text solves
    assert _flag("\\( x + 2x + x + 1 = 3x + 21 \\), so \\( x = 20 \\).", "Find x.") is None
    # a chain that ends in a number: the expression's value in a word problem, not an identity
    assert _flag("So \\( x + 2x + x + 3 = 4x + 3 = 27 \\), and \\( x = 6 \\).", "The perimeter is 27.") is None


def test_the_collecting_shape() -> None:
    from faithsieve.obligations.extraction.edgeunits import _collects_like_terms

    from faithsieve.mathtext import extract_formulas
    from faithsieve.mathtext.ast import Rel

    def link(t: str) -> Rel:
        c = extract_formulas(f"\\( {t} \\)")[0].chain
        return Rel(c.exprs[0], c.rels[0], c.exprs[1])

    assert _collects_like_terms(link("6 + 2r + 3r + 6r = 15r + 6"))
    assert not _collects_like_terms(link("I - 2P + P^2 = I - P"))  # no like terms: may use P^2 = P
    assert not _collects_like_terms(link("2 + 3 + x = 5 + x"))  # only numbers repeat
    assert not _collects_like_terms(link("x + 2x + 1 = 3x + 1 + y"))  # another monomial on the right
    assert not _collects_like_terms(link("x + x^2 + 2x = (x + 1)^2"))  # the right side is no collected sum


# -- a verification that something satisfies an equation computes each side (``_VERIFIES``) -------------


@pytest.mark.parametrize(("last", "flag"), [("2x + 1", None), ("2x", 2)])
def test_a_verification_rewrites_each_side(last: str, flag: int | None) -> None:
    text = ("Finally, we verify that \\( P(x) = x^2 \\) satisfies the equation:\n"
            f"\\[ P(x+1) - P(x) = (x+1)^2 - x^2 = x^2 + 2x + 1 - x^2 = {last} \\]")
    assert _flag(text, "Find P with P(x+1) - P(x) = 2x + 1.") == flag


def test_asking_which_values_satisfy_an_equation_is_solving() -> None:
    text = "Let us check which x satisfy \\( (x+1)(x-2) = x^2 + 3 \\): so \\( x = -5 \\)."
    assert _flag(text, "Find all x with (x + 1)(x - 2) = x^2 + 3.") is None


def test_the_sentence_before_a_display_on_its_own_line_reaches_back_across_the_line_break() -> None:
    from faithsieve.mathtext import extract_formulas

    fs = extract_formulas("We verify that \\( P(x) = x^2 \\) satisfies it:\n\\[ (x+1)^2 = x^2 + 2x + 1 \\]")
    assert "verify" in fs[-1].sentence_before
    fs = extract_formulas("We verify that \\( P(x) = x^2 \\) works.\n\\[ (x+1)^2 = x^2 + 2x + 1 \\]")
    assert "verify" not in fs[-1].sentence_before  # a full stop ends the sentence before the display
