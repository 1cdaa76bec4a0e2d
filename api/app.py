"""The FastAPI app: ``create_app(settings)`` builds it; its lifespan owns the worker pool and the cache.

Routes are thin: validate, look in the cache, admit, run the job in the pool until it
finishes or the client goes away, count, answer. Every error becomes the one JSON error
body through ``faithsieve.api.errors``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import platform
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import Depends, FastAPI, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.middleware import Middleware
from fastapi.middleware.cors import CORSMiddleware
from fastapi.security import APIKeyHeader
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response

from faithsieve.api import errors
from faithsieve.api.admission import Lane, lane_of
from faithsieve.api.cache import VerdictCache, cache_key
from faithsieve.api.docs import install_docs
from faithsieve.api.errors import ServiceError, validation_detail
from faithsieve.api.metrics import CONTENT_TYPE, ServiceMetrics
from faithsieve.api.middleware import GuardMiddleware, MetricsMiddleware
from faithsieve.api.models import (
    BatchRequest, BatchResponse, ErrorBody, Health, LimitsInfo, Liveness, LocalizeOptions, LocalizeRequest,
    RewardRequest, RewardResponse, VersionInfo,
)
from faithsieve.api.pool import Job, WorkerPool
from faithsieve.api.settings import ServiceSettings
from faithsieve.api.worker import JobResult, localize_job
from faithsieve.config import Settings
from faithsieve.errors import FaithSieveError, InputError, InputTooLarge
from faithsieve.models import Verdict
from faithsieve.web import routes as workbench

log = logging.getLogger(__name__)

API_VERSION = "1"
_JSON = "application/json"
_PROTECTED = frozenset({"/localize", "/localize/batch", "/get_reward", "/metrics", *workbench.PROTECTED})
T = TypeVar("T")


class ClientGone(ServiceError):
    """The client disconnected; its work was cancelled and nobody reads this answer."""

    code = "client_closed_request"
    status = 499


@dataclass
class Service:
    """What the lifespan owns and the routes receive."""

    settings: ServiceSettings
    """The service's settings."""
    pipeline: Settings
    """The pipeline's part of them (what workers get)."""
    pool: WorkerPool
    """Worker processes, admission and time limits."""
    cache: VerdictCache
    """Verdicts by input hash."""
    metrics: ServiceMetrics
    """Counters for ``/metrics``."""


def get_service(request: Request) -> Service:
    """Dependency: the running service (503 before the lifespan started it)."""
    service: Service | None = getattr(request.app.state, "service", None)
    if service is None:
        raise errors.NotReady("the service is starting", headers={"Retry-After": "1"})
    return service


ServiceDep = Annotated[Service, Depends(get_service)]


# -- helpers ----------------------------------------------------------------------------------


def effective_settings(base: Settings, options: LocalizeOptions | None) -> Settings:
    """The pipeline settings for one request: the server's, tightened by the request's options."""
    if options is None:
        return base
    update: dict[str, Any] = {}
    if options.time_limit_s is not None:
        update["proof_time_limit_s"] = min(options.time_limit_s, base.proof_time_limit_s)
    if options.obligation_time_limit_ms is not None:
        update["obligation_time_limit_ms"] = min(options.obligation_time_limit_ms, base.obligation_time_limit_ms)
    if options.checkers is not None:
        unknown = sorted(set(options.checkers) - set(base.checkers))
        if unknown:
            raise InputError(f"checkers {unknown} are not enabled on this server (enabled: {list(base.checkers)})",
                             {"field": "options.checkers"})
        update["checkers"] = tuple(c for c in base.checkers if c in options.checkers)
    return base.model_copy(update=update) if update else base


def _job_error(result: JobResult) -> ServiceError:
    err = result.error or {}
    exc = ServiceError(str(err.get("message", "error")), err.get("detail"))
    exc.code = str(err.get("code", "error"))
    exc.status = result.status
    return exc


