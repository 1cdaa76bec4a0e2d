"""The ways a GSM8K solution may state a step or a number beyond ``<<expr=result>>``, each read
exactly, rewritten consistently and re-verified by ``--check``; and the wrong mappings they must refuse."""

from __future__ import annotations

import copy
import re
from fractions import Fraction

import pytest

from faithsieve.rewrite.arith import parse, value
from faithsieve.rewrite.check import check_row
from faithsieve.rewrite.gsm8k import (
    ItemRejected,
    parse_item,
    prose_numbers,
    prose_steps,
)
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
    ("has $38 − $17 = $21 left", [(" 38 -  17", 21)]),  # a typographic minus
    ("took 25 – 20 = 5 more", [("25 - 20", 5)]),
    ("gets (1/2)*12 = 6 of them", [("(1/2)*12", 6)]),
    ("is 16 - 3 - 4 = <<16-3-4=9>>9", [("16 - 3 - 4", 9)]),  # restates the annotation after it
    ("is 16 - 3 = <<16-3-4=9>>9", []),  # a false restatement is none
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
        normal = written.replace("$", " ").replace("x", "*").replace("−", "-").replace("–", "-")
        assert s.prose and normal == s.expr  # same positions as written
        assert value(parse(s.expr)) == s.result


def test_prose_steps_join_the_graph_and_leave_the_prose_numbers() -> None:
    item = parse_item(RELAY, "t")
    # 60 - 3 = 57 is a step; 60 + 57 = <<60+57=117>> restates the annotation
    assert [(a.prose, a.restates, a.result) for a in item.annotations] == [(True, False, 57), (True, True, 117),
                                                                          (False, False, 117)]
    assert [p for p in prose_numbers(RELAY["answer"]) if p[0] < RELAY["answer"].index("<<")] == []
    plan = build_plan(item)
    assert [s.key() for s in plan.readings[0][2]] == ["q0", "n0"]  # 57 is the prose step's result
    assert plan.targets == (2,)  # a restatement is never the answer's annotation


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


OCTAVIA = {"question": "Octavia drinks half the daily recommended cups of coffee. Juan drinks 10 times the amount she "
                       "drinks. The daily recommendation is 4 cups. By how many cups must Juan reduce his intake?",
           "answer": "Octavia drinks 4/2 = <<4/2=2>>2 cups\nJuan drinks 10 * 2 = <<10*2=20>>20 cups\n"
                     "He must reduce by 20 - 4 = <<20-4=16>>16 cups\n#### 16"}


def test_numbers_behind_an_ambiguous_source_keep_their_value() -> None:
    # the 2 of "10 * 2" is 4/2 or the constant of "half": both readings agree only while 4 stays 4
    plan = build_plan(parse_item(OCTAVIA, "o"))
    assert plan.reading_count > 1
    index = {lit.text: lit.index for lit in plan.item.literals}
    assert plan.resampled == (index["10"],)
    rows, outcome = rewrite_item(OCTAVIA, "o", seed=0, variants=3)
    assert outcome["kept"] == 3
    for r in rows:
        assert [x["original"] for x in r["inputs"]] == ["10"]
        juan = Fraction(r["inputs"][0]["new"])
        assert Fraction(r["answer"]) == juan * 2 - 4  # the same under both readings
        assert check_row(r) == []


def test_check_refuses_a_changed_number_behind_an_ambiguous_source() -> None:
    # a row that changes the 4 (so the two readings disagree: 10*6/2 or 10*2) is refused by --check
    (row,), _ = rewrite_item(OCTAVIA, "o", seed=0, variants=1)
    bad = copy.deepcopy(row)
    lit = next(x for x in build_plan(parse_item(OCTAVIA, "o")).item.literals if x.text == "4")
    shift = len(bad["inputs"][0]["new"]) - 2
    bad["inputs"].append({"literal": lit.index, "kind": "integer", "original": "4", "new": "6",
                          "original_span": [lit.start, lit.end], "span": [lit.start + shift, lit.start + shift + 1]})
    bad["question"] = bad["question"][:lit.start + shift] + "6" + bad["question"][lit.start + shift + 1:]
    juan = Fraction(row["inputs"][0]["new"])
    bad["solution"] = (f"Octavia drinks 6/2 = <<6/2=3>>3 cups\nJuan drinks {juan} * 3 = <<{juan}*3={juan * 3}>>"
                       f"{juan * 3} cups\nHe must reduce by {juan * 3} - 6 = <<{juan * 3}-6={juan * 3 - 6}>>"
                       f"{juan * 3 - 6} cups\n#### {juan * 3 - 6}")
    bad["answer"] = str(juan * 3 - 6)
    problems = check_row(bad)
    assert any("may not change" in p for p in problems), problems


