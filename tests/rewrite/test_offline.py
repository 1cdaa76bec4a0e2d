"""``--mode offline`` on hand-made items, and ``--check`` against rows that were tampered with."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from typing import Any

import pytest

from faithsieve.rewrite import plan as plan_mod
from faithsieve.rewrite.arith import parse, value
from faithsieve.rewrite.check import check_row
from faithsieve.rewrite.feasible import fast_violation, order_pairs
from faithsieve.rewrite.gsm8k import parse_item
from faithsieve.rewrite.offline import rewrite_item
from faithsieve.rewrite.plan import build_plan

JANET = {
    "question": "Janet’s ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins for "
                "her friends every day with four. She sells the remainder at the farmers' market daily for $2 per "
                "fresh duck egg. How much in dollars does she make every day at the farmers' market?",
    "answer": "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\nShe makes 9 * 2 = $<<9*2=18>>18 every day "
              "at the farmer’s market.\n#### 18",
}
ROBE = {"question": "A robe takes 2 bolts of blue fiber and half that much white fiber.  How many bolts in total "
                    "does it take?",
        "answer": "It takes 2/2=<<2/2=1>>1 bolt of white fiber\nSo the total amount of fabric is 2+1=<<2+1=3>>3 bolts "
                  "of fabric\n#### 3"}
SHARE = {"question": "A baker makes 24 cookies and shares them equally among 4 friends. Each friend eats 2 of them. "
                     "How many cookies does each friend have left?",
         "answer": "Each friend gets 24/4=<<24/4=6>>6 cookies.\nEach has 6-2=<<6-2=4>>4 left.\n#### 4"}


def _annotations(solution: str) -> list[tuple[str, str]]:
    import re

    return [tuple(m.group(1).split("=")) for m in re.finditer(r"<<([^<>]*)>>", solution)]  # type: ignore[misc]


def test_janet_is_rewritten_with_every_annotation_recomputed() -> None:
    rows, outcome = rewrite_item(JANET, "test-0", seed=0, variants=3)
    assert outcome["kept"] == 3 and len({r["question"] for r in rows}) == 3
    for r in rows:
        assert r["question"] != JANET["question"]
        for expr, result in _annotations(r["solution"]):
            assert value(parse(expr)) == Fraction(result)
        assert {x["original"] for x in r["inputs"]} <= {"16", "2"}  # "three" and "four" are words: fixed
        new = {x["original"]: Fraction(x["new"]) for x in r["inputs"]}
        eggs, price = new.get("16", Fraction(16)), new.get("2", Fraction(2))
        eaten, baked = 3, 4
        assert Fraction(r["answer"]) == (eggs - eaten - baked) * price
        assert r["solution"].endswith(f"#### {r['answer']}")
        assert all(c["passed"] for c in r["verification"]["checks"])
        assert {c["check"] for c in r["verification"]["checks"]} >= {"z3_feasible", "z3_answer_determined"}
        assert check_row(r) == []


def test_same_seed_same_rows_other_seed_other_rows() -> None:
    a, _ = rewrite_item(JANET, "test-0", seed=1, variants=2)
    b, _ = rewrite_item(JANET, "test-0", seed=1, variants=2)
    c, _ = rewrite_item(JANET, "test-0", seed=2, variants=2)
    assert a == b
    assert [r["question"] for r in a] != [r["question"] for r in c]


def test_an_ambiguous_source_is_never_guessed() -> None:
    # "2/2": the divisor is "half", not the question's 2; reading it as the question's 2 would give a wrong answer.
    rows, outcome = rewrite_item(ROBE, "robe", seed=0, variants=1)
    # the question's 2 is used by some readings only, so it keeps its value, and then nothing is left to change
    assert rows == [] and (outcome["stage"], outcome["reason"]) == ("mapping", "nothing_to_resample")
    # 21 pears or 7 * 3 = 21 apples: every number behind the ambiguous 21 keeps its value, nothing is left
    pears = {"question": "Ann has 7 bags with 3 apples each, and 21 pears. How much fruit does she have?",
             "answer": "7*3=<<7*3=21>>21 apples\n21+21=<<21+21=42>>42\n#### 42"}
    rows, outcome = rewrite_item(pears, "pears", seed=0, variants=1)
    assert rows == [] and (outcome["stage"], outcome["reason"]) == ("mapping", "nothing_to_resample")


def test_numbers_only_some_readings_use_keep_their_value() -> None:
    # "$80/4": the 4 is 100/25 (25 % off), and also the "4 lessons": both keep their values, $80 changes
    item = {"question": "His fee is $80 per hour, reduced by 25% for veterans. He gives 4 lessons at the standard rate "
                        "and 2 to veterans. How much does he make?",
            "answer": "4*80=<<4*80=320>>320\n80/4=<<80/4=20>>20 off\n80-20=<<80-20=60>>60\n2*60=<<2*60=120>>120\n"
                      "320+120=<<320+120=440>>440\n#### 440"}
    rows, _ = rewrite_item(item, "fee", seed=0, variants=3)
    assert rows
    for r in rows:
        changed = {x["original"] for x in r["inputs"]}
        assert "25" not in changed and "4" not in changed and "80" in changed
        fee = Fraction(next(x["new"] for x in r["inputs"] if x["original"] == "80"))
        vets = Fraction(next((x["new"] for x in r["inputs"] if x["original"] == "2"), "2"))
        assert Fraction(r["answer"]) == 4 * fee + vets * fee * Fraction(3, 4)


def test_a_number_without_source_rejects_the_item() -> None:
    item = {"question": "Tom has 12 apples. How many will he have after buying another?",
            "answer": "12+1=<<12+1=13>>13\n#### 13"}
    _, outcome = rewrite_item(item, "x", seed=0, variants=1)
    assert (outcome["stage"], outcome["reason"]) == ("mapping", "no_literal_source")


def test_constants_stay_fixed_only_when_justified() -> None:
    item = {"question": "Ann runs 3 hours a day. How many minutes does she run?",
            "answer": "3*60=<<3*60=180>>180\n#### 180"}
    rows, _ = rewrite_item(item, "x", seed=0, variants=2)
    assert rows and all(r["constants"] == [{"value": "60", "cue": "minute+hour"}] for r in rows)
    assert all(r["solution"].startswith(f"{int(r['inputs'][0]['new'])}*60=") for r in rows)
    no_cue = {"question": "Ann runs 3 laps a day. How far does she run?", "answer": "3*60=<<3*60=180>>180\n#### 180"}
    assert rewrite_item(no_cue, "x", seed=0, variants=1)[1]["reason"] == "no_literal_source"


def test_prose_the_graph_cannot_explain_rejects_the_item() -> None:
    item = {"question": "Tom has 12 apples and eats 5.", "answer": "He had 7 once. 12-5=<<12-5=7>>7\nThen 9 more.\n#### 7"}
    assert rewrite_item(item, "x", seed=0, variants=1)[1]["reason"] == "prose_unexplained"


def test_intermediate_results_stay_whole_and_positive() -> None:
    for seed in range(15):
        rows, _ = rewrite_item(SHARE, "share", seed=seed, variants=2)
        for r in rows:
            for _expr, result in _annotations(r["solution"]):
                assert Fraction(result).denominator == 1 and Fraction(result) > 0


def test_order_between_question_numbers_is_kept() -> None:
    plan = build_plan(parse_item(SHARE, "share"))
    pairs = order_pairs(plan)
    lits = {lit.text: lit.index for lit in plan.item.literals}
    assert (lits["2"], lits["4"]) in pairs and (lits["4"], lits["24"]) in pairs
    new = {lits["24"]: Fraction(30), lits["4"]: Fraction(6), lits["2"]: Fraction(7)}  # 7 eaten of 5: order broken
    assert fast_violation(plan, new, plan.evaluate(0, new), pairs) in ("order", "sign")
    new = {lits["24"]: Fraction(30), lits["4"]: Fraction(6), lits["2"]: Fraction(3)}
    assert fast_violation(plan, new, plan.evaluate(0, new), pairs) is None


def test_readings_are_counted_and_checked_number_by_number() -> None:
    # each 2 is "2 cats", "2 dogs" or "2 birds", written ten times (the prose left side restates the annotation):
    # 3**10 readings, compared number by number, never enumerated
    item = {"question": "There are 2 cats, 2 dogs, 2 birds and 5 fish.",
            "answer": "2*2*2*2*2*5=<<2*2*2*2*2*5=160>>160\n#### 160"}
    plan = build_plan(parse_item(item, "x"))
    assert plan.reading_count == 3 ** 10 and len(plan.readings) == 1
    lits = {lit.text: lit.index for lit in plan.item.literals}
    assert plan_mod.check_readings_agree(plan, {lits["5"]: Fraction(7)}) == [Fraction(224)] * 2
    # a changed "2 dogs" makes one number's candidates differ: rejected, whichever reading comes first
    assert plan_mod.check_readings_agree(plan, {plan.item.literals[1].index: Fraction(3)}) == "readings_disagree"
    # the three 2s are tied: drawn as one value, they always agree
    twos = tuple(lit.index for lit in plan.item.literals if lit.text == "2")
    assert plan.ties == (twos,) and plan.resampled == tuple(sorted((*twos, lits["5"])))
    assert plan_mod.check_readings_agree(plan, {i: Fraction(3) for i in twos}) == [Fraction(1215)] * 2


def test_variants_are_distinct_and_bounded_by_attempts() -> None:
    rows, _ = rewrite_item(JANET, "test-0", seed=0, variants=4)
    assert len({json.dumps(r["inputs"]) for r in rows}) == len(rows) == 4
    # a single attempt per variant cannot satisfy 24/4's divisibility every time: fewer rows, reasons counted
    kept = sum(rewrite_item(SHARE, "s", seed=s, variants=1, attempts=1)[1]["kept"] for s in range(20))
    assert kept < 20


@pytest.fixture(scope="module")
def janet_row() -> dict[str, Any]:
    rows, _ = rewrite_item(JANET, "test-0", seed=0, variants=1)
    return rows[0]


def _tamper(row: dict[str, Any], edit: Any) -> dict[str, Any]:
    r = copy.deepcopy(row)
    edit(r)
    return r


def test_check_refuses_tampered_rows(janet_row: dict[str, Any]) -> None:
    assert check_row(janet_row) == []

    def wrong_answer(r: dict[str, Any]) -> None:
        r["answer"] = str(int(r["answer"]) + 1)
        r["solution"] = r["solution"].rsplit("####", 1)[0] + f"#### {r['answer']}"

    def wrong_annotation(r: dict[str, Any]) -> None:
        expr, result = _annotations(r["solution"])[0]
        r["solution"] = r["solution"].replace(f"<<{expr}={result}>>", f"<<{expr}={int(result) + 1}>>")

    def new_number_not_in_solution(r: dict[str, Any]) -> None:
        inp = r["inputs"][0]
        s, e = inp["span"]
        bumped = str(int(inp["new"]) + 1)
        r["question"] = r["question"][:s] + bumped + r["question"][e:]
        inp["new"] = bumped
        inp["span"] = [s, s + len(bumped)]

    def other_words_changed(r: dict[str, Any]) -> None:
        r["question"] = r["question"].replace("ducks", "geese")

    def unjustified_constant(r: dict[str, Any]) -> None:
        r["graph"][1]["sources"][1] = "c2"

    for edit in (wrong_answer, wrong_annotation, new_number_not_in_solution, other_words_changed, unjustified_constant):
        assert check_row(_tamper(janet_row, edit)), edit.__name__
    assert check_row({"id": "x"})[0].startswith("malformed row")


def test_new_values_keep_the_kind_and_look_of_the_number() -> None:
    import random

    from faithsieve.rewrite.gsm8k import question_literals
    from faithsieve.rewrite.sample import draw, render

    price, big, pct, word = question_literals("It costs $1.5 and $80,000, with 90% off for three kids.")
    assert word.kind == "fixed"
    rng = random.Random(0)
    for _ in range(300):
        v = draw(price, rng)
        assert v is not None and v.denominator != 1 and Fraction(3, 4) <= v <= 3  # a decimal stays non-whole
        b = draw(big, rng)
        assert b is not None and b % 1000 == 0 and 40_000 <= b <= 160_000 and "," in render(big, b)
        p = draw(pct, rng)
        assert p is not None and 45 <= p <= 100


def test_order_is_kept_within_a_class_of_numbers_only() -> None:
    from faithsieve.rewrite.gsm8k import question_literals, unit_class

    q = "He buys 3 pens for $2 each and 5 pencils at 10% off, paying 4 dollars."
    classes = {lit.text: unit_class(q, lit) for lit in question_literals(q)}
    assert classes == {"3": "other", "2": "money", "5": "other", "10": "percent", "4": "money"}
    plan = build_plan(parse_item({"question": "He buys 3 pens for $2 each and 5 pencils. How much?",
                                  "answer": "3*2=<<3*2=6>>6\n#### 6"}, "x"))
    lits = {lit.text: lit.index for lit in plan.item.literals}
    pairs = order_pairs(plan)
    assert (lits["3"], lits["5"]) in pairs and (lits["2"], lits["3"]) not in pairs
