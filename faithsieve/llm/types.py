"""Wire types of the LLM layer and the one interface the pipeline receives.

``LLMClient.complete`` sends one chat request and returns the text with its token counts
(and, when the request offered tools, the tool calls the model asked for).
An unreachable endpoint, a time limit hit or an exhausted retry budget raises ``LLMError``
(a ``BackendUnavailable``); a malformed answer is *not* an exception here: it comes back as
text and ``faithsieve.llm.structured`` turns it into ``Unparsed``.
"""

from __future__ import annotations

import threading
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from faithsieve.core.errors import BackendUnavailable

_FROZEN = ConfigDict(frozen=True, extra="forbid")

StructuredMode = Literal["json_schema", "json_schema_strict", "guided_json", "json_object_schema", "json_object",
                         "none"]
"""How a JSON answer is requested from the server.

- ``json_schema``: OpenAI's ``{"type": "json_schema", "json_schema": {"name", "schema"}}`` (not strict:
  the pydantic schema as it is, size keywords left out); vLLM accepts this form too.
- ``json_schema_strict``: the same with ``"strict": true`` and the schema rewritten to OpenAI's strict
  rules (``faithsieve.llm.strict``: every property required, optional ones nullable,
  ``additionalProperties: false``, refused keywords dropped); the ``null`` an optional field had to
  carry is removed from the answer before it is read.
- ``guided_json``: vLLM's guided decoding, ``extra_body={"guided_json": schema}`` (vLLM's own
  parameter, for servers older than its ``response_format`` support).
- ``json_object_schema``: llama.cpp's ``{"type": "json_object", "schema": {...}}`` (its server
  returns HTTP 500 for the OpenAI form).
- ``json_object``: ``{"type": "json_object"}`` without a schema (vLLM/hosted fallbacks).
- ``none``: no ``response_format``; the schema is described in the prompt and the JSON is
  taken from the answer text.
"""


class LLMError(BackendUnavailable):
    """The endpoint could not give an answer (unreachable, time limit, retries exhausted)."""

    code = "llm_unavailable"


class ToolCall(BaseModel):
    """One function-tool call the model asked for (OpenAI ``tool_calls`` entry)."""

    model_config = _FROZEN

    id: str
    """Call id; the ``tool`` message answering it carries the same id."""
    name: str
    """Name of the function tool called."""
    arguments: str = ""
    """The arguments exactly as the model wrote them (a JSON string, not validated here)."""


class ChatMessage(BaseModel):
    """One message of a chat request."""

    model_config = _FROZEN

    role: Literal["system", "user", "assistant", "tool"]
    """Who speaks (``tool``: the result of a tool call, answering ``tool_call_id``)."""
    content: str
    """The message text ("" for an assistant turn made only of tool calls)."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Tool calls an assistant turn made (assistant messages only)."""
    tool_call_id: str | None = None
    """For a ``tool`` message: id of the call it answers (required there)."""
    name: str | None = None
    """For a ``tool`` message: name of the tool that answered (optional)."""

    @model_validator(mode="after")
    def _roles(self) -> ChatMessage:
        if self.tool_calls and self.role != "assistant":
            raise ValueError("only an assistant message can carry tool_calls")
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("a tool message needs the tool_call_id it answers")
        if self.role != "tool" and (self.tool_call_id is not None or self.name is not None):
            raise ValueError("tool_call_id and name belong to tool messages")
        return self


class ChatRequest(BaseModel):
    """Everything that determines an answer (and so the cache key)."""

    model_config = _FROZEN

    prompt_id: str
    """Id of the prompt file this request was rendered from (``decompose``, ``scan``, ...)."""
    prompt_version: str
    """Version of that prompt file; changing a prompt changes the cache key."""
    messages: tuple[ChatMessage, ...]
    """The rendered conversation."""
    temperature: float = 0.0
    """Sampling temperature."""
    top_p: float = 1.0
    """Nucleus sampling mass."""
    max_tokens: int = Field(default=1024, gt=0)
    """Most tokens the answer may have."""
    seed: int | None = None
    """Sampling seed, sent where the server honours it."""
    json_schema: dict[str, Any] | None = None
    """JSON schema of the expected answer (``None``: free text)."""
    schema_name: str = "answer"
    """Name sent with an OpenAI ``json_schema`` response format."""
    tools: tuple[dict[str, Any], ...] | None = None
    """Function tools offered to the model, as OpenAI tool specs
    (``{"type": "function", "function": {"name", "description", "parameters"}}``); ``None``: no tools."""
    tool_choice: str | dict[str, Any] | None = None
    """``auto``, ``none``, ``required`` or ``{"type": "function", "function": {"name": ...}}``
    (``None``: not sent, the server's default). llama.cpp's server needs
    ``--chat_format chatml-function-calling`` for ``auto``; a forced choice works either way."""


