"""The run browser's routes: which runs may be shown (no path traversal), the table, items, plots."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from faithsieve.api.app import create_app
from faithsieve.api.workbench import runs
from faithsieve.api.workbench.runs import MAX_LISTED, MAX_PAGE, RunRegistry, outcome
from faithsieve.datasets import metrics as m
from fastapi.testclient import TestClient

from tests.api.web.support import ITEMS, web_settings, workbench_port


def _run_id(client: TestClient) -> str:
    listed = client.get("/web/runs").json()["runs"]
    assert len(listed) == 1
    return str(listed[0]["id"])


def test_outcome_agrees_with_the_metrics_definitions() -> None:
    labels: list[int | None] = [None, 1, 2, 3]
    for lab, pred in itertools.product(labels, labels):
        pairs = [(lab, pred)]
        expected = {"exact": int(pred is not None and pred == lab), "early": m.early_flags(pairs),
                    "late": m.late_flags(pairs), "missed": m.missed_errors(pairs),
                    "correct": int(lab is None and pred is None)}
        got = outcome("correct" if lab is None else lab, "correct" if pred is None else pred)
        assert expected[got] == 1 and sum(expected.values()) == 1, (lab, pred, got)


def test_summary_counts_every_outcome_as_metrics_json_does(client: TestClient, run_dir: Path) -> None:
    doc = client.get(f"/web/runs/{_run_id(client)}").json()
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert doc["outcomes"] == {"exact": 1, "early": 2, "late": 1, "missed": 1, "correct": 1}
    assert doc["outcomes"]["early"] == metrics["early_flags"]
    assert doc["outcomes"]["late"] == metrics["late_flags"] and doc["outcomes"]["missed"] == metrics["missed_errors"]
    assert doc["metrics"]["n"] == len(ITEMS) and doc["items"] == len(ITEMS)
    assert doc["plots"] == ["offsets.png", "subsets.png"] and doc["subsets"] == ["other", "toy"]


def test_table_filters_by_outcome_subset_and_id(client: TestClient) -> None:
    rid = _run_id(client)
    early = client.get(f"/web/runs/{rid}/items", params={"outcome": "early"}).json()
    assert early["total"] == 2 and {r["id"] for r in early["rows"]} == {"early-1", "early-2"}
    assert all(r["outcome"] == "early" for r in early["rows"])
    both = client.get(f"/web/runs/{rid}/items", params={"outcome": "early,missed"}).json()
    assert {r["id"] for r in both["rows"]} == {"early-1", "early-2", "missed-1"}
    toy = client.get(f"/web/runs/{rid}/items", params={"subset": "toy"}).json()
    assert {r["id"] for r in toy["rows"]} == {"exact-1", "early-1", "early-2"}
    found = client.get(f"/web/runs/{rid}/items", params={"q": "LATE"}).json()
    assert [r["id"] for r in found["rows"]] == ["late-1"] and found["rows"][0]["predicted"] == 3
    page = client.get(f"/web/runs/{rid}/items", params={"offset": 4, "limit": 1}).json()
    assert page["total"] == len(ITEMS) and [r["id"] for r in page["rows"]] == [ITEMS[4][0]]
    r = client.get(f"/web/runs/{rid}/items", params={"outcome": "sideways"})
    assert r.status_code == 422 and "sideways" in r.json()["error"]["message"]


def test_page_size_is_bounded(client: TestClient) -> None:
    rid = _run_id(client)
    assert client.get(f"/web/runs/{rid}/items", params={"limit": MAX_PAGE}).status_code == 200
    r = client.get(f"/web/runs/{rid}/items", params={"limit": MAX_PAGE + 1})
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_input"


def test_item_comes_with_its_text_label_and_prediction(client: TestClient) -> None:
    rid = _run_id(client)
    doc = client.get(f"/web/runs/{rid}/item", params={"id": "early-1"}).json()
    assert doc["prediction"]["label"] == 2 and doc["prediction"]["predicted"] == 1
    assert doc["prediction"]["outcome"] == "early"
    assert doc["item"]["steps"] == list(ITEMS[1][1]) and doc["item"]["problem"] == "Compute 7 + 8 + 1."
    assert doc["item_source"] and doc["item_missing"] is None
    r = client.get(f"/web/runs/{rid}/item", params={"id": "nope"})
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


def test_item_text_missing_says_why(tmp_path: Path, run_dir: Path) -> None:
    copy = tmp_path / "moved"
    shutil.copytree(run_dir, copy)
    state = json.loads((copy / "run.json").read_text())
    state["dataset"] = str(tmp_path / "gone.jsonl")
    (copy / "run.json").write_text(json.dumps(state))
    shutil.rmtree(copy / "evidence")
    reg = RunRegistry()
    run = reg.add(copy)
    item, why = run.item("early-1")
    assert item is None and "not found" in why and "--dataset" in why
    reg.add(copy, dataset=run_dir.parent.parent / "toy.jsonl")
    item, why = run.item("early-1")
    assert item is not None and item["id"] == "early-1"


def test_plots_are_served_by_fixed_name_only(client: TestClient) -> None:
    rid = _run_id(client)
    r = client.get(f"/web/runs/{rid}/plots/offsets.png")
    assert r.status_code == 200 and r.headers["content-type"] == "image/png" and r.content[:4] == b"\x89PNG"
    for name in ("metrics.json", "..%2Fmetrics.json", "report.md"):
        assert client.get(f"/web/runs/{rid}/plots/{name}").status_code == 404


def test_unknown_run_is_404(client: TestClient) -> None:
    for rid in ("0" * 16, "..", "%2e%2e"):
        r = client.get(f"/web/runs/{rid}")
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


# -- which paths may be opened ---------------------------------------------------------------


@pytest.fixture()
def rooted(tmp_path: Path, run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[TestClient, Path, Path]:
    """An app whose runs root holds a copy of the toy run; another copy lies outside the root."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    shutil.copytree(run_dir, root / "toy")
    shutil.copytree(run_dir, outside / "secret")
    (root / "plain").mkdir()
    monkeypatch.setenv("FAITHSIEVE_RUNS_ROOT", str(root))
    app = create_app(web_settings())
    return TestClient(app, raise_server_exceptions=False), root, outside


