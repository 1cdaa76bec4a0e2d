"""Metrics: table tests, one per function, on hand-computed cases."""

from __future__ import annotations

import pytest
from faithsieve.datasets import metrics as M

C = None  # "correct"

# label, predicted
MIXED = [
    (C, C),   # correct kept
    (C, 2),   # flag on a correct proof (early)
    (3, 3),   # exact
    (3, 1),   # early by 2
    (2, 5),   # late by 3
    (4, C),   # missed
]


@pytest.mark.parametrize(
    ("fn", "pairs", "expected"),
    [
        (M.binary_accuracy, MIXED, 4 / 6),
        (M.binary_accuracy, [], None),
        (M.binary_accuracy, [(1, 2)], 1.0),
        (M.exact_accuracy, MIXED, 2 / 6),
        (M.exact_accuracy, [(1, 2)], 0.0),
        (M.error_accuracy, MIXED, 1 / 4),
        (M.error_accuracy, [(C, C)], None),
        (M.correct_accuracy, MIXED, 1 / 2),
        (M.correct_accuracy, [(1, 1)], None),
        (M.f1, MIXED, 2 * 0.25 * 0.5 / 0.75),
        (M.f1, [(C, C), (1, 1)], 1.0),
        (M.f1, [(C, 1), (1, C)], 0.0),
        (M.f1, [(1, 1)], None),
        (M.flag_precision, MIXED, 1 / 4),
        (M.flag_precision, [(C, C), (1, C)], None),
        (M.flag_precision, [(2, 2), (3, 3)], 1.0),
        (M.flags, MIXED, 4),
        (M.flags, [], 0),
        (M.early_flags, MIXED, 2),
        (M.early_flags, [(3, 3), (3, 4)], 0),
        (M.flag_soundness, MIXED, 2 / 4),  # the exact flag and the late one
        (M.flag_soundness, [(3, 3), (3, 7)], 1.0),  # a late flag on a flawed proof is sound
        (M.flag_soundness, [(3, 2), (C, 1), (2, 2)], 1 / 3),  # before the error / on a correct proof: not
        (M.flag_soundness, [(C, C), (3, C)], None),  # no flags: undefined, not 0
        (M.correct_flagged, MIXED, 1 / 2),
        (M.correct_flagged, [(C, C), (C, C), (C, 4), (2, 1)], 1 / 3),  # flawed proofs do not count
        (M.correct_flagged, [(2, 2)], None),
        (M.late_flags, MIXED, 1),
        (M.late_flags, [(C, 4)], 0),
        (M.missed_errors, MIXED, 1),
        (M.wrong_flag_offsets, MIXED, [-2, 3]),
        (M.mean_signed_offset, MIXED, 0.5),
        (M.mean_signed_offset, [(3, 3), (C, 1)], None),
        (M.mean_signed_offset, [(5, 1), (5, 2)], -3.5),
    ],
)
def test_metric_table(fn, pairs, expected) -> None:  # type: ignore[no-untyped-def]
    got = fn(pairs)
    if isinstance(expected, float):
        assert got == pytest.approx(expected)
    else:
        assert got == expected


@pytest.mark.parametrize(("a", "b", "f"), [(0.5, 0.5, 0.5), (1.0, 0.0, 0.0), (0.0, 0.0, 0.0), (None, 1.0, None), (0.25, 1.0, 0.4)])
def test_harmonic_f1(a, b, f) -> None:  # type: ignore[no-untyped-def]
    assert M.harmonic_f1(a, b) == (pytest.approx(f) if f is not None else None)


def test_coverage() -> None:
    recs = [
        {"steps": 4, "steps_decided": 2, "obligations": 5, "obligations_decided": 4},
        {"steps": 6, "steps_decided": 0, "obligations": 0, "obligations_decided": 0},
        {},
    ]
    cov = M.coverage(recs)
    assert cov == {"steps": 10, "steps_decided": 2, "obligations": 5, "obligations_decided": 4,
                   "step_coverage": 0.2, "obligation_decided_rate": 0.8, "proofs_with_decided_step": pytest.approx(1 / 3)}
    assert M.coverage([])["step_coverage"] is None


@pytest.mark.parametrize(("step", "bucket"), [(None, "correct"), (1, "1"), (9, "9"), (10, "≥10"), (31, "≥10")])
def test_step_bucket(step, bucket) -> None:  # type: ignore[no-untyped-def]
    assert M.step_bucket(step) == bucket


def test_confusion_and_histogram() -> None:
    assert M.confusion(MIXED) == {"correct": {"correct": 1, "2": 1}, "3": {"3": 1, "1": 1}, "2": {"5": 1}, "4": {"correct": 1}}
    assert M.confusion([(12, 11)], top=10) == {"≥10": {"≥10": 1}}
    assert M.offset_histogram(MIXED) == {"flag on correct": 1, "0": 1, "-2": 1, "3": 1, "missed": 1}


def test_summarize() -> None:
    s = M.summarize(MIXED)
    assert (s["n"], s["n_error"], s["n_correct"], s["flags"], s["exact_flags"], s["early_flags"], s["late_flags"]) == (6, 4, 2, 4, 1, 2, 1)
    assert s["early_flag_rate"] == 0.5 and s["missed_errors"] == 1
    assert s["flag_soundness"] == 0.5 and s["correct_flagged"] == 0.5


