"""A scripted OpenAI-compatible HTTP server for tests (stdlib only, 127.0.0.1, a free port).

    with FakeOpenAI() as server:
        server.reply('{"answer": 4}')                 # one 200 chat.completion
        server.fail(500)                               # one HTTP error
        server.script([Reply.ok("hi", delay_s=0.2)])   # any list of replies
        server.respond_with(lambda body: Reply.ok("..."))  # computed replies (after the queue)
        client = server.client(structured="json_object_schema")
        ...
        server.requests        # JSON bodies received, in order
        server.headers         # their HTTP headers (names in lower case)
        server.max_in_flight   # most requests handled at the same time

``POST .../chat/completions`` takes the next scripted reply; when the queue is empty the
``respond_with`` function answers, and without one the server answers HTTP 500 with a
message saying the script ran out (so a test that sends more requests than it scripted
fails loudly). ``GET .../models`` lists the fake model.
"""

from __future__ import annotations

import json
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from typing_extensions import Self

FAKE_MODEL = "fake-model"


def completion_body(text: str | None, *, model: str = FAKE_MODEL, prompt_tokens: int | None = 10,
                    completion_tokens: int | None = 5, finish_reason: str | None = "stop") -> dict[str, Any]:
    """An OpenAI ``chat.completion`` JSON body whose one choice says ``text``.

    ``prompt_tokens=None`` (or ``completion_tokens=None``) leaves the ``usage`` object out.
    """
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}],
    }
    if prompt_tokens is not None and completion_tokens is not None:
        body["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                         "total_tokens": prompt_tokens + completion_tokens}
    return body


class _QuietServer(ThreadingHTTPServer):
    errors: list[str]

    def handle_error(self, request: object, client_address: object) -> None:
        self.errors.append(traceback.format_exc())


@dataclass(frozen=True)
class Reply:
    """One scripted HTTP answer: ``status``, a JSON ``body`` (or raw text), sent after ``delay_s``."""

    status: int = 200
    body: dict[str, Any] | str | bytes = field(default_factory=dict)
    delay_s: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()

    @classmethod
    def ok(cls, text: str | None, *, delay_s: float = 0.0, **usage: Any) -> Reply:
        """A 200 chat.completion saying ``text`` (keywords as in ``completion_body``)."""
        return cls(200, completion_body(text, **usage), delay_s)

    @classmethod
    def error(cls, status: int, message: str = "scripted failure", *, delay_s: float = 0.0) -> Reply:
        """An HTTP error with an OpenAI-style error body."""
        return cls(status, {"error": {"message": message, "type": "fake_error", "code": status}}, delay_s)


Responder = Callable[[dict[str, Any]], Reply]


class FakeOpenAI:
    """The fake server; a context manager (``start``/``stop`` also work)."""

    def __init__(self, model: str = FAKE_MODEL, *, api_key: str | None = None) -> None:
        self.model = model
        self.api_key = api_key
        """When set, a request whose ``Authorization`` is not ``Bearer <api_key>`` gets HTTP 401."""
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._queue: deque[Reply] = deque()
        self._responder: Responder | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        # connection errors on the server side (a client that hangs up mid-reply), kept here rather than
        # printed to the test's stderr, where tests assert on what the CLI under test prints
        self.server_errors: list[str] = []
        self._thread: threading.Thread | None = None

    # ---- scripting ----
    def script(self, replies: Iterable[Reply]) -> FakeOpenAI:
        """Queue ``replies``, answered in order."""
        with self._lock:
            self._queue.extend(replies)
        return self

    def reply(self, text: str | None, *, delay_s: float = 0.0, **usage: Any) -> FakeOpenAI:
        """Queue one 200 answer saying ``text`` (``prompt_tokens``, ``completion_tokens``,
        ``finish_reason``, ``model`` as in ``completion_body``)."""
        usage.setdefault("model", self.model)
        return self.script([Reply.ok(text, delay_s=delay_s, **usage)])

    def fail(self, status: int, message: str = "scripted failure", *, delay_s: float = 0.0) -> FakeOpenAI:
        """Queue one HTTP error."""
        return self.script([Reply.error(status, message, delay_s=delay_s)])

    def respond_with(self, responder: Responder | None) -> FakeOpenAI:
        """Answer with ``responder(request_body)`` whenever the queue is empty."""
        self._responder = responder
        return self

    @property
    def calls(self) -> int:
        """Chat requests received so far."""
        with self._lock:
            return len(self.requests)

    @property
    def pending(self) -> int:
        """Scripted replies not yet used."""
        with self._lock:
            return len(self._queue)

    # ---- lifecycle ----
    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        if self._httpd is None:
            raise RuntimeError("FakeOpenAI is not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def client(self, **kwargs: Any) -> Any:
        """An ``OpenAIClient`` pointed at this server (fast defaults: 5 s limit, no backoff)."""
        from faithsieve.llm.client import OpenAIClient

        kwargs.setdefault("timeout_s", 5.0)
        kwargs.setdefault("backoff_s", 0.0)
        kwargs.setdefault("api_key", "sk-test")
        return OpenAIClient(self.base_url, kwargs.pop("model", self.model), **kwargs)

    def start(self) -> Self:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _QuietServer(("127.0.0.1", 0), _make_handler(self))
        httpd.errors = self.server_errors
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- used by the handler ----
    def _next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            if self._queue:
                return self._queue.popleft()
        if self._responder is not None:
            return self._responder(body)
        return Reply.error(500, "fake server: no scripted reply left")

    def _done(self) -> None:
        with self._lock:
            self._in_flight -= 1


def _refusal(server: FakeOpenAI, authorization: str | None, body: object) -> tuple[int, dict[str, Any]] | None:
    """HTTP 401 for a wrong key (when the server requires one), 404 for a chat request naming
    another model (recorded as a request), else None."""
    if server.api_key is not None and authorization != f"Bearer {server.api_key}":
        return 401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                               "code": "invalid_api_key"}}
    if isinstance(body, dict) and body.get("model") not in (None, server.model):
        with server._lock:
            server.requests.append(body)
        return 404, {"error": {"message": f"The model `{body.get('model')}` does not exist",
                               "type": "invalid_request_error", "code": "model_not_found"}}
    return None