async def _disconnected(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def until_disconnected(request: Request, work: Awaitable[T], metrics: ServiceMetrics) -> T:
    """Await ``work``; if the client disconnects first, cancel it (killing its workers) and raise."""
    task = asyncio.ensure_future(work)
    watch = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not task.done() and not watch.done():  # we were cancelled ourselves
            task.cancel()
        watch.cancel()
    if task.done():
        return task.result()
    task.cancel()
    with suppress(asyncio.CancelledError, Exception):
        await task
    metrics.disconnects.inc()
    raise ClientGone("the client closed the connection; the work was cancelled")


def _record(metrics: ServiceMetrics, result: JobResult) -> None:
    if result.status == 200 and result.verdict:
        metrics.proofs.inc(result.verdict)
        for status, n in result.evidence.items():
            metrics.evidence.inc(status, amount=n)
    else:
        metrics.proofs.inc(str((result.error or {}).get("code", "error")))
    metrics.check_seconds.observe(result.seconds)


async def _warm_reward_grader(settings: ServiceSettings) -> None:
    """Start the ``/get_reward`` grader's workers with the service's, so their start-up is never
    charged to a reward call's budget (``reward_warmup``)."""
    if not settings.reward_warmup:
        return
    from faithsieve import grader

    try:
        await asyncio.to_thread(grader.warmup)
    except Exception as exc:  # noqa: BLE001 - the route still works; its first call pays the start-up
        log.warning("could not warm the reward grader: %r", exc)


def _verdict_response(body: bytes, cache: str) -> Response:
    return Response(content=body, media_type=_JSON, headers={"X-FaithSieve-Cache": cache})


# -- routes ----------------------------------------------------------------------------------


_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "Malformed JSON."},
    401: {"model": ErrorBody, "description": "Missing or wrong API key (only when the server has one)."},
    408: {"model": ErrorBody, "description": "The body was not received in time."},
    413: {"model": ErrorBody, "description": "Body, proof, step or batch over a size limit."},
    415: {"model": ErrorBody, "description": "The body is not declared as JSON."},
    422: {"model": ErrorBody, "description": "Invalid input (which field, why), or a resource limit."},
    429: {"model": ErrorBody, "description": "Saturated: retry after `Retry-After` seconds."},
    503: {"model": ErrorBody, "description": "Workers not ready (starting or stopping)."},
    504: {"model": ErrorBody, "description": "Time limit exceeded; the work was stopped."},
}


