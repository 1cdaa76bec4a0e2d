"""Verdicts in bulk for proofs without labels (``faithsieve predict``): the scoring run's journal, limits and
workers (``faithsieve.scoring.run.journal``), without metrics.

``run_predict`` reads the proofs with ``faithsieve.datasets.unlabelled``, predicts every one not yet in the
output directory's ``predictions.jsonl`` (append-only, a whole fsynced line per item: a killed run resumes
where it stopped), each in a killable worker under the per-item time and memory limits of ``score`` (or on a
Ray cluster), and writes ``summary.json`` (verdict, basis and flag-kind counts, speed) atomically. A record
holds ``id``, ``verdict``, ``step``, ``basis``, ``flag_kind``, ``reason``, ``evidence_summary`` (one line per
refuted check of the flagged step), ``evidence``, ``coverage``, ``error`` and timing; no label.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faithsieve.core.errors import InputError
from faithsieve.core.settings import Settings
from faithsieve.datasets.adapters import LoadedDataset
from faithsieve.datasets.formats import LabelledItem
from faithsieve.datasets.unlabelled import load_unlabelled
from faithsieve.runtime.atomic import write_atomic
from faithsieve.scoring.run import (
    METRICS,
    PREDICTIONS,
    SUMMARY,
    InvalidDataset,
    ScoreRequest,
    journal,
)
from faithsieve.scoring.sampling import select


@dataclass
class PredictResult:
    """What a ``predict`` run did."""

    summary: dict[str, Any]
    """The content of summary.json."""
    out: Path
    """The output directory."""
    processed: int
    """Items predicted in this invocation."""
    reused: int
    """Items whose prediction was already in the output directory."""
    dataset: LoadedDataset
    """The proofs read (items, bad and excluded records)."""
    warnings: list[str] = field(default_factory=list)
    """Things the reader must know (a run budget that stopped the run)."""


def default_predict_out(path: Path) -> Path:
    """``runs/<file stem or folder name>-predictions``."""
    name = path.stem if path.is_file() else path.name or "proofs"
    return Path("runs") / f"{name}-predictions"


def summarize(records: Sequence[dict[str, Any]], sessions: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Counts of a run's records (pure): verdicts, bases and flag kinds, refused inputs, items per second."""
    wall = sum(float(s.get("wall_s", 0) or 0) for s in sessions)
    items = sum(int(s.get("items", 0) or 0) for s in sessions)
    return {
        "n": len(records),
        "verdicts": dict(Counter(str(r.get("verdict")) for r in records).most_common()),
        "basis": dict(Counter(str(r["basis"]) for r in records if r.get("basis")).most_common()),
        "flag_kind": dict(Counter(str(r["flag_kind"]) for r in records if r.get("flag_kind")).most_common()),
        "refused_or_failed": sum(1 for r in records if r.get("error")),
        "proofs_per_second": round(items / wall, 3) if wall > 0 else None,
    }


def _compact(out: Path, items: Sequence[LabelledItem], done: dict[str, dict[str, Any]]) -> None:
    """Rewrite ``predictions.jsonl`` atomically when a resumed run left superseded lines (an item whose text
    changed was predicted again): one line per id, the selected items first in their order."""
    path = out / PREDICTIONS
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines() if path.exists() else []
    if len([ln for ln in lines if ln.strip()]) == len(done):
        return
    order = [it.id for it in items if it.id in done]
    order += [i for i in done if i not in set(order)]
    write_atomic(path, "".join(json.dumps(done[i], ensure_ascii=False) + "\n" for i in order))


def run_predict(req: ScoreRequest) -> PredictResult:
    """Predict every proof of ``req.path`` into ``req.out`` (resumes from what is already there)."""
    settings = req.settings or Settings()
    if req.out.exists() and not req.out.is_dir():
        raise InputError(f"{req.out}: exists and is not a directory; give a directory for --out")
    if (req.out / METRICS).exists():
        raise InputError(f"{req.out}: holds a scored run (metrics.json); give predict another --out")
    data = load_unlabelled(req.path, req.format)
    if data.bad and not req.skip_invalid:
        raise InvalidDataset(f"{len(data.bad)} malformed record(s) in {req.path}", [str(b) for b in data.bad])
    known = {it.subset for it in data.items}
    missing = [s for s in req.subsets if s not in known]
    if missing:
        raise InputError(f"unknown subset(s) {', '.join(missing)}; subsets here: {', '.join(sorted(known))}")
    items = select(data.items, req.subsets, req.limit, "first" if req.sample == "first" else "stratified", req.seed)
    j = journal(req, items, settings, formats=sorted(set(data.formats.values())))
    _compact(req.out, items, j.done)
    records = [j.done[it.id] for it in items if it.id in j.done]
    summary = {**summarize(records, j.sessions), "dataset": str(req.path), "bad_records": len(data.bad),
               "excluded": data.excluded_counts(), "sessions": j.sessions, "config": j.config,
               "versions": j.identity["versions"], "data_sha256": j.identity["data_sha256"]}
    write_atomic(req.out / SUMMARY, json.dumps(summary, indent=1, ensure_ascii=False) + "\n")
    return PredictResult(summary=summary, out=req.out, processed=j.processed, reused=j.reused, dataset=data,
                         warnings=[j.stopped] if j.stopped else [])
