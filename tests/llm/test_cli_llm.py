"""The command line in ``--mode judge`` / ``--mode llm`` over a real HTTP endpoint (the scripted
OpenAI-compatible server): the cache, ``--no-cache``, usage in the output, and scoring that reports
calls and tokens and never reuses predictions made another way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from faithsieve.cli import main
from tests.llm.fakeserver import FakeOpenAI, Reply

PROOF = {"problem": "Compute 3 * 4 + 1.", "steps": ["3 * 4 = 12.", "12 + 1 = 14.", "So the answer is 14."]}


def judge_reply(body: dict[str, Any]) -> Reply:
    return Reply.ok('{"answer": "step 2", "reason": "12 + 1 is 13"}', prompt_tokens=120, completion_tokens=9)


def run_cli(args: list[str], capsys: Any) -> tuple[int, Any]:
    rc = main(args)
    out = capsys.readouterr().out
    return rc, (json.loads(out) if out.strip().startswith("{") else out)


def test_localize_judge_cache_and_no_cache(tmp_path: Path, capsys: Any) -> None:
    f = tmp_path / "proof.json"
    f.write_text(json.dumps(PROOF))
    with FakeOpenAI() as server:
        server.respond_with(judge_reply)
        common = ["localize", str(f), "--mode", "judge", "--base-url", server.base_url, "--model", "fake-model",
                  "--structured", "json_object_schema", "--cache-path", str(tmp_path / "c.sqlite")]
        rc, v = run_cli(common, capsys)
        assert rc == 0 and (v["verdict"], v["first_error_step"], v["basis"]) == ("error", 2, "judged")
        assert v["usage"]["calls"] == 1 and v["usage"]["prompt_tokens"] == 120
        assert server.requests[0]["response_format"]["type"] == "json_object"

        rc, v = run_cli(common, capsys)  # same request: answered from the cache
        assert v["usage"]["calls"] == 0 and v["usage"]["cache_hits"] == 1 and len(server.requests) == 1

        rc, v = run_cli([*common, "--no-cache"], capsys)  # --no-cache: asks again
        assert v["usage"]["calls"] == 1 and len(server.requests) == 2


def test_score_judge_reports_usage_and_redoes_offline_predictions(tmp_path: Path, capsys: Any) -> None:
    data = tmp_path / "set.jsonl"
    data.write_text("\n".join(json.dumps({"id": f"Algebra{i:03d}", "problem": PROOF["problem"], "steps": PROOF["steps"],
                                          "first_error_step": "2"}) for i in range(3)) + "\n")
    out = tmp_path / "run"
    assert main(["score", str(data), "--out", str(out), "--no-progress", "--bootstrap", "10"]) == 0
    capsys.readouterr()
    offline = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert all("method" not in r for r in offline)
    with FakeOpenAI() as server:
        server.respond_with(judge_reply)
        args = ["score", str(data), "--out", str(out), "--no-progress", "--bootstrap", "10", "--mode", "judge",
                "--base-url", server.base_url, "--model", "fake-model", "--cache-path", str(tmp_path / "c.sqlite")]
        assert main(args) == 2  # another mode in the same directory: refused, the difference named
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "mode: 'offline' -> 'judge'" in err and "--force-new" in err
        assert not server.requests
        args.append("--force-new")
        assert main(args) == 0
        summary = json.loads(capsys.readouterr().out)
        # the offline predictions in the same directory were not reused for the judge
        assert len(server.requests) == 1  # three identical items: one call, two cache hits
        assert summary["llm"]["totals"]["calls"] == 1 and summary["llm"]["totals"]["cache_hits"] == 2
        assert summary["llm"]["per_item"]["prompt_tokens"] == 40.0
        assert summary["exact_accuracy"] == 1.0
        metrics = json.loads((out / "metrics.json").read_text())
        assert metrics["llm"]["basis"] == {"judged": 3}
        report = (out / "report.md").read_text()
        assert "Language model (3 items): 1 calls, 2 cache hits, 120 prompt + 9 completion tokens" in report
        # rerun into a fresh directory: every answer from the cache, zero calls
        assert main([*args[:3], str(tmp_path / "run2"), *args[4:]]) == 0
        assert json.loads(capsys.readouterr().out)["llm"]["totals"]["calls"] == 0
        assert len(server.requests) == 1
