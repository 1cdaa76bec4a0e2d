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


@pytest.mark.parametrize("name", ["37_wrong_linear_solution", "38_wrong_quadratic_root"])
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
