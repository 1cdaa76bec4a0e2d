"""The service's error table and the errors it raises.

Every error the service answers has a stable ``code`` and one HTTP status; ``ERRORS`` is the one
table of them. A code raised as an exception takes its row from its class (``code``, ``status``);
the codes written without an exception (by the middleware, the exception handler, the worker
jobs) are rows of their own. Everything else reads the table: the exception handler
(``faithsieve.api.handler``) maps Starlette's HTTP errors with ``HTTP_CODES``, the middleware and
the jobs take a code's status from ``status_of``, the OpenAPI document describes each status with
``OPENAPI_STATUSES``, and a test holds docs/serve.md's error table to the rows marked ``listed``.

This module imports no web framework: the worker processes read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from faithsieve.core.errors import FaithSieveError, InputError, InputTooLarge

__all__ = ["CODES", "ERRORS", "HTTP_CODES", "HTTP_ERROR_CODE", "OPENAPI_STATUSES", "ClientGone", "ErrorCode",
           "Forbidden", "HeadersTooLarge", "NotFound", "NotReady", "RequestTimeout", "Saturated", "ServiceError",
           "WorkerFailed", "http_status", "status_of"]


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


class NotFound(ServiceError):
    """A workbench resource (asset, example, run, item, file) that does not exist."""

    code = "not_found"
    status = 404


class Forbidden(ServiceError):
    """A path outside the runs this server may show (the workbench's run browser)."""

    code = "forbidden"
    status = 403


class ClientGone(ServiceError):
    """The client disconnected; its work was cancelled and nobody reads this answer."""

    code = "client_closed_request"
    status = 499


@dataclass(frozen=True)
class ErrorCode:
    """One row of the error table."""

    code: str
    """The stable machine-readable name in the error body."""
    status: int
    """The HTTP status it answers."""
    meaning: str
    """When a client gets it, in one line."""
    listed: bool = True
    """Listed in docs/serve.md's error table (False: answered by the workbench only, or read by nobody)."""
    http: bool = False
    """The code of a plain HTTP error of this status (Starlette's 404, 405, the body limits' 413 and 408)."""
    openapi: str | None = None
    """The description of this status in the OpenAPI document (one code per documented status)."""

    @classmethod
    def of(cls, error: type[FaithSieveError], meaning: str, *, listed: bool = True, http: bool = False,
           openapi: str | None = None) -> ErrorCode:
        """The row of an error raised as an exception: its code and status are the class's."""
        return cls(error.code, error.status, meaning, listed=listed, http=http, openapi=openapi)


ERRORS: tuple[ErrorCode, ...] = (
    ErrorCode("malformed_json", 400, "The body is not valid JSON text.", openapi="Malformed JSON."),
    ErrorCode("bad_request", 400, "Both Content-Length and Transfer-Encoding (ambiguous framing).", http=True),
    ErrorCode("unauthorized", 401, "An API key is configured and the request lacks it.", http=True,
              openapi="Missing or wrong API key (only when the server has one)."),
    ErrorCode.of(Forbidden, "A run outside those this server may show (the workbench).", listed=False, http=True),
    ErrorCode.of(NotFound, "Unknown route, or a workbench resource that does not exist.", http=True),
    ErrorCode("method_not_allowed", 405, "The route does not take this method.", http=True),
    ErrorCode("not_acceptable", 406, "A plain HTTP 406 (no route answers it).", listed=False, http=True),
    ErrorCode("body_timeout", 408, "The body did not arrive within body_read_time_limit_s.", http=True,
              openapi="The body was not received in time."),
    ErrorCode.of(InputTooLarge, "Body, proof, step or batch over a size limit.", http=True,
                 openapi="Body, proof, step or batch over a size limit."),
    ErrorCode("unsupported_media_type", 415, "The body is not declared as JSON.", http=True,
              openapi="The body is not declared as JSON."),
    ErrorCode.of(InputError, "Wrong shape or type, or a value the server does not take.", http=True,
                 openapi="Invalid input (which field, why), or a resource limit."),
    ErrorCode("resource_limit", 422, "Checking exhausted the worker's memory limit or recursion depth."),
    ErrorCode.of(Saturated, "Every admission slot is taken; retry after Retry-After seconds.", http=True,
                 openapi="Saturated: retry after `Retry-After` seconds."),
    ErrorCode.of(HeadersTooLarge, "The request head did not end within max_header_bytes."),
    ErrorCode.of(ClientGone, "The client went away; its work was cancelled (nobody reads it).", listed=False),
    ErrorCode.of(WorkerFailed, "A bug: a worker that crashed or a job that raised; logged."),
    ErrorCode.of(NotReady, "The worker pool is not running (starting or stopping).",
                 openapi="Workers not ready (starting or stopping)."),
    ErrorCode.of(RequestTimeout, "The request ran past its time limit; the work was stopped.",
                 openapi="Time limit exceeded; the work was stopped."),
)
"""The service's error codes: every code it answers, once."""

CODES: dict[str, ErrorCode] = {row.code: row for row in ERRORS}
"""The rows by code."""

HTTP_CODES: dict[int, str] = {row.status: row.code for row in ERRORS if row.http}
"""The code of a plain HTTP error (Starlette's ``HTTPException``) by its status."""

HTTP_ERROR_CODE = "http_error"
"""The code of a plain HTTP error whose status has no row in ``HTTP_CODES`` (below 500)."""

OPENAPI_STATUSES: dict[int, str] = {row.status: row.openapi for row in sorted(ERRORS, key=lambda r: r.status)
                                    if row.openapi is not None}
"""The error statuses the API's routes document, with their descriptions, in status order."""


def status_of(code: str) -> int:
    """The HTTP status of an error code of the table (``KeyError`` for a code it does not have)."""
    return CODES[code].status


def http_status(error: FaithSieveError) -> int:
    """The status an error is answered with: its own when it is an HTTP error status, else 500."""
    return error.status if 400 <= error.status <= 599 else 500
