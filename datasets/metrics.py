"""Scoring metrics for first-error localization: pure functions over (label, prediction) pairs.

A pair is ``(label, predicted)``: each is the 1-based first erroneous step, or ``None`` for
"correct". A *flag* is a prediction that is not ``None``. Ratios whose denominator is
empty are ``None`` (JSON ``null``), never 0, so an empty subset cannot pass for a bad one.

ProcessBench definitions: *error accuracy* is exact accuracy on items with an error,
*correct accuracy* is the share of correct items predicted correct, and *F1* is their
harmonic mean.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

Pair = tuple[int | None, int | None]
"""``(label, predicted)``: 1-based step numbers, ``None`` = correct; a prediction may also be ``UNKNOWN``."""

UNKNOWN = -1
"""The prediction of an item that got no answer (a failed model call, a check stopped at its limit, a
refused input): never right, never a flag. It counts as wrong in every accuracy, a correct proof's
included, and is counted on its own (``unknown``)."""


def is_flag(pred: int | None) -> bool:
    """``pred`` names a step (not ``correct``, not ``UNKNOWN``)."""
    return pred is not None and pred > 0


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def binary_accuracy(pairs: Sequence[Pair]) -> float | None:
    """Share of items whose correct/flawed status is predicted right (step ignored)."""
    return _ratio(sum(pred != UNKNOWN and (lab is None) == (pred is None) for lab, pred in pairs), len(pairs))


def exact_accuracy(pairs: Sequence[Pair]) -> float | None:
    """Share of items where the prediction equals the label (same first step, or both correct)."""
    return _ratio(sum(lab == pred for lab, pred in pairs), len(pairs))


def error_accuracy(pairs: Sequence[Pair]) -> float | None:
    """Exact accuracy on the items that have an error (ProcessBench's "error" accuracy)."""
    flawed = [(lab, pred) for lab, pred in pairs if lab is not None]
    return _ratio(sum(lab == pred for lab, pred in flawed), len(flawed))


def correct_accuracy(pairs: Sequence[Pair]) -> float | None:
    """Share of correct items predicted correct (no flag raised)."""
    sound = [pred for lab, pred in pairs if lab is None]
    return _ratio(sum(pred is None for pred in sound), len(sound))


def harmonic_f1(a: float | None, b: float | None) -> float | None:
    """Harmonic mean of two accuracies; ``None`` if either is undefined, 0 if both are 0."""
    if a is None or b is None:
        return None
    return 0.0 if a + b == 0 else 2 * a * b / (a + b)


def f1(pairs: Sequence[Pair]) -> float | None:
    """ProcessBench F1: harmonic mean of error accuracy and correct accuracy."""
    return harmonic_f1(error_accuracy(pairs), correct_accuracy(pairs))


def flags(pairs: Sequence[Pair]) -> int:
    """Number of items where an error was reported."""
    return sum(is_flag(pred) for _, pred in pairs)


def flag_precision(pairs: Sequence[Pair]) -> float | None:
    """Flags at exactly the labelled step / all flags."""
    flagged = [(lab, pred) for lab, pred in pairs if is_flag(pred)]
    return _ratio(sum(lab == pred for lab, pred in flagged), len(flagged))


def early_flags(pairs: Sequence[Pair]) -> int:
    """Flags on correct items or before the labelled step: steps labelled sound, so certain false alarms."""
    return sum(is_flag(pred) and (lab is None or pred < lab) for lab, pred in pairs)  # type: ignore[operator]


def flag_soundness(pairs: Sequence[Pair]) -> float | None:
    """Share of flags on a proof labelled wrong at or after its labelled first error.

    A flag after the first error may point at a genuine later false formula, so it counts as
    sound; a flag on a correct proof or before the first error cannot be right."""
    n = flags(pairs)
    return _ratio(n - early_flags(pairs), n)


def correct_flagged(pairs: Sequence[Pair]) -> float | None:
    """Share of the proofs labelled correct that received a flag (``1 - correct_accuracy`` when no
    prediction is ``UNKNOWN``)."""
    sound = [pred for lab, pred in pairs if lab is None]
    return _ratio(sum(is_flag(pred) for pred in sound), len(sound))


def late_flags(pairs: Sequence[Pair]) -> int:
    """Flags after the labelled step: maybe a real later error, but not the first one."""
    return sum(is_flag(pred) and lab is not None and pred > lab for lab, pred in pairs)  # type: ignore[operator]


def missed_errors(pairs: Sequence[Pair]) -> int:
    """Flawed items predicted correct."""
    return sum(lab is not None and pred is None for lab, pred in pairs)


def wrong_flag_offsets(pairs: Sequence[Pair]) -> list[int]:
    """``predicted - label`` for each flag on a flawed item at the wrong step (negative = early)."""
    return [pred - lab for lab, pred in pairs if lab is not None and pred is not None and pred > 0 and pred != lab]


def mean_signed_offset(pairs: Sequence[Pair]) -> float | None:
    """Mean of ``predicted - label`` over wrong flags on flawed items (< 0: flags come early)."""
    offs = wrong_flag_offsets(pairs)
    return sum(offs) / len(offs) if offs else None


def coverage(records: Iterable[Mapping[str, Any]]) -> dict[str, float | int | None]:
    """Aggregate per-proof coverage records (``steps``, ``steps_decided``, ``obligations``,
    ``obligations_decided``; missing keys count as 0).

    ``step_coverage``: decided steps / all steps; ``obligation_decided_rate``: decided / all
    obligations; ``proofs_with_decided_step``: share of proofs where some step was decided.
    """
    n = steps = decided = obs = obs_decided = with_decided = 0
    for rec in records:
        n += 1
        s_dec = int(rec.get("steps_decided") or 0)
        steps += int(rec.get("steps") or 0)
        decided += s_dec
        obs += int(rec.get("obligations") or 0)
        obs_decided += int(rec.get("obligations_decided") or 0)
        with_decided += s_dec > 0
    return {
        "steps": steps,
        "steps_decided": decided,
        "obligations": obs,
        "obligations_decided": obs_decided,
        "step_coverage": _ratio(decided, steps),
        "obligation_decided_rate": _ratio(obs_decided, obs),
        "proofs_with_decided_step": _ratio(with_decided, n),
    }


def step_bucket(step: int | None, top: int = 10) -> str:
    """Row/column name of a step in the confusion table: ``correct``, ``1``..``top-1``, ``≥top``."""
    if step is None:
        return "correct"
    if step == UNKNOWN:
        return "unknown"
    return str(step) if step < top else f"≥{top}"


def confusion(pairs: Sequence[Pair], top: int = 10) -> dict[str, dict[str, int]]:
    """Counts of labelled step (outer key) vs predicted step (inner key), steps ≥ ``top`` pooled."""
    out: dict[str, dict[str, int]] = {}
    for lab, pred in pairs:
        row = out.setdefault(step_bucket(lab, top), {})
        col = step_bucket(pred, top)
        row[col] = row.get(col, 0) + 1
    return out


def offset_histogram(pairs: Sequence[Pair]) -> dict[str, int]:
    """Counts per outcome for plots: signed offsets of flags on flawed items (``"0"`` = exact),
    plus ``"flag on correct"`` and ``"missed"``; items right about being correct are left out."""
    c: Counter[str] = Counter()
    for lab, pred in pairs:
        if pred == UNKNOWN:
            c["unknown"] += 1
        elif lab is None and pred is not None:
            c["flag on correct"] += 1
        elif lab is not None and pred is None:
            c["missed"] += 1
        elif lab is not None and pred is not None:
            c[str(pred - lab)] += 1
    return dict(c)


# ---------------------------------------------------------------------------------------
# The registry of headline metrics (pure; used by summaries and the bootstrap)

METRICS: dict[str, Callable[[Sequence[Pair]], float | None]] = {
    "binary_accuracy": binary_accuracy,
    "exact_accuracy": exact_accuracy,
    "error_accuracy": error_accuracy,
    "correct_accuracy": correct_accuracy,
    "f1": f1,
    "flag_precision": flag_precision,
}
"""Headline ratios, by name; each gets a bootstrap interval."""


def _vectorized(labels: np.ndarray, preds: np.ndarray) -> dict[str, np.ndarray]:
    """The METRICS over resampled rows: ``labels``/``preds`` are (B, n), 0 = correct, ``UNKNOWN`` = no answer."""
    with np.errstate(invalid="ignore", divide="ignore"):
        is_err = labels > 0
        flagged = preds > 0
        exact = labels == preds
        n = labels.shape[1]
        n_err = is_err.sum(axis=1)
        n_ok = n - n_err
        ea = np.where(n_err > 0, (exact & is_err).sum(axis=1) / np.maximum(n_err, 1), np.nan)
        ca = np.where(n_ok > 0, (exact & ~is_err).sum(axis=1) / np.maximum(n_ok, 1), np.nan)
        f = np.where(ea + ca > 0, 2 * ea * ca / (ea + ca), np.where(np.isnan(ea + ca), np.nan, 0.0))
        n_flag = flagged.sum(axis=1)
        fp = np.where(n_flag > 0, (flagged & exact).sum(axis=1) / np.maximum(n_flag, 1), np.nan)
        return {
            "binary_accuracy": ((is_err == flagged) & (preds != UNKNOWN)).mean(axis=1),
            "exact_accuracy": exact.mean(axis=1),
            "error_accuracy": ea,
            "correct_accuracy": ca,
            "f1": f,
            "flag_precision": fp,
        }


def bootstrap_ci(
    pairs: Sequence[Pair], *, resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> dict[str, tuple[float, float] | None]:
    """Percentile bootstrap interval for each headline metric (items resampled with replacement).

    Deterministic for a given ``seed``; ``None`` where the metric is undefined in every resample.
    """
    names = list(METRICS)
    if not pairs or resamples <= 0:
        return {k: None for k in names}
    labels = np.array([lab or 0 for lab, _ in pairs], dtype=np.int64)
    preds = np.array([pred or 0 for _, pred in pairs], dtype=np.int64)
    rng = np.random.default_rng(seed)
    n = len(pairs)
    chunks: dict[str, list[np.ndarray]] = {k: [] for k in names}
    step = max(1, 2_000_000 // n)
    done = 0
    while done < resamples:
        b = min(step, resamples - done)
        idx = rng.integers(0, n, size=(b, n))
        for k, v in _vectorized(labels[idx], preds[idx]).items():
            chunks[k].append(v)
        done += b
    lo_q, hi_q = 100 * (1 - level) / 2, 100 * (1 + level) / 2
    out: dict[str, tuple[float, float] | None] = {}
    for k in names:
        vals = np.concatenate(chunks[k])
        vals = vals[~np.isnan(vals)]
        out[k] = None if vals.size == 0 else (float(np.percentile(vals, lo_q)), float(np.percentile(vals, hi_q)))
    return out


def summarize(pairs: Sequence[Pair]) -> dict[str, Any]:
    """All point metrics for one group of items."""
    n_flags = flags(pairs)
    early = early_flags(pairs)
    out: dict[str, Any] = {
        "n": len(pairs),
        "n_error": sum(lab is not None for lab, _ in pairs),
        "n_correct": sum(lab is None for lab, _ in pairs),
    }
    out.update({name: fn(pairs) for name, fn in METRICS.items()})
    out.update({
        "flags": n_flags,
        "exact_flags": sum(is_flag(pred) and pred == lab for lab, pred in pairs),
        "unknown": sum(pred == UNKNOWN for _, pred in pairs),
        "early_flags": early,
        "early_flag_rate": _ratio(early, n_flags),
        "flag_soundness": flag_soundness(pairs),
        "correct_flagged": correct_flagged(pairs),
        "late_flags": late_flags(pairs),
        "missed_errors": missed_errors(pairs),
        "mean_signed_offset": mean_signed_offset(pairs),
    })
    return out


def flag_scope_precision(triples: Sequence[tuple[int | None, int | None, object]]) -> dict[str, dict[str, Any]]:
    """Exact flag precision per verdict ``flag_scope`` (``first``: every earlier obligation was
    decided; ``at_or_before``: some stayed unknown), from ``(label, predicted, scope)``."""
    out: dict[str, dict[str, Any]] = {}
    for scope in ("first", "at_or_before"):
        pairs = [(lab, pred) for lab, pred, sc in triples if sc == scope and is_flag(pred)]
        out[scope] = {"flags": len(pairs), "exact_flags": sum(lab == pred for lab, pred in pairs),
                      "flag_precision": flag_precision(pairs), "flag_soundness": flag_soundness(pairs)}
    return out


def breakdown(groups: Iterable[tuple[str, Pair]], **ci: Any) -> dict[str, dict[str, Any]]:
    """``summarize`` (with bootstrap intervals) per group key, keys sorted."""
    by: dict[str, list[Pair]] = {}
    for key, pair in groups:
        by.setdefault(key, []).append(pair)
    return {k: {**summarize(v), "ci95": bootstrap_ci(v, **ci)} for k, v in sorted(by.items())}


# ---------------------------------------------------------------------------------------
# The metrics document of a run


def _pred_step(value: object) -> int | None:
    if value == "unknown":
        return UNKNOWN
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def score_document(
    rows: Sequence[tuple[Any, Mapping[str, Any]]], run: Mapping[str, Any] | None = None,
    *, resamples: int = 1000, seed: int = 0,
) -> dict[str, Any]:
    """Everything in ``metrics.json`` from ``(item, prediction record)`` rows (pure).

    ``item`` is a ``LabelledItem`` (its label is authoritative); ``run`` carries run facts
    (dataset, sessions with ``items`` and ``wall_s``) that are copied in.
    """
    run = dict(run or {})
    pairs: list[Pair] = [(it.first_error, _pred_step(rec.get("predicted"))) for it, rec in rows]
    out = summarize(pairs)
    out["coverage"] = coverage(rec.get("coverage") or {} for _, rec in rows)
    times = sorted(float(rec.get("time_ms") or 0.0) for _, rec in rows)
    sessions = run.get("sessions") or []
    wall = sum(float(s.get("wall_s") or 0) for s in sessions)
    done = sum(int(s.get("items") or 0) for s in sessions)
    out["proofs_per_second"] = round(done / wall, 3) if wall > 0 else None
    out["pipeline_proofs_per_second"] = round(1000 * len(times) / sum(times), 3) if times and sum(times) > 0 else None
    out["time_ms"] = {
        "mean": round(sum(times) / len(times), 3) if times else None,
        "p50": round(times[len(times) // 2], 3) if times else None,
        "p95": round(times[min(len(times) - 1, int(0.95 * len(times)))], 3) if times else None,
        "max": round(times[-1], 3) if times else None,
    }
    errors = Counter(str(rec.get("error")).split(":", 1)[0] for _, rec in rows if rec.get("error"))
    out["pipeline_errors"] = sum(errors.values())
    out["pipeline_error_kinds"] = dict(errors.most_common())
    out["flag_scope"] = flag_scope_precision([(it.first_error, _pred_step(rec.get("predicted")), rec.get("flag_scope"))
                                              for it, rec in rows])
    out["ci95"] = {k: (list(v) if v else None) for k, v in bootstrap_ci(pairs, resamples=resamples, seed=seed).items()}
    out["bootstrap"] = {"resamples": resamples, "seed": seed, "level": 0.95, "method": "percentile, items resampled"}
    ci = {"resamples": resamples, "seed": seed}
    out["per_subset"] = breakdown(((it.subset, p) for (it, _), p in zip(rows, pairs, strict=True)), **ci)
    out["per_domain"] = breakdown(((it.domain or "-", p) for (it, _), p in zip(rows, pairs, strict=True)), **ci)
    out["confusion"] = confusion(pairs)
    out["offset_histogram"] = offset_histogram(pairs)
    out["run"] = run
    return out
