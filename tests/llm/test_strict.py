"""OpenAI strict ``json_schema``: the validator follows the documented rules, every shipped answer
schema passes it once rewritten, the rewrite loses nothing our parsing needs, and vLLM's guided
decoding is sent as vLLM documents it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field

from faithsieve.llm.client import extra_body, response_format, strict_answer
from faithsieve.llm.strict import drop_optional_nulls, strict_schema, strict_violations
from faithsieve.llm.types import ChatMessage, ChatRequest
from faithsieve.rewrite.llm_mode import (
    AnswerClass,
    ExtractedSpan,
    RewriteCandidate,
    ScreenVerdict,
)
from faithsieve.stages.fusion import Materiality, Reexamination, SynthesisAnswer
from faithsieve.stages.gate import SemanticCheck
from faithsieve.stages.judge import answer_model
from faithsieve.stages.llm_decompose import DecomposeTreeAnswer, RepairAnswer
from faithsieve.stages.tree_build import TreeAnswer
from faithsieve.stages.tree_scan import ReviewOut, ScanAnswer, UnitReviewsAnswer
from faithsieve.stages.typer import ObligationsAnswer

SHIPPED: list[type[BaseModel]] = [DecomposeTreeAnswer, RepairAnswer, TreeAnswer, ScanAnswer, ReviewOut, UnitReviewsAnswer, ObligationsAnswer,
                                  SemanticCheck, Reexamination, Materiality, answer_model(7, SynthesisAnswer), answer_model(7),
                                  RewriteCandidate, ScreenVerdict, ExtractedSpan, AnswerClass]


def _one(prop: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"a": prop}, "required": ["a"], "additionalProperties": False}


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
    # the type-specific constraints the guide lists as supported, each on its own type
    (_one({"type": "string", "pattern": "^@[a-z]+$"}), None),
    (_one({"type": "string", "format": "email"}), None),
    (_one({"type": "string", "format": "uri"}), "format 'uri' not supported"),
    (_one({"type": "integer", "minimum": 0, "exclusiveMaximum": 10, "multipleOf": 2}), None),
    (_one({"type": ["number", "null"], "maximum": 1, "exclusiveMinimum": 0}), None),
    (_one({"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3}), None),
    (_one({"type": "string", "minimum": 0}), "'minimum' not supported on type 'string'"),
    (_one({"anyOf": [{"type": "string"}, {"type": "null"}], "pattern": "x"}), "'pattern' not supported on type"),
    # and what it does not support
    (_one({"type": "string", "minLength": 1}), "'minLength'"),
    (_one({"type": "array", "items": {"type": "string"}, "uniqueItems": True}), "'uniqueItems'"),
    (_one({"allOf": [{"type": "string"}]}), "'allOf'"),
    (_one({"type": "string", "not": {"const": ""}}), "'not'"),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": False,
      "dependentRequired": {"a": []}}, "'dependentRequired'"),
    ({"type": "object", "properties": {}, "required": [], "additionalProperties": False, "patternProperties": {}},
     "'patternProperties'"),
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
    assert strict_violations(_deep(10)) == []          # ten levels of objects
    assert any("deeper" in f for f in strict_violations(_deep(11)))


def test_whole_schema_bounds() -> None:
    def enums(*sizes: int, width: int = 1) -> dict[str, Any]:
        props = {f"e{i}": {"type": "string", "enum": [f"{j:0{width}d}" for j in range(n)]} for i, n in enumerate(sizes)}
        return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}

    assert strict_violations(enums(500, 500, width=3)) == []
    assert any("1001 enum values in all" in f for f in strict_violations(enums(500, 501, width=3)))
    assert strict_violations(enums(251, width=59)) == []  # 14,809 characters
    assert any("past 250 values" in f for f in strict_violations(enums(251, width=60)))  # 15,060
    many = {f"p{i}": {"type": "integer"} for i in range(5001)}
    wide = {"type": "object", "properties": many, "required": list(many), "additionalProperties": False}
    assert any("5001 properties in all" in f for f in strict_violations(wide))
    long = {f"{i:0200d}": {"type": "integer"} for i in range(601)}  # 120,200 characters of names
    named = {"type": "object", "properties": long, "required": list(long), "additionalProperties": False}
    assert any("characters of names" in f for f in strict_violations(named))


def test_the_rewrite_keeps_only_structural_keywords() -> None:
    """Bounds strict mode would accept are dropped too (compatible servers support them unevenly; pydantic
    enforces them on the answer): what is sent is the same on every server."""
    class Bounded(BaseModel):
        score: float = Field(ge=0, le=1)
        tags: list[str] = Field(min_length=1, max_length=3)
        name: str = Field(pattern="^[a-z]+$", max_length=9)

    raw = Bounded.model_json_schema()
    sent = strict_schema(raw)
    assert strict_violations(sent) == []
    assert all(set(p) <= {"type", "items", "title", "description"} for p in sent["properties"].values()), sent
    assert any("maxLength" in f for f in strict_violations(raw))  # pydantic's own: not strict as it is


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
