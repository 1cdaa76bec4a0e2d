"""Scoring runs as a researcher expects: localize inputs score, --limit samples honestly, runs
record and check their settings, evidence for every checked item, report and compare faults."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from faithsieve.datasets.adapters import load_dataset
from faithsieve.datasets.formats import LabelledItem

from faithsieve.cli import main
from faithsieve.core.settings import Settings
from faithsieve.scoring.evidence import EVIDENCE_DIR, outcome
from faithsieve.scoring.run import (
    METRICS,
    PREDICTIONS,
    STATE,
    RunMismatch,
    ScoreRequest,
    run_score,
)
from faithsieve.scoring.runinfo import identity_diff, predictive_settings, run_identity
from faithsieve.scoring.sampling import class_gaps, select

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "datasets" / "examples"
MINI = ROOT / "datasets" / "proofloc-mini" / "proofloc-mini.jsonl"


def _req(path: Path, out: Path, **kw) -> ScoreRequest:  # type: ignore[no-untyped-def]
    kw.setdefault("progress", False)
    kw.setdefault("resamples", 20)
    kw.setdefault("report", False)
    return ScoreRequest(path=path, out=out, **kw)


def _items(n_err: int, n_ok: int, subset: str = "s") -> list[LabelledItem]:
    """Flawed items first, as ProcessBench lists them."""
    out = [LabelledItem(id=f"{subset}-e{i}", problem="p", steps=("a", "b"), label=2, meta={"subset": subset})
           for i in range(n_err)]
    return out + [LabelledItem(id=f"{subset}-c{i}", problem="p", steps=("a", "b"), label="correct",
                               meta={"subset": subset}) for i in range(n_ok)]


# --- score reads what localize reads ----------------------------------------------------------


def test_score_reads_the_localize_examples(tmp_path: Path) -> None:
    data = load_dataset(EXAMPLES)
    files = sorted(EXAMPLES.glob("*.json"))
    assert data.bad == [] and len(data.items) == len(files) == 50
    for f, item in zip(files, data.items, strict=True):
        expected = json.loads(f.read_text(encoding="utf-8"))["expected"]["first_error_step"]
        assert item.id == f.stem and item.first_error == expected
    res = run_score(_req(EXAMPLES, tmp_path / "ex"))
    assert res.metrics["n"] == 50 and res.metrics["run"]["bad_records"] == 0


def test_localize_input_without_label_is_a_named_bad_record(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text(json.dumps({"problem": "p", "steps": ["1 + 1 = 2."]}, indent=2))
    data = load_dataset(tmp_path)
    assert data.items == [] and len(data.bad) == 1
    assert "x.json" in str(data.bad[0]) and "no label" in data.bad[0].reason


# --- --limit ---------------------------------------------------------------------------------


def test_stratified_sample_keeps_both_classes_in_proportion() -> None:
    items = _items(30, 10)
    got = select(items, limit=8, seed=0)
    assert sum(it.first_error is None for it in got) == 2 and len(got) == 8
    assert [it.id for it in got] == [it.id for it in items if it in got]  # dataset order
    assert select(items, limit=8, seed=0) == got  # seeded
    assert any(select(items, limit=8, seed=s) != got for s in range(1, 6))
    assert select(items, limit=8, sample="first") == items[:8]
    assert select(items, limit=100) == items


def test_stratified_sample_is_per_subset() -> None:
    items = _items(6, 6, "a") + _items(20, 0, "b")
    got = select(items, limit=16, seed=3)
    count = {(s, c): sum(1 for it in got if it.subset == s and (it.first_error is None) == c)
             for s in "ab" for c in (True, False)}
    assert count == {("a", True): 3, ("a", False): 3, ("b", True): 0, ("b", False): 10}


def test_negative_limit_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        select(_items(2, 2), limit=-1)
    with pytest.raises(Exception, match="0 or more"):
        run_score(_req(MINI, tmp_path / "r", limit=-5))
    assert not (tmp_path / "r").exists()


def test_class_gap_warnings() -> None:
    assert class_gaps(_items(3, 3)) == []
    (only,) = class_gaps(_items(3, 0))
    assert "no correct item" in only and "F1" in only
    warned = class_gaps(_items(2, 2, "a") + _items(0, 4, "b") + _items(3, 0, "c") + _items(0, 1, "d"))
    assert warned == ["per-subset F1 undefined: no correct item in c (3); no flawed item in b (4), d (1) (items scored)"]


def test_processbench_limit_100_scores_both_classes(shared_raw: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    pb = shared_raw / "processbench" / "gsm8k.json"
    base = ["score", str(pb), "--limit", "100", "--bootstrap", "10", "--no-report", "--no-progress"]
    assert main([*base, "--out", str(tmp_path / "s")]) == 0
    cap = capsys.readouterr()
    m = json.loads(cap.out)
    assert m["n"] == 100 and m["f1"] is not None and m["correct_accuracy"] is not None
    assert "warning" not in cap.err
    assert main([*base, "--out", str(tmp_path / "f"), "--sample", "first"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["f1"] is None and "warning: the 100 scored items have no correct item" in cap.err


# --- runs record and check their settings --------------------------------------------------------


def test_run_records_config_versions_and_data_hash(tmp_path: Path) -> None:
    out = tmp_path / "r"
    run_score(_req(MINI, out, limit=6, settings=Settings(proof_time_limit_s=2.0)))
    state = json.loads((out / STATE).read_text())
    run = json.loads((out / METRICS).read_text())["run"]
    for doc in (state, run):
        cfg = doc["config"]
        assert cfg["limit"] == 6 and cfg["sample"] == "stratified" and cfg["settings"]["proof_time_limit_s"] == 2.0
    assert run["versions"]["faithsieve"] and run["versions"]["sympy"] and run["versions"]["z3"]
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", run["data_sha256"])
    assert state["identity"]["data_sha256"] == run["data_sha256"]


def test_changed_time_limit_is_refused_with_the_difference(tmp_path: Path) -> None:
    out = tmp_path / "r"
    run_score(_req(MINI, out, limit=5, settings=Settings(proof_time_limit_s=0.005)))
    before = (out / PREDICTIONS).read_bytes()
    with pytest.raises(RunMismatch, match=r"proof_time_limit_s: 0\.005 -> 5\.0") as exc:
        run_score(_req(MINI, out, limit=5))
    assert "--force-new" in exc.value.message
    with pytest.raises(RunMismatch, match=r"obligation_time_limit_ms: 300 -> 5"):
        run_score(_req(MINI, out, limit=5, settings=Settings(proof_time_limit_s=0.005, obligation_time_limit_ms=5)))
    assert (out / PREDICTIONS).read_bytes() == before  # nothing reused, nothing appended
    res = run_score(_req(MINI, out, limit=5, force_new=True))
    assert (res.processed, res.reused) == (5, 0)
    assert run_score(_req(MINI, out, limit=5)).reused == 5


def test_cli_refusal_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "r"
    argv = ["score", str(MINI), "--limit", "4", "--out", str(out), "--bootstrap", "10", "--no-report", "--no-progress"]
    monkeypatch.setenv("FAITHSIEVE_PROOF_TIME_LIMIT_S", "0.005")
    assert main(argv) == 0
    monkeypatch.delenv("FAITHSIEVE_PROOF_TIME_LIMIT_S")
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(out) in err and "proof_time_limit_s: 0.005 -> 5.0" in err
    assert main([*argv, "--force-new"]) == 0
    assert "scored 4 items (4 new, 0 reused)" in capsys.readouterr().err


def test_settings_that_do_not_change_predictions_resume(tmp_path: Path) -> None:
    out = tmp_path / "r"
    run_score(_req(MINI, out, limit=4))
    res = run_score(_req(MINI, out, limit=4, workers=2, settings=Settings(llm_concurrency=9, llm_model="other")))
    assert res.reused == 4
    keys = set(predictive_settings(Settings()))
    assert {"proof_time_limit_s", "obligation_time_limit_ms", "checkers", "max_exponent", "mode"} <= keys
    assert not keys & {"llm_model", "llm_concurrency", "lean_workers", "llm_cache_path"}  # offline: the model is unused
    llm = set(predictive_settings(Settings(mode="llm")))
    assert {"llm_model", "llm_base_url", "llm_temperature", "gate_threshold", "ablations"} <= llm
    assert "llm_concurrency" not in llm


def test_changed_data_or_version_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    lines = MINI.read_text(encoding="utf-8").splitlines(keepends=True)[:6]
    data.write_text("".join(lines), encoding="utf-8")
    out = tmp_path / "r"
    run_score(_req(data, out))
    data.write_text("".join(lines[:5]), encoding="utf-8")
    with pytest.raises(RunMismatch, match="data_sha256"):
        run_score(_req(data, out))
    data.write_text("".join(lines), encoding="utf-8")
    state = json.loads((out / STATE).read_text())
    state["identity"]["versions"]["sympy"] = "0.0.1"
    (out / STATE).write_text(json.dumps(state))
    with pytest.raises(RunMismatch, match=r"versions\.sympy: '0\.0\.1' ->"):
        run_score(_req(data, out))


def test_run_without_recorded_identity_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "r"
    run_score(_req(MINI, out, limit=3))
    state = json.loads((out / STATE).read_text())
    del state["identity"]
    (out / STATE).write_text(json.dumps(state))
    with pytest.raises(RunMismatch, match="records no settings"):
        run_score(_req(MINI, out, limit=3))


def test_identity_diff_lists_each_change() -> None:
    a = run_identity(Settings(), [MINI])
    b = run_identity(Settings(max_steps=7), [MINI])
    assert identity_diff(a, a) == []
    assert identity_diff(a, b) == ["max_steps: 200 -> 7"]


# --- evidence files ------------------------------------------------------------------------------


def test_evidence_for_every_checked_item_with_per_step_checks(tmp_path: Path) -> None:
    out = tmp_path / "r"
    run_score(_req(MINI, out, report=True))
    preds = [json.loads(line) for line in (out / PREDICTIONS).read_text().splitlines()]
    assert all("_checks" not in p for p in preds)
    files = {p.stem: json.loads(p.read_text()) for p in (out / EVIDENCE_DIR).glob("*.json")}
    assert len(files) >= 100
    items = {it.id: it for it in load_dataset(MINI).items}
    missed = 0
    for doc in files.values():
        item = items[doc["item"]["id"]]
        assert doc["what"] == outcome(item.first_error, doc["prediction"]["predicted"])
        if doc["steps"]:
            assert all(s["evidence"] and s["status"] in ("refuted", "verified", "unknown", "unchecked")
                       and 1 <= s["step"] <= len(item.steps) for s in doc["steps"])
        missed += doc["what"] == "missed error" and bool(doc["steps"])
    assert missed >= 10  # missed errors carry their checks too
    checked = [p for p in preds if (p.get("coverage") or {}).get("obligations")]
    assert {p["id"] for p in checked} <= {d["item"]["id"] for d in files.values()}


def test_evidence_cleared_on_new_run_kept_on_resume(tmp_path: Path) -> None:
    out = tmp_path / "r"
    run_score(_req(MINI, out, limit=10))
    stale = out / EVIDENCE_DIR / "stale-item.json"
    stale.write_text("{}")
    first = sorted(p.name for p in (out / EVIDENCE_DIR).iterdir())
    run_score(_req(MINI, out, limit=20))  # resume: earlier files stay, new ones join
    assert stale.exists() and set(first) <= {p.name for p in (out / EVIDENCE_DIR).iterdir()}
    run_score(_req(MINI, out, limit=10, force_new=True))
    assert not stale.exists()
    (out / PREDICTIONS).unlink()  # no predictions: a new run
    stale.write_text("{}")
    run_score(_req(MINI, out, limit=10))
    assert not stale.exists()


# --- report faults -------------------------------------------------------------------------------


def test_compare_columns_line_up_for_long_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    run_score(_req(MINI, a, limit=8))
    run_score(_req(MINI, b, limit=8, settings=Settings(max_steps=3)))
    assert main(["compare", str(a), str(b)]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("metric"))
    end = lines.index("", start)
    table = lines[start:end]
    assert any(len(line.split()[0]) > 28 for line in table[1:])  # coverage.proofs_with_decided_step
    assert len({len(line) for line in table}) == 1, table  # every row as wide: the columns line up
    a_col = table[0].index(" A") + 1
    for line in table[1:]:
        assert line[a_col] != " ", line  # a value ends in the header's A column


def test_subsets_plot_is_in_percent_as_titled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from faithsieve.datasets.report import plot_subsets
    from matplotlib.figure import Figure

    seen = {}
    real = Figure.savefig

    def capture(self: Figure, *a: object, **k: object) -> None:
        ax = self.axes[0]
        seen.update(title=ax.get_title(), ylim=ax.get_ylim(), heights=[p.get_height() for p in ax.patches])
        real(self, *a, **k)

    monkeypatch.setattr(Figure, "savefig", capture)
    metrics = {"per_subset": {"x": {"n": 4, "error_accuracy": 1.0, "correct_accuracy": 0.5, "f1": 2 / 3,
                                    "flag_precision": None}}}
    plot_subsets(metrics, tmp_path / "s.png")
    assert "%" in seen["title"] and seen["ylim"][1] > 100
    assert sorted(seen["heights"]) == pytest.approx([0.0, 50.0, 200 / 3, 100.0])


# --- documentation drift -------------------------------------------------------------------------


def test_datasets_readme_usage_matches_the_parser() -> None:
    text = (ROOT / "docs" / "score.md").read_text(encoding="utf-8")
    usage = text.split("```", 2)[1]
    assert "--subset NAME[,NAME...]" in usage and "--subset NAME ..." not in usage
    from faithsieve.cli.commands import build_parser

    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    blocks: dict[str, str] = {}
    cmd = ""
    for line in usage.strip().splitlines():
        if line.startswith("faithsieve "):
            cmd = line.split()[1]
        blocks[cmd] = blocks.get(cmd, "") + " " + line
    assert set(blocks) == {"score", "predict", "convert", "formats", "compare", "inject"}
    for cmd, block in blocks.items():
        options = {o for a in sub.choices[cmd]._actions for o in a.option_strings}
        documented = set(re.findall(r"(--[a-z-]+|-[vq]\b)", block))
        assert documented <= options, (cmd, documented - options)


def test_api_readme_lists_every_route() -> None:
    from faithsieve.api.app import create_app
    from faithsieve.api.settings import ServiceSettings
    from fastapi.routing import APIRoute

    table = (ROOT / "docs" / "serve.md").read_text(encoding="utf-8").split("## Routes", 1)[1].split("\n\n", 2)[1]
    def flat(routes: list[Any]) -> list[Any]:  # FastAPI >= 0.165 keeps an included router as one entry
        return [leaf for r in routes
                for leaf in (flat(r.original_router.routes) if hasattr(r, "original_router") else [r])]

    routes = [r for r in flat(create_app(ServiceSettings(workers=1)).routes)
              if isinstance(r, APIRoute) and not r.path.startswith(("/docs/assets", "/web/"))]
    assert "`GET /`, `/web/...`" in table  # the workbench's routes: one row, each in docs/workbench.md
    assert {r.path for r in routes} >= {"/get_reward", "/docs", "/redoc"}
    for route in routes:
        for method in route.methods - {"HEAD"}:
            assert f"`{method} {route.path}`" in table, (method, route.path)
