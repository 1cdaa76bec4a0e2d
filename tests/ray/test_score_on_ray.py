"""``faithsieve score --ray`` on a real local cluster: the same predictions as a local run, item by item,
and the same after a Ray worker or the driver is killed mid-run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from faithsieve.core.settings import Settings
from faithsieve.scoring.onray import endpoint_share
from faithsieve.scoring.run import (
    METRICS,
    PREDICTIONS,
    REPORT,
    ScoreRequest,
    run_score,
    stable_view,
)
from tests.conftest import kill_mid_run

from .conftest import RAY_MARKS, descendants, processes_named

pytestmark = RAY_MARKS

MINI = Path(__file__).resolve().parents[2] / "datasets" / "proofloc-mini"
LIMIT = 48
"""A stratified slice of proofloc-mini: six chunks, so kills land mid-run."""


def _req(out: Path, **kw: Any) -> ScoreRequest:
    return ScoreRequest(path=MINI, out=out, limit=LIMIT, progress=False, resamples=20, **kw)


def _lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / PREDICTIONS).read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("local")
    run_score(_req(out, workers=2))
    return out


def _same_run(a: Path, b: Path) -> None:
    la, lb = _lines(a), _lines(b)
    assert [r["id"] for r in la] == [r["id"] for r in lb]
    assert len({r["id"] for r in la}) == len(la) == LIMIT
    for ra, rb in zip(la, lb, strict=True):
        assert stable_view(ra) == stable_view(rb), ra["id"]


def test_ray_run_equals_local_run(cluster: str, local_run: Path, tmp_path: Path) -> None:
    res = run_score(_req(tmp_path, ray=cluster))
    assert res.processed == LIMIT
    _same_run(local_run, tmp_path)
    ma, mb = (json.loads((d / METRICS).read_text()) for d in (local_run, tmp_path))
    timing = {"run", "time_ms", "proofs_per_second", "pipeline_proofs_per_second"}
    assert {k: v for k, v in ma.items() if k not in timing} == {k: v for k, v in mb.items() if k not in timing}
    assert mb["run"]["sessions"][-1]["ray"] == cluster
    ra, rb = ([ln for ln in (d / REPORT).read_text().splitlines() if "proofs/s" not in ln] for d in (local_run, tmp_path))
    assert ra == rb  # the same report, but for the throughput line


def test_killed_ray_worker_resumes_to_the_same_output(cluster: str, local_run: Path, tmp_path: Path) -> None:
    before = set(processes_named("ray::ChunkScorer"))
    killed: list[int] = []

    def kill_one_scorer() -> None:
        end = time.monotonic() + 120
        while time.monotonic() < end and not killed:
            preds = tmp_path / PREDICTIONS
            scorers = sorted(set(processes_named("ray::ChunkScorer")) - before)
            if scorers and preds.exists() and preds.read_bytes().count(b"\n") >= 1:
                os.kill(scorers[0], signal.SIGKILL)
                killed.append(scorers[0])
            time.sleep(0.01)

    killer = threading.Thread(target=kill_one_scorer, daemon=True)
    killer.start()
    res = run_score(_req(tmp_path, ray=cluster))
    killer.join(5)
    assert killed, "no Ray worker was killed"
    assert res.processed == LIMIT
    assert not [r for r in _lines(tmp_path) if r.get("error")], "a Ray worker's death cost an item"
    _same_run(local_run, tmp_path)


_SLOW_DRIVER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import faithsieve.scoring.run as s
    orig = s.PredictionLog.append
    def slow(self, record):  # the driver writes slowly, so the kill lands mid-run
        time.sleep(0.1)
        orig(self, record)
    s.PredictionLog.append = slow
    s.run_score(s.ScoreRequest(path=Path(sys.argv[1]), out=Path(sys.argv[2]), limit=int(sys.argv[3]), ray=sys.argv[4],
                               progress=False, resamples=20))
    """
)


