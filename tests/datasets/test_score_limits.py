"""Every scored item runs under the worker pool's hard limits — with ``--workers 1`` and with a run of
four items or fewer too (these ran in the calling process, unbounded, before): a runaway item ends as
an ``unknown`` record with its reason, and the run goes on."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from faithsieve.core.settings import Settings
from faithsieve.runtime.limits import ItemLimits, item_time_limit
from faithsieve.scoring.chunks import scoring_pool
from faithsieve.scoring.run import PREDICTIONS, ScoreRequest, run_score

BOMB = "sqrt((sqrt(2)+sqrt(3)+sqrt(5)+sqrt(7)+sqrt(11)+sqrt(13))^60) = 5"
"""A 60-character claim whose expansion inside the call's argument once took 24 s and 443 MB."""


def _dataset(tmp_path: Path, bomb: bool = True) -> Path:
    path = tmp_path / ("bomb.jsonl" if bomb else "plain.jsonl")
    rows = [
        {"id": "bomb", "problem": "Compute.", "steps": [f"We have {BOMB}.", "So the answer is 5."], "label": 1,
         "domain": "algebra"},
        {"id": "sum", "problem": "Compute 2 + 3.", "steps": ["2 + 3 = 6.", "The answer is 6."], "label": 1,
         "domain": "arithmetic"},
    ][0 if bomb else 1:]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _records(out: Path) -> dict[str, dict[str, object]]:
    return {r["id"]: r for r in map(json.loads, (out / PREDICTIONS).read_text(encoding="utf-8").splitlines())}


def test_one_worker_short_run_kills_an_item_past_its_time_limit(tmp_path: Path) -> None:
    """Two items, one worker: a limit no check can meet kills each item in its worker (in-process, the
    limit could not be held and both would be decided)."""
    res = run_score(ScoreRequest(path=_dataset(tmp_path), out=tmp_path / "out", workers=1, item_time_limit_s=0.001,
                                 progress=False, resamples=10, report=False))
    assert res.processed == 2
    for rec in _records(tmp_path / "out").values():
        assert rec["verdict"] == "unknown" and rec["predicted"] == "unknown"
        assert str(rec["reason"]).startswith("resource_limit: the check ran past its time limit")
        assert "--item-time-limit" in str(rec["reason"])


def test_scoring_workers_have_their_address_space_capped() -> None:
    limits = ItemLimits(time_s=10.0, memory_mb=1536)
    with scoring_pool(Settings(), 1, limits) as pool:
        soft, hard = pool.run(resource.getrlimit, resource.RLIMIT_AS, time_limit=10)
    assert soft == 1536 * 1024 * 1024
    assert hard == resource.getrlimit(resource.RLIMIT_AS)[1]  # left as inherited: the Lean REPL may get more
    assert ItemLimits.for_run(Settings()).memory_mb == 4096  # the default cap is on
    assert ItemLimits.for_run(Settings()).time_s == item_time_limit(Settings()) == 60.0


def test_the_bomb_ends_within_the_limit_in_a_memory_capped_process(tmp_path: Path) -> None:
    """``faithsieve score`` on the bomb, one worker, under ``prlimit --as`` (4 GB for the whole run):
    done within the item's limit plus start-up, the bomb's record ``unknown`` with its reason unless the
    checker decided it, the other item decided."""
    def score(dataset: Path, out: Path) -> float:
        cmd = ["prlimit", "--as=4000000000", sys.executable, "-m", "faithsieve", "score", str(dataset),
               "--out", str(out), "--workers", "1", "--item-time-limit", "4", "--worker-memory-mb", "1500",
               "--no-progress", "--bootstrap", "10", "--no-report"]
        t0 = time.monotonic()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
        except FileNotFoundError:
            pytest.skip("prlimit (util-linux) is not installed")
        assert proc.returncode == 0, proc.stderr[-2000:]
        return time.monotonic() - t0

    # the same run without the bomb, just before: start-up, the other item and this machine's load now
    plain = score(_dataset(tmp_path, bomb=False), tmp_path / "plain")
    out = tmp_path / "out"
    wall = score(_dataset(tmp_path), out)
    # the bomb adds at most its 4 s limit twice (its chunk, then alone), plus room for the load to change
    # between the two runs; the 90 s timeout is the hang guard
    assert wall < plain + 2 * 4 + max(5.0, 0.5 * plain), (wall, plain)
    recs = _records(out)
    bomb = recs["bomb"]
    if bomb["verdict"] == "correct":
        # the cost model now refuses the expansion up front: the claim is undecided, never verified
        cov = bomb["coverage"]
        assert cov["obligations"] > cov["obligations_decided"], bomb
    else:
        assert bomb["verdict"] in ("unknown", "error"), bomb
        if bomb["verdict"] == "unknown":
            assert bomb["reason"], bomb
    assert recs["sum"]["verdict"] == "error" and recs["sum"]["predicted"] == 1