async def route_localize(body: LocalizeRequest, request: Request, service: ServiceDep) -> Response:
    """Localize the first error of one proof.

    Answers the verdict (``correct`` or ``error``), ``first_error_step`` (1-based, null when
    correct), per-step evidence with source spans, coverage, timings and backend versions."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + service.settings.request_time_limit_s
    settings = effective_settings(service.pipeline, body.options)
    data = body.pipeline_input()
    use_cache = service.cache.enabled and (body.options is None or body.options.use_cache)
    key = cache_key(data, settings) if use_cache else ""
    if use_cache:
        hit = service.cache.get(key)
        service.metrics.cache.inc("hit" if hit else "miss")
        if hit is not None:
            service.metrics.proofs.inc(hit[1])
            return _verdict_response(hit[0], "hit")
    lane = lane_of(data, service.settings.heavy_chars)
    with service.pool.admit(1, heavy=int(lane == "heavy")):
        result = await until_disconnected(
            request, service.pool.run(data, settings, deadline, service.settings.request_time_limit_s, lane),
            service.metrics)
    _record(service.metrics, result)
    if result.status != 200:
        raise _job_error(result)
    if use_cache and result.verdict:
        service.cache.put(key, result.body, result.verdict, result.evidence)
    return _verdict_response(result.body, "miss" if use_cache else "off")


def _item_error(index: int, status: int, code: str, message: str, detail: object = None) -> bytes:
    doc = {"index": index, "status": status, "result": None,
           "error": {"code": code, "message": message, "detail": detail}}
    return json.dumps(doc, ensure_ascii=False, default=str).encode("utf-8")


def _item_ok(index: int, body: bytes) -> bytes:
    return b'{"index":%d,"status":200,"result":%s,"error":null}' % (index, body)


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
            parts[i] = _item_error(i, 422, "invalid_input", f"items.{i}.{first['field']}: {first['message']}", detail)
            counts["failed"] += 1
            service.metrics.proofs.inc("invalid_input")
            continue
        except FaithSieveError as exc:
            parts[i] = _item_error(i, exc.status, exc.code, exc.message, exc.detail)
            counts["failed"] += 1
            service.metrics.proofs.inc(exc.code)
            continue
        data = item.pipeline_input()
        use_cache = service.cache.enabled and (options is None or options.use_cache)
        key = cache_key(data, settings) if use_cache else ""
        hit = service.cache.get(key) if use_cache else None
        if use_cache:
            service.metrics.cache.inc("hit" if hit else "miss")
        if hit is not None:
            parts[i] = _item_ok(i, hit[0])
            counts[hit[1]] = counts.get(hit[1], 0) + 1
            service.metrics.proofs.inc(hit[1])
            continue
        todo.append((i, data, settings, key))

    lanes = [lane_of(t[1], settings_.heavy_chars) for t in todo]

    async def one(i: int, data: dict[str, Any], settings: Settings, key: str, lane: Lane) -> None:
        try:
            result = await service.pool.run(data, settings, deadline, settings_.request_time_limit_s, lane,
                                            keep_on_deadline=True)
        except ServiceError as exc:
            parts[i] = _item_error(i, exc.status, exc.code, exc.message, exc.detail)
            counts["failed"] += 1
            service.metrics.proofs.inc(exc.code)
            return
        _record(service.metrics, result)
        if result.status != 200:
            err = result.error or {}
            parts[i] = _item_error(i, result.status, str(err.get("code")), str(err.get("message")), err.get("detail"))
            counts["failed"] += 1
            return
        parts[i] = _item_ok(i, result.body)
        if result.verdict:
            counts[result.verdict] = counts.get(result.verdict, 0) + 1
            if key:
                service.cache.put(key, result.body, result.verdict, result.evidence)

    if todo:
        with service.pool.admit(len(todo), heavy=lanes.count("heavy")):
            await until_disconnected(request, asyncio.gather(*(one(*t, lane) for t, lane in zip(todo, lanes))),
                                     service.metrics)
    out = b'{"results":[' + b",".join(p or b"null" for p in parts) + b'],"counts":' + json.dumps(counts).encode() + b"}"
    return Response(content=out, media_type=_JSON)


async def route_get_reward(body: RewardRequest, service: ServiceDep) -> RewardResponse:
    """OpenRLHF's remote reward model: ``{"query", "prompts", "labels"}`` in, ``{"rewards", "scores",
    "extra_logs"}`` out. The grader bounds each sample by its own time budget in its own worker
    processes (``FAITHSIEVE_GRADER_*``), so one hostile completion costs its budget, never the batch."""
    from faithsieve.grader import openrlhf_reward

    s = service.settings
    n = len(body.query)
    if n > s.batch_limit:
        raise InputTooLarge(f"{n} samples; the limit is {s.batch_limit} per request", {"field": "query"})
    for name, seq in (("prompts", body.prompts), ("labels", body.labels)):
        if seq is not None and len(seq) != n:
            raise InputError(f"'{name}' has {len(seq)} entries but 'query' has {n}", {"field": name})
    try:
        out = await asyncio.wait_for(asyncio.to_thread(openrlhf_reward, body.query, body.prompts, body.labels),
                                     timeout=s.batch_time_limit_s)
    except asyncio.TimeoutError:
        raise errors.RequestTimeout("reward batch exceeded its time limit", {"limit_s": s.batch_time_limit_s}) from None
    except ValueError as exc:
        raise InputError(str(exc)) from None
    return RewardResponse(**out)


async def route_healthz() -> Liveness:
    """Liveness: the event loop answers."""
    return Liveness()


async def route_readyz(service: ServiceDep) -> JSONResponse:
    """Readiness: 200 when at least one worker is up, else 503."""
    pool = service.pool
    ready = pool.ready
    body = Health(status="ready" if ready else "not_ready", workers=pool.up, restarting=pool.restarting,
                  pending=pool.pending, capacity=pool.capacity)
    return JSONResponse(body.model_dump(), status_code=200 if ready else 503)


async def route_version() -> VersionInfo:
    """Versions of the service and its checker backends."""
    from faithsieve.pipeline import backend_versions

    backends = backend_versions()
    return VersionInfo(service="faithsieve", version=backends.get("faithsieve", "unknown"), api_version=API_VERSION,
                       python=platform.python_version(), backends=backends)


async def route_limits(service: ServiceDep) -> LimitsInfo:
    """The limits this server enforces."""
    return limits_of(service.settings)


async def route_metrics(service: ServiceDep) -> Response:
    """Prometheus metrics (text exposition format 0.0.4)."""
    return Response(service.metrics.render(), media_type=CONTENT_TYPE)


def limits_of(s: ServiceSettings) -> LimitsInfo:
    values = {name: getattr(s, name) for name in LimitsInfo.model_fields if name != "batch_max_items"}
    return LimitsInfo(batch_max_items=s.batch_limit, **values)


# -- the app ----------------------------------------------------------------------------------


def create_app(settings: ServiceSettings | None = None, job: Job | None = None) -> FastAPI:
    """Build the app. ``job`` replaces the pipeline job (a picklable top-level function; tests use
    ``faithsieve.api.worker.sleep_job``)."""
    settings = settings if settings is not None else ServiceSettings()
    metrics = ServiceMetrics()
    pipeline = settings.pipeline_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        pool = WorkerPool(settings.workers, settings.max_pending, settings.worker_memory_mb, metrics,
                          job or localize_job, settings.heavy_workers, settings.heavy_max_pending)
        cache = VerdictCache(settings.cache_entries, settings.cache_max_bytes)
        service = Service(settings=settings, pipeline=pipeline, pool=pool, cache=cache, metrics=metrics)
        await asyncio.gather(pool.start(), _warm_reward_grader(settings))
        app.state.service = state["service"] = service
        try:
            yield
        finally:
            app.state.service = None
            state.pop("service", None)
            await pool.close()

    state: dict[str, Service] = {}

    def _read(get: Callable[[Service], float]) -> Callable[[], float]:
        return lambda: get(state["service"]) if "service" in state else 0.0

    metrics.gauge("faithsieve_workers_up", "Worker processes up and warm.", _read(lambda s: s.pool.up))
    metrics.gauge("faithsieve_pending_proofs", "Proofs admitted and not yet answered.", _read(lambda s: s.pool.pending))
    metrics.gauge("faithsieve_pending_capacity", "max_pending: admitted proofs beyond which requests get 429.",
                  _read(lambda s: s.pool.capacity))
    metrics.gauge("faithsieve_cache_entries", "Verdicts in the cache.", _read(lambda s: len(s.cache)))
    metrics.gauge("faithsieve_cache_bytes", "Bytes of verdict JSON in the cache.", _read(lambda s: s.cache.bytes))

    middleware = [Middleware(MetricsMiddleware, metrics=metrics)]
    if settings.cors_origins:
        middleware.append(Middleware(CORSMiddleware, allow_origins=list(settings.cors_origins),
                                     allow_methods=["GET", "POST"],
                                     allow_headers=["Content-Type", "Authorization", "X-API-Key"]))
    api_key = settings.api_key.get_secret_value() if settings.api_key is not None else None
    middleware.append(Middleware(
        GuardMiddleware, metrics=metrics, api_key=api_key, protected=_PROTECTED,
        body_limits={"/localize": settings.max_body_bytes, "/localize/batch": settings.max_batch_body_bytes,
                     "/get_reward": settings.max_batch_body_bytes, **workbench.body_limits(settings)},
        body_time_limit_s=settings.body_read_time_limit_s))

    app = FastAPI(
        title="FaithSieve",
        version=API_VERSION,
        summary="First-error localization for natural-language math proofs, backed by local, faithful evidence.",
        description=_description(settings),
        lifespan=lifespan,
        middleware=middleware,
        docs_url=None,  # served from local assets by install_docs (the defaults load a CDN)
        redoc_url=None,
    )
    install_docs(app)
    app.state.service = None
    app.state.metrics = metrics
    for exc_type in (FaithSieveError, RequestValidationError, StarletteHTTPException, Exception):
        app.add_exception_handler(exc_type, errors.handle)

    secured = [Security(APIKeyHeader(name="X-API-Key", auto_error=False))] if api_key else []
    verdict_doc: dict[int | str, dict[str, Any]] = {200: {"model": Verdict, "description": "The verdict."}}
    app.post("/localize", responses={**verdict_doc, **_ERRORS}, dependencies=secured, tags=["localize"],
             summary="Localize the first error of one proof")(route_localize)
    app.post("/localize/batch", responses={200: {"model": BatchResponse, "description": "Results in order."},
                                           **_ERRORS}, dependencies=secured, tags=["localize"],
             summary="Localize many proofs")(route_localize_batch)
    app.post("/get_reward", response_model=RewardResponse, responses=_ERRORS, dependencies=secured, tags=["rl"],
             summary="OpenRLHF remote reward")(route_get_reward)
    app.get("/healthz", tags=["ops"], summary="Liveness")(route_healthz)
    app.get("/readyz", tags=["ops"], summary="Readiness", response_model=Health,
            responses={503: {"model": Health, "description": "Not ready."}})(route_readyz)
    app.get("/version", tags=["ops"], summary="Versions")(route_version)
    app.get("/limits", tags=["ops"], summary="Limits")(route_limits)
    app.get("/metrics", tags=["ops"], summary="Prometheus metrics", dependencies=secured,
            response_class=Response,
            responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}, "description": "Metrics."}})(
        route_metrics)
    base_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = document_limits(base_openapi(), settings)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    workbench.mount(app, settings)  # the page at / and its /web/... routes (faithsieve.web)
    return app


def document_limits(schema: dict[str, Any], s: ServiceSettings) -> dict[str, Any]:
    """Write this server's size limits into the request schemas, so that schema-valid input is
    what the server accepts (the total of ``max_proof_chars`` aside, which JSON Schema cannot say)."""
    comps = schema.get("components", {}).get("schemas", {})
    req = comps.get("LocalizeRequest")
    if req is not None:
        props = req["properties"]
        props["problem"]["maxLength"] = s.max_proof_chars
        for branch in props["steps"]["anyOf"]:
            if branch.get("type") == "array":
                branch.update(minItems=1, maxItems=s.max_steps)
                branch["items"]["maxLength"] = s.max_step_chars
        # `proof` is read only when `steps` is absent or null, so its constraints live in that branch.
        req["anyOf"] = [
            {"required": ["steps"], "properties": {"steps": {"type": "array"}}},
            {"required": ["proof"],
             # a character that is not whitespace for the server (Python counts \x1c-\x1f and \x85 as
             # whitespace; JSON Schema's \S does not)
             "properties": {"proof": {"type": "string", "pattern": "[^\\s\\x1c-\\x1f\\x85]",
                                      "maxLength": s.max_proof_chars}}},
        ]
    batch = comps.get("BatchRequest")
    if batch is not None:
        batch["properties"]["items"].update(minItems=1, maxItems=s.batch_limit)
    reward = comps.get("RewardRequest")
    if reward is not None:
        # equal lengths of query/prompts/labels are checked by the server (422); JSON Schema cannot say it
        reward["properties"]["query"].update(maxItems=s.batch_limit)
    return schema


def _description(s: ServiceSettings) -> str:
    return (
        "Send a problem and its proof (`steps` as a list, or `proof` as one text); get `correct` or the "
        "first erroneous step (1-based) with the evidence behind it.\n\n"
        f"Limits on this server: body ≤ {s.max_body_bytes} bytes (batch ≤ {s.max_batch_body_bytes}); "
        f"≤ {s.max_steps} steps of ≤ {s.max_step_chars} characters, ≤ {s.max_proof_chars} characters in all; "
        f"≤ {s.batch_limit} items per batch; checking budget {s.proof_time_limit_s:g} s per proof, "
        f"hard limit {s.request_time_limit_s:g} s per request; at most {s.max_pending} proofs admitted at once "
        "(429 beyond). Every error answers `{\"error\": {\"code\", \"message\", \"detail\"}}`. See `GET /limits`."
    )