PUZZLE = {"question": "Poppy is solving a 1000-piece jigsaw puzzle. She places a quarter of the pieces on the board, "
                      "then her mom places a third of the remaining pieces. How many pieces are left to be placed?",
          "answer": "Poppy has placed 1000 pieces / 4 = <<1000/4=250>>250 pieces.\n"
                    "This means there are 1000 - 250 = <<1000-250=750>>750 pieces remaining.\n"
                    "Her mom therefore places 750 / 3 = <<750/3=250>>250 pieces.\n"
                    "This leaves a total of 750 - 250 = <<750-250=500>>500 pieces left to be placed.\n#### 500"}


def test_sources_that_are_the_same_function_need_not_be_held() -> None:
    # the last 250 is 1000/4 or 750/3 = (1000 - 1000/4)/3: the same function of the 1000, so it may change
    plan = build_plan(parse_item(PUZZLE, "p"))
    assert plan.reading_count > 1 and len(plan.resampled) == 1
    rows, _ = rewrite_item(PUZZLE, "p", seed=0, variants=2)
    for r in rows:
        n = Fraction(r["inputs"][0]["new"])
        assert Fraction(r["answer"]) == n / 2 and check_row(r) == []


def test_sources_that_only_coincide_at_the_original_values_are_held() -> None:
    # the 20 on the weekend is 2 x 10 or the 20 miles a day: equal only at these values, so both stay
    walk = {"question": "Pancho walks 20 miles a day. Except on weekends when he walks 10 miles. "
                        "How many miles does he walk in a week?",
            "answer": "5 x 20 = <<5*20=100>>100\n2 x 10 = <<2*10=20>>20\n100 + 20 = <<100+20=120>>120\n#### 120"}
    with pytest.raises(ItemRejected) as exc:
        build_plan(parse_item(walk, "w"))
    assert exc.value.reason == "nothing_to_resample"


CHERRIES = {"question": "Richard, Jerry, and Robert are going to share 60 cherries. If Robert has 30 cherries, and has "
                        "10 more than Richard, how many more cherries does Robert have than Jerry?",
            "answer": "Since Robert has 30, then 60 - 30 = <<30=30>>30 cherries are left to be shared by Richard and "
                      "Jerry.\nRichard has 30 - 10 = <<30-10=20>>20 cherries.\nJerry has 30 - 20 = <<30-20=10>>10 "
                      "cherries.\nSo Robert has 30 - 10 = <<30-10=20>>20 more cherries than Jerry.\n#### 20"}


def test_a_restated_left_side_must_stay_equal_to_its_annotation() -> None:
    # "60 - 30 = <<30=30>>": the 30 left is 60 - 30 only while Robert has 30, so Robert's 30 is held; a rewrite
    # that changed it (Robert 41: "60 - 41 = <<41=41>>", Jerry -8) was a wrong answer before restatements were read
    item = parse_item(CHERRIES, "c")
    assert [(a.restates, a.result) for a in item.annotations][:2] == [(True, 30), (False, 30)]
    plan = build_plan(item)
    assert [item.literals[i].text for i in plan.resampled] == ["10"]
    rows, outcome = rewrite_item(CHERRIES, "c", seed=0, variants=3)
    assert outcome["kept"] == 3
    for r in rows:
        more = Fraction(r["inputs"][0]["new"])
        assert "60 - 30 = <<30=30>>30" in r["solution"]
        richard = 30 - more
        assert Fraction(r["answer"]) == 30 - (60 - 30 - richard)
        assert check_row(r) == []
        bad = copy.deepcopy(r)  # a rewritten restatement made false no longer matches the graph
        bad["solution"] = bad["solution"].replace("60 - 30 =", "60 - 31 =")
        assert check_row(bad) != []


