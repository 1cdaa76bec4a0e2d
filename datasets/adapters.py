"""Adapters from public step-labelled datasets to ``LabelledItem`` (1-based labels).

Each adapter is registered by name, recognises a record by the record's own fields, and
converts one record at a time. A conversion either returns an item, raises ``Exclude``
(a well-formed record left out by the adapter's documented policy, counted per reason),
or raises ``ValueError``/``KeyError``/``TypeError`` (a malformed record, reported with its
location). ``load_dataset`` reads a file or a directory, picks the adapter per file
(or uses the one forced by name), and returns items plus every bad and excluded record.

The parts: ``registry`` (the ``Adapter`` type, registration, detection), ``sources`` (one
adapter per public dataset, registered on import), ``steptext`` (step-marker helpers) and
``reading`` (files and records). This module loads datasets with them and re-exports their
public names. Label conventions of the sources are described in ``datasets/README.md``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from faithsieve.datasets import sources
from faithsieve.datasets.formats import BadRecord, Excluded, LabelledItem
from faithsieve.datasets.reading import dataset_files, read_records
from faithsieve.datasets.registry import (
    Adapter,
    Converter,
    Exclude,
    RecordContext,
    adapter_names,
    detect_adapter,
    get_adapter,
    register,
)
from faithsieve.datasets.steptext import (
    MarkedSteps,
    group_marked_steps,
    strip_number_prefix,
    strip_step_marker,
)

__all__ = [
    "Adapter",
    "Converter",
    "Exclude",
    "LoadedDataset",
    "MarkedSteps",
    "RecordContext",
    "adapter_names",
    "dataset_files",
    "detect_adapter",
    "get_adapter",
    "group_marked_steps",
    "load_dataset",
    "read_records",
    "register",
    "strip_number_prefix",
    "strip_step_marker",
]


@dataclass
class LoadedDataset:
    """The result of reading a dataset: items in file order, and everything left out."""

    items: list[LabelledItem] = field(default_factory=list)
    """Converted items, ids unique."""
    bad: list[BadRecord] = field(default_factory=list)
    """Malformed records, each with its location and reason."""
    excluded: list[Excluded] = field(default_factory=list)
    """Records left out by an adapter's policy or as exact duplicates."""
    formats: dict[str, str] = field(default_factory=dict)
    """File -> adapter name used for it."""

    def excluded_counts(self) -> dict[str, int]:
        """How many records were excluded, per reason."""
        return dict(Counter(e.reason for e in self.excluded).most_common())


def load_dataset(path: str | Path, format: str | None = None) -> LoadedDataset:
    """Read a file or directory into items, detecting each file's adapter unless ``format`` names one.

    Ids must be unique across the dataset: a repeated id is a bad record, except for
    adapters marked ``dedupe`` (MR-GSM8K repeats items across its files), where a repeat
    with the same problem, steps and label is excluded as a duplicate.
    """
    forced = get_adapter(format) if format else None
    out = LoadedDataset()
    first_seen: dict[str, tuple[LabelledItem, str]] = {}
    for file in dataset_files(Path(path)):
        adapter = forced
        for rec in read_records(file):
            if isinstance(rec, BadRecord):
                out.bad.append(rec)
                continue
            location, index, record = rec
            if adapter is None:
                adapter = detect_adapter(record)
                if adapter is None:
                    keys = sorted(record)[:12] if isinstance(record, Mapping) else type(record).__name__
                    out.bad.append(BadRecord(path=str(file), location=location,
                                             reason=f"cannot detect the format from fields {keys}; "
                                                    f"{sources.undetected_hint(record)}"))
                    break
                out.formats[str(file)] = adapter.name
            elif str(file) not in out.formats:
                out.formats[str(file)] = adapter.name
            if not isinstance(record, Mapping):
                out.bad.append(BadRecord(path=str(file), location=location,
                                         reason=f"expected a JSON object, got {type(record).__name__}"))
                continue
            lacking = sorted(adapter.required - record.keys())
            if lacking:
                out.bad.append(BadRecord(path=str(file), location=location,
                                         reason=f"missing field(s) {', '.join(lacking)} of format {adapter.name!r}"))
                continue
            ctx = RecordContext(path=file, location=location, index=index)
            try:
                item = adapter.convert(record, ctx)
            except Exclude as exc:
                out.excluded.append(Excluded(path=str(file), location=location, reason=str(exc)))
                continue
            except KeyError as exc:
                out.bad.append(BadRecord(path=str(file), location=location, reason=f"missing field {exc.args[0]!r}"))
                continue
            except (ValueError, TypeError) as exc:
                out.bad.append(BadRecord(path=str(file), location=location, reason=str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
                continue
            prev = first_seen.get(item.id)
            if prev is not None:
                same = (prev[0].problem, prev[0].steps, prev[0].label) == (item.problem, item.steps, item.label)
                if same and adapter.dedupe:
                    out.excluded.append(Excluded(path=str(file), location=location, reason="duplicate of an earlier item with the same id"))
                else:
                    what = "" if same else " with different content"
                    out.bad.append(BadRecord(path=str(file), location=location,
                                             reason=f"duplicate id {item.id!r}{what} (first at {prev[1]})"))
                continue
            first_seen[item.id] = (item, f"{file}: {location}")
            out.items.append(item)
    return out
