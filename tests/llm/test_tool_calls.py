"""Tool calls through the LLM layer: wire shape sent, tool calls read back, cache keys, and the
Lean kernel's statement loop over a real HTTP round trip (``FakeOpenAI``)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import ValidationError

from faithsieve.core.settings import Settings
from faithsieve.llm import cache as cache_module
from faithsieve.llm.cache import ResponseCache, cache_key
from faithsieve.llm.client import read_tool_calls, wire_message
from faithsieve.llm.types import ChatMessage, ChatRequest, ToolCall
from tests.llm.fakeserver import FAKE_MODEL, FakeOpenAI, Reply

TOOL = {"type": "function", "function": {"name": "lean_check", "description": "compile",
                                         "parameters": {"type": "object", "properties": {"code": {"type": "string"}},
                                                        "required": ["code"]}}}


def tool_reply(*calls: tuple[str, str, str], content: str | None = None) -> Reply:
    """A 200 chat.completion whose message asks for ``calls`` ``(id, name, arguments)``."""
    return Reply(200, {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": FAKE_MODEL,
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": content,
            "tool_calls": [{"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls]}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}})


def request(**changes: Any) -> ChatRequest:
    base: dict[str, Any] = {"prompt_id": "formalize", "prompt_version": "1", "max_tokens": 64,
                            "messages": (ChatMessage(role="system", content="sys"), ChatMessage(role="user", content="go"))}
    base.update(changes)
    return ChatRequest(**base)


CONVERSATION = (
    ChatMessage(role="user", content="state it"),
    ChatMessage(role="assistant", content="", tool_calls=(ToolCall(id="call_a", name="lean_check",
                                                                   arguments='{"code": "example : 1 = 1 := rfl"}'),)),
    ChatMessage(role="tool", content="status: valid", tool_call_id="call_a", name="lean_check"),
)


def test_tools_and_tool_choice_are_sent_and_tool_calls_read_back(fake_openai: FakeOpenAI) -> None:
    fake_openai.script([tool_reply(("call_1", "lean_check", '{"code": "#check Nat"}'),
                                   ("call_2", "lean_name", '{"name":"Nat.succ"}'))])
    with fake_openai.client(structured="none") as client:
        answer = client.complete(request(tools=(TOOL,), tool_choice="auto", messages=CONVERSATION))
    body = fake_openai.requests[0]
    assert body["tools"] == [TOOL] and body["tool_choice"] == "auto"
    assert body["messages"][1] == {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "lean_check",
                                                          "arguments": '{"code": "example : 1 = 1 := rfl"}'}}]}
    assert body["messages"][2] == {"role": "tool", "content": "status: valid", "tool_call_id": "call_a",
                                   "name": "lean_check"}
    assert answer.text == "" and answer.finish_reason == "tool_calls"
    assert answer.tool_calls == (ToolCall(id="call_1", name="lean_check", arguments='{"code": "#check Nat"}'),
                                 ToolCall(id="call_2", name="lean_name", arguments='{"name":"Nat.succ"}'))
    assert client.usage.snapshot().completion_tokens == 7


def test_a_forced_tool_choice_is_sent_as_given(fake_openai: FakeOpenAI) -> None:
    forced = {"type": "function", "function": {"name": "lean_check"}}
    fake_openai.script([tool_reply(("c", "lean_check", "{}"))])
    with fake_openai.client() as client:
        client.complete(request(tools=(TOOL,), tool_choice=forced))
    assert fake_openai.requests[0]["tool_choice"] == forced


def test_requests_without_tools_keep_their_old_shape(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply("plain")
    with fake_openai.client() as client:
        answer = client.complete(request())
    body = fake_openai.requests[0]
    assert "tools" not in body and "tool_choice" not in body
    assert body["messages"] == [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
    assert answer.text == "plain" and answer.tool_calls == ()


def test_cached_answers_keep_their_tool_calls(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.script([tool_reply(("call_1", "lean_search", '{"fragment": "sqrt"}'))])
    with ResponseCache(tmp_path / "c.sqlite") as cache, fake_openai.client(cache=cache) as client:
        first = client.complete(request(tools=(TOOL,), tool_choice="auto"))
        again = client.complete(request(tools=(TOOL,), tool_choice="auto"))
    assert fake_openai.calls == 1 and again.cached and again.tool_calls == first.tool_calls


def test_cache_key_covers_tools_choice_and_tool_messages() -> None:
    assert cache_module._KEY_FORMAT == 2
    base = cache_key("m", "none", request())
    changed_result = CONVERSATION[2].model_copy(update={"content": "status: lean_error"})
    changed_call = CONVERSATION[1].model_copy(update={"tool_calls": (ToolCall(id="call_a", name="lean_check",
                                                                              arguments="{}"),)})
    keys = {base,
            cache_key("m", "none", request(tools=(TOOL,))),
            cache_key("m", "none", request(tools=(TOOL,), tool_choice="auto")),
            cache_key("m", "none", request(tools=(TOOL,), tool_choice="required")),
            cache_key("m", "none", request(messages=CONVERSATION)),
            cache_key("m", "none", request(messages=(*CONVERSATION[:2], changed_result))),
            cache_key("m", "none", request(messages=(CONVERSATION[0], changed_call, CONVERSATION[2])))}
    assert len(keys) == 7
    assert cache_key("m", "none", request()) == base  # unchanged requests keep one key


def test_message_roles_are_validated() -> None:
    with pytest.raises(ValidationError, match="tool_call_id"):
        ChatMessage(role="tool", content="x")
    with pytest.raises(ValidationError, match="only an assistant"):
        ChatMessage(role="user", content="x", tool_calls=(ToolCall(id="a", name="b"),))
    with pytest.raises(ValidationError, match="belong to tool messages"):
        ChatMessage(role="user", content="x", tool_call_id="a")
    assert wire_message(ChatMessage(role="user", content="hi")) == {"role": "user", "content": "hi"}


def test_read_tool_calls_tolerates_server_variants() -> None:
    fn = SimpleNamespace
    msg = fn(tool_calls=[fn(id=None, function=fn(name="lean_check", arguments={"code": "x"})),
                         fn(id="k", function=fn(name="", arguments="{}")),      # no name: skipped
                         fn(id="c", custom=fn(name="x")),                      # not a function tool: skipped
                         fn(id="z", function=fn(name="lean_goal", arguments=None))])
    assert read_tool_calls(msg) == (ToolCall(id="call_0", name="lean_check", arguments='{"code": "x"}'),
                                    ToolCall(id="z", name="lean_goal", arguments=""))
    assert read_tool_calls(fn(content="plain")) == ()


def test_lean_statement_loop_over_http_with_a_tool_call(fake_openai: FakeOpenAI) -> None:
    """The kernel's formalize turn end to end: tool call over HTTP, answered by the recorded
    Lean transcript, then the final JSON answer, checked and accepted."""
    from faithsieve.lean.kernel import LeanKernel
    from faithsieve.obligations.kinds.models import NLObligation, ObligationKind

    from tests.lean.test_kernel import Transcript, sorry, valid, when

    backend = Transcript(rules=[when("example : (0 : ℝ) ≤ 2 ^ 2", valid("x")), when(":= by sorry", sorry())])
    fake_openai.script([tool_reply(("call_1", "lean_check", json.dumps({"code": "example : (0 : ℝ) ≤ 2 ^ 2 := by norm_num"}))),
                        Reply.ok(json.dumps({"lean": "theorem t (x : ℝ) : 0 ≤ x ^ 2"}))])
    ob = NLObligation(id="u2.o1", edge="u2", step=1, kind=ObligationKind.DERIVED_FACT, claim="x^2 ≥ 0 for real x")
    with fake_openai.client(structured="json_object") as client:
        st = LeanKernel(backend, client, Settings(lean_tool_calls=2)).formalize(ob, "Problem: squares.")
    assert st is not None and st.text == "theorem fs_u2_o1 (x : ℝ) : 0 ≤ x ^ 2 := by sorry"
    first, second = fake_openai.requests
    assert [t["function"]["name"] for t in first["tools"]] == ["lean_check", "lean_name", "lean_search", "lean_goal"]
    assert first["tool_choice"] == "auto" and "response_format" not in first
    assert second["messages"][-1]["role"] == "tool" and second["messages"][-1]["tool_call_id"] == "call_1"
    assert second["messages"][-1]["content"].startswith("status: valid")
