"""Failures are loud: an unreachable endpoint, a refused key or a missing model stop ``localize`` and
``score`` with one line and exit 2 before any work; a call that fails during a run makes the item
``unknown`` (never ``correct``); more than 5 % such items make ``score`` exit 1; an answer that
arrived but cannot be read is ``unknown`` too, and counted as unparsed."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from faithsieve.cli import main
from tests.llm.fakeserver import FakeOpenAI, Reply

PROOF = {"problem": "Compute 3 * 4 + 1.", "steps": ["3 * 4 = 12.", "12 + 1 = 14.", "So the answer is 14."]}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _files(tmp_path: Path) -> tuple[Path, Path]:
    f = tmp_path / "proof.json"
    f.write_text(json.dumps(PROOF))
    data = tmp_path / "set.jsonl"
    data.write_text("\n".join(json.dumps({"id": f"Algebra{i:03d}", "problem": PROOF["problem"], "steps": PROOF["steps"],
                                          "first_error_step": "2"}) for i in range(3)) + "\n")
    return f, data


def _common(base_url: str, tmp_path: Path, model: str = "fake-model") -> list[str]:
    return ["--base-url", base_url, "--model", model, "--no-cache", "--llm-timeout", "5",
            "--cache-path", str(tmp_path / "c.sqlite")]


def _one_error_line(capsys: Any, *needles: str) -> str:
    cap = capsys.readouterr()
    assert cap.out == ""
    lines = [ln for ln in cap.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), cap.err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("mode", ["judge", "llm"])
@pytest.mark.parametrize("command", ["localize", "score"])
def test_unreachable_endpoint_is_one_line_and_exit_2(tmp_path: Path, capsys: Any, mode: str, command: str) -> None:
    f, data = _files(tmp_path)
    target = str(f) if command == "localize" else str(data)
    extra = ["--out", str(tmp_path / "run"), "--no-progress"] if command == "score" else []
    rc = main([command, target, *extra, "--mode", mode, *_common(f"http://127.0.0.1:{_closed_port()}/v1", tmp_path)])
    assert rc == 2
    _one_error_line(capsys, "unreachable")
    assert not (tmp_path / "run" / "predictions.jsonl").exists()  # no work was done


@pytest.mark.parametrize("command", ["localize", "score"])
def test_bad_key_is_one_line_and_exit_2(tmp_path: Path, capsys: Any, monkeypatch: Any, command: str) -> None:
    f, data = _files(tmp_path)
    monkeypatch.setenv("FS_TEST_KEY", "sk-wrong")
    with FakeOpenAI(api_key="sk-right") as server:
        target = str(f) if command == "localize" else str(data)
        extra = ["--out", str(tmp_path / "run"), "--no-progress"] if command == "score" else []
        rc = main([command, target, *extra, "--mode", "judge", "--api-key-env", "FS_TEST_KEY",
                   *_common(server.base_url, tmp_path)])
        assert rc == 2
        line = _one_error_line(capsys, "authentication failed", "401")
        assert "sk-wrong" not in line and "sk-right" not in line
        assert server.calls == 0  # the probe's model listing was refused; no chat request was made


@pytest.mark.parametrize("command", ["localize", "score"])
def test_missing_model_is_one_line_and_exit_2(tmp_path: Path, capsys: Any, command: str) -> None:
    f, data = _files(tmp_path)
    with FakeOpenAI() as server:
        target = str(f) if command == "localize" else str(data)
        extra = ["--out", str(tmp_path / "run"), "--no-progress"] if command == "score" else []
        rc = main([command, target, *extra, "--mode", "llm", *_common(server.base_url, tmp_path, "no-such-model")])
        assert rc == 2
        _one_error_line(capsys, "model not found", "fake-model")
        assert server.calls == 1  # only the one-token probe


def test_probe_spends_no_chat_call_when_the_model_is_listed(tmp_path: Path, capsys: Any) -> None:
    f, _ = _files(tmp_path)
    with FakeOpenAI() as server:
        server.respond_with(lambda body: Reply.ok('{"answer": "step 2", "reason": "12 + 1 is 13"}'))
        assert main(["localize", str(f), "--mode", "judge", *_common(server.base_url, tmp_path)]) == 0
        assert server.calls == 1  # the judge call; the probe used GET /models
        capsys.readouterr()


def test_call_failing_mid_run_is_unknown_never_correct(tmp_path: Path, capsys: Any) -> None:
    f, _ = _files(tmp_path)
    with FakeOpenAI() as server:
        server.respond_with(lambda body: Reply.error(503, "overloaded"))
        rc = main(["localize", str(f), "--mode", "judge", *_common(server.base_url, tmp_path),
                   "--structured", "json_object_schema"])
        cap = capsys.readouterr()
        v = json.loads(cap.out)
        assert rc == 1 and v["verdict"] == "unknown" and v["first_error_step"] is None and v["basis"] is None
        assert v["usage"]["failures"] == 1 and "failed" in v["reason"]
        assert "verdict unknown" in cap.err


def test_unreadable_judge_answer_is_unknown_and_counted_unparsed(tmp_path: Path, capsys: Any) -> None:
    f, _ = _files(tmp_path)
    with FakeOpenAI() as server:
        server.respond_with(lambda body: Reply.ok("I think it is mostly fine, maybe."))
        rc = main(["localize", str(f), "--mode", "judge", *_common(server.base_url, tmp_path)])
        v = json.loads(capsys.readouterr().out)
        assert rc == 1 and v["verdict"] == "unknown" and v["usage"]["unparsed"] == 1 and v["usage"]["failures"] == 0


def test_score_with_failed_items_exits_1_and_says_so(tmp_path: Path, capsys: Any) -> None:
    _, data = _files(tmp_path)
    with FakeOpenAI() as server:
        server.respond_with(lambda body: Reply.error(500, "broken"))
        rc = main(["score", str(data), "--out", str(tmp_path / "run"), "--no-progress", "--bootstrap", "10",
                   "--mode", "judge", *_common(server.base_url, tmp_path), "--llm-timeout", "2"])
        cap = capsys.readouterr()
        assert rc == 1, cap.err
        assert "3 of 3 items unknown (3 with failed model calls" in cap.err
        assert "had failed model calls" in cap.err.splitlines()[-1]
        preds = [json.loads(x) for x in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
        assert {p["predicted"] for p in preds} == {"unknown"} and {p["verdict"] for p in preds} == {"unknown"}


def test_per_proof_call_budget_stops_calls_and_the_verdict_says_unknown(tmp_path: Path, capsys: Any) -> None:
    f, _ = _files(tmp_path)
    with FakeOpenAI() as server:
        server.respond_with(lambda body: Reply.ok('{"substeps": []}'))
        rc = main(["localize", str(f), "--mode", "llm", *_common(server.base_url, tmp_path), "--max-calls", "2"])
        v = json.loads(capsys.readouterr().out)
        # the anchoring whole-proof judgment is asked first (unreadable here, so retried once): it spends the
        # budget's two calls, and no decomposition, review or synthesis call is made past it
        asked = [(r.get("response_format") or {}).get("json_schema", {}).get("name") for r in server.requests]
        assert server.calls == 2 and v["usage"]["calls"] == 2 and asked == ["judge", "judge"], asked
        assert any("call budget spent (2 of 2)" in n for n in v["audit"]["notes"])
        # the reviews were never asked; the proof's own false formula (12 + 1 = 14) still decides
        assert (v["verdict"], v["first_error_step"], v["basis"], rc) == ("error", 2, "checked", 0)


def test_run_budget_stops_before_the_next_item_and_resumes(tmp_path: Path, capsys: Any) -> None:
    _, data = _files(tmp_path)
    with FakeOpenAI() as server:
        server.respond_with(lambda body: Reply.ok('{"answer": "step 2", "reason": "12 + 1 is 13"}'))
        args = ["score", str(data), "--out", str(tmp_path / "run"), "--no-progress", "--bootstrap", "10",
                "--mode", "judge", *_common(server.base_url, tmp_path)]
        assert main([*args, "--max-run-calls", "2"]) == 0
        cap = capsys.readouterr()
        assert "run budget reached after 2 new item(s) (2 calls" in cap.err
        assert json.loads(cap.out)["n"] == 2 and server.calls == 2
        assert main(args) == 0  # the rest, resumed without a budget
        assert json.loads(capsys.readouterr().out)["n"] == 3 and server.calls == 3
