"""Scoring another system's predictions: a file of predicted first-error steps, joined by id with a labelled
dataset, gets ``score``'s metrics, bootstrap intervals, plots and report (nothing is run).

The file is JSONL or a JSON array of objects with ``id`` and the prediction under the first of
``PREDICTION_FIELDS`` present. Two conventions are read (``--convention``; detected when a value shows it):

- ``processbench``: ``-1`` = no error, ``k >= 0`` = the 0-based index of the first wrong step (ProcessBench);
- ``proofloc``: ``"correct"`` = no error, ``k >= 1`` (an integer or its digits) = the 1-based step (ProofLoc).

``null`` or ``"unknown"`` is a prediction of none (counted wrong in every accuracy, as ``score`` counts
``unknown``); a dataset item with no line in the file is counted the same way and reported. A value neither
convention reads, a step past the proof's last, or a repeated id is a bad line, listed with its location.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faithsieve.core.errors import InputError
from faithsieve.datasets.adapters import LoadedDataset, load_dataset
from faithsieve.datasets.formats import BadRecord, LabelledItem
from faithsieve.datasets.reading import read_records
from faithsieve.runtime.atomic import write_atomic
from faithsieve.scoring.sampling import class_gaps, select

CONVENTIONS = ("processbench", "proofloc")
"""The label conventions a prediction file can be written in."""
PREDICTION_FIELDS = ("predicted", "prediction", "pred", "first_error_step")
"""Where a prediction line holds its step, in the order they are looked for."""

Predicted = int | str
"""A 1-based step, ``"correct"`` or ``"unknown"`` (as ``predictions.jsonl`` writes them)."""


@dataclass
class ExternalPredictions:
    """A prediction file read into ``score``'s convention."""

    by_id: dict[str, Predicted]
    """Prediction by item id: a 1-based step, ``"correct"`` or ``"unknown"``."""
    convention: str
    """The convention the file was read in."""
    bad: list[str] = field(default_factory=list)
    """Lines that could not be read, each ``FILE: LOCATION: reason``."""


def _raw_value(rec: Mapping[str, Any]) -> tuple[bool, object]:
    for name in PREDICTION_FIELDS:
        if name in rec:
            return True, rec[name]
    return False, None


def _as_int(v: object) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        return int(v.strip())
    return None


def convert_value(v: object, convention: str) -> Predicted:
    """One predicted value in ``convention`` as a 1-based step, ``"correct"`` or ``"unknown"`` (``ValueError``
    naming the convention's values otherwise)."""
    if v is None or v == "unknown":
        return "unknown"
    k = _as_int(v)
    if convention == "processbench":
        if k == -1:
            return "correct"
        if k is not None and k >= 0:
            return k + 1
        raise ValueError(f"prediction {v!r} is not -1 (no error) or a 0-based step index (--convention processbench)")
    if v == "correct":
        return "correct"
    if k is not None and k >= 1:
        return k
    hint = "; -1 and 0 are ProcessBench's: pass --convention processbench" if k in (-1, 0) else ""
    raise ValueError(f"prediction {v!r} is not \"correct\" or a 1-based step (--convention proofloc){hint}")


def detect_convention(values: Sequence[object]) -> str:
    """The convention the values show: ``processbench`` when one is ``-1``, ``proofloc`` when one is
    ``"correct"``; an ``InputError`` asking for ``--convention`` when none shows it (or both do)."""
    pb = any(_as_int(v) == -1 for v in values)
    pl = any(v == "correct" for v in values)
    if pb != pl:
        return "processbench" if pb else "proofloc"
    why = "both -1 and \"correct\"" if pb else "neither -1 nor \"correct\", so a step k could be 0- or 1-based"
    raise InputError(f"the predictions hold {why}; pass --convention processbench (-1 / 0-based) or proofloc "
                     "(\"correct\" / 1-based)")


def read_predictions(path: Path, convention: str | None = None) -> ExternalPredictions:
    """Read a prediction file (see the module's docstring); ``convention`` ``None`` detects it."""
    rows: list[tuple[str, str, object]] = []
    bad: list[str] = []
    for rec in read_records(path):
        if isinstance(rec, BadRecord):
            bad.append(str(rec))
            continue
        location, _, record = rec
        has, value = _raw_value(record) if isinstance(record, Mapping) else (False, None)
        raw_id = record.get("id") if isinstance(record, Mapping) else None
        if not has or not isinstance(raw_id, (str, int)) or isinstance(raw_id, bool):
            bad.append(f"{path}: {location}: a line needs 'id' and one of {', '.join(PREDICTION_FIELDS)}")
            continue
        rows.append((location, str(raw_id), value))
    conv = convention or detect_convention([v for _, _, v in rows])
    out = ExternalPredictions(by_id={}, convention=conv, bad=bad)
    for location, id_, value in rows:
        if id_ in out.by_id:
            out.bad.append(f"{path}: {location}: duplicate id {id_!r}")
            continue
        try:
            out.by_id[id_] = convert_value(value, conv)
        except ValueError as exc:
            out.bad.append(f"{path}: {location}: {exc}")
    return out