RIDES = {"question": "Pam rode the roller coaster 2 times while Fred rode it 3 times. After that, each of them rode "
                     "the luge 2 times. If each ride cost 7 tickets, how many tickets did they use that day?",
         "answer": "The roller coaster: 2+3=<<2+3=5>>5 times.\nThe luge: 2+2=<<2+2=4>>4 times.\n"
                   "In all 5+4=<<5+4=9>>9 times.\nSo they used 9x7=<<9*7=63>>63 tickets.\n#### 63"}


def test_equal_numbers_one_solution_number_may_come_from_are_drawn_as_one() -> None:
    plan = build_plan(parse_item(RIDES, "r"))
    twos = tuple(lit.index for lit in plan.item.literals if lit.text == "2")
    assert plan.ties == (twos,) and set(twos) <= set(plan.resampled)
    rows, outcome = rewrite_item(RIDES, "r", seed=0, variants=3)
    assert outcome["kept"] == 3
    for r in rows:
        new = [x["new"] for x in r["inputs"] if x["original"] == "2"]
        assert len(new) == 2 and new[0] == new[1]
        assert check_row(r) == []
        # only one of the tied numbers changed: the two readings of the luge's "2+2" differ, --check refuses it
        bad = copy.deepcopy(r)
        luge = next(x for x in bad["inputs"] if x["original"] == "2" and x["literal"] == twos[1])
        bad["inputs"].remove(luge)
        start = luge["span"][0]
        bad["question"] = bad["question"][:start] + "2" + bad["question"][luge["span"][1]:]
        shift = 1 - (luge["span"][1] - start)
        for x in bad["inputs"]:
            if x["span"][0] > start:
                x["span"] = [x["span"][0] + shift, x["span"][1] + shift]
        assert check_row(bad) != []


def test_money_and_counts_are_never_tied() -> None:
    # "$3" and "3 cups": equal, but not written alike; the 3 of 3+3 may be either, so both keep their value
    item = {"question": "A cup costs $3 and Ann buys 3 cups and 5 plates. How much is 3 more than the cost of one cup?",
            "answer": "3+3=<<3+3=6>>6\n5*3=<<5*3=15>>15\n#### 6"}
    plan = build_plan(parse_item(item, "m"))
    assert plan.ties == ()
    assert all(plan.item.literals[i].text != "3" for i in plan.resampled)


def test_later_attempts_change_a_random_part_of_the_numbers_ties_together() -> None:
    import random

    from faithsieve.rewrite.offline import _draw

    plan = build_plan(parse_item(RIDES, "r"))
    (twos,) = plan.ties
    rng = random.Random(0)
    full = [_draw(plan, rng) for _ in range(50)]
    assert all(set(d) == set(plan.resampled) for d in full)
    some = [_draw(plan, rng, some=True) for _ in range(200)]
    sizes = {len(d) for d in some}
    assert min(sizes) < len(plan.resampled) and max(sizes) == len(plan.resampled)
    for d in some:
        assert set(d) <= set(plan.resampled)
        assert (twos[0] in d) == (twos[1] in d) and (twos[0] not in d or d[twos[0]] == d[twos[1]])
    # a rewrite that keeps some numbers is verified like any other
    partial = next(d for d in some if 0 < len(d) < len(plan.resampled))
    from faithsieve.rewrite.plan import check_readings_agree

    assert isinstance(check_readings_agree(plan, partial), list)


