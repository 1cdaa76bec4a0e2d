"""Running the app under uvicorn with connection limits that idle or trickling clients cannot exhaust.

uvicorn times out idle keep-alive connections, but not a connection whose request headers
never complete, and its ``limit_concurrency`` counts idle connections, so a few hundred
half-open sockets (slowloris) made every request, ``/healthz`` included, answer 503. The
protocol classes here add, on top of uvicorn's own (``h11`` or, with ``uvicorn[standard]``,
``httptools``):

* a **header-read timeout**: a connection gets ``header_read_timeout_s`` from its opening
  (or from the end of its previous response) to complete a request's headers; then it is closed;
* a **cap on unfinished connections** (open, no request in progress): past
  ``max_unfinished_connections`` the oldest of them is closed to make room (one that has had at
  least ``EVICTION_GRACE_S`` to send its headers), so a flood of idle sockets evicts itself while a
  real client, which sends its headers at once, is served;
* a **cap on all connections** (``max_connections``): a new connection past it evicts the oldest
  unfinished one, else the oldest whose request body arrives slower than ``min_body_rate_bps``
  (slow bodies: their headers are read, so they are not unfinished), or is closed if every
  connection has a request in progress at a fair rate;
* a **cap on request-head bytes** (``max_header_bytes``): a head that has not ended within that many
  bytes is answered 431 and the connection closed (without it ``httptools`` kept every header line
  of an endless head in memory).

Requests in progress are bounded by admission (``max_pending``), not by counting sockets, so
uvicorn's ``limit_concurrency`` is not used. ``serve`` runs one server process
(``faithsieve serve``); ``faithsieve.api.gunicorn_worker`` runs the same protocol under gunicorn.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

import uvicorn
from faithsieve.api.errors import HeadersTooLarge
from faithsieve.api.metrics import ServiceMetrics
from faithsieve.api.settings import ServiceSettings
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

KEEP_ALIVE_S = 5
"""Idle time allowed between two requests on one connection (uvicorn's ``timeout_keep_alive``)."""
EVICTION_GRACE_S = 0.5
"""An unfinished connection is never evicted before it has had this long to send its headers, so
a client that connects in the middle of a flood of new connections is still served."""


_HEAD_END = b"\r\n\r\n"


def _too_large_head(limit: int) -> bytes:
    """The 431 the guard writes itself (the app never sees the request): the service's error body."""
    body = json.dumps({"error": {"code": HeadersTooLarge.code, "message": f"the request head exceeds {limit} bytes",
                                 "detail": {"limit": limit}}}).encode()
    return (b"HTTP/1.1 %d Request Header Fields Too Large\r\ncontent-type: application/json\r\n"
            b"connection: close\r\ncontent-length: %d\r\n\r\n" % (HeadersTooLarge.status, len(body))) + body


class _Limits:
    """What the guarded protocol enforces (one instance per protocol class)."""

    def __init__(self, header_read_timeout_s: float, max_unfinished: int, max_connections: int,
                 metrics: ServiceMetrics | None, max_header_bytes: int = 65536, min_body_rate_bps: float = 1024.0) -> None:
        self.header_read_timeout_s = header_read_timeout_s
        self.max_unfinished = max_unfinished
        self.max_connections = max_connections
        self.metrics = metrics
        self.max_header_bytes = max_header_bytes
        self.min_body_rate_bps = min_body_rate_bps
        self.too_large_head = _too_large_head(max_header_bytes)

    def count(self, what: str) -> None:
        if self.metrics is not None:
            if what == "header":
                self.metrics.timeouts.inc("header")
            else:
                self.metrics.rejections.inc(what)


class GuardedProtocolMixin:
    """Header-read timeout and unfinished-connection cap for a uvicorn HTTP protocol class.

    Relies on what uvicorn's ``h11`` and ``httptools`` protocols share: ``self.cycle`` (a new
    object once a request's headers are complete), ``on_response_complete``, ``connections``
    (the server's set of open connections), ``transport`` and ``loop``."""

    limits: _Limits
    cycle: Any
    connections: set[Any]
    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop

    def __init__(self, config: Any, server_state: Any, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(config, server_state, app_state, _loop)  # type: ignore[call-arg]  # mixin: see connection_made
        unfinished = getattr(server_state, "faithsieve_unfinished", None)
        if unfinished is None:
            unfinished = {}  # insertion-ordered: the oldest unfinished connection first
            server_state.faithsieve_unfinished = unfinished
        self._unfinished: dict[GuardedProtocolMixin, float] = unfinished
        bodies = getattr(server_state, "faithsieve_bodies", None)
        if bodies is None:
            bodies = {}  # insertion-ordered: the oldest body-pending connection first
            server_state.faithsieve_bodies = bodies
        self._bodies: dict[GuardedProtocolMixin, list[float]] = bodies
        """Connections whose request body is still arriving: [headers done at, body bytes so far]."""
        self._header_timer: asyncio.TimerHandle | None = None
        self._head_bytes = 0
        self._head_tail = b""

    # -- bookkeeping -----------------------------------------------------------------------

    def _await_headers(self) -> None:
        self._head_bytes, self._head_tail = 0, b""
        self._bodies.pop(self, None)
        self._unfinished.pop(self, None)
        self._unfinished[self] = self.loop.time()
        if self._header_timer is not None:
            self._header_timer.cancel()
        self._header_timer = self.loop.call_later(self.limits.header_read_timeout_s, self._header_timeout)

    def _headers_done(self) -> None:
        self._unfinished.pop(self, None)
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        if self in self._unfinished:
            self._unfinished.pop(self, None)
            self.limits.count("header")
            self.transport.close()

    def _evict_oldest(self) -> bool:
        """Close the oldest unfinished connection other than this one, if it has been unfinished for
        at least ``EVICTION_GRACE_S``; False if there is none."""
        too_recent = self.loop.time() - EVICTION_GRACE_S
        for other, since in self._unfinished.items():
            if since > too_recent:
                break  # the rest are younger still (insertion order)
            if other is not self:
                other._headers_done()
                other.transport.close()
                self.limits.count("evicted")
                return True
        return self._evict_slow_body()

    def _evict_slow_body(self) -> bool:
        """Close the oldest connection whose body has arrived slower than ``min_body_rate_bps`` since its
        headers (after ``EVICTION_GRACE_S``); False if there is none."""
        now = self.loop.time()
        for other, (since, got) in self._bodies.items():
            age = now - since
            if age < EVICTION_GRACE_S:
                return False
            if other is not self and got < self.limits.min_body_rate_bps * age:
                self._bodies.pop(other, None)
                other.transport.close()
                self.limits.count("evicted_slow_body")
                return True
        return False

    def _head_overflows(self, data: bytes) -> bool:
        """The request head would pass ``max_header_bytes`` with ``data`` (counted to its end, if it ends)."""
        if self not in self._unfinished:
            return False
        seen = self._head_tail + data
        end = seen.find(_HEAD_END)
        size = self._head_bytes + (len(data) if end < 0 else end + len(_HEAD_END) - len(self._head_tail))
        self._head_bytes += len(data)
        self._head_tail = data[-3:]
        return size > self.limits.max_header_bytes

    def _track_body(self, data: bytes) -> None:
        cycle = self.cycle
        if cycle is not None and getattr(cycle, "more_body", False) and not getattr(cycle, "response_complete", True):
            entry = self._bodies.get(self)
            if entry is None:
                self._bodies[self] = [self.loop.time(), 0.0]
            else:
                entry[1] += len(data)
        else:
            self._bodies.pop(self, None)

    # -- protocol events -------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)  # type: ignore[misc]  # a mixin: uvicorn's protocol class defines it
        if len(self.connections) > self.limits.max_connections and not self._evict_oldest():
            self.limits.count("connections")
            transport.close()  # every connection has a request in progress: refuse this one
            return
        while len(self._unfinished) >= self.limits.max_unfinished and self._evict_oldest():
            pass
        self._await_headers()

    def data_received(self, data: bytes) -> None:
        if self._head_overflows(data):
            self._headers_done()
            self.limits.count("headers_too_large")
            self.transport.write(self.limits.too_large_head)
            self.transport.close()
            return
        before = self.cycle
        super().data_received(data)  # type: ignore[misc]  # mixin
        if self.cycle is not before and self.cycle is not None:
            self._headers_done()
        self._track_body(data)

    def on_response_complete(self) -> None:
        before = self.cycle
        super().on_response_complete()  # type: ignore[misc]  # mixin
        if self.transport.is_closing():
            self._headers_done()
        elif self.cycle is before or self.cycle is None or self.cycle.response_complete:
            self._await_headers()  # idle again: the next request's headers are on the clock
        else:
            self._headers_done()  # a pipelined request started at once

    def connection_lost(self, exc: Exception | None) -> None:
        self._headers_done()
        self._bodies.pop(self, None)
        super().connection_lost(exc)  # type: ignore[misc]  # mixin


def _base_protocols() -> dict[str, type]:
    bases: dict[str, type] = {"h11": H11Protocol}
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        bases["httptools"] = HttpToolsProtocol
    except ImportError:  # uvicorn without the [standard] extra
        pass
    return bases


def protocol_class(settings: ServiceSettings, metrics: ServiceMetrics | None = None, http: str = "auto") -> type:
    """A uvicorn HTTP protocol class with this service's connection limits. ``http``: ``h11``,
    ``httptools`` or ``auto`` (httptools when installed, as uvicorn does)."""
    bases = _base_protocols()
    name = ("httptools" if "httptools" in bases else "h11") if http == "auto" else http
    if name not in bases:
        raise ValueError(f"HTTP implementation {name!r} is not available (have: {sorted(bases)})")
    limits = _Limits(settings.header_read_timeout_s, settings.max_unfinished_connections,
                     settings.max_connections, metrics, settings.max_header_bytes, settings.min_body_rate_bps)
    return type(f"Guarded{bases[name].__name__}", (GuardedProtocolMixin, bases[name]), {"limits": limits})


def uvicorn_config(app: Any, settings: ServiceSettings, metrics: ServiceMetrics | None = None,
                   **overrides: Any) -> uvicorn.Config:
    """The uvicorn configuration ``faithsieve serve`` runs with (tests build live servers with it too)."""
    kwargs: dict[str, Any] = dict(host=settings.host, port=settings.port, http=protocol_class(settings, metrics),
                                  limit_concurrency=None, timeout_keep_alive=KEEP_ALIVE_S,
                                  # h11 keeps at most this much of an unfinished head (its own 16 KiB
                                  # default would answer 400 before the guard's 431)
                                  h11_max_incomplete_event_size=settings.max_header_bytes + 4096,
                                  timeout_graceful_shutdown=max(1, int(settings.shutdown_grace_s)),
                                  lifespan="on")
    kwargs.update(overrides)
    return uvicorn.Config(app, **kwargs)


def serve(settings: ServiceSettings, log_level: str = "info", access_log: bool = False,
          prepare: Callable[[Any, ServiceSettings], int] | None = None) -> int:
    """Build the app and run it in this process until SIGINT/SIGTERM. ``prepare(app, settings)``, when
    given, runs before the server starts (``faithsieve view`` opens its run there); a non-zero answer
    is returned at once and nothing is served."""
    from faithsieve.api.app import create_app

    app = create_app(settings)
    if prepare is not None and (rc := prepare(app, settings)):
        return rc
    config = uvicorn_config(app, settings, app.state.metrics, log_level=log_level, access_log=access_log)
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises the SIGINT it handled once it has shut down
        uvicorn.Server(config).run()
    return 0


def make_app() -> Any:
    """The app with settings from the environment (``FAITHSIEVE_*``): the factory gunicorn loads
    (``faithsieve.api.server:make_app()``)."""
    from faithsieve.api.app import create_app

    return create_app(ServiceSettings())
