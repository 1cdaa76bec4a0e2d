"""The reference bench at a size CI can afford: real correct solutions from ``../shared``, the committed
slips list and the committed deciding table must agree (no misreading of a deciding kind), and a suspect
kind must not flag a correct solution while a deciding one still does."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from faithsieve.obligations.kinds.flagtable import KNOWN_KINDS, MEASURED, suspect_reason

ROOT = Path(__file__).resolve().parents[2]
RAW = ROOT.parent / "shared" / "datasets" / "raw"

pytestmark = pytest.mark.skipif(not RAW.is_dir(), reason=f"the shared raw data is absent ({RAW})")

PINNED = (
    "gsm8k-train/gsm8k-train-7444",  # 14*20=140: a genuine slip, literal arithmetic (decides)
    "gsm8k-train/gsm8k-train-3859",  # "5 thousand dollars ... 5 * 3 = $15,000" (a misreading, worded)
    "gsm8k-train/gsm8k-train-5396",  # "on day 1 * 2 = 20 pages": a label read as a number (a misreading, worded)
    "mr-math/invalid-57",             # 42/5 + 42/25 = 8 + 1: integer parts meant (a misreading, quotient)
    "math500/math500-239",            # an equation to solve, once read as an identity (fixed: nothing refuted)
    "math500/math500-37",             # a derivation once read backwards (fixed: nothing refuted)
    "aime2024/aime2024-75",           # known values once carried into a second solution (fixed: nothing refuted)
)
"""Items of the corpus whose refutations were read: the sample always holds a slip and misreadings the table
keeps from deciding, and the misreadings fixed since (which must stay unflagged)."""


@pytest.fixture(scope="module")
def bench() -> Any:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import reference_precision
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return reference_precision


@pytest.fixture(scope="module")
def measured(bench: Any) -> tuple[list[Any], list[dict[str, Any]], list[Any]]:
    from faithsieve.datasets.reference import reference_items

    corpus = reference_items(RAW)
    sample = bench.sample_items(corpus, 12, seed=7)
    pinned = [it for it in corpus if it.id in PINNED]
    assert len(pinned) == len(PINNED), "a pinned reference item is missing from the corpus"
    items = [*pinned, *(it for it in sample if it.id not in PINNED)]
    recs, refs = bench.measure(items, workers=2)
    return items, recs, refs


def test_no_misreading_of_a_deciding_kind(measured: tuple[list[Any], list[dict[str, Any]], list[Any]]) -> None:
    _, _, refs = measured
    misread = [r for r in refs if r.slip is None]
    assert misread, "the pinned misreadings were not refuted: the sample no longer tests the table"
    deciding = [(r.item, r.key, r.source) for r in misread if suspect_reason(r.key) is None]
    assert deciding == [], f"misreadings of kinds that decide: {deciding}"
    assert all(r.suspect for r in misread), "a misreading was not marked suspect in the evidence"


def test_no_correct_solution_flagged_except_by_a_listed_slip(
        measured: tuple[list[Any], list[dict[str, Any]], list[Any]]) -> None:
    items, recs, refs = measured
    slips_at = {(r.item, r.step) for r in refs if r.slip is not None and not r.suspect}
    flagged = [(rec["id"], rec["predicted"]) for rec in recs if isinstance(rec["predicted"], int)]
    assert all(f in slips_at for f in flagged), f"correct solutions flagged by a misreading: {flagged}"
    assert ("gsm8k-train/gsm8k-train-7444", 4) in flagged, "the listed slip 14*20=140 no longer decides"
    assert len(recs) == len(items) and not any(rec.get("error") for rec in recs)


def test_every_listed_slip_is_false_as_written(bench: Any) -> None:
    """The slips list holds what is written and its true value; entries name corpus items."""
    slips = bench.load_slips()
    assert len(slips) >= 50
    assert all(s["item"].split("/", 1)[0] in {"gsm8k-train", "math500", "aime2024", "mr-ben", "mr-math",
                                              "bigbench-mistake"} for s in slips)
    assert all(s["formula"].strip() and s["true"].strip() for s in slips)


def test_the_table_covers_every_kind_the_checkers_produce() -> None:
    assert set(KNOWN_KINDS) <= set(MEASURED), "the table lacks a kind: rerun bench/reference_precision.py --write-table"
    assert MEASURED["false_as_written/arithmetic-literal"].decides
    assert all(m.solutions > 10000 for m in MEASURED.values()), "the table was written from a partial run"