def test_runs_under_the_root_open_by_relative_or_absolute_path(rooted: tuple[TestClient, Path, Path]) -> None:
    client, root, _ = rooted
    a = client.post("/web/runs/open", json={"path": "toy"})
    b = client.post("/web/runs/open", json={"path": str(root / "toy")})
    assert a.status_code == b.status_code == 200 and a.json()["id"] == b.json()["id"]
    assert [r["name"] for r in client.get("/web/runs").json()["runs"]] == ["toy"]


@pytest.mark.parametrize("path", ["../outside/secret", "toy/../../outside/secret", "/etc", "/",
                                  "{outside}/secret", "{root}", "link"])
def test_paths_outside_the_root_are_refused(rooted: tuple[TestClient, Path, Path], path: str) -> None:
    client, root, outside = rooted
    (root / "link").symlink_to(outside / "secret")  # a link inside the root that leads out of it
    r = client.post("/web/runs/open", json={"path": path.format(root=root, outside=outside)})
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
    assert "secret" not in json.dumps(client.get("/web/runs").json()["runs"])  # names only, no paths


def test_bad_paths_get_clear_errors(rooted: tuple[TestClient, Path, Path]) -> None:
    client, _, _ = rooted
    assert client.post("/web/runs/open", json={"path": "plain"}).status_code == 404  # inside, but no run
    assert client.post("/web/runs/open", json={"path": "toy\u0000x"}).status_code == 422
    assert client.post("/web/runs/open", json={"path": ""}).status_code == 422
    assert client.post("/web/runs/open", json={"path": "x" * 5000}).status_code == 422
    r = client.post("/web/runs/open", json={"path": "p" * 9000})
    assert r.status_code == 413  # the body limit of this route


def test_without_a_root_only_runs_opened_by_the_operator_are_shown(client: TestClient, run_dir: Path,
                                                                   tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(run_dir, other)
    assert client.post("/web/runs/open", json={"path": str(run_dir)}).status_code == 200
    r = client.post("/web/runs/open", json={"path": str(other)})
    assert r.status_code == 403 and "faithsieve view" in r.json()["error"]["message"]
    assert client.post("/web/runs/open", json={"path": "toy"}).status_code == 403


def test_listing_under_the_root_is_bounded(tmp_path: Path) -> None:
    root = tmp_path / "many"
    for i in range(MAX_LISTED + 5):
        (root / f"r{i:04d}").mkdir(parents=True)
        (root / f"r{i:04d}" / "predictions.jsonl").write_text("")
    assert len(RunRegistry(root).listing()) == MAX_LISTED


def test_a_torn_last_line_is_skipped_and_a_grown_file_reread(tmp_path: Path, run_dir: Path) -> None:
    copy = tmp_path / "growing"
    shutil.copytree(run_dir, copy)
    run = RunRegistry().add(copy)
    assert len(run.rows()) == len(ITEMS)
    with (copy / "predictions.jsonl").open("a") as fh:
        fh.write('{"id": "new-1", "label": 1, "predicted": 1}\n{"id": "torn')
    rows = run.rows()
    assert len(rows) == len(ITEMS) + 1 and rows[-1]["outcome"] == "exact"


def test_large_files_are_refused_not_read(tmp_path: Path, run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "big"
    shutil.copytree(run_dir, copy)
    monkeypatch.setattr(runs, "MAX_FILE_BYTES", 100)
    with pytest.raises(runs.InputError):
        RunRegistry().add(copy).rows()


# -- faithsieve view ---------------------------------------------------------------------------


def test_view_prints_the_url_and_serves_the_run(run_dir: Path) -> None:
    port = workbench_port()
    proc = subprocess.Popen([sys.executable, "-m", "faithsieve.cli", "view", str(run_dir), "--port", str(port),
                             "--workers", "1", "--log-level", "warning"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith(f"FaithSieve workbench: http://127.0.0.1:{port}/#run=")
        rid = line.strip().rsplit("=", 1)[1]
        deadline = time.monotonic() + 60
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/web/runs/{rid}", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not come up"
                time.sleep(0.3)
        assert r.status_code == 200 and r.json()["name"] == run_dir.name and "path" not in r.json()
        assert r.json()["outcomes"]["early"] == 2
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_view_refuses_a_directory_that_is_no_run(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "faithsieve.cli", "view", str(tmp_path), "--port", "8159"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "is not a scoring run" in done.stderr

