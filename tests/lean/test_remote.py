"""KiminaBackend against a stdlib HTTP server answering in the Kimina Lean Server's shapes.

Three server generations are imitated: ``list`` (``POST /api/check`` with ``snippets`` ->
``{"results": [...]}``), ``single`` (newest: ``/api/check`` takes one ``snippet`` and answers one
result; the list form gets a 422) and ``verify`` (oldest: only ``POST /verify`` with ``codes``,
no ``/health``).
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from faithsieve.lean import remote
from faithsieve.lean.backend import LeanBackend, LeanUnavailable
from faithsieve.lean.factory import build_backend
from faithsieve.lean.remote import KiminaBackend, classify_item

from faithsieve.core.settings import Settings

SECRET = "kimina-secret-0123456789"

VALID = {"env": 0}
SORRY = {"sorries": [{"proofState": 0, "pos": {"line": 1, "column": 26}, "endPos": {"line": 1, "column": 31},
                      "goal": "⊢ 2 + 2 = 4"}],
         "messages": [{"severity": "warning", "pos": {"line": 1, "column": 8}, "endPos": {"line": 1, "column": 9},
                       "data": "declaration uses 'sorry'"}], "env": 0}
ERROR = {"messages": [{"severity": "error", "pos": {"line": 1, "column": 25}, "endPos": {"line": 1, "column": 33},
                       "data": "linarith failed to find a contradiction"}], "env": 0}
VERSION = {"messages": [{"severity": "info", "pos": {"line": 1, "column": 0}, "endPos": {"line": 1, "column": 5},
                         "data": '"4.19.0"'}], "env": 0}


def answer_for(code: str) -> dict[str, Any]:
    """One result body (without id) for ``code``, in the documented shape."""
    if "TIMEOUT" in code:
        return {"time": 1.0, "error": "Lean REPL command timed out in 1 seconds"}
    if "REPLMSG" in code:
        return {"time": 0.1, "response": {"message": "Lean error:\nunknown tactic"}}
    if "SERVERERR" in code:
        return {"time": 0.1, "error": "REPL process exited"}
    if "Lean.versionString" in code:
        return {"time": 0.2, "response": VERSION}
    if "sorry" in code:
        return {"time": 0.3, "response": SORRY}
    if "= 5" in code:
        return {"time": 0.3, "response": ERROR}
    return {"time": 0.2, "response": VALID}


class _QuietServer(ThreadingHTTPServer):
    """The fake server: a client that gave up (the timeout tests do so on purpose) is not an error.
    socketserver would print its broken pipe to stderr from a handler thread, whenever that thread
    finishes, into whichever later test happens to be capturing stderr."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


