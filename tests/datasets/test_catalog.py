"""What FaithSieve reads: ``faithsieve formats [FOLDER]``, the detection of labelled ``proof`` texts, and
the message that sends GSM8K to ``inject``/``predict``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from faithsieve.datasets.adapters import load_dataset
from faithsieve.datasets.catalog import UNLABELLED_FORMAT, survey

from faithsieve.cli import main


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_labelled_proof_text_is_detected_with_extra_fields(tmp_path: Path) -> None:
    f = _jsonl(tmp_path / "x.jsonl", [
        {"id": "a", "problem": "Compute 2+2.", "proof": "2+2=5. So 5.", "label": 1, "domain": "arith", "answer": "4"},
        {"id": "b", "problem": "Compute 3+3.", "proof": "3+3=6. So 6.", "label": "correct", "domain": "arith"}])
    data = load_dataset(f)
    assert not data.bad and data.formats[str(f)] == "localize"
    assert [it.label for it in data.items] == [1, "correct"] and data.items[0].domain == "arith"


def test_gsm8k_is_read_as_reference_solutions_and_sent_to_inject(tmp_path: Path) -> None:
    f = _jsonl(tmp_path / "g.jsonl", [{"question": "q", "answer": "1+1=2.\n#### 2"}])
    data = load_dataset(f)
    assert not data.bad and [it.label for it in data.items] == ["correct"]
    row = survey(f)[0]
    assert row.format == "gsm8k" and "faithsieve inject" in row.note
    other = _jsonl(tmp_path / "o.jsonl", [{"foo": 1}])
    assert "--format" in load_dataset(other).bad[0].reason


def test_survey_counts_each_file(tmp_path: Path, fixtures: Path) -> None:
    _jsonl(tmp_path / "a" / "pl.jsonl", [{"id": "1", "problem": "p", "steps": ["s", "t"], "label": 2},
                                         {"id": "2", "problem": "p", "steps": ["s"], "label": "correct"}])
    _jsonl(tmp_path / "b" / "gsm.jsonl", [{"question": "q", "answer": "1+1=2.\n#### 2"}] * 3)
    _jsonl(tmp_path / "c.json", [{"foo": 1}])
    _jsonl(tmp_path / "d" / "plain.jsonl", [{"id": "p", "problem": "p", "steps": ["s"]}, {"id": "q", "problem": "q", "steps": ["t"]}])
    rows = {Path(r.path).name: r for r in survey(tmp_path)}
    assert (rows["pl.jsonl"].format, rows["pl.jsonl"].items, rows["pl.jsonl"].flawed, rows["pl.jsonl"].correct) == (
        "proofloc", 2, 1, 1)
    assert (rows["gsm.jsonl"].format, rows["gsm.jsonl"].items, rows["gsm.jsonl"].correct) == ("gsm8k", 3, 3)
    assert "inject" in rows["gsm.jsonl"].note
    assert (rows["plain.jsonl"].format, rows["plain.jsonl"].items) == (UNLABELLED_FORMAT, 2)
    assert rows["c.json"].format is None and "cannot detect" in rows["c.json"].note


def test_cli_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["formats"]) == 0
    out = capsys.readouterr().out
    assert "processbench" in out and "faithsieve predict" in out
    _jsonl(tmp_path / "pl.jsonl", [{"id": "1", "problem": "p", "steps": ["s"], "label": 1}])
    assert main(["formats", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "pl.jsonl" in out and "1 of 1 files readable: 1 items (1 flawed, 0 correct" in out
    assert main(["formats", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["files"][0]["items"] == 1
    assert main(["formats", str(tmp_path / "nope")]) == 2
