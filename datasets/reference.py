"""The reference corpus: every solution in the public sources that is correct by construction or by label.

A flag on one of these is a false alarm of the sieve (a misreading) or a genuine slip in the solution
itself; ``bench/reference_precision.py`` reads every flag and keeps the genuine slips in a committed
list, so that a flag kind's misreadings can be counted. The parts, relative to the raw data folder
(``../shared/datasets/raw``): GSM8K train reference solutions and the ``reference-solutions/`` files
(all correct by construction), and the items labelled ``correct`` of every step-labelled source.

Items keep their adapter's steps; their id is prefixed with the part's name (``processbench/gsm8k-3``)
so ids stay unique across parts, and their subset is the part's name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from faithsieve.datasets.adapters import load_dataset
from faithsieve.datasets.formats import LabelledItem

__all__ = ["REFERENCE_PARTS", "ReferencePart", "reference_items"]


@dataclass(frozen=True)
class ReferencePart:
    """One part of the reference corpus."""

    name: str
    """The part's name: the item ids' prefix and their subset."""
    path: str
    """File or folder, relative to the raw data folder."""
    labelled: bool
    """The source labels its items: only those labelled ``correct`` are taken (else every item is correct)."""


REFERENCE_PARTS: tuple[ReferencePart, ...] = (
    ReferencePart("gsm8k-train", "gsm8k/train.jsonl", labelled=False),
    ReferencePart("math500", "reference-solutions/math500-part.jsonl", labelled=False),
    ReferencePart("aime2024", "reference-solutions/aime2024.jsonl", labelled=False),
    ReferencePart("processbench", "processbench", labelled=True),
    ReferencePart("mr-ben", "mr-ben", labelled=True),
    ReferencePart("parc", "parc", labelled=True),
    ReferencePart("mr-math", "mr-math", labelled=True),
    ReferencePart("bigbench-mistake", "bigbench-mistake", labelled=True),
    ReferencePart("proofloc-university", "proofloc-university/data/test.jsonl", labelled=True),
)
"""The parts, in the order the bench reports them."""


def _part_items(raw: Path, part: ReferencePart) -> list[LabelledItem]:
    data = load_dataset(raw / part.path)
    out = []
    for it in data.items:
        if part.labelled and it.label != "correct":
            continue
        meta = {**it.meta, "subset": part.name, "source_id": it.id}
        out.append(it.model_copy(update={"id": f"{part.name}/{it.id}", "meta": meta, "label": "correct"}))
    return out


def reference_items(raw: Path, parts: Sequence[str] = ()) -> list[LabelledItem]:
    """The reference corpus read from ``raw`` (the raw data folder): every part, or those named in ``parts``
    (``ValueError`` for a name that is no part; ``FileNotFoundError`` when a part's data is missing)."""
    names = {p.name for p in REFERENCE_PARTS}
    unknown = [p for p in parts if p not in names]
    if unknown:
        raise ValueError(f"unknown reference part(s) {', '.join(unknown)}; parts: {', '.join(sorted(names))}")
    out: list[LabelledItem] = []
    for part in REFERENCE_PARTS:
        if parts and part.name not in parts:
            continue
        if not (raw / part.path).exists():
            raise FileNotFoundError(f"{raw / part.path}: the reference part {part.name!r} is missing")
        out.extend(_part_items(raw, part))
    return out
