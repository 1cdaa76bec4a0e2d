"""The one function that turns any error into a response, and the error body's shape.

Every error body is ``{"error": {"code", "message", "detail"}}``. ``FaithSieveError``
subclasses carry their code and status; the codes written without an exception take their status
from the error table (``faithsieve.api.errors``). Request validation errors and Starlette's HTTP
errors (404, 405, 413 from the body limit) go through the same mapping, so a client sees one
shape whatever failed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from faithsieve.api import models
from faithsieve.api.errors import (
    HTTP_CODES,
    HTTP_ERROR_CODE,
    NotReady,
    RequestTimeout,
    http_status,
    status_of,
)
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from faithsieve.core.errors import FaithSieveError

__all__ = ["error_json", "error_payload", "error_response", "handle", "item_sentence", "response_for",
           "validation_detail"]

log = logging.getLogger(__name__)

_MAX_VALIDATION_ERRORS = 20


def error_payload(code: str, message: str, detail: object | None = None) -> dict[str, Any]:
    """The error body as a dict."""
    return {"error": {"code": code, "message": message, "detail": detail}}


def error_json(status: int, code: str, message: str, detail: object | None = None,
               headers: Mapping[str, str] | None = None) -> JSONResponse:
    """The error body as a response."""
    return JSONResponse(error_payload(code, message, detail), status_code=status, headers=dict(headers or {}))


def error_response(code: str, message: str, detail: object | None = None,
                   headers: Mapping[str, str] | None = None) -> JSONResponse:
    """The error body of a code of the error table, with the table's status."""
    return error_json(status_of(code), code, message, detail, headers)


_NAME = re.compile(r"[a-z_][a-z0-9_]{0,39}")


def _known_fields() -> frozenset[str]:
    names: set[str] = set()
    for obj in vars(models).values():
        fields = getattr(obj, "model_fields", None)
        if isinstance(fields, dict):
            names.update(fields)
    return frozenset(names)


_KNOWN_FIELDS = _known_fields()
"""The field names of the service's request and response models (kept in error paths)."""


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


def validation_detail(errors: Sequence[Mapping[str, Any]], body: Any = None) -> list[dict[str, str]]:
    """Pydantic errors as ``{"field", "message", "type"}``. Neither the offending input nor a key the
    client made up is echoed: see ``_field``."""
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
        status = http_status(exc)
        headers = getattr(exc, "headers", None)
        if status >= 500 and not isinstance(exc, (RequestTimeout, NotReady)):
            log.error("internal error %s: %s", exc.code, exc.message)
        return error_json(status, exc.code, exc.message, exc.detail, headers)
    if isinstance(exc, RequestValidationError):
        errors = list(exc.errors())
        if any(e.get("type") == "json_invalid" for e in errors):
            ctx = errors[0].get("ctx") or {}
            return error_response("malformed_json", f"the body is not valid JSON: {ctx.get('error', 'decode error')}",
                                  {"position": errors[0].get("loc", (None, None))[-1]})
        detail = validation_detail(errors, getattr(exc, "body", None))
        first = detail[0] if detail else {"field": "body", "message": "invalid"}
        return error_response("invalid_input", f"{first['field']}: {first['message']}", detail)
    if isinstance(exc, StarletteHTTPException):
        status = exc.status_code
        code = HTTP_CODES.get(status, HTTP_ERROR_CODE)
        message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
        if status == 400 and message == "There was an error parsing the body":
            code, message = "malformed_json", "the body could not be parsed as JSON (too deeply nested or not UTF-8)"
        if status >= 500:
            code = "internal_error"
        return error_json(status, code, message, None, exc.headers)
    log.exception("unexpected error", exc_info=exc)
    return error_response("internal_error", "internal error; it has been logged")


async def handle(request: Request, exc: Exception) -> JSONResponse:
    """The exception handler registered for every error type."""
    return response_for(exc)
