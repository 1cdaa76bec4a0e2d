"""What ``--mode llm`` output says when a small model's answers were thin, and when the local model is busy
rather than unreachable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from faithsieve.cli import main
from faithsieve.cli.localize import said, thin
from faithsieve.core.settings import Settings
from faithsieve.doctor import check_llm
from faithsieve.scoring.run import llm_summary, unusable_notes
from tests.llm.fakeserver import FakeOpenAI, Reply


def test_thin_model_text_is_named_not_printed_as_dots() -> None:
    for text in ("", "   ", "...", "…", " . . ", "N/A", None):
        assert thin(text) and said(text, "claim") == "(model gave no claim)"
    assert said("12 + 1 is 13", "reason") == "12 + 1 is 13" and not thin("x = 2")


def test_unusable_reviews_are_counted_apart_from_unparsed() -> None:
    notes = ("review e3: answer unusable (no claim)", "scan: answer unusable (empty)", "window e1, e2")
    assert unusable_notes(notes) == 2
    rec = {"verdict": "unknown", "usage": {"calls": 3, "unparsed": 0}, "notes": list(notes), "time_ms": 5}
    summary = llm_summary([rec])
    assert summary is not None and summary["totals"]["unusable"] == 2 and summary["totals"]["unparsed"] == 0


@pytest.mark.parametrize("status", [429, 503])
def test_a_busy_model_is_busy_not_unreachable(tmp_path: Path, capsys: Any, status: int) -> None:
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"problem": "Compute 3 * 4.", "steps": ["3 * 4 = 12."]}))
    with FakeOpenAI() as server:
        server.respond_with(lambda body: Reply.error(status, "too many requests" if status == 429 else "overloaded"))
        rc = main(["localize", str(f), "--mode", "judge", "--base-url", server.base_url, "--model", "fake-model",
                   "--no-cache", "--llm-timeout", "5", "--structured", "json_object_schema"])
    cap = capsys.readouterr()
    v = json.loads(cap.out)
    assert rc == 1 and v["verdict"] == "unknown"  # never a pass
    assert "endpoint busy" in cap.err and "unreachable" not in cap.err
    assert any(f"HTTP {status}" in n and "busy" in n for n in v["audit"]["notes"])


def test_doctor_says_busy_on_503_and_on_a_read_timeout() -> None:
    settings = Settings(llm_base_url="http://model.local/v1", llm_model="m", mode="llm")
    busy = check_llm(settings, transport=httpx.MockTransport(lambda r: httpx.Response(503, json={})))
    assert busy.status == "fail" and "busy" in busy.summary

    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("no answer", request=request)

    late = check_llm(settings, transport=httpx.MockTransport(slow))
    assert "busy or slow" in late.summary and "unreachable" not in late.summary

    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    down = check_llm(settings, transport=httpx.MockTransport(refused))
    assert "unreachable" in down.summary
