"""``OpenAIClient``: the ``LLMClient`` over any OpenAI-compatible chat endpoint.

One call is: cache lookup, then (under a semaphore bounding the calls in flight) the HTTP
request, retried with exponential backoff on connection errors, time limits, 429 and 5xx.
Other 4xx answers are not retried. When no answer can be had the client raises ``LLMError``,
whose message names the endpoint and the last error but never the API key. The openai
package's own retries are switched off so the budget here is the only one.

Tool calls: a request's ``tools`` and ``tool_choice`` are sent as given, assistant and
``tool`` messages of the conversation carry their ``tool_calls`` / ``tool_call_id``, and the
answer's ``message.tool_calls`` come back as ``ChatResponse.tool_calls`` (arguments as the
raw JSON string the model wrote; validating them is the caller's job).
"""

from __future__ import annotations

import datetime
import email.utils
import json
import os
import threading
import time
from typing import TYPE_CHECKING, Any, get_args

import httpx
import openai
from openai.types.chat import ChatCompletion
from typing_extensions import Self

from faithsieve.llm.cache import ResponseCache, cache_key
from faithsieve.llm.strict import drop_optional_nulls, strict_schema
from faithsieve.llm.types import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    LLMError,
    StructuredMode,
    ToolCall,
    Usage,
)
from faithsieve.runtime.textfile import MAX_JSON_DEPTH, json_too_deep
from faithsieve.runtime.urls import public_url

if TYPE_CHECKING:
    from faithsieve.core.settings import Settings

NO_KEY = "sk-no-key"
"""API key sent when none is configured (local servers ignore it, the client needs one)."""

MAX_BACKOFF_S = 30.0
"""Longest wait between two attempts (a server's ``Retry-After`` may ask for longer, within the call's deadline)."""


MAX_BODY_BYTES = 16 << 20
"""The largest answer body read from the endpoint, after decompression (a gzip-compressed answer is
inflated at most this far: a few kilobytes of gzip can hold gigabytes)."""


class UnreadableBody(openai.OpenAIError):
    """An answer body past ``MAX_BODY_BYTES`` once decompressed, or JSON nested past ``MAX_JSON_DEPTH``
    (a parser would recurse into it): raised while the answer is read (``OpenAIClient._create``), never
    retried."""


SIZE_KEYWORDS = frozenset({"maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties",
                           "pattern", "format"})
"""Schema keywords left out of what the server sees. Grammar-constrained servers expand a length
bound into one rule per allowed character: llama.cpp's server fails on ``maxLength: 4000`` (and its
worker died with it). Our own pydantic validation enforces every bound on the answer anyway."""


def wire_schema(schema: Any) -> Any:
    """``schema`` without the size and pattern keywords (pure; nested schemas too)."""
    if isinstance(schema, dict):
        return {k: wire_schema(v) for k, v in schema.items() if k not in SIZE_KEYWORDS}
    if isinstance(schema, list):
        return [wire_schema(v) for v in schema]
    return schema


def response_format(mode: StructuredMode, request: ChatRequest) -> dict[str, Any] | None:
    """The ``response_format`` argument for ``request`` under ``mode`` (``None``: send none)."""
    if request.json_schema is None or mode == "none":
        return None
    schema = wire_schema(request.json_schema)
    if mode == "json_schema":
        # not strict: pydantic schemas (optional fields, defaults) are not strict-compatible as they are
        return {"type": "json_schema", "json_schema": {"name": request.schema_name, "schema": schema}}
    if mode == "json_schema_strict":
        return {"type": "json_schema", "json_schema": {"name": request.schema_name, "strict": True,
                                                       "schema": strict_schema(request.json_schema)}}
    if mode == "guided_json":
        return None  # sent as extra_body (``extra_body``)
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    if mode == "json_object":
        return {"type": "json_object"}
    raise ValueError(f"unknown structured mode {mode!r}")


def extra_body(mode: StructuredMode, request: ChatRequest) -> dict[str, Any] | None:
    """vLLM's ``guided_json`` parameter under ``mode="guided_json"`` (``None`` otherwise)."""
    if mode != "guided_json" or request.json_schema is None:
        return None
    return {"guided_json": wire_schema(request.json_schema)}


def strict_answer(text: str, schema: dict[str, Any] | None) -> str:
    """A strict-mode answer with the ``null`` of each optional field removed (``text`` unchanged when
    it is not one JSON object)."""
    if schema is None:
        return text
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return text
    return json.dumps(drop_optional_nulls(data, schema), ensure_ascii=False) if isinstance(data, dict) else text


