"""An in-memory LRU cache of verdict bodies, keyed by a hash of everything the verdict depends on.

Bounded by entry count and by bytes. Only successful verdicts are stored; the
cached body is the one the worker produced (its timings are those of that run).
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from typing import Any

from faithsieve.core.settings import Settings


def cache_key(data: dict[str, Any], settings: Settings) -> str:
    """SHA-256 of the pipeline input and every pipeline setting, canonically serialised."""
    doc = {"input": data, "settings": settings.model_dump(mode="json")}
    raw = json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


class VerdictCache:
    """LRU of ``key -> (body, verdict, evidence counts)``."""

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.bytes = 0
        self._data: OrderedDict[str, tuple[bytes, str, dict[str, int]]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._data)

    @property
    def enabled(self) -> bool:
        return self.max_entries > 0 and self.max_bytes > 0

    def get(self, key: str) -> tuple[bytes, str, dict[str, int]] | None:
        hit = self._data.get(key)
        if hit is not None:
            self._data.move_to_end(key)
        return hit

    def put(self, key: str, body: bytes, verdict: str, evidence: dict[str, int]) -> None:
        if not self.enabled or len(body) > self.max_bytes:
            return
        old = self._data.pop(key, None)
        if old is not None:
            self.bytes -= len(old[0])
        self._data[key] = (body, verdict, evidence)
        self.bytes += len(body)
        while len(self._data) > self.max_entries or self.bytes > self.max_bytes:
            _, (dropped, _, _) = self._data.popitem(last=False)
            self.bytes -= len(dropped)
