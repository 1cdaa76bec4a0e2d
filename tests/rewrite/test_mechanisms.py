"""The ways a GSM8K solution may state a step or a number beyond ``<<expr=result>>``, each read
exactly, rewritten consistently and re-verified by ``--check``; and the wrong mappings they must refuse."""

from __future__ import annotations

import copy
import re
from fractions import Fraction

import pytest

from faithsieve.rewrite.arith import parse, value
from faithsieve.rewrite.check import check_row
from faithsieve.rewrite.gsm8k import ItemRejected, parse_item, prose_numbers, prose_steps
from faithsieve.rewrite.offline import rewrite_item
from faithsieve.rewrite.plan import build_plan

RELAY = {"question": "The first runner runs his leg in 60 seconds and each next runner is 3 seconds faster. "
                     "How long do the first two runners take together?",
         "answer": "The second runner takes 60 - 3 = 57 seconds.\n"
                   "Together they take 60 + 57 = <<60+57=117>>117 seconds.\n#### 117"}


@pytest.mark.parametrize("text, found", [
    ("takes 60 - 3 = 57 seconds", [("60 - 3", 57)]),
    ("costs $5 - $2 = $3\nThen", [(" 5 -  2", 3)]),
    ("weighs 30 x .25 = 7.5 pounds", [("30 * .25", Fraction(15, 2))]),
    ("gets (1/2)*12 = 6 of them", [("(1/2)*12", 6)]),
    ("is 16 - 3 - 4 = <<16-3-4=9>>9", []),  # an annotation follows: not a prose step
    ("so 2 + 2 = 5 apples", []),  # false arithmetic is no step
    ("hours * 3 + 4 = 7", []),  # continues an expression
    ("is 20/100 = 20%", []),  # a percent result
    ("is 2+3 = 5 + 3 = 8", []),  # a chain
    ("had 1,500 + 200 = 1,700", []),  # thousands inside the left side
])
def test_prose_equations_are_read_only_when_plain_and_true(text: str, found: list[tuple[str, Fraction]]) -> None:
    steps = prose_steps(text + "\n#### 1")
    assert [(s.expr, s.result) for s in steps] == [(e, Fraction(r)) for e, r in found]
    for s in steps:
        written = text[s.start:s.start + len(s.expr)]
        assert s.prose and written.replace("$", " ").replace("x", "*") == s.expr  # same positions as written
        assert value(parse(s.expr)) == s.result


def test_prose_steps_join_the_graph_and_leave_the_prose_numbers() -> None:
    item = parse_item(RELAY, "t")
    assert [(a.prose, a.result) for a in item.annotations] == [(True, 57), (False, 117)]
    step_end = RELAY["answer"].index("57") + 2
    assert [p for p in prose_numbers(RELAY["answer"]) if p[0] < step_end] == []
    plan = build_plan(item)
    assert [s.key() for s in plan.readings[0][1]] == ["q0", "n0"]  # 57 is the prose step's result


def test_prose_steps_are_rewritten_and_rechecked() -> None:
    rows, outcome = rewrite_item(RELAY, "t", seed=0, variants=3)
    assert outcome["kept"] == 3
    for r in rows:
        first = Fraction(re.search(r"in (\d+) seconds", r["question"]).group(1))  # type: ignore[union-attr]
        step = Fraction(re.search(r"is (\d+) seconds", r["question"]).group(1))  # type: ignore[union-attr]
        assert f"{first} - {step} = {first - step} seconds" in r["solution"]
        assert Fraction(r["answer"]) == 2 * first - step
        assert check_row(r) == []
        bad = copy.deepcopy(r)  # the prose step made false: the check refuses the row
        bad["solution"] = bad["solution"].replace(f"= {first - step} seconds", f"= {first - step + 1} seconds")
        assert check_row(bad) != []


def test_without_prose_steps_the_relay_has_no_source() -> None:
    with pytest.raises(ItemRejected) as exc:
        build_plan(parse_item({**RELAY, "answer": RELAY["answer"].replace("60 - 3 = 57", "57")}, "t"))
    assert exc.value.reason == "no_literal_source"
