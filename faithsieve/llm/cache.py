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
import sqlite3
import threading
import time
from pathlib import Path

from pydantic import ValidationError
from typing_extensions import Self

from faithsieve.llm.types import ChatMessage, ChatRequest, ChatResponse, StructuredMode

log = logging.getLogger(__name__)

_KEY_FORMAT = 2
"""Bumped whenever the key document changes shape, so old entries are simply never hit
(2: tool specs, tool choice and the tool fields of messages joined the key)."""

_SCHEMA = """CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    response TEXT NOT NULL,
    created REAL NOT NULL
)"""


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
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                with conn:
                    conn.execute(_SCHEMA)
                conn.execute("SELECT count(*) FROM responses").fetchone()
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        except (sqlite3.Error, OSError) as exc:
            self._disable(f"cannot open {self.path}: {exc}")

    @property
    def enabled(self) -> bool:
        """False when the database could not be used (every ``get`` then misses)."""
        return self._conn is not None

    def _disable(self, why: str) -> None:
        log.warning("LLM response cache disabled, running without it (%s)", why)
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
        self._conn = None

    def get(self, key: str) -> ChatResponse | None:
        """The stored answer for ``key``, or ``None``."""
        with self._lock:
            if self._conn is None:
                return None
            try:
                row = self._conn.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error as exc:
                self._disable(f"read failed: {exc}")
                return None
        if row is None:
            return None
        try:
            return ChatResponse.model_validate_json(row[0])
        except ValidationError:
            log.warning("LLM response cache: unreadable entry %s ignored", key[:12])
            return None

    def put(self, key: str, response: ChatResponse) -> None:
        """Store ``response`` under ``key`` (one transaction; a later put replaces it)."""
        body = response.model_copy(update={"cached": False}).model_dump_json()
        with self._lock:
            if self._conn is None:
                return
            try:
                with self._conn:
                    self._conn.execute("INSERT OR REPLACE INTO responses (key, response, created) VALUES (?, ?, ?)",
                                       (key, body, time.time()))
            except sqlite3.Error as exc:
                self._disable(f"write failed: {exc}")

    def __len__(self) -> int:
        with self._lock:
            if self._conn is None:
                return 0
            try:
                return int(self._conn.execute("SELECT count(*) FROM responses").fetchone()[0])
            except sqlite3.Error:
                return 0

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
