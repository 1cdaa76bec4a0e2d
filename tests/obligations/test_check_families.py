"""The check families of issue 26: integer functions and logarithms decided exactly, rounding only where
the text licenses it, rewriting steps as identity claims, evidence a person would write."""

import time
from fractions import Fraction

import pytest
from faithsieve.obligations.checkers.exact import ROUNDED_DIGITS
from faithsieve.obligations.checkers.portfolio import (
    ExactChecker,
    SympyChecker,
    run_portfolio,
)
from faithsieve.obligations.extraction.edgeunits import counts_items
from faithsieve.obligations.kinds.models import ArithmeticObligation
from faithsieve.obligations.procedures.intfuncs import (
    MAX_LOG_DENOMINATOR,
    reduce_expr,
    reduce_rel,
)

from faithsieve.mathtext.ast import Call, Num, Rel
from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps
from faithsieve.verdict import Verdict


def n(v: int) -> Num:
    return Num(Fraction(v), str(v), 0)


def value(call: Call) -> Fraction | None:
    out = reduce_expr(call)
    return out.value if isinstance(out, Num) else None


@pytest.mark.parametrize(("fn", "args", "want"), [
    ("totient", (12,), 4), ("totient", (9,), 6), ("totient", (1,), 1), ("numdivisors", (12,), 6),
    ("numdivisors", (1,), 1), ("divsigma", (6,), 12), ("divsigma", (28,), 56), ("padicval", (2, 48), 4),
    ("padicval", (3, 10), 0), ("gcd", (84, 126), 42), ("lcm", (4, 6), 12), ("gcd", (12, 18, 8), 2),
    ("log_2", (8,), 3), ("log_10", (1000,), 3), ("log_9", (27,), Fraction(3, 2)),
])
def test_integer_functions_and_logs_have_exact_values(fn: str, args: tuple[int, ...], want: Fraction) -> None:
    assert value(Call(fn, tuple(n(a) for a in args))) == want


def test_calls_it_cannot_decide_are_left_as_written() -> None:
    for call in (Call("totient", (Num(Fraction(1, 2), "0.5", 1),)), Call("padicval", (n(4), n(8))),
                 Call("totient", (n(0),)), Call("numdivisors", (n(-6),))):
        assert reduce_expr(call) == call
    r = Rel(n(3), "=", n(3))
    assert reduce_rel(r) is r  # nothing to reduce: the same object, no walk rebuilt


def test_the_factoring_bound() -> None:
    """``MAX_FACTOR`` itself is factored; one more is not (loosen the bound and this fails)."""
    from faithsieve.mathtext.numtheory import MAX_FACTOR

    assert MAX_FACTOR == 10**10
    assert value(Call("numdivisors", (n(MAX_FACTOR),))) == 11 * 11  # 2^10 * 5^10
    assert value(Call("numdivisors", (n(MAX_FACTOR + 1),))) is None


def test_the_log_denominator_bound() -> None:
    """``log_b x = p/q`` is found for ``q`` up to ``MAX_LOG_DENOMINATOR``; past it the value stays a quotient of
    natural logarithms (decided numerically)."""
    base_in, base_past = 2**MAX_LOG_DENOMINATOR, 2 ** (MAX_LOG_DENOMINATOR + 1)
    assert value(Call(f"log_{base_in}", (n(2),))) == Fraction(1, MAX_LOG_DENOMINATOR)
    assert value(Call(f"log_{base_past}", (n(2),))) is None


def arith(text: str, **kw: bool) -> str:
    from faithsieve.mathtext import extract_formulas

    a, op, b = extract_formulas(text)[0].chain.links()[0]
    ob = ArithmeticObligation(id="o0", step=1, span=(0, 1), edge="e0", source=text, claim=Rel(a, op, b), **kw)
    out = run_portfolio(ob, [ExactChecker(), SympyChecker()], time.monotonic() + 60)
    return type(out).__name__


@pytest.mark.parametrize(("text", "want"), [
    ("1/4 + 1/2 = 1", "Refuted"), ("(4 + 9)/2 = 6", "Refuted"), ("1.1^2 = 1.2", "Refuted"),
    ("3/8 = 0.4", "Refuted"), ("2/3 = 0.67", "Verified"), ("1/3 = 0.333", "Verified"),
    ("1.1^2 = 1.21", "Verified"), ("19/7 = 2", "Verified"), ("19/7 = 3", "Refuted"),
])
def test_rounding_only_where_the_text_licenses_it(text: str, want: str) -> None:
    assert arith(text, ceiling=False) == want


def test_long_decimals_read_as_rounded_values() -> None:
    """``2.8284`` (√8 to four places) squared is 8 within its rounding; ``2.83^2 = 8`` is not: two digits
    are not a rounded value (lower ``ROUNDED_DIGITS`` and the second passes)."""
    assert ROUNDED_DIGITS == 3
    assert arith("2.8284^2 = 8", ceiling=False) == "Verified"
    assert arith("2.83^2 = 8", ceiling=False) == "Refuted"


