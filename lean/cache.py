"""A content-hash cache of Lean check results (sqlite), wrapped around any ``LeanBackend``.

The key is the sha256 of the backend's name, its pinned versions (Lean, Mathlib, ...), the
snippet and a coarse class of the time limit. Only outcomes that the snippet and the versions
determine are stored: ``valid``, ``sorry``, ``lean_error``. ``repl_error`` and ``timeout`` say
something about the machine at that moment and are always re-run. Nothing is stored or read while
the backend cannot name its Lean version (a result must be tied to the Lean that produced it).

The file is opened on first use. A file that is not a readable cache (corrupt, locked, a
directory) gives one warning, and the backend then runs uncached; checks never fail because of it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from faithsieve.lean.backend import CheckResult, LeanBackend, warm_backend
from pydantic import ValidationError

from faithsieve.runtime.kvstore import SqliteStore

CACHEABLE = frozenset({"valid", "sorry", "lean_error"})
"""Outcomes fixed by the snippet and the versions."""

_TIMEOUT_CLASSES = (5.0, 15.0, 60.0, 300.0)


def timeout_class(timeout_s: float | None) -> str:
    """A coarse label for a time limit: results under very different limits are kept apart."""
    if timeout_s is None or timeout_s <= 0:
        return "default"
    for bound in _TIMEOUT_CLASSES:
        if timeout_s <= bound:
            return f"<={bound:g}s"
    return f">{_TIMEOUT_CLASSES[-1]:g}s"


def cache_key(backend: str, versions: dict[str, str], code: str, timeout_s: float | None) -> str:
    """The content hash naming one check."""
    blob = json.dumps({"backend": backend, "versions": sorted(versions.items()), "timeout": timeout_class(timeout_s),
                       "code": code}, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CheckCache:
    """The sqlite store of check results (thread-safe; opened on first use; disabled after the first
    unusable-file error)."""

    def __init__(self, path: str | Path) -> None:
        self._store = SqliteStore(path, "checks", "result", "Lean check cache", lazy=True)
        self.path = self._store.path

    @property
    def disabled(self) -> bool:
        return self._store.disabled

    def get(self, key: str) -> CheckResult | None:
        text = self._store.get(key)
        if text is None:
            return None
        try:
            return CheckResult.model_validate_json(text)
        except ValidationError:
            return None

    def put(self, key: str, result: CheckResult) -> None:
        self._store.put(key, result.model_dump_json())

    def close(self) -> None:
        self._store.close()


class CachedBackend:
    """``inner`` with a result cache in front; the same ``LeanBackend`` protocol."""

    def __init__(self, inner: LeanBackend, path: str | Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.cache = CheckCache(path)
        self.hits = 0
        self.misses = 0

    def available(self) -> tuple[bool, str]:
        return self.inner.available()

    def versions(self) -> dict[str, str]:
        return self.inner.versions()

    def check(self, code: str, timeout_s: float | None = None) -> CheckResult:
        versions = self.inner.versions()
        key = None
        if versions.get("lean", "unknown") != "unknown":
            key = cache_key(self.name, versions, code, timeout_s)
            hit = self.cache.get(key)
            if hit is not None:
                self.hits += 1
                return hit
        self.misses += 1
        result = self.inner.check(code, timeout_s)
        if key is not None and result.status in CACHEABLE:
            self.cache.put(key, result)
        return result

    def warm(self, header: str) -> CheckResult | None:
        """The inner backend's start-up import (``faithsieve.lean.backend.warm_backend``); never cached."""
        return warm_backend(self.inner, header)

    def close(self) -> None:
        self.cache.close()
        self.inner.close()
