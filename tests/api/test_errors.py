"""The service's one error table (``faithsieve.api.errors.ERRORS``): every code once, every error class
the service raises in it with its status, no status/code pair written anywhere else, and the views
the others read (Starlette's codes, the OpenAPI descriptions) taken from it."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest
from faithsieve.api import errors
from faithsieve.api.app import create_app
from faithsieve.api.handler import response_for
from starlette.exceptions import HTTPException as StarletteHTTPException

from faithsieve.core import errors as core_errors
from faithsieve.core.errors import FaithSieveError

from .conftest import settings

API = Path(__file__).resolve().parents[2] / "api"


def _service_modules() -> list[str]:
    names = []
    for path in sorted(API.rglob("*.py")):
        parts = path.relative_to(API).with_suffix("").parts
        if parts[-1] == "__init__" or parts == ("gunicorn_worker",):  # gunicorn: the production extra
            continue
        names.append(".".join(("faithsieve.api", *parts)))
    return names


def _error_classes() -> set[type[FaithSieveError]]:
    found = set()
    for name in _service_modules():
        for obj in vars(importlib.import_module(name)).values():
            if inspect.isclass(obj) and issubclass(obj, FaithSieveError) and obj.__module__.startswith("faithsieve.api"):
                found.add(obj)
    return found - {errors.ServiceError}


def test_every_code_is_one_row() -> None:
    codes = [row.code for row in errors.ERRORS]
    assert len(codes) == len(set(codes)) == len(errors.CODES)
    assert all(re.fullmatch(r"[a-z_]+", c) for c in codes)
    assert all(400 <= row.status <= 599 for row in errors.ERRORS)


def test_every_error_class_of_the_service_is_a_row_with_its_status() -> None:
    classes = _error_classes()
    assert {c.__name__ for c in classes} >= {"Saturated", "NotReady", "RequestTimeout", "NotFound", "Forbidden",
                                             "ClientGone", "HeadersTooLarge", "WorkerFailed"}
    for cls in classes:
        assert cls.__module__ == "faithsieve.api.errors", f"{cls.__name__}: the service's errors live in one module"
        assert errors.status_of(cls.code) == cls.status, cls.__name__


@pytest.mark.parametrize("cls", [c for c in vars(core_errors).values()
                                 if inspect.isclass(c) and issubclass(c, FaithSieveError)])
def test_a_core_error_the_table_names_has_the_tables_status(cls: type[FaithSieveError]) -> None:
    if cls.code in errors.CODES:
        assert errors.status_of(cls.code) == cls.status


def test_no_status_and_code_are_written_outside_the_table() -> None:
    """Answers built from a status and a code take the code's status from the table."""
    for path in sorted(API.rglob("*.py")):
        if path.name == "errors.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert not re.search(r'error_json\(\s*\d{3}', text), path
        assert not re.search(r'JobResult\(status=[45]\d\d, error=', text), path
        assert not re.search(r'_item_error\([^,]+, \d{3},', text), path


def test_plain_http_errors_take_their_code_from_the_table() -> None:
    assert errors.HTTP_CODES == {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
                                 405: "method_not_allowed", 406: "not_acceptable", 408: "body_timeout",
                                 413: "input_too_large", 415: "unsupported_media_type", 422: "invalid_input",
                                 429: "saturated"}
    for status, code in errors.HTTP_CODES.items():
        body = response_for(StarletteHTTPException(status)).body
        assert f'"code":"{code}"'.encode() in body
    assert b'"code":"http_error"' in response_for(StarletteHTTPException(418)).body


def test_the_openapi_document_describes_the_statuses_of_the_table() -> None:
    doc = create_app(settings()).openapi()
    responses = doc["paths"]["/localize"]["post"]["responses"]
    documented = {int(s): r["description"] for s, r in responses.items() if s != "200"}
    assert documented == errors.OPENAPI_STATUSES
    assert list(documented) == sorted(documented)
    assert all(any(row.status == s for row in errors.ERRORS) for s in documented)