def prediction_rows(items: Sequence[LabelledItem], preds: ExternalPredictions,
                    source: str) -> tuple[list[tuple[LabelledItem, dict[str, Any]]], list[str]]:
    """``(item, record)`` rows in ``score``'s shape for the dataset's items, and the problems found: a step past
    an item's last step (a bad line), items without a prediction (counted ``unknown``)."""
    rows: list[tuple[LabelledItem, dict[str, Any]]] = []
    problems: list[str] = []
    for it in items:
        p = preds.by_id.get(it.id, "unknown")
        rec: dict[str, Any] = {"id": it.id, "subset": it.subset, "domain": it.domain, "label": it.label, "predicted": p,
                               "verdict": "unknown" if p == "unknown" else "correct" if p == "correct" else "error",
                               "source": source}
        if isinstance(p, int) and p > len(it.steps):
            problems.append(f"{source}: id {it.id!r}: step {p} is past the proof's last step {len(it.steps)} "
                            f"(convention {preds.convention})")
        if it.id not in preds.by_id:
            rec["error"] = "no_prediction: the file has no line for this item"
        rows.append((it, rec))
    return rows, problems


@dataclass(frozen=True)
class ExternalRequest:
    """What to score: a dataset and a prediction file."""

    dataset: Path
    """The labelled dataset (any format ``score`` reads)."""
    predictions: Path
    """The other system's prediction file."""
    out: Path | None
    """Where to write predictions.jsonl, metrics.json, report.md and plots (``None``: nothing written)."""
    convention: str | None = None
    """``processbench`` or ``proofloc`` (``None``: detected)."""
    format: str | None = None
    """The dataset's adapter (``None``: detected)."""
    subsets: tuple[str, ...] = ()
    """Score only these subsets."""
    skip_invalid: bool = False
    """Go on without malformed dataset records or prediction lines (each still reported)."""
    resamples: int = 1000
    """Bootstrap resamples."""
    seed: int = 0
    """Bootstrap seed."""
    report: bool = True
    """Write report.md and plots."""


@dataclass
class ExternalResult:
    """What scoring a prediction file gave."""

    metrics: dict[str, Any]
    """The content of metrics.json."""
    predictions: dict[str, dict[str, Any]]
    """The prediction records by id (``score``'s shape)."""
    dataset: LoadedDataset
    """The dataset read."""
    warnings: list[str] = field(default_factory=list)
    """Items without a prediction, predictions of ids not in the dataset, a class missing from a subset."""


def score_external(req: ExternalRequest) -> ExternalResult:
    """Score ``req.predictions`` against ``req.dataset`` (``InputError`` listing bad lines unless skipped)."""
    from faithsieve.datasets.metrics import score_document
    from faithsieve.datasets.report import write_report
    from faithsieve.scoring.run import (
        METRICS,
        PREDICTIONS,
        STATE,
        SUMMARY,
        InvalidDataset,
    )

    data = load_dataset(req.dataset, req.format)
    if data.bad and not req.skip_invalid:
        raise InvalidDataset(f"{len(data.bad)} malformed record(s) in {req.dataset}", [str(b) for b in data.bad])
    items = select(data.items, req.subsets)
    preds = read_predictions(req.predictions, req.convention)
    rows, problems = prediction_rows(items, preds, str(req.predictions))
    bad = [*preds.bad, *problems]
    if bad and not req.skip_invalid:
        raise InputError(f"{len(bad)} unusable prediction line(s) in {req.predictions}", bad)
    ids = {it.id for it in items}
    missing = sum(1 for _, r in rows if r.get("error"))
    unused = len(set(preds.by_id) - ids)
    warnings = [*class_gaps(items)]
    if missing:
        warnings.append(f"{missing} of {len(items)} items have no prediction in {req.predictions}; counted unknown (wrong)")
    if unused:
        warnings.append(f"{unused} predictions name ids not in the dataset; ignored")
    run = {"dataset": str(req.dataset), "predictions_file": str(req.predictions), "convention": preds.convention,
           "formats": sorted(set(data.formats.values())), "subsets_selected": list(req.subsets),
           "bad_records": len(data.bad) + len(bad), "excluded": data.excluded_counts(),
           "missing_predictions": missing, "ignored_predictions": unused}
    metrics = score_document(rows, run, resamples=req.resamples, seed=req.seed)
    if req.out is not None:
        if req.out.exists() and not req.out.is_dir():
            raise InputError(f"{req.out}: exists and is not a directory; give a directory for --out")
        if (req.out / STATE).exists() or (req.out / SUMMARY).exists():
            raise InputError(f"{req.out}: holds a FaithSieve run; give the scored predictions another --out")
        req.out.mkdir(parents=True, exist_ok=True)
        write_atomic(req.out / PREDICTIONS, "".join(json.dumps(r, ensure_ascii=False) + "\n" for _, r in rows))
        write_atomic(req.out / METRICS, json.dumps(metrics, indent=1, ensure_ascii=False) + "\n")
        if req.report:
            write_report(req.out, metrics, rows)
    return ExternalResult(metrics=metrics, predictions={r["id"]: r for _, r in rows}, dataset=data, warnings=warnings)
