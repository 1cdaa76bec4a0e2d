"""Reading JSON out of model answers: the shapes models really return, and the bounds."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from faithsieve.llm.structured import MAX_ANSWER_CHARS, extract_json, parse_answer


class Answer(BaseModel):
    answer: int
    reason: str = ""


@pytest.mark.parametrize(("text", "expected"), [
    ('{"answer": 3}', {"answer": 3}),
    ('Sure! Here it is:\n```json\n{"answer": 3, "reason": "x"}\n```\nHope it helps.', {"answer": 3, "reason": "x"}),
    ('{"answer": 3, "reason": "a } inside a string"}', {"answer": 3, "reason": "a } inside a string"}),
    ('{not json} then {"answer": 4}', {"answer": 4}),
    ('{"answer": 5, "extra": [1, {"deep": true}]}', {"answer": 5, "extra": [1, {"deep": True}]}),
])
def test_extract_json_finds_the_object(text: str, expected: object) -> None:
    assert extract_json(text) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("I cannot help with that request.", "no JSON object"),
    ('{"answer": 3, "reason": "cut off', "not closed"),
    ("", "no JSON object"),
])
def test_extract_json_failures_are_values_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        extract_json(text)


def test_nesting_bound_is_enforced_before_parsing() -> None:
    deep = '{"a":' + "[" * 64 + "1" + "]" * 64 + "}"
    with pytest.raises(ValueError, match="nested deeper than 64"):
        extract_json(deep)
    ok = '{"a":' + "[" * 63 + "1" + "]" * 63 + "}"
    assert isinstance(extract_json(ok), dict)


def test_answer_size_bound() -> None:
    with pytest.raises(ValueError, match="longer than"):
        extract_json('{"answer": 1}' + " " * MAX_ANSWER_CHARS)


@pytest.mark.parametrize(("text", "message"), [
    ('{"answer": "three"}', "answer"),
    ('{"reason": "no answer key"}', "answer"),
    ("[1, 2, 3]", "no JSON object"),
])
def test_parse_answer_reports_schema_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_answer(text, Answer)


def test_extra_keys_are_ignored_by_default_models() -> None:
    assert parse_answer('{"answer": 2, "confidence": 0.9}', Answer).answer == 2
