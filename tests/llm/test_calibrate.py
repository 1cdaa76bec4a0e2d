"""Issue 36: ``faithsieve calibrate`` measures the endpoint against labels and writes the weights fusion reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from faithsieve.cli.commands import main
from faithsieve.scoring.calibrate import measure
from faithsieve.verdict import Audit, ReviewNote, Verdict
from tests.llm.fakeserver import FakeOpenAI
from tests.llm.persona import Persona, load_items

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets" / "raw" / "proofloc-university"


def _verdict(judge: int, reviews: list[tuple[str, int, str, int]]) -> Verdict:
    audit = Audit(judge=judge, reviews=tuple(ReviewNote(edge=e, step=s, verdict=v, sample=k)  # type: ignore[arg-type]
                                             for e, s, v, k in reviews))
    return Verdict.model_validate({"verdict": "correct", "first_error_step": None, "steps": [],
                                   "coverage": {"steps": 0, "steps_with_obligations": 0, "steps_decided": 0, "edges": 0,
                                                "edges_decided": 0, "obligations": 0, "obligations_decided": 0},
                                   "timings": {"decompose_ms": 0, "check_ms": 0, "total_ms": 0}, "audit": audit.model_dump()})


def test_measure_counts_against_the_labels() -> None:
    records = [
        # labelled step 2: e1 (step 1) is sound and called wrong once (a false alarm), e2 caught; its re-sample repeats
        (2, _verdict(2, [("e1", 1, "incorrect", 0), ("e2", 2, "incorrect", 0), ("e2", 2, "incorrect", 1)])),
        # a correct proof judged step 1: two sound units, one re-sample that disagrees
        (None, _verdict(1, [("e1", 1, "correct", 0), ("e2", 2, "correct", 0), ("e2", 2, "incorrect", 1)])),
    ]
    cal = measure(records)
    assert (cal.judge_exact, cal.judge_binary) == (0.5, 0.5)
    assert (cal.sound_units, cal.false_alarm, cal.wrong_steps, cal.sensitivity) == (3, round(1 / 3, 4), 1, 1.0)
    assert (cal.resample_pairs, cal.resample_agreement) == (2, 0.5)


def test_calibrate_writes_the_personas_figures(tmp_path: Path, capsys: Any) -> None:
    if not DATA.is_dir():
        pytest.skip(f"ProofLoc-University is not at {DATA}")
    persona = Persona(load_items(str(DATA)), kind="perfect")
    out = tmp_path / "cal.json"
    with FakeOpenAI() as server:
        server.respond_with(persona.reply)
        rc = main(["calibrate", str(DATA), "--out", str(out), "--sample", "4", "--base-url", server.base_url,
                   "--model", server.model, "--no-cache", "-q"])
    assert rc == 0
    cal = json.loads(out.read_text())
    assert cal["items"] == 4 and cal["judge_exact"] == 1.0 and cal["false_alarm"] == 0.0
    # the file is what localize reads
    assert main(["localize", "-", "--mode", "llm", "--calibration", str(tmp_path / "missing.json"),
                 "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]) == 2
    assert "calibration file" in capsys.readouterr().err
