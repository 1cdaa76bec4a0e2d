"""The annotation parser's bounds and the reading of GSM8K questions and solutions."""

from __future__ import annotations

from fractions import Fraction

import pytest
from faithsieve.datasets.injection.tokens import ArithError

from faithsieve.rewrite import arith
from faithsieve.rewrite.arith import decimal_text, leaves, parse, value
from faithsieve.rewrite.gsm8k import (
    ItemRejected,
    cues_for,
    parse_item,
    prose_numbers,
    question_literals,
)


def test_exact_values_and_leaf_positions() -> None:
    node = parse("80000*1.5 - (3+.5)/2")
    assert value(node) == Fraction(80000 * 3, 2) - Fraction(7, 4)
    text = "80000*1.5 - (3+.5)/2"
    assert [text[lf.start:lf.end] for lf in leaves(node)] == ["80000", "1.5", "3", ".5", "2"]
    assert value(node, lambda i, lf: Fraction(1)) == Fraction(1 * 1 - (1 + 1) / 1)


@pytest.mark.parametrize("text", ["__import__('os')", "2**3", "a+1", "3 4", "(1+2", "1/0", "1e5", "", "5,000+1"])
def test_anything_but_plain_arithmetic_is_refused(text: str) -> None:
    with pytest.raises(ArithError):
        value(parse(text))


def test_length_bound() -> None:
    parse("1" + " " * (arith.MAX_CHARS - 3) + "+1")  # exactly MAX_CHARS
    with pytest.raises(ArithError, match="longer"):
        parse("1" + " " * arith.MAX_CHARS + "+1")


def test_depth_bound() -> None:
    parse("(" * (arith.MAX_ANNOTATION_NESTING - 1) + "1" + ")" * (arith.MAX_ANNOTATION_NESTING - 1))
    with pytest.raises(ArithError, match="deeply"):
        parse("(" * (arith.MAX_ANNOTATION_NESTING + 1) + "1" + ")" * (arith.MAX_ANNOTATION_NESTING + 1))


def test_leaf_bound() -> None:
    parse("+".join(["1"] * arith.MAX_LEAVES))
    with pytest.raises(ArithError, match="numbers"):
        parse("+".join(["1"] * (arith.MAX_LEAVES + 1)))


def test_number_length_bound() -> None:
    arith.number_value("9" * arith.MAX_NUMBER_CHARS)
    with pytest.raises(ArithError):
        arith.number_value("9" * (arith.MAX_NUMBER_CHARS + 1))


def test_bit_bound_on_intermediate_values() -> None:
    big = "9" * 20
    n = 1
    while (10 ** (20 * (n + 1))).bit_length() <= arith.MAX_BITS:
        n += 1
    value(parse("*".join([big] * n)))  # just under the bound
    with pytest.raises(ArithError, match="too large"):
        value(parse("*".join([big] * (n + 2))))


def test_decimal_text() -> None:
    assert decimal_text(Fraction(5, 2)) == "2.5"
    assert decimal_text(Fraction(-3)) == "-3"
    assert decimal_text(Fraction(1, 100)) == "0.01"
    assert decimal_text(Fraction(1, 3)) is None
    assert decimal_text(Fraction(1, 10 ** 7), max_decimals=6) is None


def test_question_numbers_are_classified() -> None:
    q = ("In 2019 Ann, the 5th of the three sisters, bought 1 hat, 3/4 of a pie and two-thirds of a cake at 3:30 "
         "for $1,200.50, paid 15% tax and .5 hours later 24 more, then three pears.")
    got = {(lit.text, lit.kind) for lit in question_literals(q)}
    assert got == {("2019", "fixed"), ("5", "fixed"), ("three", "fixed"), ("1", "fixed"), ("3", "fixed"),
                   ("4", "fixed"), ("two", "fixed"), ("thirds", "fixed"), ("3", "fixed"), ("30", "fixed"), ("1,200.50", "decimal"),
                   ("15", "percent"), (".5", "decimal"), ("24", "integer")}


def test_constants_need_a_cue_word() -> None:
    assert cues_for(Fraction(60), "She runs for 3 hours. How many minutes?") == "minute+hour"
    assert cues_for(Fraction(60), "She runs for 3 minutes.") is None
    assert cues_for(Fraction(60), "the second month") is None
    assert cues_for(Fraction(12), "He buys 3 dozen eggs") == "dozen"
    assert cues_for(Fraction(12), "He buys 3 boxes") is None
    assert cues_for(Fraction(100), "a 20% discount") == "%"


@pytest.mark.parametrize(("answer", "reason"), [
    ("3+4=<<3+4=8>>8\n#### 8", "annotation_false"),
    ("3+4=<<3+4=7>>7", "no_final_answer"),
    ("It is 7.\n#### 7", "no_annotations"),
    ("<<3^4=81>>81\n#### 81", "annotation_unparsable"),
])
def test_unusable_solutions_are_rejected_with_a_reason(answer: str, reason: str) -> None:
    with pytest.raises(ItemRejected) as exc:
        parse_item({"question": "Tom has 3 apples and 4 pears.", "answer": answer}, "x")
    assert (exc.value.stage, exc.value.reason) == ("parse", reason)


def test_prose_numbers_skip_annotations_and_the_final_line() -> None:
    ans = "He has 3 + four = <<3+4=7>>7 apples and one pear.\n#### 7"
    got = [(ans[s:e], v, w) for s, e, v, w in prose_numbers(ans)]
    assert got == [("3", 3, False), ("four", 4, True), ("7", 7, False)]
