"""``evidence/<id>.json`` in a run directory: for every scored item whose check produced any
evidence (missed errors included), the item, its prediction, what the prediction was
(``exact``, ``missed error``, ``early by 2`` ...) and every step's checks.

``predict`` leaves the per-step checks in the record under ``CHECKS_KEY``; the run pops them
before the record goes to ``predictions.jsonl`` and writes them here. A new run clears the
folder; a resumed run keeps the files of the items it reuses.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from faithsieve.datasets.formats import LabelledItem
from faithsieve.datasets.report import safe_name

EVIDENCE_DIR = "evidence"
CHECKS_KEY = "_checks"
"""Record field carrying per-step checks from ``predict`` to the run (never written to predictions.jsonl)."""


def step_checks(steps: Any) -> list[dict[str, Any]]:
    """Per step of a verdict: number, status and its evidence (steps with none left out)."""
    return [{"step": rep.step, "status": rep.status, "evidence": [e.model_dump(mode="json") for e in rep.evidence]}
            for rep in steps if rep.evidence]


def outcome(label: int | None, predicted: Any) -> str:
    """What a prediction was against its label, in words."""
    pred = predicted if isinstance(predicted, int) and not isinstance(predicted, bool) else None
    if pred == label:
        return "correct kept" if label is None else "exact"
    if label is None:
        return "flag on a correct proof"
    if pred is None:
        return "missed error"
    return f"early by {label - pred}" if pred < label else f"late by {pred - label}"


def evidence_doc(item: LabelledItem, rec: Mapping[str, Any], checks: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The content of one evidence file."""
    from faithsieve.datasets.unlabelled import is_unlabelled

    unlabelled = is_unlabelled(item)
    what = f"predicted {rec.get('predicted')}" if unlabelled else outcome(item.first_error, rec.get("predicted"))
    shown = item.model_dump(mode="json", exclude={"label"} if unlabelled else None)
    doc: dict[str, Any] = {"what": what, "item": shown,
                           "prediction": {k: v for k, v in rec.items() if k != CHECKS_KEY}}
    if checks is not None:
        doc["steps"] = checks
    return doc


def write_evidence(out: Path, item: LabelledItem, rec: Mapping[str, Any], checks: list[dict[str, Any]] | None) -> Path:
    """Write ``evidence/<id>.json`` atomically; returns its path."""
    from faithsieve.runtime.atomic import write_atomic

    path = out / EVIDENCE_DIR / f"{safe_name(item.id)}.json"
    write_atomic(path, json.dumps(evidence_doc(item, rec, checks), indent=1, ensure_ascii=False) + "\n")
    return path


def clear_evidence(out: Path) -> None:
    """Remove the evidence folder of an earlier run (a new run starts without stale files)."""
    shutil.rmtree(out / EVIDENCE_DIR, ignore_errors=True)
