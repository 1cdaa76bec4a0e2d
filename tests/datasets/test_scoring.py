"""Score runs: determinism across worker counts, resumption after a kill, outputs, CLI."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from faithsieve.datasets.formats import load_proofloc

from faithsieve.core.settings import Settings
from faithsieve.scoring.run import (
    METRICS,
    PREDICTIONS,
    REPORT,
    InvalidDataset,
    PredictionLog,
    ScoreRequest,
    run_score,
    stable_view,
)
from tests.conftest import kill_mid_run


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in (path / PREDICTIONS).read_text().splitlines()]


def _req(path: Path, out: Path, **kw) -> ScoreRequest:  # type: ignore[no-untyped-def]
    kw.setdefault("progress", False)
    kw.setdefault("resamples", 50)
    kw.setdefault("report", False)
    return ScoreRequest(path=path, out=out, **kw)


@pytest.fixture
def good(fixtures: Path) -> Path:
    return fixtures / "proofloc" / "good.jsonl"


def test_run_writes_one_line_per_item(good: Path, tmp_path: Path) -> None:
    res = run_score(_req(good, tmp_path / "r"))
    items, _ = load_proofloc(good)
    lines = _lines(tmp_path / "r")
    assert [r["id"] for r in lines] == [i.id for i in items]
    for rec, item in zip(lines, items, strict=True):
        assert rec["label"] == item.label
        assert set(rec) >= {"id", "label", "predicted", "verdict", "reason", "coverage", "time_ms", "error"}
        assert (rec["predicted"] == "correct") == (rec["verdict"] == "correct")
    m = json.loads((tmp_path / "r" / METRICS).read_text())
    for key in ("n", "binary_accuracy", "exact_accuracy", "error_accuracy", "correct_accuracy", "f1", "flags",
                "flag_precision", "early_flags", "late_flags", "mean_signed_offset", "coverage", "proofs_per_second",
                "per_subset", "per_domain", "ci95", "confusion"):
        assert key in m, key
    assert m["n"] == len(items) == res.processed
    assert set(m["per_subset"]) == {"gsm8k", "algebra", "percent"}


def test_workers_give_identical_predictions(good: Path, tmp_path: Path) -> None:
    run_score(_req(good, tmp_path / "w1", workers=1))
    run_score(_req(good, tmp_path / "w2", workers=2))
    a, b = _lines(tmp_path / "w1"), _lines(tmp_path / "w2")
    assert [stable_view(r) for r in a] == [stable_view(r) for r in b]
    ma, mb = (json.loads((tmp_path / d / METRICS).read_text()) for d in ("w1", "w2"))
    assert stable_view({k: v for k, v in ma.items() if k not in ("run", "proofs_per_second", "pipeline_proofs_per_second")}) == \
        stable_view({k: v for k, v in mb.items() if k not in ("run", "proofs_per_second", "pipeline_proofs_per_second")})


def test_limit_subset_and_resume_extends(good: Path, tmp_path: Path) -> None:
    out = tmp_path / "r"
    r1 = run_score(_req(good, out, limit=4))
    assert r1.processed == 4 and r1.metrics["n"] == 4
    r2 = run_score(_req(good, out))
    assert (r2.processed, r2.reused) == (10, 4)
    r3 = run_score(_req(good, out))
    assert (r3.processed, r3.reused) == (0, 14)
    assert len(_lines(out)) == 14
    r4 = run_score(_req(good, out, subsets=("percent",)))
    assert r4.metrics["n"] == 2 and r4.metrics["run"]["ignored_predictions"] == 12
    with pytest.raises(Exception, match="unknown subset"):
        run_score(_req(good, out, subsets=("nope",)))


def test_torn_last_line_is_cut_and_redone(good: Path, tmp_path: Path) -> None:
    out = tmp_path / "r"
    run_score(_req(good, out, limit=3))
    with (out / PREDICTIONS).open("a") as fh:
        fh.write('{"id": "arith-bad-2", "predicted": ')
    res = run_score(_req(good, out))
    assert res.reused == 3
    ids = [r["id"] for r in _lines(out)]
    assert len(ids) == len(set(ids)) == 14


def test_stale_prediction_is_redone(good: Path, tmp_path: Path) -> None:
    out = tmp_path / "r"
    run_score(_req(good, out, limit=2))
    recs = _lines(out)
    recs[0]["item_hash"] = "0000"
    (out / PREDICTIONS).write_text("".join(json.dumps(r) + "\n" for r in recs))
    res = run_score(_req(good, out, limit=2))
    assert (res.processed, res.reused) == (1, 1)
    assert res.metrics["n"] == 2  # the newest line wins, counted once


def test_input_errors_are_recorded_not_raised(good: Path, tmp_path: Path) -> None:
    res = run_score(_req(good, tmp_path / "r", settings=Settings(max_steps=2)))
    lines = _lines(tmp_path / "r")
    errs = [r for r in lines if r["error"]]
    assert errs and all(r["error"].startswith("input_too_large") and r["predicted"] == "unknown" for r in errs)
    assert res.metrics["pipeline_errors"] == len(errs)
    assert res.metrics["pipeline_error_kinds"] == {"input_too_large": len(errs)}


def test_invalid_dataset_refused_unless_skipping(fixtures: Path, tmp_path: Path) -> None:
    bad = fixtures / "proofloc" / "bad.jsonl"
    with pytest.raises(InvalidDataset) as exc:
        run_score(_req(bad, tmp_path / "r"))
    assert len(exc.value.detail) == 10  # type: ignore[arg-type]
    res = run_score(_req(bad, tmp_path / "r", skip_invalid=True))
    assert res.metrics["n"] == 1 and res.metrics["run"]["bad_records"] == 10


_SLOW_RUNNER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import faithsieve.scoring.run as s
    orig = s.PredictionLog.append
    def slow(self, record):  # items are predicted in a worker: the driver's journal is slowed instead
        time.sleep(0.15)
        orig(self, record)
    s.PredictionLog.append = slow
    s.run_score(s.ScoreRequest(path=Path(sys.argv[1]), out=Path(sys.argv[2]), progress=False, resamples=20, report=False))
    """
)


