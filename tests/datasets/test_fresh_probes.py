"""The fresh held-out probes (datasets/fresh-probes): the file is current, its facts hold,
and the sieve's behaviour on it is pinned.

The pinned sets are what the offline default did at the commit that added the set (the
held-out measurement of issue 11): no correct probe flagged, 15 of the 20 flawed probes
caught at their labelled step. Issue 11g (superscript exponents, '2⁷ = 64') catches three more,
fp-x-alg-03, fp-x-calc-02 and fp-x-word-04, at their labelled steps: 18 of 20, pinned on purpose
(the set was not read to write that rule). A new false alarm here, or a flag moving off a labelled
step, fails this test; a newly caught flawed probe fails it too, so that the change is
seen and the pin updated on purpose.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from faithsieve.scoring.run import PREDICTIONS, ScoreRequest, run_score

FOLDER = Path(__file__).resolve().parents[2] / "datasets" / "fresh-probes"

# Correct probes the offline default flags (a false alarm each): none.
FLAGGED_CORRECT: set[str] = set()

# Flawed probes flagged exactly at their labelled step.
CAUGHT = {
    "fp-x-alg-01", "fp-x-alg-02", "fp-x-calc-01", "fp-x-geo-01", "fp-x-geo-02",
    "fp-x-nt-01", "fp-x-nt-02", "fp-x-nt-03", "fp-x-seq-01", "fp-x-seq-02",
    "fp-x-stat-01", "fp-x-word-01", "fp-x-word-02", "fp-x-word-03", "fp-x-word-05",
    "fp-x-alg-03", "fp-x-calc-02", "fp-x-word-04",  # caught since superscript exponents are read
}


def _build_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("fresh_probes_build", FOLDER.parent / "builders" / "fresh-probes" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _records() -> list[dict]:
    lines = (FOLDER / "fresh-probes.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_file_is_current_and_sized() -> None:
    build = _build_module()
    assert build.main(["--check"]) == 0
    records = _records()
    labels = [r["label"] for r in records]
    assert labels.count("correct") == 100 and len(records) == 120
    for r in records:
        if r["label"] != "correct":
            assert 1 <= r["label"] <= len(r["steps"]) and r["meta"]["error_check"]


def test_build_refuses_a_false_fact(monkeypatch: pytest.MonkeyPatch) -> None:
    build = _build_module()
    assert build.holds("sqrt(7056) == 84") and not build.holds("sqrt(7056) == 86")
    bad = ("fp-bad", "algebra", "terse", "p", ["7 × 8 = 54."], ["7*8 == 54"])
    monkeypatch.setattr(build, "_load", lambda: ([bad], []))
    with pytest.raises(SystemExit, match="fp-bad: fact fails"):
        build.build_items()


def test_sieve_on_fresh_probes_is_pinned(tmp_path: Path) -> None:
    run_score(ScoreRequest(path=FOLDER, out=tmp_path, progress=False, resamples=50, report=False))
    rows = [json.loads(line) for line in (tmp_path / PREDICTIONS).read_text().splitlines()]
    assert len(rows) == 120
    flagged = {r["id"] for r in rows if r["label"] == "correct" and r["predicted"] != "correct"}
    caught = {r["id"] for r in rows if r["label"] != "correct" and r["predicted"] == r["label"]}
    wrong_place = {r["id"] for r in rows
                   if r["label"] != "correct" and r["predicted"] not in ("correct", r["label"])}
    assert flagged == FLAGGED_CORRECT
    assert caught == CAUGHT
    assert wrong_place == set()
