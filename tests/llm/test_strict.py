"""OpenAI strict ``json_schema``: the validator follows the documented rules, every shipped answer
schema passes it once rewritten, the rewrite loses nothing our parsing needs, and vLLM's guided
decoding is sent as vLLM documents it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from faithsieve.llm.client import extra_body, response_format, strict_answer
from faithsieve.llm.strict import drop_optional_nulls, strict_schema, strict_violations
from faithsieve.llm.types import ChatMessage, ChatRequest
from faithsieve.rewrite.llm_mode import (
    AnswerClass,
    ExtractedSpan,
    RewriteCandidate,
    ScreenVerdict,
)
from faithsieve.stages.fusion import Reexamination, SynthesisAnswer
from faithsieve.stages.gate import SemanticCheck
from faithsieve.stages.judge import answer_model
from faithsieve.stages.llm_decompose import DecomposeTreeAnswer, RepairAnswer
from faithsieve.stages.scan import ReviewOut, ScanAnswer, UnitReviewsAnswer
from faithsieve.stages.tree_build import TreeAnswer
from faithsieve.stages.typer import ObligationsAnswer

SHIPPED: list[type[BaseModel]] = [DecomposeTreeAnswer, RepairAnswer, TreeAnswer, ScanAnswer, ReviewOut, UnitReviewsAnswer, ObligationsAnswer,
                                  SemanticCheck, Reexamination, answer_model(7, SynthesisAnswer), answer_model(7),
                                  RewriteCandidate, ScreenVerdict, ExtractedSpan, AnswerClass]


@pytest.mark.parametrize(("schema", "problem"), [
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": False}, None),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": [], "additionalProperties": False},
     "not required: a"),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}, "additionalProperties"),
    ({"type": "object", "properties": {"a": {"type": "string", "default": ""}}, "required": ["a"],
      "additionalProperties": False}, "'default'"),
    ({"type": "object", "properties": {"a": {"type": "string", "maxLength": 9}}, "required": ["a"],
      "additionalProperties": False}, "'maxLength'"),
    ({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "object", "properties": {"b": {"type": "integer"}}}}},
      "required": ["a"], "additionalProperties": False}, "root.a[]: additionalProperties"),
    ({"anyOf": [{"type": "object"}]}, "root: must be an object"),
    ({"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}]}}, "required": ["a"],
      "additionalProperties": False}, "'oneOf'"),
])
def test_validator_follows_the_documented_rules(schema: dict[str, Any], problem: str | None) -> None:
    found = strict_violations(schema)
    assert (found == []) if problem is None else any(problem in f for f in found), found


def _deep(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        node = {"type": "object", "properties": {"x": node}, "required": ["x"], "additionalProperties": False}
    return node


def test_nesting_bound() -> None:
    assert strict_violations(_deep(5)) == []          # five levels of objects
    assert any("deeper" in f for f in strict_violations(_deep(6)))


@pytest.mark.parametrize("model", SHIPPED, ids=lambda m: m.__name__)
def test_every_shipped_schema_passes_once_rewritten(model: type[BaseModel]) -> None:
    raw = model.model_json_schema()
    assert strict_violations(strict_schema(raw)) == []


def test_pydantic_schemas_are_not_strict_as_they_are() -> None:
    assert strict_violations(ReviewOut.model_json_schema())  # why json_schema mode does not say strict


def test_an_answer_with_nulls_for_optional_fields_reads_as_the_defaults() -> None:
    schema = ObligationsAnswer.model_json_schema()
    answer = {"obligations": [{"slot": 1, "claim": "12 + 22 = 34", "equation": None, "use_formal": None,
                               "translation_confidence": None, "priority": None, "reason": None}]}
    cleaned = drop_optional_nulls(answer, schema)
    parsed = ObligationsAnswer.model_validate(cleaned)
    ob = parsed.obligations[0]
    assert (ob.equation, ob.use_formal, ob.priority, ob.reason) == (None, True, 0.5, "")
    assert json.loads(strict_answer(json.dumps(answer), schema)) == cleaned
    assert strict_answer("not json", schema) == "not json"


def _request() -> ChatRequest:
    return ChatRequest(prompt_id="review", prompt_version="2", messages=(ChatMessage(role="user", content="x"),),
                       json_schema=ReviewOut.model_json_schema(), schema_name="review")


def test_wire_forms_per_mode() -> None:
    req = _request()
    strict = response_format("json_schema_strict", req)
    assert strict is not None and strict["json_schema"]["strict"] is True
    assert strict_violations(strict["json_schema"]["schema"]) == []
    plain = response_format("json_schema", req)
    assert plain is not None and "strict" not in plain["json_schema"]
    assert response_format("guided_json", req) is None
    body = extra_body("guided_json", req)
    assert body is not None and body["guided_json"]["properties"].keys() == ReviewOut.model_json_schema()["properties"].keys()
    assert extra_body("json_schema", req) is None


def test_guided_json_reaches_the_server() -> None:
    from tests.llm.fakeserver import FakeOpenAI

    with FakeOpenAI() as server:
        server.reply('{"verdict": "correct"}')
        client = server.client(structured="guided_json")
        client.complete(_request())
        body = server.requests[0]
        assert "response_format" not in body and body["guided_json"]["type"] == "object"
