"""Reading proofs without labels, for ``faithsieve predict`` (verdicts in bulk, nothing to score against).

A record is read as

- ``problem`` (or ``question``) with ``steps`` (a list of strings) or ``proof`` / ``solution`` (one text, split
  into steps as ``faithsieve localize`` splits it): what ``localize`` reads, and MATH's records;
- ``question`` with a GSM8K ``answer`` (calculator annotations removed, ``#### N`` read as the last step,
  as ``faithsieve inject`` reads it);
- otherwise a record of any labelled format ``faithsieve score`` reads (``--format`` forces one): its
  label is not used.

Every item comes back as a ``LabelledItem`` marked ``meta.unlabelled`` whose label (``"correct"``) is a
placeholder no prediction record shows. Ids: the record's ``id`` (a string or an integer), else
``<file stem>-<index>``; a repeated id is a bad record, reported with its location like every other.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from faithsieve.datasets.adapters import LoadedDataset, load_dataset
from faithsieve.datasets.formats import BadRecord, LabelledItem
from faithsieve.datasets.reading import dataset_files, read_records

__all__ = ["UNLABELLED", "is_unlabelled", "load_unlabelled"]

UNLABELLED = "unlabelled"
"""The ``meta`` key that marks an item read without a label (its ``label`` is a placeholder)."""


def is_unlabelled(item: LabelledItem) -> bool:
    """Whether the item was read by ``load_unlabelled`` (its label means nothing)."""
    return bool(item.meta.get(UNLABELLED))


def _steps_of(r: Mapping[str, Any]) -> list[str] | None:
    """The steps a record writes (``steps``, ``proof`` or a GSM8K ``answer``), ``None`` when it writes none."""
    if "steps" in r:
        steps = r["steps"]
        if not isinstance(steps, list) or not steps or not all(isinstance(s, str) for s in steps):
            raise ValueError("field 'steps' must be a non-empty list of strings")
        return list(steps)
    for key in ("proof", "solution"):  # MATH and its kin write the worked solution under 'solution'
        if isinstance(r.get(key), str):
            from faithsieve.split import split_proof_text

            steps = [t for _, t in split_proof_text(r[key])]
            if not steps:
                raise ValueError(f"field {key!r} has no step text")
            return steps
    if isinstance(r.get("answer"), str) and "####" in r["answer"]:
        from faithsieve.datasets.inject import gsm8k_steps

        return gsm8k_steps(r["answer"])
    return None


def _problem_of(r: Mapping[str, Any]) -> str | None:
    for key in ("problem", "question"):
        if isinstance(r.get(key), str):
            return str(r[key])
    return None


def _item_id(r: Mapping[str, Any], file: Path, location: str, index: int) -> str:
    raw = r.get("id")
    if isinstance(raw, str) and raw:
        return raw
    if isinstance(raw, int) and not isinstance(raw, bool):
        return str(raw)
    return file.stem if location == "object" else f"{file.stem}-{index}"


def _read_plain(file: Path, out: LoadedDataset) -> bool:
    """Read a file of plain proof records into ``out``; ``False`` (nothing added) when its first record is not one."""
    first = True
    for rec in read_records(file):
        if isinstance(rec, BadRecord):
            out.bad.append(rec)
            if first:
                return True
            continue
        location, index, record = rec
        if not isinstance(record, Mapping) or _problem_of(record) is None or not (
                {"steps", "proof", "solution"} & record.keys() or "answer" in record):
            if first:
                return False
            out.bad.append(BadRecord(path=str(file), location=location,
                                     reason="no proof: a record needs 'problem' (or 'question') and 'steps', 'proof', "
                                            "'solution' or a GSM8K 'answer'"))
            continue
        if first:
            gsm8k = "answer" in record and not {"steps", "proof", "solution"} & record.keys()
            out.formats[str(file)] = "gsm8k" if gsm8k else "proof"
            first = False
        try:
            steps = _steps_of(record)
            if steps is None:
                raise ValueError("no proof: 'answer' has no '#### N' line, and there is no 'steps' or 'proof'")
            meta = {UNLABELLED: True, **({"subset": record["subset"]} if isinstance(record.get("subset"), str) else {})}
            out.items.append(LabelledItem(id=_item_id(record, file, location, index), problem=_problem_of(record) or "",
                                          steps=tuple(steps), label="correct", meta=meta,
                                          domain=record.get("domain") if isinstance(record.get("domain"), str) else None))
        except ValueError as exc:
            out.bad.append(BadRecord(path=str(file), location=location, reason=str(exc).splitlines()[0]))
    return True


def _unlabel(item: LabelledItem) -> LabelledItem:
    return item.model_copy(update={"label": "correct", "meta": {**item.meta, UNLABELLED: True}})


def _dedupe(data: LoadedDataset) -> LoadedDataset:
    seen: set[str] = set()
    items = []
    for it in data.items:
        if it.id in seen:
            data.bad.append(BadRecord(path="", location=f"id {it.id!r}", reason="duplicate id (give each record its own 'id')"))
            continue
        seen.add(it.id)
        items.append(it)
    data.items = items
    return data


def load_unlabelled(path: str | Path, format: str | None = None) -> LoadedDataset:
    """Read a file or directory of proofs, with or without labels (see the module's docstring); ``format``
    forces one of ``faithsieve score``'s adapters. Labels read are dropped."""
    out = LoadedDataset()
    for file in dataset_files(Path(path)):
        if format is None and _read_plain(file, out):
            continue
        labelled = load_dataset(file, format)
        out.items.extend(_unlabel(it) for it in labelled.items)
        out.bad.extend(labelled.bad)
        out.excluded.extend(labelled.excluded)
        out.formats.update(labelled.formats)
    return _dedupe(out)