def test_kill_and_resume(good: Path, tmp_path: Path) -> None:
    out = tmp_path / "killed"
    script = tmp_path / "slow_runner.py"
    script.write_text(_SLOW_RUNNER)
    proc = subprocess.Popen([sys.executable, str(script), str(good), str(out)], stderr=subprocess.PIPE)
    written = kill_mid_run(proc, out / PREDICTIONS, 4, within_s=60, poll_s=0.02, who="runner")
    assert 4 <= written < 14, "the kill should land mid-run"
    assert not (out / METRICS).exists()

    res = run_score(_req(good, out))
    assert res.reused == written and res.processed == 14 - written
    lines = _lines(out)
    ids = [r["id"] for r in lines]
    assert len(ids) == len(set(ids)) == 14
    items, _ = load_proofloc(good)
    assert ids == [i.id for i in items]

    fresh = tmp_path / "fresh"
    run_score(_req(good, fresh))
    assert [stable_view(r) for r in lines] == [stable_view(r) for r in _lines(fresh)]


def test_prediction_log_appends_whole_lines(tmp_path: Path) -> None:
    log = PredictionLog(tmp_path / "p.jsonl")
    with log:
        log.append({"id": "a", "x": "é"})
        log.append({"id": "b"})
    (tmp_path / "p.jsonl").open("a").write("garbage\n")
    with (tmp_path / "p.jsonl").open("a") as fh:
        fh.write('{"id": "a", "x": 2}\n')
    again = PredictionLog(tmp_path / "p.jsonl")
    got = again.load()
    assert got == {"a": {"id": "a", "x": 2}, "b": {"id": "b"}} and again.corrupt_lines == [3]


