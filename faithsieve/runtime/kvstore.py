"""A small thread-safe sqlite key -> text store that never fails its caller.

Both caches (LLM answers, Lean check results) are this store with a typed layer on top. A file
that cannot be opened, read or written (corrupt, locked, a directory, an unwritable folder) is
reported once as a warning naming ``label``; the store then behaves as empty and every call is a
no-op. Opening is eager or on first use (``lazy``), so a store that is never used writes nothing.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)


class SqliteStore:
    """Rows ``(key TEXT PRIMARY KEY, <column> TEXT, created REAL)`` in one table of one file."""

    def __init__(self, path: str | Path, table: str, column: str, label: str, *, lazy: bool = False,
                 wal: bool = False, busy_timeout_s: float = 5.0) -> None:
        if not (table.isidentifier() and column.isidentifier()):
            raise ValueError(f"bad table or column name: {table!r}, {column!r}")
        self.path = Path(path).expanduser()
        self.table, self.column, self.label = table, column, label
        self._wal, self._busy = wal, busy_timeout_s
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self.disabled = False
        if not lazy:
            with self._lock:
                self._open()

    @property
    def enabled(self) -> bool:
        """False once the file proved unusable (every ``get`` then misses)."""
        return not self.disabled

    def _disable(self, why: str) -> None:
        if not self.disabled:
            log.warning("%s disabled, continuing without a cache (%s: %s)", self.label, self.path, why)
        self.disabled = True
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None

    def _open(self) -> sqlite3.Connection | None:
        if self._conn is None and not self.disabled:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.path, check_same_thread=False, timeout=self._busy)
                try:
                    if self._wal:
                        conn.execute("PRAGMA journal_mode=WAL")
                        conn.execute("PRAGMA synchronous=NORMAL")
                    with conn:
                        conn.execute(f"CREATE TABLE IF NOT EXISTS {self.table} "
                                     f"(key TEXT PRIMARY KEY, {self.column} TEXT NOT NULL, created REAL NOT NULL)")
                    conn.execute(f"SELECT count(*) FROM {self.table}").fetchone()
                except BaseException:
                    conn.close()
                    raise
                self._conn = conn
            except (sqlite3.Error, OSError) as exc:
                self._disable(f"cannot open: {type(exc).__name__}: {exc}")
        return self._conn

    def get(self, key: str) -> str | None:
        """The stored text for ``key``, or ``None``."""
        with self._lock:
            conn = self._open()
            if conn is None:
                return None
            try:
                row = conn.execute(f"SELECT {self.column} FROM {self.table} WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error as exc:
                self._disable(f"read failed: {exc}")
                return None
        return None if row is None else str(row[0])

    def put(self, key: str, text: str) -> None:
        """Store ``text`` under ``key`` (one transaction; a later put replaces it)."""
        with self._lock:
            conn = self._open()
            if conn is None:
                return
            try:
                with conn:
                    conn.execute(f"INSERT OR REPLACE INTO {self.table} (key, {self.column}, created) VALUES (?, ?, ?)",
                                 (key, text, time.time()))
            except sqlite3.Error as exc:
                self._disable(f"write failed: {exc}")

    def __len__(self) -> int:
        with self._lock:
            if self._conn is None:
                return 0
            try:
                return int(self._conn.execute(f"SELECT count(*) FROM {self.table}").fetchone()[0])
            except sqlite3.Error:
                return 0

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