def test_word_problem_rounding() -> None:
    assert arith("12.5 * 0.15 = 1.88", ceiling=False, word_problem=True) == "Verified"  # cents
    assert arith("12.5 * 0.15 = 1.88", ceiling=False) == "Refuted"
    assert arith("41 / 0.14 = 293", ceiling=False, word_problem=True) == "Verified"  # 292.857…
    assert arith("501 / 2 = 250", ceiling=False, word_problem=True) == "Verified"  # integer division
    assert arith("0.3 + 0.4 = 1", ceiling=False, word_problem=True) == "Refuted"


@pytest.mark.parametrize(("around", "want"), [
    ((" ", " buses, since"), True), (("", r" \text{ boxes}"), True), ((r"cost \$", " in all"), True),
    (("", "."), False), (("", " and so on"), False), (("", " which is"), False),
])
def test_a_result_that_counts_items(around: tuple[str, str], want: bool) -> None:
    assert counts_items(around) is want


def flag(problem: str, steps: list[str]) -> int | None:
    return localize(proof_from_steps(problem, steps)).first_refutation


@pytest.mark.parametrize(("steps", "want"), [
    (["Expanding, $(a - b)^3 = a^3 - 3a^2b + 3ab^2 + b^3$."], 1),
    (["Expanding, $(a - b)^3 = a^3 - 3a^2b + 3ab^2 - b^3$."], None),
    (["For all x and y, $(x + y)^2 = x^2 + xy + y^2$."], 1),
    (["Factoring, $x^2 - 9 = (x - 3)(x + 4)$."], 1),
    ([r"Expanding, $(2x + 3)^2 = (2x)^2 + 2 \cdot 2x \cdot 3 + 3^2 = 4x^2 + 6x + 9$."], 1),
    (["Simplifying, $\\frac{2}{3k^2} = k$, so $k^3 = \\frac{2}{3}$."], None),  # an equation simplified
    (["Expanding the right side, $x^2 + 2 = x^2 + 4x + 4$, so $x = -1/2$."], None),
])
def test_rewriting_steps_claim_identities(steps: list[str], want: int | None) -> None:
    assert flag("Simplify the expression.", steps) == want


def test_restating_the_problem_is_no_identity_obligation() -> None:
    v = localize(proof_from_steps("Solve $2x + 3 = 11$.", ["We have $2x + 3 = 11$.", "So $2x = 8$ and $x = 4$."]))
    assert not [e for s in v.steps for e in s.evidence if e.kind.value == "identity"]
    assert v.verdict == "correct"


def test_a_check_substitutes_the_known_value() -> None:
    v = localize(proof_from_steps("Find x with $10 - x = 4$.", ["$x = 6$.", "Check: $10 - x = 10 - 6 = 4$."]))
    kinds = {(e.kind.value, e.status) for e in v.steps[1].evidence}
    assert ("substitution", "verified") in kinds
    wrong = localize(proof_from_steps("Find x with $10 - x = 4$.", ["$x = 6$.", "Check: $10 - x = 10 - 5 = 5$."]))
    assert wrong.first_refutation == 2


def test_complex_values_are_compared_where_i_is_written() -> None:
    problem = "Let $i$ be the imaginary unit. Compute $(1+i)^2$ as a complex number."
    assert flag(problem, ["$(1+i)^2 = 2$."]) == 1
    assert flag("Compute.", ["$\\log_2 8 = 4$."]) == 1
    assert flag("Compute.", ["$\\log_2 8 = 3$."]) is None
    # a bare i set equal to a number is an index being set, not a claim about the imaginary unit
    assert flag("Compute the sum.", ["Here $i = 1$ is the starting index of $\\sum_{i=1}^{3} i = 6$."]) is None
    assert flag(problem, ["$i^2 = 1$."]) == 1


def rests_on(v: Verdict) -> str | None:
    """The flag kind of the first refutation, deciding (the verdict's) or suspect (a kind not measured clean)."""
    return v.flag_kind or next((e.flag_kind for e in v.suspect), None)


def test_flag_kind_says_what_the_flag_rests_on() -> None:
    literal = localize(proof_from_steps("p", ["$3 + 4 = 7$.", "$7 \\times 2 = 15$."]))
    assert literal.flag_kind == "false_as_written" == literal.steps[1].flag_kind
    stated = localize(proof_from_steps("p", ["For all x and y, $(x + y)^2 = x^2 + xy + y^2$."]))
    assert stated.flag_kind == "false_as_written"
    rewritten = localize(proof_from_steps("p", ["Expanding, $(a - b)^3 = a^3 - 3a^2b + 3ab^2 + b^3$."]))
    assert rests_on(rewritten) == "identity_by_rewriting"
    root = localize(proof_from_steps("Solve.", ["The roots of $x^2 - 5x + 6 = 0$ are $x = 2$ and $x = 4$."]))
    assert rests_on(root) == "claimed_solution"
    assert localize(proof_from_steps("p", ["$3 + 4 = 7$."])).flag_kind is None
    assert literal.steps[0].flag_kind is None


