"""Pure ASGI middleware: request metrics, and the guard in front of the routes.

The guard refuses, before any body byte is read, what can be refused from the headers
alone (wrong API key, body not declared JSON, declared length over the limit), and
then watches the body as it streams in: more bytes than the limit, or a client too
slow to send them, ends the request with 413 or 408. Responses it produces itself use
the service's one error shape.
"""

from __future__ import annotations

import asyncio
import hmac
import re
import time
import uuid
from collections.abc import Mapping

from faithsieve.api.handler import error_response
from faithsieve.api.metrics import ServiceMetrics
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

KNOWN_PATHS = frozenset({"/localize", "/localize/batch", "/healthz", "/readyz", "/version", "/limits", "/metrics",
                         "/docs", "/openapi.json", "/docs/oauth2-redirect", "/redoc"})


DRAIN_BYTES = 16 * 1_048_576
"""A body refused as too large is read and dropped up to this many bytes before the 413 is sent, so the
client, still sending, reads the answer instead of a connection reset (a larger one is cut off)."""


_DRAIN_IDLE_S = 0.5
"""The drain stops when no body byte came for this long."""


async def _drain(receive: Receive, budget: int, seconds: float) -> None:
    """Read and drop the rest of a request body: at most ``budget`` bytes, for at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while budget > 0:
        try:  # a client that sends nothing for a moment is waiting for the answer: give it now
            message = await asyncio.wait_for(receive(), min(_DRAIN_IDLE_S, max(0.0, deadline - time.monotonic())))
        except asyncio.TimeoutError:
            return
        if message["type"] != "http.request":
            return
        budget -= len(message.get("body", b""))
        if not message.get("more_body", False):
            return


_REQUEST_ID = re.compile(r"[A-Za-z0-9._:+=/-]{1,64}")
"""A client's ``X-Request-ID`` is echoed only when it is 1-64 of these characters; otherwise the
response carries a fresh one."""


def _route_label(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    if isinstance(path, str):
        return path
    p = scope.get("path", "")
    return p if p in KNOWN_PATHS else "unmatched"


class MetricsMiddleware:
    """Counts every HTTP request by route template, method and status, times it, and tags the
    response with an ``X-Request-ID`` (the client's, if it sent a short one)."""

    def __init__(self, app: ASGIApp, metrics: ServiceMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        status = 500
        given = Headers(scope=scope).get("x-request-id", "")
        request_id = given if _REQUEST_ID.fullmatch(given) else uuid.uuid4().hex

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", request_id.encode("ascii"))]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            route = _route_label(scope)
            method = scope.get("method", "")
            method = method if method in {"GET", "POST", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH"} else "other"
            self.metrics.requests.inc(route, method, str(status))
            self.metrics.latency.observe(time.perf_counter() - t0, route)


def _json_declared(content_type: str | None) -> bool:
    if not content_type:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


class GuardMiddleware:
    """API key, media type, body size and body time limits for the ``POST`` routes."""

    def __init__(self, app: ASGIApp, metrics: ServiceMetrics, body_limits: Mapping[str, int],
                 body_time_limit_s: float, api_key: str | None, protected: frozenset[str],
                 protected_prefixes: tuple[str, ...] = ()) -> None:
        self.app = app
        self.metrics = metrics
        self.body_limits = dict(body_limits)
        self.body_time_limit_s = body_time_limit_s
        self.api_key = api_key.encode("utf-8") if api_key else None
        self.protected = protected
        self.protected_prefixes = protected_prefixes
        """Paths equal to one of these or below it (``/web/runs``, ``/web/runs/...``) need the key too."""

    def _needs_key(self, path: str) -> bool:
        return path in self.protected or any(path == p or path.startswith(p + "/") for p in self.protected_prefixes)

    def _authorized(self, headers: Headers) -> bool:
        """Either credential, when present and not empty, may carry the key (an empty ``X-API-Key``
        does not hide a valid bearer token); every candidate is compared in constant time."""
        assert self.api_key is not None
        scheme, _, token = headers.get("authorization", "").partition(" ")
        candidates = [headers.get("x-api-key", "").strip(), token.strip() if scheme.lower() == "bearer" else ""]
        ok = False
        for given in candidates:
            if given:
                ok |= hmac.compare_digest(given.encode("utf-8", "replace"), self.api_key)
        return ok

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        headers = Headers(scope=scope)
        if "content-length" in headers and "transfer-encoding" in headers:
            # ambiguous framing (request smuggling): RFC 9112 lets a server refuse it, and we do
            self.metrics.rejections.inc("framing")
            response = error_response("bad_request", "send either Content-Length or Transfer-Encoding, not both",
                                      headers={"Connection": "close"})
            await response(scope, receive, send)
            return
        needs_key = self.api_key is not None and self._needs_key(path) and scope.get("method") != "OPTIONS"
        if needs_key and not self._authorized(headers):
            self.metrics.rejections.inc("unauthorized")
            response = error_response("unauthorized", "a valid API key is required (X-API-Key header or "
                                      "Authorization: Bearer)", headers={"WWW-Authenticate": "Bearer"})
            await response(scope, receive, send)
            return
        limit = self.body_limits.get(path)
        if limit is None or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        if not _json_declared(headers.get("content-type")):
            self.metrics.rejections.inc("media_type")
            response = error_response("unsupported_media_type", "send the body as JSON with Content-Type: "
                                      "application/json", {"expected": "application/json"})
            await response(scope, receive, send)
            return
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            self.metrics.rejections.inc("too_large")
            response = error_response("input_too_large", f"the body has {declared} bytes; the limit is {limit} "
                                      "bytes: send a smaller request (a batch can be split)", {"field": "body", "limit": limit})
            if "100-continue" not in headers.get("expect", "").lower():  # a client waiting for 100 sent nothing yet
                await _drain(receive, DRAIN_BYTES, self.body_time_limit_s)
            await response(scope, receive, send)
            return
        await self.app(scope, self._limited(receive, limit), send)

    def _limited(self, receive: Receive, limit: int) -> Receive:
        """``receive`` with a byte budget and a deadline for the body; later messages (the
        disconnect the routes wait for) pass through untouched."""
        received = 0
        done = False
        deadline = time.monotonic() + self.body_time_limit_s
        metrics = self.metrics

        async def wrapped() -> Message:
            nonlocal received, done
            if done:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                metrics.timeouts.inc("body")
                raise StarletteHTTPException(408, f"the body was not received within {self.body_time_limit_s:g} s") \
                    from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    metrics.rejections.inc("too_large")
                    if message.get("more_body", False):
                        await _drain(receive, DRAIN_BYTES, max(0.0, deadline - time.monotonic()))
                    done = True
                    raise StarletteHTTPException(413, f"the body exceeds the limit of {limit} bytes")
                if not message.get("more_body", False):
                    done = True
            else:
                done = True
            return message

        return wrapped
