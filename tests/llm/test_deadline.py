"""Issue 36: a call ends at its deadline however the endpoint sends (drip, never-ending answer), ``Retry-After``
is honoured within the call's budget, and the CLI ends such a proof ``unknown`` with exit 1."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from faithsieve.cli.commands import main
from faithsieve.llm.client import OpenAIClient, retry_wait
from faithsieve.llm.types import ChatMessage, ChatRequest, LLMError
from tests.llm.fakeserver import FAKE_MODEL, FakeOpenAI, Reply, completion_body


def request() -> ChatRequest:
    return ChatRequest(prompt_id="t", prompt_version="1", messages=(ChatMessage(role="user", content="2+2?"),))


class DripServer:
    """Answers ``GET /models`` at once; answers a chat request with a 200 whose body drips one byte every
    ``every_s`` seconds and never ends (``chunked``) or never reaches its announced length."""

    def __init__(self, chunked: bool, every_s: float = 0.05) -> None:
        self.chunked, self.every_s = chunked, every_s
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        try:
            head = conn.recv(65536).decode("latin-1")
            if head.startswith("GET"):
                body = json.dumps({"object": "list", "data": [{"id": FAKE_MODEL, "object": "model"}]}).encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
                return
            length = b"Transfer-Encoding: chunked" if self.chunked else b"Content-Length: 1000000"
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + length + b"\r\n\r\n")
            while not self.stop.is_set():
                conn.sendall(b"1\r\n \r\n" if self.chunked else b" ")
                time.sleep(self.every_s)
        except OSError:
            return
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()
        self.thread.join(2)


@pytest.fixture(params=[False, True], ids=["drip", "never-ending"])
def drip(request: Any) -> Iterator[DripServer]:
    server = DripServer(chunked=request.param)
    yield server
    server.close()


def test_a_dripping_or_endless_answer_is_cut_at_the_deadline(drip: DripServer) -> None:
    client = OpenAIClient(drip.base_url, FAKE_MODEL, timeout_s=0.8, max_retries=1, backoff_s=0.0)
    started = time.monotonic()
    with pytest.raises(LLMError, match="time limit|APITimeoutError"):
        client.complete(request())
    # two attempts of 0.8 s each; a per-read limit would never end (a byte arrives every 0.05 s)
    assert time.monotonic() - started < 5.0
    client.close()


def test_retry_after_is_honoured() -> None:
    with FakeOpenAI() as server:
        server.script([Reply(429, {"error": {"message": "slow down"}}, headers=(("Retry-After", "0.6"),)),
                       Reply.ok("in time")])
        started = time.monotonic()
        assert server.client(max_retries=1, backoff_s=0.0).complete(request()).text == "in time"
        assert time.monotonic() - started >= 0.6


def test_a_retry_after_past_the_calls_budget_fails_at_once() -> None:
    with FakeOpenAI() as server:
        server.script([Reply(429, {"error": {"message": "slow down"}}, headers=(("Retry-After", "3600"),))])
        started = time.monotonic()
        with pytest.raises(LLMError, match="asks to wait 3600"):
            server.client(max_retries=2, timeout_s=1.0).complete(request())
        assert time.monotonic() - started < 1.0 and server.calls == 1


def test_retry_wait_reads_seconds_and_dates() -> None:
    class Exc:
        def __init__(self, value: str | None) -> None:
            self.response = type("R", (), {"headers": {"retry-after": value} if value else {}})()

    assert retry_wait(Exc("2"), 0.5) == 2.0  # type: ignore[arg-type]
    assert retry_wait(Exc(None), 0.5) == 0.5  # type: ignore[arg-type]
    assert retry_wait(Exc("Wed, 21 Oct 2015 07:28:00 GMT"), 0.5) == 0.0  # type: ignore[arg-type]  # a past date
    assert retry_wait(Exc("soon"), 0.5) == 0.5  # type: ignore[arg-type]


def _proof(tmp_path: Path) -> Path:
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"problem": "Compute 12 + 1.", "steps": ["We have 12 + 1 = 13.", "So the answer is 13."]}))
    return f


@pytest.mark.slow  # the worker process's start under a loaded machine is part of the time
def test_localize_against_a_dripping_endpoint_ends_unknown(drip: DripServer, tmp_path: Path, capsys: Any) -> None:
    started = time.monotonic()
    rc = main(["localize", str(_proof(tmp_path)), "--mode", "judge", "--base-url", drip.base_url, "--model", FAKE_MODEL,
               "--no-cache", "--llm-timeout", "0.5"])
    took = time.monotonic() - started
    out = capsys.readouterr()
    v = json.loads(out.out)
    assert v["verdict"] == "unknown" and rc == 1, (v, out.err)
    assert took < 30, took  # 3 attempts of 0.5 s, the backoff between them (1 + 2 s), the worker's start


def test_a_failed_call_whose_fallback_worked_is_not_unknown(tmp_path: Path, capsys: Any) -> None:
    # the model's decomposition fails (its retries spent); every other call answers: the method falls back to the
    # rule-based tree, and the anchored answer stands (usage still counts the failure)
    def answer(body: dict[str, Any]) -> Reply:
        name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        if name == "decompose_tree":
            return Reply.error(503, "overloaded")
        if name in ("judge", "synthesis"):
            return Reply.ok(json.dumps({"answer": "correct", "reason": "12 + 1 = 13"}))
        return Reply(200, completion_body('{"reviews": []}'))

    with FakeOpenAI() as server:
        server.respond_with(answer)
        rc = main(["localize", str(_proof(tmp_path)), "--mode", "llm", "--base-url", server.base_url, "--model",
                   FAKE_MODEL, "--no-cache", "--llm-timeout", "5"])
    v = json.loads(capsys.readouterr().out)
    assert v["usage"]["failures"] >= 1
    assert (v["verdict"], v["basis"], rc) == ("correct", "judged", 0), v["reason"]


def test_an_endpoint_that_fails_the_anchor_ends_the_proof_at_once(tmp_path: Path, capsys: Any,
                                                                   monkeypatch: Any) -> None:
    monkeypatch.setenv("FAITHSIEVE_LLM_BACKOFF_S", "0")
    with FakeOpenAI() as server:
        server.respond_with(lambda body: Reply.error(503, "down"))
        rc = main(["localize", str(_proof(tmp_path)), "--mode", "llm", "--base-url", server.base_url, "--model",
                   FAKE_MODEL, "--no-cache"])
        chat = server.calls
    v = json.loads(capsys.readouterr().out)
    assert (v["verdict"], rc) == ("unknown", 1)
    assert chat == 3  # the anchor's three attempts; no stage waits out its own retries after it