def test_written_fractions_justify_their_value_and_unit_numerators() -> None:
    from faithsieve.rewrite.gsm8k import cues_for, written_fractions

    q = "He ate 1/4 of the pie, two-thirds of the cake, a quarter of the bread and 3/2 cups; on 12/25 he left."
    # 3/2 is improper; a date-like 12/25 is read as a fraction too (at worst a spare candidate, never a changed value)
    assert set(written_fractions(q)) == {Fraction(1, 4), Fraction(2, 3), Fraction(12, 25)}
    assert cues_for(Fraction(2, 3), q) == "two-thirds" and cues_for(Fraction(3, 4), q) is None
    jenna = {"question": "Jenna picked half as many apples as her mom. If her mom got 20 apples, how many apples did "
                         "they both pick?",
             "answer": "Jenna got 1/2 * 20 apples = <<20*1/2=10>>10 apples\nTogether, they had 10 apples + 20 apples "
                       "= <<10+20=30>>30 apples\n#### 30"}
    rows, outcome = rewrite_item(jenna, "j", seed=0, variants=2)
    assert outcome["kept"] == 2
    for r in rows:
        mom = Fraction(r["inputs"][0]["new"])
        assert Fraction(r["answer"]) == mom * Fraction(3, 2) and check_row(r) == []
    uriah = {"question": "His comic books weigh 1/4 pound each. If he removes 30 comic books, how many pounds is that?",
             "answer": "30 comic books weigh 30 x .25 = <<30*.25=7.5>>7.5 pounds\n#### 7.5"}
    assert [s.key() for s in build_plan(parse_item(uriah, "u")).readings[0][-1]] == ["q2", "c1/4"]


def test_a_one_that_is_no_unit_numerator_still_has_no_source() -> None:
    # "5-1": the 1 is $1 = 100 cents, computed in prose; "half" justifies the 1 of 1/2 only
    item = {"question": "Marisa gets $5 every day and spends half of 100 cents on candy. How much does she save?",
            "answer": "100 cents = $1, so she spends 1/2 of it.\nShe saves 5-1=<<5-1=4>>4 dollars.\n#### 4"}
    with pytest.raises(ItemRejected) as exc:
        build_plan(parse_item(item, "m"))
    assert exc.value.reason == "no_literal_source"


ADAM = {"question": "You have to be 4 feet tall to ride the coaster. Adam's height is 40 inches and he grows 2 inches "
                    "a year. How many years until he is tall enough to ride it?",
        "answer": "Adam needs to grow 8 inches because 48 -40= <<48-40=8>>8\nIt will take 4 years because "
                  "8/2=<<8/2=4>>4\n#### 4"}


def test_a_number_with_a_unit_may_be_written_converted() -> None:
    from faithsieve.rewrite.plan import conversion_factors

    plan = build_plan(parse_item(ADAM, "a"))
    feet = next(lit.index for lit in plan.item.literals if lit.text == "4")
    assert [s.key() for s in plan.candidates[0][0]] == [f"v{feet}*12"]  # 48 = 4 feet in inches
    rows, outcome = rewrite_item(ADAM, "a", seed=0, variants=3)
    assert outcome["kept"] == 3
    for r in rows:
        new = {x["original"]: Fraction(x["new"]) for x in r["inputs"]}
        height, rate = new.get("4", Fraction(4)), new.get("2", Fraction(2))
        assert Fraction(r["answer"]) == (12 * height - new.get("40", Fraction(40))) / rate
        assert check_row(r) == []
        bad = copy.deepcopy(r)  # a conversion factor the question's units do not justify
        bad["graph"][0]["sources"][0] = f"v{feet}*7"
        assert check_row(bad) != []
    # the unit must be the number's own: "3 dogs" are not 21 days although the question names weeks and days
    assert conversion_factors("3 dogs eat for a week, 7 days", "dogs eat") == ()
    assert conversion_factors("3 weeks have 21 days", " weeks have") == (Fraction(7), Fraction(1, 7))


def test_expressions_past_max_ops_are_not_compared_but_held(monkeypatch: pytest.MonkeyPatch) -> None:
    from faithsieve.rewrite import identity

    assert len(build_plan(parse_item(PUZZLE, "p")).resampled) == 1
    monkeypatch.setattr(identity, "MAX_OPS", -1)  # every difference is then too large to compare
    with pytest.raises(ItemRejected) as exc:
        build_plan(parse_item(PUZZLE, "p"))
    assert exc.value.reason == "nothing_to_resample"
