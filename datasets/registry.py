"""The adapter registry: what an adapter is, registration by name, and detection by a record's fields.

The adapters themselves register in ``faithsieve.datasets.sources`` when it is imported;
``faithsieve.datasets.adapters`` imports it, so importing that module gives the full registry.
Registration order is detection order: a record goes to the first adapter whose fields it has.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faithsieve.datasets.formats import LabelledItem

__all__ = ["Adapter", "Converter", "Exclude", "RecordContext", "adapter_names", "detect_adapter", "get_adapter",
           "register"]


class Exclude(Exception):
    """Raised by a converter for a record its policy leaves out (not an error in the file)."""


@dataclass(frozen=True)
class RecordContext:
    """Where a record comes from: passed to converters for ids and subsets."""

    path: Path
    """The file."""
    location: str
    """``line N`` (JSONL), ``index N`` (JSON array) or ``KEY[i]`` (object of lists)."""
    index: int
    """0-based position of the record in its file."""

    @property
    def stem(self) -> str:
        """The file name without extension (the default subset name)."""
        return self.path.stem


Converter = Callable[[Mapping[str, Any], RecordContext], LabelledItem]


@dataclass(frozen=True)
class Adapter:
    """One dataset format."""

    name: str
    """Registry name, used by ``--format``."""
    description: str
    """One line for ``--help`` and the README."""
    required: frozenset[str]
    """Fields a record must have for auto-detection."""
    convert: Converter
    """Record -> item (or ``Exclude``/``ValueError``)."""
    detect_extra: Callable[[Mapping[str, Any]], bool] | None = None
    """An extra test beyond ``required``, for formats whose fields overlap."""
    dedupe: bool = False
    """Whether a repeated id with identical content is a known duplicate to drop (else it is a bad record)."""

    def detects(self, record: object) -> bool:
        """Whether a record has this format's fields."""
        if not isinstance(record, Mapping) or not self.required <= record.keys():
            return False
        return self.detect_extra is None or bool(self.detect_extra(record))


_REGISTRY: dict[str, Adapter] = {}


def register(adapter: Adapter) -> Adapter:
    """Add an adapter to the registry (a name can be registered once)."""
    if adapter.name in _REGISTRY:
        raise ValueError(f"adapter {adapter.name!r} is already registered")
    _REGISTRY[adapter.name] = adapter
    return adapter


def adapter_names() -> list[str]:
    """Registered adapter names, in registration order."""
    return list(_REGISTRY)


def get_adapter(name: str) -> Adapter:
    """The adapter registered under ``name`` (``ValueError`` naming the known ones otherwise)."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r}; known formats: {', '.join(_REGISTRY)}") from None


def detect_adapter(record: object) -> Adapter | None:
    """The first registered adapter whose fields the record has, or ``None``."""
    for adapter in _REGISTRY.values():
        if adapter.detects(record):
            return adapter
    return None
