"""``faithsieve predict``: verdicts for proofs without labels, journaled and resumable like ``score``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from faithsieve.datasets.unlabelled import is_unlabelled, load_unlabelled

from faithsieve.cli import main
from faithsieve.scoring.bulk import run_predict, summarize
from faithsieve.scoring.run import PREDICTIONS, SUMMARY, ScoreRequest, run_score
from tests.conftest import kill_mid_run

GSM8K = [
    {"question": "Tom has 3 boxes of 4 apples. How many apples?", "answer": "3 boxes of 4 is 3*4=<<3*4=12>>12 apples.\n#### 12"},
    {"question": "Ann buys 5 pens at $2 each. What does she pay?", "answer": "She pays 5*2=<<5*2=11>>11 dollars.\n#### 11"},
]


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _lines(out: Path) -> list[dict]:
    return [json.loads(ln) for ln in (out / PREDICTIONS).read_text().splitlines()]


def _proofs(n: int) -> list[dict]:
    """``n`` short proofs; every third writes a false product."""
    return [{"id": f"p{i}", "problem": f"Compute {i} * 7.",
             "steps": [f"{i} * 7 = {i * 7 + (1 if i % 3 == 0 else 0)}.", f"So the answer is {i * 7 + (1 if i % 3 == 0 else 0)}."]}
            for i in range(n)]


def test_reads_gsm8k_plain_proofs_and_labelled_formats(tmp_path: Path, fixtures: Path) -> None:
    g = load_unlabelled(_write_jsonl(tmp_path / "gsm.jsonl", GSM8K))
    assert [it.id for it in g.items] == ["gsm-0", "gsm-1"] and not g.bad
    assert g.items[1].steps == ("She pays 5*2=11 dollars.", "The answer is 11.")  # annotations gone, #### read
    plain = load_unlabelled(_write_jsonl(tmp_path / "plain.jsonl", [
        {"id": 7, "problem": "p", "proof": "1 + 1 = 2. So 2."}, {"problem": "q", "steps": ["a"], "label": 1, "extra": 1}]))
    assert [it.id for it in plain.items] == ["7", "plain-1"] and not plain.bad
    labelled = load_unlabelled(fixtures / "proofloc" / "good.jsonl")
    assert labelled.items and all(is_unlabelled(it) for it in labelled.items)


def test_bad_records_and_duplicate_ids_are_reported(tmp_path: Path) -> None:
    data = load_unlabelled(_write_jsonl(tmp_path / "x.jsonl", [
        {"id": "a", "problem": "p", "steps": ["s"]}, {"id": "a", "problem": "p", "steps": ["t"]},
        {"id": "b", "problem": "p", "steps": []}, {"what": 1}]))
    assert [it.id for it in data.items] == ["a"]
    reasons = " | ".join(str(b) for b in data.bad)
    assert "duplicate id" in reasons and "non-empty list" in reasons and "no proof" in reasons


def test_records_have_verdict_step_basis_flag_kind_and_no_label(tmp_path: Path) -> None:
    src = _write_jsonl(tmp_path / "gsm.jsonl", GSM8K)
    res = run_predict(ScoreRequest(path=src, out=tmp_path / "out", progress=False))
    ok, bad = _lines(tmp_path / "out")
    assert "label" not in ok and "label" not in bad
    assert ok["verdict"] == "correct" and ok["step"] is None
    assert bad["verdict"] == "error" and bad["step"] == 1 and bad["basis"] == "checked"
    assert bad["flag_kind"] == "false_as_written"
    assert bad["evidence_summary"] and "5 * 2 = 11" in bad["evidence_summary"][0] and "exact" in bad["evidence_summary"][0]
    assert res.summary["verdicts"] == {"correct": 1, "error": 1}
    assert json.loads((tmp_path / "out" / SUMMARY).read_text())["n"] == 2
    evidence = json.loads((tmp_path / "out" / "evidence" / "gsm-1.json").read_text())
    assert "label" not in evidence["item"] and evidence["what"] == "predicted 1"


def test_resume_reuses_and_redoes_a_torn_line(tmp_path: Path) -> None:
    src = _write_jsonl(tmp_path / "p.jsonl", _proofs(6))
    out = tmp_path / "out"
    run_predict(ScoreRequest(path=src, out=out, progress=False, limit=3, sample="first"))
    with (out / PREDICTIONS).open("a") as fh:
        fh.write('{"id": "p3", "verd')  # a kill mid-write
    res = run_predict(ScoreRequest(path=src, out=out, progress=False))
    assert (res.reused, res.processed) == (3, 3)
    assert [r["id"] for r in _lines(out)] == [f"p{i}" for i in range(6)]
    changed = _proofs(6)
    changed[0]["steps"] = ["0 * 7 = 0.", "So 0."]
    _write_jsonl(src, changed)
    with pytest.raises(Exception, match="other settings, versions or data"):  # as score: other data is refused
        run_predict(ScoreRequest(path=src, out=out, progress=False))


def test_kill_and_resume(tmp_path: Path) -> None:
    src = _write_jsonl(tmp_path / "p.jsonl", _proofs(60))
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "faithsieve", "predict", str(src), "--out", str(out), "-q"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    written = kill_mid_run(proc, out / PREDICTIONS, 3, within_s=90, poll_s=0.01, who="predict")
    assert 3 <= written < 60, "the kill should land mid-run"
    res = run_predict(ScoreRequest(path=src, out=out, progress=False))
    assert res.reused == written and res.processed == 60 - written
    ids = [r["id"] for r in _lines(out)]
    assert ids == [f"p{i}" for i in range(60)]
    assert res.summary["verdicts"] == {"correct": 40, "error": 20}


def test_cli_predict_and_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str], fixtures: Path) -> None:
    src = _write_jsonl(tmp_path / "gsm.jsonl", GSM8K)
    assert main(["predict", str(src), "--out", str(tmp_path / "p"), "--workers", "2", "-q"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["n"] == 2 and printed["verdicts"]["error"] == 1
    assert main(["score", str(fixtures / "proofloc" / "good.jsonl"), "--out", str(tmp_path / "p"), "-q"]) == 2
    assert "faithsieve predict" in capsys.readouterr().err
    run_score(ScoreRequest(path=fixtures / "proofloc" / "good.jsonl", out=tmp_path / "s", progress=False, report=False,
                           resamples=10))
    assert main(["predict", str(src), "--out", str(tmp_path / "s"), "-q"]) == 2
    assert "scored run" in capsys.readouterr().err
    _write_jsonl(tmp_path / "bad.jsonl", [{"id": "a", "problem": "p", "steps": []}])
    assert main(["predict", str(tmp_path / "bad.jsonl"), "--out", str(tmp_path / "b"), "-q"]) == 2
    assert "--skip-invalid" in capsys.readouterr().err


def test_summarize_counts() -> None:
    s = summarize([{"verdict": "error", "basis": "checked", "flag_kind": "false_as_written"}, {"verdict": "unknown", "error": "x"}],
                  [{"items": 2, "wall_s": 4.0}])
    assert s == {"n": 2, "verdicts": {"error": 1, "unknown": 1}, "basis": {"checked": 1},
                 "flag_kind": {"false_as_written": 1}, "refused_or_failed": 1, "proofs_per_second": 0.5}
