"""Final-answer extraction and value equivalence (faithsieve.grading.answers)."""

from __future__ import annotations

import time

import pytest

from faithsieve.grading.answers import (
    AnswerPolicy,
    answers_equal,
    extract_answer,
    normalize_answer,
    reference_answer,
)

# ---------------------------------------------------------------------------
# extraction
# ---------------------------------------------------------------------------

EXTRACT = [
    ("So the total is \\boxed{18}.", "18", "boxed"),
    ("First \\boxed{3}, then correcting: \\boxed{4}", "4", "boxed"),
    ("\\boxed{\\frac{1}{2}} is it", "\\frac{1}{2}", "boxed"),
    ("nested \\boxed{\\left(\\frac{a}{b}, {c}\\right)} done", "\\left(\\frac{a}{b}, {c}\\right)", "boxed"),
    ("The answer is \\boxed 5", "5", "boxed"),
    ("Final Answer: The final answer is $\\boxed{5}$. I hope it is correct.", "5", "boxed"),
    ("truncated \\boxed{12", "12", "last_number"),
    ("We get 7 apples. The answer is 18.", "18", "answer_is"),
    ("The answer is: x = 3.5. Done", "x = 3.5", "answer_is"),
    ("**Answer:** $18.00.", "$18.00", "answer_is"),
    ("Final answer:\n\n 42", "42", "answer_is"),
    ("She makes 9 * 2 = $18.\n#### 18", "18", "hash"),
    ("#### 1,000", "1,000", "hash"),
    ("I think the answer is 20.\nWait, recheck.\n#### 18", "18", "hash"),
    ("#### 18\nSo the answer is 19.", "19", "answer_is"),
    ("blah 3 and 4 then 7 apples", "7", "last_number"),
    ("**Answer:** Verna received $7.00 in change.", "7.00", "answer_is"),
    ("The answer is: She has 12 left", "12", "answer_is"),
    ("The answer is 4 blue boxes and 6 red boxes.", "4 blue boxes and 6 red boxes", "answer_is"),
    ("half is 0.5 and then -2.25 remain", "-2.25", "last_number"),
]


@pytest.mark.parametrize(("text", "answer", "source"), EXTRACT)
def test_extract_answer(text: str, answer: str, source: str) -> None:
    ex = extract_answer(text)
    assert ex is not None
    assert (ex.text, ex.source) == (answer, source)
    assert text[ex.start : ex.start + len(ex.text)] == ex.text


def test_extract_nothing() -> None:
    assert extract_answer("") is None
    assert extract_answer("no numbers at all") is None
    assert extract_answer("only 5 here", AnswerPolicy(last_number=False)) is None


@pytest.mark.parametrize(
    ("ref", "answer"),
    [
        ("Janet sells 16 - 3 - 4 = 9 eggs.\n#### 18", "18"),
        ("... so \\boxed{\\frac{3}{4}}", "\\frac{3}{4}"),
        ("42", "42"),
        (0.5, "0.5"),
        (3.0, "3"),
        (7, "7"),
    ],
)
def test_reference_answer(ref: object, answer: str) -> None:
    assert reference_answer(ref) == answer


# ---------------------------------------------------------------------------
# equivalence
# ---------------------------------------------------------------------------

EQUAL = [
    # numbers and fractions
    ("0.5", "1/2"), ("\\frac{1}{2}", "0.5"), ("\\dfrac12", "2/4"), ("\\tfrac{3}{6}", ".5"), ("18.00", "18"),
    ("-3", "-3.0"), ("10^{3}", "1000"), ("5!", "120"), ("\\binom{5}{2}", "10"), ("2\\frac{1}{2}", "5/2"),
    # formatting, currency, units, thousands
    ("$18", "18"), ("\\$18.00", "18"), ("1,000", "1000"), ("\\$1{,}000", "1000"), ("1,234,567", "1234567"),
    ("5 \\text{ cm}", "5"), ("18 dollars", "18"), ("18 eggs.", "18"), ("30^\\circ", "30"), ("30°", "30"),
    ("x = 5", "5"), ("**18**", "18"), ("\\15", "15"), ("\\frac{1}{2} cup", "0.5"), ("2\\sqrt{3} square units", "\\sqrt{12}"), ("\\(18\\)", "18"), ("$\\frac{1}{2}$", "0.5"),
    # percent (default policy: either reading)
    ("50%", "0.5"), ("50%", "50"), ("50\\%", "50"), ("12.5%", "1/8"),
    # closed forms
    ("2\\sqrt{3}", "\\sqrt{12}"), ("\\frac{\\pi}{2}", "\\pi/2"), ("\\sqrt{2}/2", "\\frac{1}{\\sqrt{2}}"),
    ("\\sqrt{8}", "2\\sqrt{2}"),
    # rounded decimals against non-terminating values
    ("0.33", "1/3"), ("3.14", "\\pi"), ("1.4142", "\\sqrt{2}"), ("0.67", "\\frac{2}{3}"),
    # expressions in variables
    ("2x+2", "2(x+1)"), ("x^2-1", "(x-1)(x+1)"), ("\\frac{x}{2}", "0.5x"),
    # tuples, intervals, lists, text
    ("(1, 2)", "(1,2)"), ("(1/2, 3)", "(0.5, 3)"), ("(-\\infty, 3]", "(-\\infty,3]"), ("2, 3", "3, 2"),
    ("\\text{Monday}", "monday"), ("(C)", "C"), ("\\textbf{(B)}", "B"), ("\\infty", "\\infty"),
    ("9" * 400, "9" * 400),
]

