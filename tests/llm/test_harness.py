"""A fast subset of the scripted-model harness (``bench/scripted_llm.py``): the method over HTTP
against a persona that answers from each item's label. The full tables are the bench's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.llm.persona import Item, Persona, accuracy, clauses

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets" / "raw" / "proofloc-university"


def test_noise_falls_with_the_claims_judged() -> None:
    assert accuracy(1) == pytest.approx(0.95)
    assert accuracy(1) > accuracy(3) > accuracy(10) > accuracy(40) > 0.55


def test_clauses_are_verbatim_and_never_cut_inside_math() -> None:
    step = "Let $a, so b$ be given, so a = 2; hence b = 4. Then $c$ follows, since c = a + b."
    cut = clauses(step)
    assert cut == ["Let $a, so b$ be given,", "so a = 2;", "hence b = 4.", "Then $c$ follows,", "since c = a + b."]
    assert all(piece in step for piece in cut)
    assert clauses("One claim.") == ["One claim."]


def test_only_the_unit_that_writes_the_steps_conclusion_holds_the_error() -> None:
    item = Item("Show that 9 is a square.", ("We know 9 = 3 * 3.", "Since 3 is odd, so 9 = 3 * 4."), 2)
    p = Persona([item], kind="perfect")
    assert p._unit_wrong(item, 2, "so 9 = 3 * 4.") and p._unit_wrong(item, 2, item.steps[1])
    assert not p._unit_wrong(item, 2, "Since 3 is odd,") and not p._unit_wrong(item, 1, item.steps[0])


def test_a_resample_repeats_the_first_draw_about_half_the_time() -> None:
    p = Persona([], kind="noisy")
    same = sum(p._right(f"unit {i}", {"seed": 1, "temperature": 0.7}, 30, "review")
               == p._right(f"unit {i}", {}, 30, "review") for i in range(2000))
    # with RHO = 0.5 and p(30) ~ 0.55: agreement 0.5 + 0.5 * (p^2 + (1 - p)^2) ~ 0.75
    assert 0.7 < same / 2000 < 0.8


def test_the_persona_finds_the_item_and_answers_its_label() -> None:
    items = [Item("Show that 7 is odd.", ("7 = 2 * 3 + 1.", "So 7 is odd."), None),
             Item("Show that 9 is a square.", ("9 = 3 * 4.", "So 9 is a square."), 1)]
    p = Persona(items, kind="perfect")
    body = {"messages": [{"role": "user", "content": "Problem:\nShow that 9 is a square.\n\nSolution: ..."}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "judge"}}}
    assert '"step 1"' in p.answer("judge", body["messages"][0]["content"], body)
    assert p.find("nothing known") is None


@pytest.fixture(scope="module")
def bench() -> object:
    if not DATA.is_dir():
        pytest.skip(f"ProofLoc-University is not at {DATA} (the shared datasets folder)")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import scripted_llm  # type: ignore[import-not-found]

    return scripted_llm


def _items(n: int) -> list[Item]:
    from tests.llm.persona import load_items

    items = load_items(str(DATA))
    flawed = [it for it in items if it.label is not None][: n // 2]
    correct = [it for it in items if it.label is None][: n - len(flawed)]
    return flawed + correct


def test_perfect_persona_is_exact_in_both_modes(bench: object) -> None:
    items = _items(8)
    for mode in ("judge", "llm"):
        row = bench.run(items, "perfect", mode)  # type: ignore[attr-defined]
        assert row["exact"] == 1.0 and row["unknown"] == 0, row


def test_saboteur_never_gets_checked_from_model_statements(bench: object) -> None:
    row = bench.run(_items(8), "saboteur", "llm")  # type: ignore[attr-defined]
    # every checked record's statement is written in its step; the saboteur's own equations are never checked
    assert row["checked_from_model_statements"] == 0, row


def test_llm_mode_costs_at_most_six_judge_calls_besides_its_anchor(bench: object) -> None:
    # issue 27's planning bound, under the perfect persona (tokens as the persona counts them: characters / 4),
    # plus the whole-proof judgment the answer is anchored on (issue 36): one judge call more, and the
    # corroborating synthesis where the local answer departs from it (7.2 judge calls' tokens on these 12 items)
    items = _items(12)
    judge = bench.run(items, "perfect", "judge")  # type: ignore[attr-defined]
    llm = bench.run(items, "perfect", "llm")  # type: ignore[attr-defined]
    assert llm["exact"] == 1.0 and llm["tokens_per_item"] <= 7.5 * judge["tokens_per_item"], (llm, judge)
    assert llm["by_prompt"]["judge"]["calls"] == 1.0
    # one call splits the steps and gives the tree; no second structure call for a faithful split
    assert llm["by_prompt"]["decompose_tree"]["calls"] == 1.0
    assert "state_tree" not in llm["by_prompt"] and "repair_check" not in llm["by_prompt"]


def test_items_that_share_a_problem_are_told_apart_by_their_steps() -> None:
    a = Item("Compute 2 + 2.", ("2 + 2 = 4.", "So the answer is 4."), None)
    b = Item("Compute 2 + 2.", ("2 + 2 = 5.", "So the answer is 5."), 1)
    p = Persona([a, b], kind="perfect")
    assert p.find("Problem: Compute 2 + 2.\nStep 1: 2 + 2 = 5.\nStep 2: So the answer is 5.") is b
    assert p.find("Problem: Compute 2 + 2.\nStep 1: 2 + 2 = 4.\nStep 2: So the answer is 4.") is a


def test_a_review_reads_a_unit_text_that_runs_over_several_lines() -> None:
    # a displayed formula puts the step's last clause on its own line: the unit that writes it holds the error
    item = Item("Solve 3 + x = 5.", ("We subtract 3:\n\\[ x = 5 - 3 = 3 \\]",), 1)
    p = Persona([item], kind="perfect")
    user = ("Problem:\nSolve 3 + x = 5.\n\nUnit e0 (step 1, sub-step 1.1)\nText: We subtract 3:\n\\[ x = 5 - 3 = 3 \\]"
            "\n\nUnit e1 (step 1, sub-step 1.2)\nText: Done.")
    assert p._judged_unit(item, user) == (1, "We subtract 3:\n\\[ x = 5 - 3 = 3 \\]")
    reviews = __import__("json").loads(p._review_units(item, user, {}))["reviews"]
    assert [r["verdict"] for r in reviews] == ["incorrect", "correct"]


def _split(n: int) -> list[Item]:
    from tests.llm.persona import load_items

    items = load_items(str(DATA))
    return [items[i * len(items) // n] for i in range(n)]


@pytest.mark.parametrize("persona", ["repeating", "overflag", "flat70", "verbose"])
def test_llm_never_falls_below_its_judge_when_reviews_repeat(bench: object, persona: str) -> None:
    # issue 36: re-samples that repeat a false alarm, reviews that overflag or err as often as whole proofs: the
    # method holds its own whole-proof judgment (within 2 points)
    items = _split(16)
    judge = bench.run(items, persona, "judge")  # type: ignore[attr-defined]
    llm = bench.run(items, persona, "llm")  # type: ignore[attr-defined]
    assert llm["exact"] >= judge["exact"] - 0.02 and llm["unknown"] == 0, (llm, judge)


def test_llm_keeps_its_gain_where_reviews_are_independent(bench: object) -> None:
    items = _split(16)
    judge = bench.run(items, "independent", "judge")  # type: ignore[attr-defined]
    llm = bench.run(items, "independent", "llm")  # type: ignore[attr-defined]
    assert llm["exact"] >= judge["exact"] + 0.10, (llm, judge)


def test_a_saboteur_costs_at_most_ten_judgments(bench: object) -> None:
    items = _split(12)
    judge = bench.run(items, "saboteur", "judge")  # type: ignore[attr-defined]
    llm = bench.run(items, "saboteur", "llm")  # type: ignore[attr-defined]
    assert llm["tokens_per_item"] <= 10 * judge["tokens_per_item"], (llm, judge)
    assert llm["checked_from_model_statements"] == 0
