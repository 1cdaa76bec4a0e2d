"""Readings of issue 26 (helper "reading"): a period closing display math, a unit after a thin
space, ``±`` read once per sign, relations a case is taken "for", and the problem's own equation as
the premise of a root claim."""

import pytest

from faithsieve.mathtext import extract_formulas, render_chain
from faithsieve.mathtext.cues import last_clause
from faithsieve.mathtext.formulas import sentence_start, sentence_tail
from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps


def chains(text: str) -> list[str]:
    return [render_chain(f.chain) for f in extract_formulas(text) if f.chain.rels]


def first(*steps: str, problem: str = "Show the claim.") -> int | None:
    return localize(proof_from_steps(problem, list(steps))).first_refutation


# -- a sentence's period inside the math that ends it ------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    (r"\[2 + 2 = 5.\]", ["2 + 2 = 5"]),
    (r"so \(2x = 6.\) Next", ["2 * x = 6"]),
    (r"\[\frac{72x - 72}{x^2 + 4x} = \frac{72(x - 1)}{(x - 1)(x + 4)}.\]",
     ["(72 * x - 72) / (x^2 + 4 * x) = 72 * (x - 1) / ((x - 1) * (x + 4))"]),
    # a period that continues a decimal still cuts the member it belongs to
    (r"\(x = 0.\overline{3}\)", ["x = 1/3"]),
])
def test_a_period_before_the_closing_delimiter_ends_the_sentence(text: str, expected: list[str]) -> None:
    assert chains(text) == expected


def test_a_period_closing_math_is_a_sentence_break() -> None:
    lead = r"If a = 1, \[b + c = 5.\] When a = 2, we get \["
    assert lead[sentence_start(lead):] == r" When a = 2, we get \["
    assert sentence_tail(lead) == r" When a = 2, we get \["
    assert last_clause(r"so \(x = 1.\) Then ") == " Then "
    assert sentence_tail("ab. cd") == " cd"


# -- a unit after a thin space --------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    (r"\[ V = 0.2 \, V \]", ["V = 0.2"]),
    (r"\[ V = 0.2 \, V. \]", ["V = 0.2"]),
    (r"\[ I = 2\,A \\ P = 4\,W \]", ["I = 2", "P = 4"]),
    # not at the end of the formula: a product (a unit there would compare a quantity with a number)
    (r"\[ 2 \, V = 0.4 \]", ["2 * V = 0.4"]),
    (r"\[ 2\,x = 6 \]", ["2 * x = 6"]),
])
def test_a_unit_symbol_after_a_thin_space_is_set_aside(text: str, expected: list[str]) -> None:
    assert chains(text) == expected


def test_a_volt_after_a_thin_space_is_no_false_alarm() -> None:
    step = r"\[ V = \frac{Q}{C} \] \[ V = \frac{6 \times 10^{-3}}{30 \times 10^{-3}} \] \[ V = 0.2 \, V \]"
    assert first(step, "So the voltage is 0.2 V.") is None


# -- plus-minus ---------------------------------------------------------------------------------

def test_a_link_with_plus_minus_on_both_sides_is_read_once_per_sign() -> None:
    text = (r"\[x = \frac{1 \pm \sqrt{1 + 4 \cdot 3 \cdot 646}}{6} = \frac{1 \pm \sqrt{7753}}{6}"
            r" = \frac{1 \pm 88}{6}.\]")
    assert chains(text) == [
        "(1 + sqrt(1 + 4 * 3 * 646)) / 6 = (1 + sqrt(7753)) / 6 = (1 + 88) / 6",
        "(1 - sqrt(1 + 4 * 3 * 646)) / 6 = (1 - sqrt(7753)) / 6 = (1 - 88) / 6",
    ]
    assert chains(r"$(6 \pm 2)/2 = 3 \mp 1$") == ["(6 + 2) / 2 = 3 - 1", "(6 - 2) / 2 = 3 + 1"]


@pytest.mark.parametrize("text", [
    r"$x = -3 \pm 11$",  # one side names two values
    r"$\frac{\pm 1}{\pm 2} = \pm \frac{1}{2}$",  # candidates whose signs vary apart
    r"$21 \pmod 4$",
])
def test_plus_minus_without_a_sign_per_side_is_not_read(text: str) -> None:
    assert chains(text) == []


