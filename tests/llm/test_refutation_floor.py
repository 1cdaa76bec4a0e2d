"""The offline refutation floor of ``--mode llm``: an exact refutation of a formula the proof writes is
evidence of its step even when the model's decomposition drops that formula and every review says fine.

The model is the scripted server playing the ``dismissive`` persona (``tests/llm/persona.py``); the
expected answers come from the examples' labels, never from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from faithsieve.core.settings import Settings
from faithsieve.pipeline import Pipeline
from faithsieve.split import proof_from_input
from tests.llm.fakeserver import FakeOpenAI
from tests.llm.persona import Item, Persona

EXAMPLES = Path(__file__).resolve().parents[2] / "datasets" / "examples"


def _example(name: str) -> tuple[dict[str, object], Item]:
    data = json.loads((EXAMPLES / f"{name}.json").read_text())
    proof = proof_from_input(data)
    expected = data["expected"]
    assert isinstance(expected, dict)
    return data, Item(problem=proof.problem, steps=tuple(s.text for s in proof.steps),
                      label=expected.get("first_error_step"))


@pytest.mark.parametrize("name", ["24_arith_fundraiser_sum", "27_latex_power_of_two"])
def test_a_dismissive_model_cannot_clear_an_exact_refutation(name: str) -> None:
    data, item = _example(name)
    assert item.label is not None
    persona = Persona([item], kind="dismissive")
    with FakeOpenAI() as server:
        server.respond_with(persona.reply)
        settings = Settings(mode="llm", llm_base_url=server.base_url, llm_model=server.model, llm_cache=False,
                            llm_structured="json_schema", llm_timeout_s=30, llm_backoff_s=0.0)
        v = Pipeline.from_settings(settings).localize(proof_from_input(data))
    assert persona.by_prompt.get("review") or persona.by_prompt.get("review_units"), "the reviews ran (and all said fine)"
    # the model's sub-steps dropped the claim: no unit writes it
    assert v.audit is not None and v.audit.decomposition == "llm"
    assert (v.verdict, v.first_error_step, v.basis) == ("error", item.label, "checked")
    refuted = [e for e in v.steps[item.label - 1].evidence if e.status == "refuted" and e.basis == "checked"]
    assert refuted and all(e.counterexample for e in refuted)


def test_the_same_model_on_a_correct_proof_is_correct() -> None:
    data, item = _example("04_linear_equation_solved")
    assert item.label is None
    persona = Persona([item], kind="dismissive")
    with FakeOpenAI() as server:
        server.respond_with(persona.reply)
        settings = Settings(mode="llm", llm_base_url=server.base_url, llm_model=server.model, llm_cache=False,
                            llm_structured="json_schema", llm_timeout_s=30, llm_backoff_s=0.0)
        v = Pipeline.from_settings(settings).localize(proof_from_input(data))
    assert v.verdict == "correct" and v.basis in ("reviewed", "judged")


# ---------------------------------------------------------------------------------------
# An exact refutation is overruled only by an explicit answer about it (the ``materiality`` prompt)


def _run(data: dict[str, object], persona: Persona, wrap: object = None) -> object:
    with FakeOpenAI() as server:
        server.respond_with(wrap or persona.reply)  # type: ignore[arg-type]
        settings = Settings(mode="llm", llm_base_url=server.base_url, llm_model=server.model, llm_cache=False,
                            llm_structured="json_schema", llm_timeout_s=30, llm_backoff_s=0.0)
        return Pipeline.from_settings(settings).localize(proof_from_input(data))


def test_a_material_refutation_stands_after_one_small_call() -> None:
    data, item = _example("24_arith_fundraiser_sum")
    persona = Persona([item], kind="perfect")
    v = _run(data, persona)
    assert (v.verdict, v.first_error_step, v.basis) == ("error", item.label, "checked")  # type: ignore[attr-defined]
    assert persona.by_prompt["materiality"][0] == 1


def test_an_immaterial_refutation_named_by_the_answer_is_overruled_and_kept_in_the_evidence() -> None:
    # the same proof, labelled correct: the persona says the refutation does not matter, naming the formula
    data, item = _example("24_arith_fundraiser_sum")
    item = Item(item.problem, item.steps, None)
    persona = Persona([item], kind="perfect")
    v = _run(data, persona)
    assert (v.verdict, v.basis) == ("correct", "judged"), v.reason  # type: ignore[attr-defined]
    assert "overruled" in (v.reason or "")  # type: ignore[attr-defined]
    step = v.steps[1].evidence  # type: ignore[attr-defined]
    assert any(e.basis == "checked" and e.status == "refuted" and e.counterexample for e in step)
    overruled = [e for e in step if e.method == "materiality"]
    assert overruled and overruled[0].basis == "judged" and overruled[0].claim.startswith("overruled")
    assert persona.by_prompt["materiality"][0] == 1


def _answer_materiality_with(persona: Persona, content: str) -> object:
    from tests.llm.fakeserver import Reply

    def reply(body: dict[str, object]) -> object:
        name = body.get("response_format", {}).get("json_schema", {}).get("name")  # type: ignore[union-attr]
        return Reply.ok(content) if name == "materiality" else persona.reply(body)  # type: ignore[arg-type]
    return reply


@pytest.mark.parametrize("content", [
    json.dumps({"material": False, "reason": "fine"}),            # does not name the formula
    json.dumps({"reason": "fine"}),                                # no field
    "The step looks fine to me.",                                  # no JSON
])
def test_only_an_explicit_immaterial_about_the_formula_moves_the_answer(content: str) -> None:
    data, item = _example("24_arith_fundraiser_sum")
    persona = Persona([Item(item.problem, item.steps, None)], kind="perfect")
    v = _run(data, persona, _answer_materiality_with(persona, content))
    assert (v.verdict, v.first_error_step, v.basis) == ("error", 2, "checked")  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["24_arith_fundraiser_sum", "27_latex_power_of_two"])
def test_the_dismissive_model_answers_fine_without_the_field_and_the_floor_stands(name: str) -> None:
    data, item = _example(name)
    persona = Persona([item], kind="dismissive")
    v = _run(data, persona)
    assert (v.verdict, v.first_error_step, v.basis) == ("error", item.label, "checked")  # type: ignore[attr-defined]
    assert persona.by_prompt["materiality"][0] == 2  # an unreadable answer is asked once more, as every prompt is


def test_no_materiality_call_when_no_refutation_decides() -> None:
    data, item = _example("04_linear_equation_solved")
    persona = Persona([item], kind="perfect")
    v = _run(data, persona)
    assert v.verdict == "correct" and "materiality" not in persona.by_prompt  # type: ignore[attr-defined]


def test_a_suspect_refutation_is_no_floor() -> None:
    """A refutation of a kind not yet measured clean (claimed_solution, while the reference bench finds it misreading
    correct solutions) is evidence the fusion weighs as a prior, never the floor; when the kind decides, it is."""
    from faithsieve.obligations.kinds.flagtable import suspect_reason

    data, item = _example("37_wrong_linear_solution")
    v = _run(data, Persona([item], kind="dismissive"))
    suspect = [e for e in v.suspect if e.step == item.label]  # type: ignore[attr-defined]
    if suspect_reason("claimed_solution") is None:
        assert (v.verdict, v.first_error_step, v.basis) == ("error", item.label, "checked")  # type: ignore[attr-defined]
    else:
        assert suspect and all(e.suspect and "claimed_solution" in e.suspect for e in suspect)
        assert v.basis != "checked"  # type: ignore[attr-defined]