def test_report_and_plots(good: Path, tmp_path: Path) -> None:
    out = tmp_path / "r"
    run_score(_req(good, out, report=True))
    report = (out / REPORT).read_text()
    for part in ("## Headline", "## Per subset", "## Predicted vs. labelled step", "## The ten worst misses",
                 "offsets.png", "subsets.png"):
        assert part in report
    for png in ("offsets.png", "subsets.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    links = [line.split("](")[-1].rstrip(") |") for line in report.splitlines() if "evidence/" in line]
    for link in links:
        assert (out / link).exists()
    assert not list(out.glob(".*.tmp*"))


def _cli(*argv: str) -> int:
    from faithsieve.cli import compare, convert, score

    ap = argparse.ArgumentParser(prog="faithsieve")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for command in (score, convert, compare):
        command.register(sub)
    args = ap.parse_args(list(argv))
    return int(args.func(args))


def test_cli_convert_score_compare(fixtures: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conv = tmp_path / "pb.jsonl"
    assert _cli("convert", str(fixtures / "processbench"), str(conv)) == 0
    items, bad = load_proofloc(conv)
    assert bad == [] and [i.label for i in items] == ["correct", 2, 3]

    a, b = tmp_path / "a", tmp_path / "b"
    assert _cli("score", str(conv), "--out", str(a), "--no-progress", "--bootstrap", "20", "--no-report") == 0
    capsys.readouterr()
    assert _cli("score", str(fixtures / "processbench" / "gsm8k.json"), "--out", str(b), "--no-progress",
                "--bootstrap", "20", "--no-report", "--format", "processbench") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n"] == 3
    # make B differ on one item so compare has something to list
    recs = _lines(b)
    recs[1]["predicted"] = 1 if recs[1]["predicted"] != 1 else 3
    (b / PREDICTIONS).write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert _cli("compare", str(a), str(b)) == 0
    text = capsys.readouterr().out
    assert "binary_accuracy" in text and "gsm8k-1" in text
    assert _cli("compare", str(a), str(b), "--max-items", "0") == 0  # the count stays, the list is cut
    text = capsys.readouterr().out
    assert "1 items changed prediction" in text and "gsm8k-1 " not in text and "... 1 more" in text
    assert _cli("compare", str(a), str(b), "--json") == 0
    cmp = json.loads(capsys.readouterr().out)
    changed = {c["id"]: c for c in cmp["changed"]}
    assert "gsm8k-1" in changed and changed["gsm8k-1"]["b"] == recs[1]["predicted"]


def test_cli_errors(fixtures: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli("score", str(fixtures / "proofloc" / "bad.jsonl"), "--out", str(tmp_path / "x"), "--no-progress") == 2
    err = capsys.readouterr().err
    assert "bad.jsonl: line 2: label 0 is outside" in err and "--skip-invalid" in err
    assert _cli("convert", str(fixtures / "proofloc" / "bad.jsonl"), str(tmp_path / "o.jsonl")) == 2
    assert _cli("convert", "/nonexistent", str(tmp_path / "o.jsonl")) == 2
    assert _cli("compare", str(tmp_path / "nope"), str(tmp_path / "nope2")) == 2


def test_processbench_shared_scores(shared_raw: Path, tmp_path: Path) -> None:
    res = run_score(_req(shared_raw / "processbench" / "gsm8k.json", tmp_path / "pb", limit=25))
    assert res.metrics["n"] == 25 and set(res.metrics["per_subset"]) == {"gsm8k"}


def test_spend_line_shows_the_totals_and_the_spend_per_proof() -> None:
    from faithsieve.scoring.run import Spend

    spend = Spend()
    assert spend.line() == "0 calls, 0 tokens, $0.0000"
    spend.add({"calls": 9, "prompt_tokens": 3000, "completion_tokens": 400, "cost_usd": 0.002})
    spend.add({"calls": 8, "prompt_tokens": 2600, "completion_tokens": 300, "cost_usd": 0.001})
    spend.add(None)  # an item predicted without a model (offline, or a cached verdict) is not a proof with spend
    assert spend.line() == "17 calls, 6,300 tokens, $0.0030 (8.5 calls, 3,150 tokens per proof)"