NOT_EQUAL = [
    ("0.5", "0.52"), ("0.52", "0.5"), ("0.3", "1/3"), ("3", "\\pi"), ("7", "8"), ("50%", "5"), ("-3", "3"),
    ("x^2+1", "(x+1)^2"), ("(1,2)", "[1,2]"), ("(1,2)", "(2,1)"), ("2, 3", "2, 4"), ("2^{10000}", "1"),
    ("", "5"), ("abc", "5"), ("18", ""), ("1/3", "0.334"), ("\\sqrt{2}", "1.42"),
    ("1000", "1,0000"), ("x", "y"), ("2x", "x+1"),
]


@pytest.mark.parametrize(("a", "b"), EQUAL)
def test_equal(a: str, b: str) -> None:
    assert answers_equal(a, b)
    assert answers_equal(b, a)


@pytest.mark.parametrize(("a", "b"), NOT_EQUAL)
def test_not_equal(a: str, b: str) -> None:
    assert not answers_equal(a, b)
    assert not answers_equal(b, a)


def test_percent_policies() -> None:
    value, strip = AnswerPolicy(percent="value"), AnswerPolicy(percent="strip")
    assert answers_equal("50%", "0.5", value) and not answers_equal("50%", "50", value)
    assert answers_equal("50%", "50", strip) and not answers_equal("50%", "0.5", strip)
    assert answers_equal("50%", "50\\%", value) and answers_equal("50%", "50\\%", strip)


def test_rounding_policy_off() -> None:
    off = AnswerPolicy(decimal_rounding=False)
    assert not answers_equal("0.33", "1/3", off)
    assert answers_equal("0.5", "1/2", off)


def test_normalize() -> None:
    assert normalize_answer("  $\\dfrac{1}{2}$. ") == "\\frac{1}{2}"
    assert normalize_answer("\\$1,000") == "1,000"
    assert normalize_answer("x = 18 dollars") == "18"
    assert normalize_answer("\\left( 1, 2 \\right)") == "( 1, 2 )"


# ---------------------------------------------------------------------------
# hostile answers: bounded time, no exception
# ---------------------------------------------------------------------------

HOSTILE = [
    "9" * 100_000,
    "2^{2^{2^{2^{100}}}}",
    "10^{10^{10}}",
    "(10^{999})!",
    "\\sin(2^{2000}) + \\cos(3^{1000})",
    "\\frac{1}{" * 2000 + "2" + "}" * 2000,
    "(" * 5000 + "1" + ")" * 5000,
    "\\sqrt{" * 500 + "2" + "}" * 500,
    "x^{x^{x^{x^{x}}}}",
    "(x+y+z+w)^{2000}",
    "1 " + "a." * 600,
    "1, " * 3000,
    "\\boxed{" * 3000,
    "e^{e^{e^{e^{e}}}}",
    "\\pi^{2047} - \\pi^{2047}",
]


@pytest.mark.parametrize("bad", HOSTILE, ids=[f"hostile{i}" for i in range(len(HOSTILE))])
def test_hostile_answers_are_fast(bad: str) -> None:
    t = time.perf_counter()
    for other in ("5", bad, "x+1", "\\sqrt{2}"):
        answers_equal(bad, other)
    extract_answer(bad)
    extract_answer("The answer is " + bad)
    assert time.perf_counter() - t < 2.0


