"""A fast subset of the scripted-model harness (``bench/scripted_llm.py``): the method over HTTP
against a persona that answers from each item's label. The full tables are the bench's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.llm.persona import Item, Persona, accuracy

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets" / "raw" / "proofloc-university"


def test_noise_falls_with_the_length_judged() -> None:
    assert accuracy(0) == pytest.approx(0.95)
    assert accuracy(150) > accuracy(1100) > accuracy(5000) > 0.55


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


def test_llm_mode_costs_at_most_six_judge_calls(bench: object) -> None:
    # issue 27's planning bound, under the perfect persona (tokens as the persona counts them: characters / 4)
    items = _items(12)
    judge = bench.run(items, "perfect", "judge")  # type: ignore[attr-defined]
    llm = bench.run(items, "perfect", "llm")  # type: ignore[attr-defined]
    assert llm["exact"] == 1.0 and llm["tokens_per_item"] <= 6 * judge["tokens_per_item"], (llm, judge)
    # one call splits the steps and gives the tree; no second structure call for a faithful split
    assert llm["by_prompt"]["decompose_tree"]["calls"] == 1.0
    assert "state_tree" not in llm["by_prompt"] and "repair_check" not in llm["by_prompt"]
