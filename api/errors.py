"""Errors of the HTTP service and the one function that turns any error into a response.

Every error body is ``{"error": {"code", "message", "detail"}}``. ``FaithSieveError``
subclasses carry their status; the service adds the few that only HTTP has and raises
(saturation, request head size, time limit, readiness, a failed worker); the middleware writes its
refusals (authentication, media type, body time limit) with ``error_json`` directly. Request
validation errors and Starlette's HTTP errors (404, 405, 413 from the body limit)
go through the same mapping, so a client sees one shape whatever failed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from faithsieve.core.errors import FaithSieveError

log = logging.getLogger(__name__)

_MAX_VALIDATION_ERRORS = 20


class ServiceError(FaithSieveError):
    """A FaithSieve error that also carries response headers."""

    def __init__(self, message: str, detail: object | None = None, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message, detail)
        self.headers = dict(headers or {})


class Saturated(ServiceError):
    """Every admission slot is taken; retry after ``Retry-After`` seconds."""

    code = "saturated"
    status = 429


class HeadersTooLarge(ServiceError):
    """The request head did not end within ``max_header_bytes`` (written by the connection guard,
    ``faithsieve.api.server``, which then closes the connection)."""

    code = "headers_too_large"
    status = 431


class RequestTimeout(ServiceError):
    """The request ran past the service's time limit; its worker was stopped."""

    code = "timeout"
    status = 504


class NotReady(ServiceError):
    """The worker pool is not up (starting or shutting down)."""

    code = "not_ready"
    status = 503


class WorkerFailed(ServiceError):
    """A worker raised an unexpected exception or died. Internal: never a client's doing."""

    code = "internal_error"
    status = 500


_HTTP_CODES = {
    400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
    406: "not_acceptable", 408: "body_timeout", 413: "input_too_large", 415: "unsupported_media_type",
    422: "invalid_input", 429: "saturated",
}


def error_payload(code: str, message: str, detail: object | None = None) -> dict[str, Any]:
    """The error body as a dict."""
    return {"error": {"code": code, "message": message, "detail": detail}}


def error_json(status: int, code: str, message: str, detail: object | None = None,
               headers: Mapping[str, str] | None = None) -> JSONResponse:
    """The error body as a response."""
    return JSONResponse(error_payload(code, message, detail), status_code=status, headers=dict(headers or {}))


_NAME = re.compile(r"[a-z_][a-z0-9_]{0,39}")


def _field(loc: Sequence[Any], body: Any = None) -> str:
    """A dotted path for an error location that never repeats the client's text: list indices and
    the service's own (lower-case identifier) field names are kept; any other part, such as an
    unknown key a client sent, becomes ``#N``, its position among the keys of that object
    (``#?`` when it cannot be found)."""
    parts: list[str] = []
    node = body
    for i, p in enumerate(loc):
        if i == 0 and p == "body":
            continue
        if isinstance(p, int):
            parts.append(str(p))
        elif isinstance(p, str) and _NAME.fullmatch(p) and p in _KNOWN_FIELDS:
            parts.append(p)
        else:
            keys = list(node) if isinstance(node, Mapping) else []
            parts.append(f"#{keys.index(p)}" if p in keys else "#?")
        try:
            node = node[p] if isinstance(node, (Mapping, list)) else None
        except (KeyError, IndexError, TypeError):
            node = None
    return ".".join(parts) or "body"


def _known_fields() -> frozenset[str]:
    from faithsieve.api import models

    names: set[str] = set()
    for obj in vars(models).values():
        fields = getattr(obj, "model_fields", None)
        if isinstance(fields, dict):
            names.update(fields)
    return frozenset(names)


_KNOWN_FIELDS: frozenset[str] = frozenset()


def validation_detail(errors: Sequence[Mapping[str, Any]], body: Any = None) -> list[dict[str, str]]:
    """Pydantic errors as ``{"field", "message", "type"}``. Neither the offending input nor a key the
    client made up is echoed: see ``_field``."""
    global _KNOWN_FIELDS
    if not _KNOWN_FIELDS:
        _KNOWN_FIELDS = _known_fields()
    return [{"field": _field(e.get("loc", ()), body), "message": _plain(str(e.get("msg", ""))),
             "type": str(e.get("type", ""))} for e in list(errors)[:_MAX_VALIDATION_ERRORS]]


def _plain(message: str) -> str:
    """A validator's message without pydantic's ``Value error, `` / ``Assertion failed, `` prefix."""
    for prefix in ("Value error, ", "Assertion failed, "):
        if message.startswith(prefix):
            return message[len(prefix):]
    return message


def item_sentence(index: int, first: Mapping[str, str]) -> str:
    """A batch item's validation error as one sentence naming the item and the field:
    ``item 3, field 'steps.1': Input should be a valid string`` (``item 3: give 'steps' ...`` when the
    error is about the item as a whole)."""
    field, message = first.get("field", ""), first.get("message", "invalid")
    if field in ("", "body"):
        return f"item {index}: {message}"
    return f"item {index}, field '{field}': {message}"


def response_for(exc: BaseException) -> JSONResponse:
    """The response for any exception the service can meet. The one mapping."""
    if isinstance(exc, FaithSieveError):
        status = exc.status if 400 <= exc.status <= 599 else 500
        headers = getattr(exc, "headers", None)
        if status >= 500 and not isinstance(exc, (RequestTimeout, NotReady)):
            log.error("internal error %s: %s", exc.code, exc.message)
        return error_json(status, exc.code, exc.message, exc.detail, headers)
    if isinstance(exc, RequestValidationError):
        errors = list(exc.errors())
        if any(e.get("type") == "json_invalid" for e in errors):
            ctx = errors[0].get("ctx") or {}
            return error_json(400, "malformed_json", f"the body is not valid JSON: {ctx.get('error', 'decode error')}",
                              {"position": errors[0].get("loc", (None, None))[-1]})
        detail = validation_detail(errors, getattr(exc, "body", None))
        first = detail[0] if detail else {"field": "body", "message": "invalid"}
        return error_json(422, "invalid_input", f"{first['field']}: {first['message']}", detail)
    if isinstance(exc, StarletteHTTPException):
        status = exc.status_code
        code = _HTTP_CODES.get(status, "http_error")
        message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
        if status == 400 and message == "There was an error parsing the body":
            code, message = "malformed_json", "the body could not be parsed as JSON (too deeply nested or not UTF-8)"
        if status >= 500:
            code = "internal_error"
        return error_json(status, code, message, None, exc.headers)
    log.exception("unexpected error", exc_info=exc)
    return error_json(500, "internal_error", "internal error; it has been logged")


async def handle(request: Request, exc: Exception) -> JSONResponse:
    """The exception handler registered for every error type."""
    return response_for(exc)