# ---------------------------------------------------------------------------
# answer forms from model output (each rule, with the near misses it must not accept)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("So $x = \\boxed{1}$ and $y = \\boxed{2}$", "1, 2"),
        ("\\boxed{(2, 2)} \\quad \\text{and} \\quad \\boxed{(6, 2)}", "(2, 2), (6, 2)"),
        ("roots \\boxed{3}, \\boxed{5}, \\boxed{7}", "3, 5, 7"),
        ("First \\boxed{3}. Wait, that is wrong, so \\boxed{4}", "4"),
        ("\\boxed{3}, then correcting: \\boxed{4}", "4"),
        ("Step: \\boxed{200} ... more work.\nFinal Answer: The final answer is $10,455$. I hope", "$10,455$"),
        ("The pair is $(7, 6)$. <|im_start|>user\nWhat is 2+2? The answer is 4", "(7, 6)"),
        ("so the ordered pair that solves it is $(7, 6)$.", "(7, 6)"),
        ("I get $\\frac{639}{40}$.\n# Answer\n\n\\frac{639}{40}", "\\frac{639}{40}"),
    ],
)
def test_extract_answer_forms(text: str, answer: str) -> None:
    ex = extract_answer(text)
    assert ex is not None and ex.text == answer


FORMS_EQUAL = [
    ("(a,b)=(1,2)", "(1,2)"), ("|PQ| = 5", "5"), ("g(t) = 7", "7"), ("x \\in [0, 4]", "[0,4]"),
    ("AB=3, BC=4", "3, 4"), ("a=1, b=2; a=3, b=4", "(1,2), (3,4)"),
    ("3 \\text{ or } 7", "7, 3"), ("2, 4, and 6", "6, 4, 2"), ("(1,2) or (2,1)", "(2,1), (1,2)"),
    ("(1,5) \\cup (5,9)", "(1, 5)\\cup(5, 9)"), ("-2 < t < 3", "(-2,3)"), ("-2 \\le t < 3", "[-2,3)"),
    ("2 \\le |w| \\le 3", "[-3,-2] \\cup [2,3]"),
    ("12,\\!345", "12345"), ("\\$1,\\!234.50", "1234.5"),
    ("\\{3,1\\}", "\\{1,3\\}"), ("\\{(1,2),(3,4)\\}", "(3,4),(1,2)"), ("(0;1;2)", "(0,1,2)"),
    ("\\pm 3", "\\{-3, 3\\}"), ("1 \\pm \\sqrt{2}", "1+\\sqrt{2}, 1-\\sqrt{2}"),
    ("\\cot^2 x + 1", "\\csc^2 x"), ("\\sec^2(y) - \\tan^2(y)", "1"),
    ("2x+4y=6", "x+2y=3"), ("34x+45y-20z+100=0", "-34x-45y+20z-100=0"),
    ("\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "\\begin{pmatrix}1&2\\\\3&\\frac{8}{2}\\end{pmatrix}"),
    ("\\\\frac{1}{2}", "0.5"), ("\\boxed{7", "7"),
    ("7 - (-3) + 1 = 11", "11"), ("2x = 16\\sqrt{3}", "16\\sqrt{3}"), ("555_{10} = 4210_5", "4210_{5}"),
]
FORMS_DIFFERENT = [
    ("x+y=5", "6"), ("x+y=5", "x+y=6"), ("7 - (-3) + 1 = 11", "7"), ("2 and 5", "2, 6"), ("(1,5)\\cup(5,9)", "(1,59)"), ("-2 < t < 3", "[-2,3]"),
    ("\\{1,2\\}", "\\{1,2,3\\}"), ("(1,2)", "(2,1)"), ("1, 2", "(2,1)"), ("\\pm 3", "3"),
    ("\\sin^2 x", "\\cos^2 x"), ("2x+4y=6", "x+2y=4"), ("x+2y=3", "x-2y=3"), ("x+2y=3", "x+2y"),
    ("\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "\\begin{pmatrix}1&3\\\\2&4\\end{pmatrix}"),
    ("(1,5) \\cup (5,9)", "(1,9)"),
]


@pytest.mark.parametrize(("a", "b"), FORMS_EQUAL)
def test_answer_forms_equal(a: str, b: str) -> None:
    assert answers_equal(a, b) and answers_equal(b, a)


@pytest.mark.parametrize(("a", "b"), FORMS_DIFFERENT)
def test_answer_forms_different(a: str, b: str) -> None:
    assert not answers_equal(a, b) and not answers_equal(b, a)