def wire_message(message: ChatMessage) -> dict[str, Any]:
    """``message`` as the chat API wants it (pure): ``role`` and ``content``, plus ``tool_calls``
    on an assistant turn that made some and ``tool_call_id`` (and ``name``) on a tool result."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                             for c in message.tool_calls]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        out["name"] = message.name
    return out


def read_tool_calls(message: Any) -> tuple[ToolCall, ...]:
    """The function-tool calls of an answer's ``message`` (pure; entries without a function name are
    skipped, a missing id becomes ``call_<i>``, non-string arguments are re-encoded as JSON)."""
    calls = getattr(message, "tool_calls", None) or []
    out: list[ToolCall] = []
    for i, call in enumerate(calls if isinstance(calls, list) else []):
        fn = getattr(call, "function", None)
        name = getattr(fn, "name", None)
        if not isinstance(name, str) or not name:
            continue
        args = getattr(fn, "arguments", None)
        if args is None:
            args = ""
        elif not isinstance(args, str):
            try:
                args = json.dumps(args, ensure_ascii=False)
            except (TypeError, ValueError):
                args = str(args)
        cid = getattr(call, "id", None)
        out.append(ToolCall(id=cid if isinstance(cid, str) and cid else f"call_{i}", name=name, arguments=args))
    return tuple(out)


def retry_wait(exc: openai.APIError, backoff: float) -> float:
    """Seconds to wait before the next attempt (pure): the server's ``Retry-After`` (seconds, or an HTTP date)
    when it sent one, else ``backoff``. The caller never waits past the call's deadline."""
    response = getattr(exc, "response", None)
    raw = response.headers.get("retry-after") if response is not None else None
    if not raw:
        return backoff
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return backoff
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, (when - datetime.datetime.now(datetime.timezone.utc)).total_seconds())


def _retryable(exc: openai.APIError) -> bool:
    if isinstance(exc, (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError)):
        return True  # APITimeoutError is an APIConnectionError
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500


BUSY_STATUS = (429, 503)
"""HTTP statuses of a server that is up but cannot take the request now (too many requests, overloaded)."""


def _busy(exc: openai.APIError) -> bool:
    """The server is up but did not answer now: 429/503, or connected and no answer in time (a timeout while
    connecting is an unreachable host)."""
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in BUSY_STATUS
    return isinstance(exc, openai.APITimeoutError) and not isinstance(exc.__cause__, httpx.ConnectTimeout)


def _describe(exc: openai.APIError) -> str:
    if isinstance(exc, openai.APITimeoutError):
        return "APITimeoutError (time limit reached)"
    if isinstance(exc, openai.APIStatusError):
        detail = str(exc.message)[:300]
        return f"{type(exc).__name__} (HTTP {exc.status_code}): {detail}"
    return f"{type(exc).__name__}: {str(exc)[:300]}"