class ChatResponse(BaseModel):
    """The answer to one ``ChatRequest``."""

    model_config = _FROZEN

    text: str
    """The assistant message content ("" when the server sent none)."""
    model: str
    """Model id that answered."""
    prompt_tokens: int = 0
    """Prompt tokens the server reported."""
    completion_tokens: int = 0
    """Completion tokens the server reported."""
    finish_reason: str | None = None
    """``stop``, ``length`` (truncated), ``content_filter``, ... as reported."""
    latency_ms: float = 0.0
    """Wall-clock time of the call (0 for a cache hit)."""
    cached: bool = False
    """Served from the response cache: no call was made."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Tool calls the model asked for (empty when it answered in text only)."""


class UsageReport(BaseModel):
    """Token and cost accounting of the LLM calls made for one verdict or one run."""

    model_config = _FROZEN

    calls: int = 0
    """Requests sent to the endpoint (cache hits excluded)."""
    cache_hits: int = 0
    """Requests answered from the cache."""
    failures: int = 0
    """Requests that ended in ``LLMError`` after retries."""
    unparsed: int = 0
    """Answers that could not be parsed into the expected model (after the one retry)."""
    prompt_tokens: int = 0
    """Prompt tokens over the calls made."""
    completion_tokens: int = 0
    """Completion tokens over the calls made."""
    cost_usd: float = 0.0
    """Estimated cost from the configured per-million-token prices (0 when none are set)."""
    latency_ms: float = 0.0
    """Summed wall-clock time of the calls made."""

    def __add__(self, other: UsageReport) -> UsageReport:
        return UsageReport.model_validate({k: getattr(self, k) + getattr(other, k) for k in type(self).model_fields})


_FLOATS = frozenset({"cost_usd", "latency_ms"})


class Usage:
    """A thread-safe accumulator of ``UsageReport`` figures (one per client; ``snapshot`` and
    ``since`` give the figures for a verdict by difference)."""

    def __init__(self, price_in_per_mtok: float = 0.0, price_out_per_mtok: float = 0.0) -> None:
        self._lock = threading.Lock()
        self._totals: dict[str, float] = {k: 0 for k in UsageReport.model_fields}
        self.price_in = price_in_per_mtok
        self.price_out = price_out_per_mtok

    def record(self, response: ChatResponse) -> None:
        with self._lock:
            if response.cached:
                self._totals["cache_hits"] += 1
                return
            self._totals["calls"] += 1
            self._totals["prompt_tokens"] += response.prompt_tokens
            self._totals["completion_tokens"] += response.completion_tokens
            self._totals["latency_ms"] += response.latency_ms
            self._totals["cost_usd"] += (response.prompt_tokens * self.price_in
                                         + response.completion_tokens * self.price_out) / 1e6

    def count(self, field: Literal["failures", "unparsed"]) -> None:
        with self._lock:
            self._totals[field] += 1

    def snapshot(self) -> UsageReport:
        with self._lock:
            t = dict(self._totals)
        return UsageReport.model_validate({k: (round(v, 6) if k in _FLOATS else int(v)) for k, v in t.items()})

    def since(self, before: UsageReport) -> UsageReport:
        now = self.snapshot()
        return UsageReport.model_validate({k: (round(getattr(now, k) - getattr(before, k), 6) if k in _FLOATS
                                               else getattr(now, k) - getattr(before, k)) for k in UsageReport.model_fields})


@runtime_checkable
class LLMClient(Protocol):
    """The one LLM interface the pipeline receives."""

    model: str
    """Model id requests are sent to."""
    usage: Usage
    """Accounting of every request this client answered."""

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Answer one request (from the cache when allowed). Raises ``LLMError`` when no answer can be had."""
        ...
