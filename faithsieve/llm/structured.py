"""Ask a model for JSON and parse it into a pydantic model, or say plainly that it could not.

``ask`` renders a prompt, requests JSON shaped by the model's schema, and validates the
answer. A malformed answer (no JSON, truncated, wrong types, refusal) is retried once with
the validation error shown to the model; a second failure is ``Unparsed`` carrying the raw
text. An endpoint that cannot answer is ``Unparsed`` with ``unavailable=True``. Neither is
ever a pass: callers turn ``Unparsed`` into ``unknown`` evidence.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable, Generic, Mapping, TypeVar

from pydantic import BaseModel, ValidationError

from faithsieve.llm.prompts import Prompt
from faithsieve.llm.types import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    LLMClient,
    LLMError,
)

T = TypeVar("T", bound=BaseModel)

MAX_ANSWER_CHARS = 200_000
"""Answers longer than this are not parsed (a runaway generation is a failure, not data)."""
_MAX_JSON_NESTING = 64
"""Most levels of ``{``/``[`` nesting in the JSON read from an answer."""


@dataclass(frozen=True)
class Parsed(Generic[T]):
    """A validated answer."""

    value: T
    raw: str


@dataclass(frozen=True)
class Unparsed:
    """No usable answer: ``reason`` says why, ``raw`` holds what the model said (possibly "")."""

    reason: str
    raw: str = ""
    unavailable: bool = False


def extract_json(text: str) -> object:
    """The first complete JSON object in ``text`` (code fences and prose around it are ignored).

    Raises ``ValueError`` when there is none. Bounded: the text is capped, and nesting deeper
    than 64 levels is refused before ``json.loads`` sees it.
    """
    if len(text) > MAX_ANSWER_CHARS:
        raise ValueError(f"answer longer than {MAX_ANSWER_CHARS} characters")
    start = text.find("{")
    while start != -1:
        end = _matching_brace(text, start)
        if end is None:
            raise ValueError("JSON object not closed (answer truncated?)")
        try:
            return json.loads(text[start:end + 1])
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
    raise ValueError("no JSON object in the answer")


def _matching_brace(text: str, start: int) -> int | None:
    depth, in_str, esc = 0, False, False
    for i in range(start, len(text)):
        c = text[i]
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "{[":
            depth += 1
            if depth > _MAX_JSON_NESTING:
                raise ValueError(f"JSON nested deeper than {_MAX_JSON_NESTING} levels")
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i
    return None


def parse_answer(text: str, model: type[T]) -> T:
    """Validate ``text`` as ``model`` (raises ``ValueError`` with a one-line reason)."""
    data = extract_json(text)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "answer"
        raise ValueError(f"{exc.error_count()} schema error(s); {loc}: {first['msg']}") from None


def ask(client: LLMClient, prompt: Prompt, values: Mapping[str, str], model: type[T], *,
        max_tokens: int = 1024, temperature: float = 0.0, seed: int | None = None,
        budget: Callable[[], str] | None = None) -> Parsed[T] | Unparsed:
    """Render ``prompt`` with ``values``, ask for JSON shaped as ``model``, parse it (one retry).
    ``budget()`` is asked before the retry: a non-empty answer (why the budget is spent) stops it."""
    messages = prompt.render(values)
    schema = model.model_json_schema()
    request = ChatRequest(prompt_id=prompt.id, prompt_version=prompt.version, messages=messages,
                          temperature=temperature, max_tokens=max_tokens, seed=seed, json_schema=schema,
                          schema_name=prompt.id)
    reason = ""
    answer: ChatResponse | None = None
    for attempt in range(2):
        try:
            answer = client.complete(request)
        except LLMError as exc:
            client.usage.count("failures")
            return Unparsed(reason=f"endpoint: {exc.message}", raw=answer.text if answer else "", unavailable=True)
        try:
            return Parsed(parse_answer(answer.text, model), answer.text)
        except ValueError as exc:
            reason = str(exc)
            if answer.finish_reason == "length":
                reason += " (answer cut at the token limit)"
        spent = budget() if budget is not None and attempt == 0 else ""
        if spent:
            return Unparsed(reason=f"{reason}; not retried: {spent}", raw=answer.text, unavailable=True)
        if attempt == 0:
            retry_note = ChatMessage(role="user", content=(
                f"That answer could not be used: {reason}. Reply again with only one JSON object "
                "that follows the required schema, and nothing else."))
            request = request.model_copy(update={"messages": (*messages, ChatMessage(role="assistant", content=answer.text[:4000]),
                                                              retry_note)})
    client.usage.count("unparsed")
    return Unparsed(reason=reason, raw=answer.text if answer else "")