class _KiminaHandler(BaseHTTPRequestHandler):
    """The fake server's routes; ``fake`` (set on a subclass per server) records and configures."""

    fake: FakeKimina

    def log_message(self, *a: Any) -> None:
        pass

    def reply(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode() if not isinstance(body, bytes) else body
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        fake = self.fake
        fake.requests.append(("GET", self.path, dict(self.headers), None))
        if self.path == "/health" and fake.variant != "verify":
            self.reply(200, {"status": "ok"})
        elif self.path == "/api/openapi.json":
            self.reply(200, {"openapi": "3.1.0", "info": {"title": "Lean 4 Proof-Check API", "version": "2.0.0"}})
        else:
            self.reply(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        fake = self.fake
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        fake.requests.append(("POST", self.path, dict(self.headers), body))
        if fake.api_key is not None and self.headers.get("Authorization") != f"Bearer {fake.api_key}":
            self.reply(401, {"detail": "Invalid API key"})
            return
        snippets = body.get("snippets") or ([body["snippet"]] if "snippet" in body else [])
        code = snippets[0]["code"] if snippets else ""
        if self.fault(code):
            return
        if fake.variant == "verify":
            self.verify(body)
        elif self.path != "/api/check":
            self.reply(404, {"detail": "Not Found"})
        elif fake.variant == "single":
            if "snippet" not in body:
                self.reply(422, {"detail": [{"type": "missing", "loc": ["body", "snippet"]}]})
                return
            self.reply(200, {"id": body["snippet"]["id"], **answer_for(code)})
        else:
            self.reply(200, {"results": [{"id": s["id"], **answer_for(s["code"])} for s in snippets]})

    def fault(self, code: str) -> bool:
        """The failures a snippet asks for (slow, crash, busy, not JSON); whether one was answered."""
        if "SLOW" in code:
            time.sleep(3)
        if "HTTP500" in code:
            self.reply(500, {"detail": f"crashed; auth was {self.headers.get('Authorization')}"})
            return True
        if "BUSY" in code:
            self.reply(429, {"detail": "No available REPLs"})
            return True
        if "NOTJSON" in code:
            self.reply(200, b"<html>proxy error</html>")
            return True
        return False

    def verify(self, body: Any) -> None:
        """The ``/verify`` route of the older servers."""
        if self.path != "/verify":
            self.reply(404, {"detail": "Not Found"})
            return
        c = body["codes"][0]
        res = answer_for(c["proof"])
        out = {"custom_id": c["custom_id"], "error": res.get("error")}
        if "response" in res:
            out["response"] = {**res["response"], "time": res["time"]}
        self.reply(200, {"results": [out]})


class FakeKimina:
    def __init__(self, variant: str = "list", api_key: str | None = None) -> None:
        self.variant = variant
        self.api_key = api_key
        self.requests: list[tuple[str, str, dict[str, str], Any]] = []
        handler = type("Handler", (_KiminaHandler,), {"fake": self})

        self.server = _QuietServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def posts(self) -> list[tuple[str, Any]]:
        return [(path, body) for method, path, _, body in self.requests if method == "POST"]


@pytest.fixture
def server() -> Iterator[FakeKimina]:
    s = FakeKimina()
    yield s
    s.close()


def backend(url: str, **kw: Any) -> KiminaBackend:
    return KiminaBackend(Settings(lean_backend="remote", lean_server_url=url, lean_timeout_s=5.0, **kw))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(("item", "status"), [
    ({"id": "a", "time": 0.2, "response": VALID}, "valid"),
    ({"id": "a", "time": 0.2, "response": SORRY}, "sorry"),
    ({"id": "a", "time": 0.2, "response": ERROR}, "lean_error"),
    ({"id": "a", "time": 1.0, "error": "Lean REPL command timed out in 1 seconds"}, "timeout"),
    ({"id": "a", "time": 1.0, "error": "Lean REPL header command timed out in 60 seconds"}, "timeout"),
    ({"id": "a", "error": "REPL process exited"}, "repl_error"),
    ({"id": "a", "response": {"message": "unknown environment."}}, "repl_error"),
    ({"custom_id": "a", "error": None, "response": {**SORRY, "time": 0.3}}, "sorry"),
    ({"id": "a"}, "repl_error"),
    ("nonsense", "repl_error"),
])
def test_classify_recorded_items(item: Any, status: str) -> None:
    assert classify_item(item).status == status


@pytest.mark.parametrize("variant", ["list", "single", "verify"])
def test_checks_on_every_server_generation(variant: str) -> None:
    srv = FakeKimina(variant)
    try:
        b = backend(srv.url)
        assert isinstance(b, LeanBackend)
        assert b.available() == (True, "")
        assert b.check("theorem t : 2 + 2 = 4 := by norm_num").status == "valid"
        s = b.check("theorem t : 2 + 2 = 4 := by sorry")
        assert s.status == "sorry" and s.goals == ("⊢ 2 + 2 = 4",) and s.backend == "kimina"
        e = b.check("theorem t : 2 + 2 = 5 := by linarith")
        assert e.status == "lean_error" and e.errors[0].line == 1
        assert b.check("TIMEOUT").status == "timeout"
        assert b.check("SERVERERR").status == "repl_error"
        assert b.check("REPLMSG").status == "repl_error"
        b.close()
    finally:
        srv.close()
    paths = [p for p, _ in srv.posts()]
    if variant == "list":
        assert set(paths) == {"/api/check"} and all("snippets" in body for _, body in srv.posts())
    elif variant == "single":  # one 422, then the single form remembered
        bodies = [body for _, body in srv.posts()]
        assert "snippets" in bodies[0] and all("snippet" in body for body in bodies[1:])
        assert sum("snippets" in body for body in bodies) == 1
    else:
        assert paths.count("/api/check") == 1  # the health fallback's trivial check found /verify, remembered
        assert paths[-1] == "/verify"


def test_request_shape_and_timeout(server: FakeKimina) -> None:
    backend(server.url).check("theorem t : True := trivial", timeout_s=12.3)
    _, body = server.posts()[0]
    assert body["timeout"] == 13 and body["debug"] is False and body["reuse"] is True
    assert len(body["snippets"]) == 1 and body["snippets"][0]["code"] == "theorem t : True := trivial"


def test_api_key_is_sent_and_never_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_LEAN_KEY", SECRET)
    srv = FakeKimina(api_key=SECRET)
    try:
        b = backend(srv.url, lean_server_api_key_env="MY_LEAN_KEY")
        assert b.check("theorem t : True := trivial").status == "valid"
        leaked = b.check("HTTP500")
        assert leaked.status == "repl_error" and "HTTP 500" in leaked.detail
        assert SECRET not in leaked.detail and "***" in leaked.detail
        assert SECRET not in repr(b)
        monkeypatch.setenv("MY_LEAN_KEY", "wrong-key-123")
        refused = backend(srv.url, lean_server_api_key_env="MY_LEAN_KEY").check("theorem t : True := trivial")
        assert refused.status == "repl_error" and "401" in refused.detail and "$MY_LEAN_KEY" in refused.detail
        assert "wrong-key-123" not in refused.detail
    finally:
        srv.close()
    headers = srv.requests[0][2]
    assert headers["Authorization"] == f"Bearer {SECRET}" and headers["X-Auth-Token"] == SECRET


def test_server_trouble_is_a_value(server: FakeKimina) -> None:
    b = backend(server.url)
    busy = b.check("BUSY")
    assert busy.status == "repl_error" and "429" in busy.detail
    html = b.check("NOTJSON")
    assert html.status == "repl_error" and "non-JSON" in html.detail


def test_slow_server_is_a_timeout_not_a_hang(server: FakeKimina, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(remote, "CLIENT_MARGIN_S", 0.2)
    started = time.monotonic()
    res = backend(server.url).check("SLOW", timeout_s=0.4)
    assert res.status == "timeout" and "within" in res.detail
    assert time.monotonic() - started < 2.5


def test_unreachable_server_fails_fast() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    b = backend(url)
    started = time.monotonic()
    ok, why = b.available()
    res = b.check("theorem t : True := trivial")
    assert time.monotonic() - started < 5.0
    assert not ok and "unreachable" in why and url in why
    assert res.status == "repl_error" and "cannot reach" in res.detail
    assert b.versions() == {"lean": "unknown", "mathlib": "unknown"}
    with pytest.raises(LeanUnavailable) as info:
        build_backend(Settings(lean_backend="remote", lean_server_url=url, lean_cache_path=""))
    assert "unreachable" in info.value.message


def test_no_url_is_unavailable() -> None:
    b = KiminaBackend(Settings(lean_backend="remote"))
    ok, why = b.available()
    assert not ok and "FAITHSIEVE_LEAN_SERVER_URL" in why
    with pytest.raises(LeanUnavailable):
        b.check("theorem t : True := trivial")


def test_versions_are_asked_once(server: FakeKimina) -> None:
    b = backend(server.url)
    assert b.versions() == {"lean": "v4.19.0", "mathlib": "unknown", "server": "kimina 2.0.0"}
    assert b.versions()["lean"] == "v4.19.0"
    assert [body["snippets"][0]["code"] for _, body in server.posts()] == ["#eval Lean.versionString"]


def test_credentials_in_the_url_are_not_shown() -> None:
    b = backend(f"http://user:pw-secret@127.0.0.1:{free_port()}")
    _, why = b.available()
    res = b.check("x")
    assert "pw-secret" not in why and "pw-secret" not in res.detail and "pw-secret" not in repr(b)


def test_the_first_snippet_with_an_import_header_gets_the_import_limit(server: FakeKimina) -> None:
    from faithsieve.lean.local import IMPORT_TIMEOUT_S

    b = backend(server.url)
    for name in ("a", "b", "c"):
        assert b.check(f"import Mathlib\n\ntheorem {name} : 2 + 2 = 4 := by norm_num").status == "valid"
    assert b.check("theorem d : 2 + 2 = 4 := by norm_num").status == "valid"
    b.close()
    limits = [body["timeout"] for _, body in server.posts()]
    assert limits == [int(IMPORT_TIMEOUT_S), 5, 5, 5]  # the server imports Mathlib once, on the first
