"""``faithsieve rewrite --compare ORIGINAL REWRITTEN PREDICTIONS``: a contamination probe.

A model's answers to the original items and to their rewrites are scored by the same grader
(``faithsieve.grader.grade`` with the step check off: the final answer is extracted and compared
with the reference as a value). The accuracy drop is ``acc(original) - acc(rewritten)`` over the
*paired* items: original items that have a prediction and at least one rewrite with a
prediction. An item's rewritten score is the mean over its predicted variants. The 95 %
confidence interval is a paired bootstrap: items are resampled with replacement (both scores of
an item travel together) ``bootstrap`` times under a fixed seed, and the 2.5th and 97.5th
percentiles of the resampled drops are reported.

PREDICTIONS is JSONL, one line per answered item: ``{"id": ..., "response": "<the model's full
answer text>"}``. ``id`` is an original item's id (``<stem>-<line index>`` of ORIGINAL, or its
own ``id`` field) or a rewritten row's ``id`` (``test-12/v0``). Lines with other ids are counted
and ignored.
"""

from __future__ import annotations

import random
import zlib
from pathlib import Path
from typing import Any

from faithsieve.grader import GraderConfig, grade
from faithsieve.rewrite.runner import iter_jsonl, read_records

MAX_RESPONSE_CHARS = 20_000
MAX_BOOTSTRAP = 100_000
_GRADER = GraderConfig(process=False, isolation="inline")


def _reference(record: dict[str, Any]) -> str:
    answer = record.get("answer")
    return answer if isinstance(answer, str) else ""


def _same_original(row: dict[str, Any], record: dict[str, Any], where: str, item: str) -> None:
    """A rewritten row is paired with the original item it names only when it carries that item's text."""
    kept = row.get("original")
    if not isinstance(kept, dict) or kept.get("question") != record.get("question") \
            or kept.get("solution") != record.get("answer"):
        raise ValueError(f"{where} names {item} as its original but carries another question or solution "
                         "(an edited original_id?); run faithsieve rewrite --check on it")


def read_predictions(path: Path) -> dict[str, str]:
    """``id -> response``; raises ``ValueError`` naming the bad line."""
    preds: dict[str, str] = {}
    for lineno, obj in iter_jsonl(path):
        if not isinstance(obj.get("id"), (str, int)) or not isinstance(obj.get("response"), str):
            raise ValueError(f"{path}:{lineno + 1}: needs 'id' (string) and 'response' (string)")
        preds[str(obj["id"])] = obj["response"][:MAX_RESPONSE_CHARS]
    return preds


def _correct(response: str, reference: str, problem: str) -> float:
    return 1.0 if grade(response, reference, problem, config=_GRADER).outcome else 0.0


def paired_bootstrap(pairs: list[tuple[float, float]], *, samples: int, seed: int) -> tuple[float, float]:
    """95 % percentile interval of ``mean(a - b)`` over ``pairs`` resampled with replacement."""
    if not pairs:
        raise ValueError("no paired items")
    rng = random.Random(seed)
    diffs = [a - b for a, b in pairs]
    n = len(diffs)
    stats = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(samples))
    return stats[int(0.025 * (samples - 1))], stats[int(0.975 * (samples - 1))]


def compare(original: Path, rewritten: Path, predictions: Path, *, bootstrap: int = 2000,
            seed: int = 0) -> dict[str, Any]:
    """Score the predictions on both sides and report the paired accuracy drop with its interval."""
    if not 1 <= bootstrap <= MAX_BOOTSTRAP:
        raise ValueError(f"bootstrap samples must be between 1 and {MAX_BOOTSTRAP}")
    originals = dict(read_records(original))
    preds = read_predictions(predictions)
    by_original: dict[str, list[float]] = {}
    for rid, row in read_records(rewritten):
        oid = row.get("original_id")
        if isinstance(oid, str) and oid in originals:
            _same_original(row, originals[oid], f"{rewritten}: row {rid[:80]!r}", f"{original}'s item {oid[:60]!r}")
        if rid in preds and isinstance(oid, str):
            by_original.setdefault(oid, []).append(
                _correct(preds[rid], str(row.get("answer", "")), str(row.get("question", ""))))
    pairs: list[tuple[float, float]] = []
    for oid, scores in sorted(by_original.items()):
        rec = originals.get(oid)
        if rec is None or oid not in preds:
            continue
        ori = _correct(preds[oid], _reference(rec), str(rec.get("question", "")))
        pairs.append((ori, sum(scores) / len(scores)))
    known = set(originals) | {rid for rid, _ in read_records(rewritten)}
    out: dict[str, Any] = {
        "paired_items": len(pairs), "rewritten_predictions": sum(len(s) for s in by_original.values()),
        "ignored_predictions": sum(1 for p in preds if p not in known),
        "grader": "faithsieve.grader.grade (final answer as a value; step check off)",
    }
    if not pairs:
        out.update(accuracy_original=None, accuracy_rewritten=None, drop=None, ci95=None)
        return out
    acc_o = sum(a for a, _ in pairs) / len(pairs)
    acc_r = sum(b for _, b in pairs) / len(pairs)
    lo, hi = paired_bootstrap(pairs, samples=bootstrap, seed=seed)
    out.update(accuracy_original=round(acc_o, 6), accuracy_rewritten=round(acc_r, 6), drop=round(acc_o - acc_r, 6),
               ci95=[round(lo, 6), round(hi, 6)], bootstrap_samples=bootstrap, bootstrap_seed=seed)
    return out


def demo_memorizer(original: Path, rewritten: Path, *, recall: float = 0.7) -> list[dict[str, str]]:
    """DEMO predictions, not a model: a toy "memorizer" that answers an original item with its
    reference answer when a hash of the id falls under ``recall`` (else with 0), and answers every
    rewrite with the answer it memorized for the original. It shows what contamination looks like
    to ``compare``; its numbers say nothing about any real model."""
    out = []
    refs: dict[str, str] = {}
    for rid, rec in read_records(original):
        remembered = (zlib.crc32(rid.encode()) % 1000) / 1000 < recall
        answer = _reference(rec).rsplit("####", 1)[-1].strip() if remembered else "0"
        refs[rid] = answer
        out.append({"id": rid, "response": f"The answer is {answer}."})
    for rid, row in read_records(rewritten):
        oid = row.get("original_id")
        if isinstance(oid, str) and oid in refs:
            out.append({"id": rid, "response": f"The answer is {refs[oid]}."})
    return out
