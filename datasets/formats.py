"""The ProofLoc JSONL format: one labelled proof a line.

``{"id": str, "problem": str, "steps": [str, ...], "label": "correct" | k}`` with ``k``
1-based (the first erroneous step), plus optional ``domain``, ``source`` and ``meta``.

Loading validates every line and returns the bad ones as values (line number and
reason), so that a caller can report each of them; nothing is skipped silently.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)

from faithsieve.runtime.atomic import write_lines_atomic

_FROZEN = ConfigDict(frozen=True, extra="forbid")

Label = Literal["correct"] | StrictInt
"""``"correct"`` or the 1-based index of the first erroneous step."""


class LabelledItem(BaseModel):
    """One proof with its first-error label."""

    model_config = _FROZEN

    id: str = Field(min_length=1)
    """Identifier, unique within a dataset (predictions and resumption are keyed by it)."""
    problem: str
    """The problem statement."""
    steps: tuple[str, ...] = Field(min_length=1)
    """The proof's steps in order; step 1 is ``steps[0]``. A step may be blank where a source has
    one (labels are positional, so it is kept)."""
    label: Label
    """``"correct"``, or the 1-based index of the earliest erroneous step."""
    domain: str | None = None
    """Free-form topic, e.g. ``"gsm8k"``, ``"algebra"``, ``"number_theory"``."""
    source: str | None = None
    """Where the item comes from, e.g. ``"processbench"`` or ``"proofloc-mini"``."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Anything else: original id, generator, annotator reason, mutation record, ``subset``."""

    @field_validator("label", mode="before")
    @classmethod
    def _label_shape(cls, v: object) -> object:
        if v != "correct" and (isinstance(v, bool) or not isinstance(v, int)):
            raise ValueError(f'must be "correct" or a 1-based step number (an integer), got {v!r}')
        return v

    @model_validator(mode="after")
    def _label_in_range(self) -> LabelledItem:
        if isinstance(self.label, int) and not 1 <= self.label <= len(self.steps):
            raise ValueError(
                f"label {self.label} is outside 1..{len(self.steps)} (labels are 1-based step numbers)"
            )
        return self

    @property
    def first_error(self) -> int | None:
        """The label as a step number, ``None`` for a correct proof."""
        return None if self.label == "correct" else int(self.label)

    @property
    def subset(self) -> str:
        """The item's subset for per-subset tables: ``meta["subset"]``, else domain, else source."""
        s = self.meta.get("subset")
        if isinstance(s, str) and s:
            return s
        return self.domain or self.source or "all"

    def content_hash(self) -> str:
        """Short hash of what determines a prediction (problem, steps), to spot stale results."""
        h = hashlib.sha256(json.dumps([self.problem, list(self.steps)], ensure_ascii=False).encode())
        return h.hexdigest()[:16]

    def to_json_line(self) -> str:
        """The item as one ProofLoc JSONL line (no trailing newline); empty optionals left out."""
        d: dict[str, Any] = {"id": self.id, "problem": self.problem, "steps": list(self.steps), "label": self.label}
        if self.domain is not None:
            d["domain"] = self.domain
        if self.source is not None:
            d["source"] = self.source
        if self.meta:
            d["meta"] = self.meta
        return json.dumps(d, ensure_ascii=False)


class BadRecord(BaseModel):
    """A record that could not be turned into a ``LabelledItem``: reported, never skipped silently."""

    model_config = _FROZEN

    path: str
    """File the record is in."""
    location: str
    """Where in the file: ``line 12`` for JSONL, ``item 3`` for a JSON array, ``key[i]`` for an object."""
    reason: str
    """Why the record is unusable."""

    def __str__(self) -> str:
        return f"{self.path}: {self.location}: {self.reason}"


class Excluded(BaseModel):
    """A well-formed record that an adapter leaves out by its documented policy."""

    model_config = _FROZEN

    path: str
    """File the record is in."""
    location: str
    """Where in the file."""
    reason: str
    """The policy that excludes it, e.g. ``label points past the last step``; counted per reason."""


def validation_reason(exc: ValidationError) -> str:
    """A pydantic error as one line: ``field: message; ...``."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts)


def parse_item(data: object) -> LabelledItem:
    """Validate one decoded record as a ``LabelledItem`` (raises ``ValueError`` with a readable reason)."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    try:
        return LabelledItem.model_validate(data)
    except ValidationError as exc:
        raise ValueError(validation_reason(exc)) from None


def parse_proofloc_lines(lines: Iterable[str], path: str = "<input>") -> Iterator[LabelledItem | BadRecord]:
    """Parse ProofLoc JSONL lines; yield an item or a ``BadRecord`` (line number, reason) per line.

    Blank lines are allowed and ignored. A repeated id is a bad record (it names the first line).
    """
    seen: dict[str, int] = {}
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            yield BadRecord(path=path, location=f"line {lineno}", reason=f"invalid JSON ({exc.msg}, column {exc.colno})")
            continue
        try:
            item = parse_item(data)
        except ValueError as exc:
            yield BadRecord(path=path, location=f"line {lineno}", reason=str(exc))
            continue
        if item.id in seen:
            yield BadRecord(path=path, location=f"line {lineno}", reason=f"duplicate id {item.id!r} (first on line {seen[item.id]})")
            continue
        seen[item.id] = lineno
        yield item


def load_proofloc(path: str | Path) -> tuple[list[LabelledItem], list[BadRecord]]:
    """Load a ProofLoc JSONL file: the valid items and every bad line."""
    from faithsieve.runtime.textfile import read_utf8

    p = Path(path)
    items: list[LabelledItem] = []
    bad: list[BadRecord] = []
    for rec in parse_proofloc_lines(read_utf8(p).split("\n"), str(p)):
        if isinstance(rec, LabelledItem):
            items.append(rec)
        else:
            bad.append(rec)
    return items, bad


def write_proofloc(items: Iterable[LabelledItem], path: str | Path) -> int:
    """Write items as ProofLoc JSONL (atomically: a temp file beside it, then rename); return the
    count. ``IsADirectoryError`` when ``path`` is a directory; on any failure the temp file is removed."""
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(21, "Is a directory", str(p))
    return write_lines_atomic(p, (item.to_json_line() for item in items), mode=0o644)
