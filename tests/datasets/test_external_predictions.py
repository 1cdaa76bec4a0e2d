"""Scoring another system's prediction file (ProcessBench's and ProofLoc's conventions) and comparing two."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from faithsieve.cli import main
from faithsieve.core.errors import InputError
from faithsieve.scoring.external import (
    ExternalRequest,
    convert_value,
    detect_convention,
    read_predictions,
    score_external,
)
from faithsieve.scoring.run import METRICS, PREDICTIONS, REPORT

ITEMS = [
    {"id": "a", "problem": "p", "steps": ["s1", "s2", "s3"], "label": 2},
    {"id": "b", "problem": "p", "steps": ["s1", "s2"], "label": "correct"},
    {"id": "c", "problem": "p", "steps": ["s1", "s2", "s3"], "label": 1},
    {"id": "d", "problem": "p", "steps": ["s1"], "label": "correct"},
]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return _jsonl(tmp_path / "data.jsonl", ITEMS)


def test_conventions_convert_to_one_based_steps() -> None:
    assert [convert_value(v, "processbench") for v in (-1, 0, 2, "1", None)] == ["correct", 1, 3, 2, "unknown"]
    assert [convert_value(v, "proofloc") for v in ("correct", 1, "3", "unknown")] == ["correct", 1, 3, "unknown"]
    with pytest.raises(ValueError, match="--convention processbench"):
        convert_value(0, "proofloc")
    with pytest.raises(ValueError, match="0-based"):
        convert_value(-2, "processbench")
    assert detect_convention([0, -1, 3]) == "processbench" and detect_convention(["correct", 2]) == "proofloc"
    with pytest.raises(InputError, match="--convention"):
        detect_convention([1, 2])


def test_the_same_answers_in_both_conventions_give_the_same_metrics(dataset: Path, tmp_path: Path) -> None:
    pb = _jsonl(tmp_path / "pb.jsonl", [{"id": "a", "prediction": 1}, {"id": "b", "prediction": 0},
                                        {"id": "c", "prediction": 0}, {"id": "d", "prediction": -1}])
    pl = _jsonl(tmp_path / "pl.jsonl", [{"id": "a", "first_error_step": 2}, {"id": "b", "first_error_step": "1"},
                                        {"id": "c", "first_error_step": 1}, {"id": "d", "first_error_step": "correct"}])
    m1 = score_external(ExternalRequest(dataset=dataset, predictions=pb, out=tmp_path / "o1", resamples=20)).metrics
    m2 = score_external(ExternalRequest(dataset=dataset, predictions=pl, out=None, resamples=20)).metrics
    assert m1["run"]["convention"] == "processbench" and m2["run"]["convention"] == "proofloc"
    for key in ("exact_accuracy", "error_accuracy", "correct_accuracy", "f1", "flags", "early_flags"):
        assert m1[key] == m2[key], key
    assert (m1["error_accuracy"], m1["correct_accuracy"], m1["flags"]) == (1.0, 0.5, 3)
    assert m1["ci95"]["f1"] is not None
    out = tmp_path / "o1"
    report = (out / REPORT).read_text()
    assert "pb.jsonl" in report and "processbench convention" in report and "flags marked" not in report
    assert json.loads((out / METRICS).read_text())["n"] == 4
    assert [json.loads(ln)["predicted"] for ln in (out / PREDICTIONS).read_text().splitlines()] == [2, 1, 1, "correct"]
    assert (out / "offsets.png").exists()


def test_forced_convention_reads_ambiguous_steps(dataset: Path, tmp_path: Path) -> None:
    f = _jsonl(tmp_path / "p.jsonl", [{"id": i["id"], "pred": 1} for i in ITEMS[:3]])
    with pytest.raises(InputError, match="--convention"):
        score_external(ExternalRequest(dataset=dataset, predictions=f, out=None))
    zero = score_external(ExternalRequest(dataset=dataset, predictions=f, out=None, convention="processbench", resamples=0))
    one = score_external(ExternalRequest(dataset=dataset, predictions=f, out=None, convention="proofloc", resamples=0))
    assert zero.predictions["a"]["predicted"] == 2 and one.predictions["a"]["predicted"] == 1


def test_missing_and_bad_lines(dataset: Path, tmp_path: Path) -> None:
    f = _jsonl(tmp_path / "p.jsonl", [{"id": "a", "prediction": "correct"}, {"id": "a", "prediction": 1},
                                      {"id": "c", "prediction": 7}, {"id": "zz", "prediction": 1}, {"nothing": 1}])
    with pytest.raises(InputError) as info:
        score_external(ExternalRequest(dataset=dataset, predictions=f, out=None))
    detail = " | ".join(info.value.detail)  # type: ignore[arg-type]
    assert "duplicate id 'a'" in detail and "past the proof's last step 3" in detail and "needs 'id'" in detail
    res = score_external(ExternalRequest(dataset=dataset, predictions=f, out=None, skip_invalid=True, resamples=0))
    assert res.predictions["b"]["predicted"] == "unknown" and res.metrics["run"]["missing_predictions"] == 2
    assert any("no prediction" in w for w in res.warnings) and any("not in the dataset" in w for w in res.warnings)
    assert res.metrics["correct_accuracy"] == 0.0  # a missing prediction is never counted right


def test_read_predictions_json_array(tmp_path: Path) -> None:
    f = tmp_path / "p.json"
    f.write_text(json.dumps([{"id": 1, "prediction": -1}, {"id": "2", "prediction": 3}]))
    preds = read_predictions(f)
    assert preds.by_id == {"1": "correct", "2": 4} and preds.convention == "processbench"


def test_cli_score_predictions_and_compare_two_files(dataset: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    pb = _jsonl(tmp_path / "pb.jsonl", [{"id": "a", "prediction": 1}, {"id": "b", "prediction": -1},
                                        {"id": "c", "prediction": 0}, {"id": "d", "prediction": -1}])
    pl = _jsonl(tmp_path / "pl.jsonl", [{"id": "a", "predicted": 3}, {"id": "b", "predicted": "correct"},
                                        {"id": "c", "predicted": 1}, {"id": "d", "predicted": 1}])
    assert main(["score", str(dataset), "--predictions", str(pb), "--out", str(tmp_path / "s"), "-q", "--bootstrap", "10"]) == 0
    assert json.loads(capsys.readouterr().out)["f1"] == 1.0
    assert main(["compare", str(pb), str(pl), "--dataset", str(dataset), "--json", "--bootstrap", "0"]) == 0
    cmp = json.loads(capsys.readouterr().out)
    assert cmp["metrics"]["exact_accuracy"] == {"a": 1.0, "b": 0.5, "delta": -0.5}
    assert {c["id"]: c["effect"] for c in cmp["changed"]} == {"a": "broken", "d": "broken"}
    assert "coverage.steps" not in cmp["metrics"]
    assert main(["compare", str(tmp_path / "s"), str(pl), "--dataset", str(dataset), "--bootstrap", "0"]) == 0
    capsys.readouterr()
    assert main(["compare", str(pb), str(pl)]) == 2
    assert "--dataset" in capsys.readouterr().err
    assert main(["score", str(dataset), "--convention", "proofloc"]) == 2
    assert "--predictions" in capsys.readouterr().err