def _listing(server: FakeOpenAI, path: str) -> tuple[int, dict[str, Any]]:
    """The answer to ``GET path``: the model list, or 404."""
    if path.rstrip("/").endswith("/models"):
        return 200, {"object": "list", "data": [{"id": server.model, "object": "model", "owned_by": "fake"}]}
    return 404, {"error": {"message": f"no route {path}"}}


def _make_handler(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out in two writes

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: dict[str, Any] | str | bytes,
                  headers: Iterable[tuple[str, str]] = ()) -> None:
            data = body if isinstance(body, bytes) else (body if isinstance(body, str) else json.dumps(body)).encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (time limit) before the answer came

        def _refused(self, body: object = None) -> bool:
            refusal = _refusal(server, self.headers.get("Authorization"), body)
            if refusal is not None:
                self._send(*refusal)
            return refusal is not None

        def do_GET(self) -> None:
            if not self._refused():
                self._send(*_listing(server, self.path))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"_unparsable": raw.decode("utf-8", "replace")}
            if self._refused(body):
                return
            try:
                reply = server._next_reply(body, {k.lower(): v for k, v in self.headers.items()})
            except Exception as exc:  # noqa: BLE001 - a broken responder must not hang the client
                server._done()
                self._send(500, {"error": {"message": f"fake server responder failed: {exc!r}"}})
                return
            if reply.delay_s > 0:
                server._stopping.wait(reply.delay_s)
            # leave the in-flight count before answering, so a client that got its answer
            # and starts the next request is never counted twice
            server._done()
            self._send(reply.status, reply.body, reply.headers)

    return Handler