def test_bootstrap_is_deterministic_and_brackets_the_point() -> None:
    pairs = MIXED * 20
    a = M.bootstrap_ci(pairs, resamples=300, seed=7)
    b = M.bootstrap_ci(pairs, resamples=300, seed=7)
    c = M.bootstrap_ci(pairs, resamples=300, seed=8)
    assert a == b and a != c
    for name, fn in M.METRICS.items():
        lo, hi = a[name]  # type: ignore[misc]
        assert lo <= fn(pairs) <= hi  # type: ignore[operator]
        assert 0.0 <= lo <= hi <= 1.0


def test_bootstrap_matches_scalar_metrics_on_one_resample() -> None:
    # the vectorized metrics agree with the scalar ones on the same rows
    import numpy as np

    pairs = MIXED + [(1, 1), (C, C), (2, C)]
    labels = np.array([[lab or 0 for lab, _ in pairs]])
    preds = np.array([[p or 0 for _, p in pairs]])
    vec = M._vectorized(labels, preds)
    for name, fn in M.METRICS.items():
        assert vec[name][0] == pytest.approx(fn(pairs))


def test_bootstrap_edge_cases() -> None:
    assert M.bootstrap_ci([]) == {k: None for k in M.METRICS}
    only_correct = M.bootstrap_ci([(C, C)] * 5, resamples=50)
    assert only_correct["error_accuracy"] is None and only_correct["correct_accuracy"] == (1.0, 1.0)
    assert only_correct["flag_precision"] is None


def test_breakdown_groups_sorted() -> None:
    out = M.breakdown([("b", (C, C)), ("a", (1, 1)), ("b", (2, C))], resamples=20)
    assert list(out) == ["a", "b"]
    assert out["b"]["n"] == 2 and out["b"]["correct_accuracy"] == 1.0 and out["b"]["error_accuracy"] == 0.0
    assert "ci95" in out["a"]


def test_flag_scope_precision_splits_the_flags_by_how_far_they_can_be_trusted() -> None:
    triples = [(3, 3, "first"), (3, 5, "first"), (4, 4, "at_or_before"), (C, 2, "at_or_before"),
               (5, 1, "at_or_before"), (2, C, None)]
    got = M.flag_scope_precision(triples)
    assert got["first"] == {"flags": 2, "exact_flags": 1, "flag_precision": 0.5, "flag_soundness": 1.0}
    assert got["at_or_before"]["flags"] == 3 and got["at_or_before"]["flag_precision"] == pytest.approx(1 / 3)
    assert got["at_or_before"]["flag_soundness"] == pytest.approx(1 / 3)
    assert M.flag_scope_precision([])["first"]["flag_precision"] is None


def test_every_metric_the_readme_defines_is_in_the_metrics_document() -> None:
    """docs/score.md's metrics table: each key is in ``metrics.json``; the per-group tables
    hold what the README says they hold; ``ci95`` covers six headline ratios."""
    import re
    from pathlib import Path

    from faithsieve.datasets.formats import LabelledItem

    text = (Path(__file__).resolve().parents[2] / "docs" / "score.md").read_text(encoding="utf-8")
    table = text.split("### Metrics", 1)[1].split("\n\n", 2)[1]
    rows = {row.split("|")[1]: row.split("|")[2] for row in table.splitlines()[2:]}
    keys = {k for first in rows for k in re.findall(r"`([a-z_0-9]+)`", first)}
    assert len(keys) >= 20
    items = [LabelledItem(id=f"i{n}", problem="p", steps=("a", "b", "c"), label=label, meta={"subset": s})
             for n, (label, s) in enumerate([(2, "x"), ("correct", "x"), (3, "y"), ("correct", "y")])]
    preds = [{"predicted": 2, "flag_scope": "first"}, {"predicted": 1}, {"predicted": "correct"},
             {"predicted": "correct"}]
    doc = M.score_document(list(zip(items, preds, strict=True)), {"sessions": [{"items": 4, "wall_s": 2.0}]}, resamples=20)
    assert keys <= set(doc), keys - set(doc)
    assert len(doc["ci95"]) == 6
    per_group = next(v for k, v in rows.items() if "`per_subset`" in k)
    left_out = set(re.findall(r"`([a-z_0-9]+)`", per_group.split("except", 1)[1].split("with", 1)[0]))
    expected = keys - left_out - {"per_subset", "per_domain", "confusion"}
    for table_name in ("per_subset", "per_domain"):
        for group in doc[table_name].values():
            assert expected <= set(group), expected - set(group)


def test_an_unknown_prediction_is_never_right_and_never_a_flag() -> None:
    """An item that got no answer (failed model call, check stopped at its limit) counts as wrong in every
    accuracy, also on a correct proof, and is not a flag (nor early)."""
    from faithsieve.datasets.metrics import UNKNOWN, bootstrap_ci, summarize

    pairs = [(None, UNKNOWN), (2, UNKNOWN), (None, None), (2, 2)]
    m = summarize(pairs)
    assert m["binary_accuracy"] == m["exact_accuracy"] == 0.5
    assert m["correct_accuracy"] == 0.5 and m["error_accuracy"] == 0.5
    assert m["flags"] == 1 and m["early_flags"] == 0 and m["unknown"] == 2 and m["correct_flagged"] == 0
    ci = bootstrap_ci([(None, UNKNOWN)] * 5, resamples=20)
    assert ci["binary_accuracy"] == (0.0, 0.0) and ci["correct_accuracy"] == (0.0, 0.0)
