"""Running over files: journal and resume, atomic outputs, statistics, the CLI, and ``--compare``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from faithsieve.cli import main
from faithsieve.rewrite import compare as compare_mod
from faithsieve.rewrite.compare import compare, paired_bootstrap
from faithsieve.rewrite.runner import read_records, run
from tests.rewrite.test_offline import JANET, ROBE, SHARE


def _gsm(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / "test.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _work(rid: str, rec: dict[str, Any]) -> Any:
    ok = rec.get("ok", True)
    return ([{"id": f"{rid}/v0", "original_id": rid}] if ok else [],
            {"id": rid, "kept": int(ok), "stage": None if ok else "mapping", "reason": None if ok else "why",
             "detail": "", "failures": {}})


def test_an_interrupted_run_resumes_where_it_stopped(tmp_path: Path) -> None:
    src = _gsm(tmp_path, [{"ok": True}, {"ok": False}, {"ok": True}, {"ok": True}])
    records = read_records(src)
    out = tmp_path / "out" / "rows.jsonl"
    calls: list[str] = []

    def dying(rid: str, rec: dict[str, Any]) -> Any:
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(rid)
        return _work(rid, rec)

    with pytest.raises(KeyboardInterrupt):
        run(records, dying, out, {"mode": "t", "variants": 1}, progress=False)
    assert not out.exists() and out.with_name("rows.jsonl.journal").exists()
    with out.with_name("rows.jsonl.journal").open("a") as fh:
        fh.write('{"rows": [], "outcome": {"id": "test-')  # a line cut by the interruption
    again: list[str] = []

    def counting(rid: str, rec: dict[str, Any]) -> Any:
        again.append(rid)
        return _work(rid, rec)

    stats = run(records, counting, out, {"mode": "t", "variants": 1}, resume=True, progress=False)
    assert again == ["test-2", "test-3"]
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["test-0/v0", "test-2/v0", "test-3/v0"]
    assert stats["items"] == 4 and stats["items_kept"] == 3 and stats["generation_rate"] == 0.75
    assert stats["rejected_items_by_reason"] == {"mapping/why": 1}
    assert not out.with_name("rows.jsonl.journal").exists()
    assert json.loads(out.with_name("stats.json").read_text())["items_kept"] == 3
    assert "75.00 %" in out.with_name("report.md").read_text()


def test_resume_refuses_a_journal_written_with_other_settings(tmp_path: Path) -> None:
    src = _gsm(tmp_path, [{"ok": True}])
    out = tmp_path / "rows.jsonl"
    out.with_name("rows.jsonl.journal").write_text(json.dumps({"config": {"mode": "t", "seed": 1}}) + "\n")
    with pytest.raises(ValueError, match="other settings"):
        run(read_records(src), _work, out, {"mode": "t", "seed": 2}, resume=True, progress=False)


def test_cli_rewrite_then_check_then_tamper(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _gsm(tmp_path, [JANET, ROBE, SHARE])
    out = tmp_path / "o" / "rw.jsonl"
    assert main(["rewrite", str(src), "--out", str(out), "--variants", "2", "--no-progress"]) == 0
    stats = json.loads((out.parent / "stats.json").read_text())
    assert stats["items"] == 3 and stats["items_kept"] == 2 and stats["variants_kept"] == 4
    assert stats["rejected_items_by_reason"] == {"mapping/nothing_to_resample": 1}
    report = (out.parent / "report.md").read_text()
    assert "66.67 %" in report and "mapping/nothing_to_resample" in report
    capsys.readouterr()
    assert main(["rewrite", "--check", str(out)]) == 0
    assert json.loads(capsys.readouterr().out) == {"rows": 4, "passed": 4, "failed": 0}
    rows = out.read_text().splitlines()
    bad = json.loads(rows[0])
    bad["answer"] = "123456"
    out.write_text("\n".join([json.dumps(bad), *rows[1:], "not json"]) + "\n")
    assert main(["rewrite", "--check", str(out)]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result == {"rows": 5, "passed": 3, "failed": 2}


@pytest.mark.parametrize("argv", [["rewrite"], ["rewrite", "x.jsonl", "--out", "o", "--variants", "0"],
                                  ["rewrite", "x.jsonl", "--out", "o", "--mode", "judge"],
                                  ["rewrite", "missing.jsonl", "--out", "o"],
                                  ["rewrite", "x.jsonl", "--out", "o", "--mode", "llm"]])
def test_cli_usage_errors_exit_2_without_a_traceback(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FAITHSIEVE_LLM_BASE_URL", raising=False)
    (tmp_path / "x.jsonl").write_text(json.dumps(JANET) + "\n")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.splitlines()) == 1 and "Traceback" not in err


def _predictions(path: Path, preds: dict[str, str]) -> Path:
    path.write_text("".join(json.dumps({"id": k, "response": v}) + "\n" for k, v in preds.items()))
    return path


def test_compare_scores_both_sides_with_the_grader(tmp_path: Path) -> None:
    original = _gsm(tmp_path, [{"question": f"q{i}", "answer": f"x\n#### {i}"} for i in range(4)])
    rewritten = tmp_path / "rw.jsonl"
    rewritten.write_text("".join(json.dumps({"id": f"test-{i}/v0", "original_id": f"test-{i}", "question": "q",
                                             "answer": str(100 + i),
                                             "original": {"question": f"q{i}", "solution": f"x\n#### {i}"}}) + "\n"
                                 for i in range(4)))
    preds = {f"test-{i}": f"So the answer is {i}." for i in range(4)}          # all original right
    preds |= {"test-0/v0": "\\boxed{100}", "test-1/v0": "The answer is 1.",    # one rewrite right
              "test-2/v0": "#### 7", "test-3/v0": "no idea", "other": "x"}
    result = compare(original, rewritten, _predictions(tmp_path / "p.jsonl", preds), bootstrap=500)
    assert result["paired_items"] == 4 and result["ignored_predictions"] == 1
    assert result["accuracy_original"] == 1.0 and result["accuracy_rewritten"] == 0.25 and result["drop"] == 0.75
    lo, hi = result["ci95"]
    assert 0.25 <= lo <= 0.75 <= hi <= 1.0


def test_paired_bootstrap_is_deterministic_and_paired() -> None:
    pairs = [(1.0, 0.0)] * 30 + [(1.0, 1.0)] * 70
    a = paired_bootstrap(pairs, samples=300, seed=3)
    assert a == paired_bootstrap(pairs, samples=300, seed=3)
    assert a[0] < 0.3 < a[1]
    assert paired_bootstrap([(1.0, 1.0)] * 10, samples=50, seed=0) == (0.0, 0.0)  # identical pairs: no spread


def test_compare_refuses_bad_predictions_and_bounds_the_bootstrap(tmp_path: Path) -> None:
    original = _gsm(tmp_path, [{"question": "q", "answer": "#### 1"}])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "test-0"}\n')
    with pytest.raises(ValueError, match="response"):
        compare(original, original, bad)
    good = _predictions(tmp_path / "p.jsonl", {"test-0": "1"})
    with pytest.raises(ValueError, match="bootstrap"):
        compare(original, original, good, bootstrap=compare_mod.MAX_BOOTSTRAP + 1)


def test_demo_memorizer_is_labelled_and_shows_a_drop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _gsm(tmp_path, [JANET, SHARE])
    out = tmp_path / "rw.jsonl"
    assert main(["rewrite", str(src), "--out", str(out), "--no-progress"]) == 0
    preds = tmp_path / "demo.jsonl"
    assert main(["rewrite", "--demo-predictions", str(src), str(out), str(preds)]) == 0
    assert "DEMO" in capsys.readouterr().err
    result = compare(src, out, preds, bootstrap=200)
    assert result["paired_items"] == 2 and result["accuracy_rewritten"] == 0.0