def test_a_wrong_square_root_under_plus_minus_is_caught() -> None:
    step = r"So \[x = \frac{1 \pm \sqrt{7753}}{6} = \frac{1 \pm 88}{6}.\]"
    assert first("We solve $3x^2 - x - 646 = 0$.", step) == 2
    good = r"So \[x = \frac{1 \pm \sqrt{7744}}{6} = \frac{1 \pm 88}{6}.\]"
    assert first("We solve $3x^2 - x - 645 = 0$.", good) is None


# -- relations a case is taken for --------------------------------------------------------------

def test_the_relations_a_case_is_taken_for_are_not_checked_against_the_previous_case() -> None:
    steps = [
        r"First, for \(b-a = 1\) and \(b+a = 99\): adding gives \[2b = 100 \implies b = 50.\] "
        r"Subtracting gives \[2a = 98 \implies a = 49.\]",
        r"Second, for \(b-a = 3\) and \(b+a = 33\): adding gives \[2b = 36 \implies b = 18.\] "
        r"Subtracting gives \[2a = 30 \implies a = 15.\]",
    ]
    assert first(*steps, problem=r"Find $a, b$ with $b^2 - a^2 = 99$.") is None


# -- the problem's equation as the premise of a root claim --------------------------------------

PROBLEM = "Find all real solutions of $x^2 - 5x + 6 = 0$."


def test_a_root_claim_is_checked_against_the_equation_of_the_problem() -> None:
    assert first("We factor the quadratic.", "So the roots are $x = 2$ and $x = 4$.", problem=PROBLEM) == 2
    assert first("We factor the quadratic.", "So the roots are $x = 2$ and $x = 3$.", problem=PROBLEM) is None
    # a partial claim names one root and is true
    assert first("We try small values.", "So $x = 2$ is a root.", problem=PROBLEM) is None


def test_after_the_proof_s_own_equation_the_values_solve_that_one() -> None:
    steps = [r"Squaring both sides gives \( x + 7 = (x - 5)^2 \).",
             r"So \( x^2 - 11x + 18 = 0 \).", "The squared equation has the roots x = 2 and x = 9."]
    assert first(*steps, problem=r"Solve \( \sqrt{x + 7} = x - 5 \).") is None


# -- the imaginary unit at the end of a formula ---------------------------------------------------

def test_the_imaginary_unit_ends_a_formula_too() -> None:
    step = r"\[ ab = (5 - 8i)(30 + 48i) = 150 + 240i - 240i - 384i^2 = 150 + 384 + 240i - 240i = 534 + 240i \]"
    assert first("Let $a = 5 - 8i$ and $b = 30 + 48i$ be complex numbers.", step) == 2
    good = r"\[ (5 - 8i)(30 + 48i) = 150 + 240i - 240i - 384i^2 = 534 \]"
    assert first("Let $a = 5 - 8i$ and $b = 30 + 48i$ be complex numbers.", good) is None
    assert [render_chain(f.chain) for f in extract_formulas(r"$x_i = 2i$", imaginary=True)] == ["x_i = 2 * i"]


def test_a_list_given_as_all_the_roots_that_misses_one_is_refuted() -> None:
    assert first("We try small values.", "So the roots are $x = 2$.", problem=PROBLEM) == 2
    assert first("We try small values.", "So the solutions are $x = 2$ and $x = 3$.", problem=PROBLEM) is None
    # one root named, no more claimed
    assert first("We try small values.", "So $x = 2$ is a root.", problem=PROBLEM) is None
    assert first("We try small values.", "One of the roots is $x = 2$.", problem=PROBLEM) is None


def test_real_roots_are_counted_exactly() -> None:
    from faithsieve.obligations.checkers.exact import real_root_count

    from faithsieve.mathtext.ast import Rel
    from faithsieve.mathtext.evaluate import DEFAULT_LIMITS

    def eq(text: str) -> Rel:
        (f,) = extract_formulas(f"${text}$")
        a, op, b = f.chain.links()[0]
        return Rel(a, op, b)

    assert real_root_count(eq("x^2 - 5x + 6 = 0"), "x", DEFAULT_LIMITS) == 2
    assert real_root_count(eq("x^2 + 1 = 0"), "x", DEFAULT_LIMITS) == 0
    assert real_root_count(eq("(x - 1)^2 = 0"), "x", DEFAULT_LIMITS) == 1
    assert real_root_count(eq("x^3 = 2x"), "x", DEFAULT_LIMITS) == 3
    assert real_root_count(eq("x^2 + y = 0"), "x", DEFAULT_LIMITS) is None
    assert real_root_count(eq("3 = 3"), "x", DEFAULT_LIMITS) is None