class OpenAIClient:
    """An ``LLMClient`` over the ``openai`` package, with its own retries, concurrency bound
    and optional response cache."""

    def __init__(self, base_url: str, model: str, *, api_key: str = NO_KEY, timeout_s: float = 120.0,
                 max_retries: int = 2, backoff_s: float = 1.0, concurrency: int = 4,
                 structured: StructuredMode = "json_schema", cache: ResponseCache | None = None,
                 price_in_per_mtok: float = 0.0, price_out_per_mtok: float = 0.0,
                 max_backoff_s: float = MAX_BACKOFF_S) -> None:
        if not base_url:
            raise LLMError("no LLM endpoint configured (llm_base_url is empty)")
        if not model:
            raise LLMError("no LLM model configured (llm_model is empty)")
        if timeout_s <= 0 or max_retries < 0 or backoff_s < 0 or concurrency < 1:
            raise ValueError("timeout_s > 0, max_retries >= 0, backoff_s >= 0 and concurrency >= 1 are required")
        if structured not in get_args(StructuredMode):
            raise ValueError(f"unknown structured mode {structured!r}")
        self.base_url = base_url
        self.model = model
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.concurrency = concurrency
        self.structured: StructuredMode = structured
        self.cache = cache
        self._owns_cache = False
        self.usage = Usage(price_in_per_mtok, price_out_per_mtok)
        self._secret = api_key
        self._endpoint = public_url(base_url)
        self._slots = threading.BoundedSemaphore(concurrency)
        self._api = openai.OpenAI(base_url=base_url, api_key=api_key or NO_KEY, timeout=timeout_s, max_retries=0)

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAIClient:
        """A client configured by ``faithsieve.core.settings.Settings`` (the key is read from the
        environment variable named by ``llm_api_key_env``)."""
        if not settings.llm_base_url:
            raise LLMError("no LLM endpoint configured: pass --base-url or set FAITHSIEVE_LLM_BASE_URL "
                           "(e.g. http://127.0.0.1:8080/v1)")
        if not settings.llm_model:
            raise LLMError("no LLM model configured: pass --model or set FAITHSIEVE_LLM_MODEL")
        key = os.environ.get(settings.llm_api_key_env, "") if settings.llm_api_key_env else ""
        cache = ResponseCache(settings.llm_cache_path) if settings.llm_cache else None
        client = cls(settings.llm_base_url, settings.llm_model, api_key=key or NO_KEY,
                     timeout_s=settings.llm_timeout_s, max_retries=settings.llm_max_retries,
                     backoff_s=settings.llm_backoff_s, concurrency=settings.llm_concurrency,
                     structured=settings.llm_structured, cache=cache,
                     price_in_per_mtok=settings.llm_price_in_per_mtok,
                     price_out_per_mtok=settings.llm_price_out_per_mtok)
        client._owns_cache = cache is not None
        return client

    def __repr__(self) -> str:
        return f"OpenAIClient(base_url={self._endpoint!r}, model={self.model!r}, structured={self.structured!r})"

    def _scrub(self, text: str) -> str:
        if self._secret and len(self._secret) >= 4:
            text = text.replace(self._secret, "***")
        return text

    def _fail(self, what: str) -> LLMError:
        return LLMError(self._scrub(f"LLM endpoint {self._endpoint} (model {self.model}): {what}"))

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Answer ``request``: from the cache when stored, else over HTTP (raises ``LLMError``)."""
        key = cache_key(self.model, self.structured, request) if self.cache is not None else None
        if key is not None and self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                answer = hit.model_copy(update={"cached": True, "latency_ms": 0.0})
                self.usage.record(answer)
                return answer

        kwargs = self._kwargs(request)
        last = "no attempt made"
        busy = False
        attempts = self.max_retries + 1
        # each attempt ends within timeout_s however the server sends; waits between attempts (backoff, a server's
        # Retry-After) stay within the call's whole budget, attempts x timeout_s
        deadline = time.monotonic() + attempts * self.timeout_s
        for attempt in range(attempts):
            try:
                with self._slots:
                    started = time.perf_counter()
                    completion = self._create(kwargs, min(deadline, time.monotonic() + self.timeout_s))
                    latency_ms = (time.perf_counter() - started) * 1000.0
            except openai.APIError as exc:
                last, busy = _describe(exc), _busy(exc)
                if not _retryable(exc):
                    raise self._fail(f"request failed, not retried: {last}") from None
                wait = retry_wait(exc, min(self.backoff_s * 2 ** attempt, self.max_backoff_s))
                if attempt + 1 < attempts and time.monotonic() + wait >= deadline:
                    raise self._fail(f"no answer within the call's {attempts * self.timeout_s:g} s (the server asks "
                                     f"to wait {wait:g} s more); last error: {last}") from None
                if attempt + 1 < attempts:
                    time.sleep(wait)
                continue
            except (ValueError, UnreadableBody, RecursionError) as exc:  # a 200 whose body is not a chat
                # completion (proxy page, ...), past the body bound, or nested too deeply
                raise self._fail(f"unreadable answer, not retried: {type(exc).__name__}: {str(exc)[:200]}") from None
            answer = self._to_response(completion, latency_ms)
            if self.structured == "json_schema_strict":
                answer = answer.model_copy(update={"text": strict_answer(answer.text, request.json_schema)})
            if key is not None and self.cache is not None:
                self.cache.put(key, answer)
            self.usage.record(answer)
            return answer
        state = "busy (up, but it did not answer now): " if busy else ""
        raise self._fail(f"{state}no answer after {attempts} attempt(s); last error: {last}")

    def _kwargs(self, request: ChatRequest) -> dict[str, Any]:
        """The ``chat.completions.create`` arguments for ``request``."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [wire_message(m) for m in request.messages],
            "temperature": request.temperature,
            "top_p": request.top_p,
            "max_tokens": request.max_tokens,
        }
        if request.seed is not None:
            kwargs["seed"] = request.seed
        fmt = response_format(self.structured, request)
        if fmt is not None:
            kwargs["response_format"] = fmt
        extra = extra_body(self.structured, request)
        if extra is not None:
            kwargs["extra_body"] = extra
        if request.tools is not None:
            kwargs["tools"] = [dict(t) for t in request.tools]
        if request.tool_choice is not None:
            kwargs["tool_choice"] = request.tool_choice

        return kwargs

    def _create(self, kwargs: dict[str, Any], deadline: float) -> ChatCompletion:
        """One HTTP attempt, cut at ``deadline`` (``time.monotonic()``) however the server sends its answer: the
        body is read in chunks and the connection closed once the deadline passes (an endpoint that drips bytes or
        never ends its answer), each read bounded by the time left. Raises ``APITimeoutError`` past the deadline,
        the openai errors for HTTP errors, ``UnreadableBody`` past the size or nesting bound, ``ValueError`` for a
        body that is not a chat completion."""
        left = max(0.05, deadline - time.monotonic())  # a deadline already passed: the client's own time limit fires
        body = bytearray()
        with self._api.chat.completions.with_streaming_response.create(**kwargs, timeout=left) as response:
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_BODY_BYTES:  # (``iter_bytes`` decompresses: the bound is on what it inflates)
                    raise UnreadableBody(f"answer body past {MAX_BODY_BYTES} bytes once decompressed")
                if time.monotonic() > deadline:
                    raise openai.APITimeoutError(request=response.http_request)
        if json_too_deep(body.decode("utf-8", "replace")):
            raise UnreadableBody(f"answer JSON nested deeper than {MAX_JSON_DEPTH} levels")
        return ChatCompletion.model_validate_json(bytes(body))

    def _to_response(self, completion: Any, latency_ms: float) -> ChatResponse:
        choices = getattr(completion, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise self._fail("unreadable answer, not retried: the response has no choices")
        first = choices[0]
        message = getattr(first, "message", None)
        usage = getattr(completion, "usage", None)
        return ChatResponse(
            text=getattr(message, "content", None) or "",
            model=getattr(completion, "model", None) or self.model,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            finish_reason=getattr(first, "finish_reason", None),
            latency_ms=round(latency_ms, 3),
            tool_calls=read_tool_calls(message),
        )

    def probe(self, timeout_s: float = 15.0) -> None:
        """One cheap check, before any work, that the endpoint answers, accepts the key and serves the
        model. Raises ``LLMError`` with a one-line reason (unreachable / authentication / missing model).

        ``GET /models`` first (no tokens spent); when the model is not listed, or the server has no
        listing, a one-token chat request decides (llama.cpp serves any model name it is given)."""
        api = self._api.with_options(timeout=min(timeout_s, self.timeout_s), max_retries=0)
        listed: list[str] | None = None
        try:
            listed = [str(getattr(m, "id", "")) for m in api.models.list().data]
        except openai.APIError as exc:
            self._reach_error(exc)  # raises on unreachable / auth; any other answer: no listing here
        except ValueError:
            listed = None
        if listed is not None and self.model in listed:
            return
        try:
            api.chat.completions.create(model=self.model, messages=[{"role": "user", "content": "ping"}],
                                        max_tokens=1, temperature=0.0)
        except openai.APIError as exc:
            self._probe_error(exc, listed)
            raise self._fail(f"the endpoint refused a one-token request: {_describe(exc)}") from None
        except ValueError as exc:
            raise self._fail(f"unreadable answer to a one-token request: {type(exc).__name__}") from None

    def _reach_error(self, exc: openai.APIError) -> None:
        """Raise the one-line ``LLMError`` for a busy or unreachable endpoint or a refused key: a server that
        accepted the connection but gave no answer in time, or answered 429/503, is busy, not unreachable."""
        if _busy(exc):
            raise self._fail(f"busy ({_describe(exc)}); it is up but did not answer now: let it finish its other "
                             "requests, or lower --concurrency") from None
        if isinstance(exc, openai.APIConnectionError):
            raise self._fail(f"unreachable ({_describe(exc)})") from None
        if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
            raise self._fail(f"authentication failed (HTTP {exc.status_code}); check the API key "
                             "(--api-key-env names the environment variable that holds it)") from None

    def _probe_error(self, exc: openai.APIError, listed: list[str] | None) -> None:
        """``_reach_error``, and the one-line ``LLMError`` for a model the endpoint does not serve."""
        self._reach_error(exc)
        message = str(getattr(exc, "message", "")).lower()
        if isinstance(exc, openai.NotFoundError) and listed is not None or (
                isinstance(exc, openai.APIStatusError) and exc.status_code in (400, 404) and "model" in message):
            names = ", ".join(listed[:8]) if listed else "none listed"
            raise self._fail(f"model not found (models served there: {names})") from None

    def close(self) -> None:
        """Close the HTTP connections (and the cache when this client opened it)."""
        self._api.close()
        if self.cache is not None and self._owns_cache:
            self.cache.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
