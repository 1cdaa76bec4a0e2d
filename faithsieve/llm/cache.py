"""A small sqlite cache of LLM answers, keyed by everything that determines an answer.

The key (``cache_key``) is the sha256 of a canonical JSON document holding the model id,
the structured-output mode and every field of the ``ChatRequest`` that reaches the server,
including the prompt id and version and any tools offered, so editing a prompt file (and bumping its version)
never serves a stale answer.

The cache is an optimisation, never a source of failure: a database that cannot be opened
or read (corrupt file, unwritable folder) is reported once as a warning and the cache then
behaves as empty.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from pydantic import ValidationError
from typing_extensions import Self

from faithsieve.llm.types import ChatMessage, ChatRequest, ChatResponse, StructuredMode
from faithsieve.runtime.kvstore import SqliteStore

log = logging.getLogger(__name__)

_KEY_FORMAT = 2
"""Bumped whenever the key document changes shape, so old entries are simply never hit
(2: tool specs, tool choice and the tool fields of messages joined the key)."""



def _message_key(m: ChatMessage) -> list[object]:
    """``[role, content]``, plus the tool fields when the message has any."""
    key: list[object] = [m.role, m.content]
    if m.tool_calls or m.tool_call_id is not None or m.name is not None:
        key.append({"tool_calls": [[c.id, c.name, c.arguments] for c in m.tool_calls],
                    "tool_call_id": m.tool_call_id, "name": m.name})
    return key


def cache_key(model: str, mode: StructuredMode, request: ChatRequest) -> str:
    """Hex sha256 of the canonical JSON of what determines the answer to ``request``."""
    doc = {
        "format": _KEY_FORMAT,
        "model": model,
        "mode": mode,
        "prompt_id": request.prompt_id,
        "prompt_version": request.prompt_version,
        "messages": [_message_key(m) for m in request.messages],
        "temperature": request.temperature,
        "top_p": request.top_p,
        "max_tokens": request.max_tokens,
        "seed": request.seed,
        "json_schema": request.json_schema,
        "schema_name": request.schema_name,
        "tools": list(request.tools) if request.tools is not None else None,
        "tool_choice": request.tool_choice,
    }
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """Answers stored in one sqlite file (WAL mode, one shared connection behind a lock)."""

    def __init__(self, path: str | Path) -> None:
        self._store = SqliteStore(path, "responses", "response", "LLM response cache", wal=True, busy_timeout_s=30.0)
        self.path = self._store.path

    @property
    def enabled(self) -> bool:
        """False when the database could not be used (every ``get`` then misses)."""
        return self._store.enabled

    def get(self, key: str) -> ChatResponse | None:
        """The stored answer for ``key``, or ``None``."""
        text = self._store.get(key)
        if text is None:
            return None
        try:
            return ChatResponse.model_validate_json(text)
        except ValidationError:
            log.warning("LLM response cache: unreadable entry %s ignored", key[:12])
            return None

    def put(self, key: str, response: ChatResponse) -> None:
        """Store ``response`` under ``key`` (one transaction; a later put replaces it)."""
        self._store.put(key, response.model_copy(update={"cached": False}).model_dump_json())

    def __len__(self) -> int:
        return len(self._store)

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