def test_a_step_with_an_undecided_claim_is_not_shown_verified() -> None:
    v = localize(proof_from_steps("p", ["$3 + 4 = 7$ and $\\pi \\approx 3$."]))
    statuses = {e.status for e in v.steps[0].evidence}
    assert statuses == {"verified", "unknown"}
    assert v.steps[0].status == "unknown"
    assert v.coverage.steps_decided == 1  # a decided obligation still counts as coverage
    assert localize(proof_from_steps("p", ["$3 + 4 = 7$."])).steps[0].status == "verified"


def test_an_identity_is_not_an_equation_to_solve() -> None:
    v = localize(proof_from_steps("Factor $x^2 - 7x + 10$.", ["We have $x^2 - 7x + 10 = (x - 2)(x - 5)$.",
                                                                 "So $x = 5$ is a root."]))
    assert not [e for s in v.steps for e in s.evidence if e.kind.value == "solution"]


def test_a_chain_may_use_what_the_problem_told() -> None:
    problem = "Let P be a projection matrix, so P^2 = P. Show that I - P is a projection too."
    assert flag(problem, ["$(I - P)^2 = I - 2P + P^2 = I - 2P + P = I - P$."]) is None


def test_the_first_link_may_be_the_equation_the_chain_rewrites() -> None:
    problem = r"Solve \( \sqrt{x + 7} = x - 5 \)."
    assert flag(problem, [r"Then \( x + 7 = (x - 5)^2 = x^2 - 10x + 25 \)."]) is None
    assert flag(problem, [r"Then \( x + 7 = (x - 5)^2 = x^2 - 10x + 5 \)."]) == 1  # the rewriting link is false


def test_a_symbolic_log_with_a_numeric_base_is_a_quotient_of_natural_logs() -> None:
    assert flag("p", ["Since $\\log_8 x = \\frac{\\log_2 x}{3}$ for all x, we are done."]) is None
    v = localize(proof_from_steps("p", ["Since $\\log_8 x = \\frac{\\log_2 x}{3}$ for all x, we are done."]))
    assert [e.status for e in v.steps[0].evidence] == ["verified"]


def test_long_decimals_are_rounded_to_nearest_and_the_shown_result_is_not_an_input() -> None:
    assert arith("0.323^3 = 0.035", ceiling=False) == "Refuted"  # 0.0337: not within half a unit of 0.323


def test_an_equation_no_value_satisfies_stays_an_obligation() -> None:
    assert flag("p", [r"Then $\frac{3}{6} = \frac{x}{x}$."]) == 1
    assert localize(proof_from_steps("Solve $2x+3=11$.", ["We have $2x + 3 = 11$."])).steps[0].evidence == ()


def test_a_letter_set_equal_to_an_expression_in_it_is_an_equation() -> None:
    assert flag("p", [r"Which simplifies to $a = \frac{1}{\frac{1 - a}{1 - a} - \frac{1}{1 - a}}$."]) is None


def test_a_quantifier_over_numbers_without_a_letter_binds_every_letter() -> None:
    """"For all real numbers, (x − y)^2 = x^2 − 2xy − y^2" claims an identity (refuted); the same quantifier
    before an equation that is no rewriting ("x^2 + 1 = 0 has no real solution") claims none."""
    assert flag("Simplify.", ["We expand.", "For all real numbers, (x − y)^2 = x^2 − 2xy − y^2."]) == 2
    assert flag("Simplify.", ["We expand.", "For all real numbers, (x − y)^2 = x^2 − 2xy + y^2."]) is None
    assert flag("Show there is no root.", ["For all real numbers, x^2 + 1 = 0 has no solution, since x^2 + 1 > 0."]) is None


def test_an_identity_is_no_premise_to_derive_from() -> None:
    """A rewriting link holds for every value, so nothing follows from it: "0 = w^3 - 1 = (w - 1)(w^2 + w + 1),
    hence 1 + w + w^2 = 0" uses "w != 1" from the step before, not the factorisation; a derivation from a
    real equation is still checked."""
    problem = r"Let $\omega = e^{2\pi i/3}$. Show that $1 + \omega + \omega^2 = 0$."
    steps = [r"$\omega^3 = 1$ and $\omega \ne 1$.",
             r"So $0 = \omega^3 - 1 = (\omega - 1)(\omega^2 + \omega + 1)$, hence $1 + \omega + \omega^2 = 0$."]
    assert flag(problem, steps) is None
    assert flag("Solve $2x + 3 = 11$.", ["We have $2x + 3 = 11$, so $x^2 = 25$."]) == 1
