"""Plumbing checks against a real OpenAI-compatible server (CI: llama.cpp with SmolLM2-135M).

Selected with ``-m llm_live``; needs ``FAITHSIEVE_LIVE_BASE_URL`` (e.g. http://127.0.0.1:8089/v1)
and ``FAITHSIEVE_LIVE_MODEL`` (e.g. smollm2), otherwise every test is skipped.
``FAITHSIEVE_LIVE_STRUCTURED`` picks the structured mode (default ``json_object_schema``,
the form llama.cpp accepts). The latency of every call is printed at the end of the module
(visible with ``-s``) and, when ``FAITHSIEVE_LIVE_REPORT`` names a file, merged into that
JSON file under the key ``"client"``.

These tests check the wiring (HTTP, schema-constrained JSON, time limits, cache, failure
paths), not the quality of a 135M-parameter model's answers.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from faithsieve.llm.cache import ResponseCache
from faithsieve.llm.client import OpenAIClient
from faithsieve.llm.prompts import Prompt
from faithsieve.llm.structured import Parsed, Unparsed, ask
from faithsieve.llm.types import ChatMessage, ChatRequest, LLMError, StructuredMode

BASE_URL = os.environ.get("FAITHSIEVE_LIVE_BASE_URL", "")
MODEL = os.environ.get("FAITHSIEVE_LIVE_MODEL", "")
MODE: StructuredMode = os.environ.get("FAITHSIEVE_LIVE_STRUCTURED", "json_object_schema")  # type: ignore[assignment]

pytestmark = [
    pytest.mark.llm_live,
    pytest.mark.skipif(not (BASE_URL and MODEL),
                       reason="live LLM tests need FAITHSIEVE_LIVE_BASE_URL and FAITHSIEVE_LIVE_MODEL "
                              "(start a server with .ci/llm_server.sh start)"),
]


class Sum(BaseModel):
    answer: int
    reason: str = Field(max_length=80)


class Audit(BaseModel):
    """Several required fields: no 5-token answer can satisfy it."""

    step: int
    verdict: str
    justification: str
    confidence: float
    corrected_value: str


ARITH = Prompt(id="live_sum", version="1",
               system="You answer arithmetic questions. Reply with one JSON object with the keys "
                      "answer (an integer) and reason (a short string).",
               user="What is {{a}} plus {{b}}?")

FREE = Prompt(id="live_free", version="1", system="You are a helpful assistant.",
              user="Describe the number {{n}}.")


def live_client(**kwargs: Any) -> OpenAIClient:
    kwargs.setdefault("structured", MODE)
    kwargs.setdefault("timeout_s", 60.0)
    kwargs.setdefault("max_retries", 1)
    kwargs.setdefault("backoff_s", 0.5)
    return OpenAIClient(BASE_URL, MODEL, **kwargs)


def hello(version: str = "1") -> ChatRequest:
    return ChatRequest(prompt_id="live_hello", prompt_version=version, max_tokens=16, seed=1,
                       messages=(ChatMessage(role="user", content="Say hello in one short sentence."),))


@pytest.fixture(scope="module")
def record() -> Iterator[list[dict[str, Any]]]:
    """Collects one row per measured call; prints them and writes the report at the end."""
    rows: list[dict[str, Any]] = []
    yield rows
    if not rows:
        return
    print("\nlive LLM calls (latency per call):")
    for r in rows:
        print(f"  {r['check']:<28} calls={r['calls']} cached={r['cache_hits']} "
              f"latency_ms={r['latency_ms']:.1f} per_call_ms={r['per_call_ms']:.1f} wall_ms={r['wall_ms']:.1f}")
    target = os.environ.get("FAITHSIEVE_LIVE_REPORT")
    if target:
        path = Path(target)
        report: dict[str, Any] = {}
        if path.is_file():
            try:
                loaded = json.loads(path.read_text(encoding="utf-8"))
                report = loaded if isinstance(loaded, dict) else {}
            except json.JSONDecodeError:
                report = {}
        report["client"] = {"base_url": BASE_URL, "model": MODEL, "structured": MODE, "calls": rows}
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=2), encoding="utf-8")


def measure(rows: list[dict[str, Any]], check: str, client: OpenAIClient, started: float) -> None:
    u = client.usage.snapshot()
    rows.append({"check": check, "calls": u.calls, "cache_hits": u.cache_hits, "latency_ms": u.latency_ms,
                 "per_call_ms": round(u.latency_ms / u.calls, 1) if u.calls else 0.0,
                 "wall_ms": round((time.perf_counter() - started) * 1000.0, 1),
                 "prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens})


def test_plain_chat_call_answers(record: list[dict[str, Any]]) -> None:
    client = live_client()
    started = time.perf_counter()
    answer = client.complete(hello())
    measure(record, "plain chat", client, started)
    assert answer.text.strip()
    assert answer.model
    assert answer.completion_tokens > 0 and answer.prompt_tokens > 0
    assert answer.finish_reason in {"stop", "length"}
    assert answer.latency_ms > 0 and not answer.cached


def test_schema_constrained_json_validates(record: list[dict[str, Any]]) -> None:
    client = live_client()
    started = time.perf_counter()
    result = ask(client, ARITH, {"a": "2", "b": "3"}, Sum, max_tokens=128, seed=1)
    measure(record, f"ask {MODE}", client, started)
    assert isinstance(result, Parsed), result
    assert Sum.model_validate_json(result.raw) == result.value


def test_tiny_time_limit_fails_fast_instead_of_hanging(record: list[dict[str, Any]]) -> None:
    client = live_client(timeout_s=0.001, max_retries=0)
    started = time.perf_counter()
    with pytest.raises(LLMError):
        client.complete(hello("timeout"))
    result = ask(client, ARITH, {"a": "4", "b": "5"}, Sum, max_tokens=64)
    elapsed = time.perf_counter() - started
    measure(record, "tiny time limit", client, started)
    assert isinstance(result, Unparsed) and result.unavailable
    assert elapsed < 10.0
    assert client.usage.snapshot().failures == 1


def test_second_client_on_same_cache_file_makes_no_calls(tmp_path: Path, record: list[dict[str, Any]]) -> None:
    path = tmp_path / "live-cache.sqlite"
    first = live_client(cache=ResponseCache(path))
    started = time.perf_counter()
    a = first.complete(hello("cache"))
    measure(record, "cache: first run", first, started)
    assert first.usage.snapshot().calls == 1

    second = live_client(cache=ResponseCache(path))
    started = time.perf_counter()
    b = second.complete(hello("cache"))
    measure(record, "cache: second run", second, started)
    usage = second.usage.snapshot()
    assert usage.calls == 0 and usage.cache_hits > 0
    assert b.cached and b.text == a.text and b.latency_ms == 0


def test_unconstrained_short_answer_is_unparsed_never_a_pass(record: list[dict[str, Any]]) -> None:
    client = live_client(structured="none")
    started = time.perf_counter()
    result = ask(client, FREE, {"n": "7"}, Audit, max_tokens=5)
    measure(record, "garbage (mode none, 5 tok)", client, started)
    assert isinstance(result, Unparsed), result
    assert not result.unavailable
    assert client.usage.snapshot().unparsed == 1
