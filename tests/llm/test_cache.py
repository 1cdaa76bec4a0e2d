"""The sqlite response cache: key canonicalisation, persistence, threads, damaged files."""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from faithsieve.llm.cache import ResponseCache, cache_key
from faithsieve.llm.types import ChatMessage, ChatRequest, ChatResponse

SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}, "reason": {"type": "string"}},
          "required": ["answer", "reason"]}


def request(**changes: Any) -> ChatRequest:
    base: dict[str, Any] = {
        "prompt_id": "scan", "prompt_version": "1",
        "messages": (ChatMessage(role="system", content="Be brief."), ChatMessage(role="user", content="2+2?")),
        "temperature": 0.0, "top_p": 1.0, "max_tokens": 64, "seed": 7, "json_schema": SCHEMA,
    }
    base.update(changes)
    return ChatRequest(**base)


def answer(text: str = '{"answer": 4}', **changes: Any) -> ChatResponse:
    base: dict[str, Any] = {"text": text, "model": "m", "prompt_tokens": 12, "completion_tokens": 3,
                               "finish_reason": "stop", "latency_ms": 41.5}
    base.update(changes)
    return ChatResponse(**base)


# ---- the key ----

def test_key_is_stable_hex_sha256() -> None:
    k = cache_key("m", "json_schema", request())
    assert k == cache_key("m", "json_schema", request())
    assert len(k) == 64 and all(c in "0123456789abcdef" for c in k)


def test_key_ignores_dict_order_of_the_schema() -> None:
    reordered = {"required": ["answer", "reason"], "properties": {"reason": {"type": "string"},
                                                                  "answer": {"type": "integer"}}, "type": "object"}
    assert cache_key("m", "json_schema", request()) == cache_key("m", "json_schema", request(json_schema=reordered))


@pytest.mark.parametrize("change", [
    {"prompt_id": "audit"},
    {"prompt_version": "2"},
    {"messages": (ChatMessage(role="system", content="Be brief."), ChatMessage(role="user", content="2+3?"))},
    {"messages": (ChatMessage(role="user", content="Be brief."), ChatMessage(role="user", content="2+2?"))},
    {"temperature": 0.7},
    {"top_p": 0.9},
    {"max_tokens": 65},
    {"seed": 8},
    {"seed": None},
    {"json_schema": None},
    {"json_schema": {**SCHEMA, "required": ["answer"]}},
])
def test_key_changes_with_every_request_field(change: dict[str, Any]) -> None:
    assert cache_key("m", "json_schema", request()) != cache_key("m", "json_schema", request(**change))


def test_key_changes_with_model_and_mode() -> None:
    base = cache_key("m", "json_schema", request())
    assert base != cache_key("other", "json_schema", request())
    assert base != cache_key("m", "json_object_schema", request())
    assert base != cache_key("m", "none", request())


def test_message_boundaries_matter() -> None:
    a = request(messages=(ChatMessage(role="user", content="ab"), ChatMessage(role="user", content="c")))
    b = request(messages=(ChatMessage(role="user", content="a"), ChatMessage(role="user", content="bc")))
    assert cache_key("m", "none", a) != cache_key("m", "none", b)


# ---- storage ----

def test_round_trip_and_persistence(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        assert cache.enabled
        assert cache.get("k") is None
        cache.put("k", answer())
        assert cache.get("k") == answer()
        assert len(cache) == 1
    with ResponseCache(path) as again:
        assert again.get("k") == answer()


def test_put_replaces_and_never_stores_the_cached_flag(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        cache.put("k", answer("first"))
        cache.put("k", answer("second", cached=True))
        got = cache.get("k")
        assert got is not None and got.text == "second" and got.cached is False
        assert len(cache) == 1


def test_wal_mode_and_parent_folders(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "c.sqlite"
    with ResponseCache(path) as cache:
        cache.put("k", answer())
    assert path.is_file()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_home_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    with ResponseCache("~/.cache/fs/llm.sqlite") as cache:
        cache.put("k", answer())
        assert cache.path == tmp_path / ".cache" / "fs" / "llm.sqlite"
    assert (tmp_path / ".cache" / "fs" / "llm.sqlite").is_file()


def test_threads_share_one_cache(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(25):
                cache.put(f"{n}-{i}", answer(f"{n}/{i}"))
                got = cache.get(f"{n}-{i}")
                assert got is not None and got.text == f"{n}/{i}"
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(cache) == 200
    cache.close()


# ---- damage ----

def test_corrupt_file_warns_and_runs_without_cache(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not a sqlite database at all" * 200)
    with caplog.at_level(logging.WARNING, logger="faithsieve.llm.cache"):
        cache = ResponseCache(path)
    assert not cache.enabled
    assert "disabled" in caplog.text
    cache.put("k", answer())
    assert cache.get("k") is None
    assert len(cache) == 0


def test_unusable_folder_warns_and_runs_without_cache(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with caplog.at_level(logging.WARNING, logger="faithsieve.llm.cache"):
        cache = ResponseCache(blocker / "sub" / "c.sqlite")
    assert not cache.enabled and "disabled" in caplog.text
    assert cache.get("k") is None


def test_damaged_entry_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        cache.put("k", answer())
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE responses SET response = '{\"text\": 1' WHERE key = 'k'")
    conn.close()
    with ResponseCache(path) as cache:
        assert cache.get("k") is None
        cache.put("k", answer("fresh"))
        got = cache.get("k")
        assert got is not None and got.text == "fresh"
