"""The notations of issue 26's reading half: each is read as mathematics writes it, and each reading
has a neighbour it must not take over (the conventional reading it leaves alone)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from faithsieve.core.errors import EvaluationLimit, NotRational
from faithsieve.mathtext import numtheory
from faithsieve.mathtext.ast import Call, Num, Var, render_chain
from faithsieve.mathtext.cost import DEFAULT_LIMITS, Meter
from faithsieve.mathtext.cues import compared_with
from faithsieve.mathtext.evaluate import evaluate
from faithsieve.mathtext.formulas import extract_formulas
from faithsieve.mathtext.lexer import tokenize_latex, tokenize_plain
from faithsieve.mathtext.parser import MAX_SUM_TERMS
from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps


def chains(text: str) -> list[str]:
    return [render_chain(f.chain) for f in extract_formulas(text)]


def first_error(*steps: str) -> int | None:
    problem = "Is 999 a term of the sequence 0, 71, 142, ...? Does x = 6 solve the equation?"
    return localize(proof_from_steps(problem, list(steps))).first_refutation


@pytest.mark.parametrize(("text", "expected"), [
    # f(x)^2 is (f(x))^2; \sin^2 x and \sin x^2 keep their conventional readings
    (r"$\cos(\pi/3)^2 = \frac14$", ["cos(pi / 3)^2 = 1 / 4"]),
    (r"$\sin(x)^2 + \cos(x)^2 = 1$", ["sin(x)^2 + cos(x)^2 = 1"]),
    (r"$\sin x^2 = 1$", ["sin(x^2) = 1"]),
    ("cos(0)^2 = 1", ["cos(0)^2 = 1"]),
    # braceless mixed numbers; an operator before the fraction makes it a product
    (r"$2\tfrac12 + 1\tfrac14 = 3\tfrac34$", ["5/2 + 5/4 = 15/4"]),
    (r"$3\tfrac{3}{4} = \frac{15}{4}$", ["15/4 = 15 / 4"]),
    (r"$-2\tfrac12 = -2.5$", ["-5/2 = -2.5"]),
    (r"$3 \cdot \frac12 = 1.5$", ["3 * 1 / 2 = 1.5"]),
    (r"$3\frac{4}{3} = 4$", ["3 * 4 / 3 = 4"]),  # not a proper fraction: no mixed number
    # a bound variable is no fact; a finite sum with numeric bounds is written out
    (r"$\sum_{i=1}^{3} i = 6$", ["1 + 2 + 3 = 6"]),
    (r"$\prod_{k=1}^{4} k = 24$", ["1 * 2 * 3 * 4 = 24"]),
    (r"$\sum_{k=1}^{n} k^2 = 1 + 4 + 9 = 14$", ["1 + 4 + 9 = 14"]),  # symbolic bounds: the tail
    # a definite integral and a limit are values over a bound variable (never a fact about it)
    (r"$\int_0^1 x\,dx = \frac12$", ["int(x, x, 0, 1) = 1 / 2"]),
    (r"$\lim_{x \to 0} \frac{\sin x}{x} = 1$", ["lim(sin(x) / x, x -> 0) = 1"]),
    # ratio notation: a : b = c : d is a / b = c / d; a clock time is not a ratio
    ("$6:8 = 3:4$", ["6 / 8 = 3 / 4"]),
    ("$20 : (80 + y) = 1 : 6$", ["20 / (80 + y) = 1 / 6"]),
    ("3:4 = 0.75", []),
    ("$12:00 + 3 = 15:00$", []),
    ("12:30 + 3 = 15:30", []),
    # juxtaposition across inline-math delimiters
    (r"70 ≤ 24\( K \)", []),
    (r"We get 3 + 4 = 7 \(\Rightarrow\) done", ["3 + 4 = 7"]),
    # a quotient with its remainder is not an equality of the quotient
    (r"$-161 \div 13 = -12 \text{ remainder } -5$", []),
    ("So 17 ÷ 5 = 3 remainder 2.", []),
    # a chain restated in decimals after a bound ends at the ≈
    (r"$\frac{90}{123} < k < \frac{180}{123} \approx 0.732 < k < 1.463$", ["90 / 123 < k < 180 / 123"]),
    (r"$x = \frac{1}{3} \approx 0.333$", ["x = 1 / 3 ≈ 0.333"]),
    # functions, not products
    (r"$\varphi(12) = 4$", ["totient(12) = 4"]),
    (r"$\phi(9) = 6$", ["totient(9) = 6"]),
    (r"$\tau(12) = 6$", ["numdivisors(12) = 6"]),
    (r"$\sigma(12) = 28$", ["divsigma(12) = 28"]),
    (r"$\sigma(n) = 2n$", ["fn:sigma(n) = 2 * n"]),  # of a letter: an unknown function, never a product
    (r"$v_2(48) = 4$", ["padicval(2, 48) = 4"]),
    (r"$\gcd(12, 18) = 6$", ["gcd(12, 18) = 6"]),
    (r"$\operatorname{lcm}(4, 6) = 12$", ["lcm(4, 6) = 12"]),
    ("gcd(12, 18) = 6", ["gcd(12, 18) = 6"]),
    ("sin 30° = 1/2", ["sin(30°) = 1 / 2"]),
    ("$0.(3) = 1/3$", ["1/3 = 1 / 3"]),
    (r"$\{3.7\} = 0.7$", ["frac(3.7) = 0.7"]),
    # plain-text families
    ("Twenty-four plus six equals thirty.", ["24 + 6 = 30"]),
    ("three hundred and five minus five equals three hundred", ["305 - 5 = 300"]),
    ("One of them is here, so x = 2", ["x = 2"]),  # a number word away from arithmetic stays a word
    ("10 000 + 5 000 = 14 000", ["10000 + 5000 = 14000"]),
    ("The years 1990 2000 were listed; 5 = 5", ["5 = 5"]),  # four digits are no group
    ("60 ÷ 5 ÷ 3 = 36", ["60 / 5 / 3 = 36"]),
    ("6 / 2 / 3 = 1", []),  # a slash chain stays a guess
    ("| -7 + 2 | = 9", ["abs(-7 + 2) = 9"]),
    ("We have 91 = 7 × 14.", ["91 = 7 * 14"]),
    ("half of 2000 = 1000", []),
    ("Expanding, (x − y)^2 = x^2 − 2xy − y^2.", ["(x - y)^2 = x^2 - 2 * x * y - y^2"]),
    ("2cm + 3cm = 5cm", []),  # letters that are no variables of the text stay a unit
    (r"$(1,2,3)\cdot(4,5,6) = 4 + 10 + 18 = 30$", ["4 + 10 + 18 = 30"]),
])
def test_reading(text: str, expected: list[str]) -> None:
    assert chains(text) == expected


def test_sum_index_i_is_not_the_imaginary_unit() -> None:
    [f, _] = extract_formulas(r"$\sum_{i=1}^{3} i^2 = 14$ and $i^2 = -1$", imaginary=True)
    assert render_chain(f.chain) == "1^2 + 2^2 + 3^2 = 14"


def test_sum_length_is_bounded() -> None:
    assert chains(rf"$\sum_{{k=1}}^{{{MAX_SUM_TERMS}}} 1 = {MAX_SUM_TERMS}$") != []
    assert chains(rf"$\sum_{{k=1}}^{{{MAX_SUM_TERMS + 1}}} 1 = {MAX_SUM_TERMS + 1}$") == []


def test_sum_of_subscripted_terms_is_not_written_out() -> None:
    assert chains(r"$\sum_{k=1}^{3} a_k = 6$") == []


def test_ratio_tokens_only_for_two_ratios() -> None:
    kinds = [t.kind for t in tokenize_latex("6:8 = 3:4")]
    assert kinds.count("RATIO") == 2
    assert "RATIO" not in [t.kind for t in tokenize_plain("Step 1: 3 + 4 = 7")]


@pytest.mark.parametrize(("fn", "args", "value"), [
    ("totient", [12], 4), ("totient", [1], 1), ("totient", [97], 96), ("numdivisors", [12], 6),
    ("numdivisors", [1], 1), ("divsigma", [12], 28), ("divsigma", [6], 12), ("padicval", [2, 48], 4),
    ("padicval", [3, -54], 3), ("gcd", [12, 18], 6), ("lcm", [4, 6], 12), ("gcd", [0, 5], 5),
])
def test_number_theory_values(fn: str, args: list[int], value: int) -> None:
    e = Call(fn, tuple(Num(Fraction(a), str(a), 0) for a in args))
    assert evaluate(e) == value


def test_number_theory_refusals() -> None:
    meter = Meter(DEFAULT_LIMITS.max_steps)
    with pytest.raises(EvaluationLimit):
        numtheory.factor(numtheory.MAX_FACTOR + 1, meter)
    assert numtheory.factor(numtheory.MAX_FACTOR, meter) == {2: 10, 5: 10}
    with pytest.raises(NotRational):
        numtheory.apply("totient", [Fraction(1, 2)], DEFAULT_LIMITS, meter)
    with pytest.raises(NotRational):
        numtheory.apply("padicval", [Fraction(4), Fraction(16)], DEFAULT_LIMITS, meter)  # 4 is not prime
    with pytest.raises(NotRational):
        evaluate(Call("totient", (Var("n"),)))


def test_repeating_decimal_values() -> None:
    [f] = extract_formulas("1.2(45) = 137/110")
    assert f.chain.exprs[0] == Num(Fraction(137, 110), "1.2(45)", 0)


def test_compared_with_finds_the_other_number() -> None:
    text = "we get 14·71 = 999. Since 994 is less than 999, it fails; and 999 ≠ 1000."
    assert compared_with(text, text.index("999") + 3, "999") == {"994", "1000"}
    assert compared_with("x = 5, and 5 is the answer", 5, "5") == set()


@pytest.mark.parametrize(("steps", "flagged"), [
    ((r"$\cos(\pi/3)^2 = \frac14$",), None),
    ((r"$\cos(\pi/3)^2 = \frac12$",), 1),
    ((r"$2\tfrac12 + 1\tfrac14 = 3\tfrac34$",), None),
    ((r"$2\tfrac12 + 1\tfrac14 = 4\tfrac34$",), 1),
    (("Let $i = 7$.", r"Then $\sum_{i=1}^{3} i = 6$."), None),
    ((r"$\sum_{k=1}^{4} k^2 = 1 + 4 + 9 + 16 = 20$",), 1),
    (("$6:8 = 3:4$",), None),
    (("$4:7 = 9:14$",), 1),
    ((r"$\varphi(12) = 4$",), None),
    ((r"$\gcd(12, 18) = 5$",), 1),
    (("We have 91 = 7 × 14.",), 1),
    (("10 000 + 5 000 = 14 000",), 1),
    (("60 ÷ 5 ÷ 3 = 4",), None),
    (("60 ÷ 5 ÷ 3 = 36",), 1),
    (("Twenty-four plus six equals thirty-one.",), 1),
    (("we get 0 + (15 − 1)·71 = 999, which simplifies to 14·71 = 994. Since 994 is less than 999, n = 15 fails.",), None),
    (("6^2 + 85 = 91, and (6 - 17)^2 = 121. Since 91 is not equal to 121, x = 6 fails.",), 1),  # 91 is its own sum
    (("Trying x = 3 yields −6 = 9, and neither holds.",), None),
    (("We get 2 + 3 = 6. So 6 is the answer and 10 > 6.",), 1),  # the comparison is not about 2 + 3
])
def test_verdicts(steps: tuple[str, ...], flagged: int | None) -> None:
    assert first_error(*steps) == flagged
