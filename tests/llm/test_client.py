"""OpenAIClient over a real local HTTP server (``FakeOpenAI``): request shape, retries, time
limits, cache, concurrency bound, accounting, and ``ask`` end to end."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from faithsieve.core.settings import Settings
from faithsieve.llm.cache import ResponseCache
from faithsieve.llm.client import NO_KEY, OpenAIClient, response_format
from faithsieve.llm.prompts import Prompt
from faithsieve.llm.structured import Parsed, Unparsed, ask
from faithsieve.llm.types import ChatMessage, ChatRequest, LLMClient, LLMError
from tests.llm.fakeserver import FakeOpenAI, Reply, completion_body

SECRET = "sk-very-secret-key-0123456789"
SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}


def request(**changes: Any) -> ChatRequest:
    base: dict[str, Any] = {"prompt_id": "scan", "prompt_version": "1",
                            "messages": (ChatMessage(role="system", content="sys"), ChatMessage(role="user", content="2+2?")),
                            "max_tokens": 32, "json_schema": SCHEMA, "schema_name": "scan"}
    base.update(changes)
    return ChatRequest(**base)


class Answer(BaseModel):
    answer: int
    reason: str


PROMPT = Prompt(id="probe", version="1", system="Answer in JSON.", user="Question: {{question}}")


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- response_format (pure) ----

@pytest.mark.parametrize(("mode", "expected"), [
    ("json_schema", {"type": "json_schema", "json_schema": {"name": "scan", "schema": SCHEMA}}),
    ("json_object_schema", {"type": "json_object", "schema": SCHEMA}),
    ("json_object", {"type": "json_object"}),
    ("none", None),
])
def test_response_format_table(mode: Any, expected: Any) -> None:
    assert response_format(mode, request()) == expected


@pytest.mark.parametrize("mode", ["json_schema", "json_object_schema", "json_object", "none"])
def test_response_format_without_schema_is_omitted(mode: Any) -> None:
    assert response_format(mode, request(json_schema=None)) is None


def test_size_keywords_never_reach_the_server() -> None:
    """A grammar-constrained server expands length bounds into huge grammars (llama.cpp's server died on
    ``maxLength: 4000``); the bounds are ours to enforce, so the wire schema leaves them out."""

    class Bounded(BaseModel):
        reason: str = Field(default="", max_length=4000)
        items: list[str] = Field(default_factory=list, max_length=16)
        nested: list[Answer] = Field(default_factory=list, min_length=1)

    schema = Bounded.model_json_schema()
    fmt = response_format("json_object_schema", request(json_schema=schema))
    assert fmt is not None
    text = json.dumps(fmt)
    assert all(k not in text for k in ("maxLength", "maxItems", "minItems"))
    assert fmt["schema"]["properties"]["reason"] == {"default": "", "title": "Reason", "type": "string"}
    assert "maxLength" in json.dumps(schema)  # the request itself keeps its bounds for validation


def test_json_schema_mode_has_no_strict_flag() -> None:
    fmt = response_format("json_schema", request())
    assert fmt is not None and "strict" not in fmt["json_schema"]


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError):
        response_format("xml", request())  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        OpenAIClient("http://127.0.0.1:1/v1", "m", structured="xml")  # type: ignore[arg-type]


# ---- the request on the wire ----

@pytest.mark.parametrize("mode", ["json_schema", "json_object_schema", "json_object", "none"])
def test_body_carries_the_response_format_of_the_mode(fake_openai: FakeOpenAI, mode: Any) -> None:
    fake_openai.reply('{"answer": 4}').reply("free text")
    client = fake_openai.client(structured=mode)
    client.complete(request())
    client.complete(request(json_schema=None))
    with_schema, without = fake_openai.requests
    expected = response_format(mode, request())
    if expected is None:
        assert "response_format" not in with_schema
    else:
        assert with_schema["response_format"] == expected
    assert "response_format" not in without


def test_sampling_fields_and_messages_are_sent(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply("a").reply("b")
    client = fake_openai.client(api_key=SECRET)
    assert isinstance(client, LLMClient)
    client.complete(request(temperature=0.3, top_p=0.8, max_tokens=77, seed=11))
    client.complete(request(seed=None))
    first, second = fake_openai.requests
    assert first["model"] == "fake-model"
    assert first["messages"] == [{"role": "system", "content": "sys"}, {"role": "user", "content": "2+2?"}]
    assert (first["temperature"], first["top_p"], first["max_tokens"], first["seed"]) == (0.3, 0.8, 77, 11)
    assert "seed" not in second
    assert fake_openai.headers[0]["authorization"] == f"Bearer {SECRET}"


def test_response_fields(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply("hello", prompt_tokens=21, completion_tokens=4, finish_reason="length", model="served-as")
    got = fake_openai.client().complete(request())
    assert (got.text, got.model, got.prompt_tokens, got.completion_tokens, got.finish_reason) == \
        ("hello", "served-as", 21, 4, "length")
    assert got.latency_ms > 0 and got.cached is False


def test_missing_content_and_usage_become_empty_and_zero(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply(None, prompt_tokens=None)
    client = fake_openai.client()
    got = client.complete(request())
    assert (got.text, got.prompt_tokens, got.completion_tokens) == ("", 0, 0)
    assert client.usage.snapshot().calls == 1


# ---- retries ----

def test_500_and_429_are_retried_then_succeed(fake_openai: FakeOpenAI) -> None:
    fake_openai.fail(500).fail(429).reply("ok")
    client = fake_openai.client(max_retries=2)
    assert client.complete(request()).text == "ok"
    assert fake_openai.calls == 3
    usage = client.usage.snapshot()
    assert (usage.calls, usage.failures) == (1, 0)


def test_other_5xx_is_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.fail(503).fail(502).reply("ok")
    assert fake_openai.client(max_retries=2).complete(request()).text == "ok"
    assert fake_openai.calls == 3


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_4xx_is_not_retried(fake_openai: FakeOpenAI, status: int) -> None:
    fake_openai.fail(status, "bad request here").reply("never used")
    client = fake_openai.client(max_retries=3)
    with pytest.raises(LLMError) as err:
        client.complete(request())
    assert fake_openai.calls == 1
    assert str(status) in err.value.message and fake_openai.base_url in err.value.message
    assert client.usage.snapshot().calls == 0


def test_exhausted_retries_name_endpoint_and_status_but_not_the_key(fake_openai: FakeOpenAI) -> None:
    fake_openai.script([Reply.error(500, f"upstream broke (token {SECRET})")] * 3)
    client = fake_openai.client(api_key=SECRET, max_retries=2)
    with pytest.raises(LLMError) as err:
        client.complete(request())
    assert fake_openai.calls == 3
    msg = err.value.message
    assert fake_openai.base_url in msg and "500" in msg and "InternalServerError" in msg and "3 attempt" in msg
    assert SECRET not in msg and SECRET not in str(err.value) and SECRET not in repr(client)
    assert err.value.code == "llm_unavailable"


def test_backoff_doubles_and_is_capped(fake_openai: FakeOpenAI) -> None:
    fake_openai.fail(500).fail(500).reply("ok")
    started = time.monotonic()
    fake_openai.client(max_retries=2, backoff_s=0.15).complete(request())
    assert time.monotonic() - started >= 0.15 + 0.30

    fake_openai.fail(500).fail(500).reply("ok")
    started = time.monotonic()
    fake_openai.client(max_retries=2, backoff_s=0.15, max_backoff_s=0.01).complete(request())
    assert time.monotonic() - started < 0.4


def test_unreachable_endpoint_is_llm_error() -> None:
    client = OpenAIClient(f"http://127.0.0.1:{closed_port()}/v1", "m", max_retries=1, backoff_s=0.0, timeout_s=2)
    with pytest.raises(LLMError) as err:
        client.complete(request())
    assert "APIConnectionError" in err.value.message and "2 attempt" in err.value.message


def test_credentials_in_the_url_are_not_echoed() -> None:
    port = closed_port()
    client = OpenAIClient(f"http://user:{SECRET}@127.0.0.1:{port}/v1", "m", max_retries=0, timeout_s=2)
    with pytest.raises(LLMError) as err:
        client.complete(request())
    assert SECRET not in err.value.message and f"127.0.0.1:{port}" in err.value.message


# ---- time limit ----

def test_slow_answer_hits_the_time_limit(fake_openai: FakeOpenAI) -> None:
    fake_openai.script([Reply.ok("late", delay_s=5.0)])
    client = fake_openai.client(timeout_s=0.5, max_retries=0)
    started = time.monotonic()
    with pytest.raises(LLMError) as err:
        client.complete(request())
    elapsed = time.monotonic() - started
    assert 0.4 <= elapsed < 2.0
    assert "time limit" in err.value.message


def test_time_limit_applies_to_each_attempt(fake_openai: FakeOpenAI) -> None:
    fake_openai.script([Reply.ok("late", delay_s=5.0), Reply.ok("in time")])
    client = fake_openai.client(timeout_s=0.4, max_retries=1)
    started = time.monotonic()
    assert client.complete(request()).text == "in time"
    assert time.monotonic() - started < 2.0
    assert fake_openai.calls == 2


# ---- cache ----

def test_identical_request_is_served_from_the_cache(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.reply("4", prompt_tokens=30, completion_tokens=2)
    client = fake_openai.client(cache=ResponseCache(tmp_path / "c.sqlite"))
    first = client.complete(request())
    second = client.complete(request())
    assert fake_openai.calls == 1
    assert second.text == first.text == "4" and second.cached and second.latency_ms == 0
    usage = client.usage.snapshot()
    assert (usage.calls, usage.cache_hits, usage.prompt_tokens) == (1, 1, 30)


def test_cache_survives_a_new_client(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.reply("4")
    fake_openai.client(cache=ResponseCache(tmp_path / "c.sqlite")).complete(request())
    fresh = fake_openai.client(cache=ResponseCache(tmp_path / "c.sqlite"))
    assert fresh.complete(request()).cached
    assert fake_openai.calls == 1
    assert (fresh.usage.snapshot().calls, fresh.usage.snapshot().cache_hits) == (0, 1)


@pytest.mark.parametrize("change", [{"prompt_version": "2"}, {"temperature": 0.5}, {"seed": 3}])
def test_changed_request_misses_the_cache(fake_openai: FakeOpenAI, tmp_path: Path, change: dict[str, Any]) -> None:
    fake_openai.reply("a").reply("b")
    client = fake_openai.client(cache=ResponseCache(tmp_path / "c.sqlite"))
    client.complete(request())
    assert client.complete(request(**change)).text == "b"
    assert fake_openai.calls == 2
    assert client.usage.snapshot().cache_hits == 0


def test_changed_mode_misses_the_cache(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.reply("a").reply("b")
    cache = ResponseCache(tmp_path / "c.sqlite")
    fake_openai.client(cache=cache, structured="json_schema").complete(request())
    assert fake_openai.client(cache=cache, structured="json_object_schema").complete(request()).text == "b"


def test_failures_are_not_cached(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.fail(400).reply("ok")
    client = fake_openai.client(cache=ResponseCache(tmp_path / "c.sqlite"))
    with pytest.raises(LLMError):
        client.complete(request())
    assert client.complete(request()).text == "ok"
    assert fake_openai.calls == 2


# ---- concurrency ----

def test_concurrency_bound_is_respected(fake_openai: FakeOpenAI) -> None:
    fake_openai.script([Reply.ok(f"r{i}", delay_s=0.25) for i in range(6)])
    client = fake_openai.client(concurrency=2)
    texts: list[str] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        answer = client.complete(request(prompt_version=str(i)))
        with lock:
            texts.append(answer.text)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(texts) == [f"r{i}" for i in range(6)]
    assert fake_openai.max_in_flight == 2
    assert client.usage.snapshot().calls == 6


# ---- accounting ----

def test_tokens_cost_and_latency_are_summed(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply("a", prompt_tokens=1000, completion_tokens=500).reply("b", prompt_tokens=3000, completion_tokens=0)
    client = fake_openai.client(price_in_per_mtok=2.0, price_out_per_mtok=8.0)
    before = client.usage.snapshot()
    client.complete(request())
    client.complete(request(prompt_version="2"))
    usage = client.usage.since(before)
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (2, 4000, 500)
    assert usage.cost_usd == pytest.approx((4000 * 2.0 + 500 * 8.0) / 1e6)
    assert usage.latency_ms > 0


# ---- from_settings ----

def test_from_settings_needs_endpoint_and_model() -> None:
    with pytest.raises(LLMError, match="FAITHSIEVE_LLM_BASE_URL"):
        OpenAIClient.from_settings(Settings(llm_base_url=None, llm_model="m"))
    with pytest.raises(LLMError, match="FAITHSIEVE_LLM_MODEL"):
        OpenAIClient.from_settings(Settings(llm_base_url="http://127.0.0.1:1/v1", llm_model=""))


def test_from_settings_reads_the_key_from_the_named_variable(fake_openai: FakeOpenAI, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FS_TEST_KEY", SECRET)
    monkeypatch.delenv("FS_TEST_NO_KEY", raising=False)
    fake_openai.reply("a").reply("b")
    common: dict[str, Any] = {"llm_base_url": fake_openai.base_url, "llm_model": "fake-model", "llm_structured": "json_object_schema",
              "llm_cache_path": str(tmp_path / "c.sqlite"), "llm_concurrency": 3, "llm_max_retries": 4}
    with_key = OpenAIClient.from_settings(Settings(llm_api_key_env="FS_TEST_KEY", **common))
    assert (with_key.structured, with_key.concurrency, with_key.max_retries) == ("json_object_schema", 3, 4)
    assert with_key.cache is not None and with_key.cache.path == tmp_path / "c.sqlite"
    with_key.complete(request())
    without = OpenAIClient.from_settings(Settings(llm_api_key_env="FS_TEST_NO_KEY", llm_cache=False, **common))
    assert without.cache is None
    without.complete(request())
    assert [h["authorization"] for h in fake_openai.headers] == [f"Bearer {SECRET}", f"Bearer {NO_KEY}"]
    with_key.close()
    without.close()


# ---- ask() end to end ----

def test_ask_recovers_from_one_malformed_answer(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply('{"answer": 4, "reason": ').reply('Sure! ```json\n{"answer": 4, "reason": "2+2"}\n```')
    client = fake_openai.client(structured="json_object_schema")
    result = ask(client, PROMPT, {"question": "2+2?"}, Answer)
    assert isinstance(result, Parsed) and result.value == Answer(answer=4, reason="2+2")
    assert fake_openai.calls == 2
    first, retry = fake_openai.requests
    assert first["response_format"] == {"type": "json_object", "schema": Answer.model_json_schema()}
    assert [m["role"] for m in retry["messages"]] == ["system", "user", "assistant", "user"]
    assert retry["messages"][2]["content"] == '{"answer": 4, "reason": '
    assert "could not be used" in retry["messages"][3]["content"]


def test_ask_gives_unparsed_after_two_garbage_answers(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply("I think the answer is four.").reply('{"answer": "four", "reason": "words"}')
    client = fake_openai.client()
    result = ask(client, PROMPT, {"question": "2+2?"}, Answer)
    assert isinstance(result, Unparsed) and not result.unavailable
    assert result.raw == '{"answer": "four", "reason": "words"}' and "answer" in result.reason
    usage = client.usage.snapshot()
    assert (usage.calls, usage.unparsed, usage.failures) == (2, 1, 0)


def test_ask_truncated_answers_are_unparsed(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply('{"answer": 4, "reas', finish_reason="length").reply('{"answer": 4, "reason": "two', finish_reason="length")
    result = ask(fake_openai.client(), PROMPT, {"question": "2+2?"}, Answer, max_tokens=8)
    assert isinstance(result, Unparsed) and "token limit" in result.reason
    assert result.raw == '{"answer": 4, "reason": "two'
    assert fake_openai.requests[0]["max_tokens"] == 8


def test_ask_truncated_then_complete_is_parsed(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply('{"answer": 4', finish_reason="length").reply('{"answer": 4, "reason": "ok"}')
    result = ask(fake_openai.client(), PROMPT, {"question": "2+2?"}, Answer)
    assert isinstance(result, Parsed) and result.value.answer == 4


def test_ask_with_endpoint_down_is_unavailable(fake_openai: FakeOpenAI) -> None:
    fake_openai.script([Reply.error(503)] * 2)
    client = fake_openai.client(max_retries=1)
    result = ask(client, PROMPT, {"question": "2+2?"}, Answer)
    assert isinstance(result, Unparsed) and result.unavailable and "503" in result.reason
    assert client.usage.snapshot().failures == 1


@pytest.mark.parametrize("body", ["<html>proxy login</html>", {"object": "chat.completion", "choices": []}, {"odd": 1}])
def test_unreadable_200_is_llm_error_and_not_cached(fake_openai: FakeOpenAI, tmp_path: Path, body: Any) -> None:
    fake_openai.script([Reply(200, body)]).reply("fine")
    client = fake_openai.client(max_retries=3, cache=ResponseCache(tmp_path / "c.sqlite"))
    with pytest.raises(LLMError, match="unreadable answer"):
        client.complete(request())
    assert fake_openai.calls == 1
    assert client.complete(request()).text == "fine"


def test_a_compressed_answer_is_inflated_within_a_bound(fake_openai: FakeOpenAI) -> None:
    """A few kilobytes of gzip can hold gigabytes: the answer body is decompressed at most
    ``MAX_BODY_BYTES`` far, then the call fails in one line, not retried (issue 38)."""
    import gzip

    from faithsieve.llm.client import MAX_BODY_BYTES

    bomb = gzip.compress(b'{"choices": "' + b"a" * (MAX_BODY_BYTES + 1024) + b'"}')
    assert len(bomb) < MAX_BODY_BYTES // 100
    fake_openai.script([Reply(200, bomb, headers=(("Content-Encoding", "gzip"),))])
    client = fake_openai.client(max_retries=3)
    with pytest.raises(LLMError, match="unreadable answer.*past"):
        client.complete(request())
    assert fake_openai.calls == 1
    small = gzip.compress(json.dumps(completion_body("zipped")).encode())
    fake_openai.script([Reply(200, small, headers=(("Content-Encoding", "gzip"),))])
    assert client.complete(request()).text == "zipped"  # a compressed answer within the bound reads as before


def test_deeply_nested_answer_json_is_one_line_not_a_recursion_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.script([Reply(200, '{"choices": ' + "[" * 50_000 + "]" * 50_000 + "}")])
    with pytest.raises(LLMError, match="nested deeper"):
        fake_openai.client().complete(request())
