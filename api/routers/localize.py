"""``POST /localize`` and ``POST /localize/batch``: validate, look in the cache, admit, run in the pool, count, answer."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from faithsieve.api.admission import Lane
from faithsieve.api.cache import cache_key
from faithsieve.api.errors import ServiceError
from faithsieve.api.handler import item_sentence, validation_detail
from faithsieve.api.metrics import ServiceMetrics
from faithsieve.api.models import BatchRequest, BatchResponse, LocalizeRequest
from faithsieve.api.schema import ERROR_RESPONSES
from faithsieve.api.service import (
    Service,
    ServiceDep,
    admission,
    effective_settings,
    job_error,
    lane_for,
    run_admitted,
    until_disconnected,
)
from faithsieve.api.worker import JobError, JobResult
from fastapi import APIRouter, Request
from pydantic import ValidationError
from starlette.responses import Response

from faithsieve.core.errors import FaithSieveError, InputError, InputTooLarge
from faithsieve.core.settings import Settings
from faithsieve.verdict import Verdict

__all__ = ["route_localize", "route_localize_batch", "router"]

_JSON = "application/json"

router = APIRouter()
"""The localize routes; ``create_app`` documents that they need the API key when the server has one."""


def _record(metrics: ServiceMetrics, result: JobResult) -> None:
    if result.status == 200 and result.verdict:
        metrics.proofs.inc(result.verdict)
        for status, n in result.evidence.items():
            metrics.evidence.inc(status, amount=n)
    else:
        metrics.proofs.inc(result.error.code if result.error is not None else "error")
    metrics.check_seconds.observe(result.seconds)


def _lookup(service: Service, data: dict[str, Any], settings: Settings, options: Any) -> tuple[str, Any]:
    """The cache step both routes share: the cache key (empty when the cache is off for this request)
    and the cached ``(body, verdict, evidence)`` or None, counted in the metrics."""
    if not (service.cache.enabled and (options is None or options.use_cache)):
        return "", None
    key = cache_key(data, settings)
    hit = service.cache.get(key)
    service.metrics.cache.inc("hit" if hit else "miss")
    if hit is not None:
        service.metrics.proofs.inc(hit[1])
    return key, hit


def _settle(service: Service, key: str, result: JobResult) -> None:
    """The step after a run both routes share: count the job, keep a verdict in the cache."""
    _record(service.metrics, result)
    if key and result.status == 200 and result.verdict:
        service.cache.put(key, result.body, result.verdict, result.evidence)


def _verdict_response(body: bytes, cache: str) -> Response:
    return Response(content=body, media_type=_JSON, headers={"X-FaithSieve-Cache": cache})


@router.post("/localize", responses={200: {"model": Verdict, "description": "The verdict."}, **ERROR_RESPONSES},
             tags=["localize"], summary="Localize the first error of one proof")
async def route_localize(body: LocalizeRequest, request: Request, service: ServiceDep) -> Response:
    """Localize the first error of one proof.

    Answers the verdict (``correct`` or ``error``), ``first_error_step`` (1-based, null when
    correct), per-step evidence with source spans, coverage, timings and backend versions."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + service.settings.request_time_limit_s
    settings = effective_settings(service.pipeline, body.options)
    data = body.pipeline_input()
    key, hit = _lookup(service, data, settings, body.options)
    if hit is not None:
        return _verdict_response(hit[0], "hit")
    result = await run_admitted(request, service, data, settings, deadline)
    _settle(service, key, result)
    if result.status != 200:
        raise job_error(result)
    return _verdict_response(result.body, "miss" if key else "off")


def _item_error(index: int, status: int, code: str, message: str, detail: object = None) -> bytes:
    doc = {"index": index, "status": status, "result": None,
           "error": {"code": code, "message": message, "detail": detail}}
    return json.dumps(doc, ensure_ascii=False, default=str).encode("utf-8")


def _item_ok(index: int, body: bytes) -> bytes:
    return b'{"index":%d,"status":200,"result":%s,"error":null}' % (index, body)


@router.post("/localize/batch", responses={200: {"model": BatchResponse, "description": "Results in order."},
                                           **ERROR_RESPONSES}, tags=["localize"], summary="Localize many proofs")
async def route_localize_batch(body: BatchRequest, request: Request,
                               service: ServiceDep) -> Response:
    """Localize many proofs. Results come in request order; an item that is malformed, too
    large or too slow gets its own error entry (with the status ``POST /localize`` would give)
    and does not fail the others."""
    loop = asyncio.get_running_loop()
    settings_ = service.settings
    n = len(body.items)
    if n > settings_.batch_limit:
        raise InputTooLarge(f"the batch has {n} items; the limit is {settings_.batch_limit}",
                            {"field": "items", "limit": settings_.batch_limit})
    if n == 0:
        raise InputError("'items' is empty", {"field": "items"})
    deadline = loop.time() + settings_.batch_time_limit_s
    parts: list[bytes | None] = [None] * n
    todo: list[tuple[int, dict[str, Any], Settings, str]] = []
    counts = {"correct": 0, "error": 0, "failed": 0}
    for i, raw in enumerate(body.items):
        try:
            item = LocalizeRequest.model_validate(raw)
            options = item.options if item.options is not None else body.options
            settings = effective_settings(service.pipeline, options)
        except ValidationError as exc:
            detail = validation_detail(exc.errors(), raw)
            first = detail[0] if detail else {"field": "", "message": "invalid"}
            parts[i] = _item_error(i, InputError.status, InputError.code, item_sentence(i, first), detail)
            counts["failed"] += 1
            service.metrics.proofs.inc(InputError.code)
            continue
        except FaithSieveError as exc:
            parts[i] = _item_error(i, exc.status, exc.code, exc.message, exc.detail)
            counts["failed"] += 1
            service.metrics.proofs.inc(exc.code)
            continue
        data = item.pipeline_input()
        key, hit = _lookup(service, data, settings, options)
        if hit is not None:
            parts[i] = _item_ok(i, hit[0])
            counts[hit[1]] = counts.get(hit[1], 0) + 1
            continue
        todo.append((i, data, settings, key))

    lanes = await asyncio.to_thread(lambda: [lane_for(service, t[1]) for t in todo])  # off the event loop

    async def one(i: int, data: dict[str, Any], settings: Settings, key: str, lane: Lane) -> None:
        try:
            result = await service.pool.run(data, settings, deadline, settings_.request_time_limit_s, lane,
                                            keep_on_deadline=True)
        except ServiceError as exc:
            parts[i] = _item_error(i, exc.status, exc.code, exc.message, exc.detail)
            counts["failed"] += 1
            service.metrics.proofs.inc(exc.code)
            return
        _settle(service, key, result)
        if result.status != 200:
            err = result.error or JobError("error", "error")
            parts[i] = _item_error(i, result.status, err.code, err.message, err.detail)
            counts["failed"] += 1
            return
        parts[i] = _item_ok(i, result.body)
        if result.verdict:
            counts[result.verdict] = counts.get(result.verdict, 0) + 1

    if todo:
        with admission(service, lanes):
            await until_disconnected(request, asyncio.gather(*(one(*t, lane) for t, lane in zip(todo, lanes, strict=True))),
                                     service.metrics)
    out = b'{"results":[' + b",".join(p or b"null" for p in parts) + b'],"counts":' + json.dumps(counts).encode() + b"}"
    return Response(content=out, media_type=_JSON)
