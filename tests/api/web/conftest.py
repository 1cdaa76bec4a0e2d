"""Fixtures for the workbench tests: a real scoring run with every outcome, and an app with it opened."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from faithsieve.api.app import create_app
from fastapi.testclient import TestClient

from faithsieve.scoring.run import ScoreRequest, run_score
from tests.api.web.support import web_settings, write_dataset


@pytest.fixture(scope="session")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scoring run over ``ITEMS`` (report and plots written)."""
    base = tmp_path_factory.mktemp("web-run")
    data = write_dataset(base / "toy.jsonl")
    out = base / "runs" / "toy"
    run_score(ScoreRequest(path=data, out=out, progress=False, resamples=20))
    return out


@pytest.fixture(scope="module")
def client(run_dir: Path) -> Iterator[TestClient]:
    """The service with the workbench, the toy run opened as ``faithsieve view`` opens it."""
    app = create_app(web_settings())
    app.state.workbench_runs.add(run_dir)
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