def test_killed_driver_resumes_to_the_same_output(cluster: str, local_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    script = tmp_path / "driver.py"
    script.write_text(_SLOW_DRIVER)
    before = set(processes_named("ray::ChunkScorer"))
    proc = subprocess.Popen([sys.executable, str(script), str(MINI), str(out), str(LIMIT), cluster],
                            stderr=subprocess.PIPE)
    scorers: set[int] = set()

    def watch() -> None:
        scorers.update(descendants(sorted(set(processes_named("ray::ChunkScorer")) - before)))

    written = kill_mid_run(proc, out / PREDICTIONS, 6, within_s=120, poll_s=0.02, who="driver", watch=watch)
    assert 6 <= written < LIMIT, "the kill should land mid-run"
    assert not (out / METRICS).exists()
    assert scorers, "the driver's actors were not seen"
    end = time.monotonic() + 30  # the job's actors, and their pool workers, end with their driver
    while time.monotonic() < end and descendants(sorted(scorers)):
        time.sleep(0.2)
    assert not descendants(sorted(scorers)), "processes of the killed driver's actors are left"

    res = run_score(_req(out, ray=cluster))
    assert res.reused == written and res.processed == LIMIT - written
    _same_run(local_run, out)


def test_judge_over_ray_keeps_the_endpoint_concurrency_cluster_wide(cluster: str, tmp_path: Path) -> None:
    """Two actors, ``llm_concurrency=1``: the endpoint never sees two requests at once (each actor on its
    own would send one)."""
    from tests.llm.fakeserver import FakeOpenAI, Reply

    data = tmp_path / "set.jsonl"
    data.write_text("".join(json.dumps({"id": f"j{i}", "problem": f"Compute {i} * 4 + 1.",
                                        "steps": [f"{i} * 4 = {4 * i}.", f"{4 * i} + 1 = {4 * i + 2}."],
                                        "first_error_step": "2"}) + "\n" for i in range(10)))
    with FakeOpenAI() as server:
        server.respond_with(lambda body: Reply.ok('{"answer": "step 2", "reason": "off by one"}', delay_s=0.2))
        settings = Settings(mode="judge", llm_base_url=server.base_url, llm_model="fake-model",
                            llm_structured="json_object_schema", llm_cache=False, llm_concurrency=1)
        res = run_score(ScoreRequest(path=data, out=tmp_path / "run", ray=cluster, settings=settings,
                                     progress=False, resamples=10, report=False))
        assert res.processed == 10 and res.metrics["exact_accuracy"] == 1.0
        assert len(server.requests) >= 10 and server.max_in_flight == 1


def test_endpoint_share_never_exceeds_the_limit() -> None:
    for total in (1, 2, 3, 4, 7, 16):
        for processes in (1, 2, 3, 8, 64):
            s, n = endpoint_share(Settings(mode="judge", llm_concurrency=total), processes)
            assert 1 <= n <= processes and n * s.llm_concurrency <= total
            assert n == min(processes, total)  # as many processes as the limit allows
    s, n = endpoint_share(Settings(), 8)
    assert n == 8 and s == Settings()  # offline: nothing to share


def test_unreachable_or_malformed_address_is_one_line_and_exit_2(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for address, says in ((f"127.0.0.1:{port}", "cannot reach the Ray cluster"), ("nonsense", "is not host:port")):
        t0 = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "faithsieve", "score", str(MINI), "--out", str(tmp_path / "o"),
                               "--ray", address, "--no-progress"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
        assert time.monotonic() - t0 < 60  # Ray alone retries an unreachable cluster for minutes


def test_a_cluster_without_cpus_is_refused_not_waited_on(tmp_path: Path) -> None:
    """A head with no CPUs and no worker node: one line, exit 2, instead of actors pending forever."""
    probe = textwrap.dedent(
        """
        import sys, ray
        from faithsieve.cli import main
        ray.init(address="local", num_cpus=0, include_dashboard=False, log_to_driver=False,
                 object_store_memory=80 * 1024 * 1024, _node_ip_address="127.0.0.1")
        sys.exit(main(["score", sys.argv[1], "--out", sys.argv[2], "--ray", "auto", "--no-progress", "--limit", "4"]))
        """
    )
    done = subprocess.run([sys.executable, "-c", probe, str(MINI), str(tmp_path / "o")], capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 2 and "has no CPU to run on" in done.stderr, done.stderr[-2000:]
