"""The run browser with hostile runs and an API key (issue 24): the key is required on every run route,
no file whose resolved path leaves its run is served, ``run.json``'s dataset is read only under the runs
root, no answer shows a server path, and bad paths get a 4xx with nothing of them echoed at length."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from faithsieve.api.app import create_app
from fastapi.testclient import TestClient

from tests.api.web.support import web_settings

KEY = "sekret"


@pytest.fixture()
def root(tmp_path: Path, run_dir: Path) -> Path:
    """A runs root holding a copy of the toy run, and a secret file outside it."""
    base = tmp_path / "root"
    base.mkdir()
    shutil.copytree(run_dir, base / "toy")
    (tmp_path / "secret.txt").write_text("TOP-SECRET\n")
    return base


def _client(root: Path, monkeypatch: pytest.MonkeyPatch, **overrides: object) -> TestClient:
    monkeypatch.setenv("FAITHSIEVE_RUNS_ROOT", str(root))
    return TestClient(create_app(web_settings(**overrides)), raise_server_exceptions=False)


@pytest.fixture()
def locked(root: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    with _client(root, monkeypatch, api_key=KEY) as c:
        yield c


def test_every_run_route_needs_the_key(locked: TestClient) -> None:
    auth = {"X-API-Key": KEY}
    listed = locked.get("/web/runs", headers=auth)
    assert listed.status_code == 200, listed.text
    rid = listed.json()["runs"][0]["id"]
    for method, path, body in [("GET", "/web/runs", None), ("POST", "/web/runs/open", {"path": "toy"}),
                               ("GET", f"/web/runs/{rid}", None), ("GET", f"/web/runs/{rid}/items", None),
                               ("GET", f"/web/runs/{rid}/item?id=early-1", None),
                               ("GET", f"/web/runs/{rid}/plots/offsets.png", None)]:
        r = locked.request(method, path, json=body)
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized", (path, r.text)
        ok = locked.request(method, path, json=body, headers=auth)
        assert ok.status_code == 200, (path, ok.text)
    assert locked.get("/web/config").status_code == 200  # the page itself still loads


def test_no_answer_shows_a_server_path(locked: TestClient, root: Path) -> None:
    auth = {"X-API-Key": KEY}
    texts = [locked.get("/web/runs", headers=auth).text]
    rid = locked.get("/web/runs", headers=auth).json()["runs"][0]["id"]
    texts.append(locked.get(f"/web/runs/{rid}", headers=auth).text)
    texts.append(locked.get(f"/web/runs/{rid}/item", params={"id": "early-1"}, headers=auth).text)
    texts.append(locked.post("/web/runs/open", json={"path": "/etc"}, headers=auth).text)
    for t in texts:
        assert str(root) not in t and str(root.parent) not in t, t


def test_a_symlink_out_of_the_run_is_not_followed(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = root / "toy"
    (run / "offsets.png").unlink()
    (run / "offsets.png").symlink_to(root.parent / "secret.txt")
    (run / "metrics.json").rename(run / "metrics.real")
    (run / "metrics.json").symlink_to(root.parent / "secret.txt")
    with _client(root, monkeypatch) as c:
        rid = c.get("/web/runs").json()["runs"][0]["id"]
        summary = c.get(f"/web/runs/{rid}").json()
        assert summary["plots"] == ["subsets.png"] and summary["metrics"] == {}
        r = c.get(f"/web/runs/{rid}/plots/offsets.png")
        assert r.status_code == 404 and "TOP-SECRET" not in r.text


def test_a_dataset_outside_the_root_is_not_read(root: Path, monkeypatch: pytest.MonkeyPatch, run_dir: Path) -> None:
    run = root / "toy"
    shutil.rmtree(run / "evidence", ignore_errors=True)
    outside = root.parent / "toy.jsonl"
    shutil.copy(run_dir.parent.parent / "toy.jsonl", outside)
    state = json.loads((run / "run.json").read_text())
    state["dataset"] = str(outside)
    (run / "run.json").write_text(json.dumps(state))
    with _client(root, monkeypatch) as c:
        rid = c.get("/web/runs").json()["runs"][0]["id"]
        doc = c.get(f"/web/runs/{rid}/item", params={"id": "early-1"}).json()
        assert doc["item"] is None and "not found" in doc["item_missing"]
        shutil.copy(outside, root / "toy.jsonl")  # the same file under the root is read
        state["dataset"] = str(root / "toy.jsonl")
        (run / "run.json").write_text(json.dumps(state))
    with _client(root, monkeypatch) as c:
        rid = c.get("/web/runs").json()["runs"][0]["id"]
        doc = c.get(f"/web/runs/{rid}/item", params={"id": "early-1"}).json()
        assert doc["item"] is not None and doc["item_source"] == "dataset toy.jsonl"


def test_bad_paths_are_4xx_and_not_echoed(locked: TestClient) -> None:
    auth = {"X-API-Key": KEY}
    r = locked.post("/web/runs/open", json={"path": "~nosuchuser/x"}, headers=auth)
    assert r.status_code == 422 and r.json()["error"]["detail"]["field"] == "path", r.text
    long_id = "x" * 60_000
    for path in (f"/web/runs/{long_id}", f"/web/static/{long_id}.js", f"/web/examples/{long_id}"):
        r = locked.get(path, headers=auth)
        assert r.status_code == 404 and len(r.text) < 1000, (path[:30], len(r.text))
