"""What runs inside a worker process: the pipeline on one input, answered as a picklable value.

A job never raises for anything the input can cause: pipeline errors come back as a
``JobResult`` with the status the service should answer, and the verdict comes back
already serialised, so the event loop only forwards bytes. An exception leaving a job
means the worker itself broke.
"""

from __future__ import annotations

import json
import logging
import os
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from faithsieve.api.errors import http_status, status_of

from faithsieve.core.errors import FaithSieveError
from faithsieve.core.settings import Settings
from faithsieve.runtime.lazy import freeze_after_import
from faithsieve.warmup import OFFLINE_MODULES

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobError:
    """Why a job answered no verdict: the service's error body (``{"code", "message", "detail"}``)."""

    code: str
    message: str
    detail: Any = None
    """JSON-safe (a string for what JSON cannot hold)."""


@dataclass(frozen=True)
class JobResult:
    """The outcome of one job, sent back to the event loop."""

    status: int
    """HTTP status to answer: 200 with a verdict, else the error's status."""
    body: bytes = b""
    """The verdict as JSON (status 200), headline fields first."""
    error: JobError | None = None
    """Set when ``status`` is not 200."""
    verdict: str | None = None
    """``correct`` or ``error`` (for metrics)."""
    evidence: dict[str, int] = field(default_factory=dict)
    """Evidence records per status (for metrics)."""
    seconds: float = 0.0
    """Time spent in the worker."""


def _jsonable(obj: object) -> Any:
    return json.loads(json.dumps(obj, default=str)) if obj is not None else None


def _error(status: int, code: str, message: str, detail: object | None, t0: float) -> JobResult:
    return JobResult(status=status, error=JobError(code, message, _jsonable(detail)),
                     seconds=time.perf_counter() - t0)


def failed(code: str, message: str, t0: float, detail: object | None = None) -> JobResult:
    """A job that failed with a code of the service's error table (its status is the table's), started at ``t0``."""
    return _error(status_of(code), code, message, detail, t0)


def raised(exc: FaithSieveError, t0: float) -> JobResult:
    """A job that failed with a FaithSieve error: its code, message and detail, answered with its status."""
    return _error(http_status(exc), exc.code, exc.message, exc.detail, t0)


def localize_job(data: dict[str, Any], settings: Settings) -> JobResult:
    """Split and check one proof (``faithsieve.split.proof_from_input`` then ``pipeline.localize``)."""
    from faithsieve.pipeline import localize
    from faithsieve.split import proof_from_input
    from faithsieve.verdict import verdict_json

    t0 = time.perf_counter()
    try:
        proof = proof_from_input(data, settings)
        verdict = localize(proof, settings)
        doc = verdict_json(verdict)
        try:
            body = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: keep them as JSON escapes
            body = json.dumps(doc, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    except FaithSieveError as exc:
        return raised(exc, t0)
    except MemoryError:
        return failed("resource_limit", "checking this proof exceeded the worker's memory limit", t0)
    except RecursionError:
        return failed("resource_limit", "this proof is nested too deeply to check", t0)
    except Exception as exc:  # noqa: BLE001 (isolation boundary: a pipeline bug answers 500, the worker stays)
        log.error("pipeline failed on an input: %s", "".join(traceback.format_exception(exc)))
        return failed("internal_error", f"the pipeline failed on this input ({type(exc).__name__}); it has "
                      "been logged", t0)
    counts = Counter(ev["status"] for step in doc["steps"] for ev in step["evidence"])
    return JobResult(status=200, body=body, verdict=doc["verdict"], evidence=dict(counts),
                     seconds=time.perf_counter() - t0)


def warm() -> int:
    """Import the pipeline and run it once on a tiny proof; return this worker's pid."""
    localize_job({"problem": "Compute 2 + 3.", "steps": ["2 + 3 = 5", "x = 2 so x^2 = 4"]}, Settings.model_construct())
    freeze_after_import(OFFLINE_MODULES)  # long-lived: full collections need not rescan what is imported and warm
    return os.getpid()


def sleep_job(data: dict[str, Any], settings: Settings) -> JobResult:
    """Diagnostic job: sleep for the number of seconds given as the ``problem`` text, then answer a
    fixed verdict-shaped body.

    Not reachable over HTTP; ``create_app(settings, job=sleep_job)`` uses it to exercise time
    limits, saturation and cancellation independently of the pipeline's speed."""
    t0 = time.perf_counter()
    try:
        seconds = float(data.get("problem") or 0.0)
    except ValueError:
        seconds = 0.0
    time.sleep(seconds)
    body = json.dumps({"verdict": "correct", "first_error_step": None, "reason": None, "pid": os.getpid()})
    return JobResult(status=200, body=body.encode(), verdict="correct", seconds=time.perf_counter() - t0)
