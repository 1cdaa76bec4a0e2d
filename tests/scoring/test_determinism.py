"""The same input gives the same prediction in any process and with any worker count, with the
fast paths and the solvers both at work (identities, derivations, coverage, closed values)."""

from __future__ import annotations

import json
from pathlib import Path

from faithsieve.scoring.run import PREDICTIONS, ScoreRequest, run_score, stable_view

MINI = Path(__file__).resolve().parents[2] / "datasets" / "proofloc-mini" / "proofloc-mini.jsonl"


def _records(out: Path) -> list[dict]:
    return [stable_view(json.loads(line)) for line in (out / PREDICTIONS).read_text().splitlines() if line.strip()]


def test_one_and_two_workers_agree_on_proofloc_mini(tmp_path: Path) -> None:
    for workers in (1, 2):
        run_score(ScoreRequest(path=MINI, out=tmp_path / f"w{workers}", workers=workers, progress=False, limit=48,
                                 report=False, resamples=10))
    one, two = _records(tmp_path / "w1"), _records(tmp_path / "w2")
    assert len(one) == 48
    assert one == two
    assert any(r["predicted"] != "correct" for r in one)  # the subset exercises refutations too