def test_a_lower_inherited_cap_is_kept_without_a_warning(tmp_path: Path) -> None:
    """Under ``prlimit --as`` below the pool's cap, the workers keep the lower cap (raising it is refused)."""
    probe = ("import resource; from faithsieve.core.settings import Settings; "
             "from faithsieve.runtime.limits import ItemLimits\nfrom faithsieve.scoring.chunks import scoring_pool\n"
             "with scoring_pool(Settings(), 1, ItemLimits(10.0, 4096)) as p:\n"
             "    print(p.run(resource.getrlimit, resource.RLIMIT_AS, time_limit=10)[0])")
    try:
        done = subprocess.run(["prlimit", "--as=3000000000", sys.executable, "-c", probe], capture_output=True,
                              text=True, timeout=120)
    except FileNotFoundError:
        pytest.skip("prlimit (util-linux) is not installed")
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.split()[-1]) == 3000000000
    assert "could not set the worker memory limit" not in done.stderr


def test_an_item_out_of_memory_is_unknown_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    from faithsieve.datasets.formats import LabelledItem

    import faithsieve.pipeline
    from faithsieve.scoring.chunks import _out_of_memory, predict

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError  # what the worker's address-space cap raises inside an expansion

    monkeypatch.setattr(faithsieve.pipeline, "localize", exhausted)
    item = LabelledItem(id="m", problem="Compute.", steps=("2 + 2 = 4.",), label="correct")
    rec = predict(item, Settings(), ItemLimits(10.0, 1500))
    assert rec["verdict"] == "unknown" and rec["predicted"] == "unknown"
    # the words a MemoryError raised out of the job gets (ItemLimits.run), with the worker's cap
    assert rec["reason"] == rec["error"] == ItemLimits(10.0, 1500).out_of_memory().record
    assert "memory limit (1500 MB)" in rec["reason"] and "--worker-memory-mb" in rec["reason"]
    assert _out_of_memory([rec])  # the worker that ran it is replaced
    assert not _out_of_memory([{"error": None}, {"error": "internal: ValueError: x"}])
    bare = predict(item, Settings())  # in this process: no cap of the worker's own
    assert "no memory limit of its own" in str(bare["reason"]) and _out_of_memory([bare])


def test_a_memory_error_out_of_the_item_is_a_record_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``MemoryError`` that reaches the pool (raised outside ``predict``'s own guard) stops that item only: the
    chunk is retried item by item and the item at fault gets a ``resource_limit`` record (it used to end the run)."""
    from faithsieve.datasets.formats import LabelledItem

    from faithsieve.scoring.chunks import score_chunk

    items = [LabelledItem(id=i, problem="Compute.", steps=("2 + 2 = 4.",), label="correct") for i in ("a", "b")]

    class Pool:
        def run(self, fn: object, chunk: list[LabelledItem], **kwargs: object) -> list[dict[str, object]]:
            if any(it.id == "b" for it in chunk):
                raise MemoryError
            return [{"id": it.id, "verdict": "correct"} for it in chunk]

    recs = score_chunk(Pool(), items, Settings(), ItemLimits(10.0, 1500))  # type: ignore[arg-type]
    assert [r["id"] for r in recs] == ["a", "b"] and recs[0]["verdict"] == "correct"
    assert recs[1]["verdict"] == "unknown" and recs[1]["predicted"] == "unknown"
    assert str(recs[1]["reason"]).startswith("resource_limit: the check ran out of its memory limit (1500 MB)")


def test_a_run_that_checked_nothing_says_so_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every item ended ``unknown`` for one reason (here a time limit no check can meet; on Ray, an import
    error on every worker): one line on stderr and exit 1, never a run that looks like a run (issue 38)."""
    from faithsieve.cli.commands import main

    code = main(["score", str(_dataset(tmp_path)), "--out", str(tmp_path / "out"), "--workers", "1",
                 "--item-time-limit", "0.001", "--no-progress", "--no-report"])
    err = capsys.readouterr().err
    assert code == 1
    line = [ln for ln in err.splitlines() if "ended unknown for one reason" in ln]
    assert line and line[0].startswith("error: 2 of 2 items") and "resource_limit" in line[0], err


def test_common_failure_needs_a_majority_with_one_reason() -> None:
    from faithsieve.scoring.run import common_failure

    bad = {"predicted": "unknown", "error": "internal: ModuleNotFoundError: No module named 'faithsieve.x'"}
    ok = {"predicted": "correct"}
    assert common_failure([bad, bad, ok]) is not None
    assert common_failure([bad, ok]) is None  # half is not most
    other = {"predicted": "unknown", "reason": "no formula could be checked"}
    assert common_failure([bad, other, ok]) is None
    assert common_failure([]) is None


def test_reading_a_long_item_holds_memory_of_its_size_not_fifty_times_it(tmp_path: Path) -> None:
    """``score`` read a 45 MB file with two 22 MB items at 2.6 GB (the JSON depth guard's string pattern kept
    a backtracking frame per character): the parent now reads it in a process capped at 600 MB (issue 38)."""
    rows = [{"id": f"long{i}", "problem": "Compute.", "steps": ["2 + 2 = 4. " * 1_000_000], "label": 1} for i in range(2)]
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (600 << 20, 600 << 20)); "
            "from pathlib import Path; from faithsieve.datasets.adapters import load_dataset; "
            "d = load_dataset(Path(sys.argv[1]), None); print(len(d.items))")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "2", done.stderr[-1500:]
