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
import logging
import sqlite3
import threading
from pathlib import Path

from faithsieve.lean.backend import CheckResult, LeanBackend
from pydantic import ValidationError

log = logging.getLogger(__name__)

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
    """The sqlite store (thread-safe; disabled after the first unusable-file error)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self.disabled = False

    def _disable(self, exc: Exception) -> None:
        if not self.disabled:
            log.warning("Lean check cache %s is unusable (%s: %s); continuing without a cache",
                        self.path, type(exc).__name__, exc)
        self.disabled = True
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None

    def _open(self) -> sqlite3.Connection | None:
        if self._conn is None and not self.disabled:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.path, check_same_thread=False, timeout=5.0)
                conn.execute("CREATE TABLE IF NOT EXISTS checks (key TEXT PRIMARY KEY, result TEXT NOT NULL)")
                conn.execute("SELECT count(*) FROM checks").fetchone()
                conn.commit()
                self._conn = conn
            except (sqlite3.Error, OSError) as exc:
                self._disable(exc)
        return self._conn

    def get(self, key: str) -> CheckResult | None:
        with self._lock:
            conn = self._open()
            if conn is None:
                return None
            try:
                row = conn.execute("SELECT result FROM checks WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error as exc:
                self._disable(exc)
                return None
        if row is None:
            return None
        try:
            return CheckResult.model_validate_json(row[0])
        except ValidationError:
            return None

    def put(self, key: str, result: CheckResult) -> None:
        with self._lock:
            conn = self._open()
            if conn is None:
                return
            try:
                conn.execute("INSERT OR REPLACE INTO checks (key, result) VALUES (?, ?)", (key, result.model_dump_json()))
                conn.commit()
            except sqlite3.Error as exc:
                self._disable(exc)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


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

    def close(self) -> None:
        self.cache.close()
        self.inner.close()
