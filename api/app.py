"""The FastAPI app: ``create_app(settings)`` builds it; its lifespan owns the worker pool and the cache.

Routes are thin: validate, look in the cache, admit, run the job in the pool until it
finishes or the client goes away, count, answer. Every error becomes the one JSON error
body through ``faithsieve.api.errors``. The parts: ``service`` (the running service, the
request's settings, a job run admitted in its lane), ``localize`` (``/localize`` and
``/localize/batch``), ``reward`` (``/get_reward``), ``ops`` (health, version, limits,
metrics) and ``schema`` (the OpenAPI document's limits and description). This module
wires them into the app and re-exports their public names.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from faithsieve.api import errors
from faithsieve.api.cache import VerdictCache
from faithsieve.api.docs import install_docs
from faithsieve.api.localize import route_localize, route_localize_batch
from faithsieve.api.metrics import ServiceMetrics
from faithsieve.api.middleware import GuardMiddleware, MetricsMiddleware
from faithsieve.api.models import BatchResponse, ErrorBody, Health, RewardResponse
from faithsieve.api.ops import (
    API_VERSION,
    limits_of,
    route_healthz,
    route_limits,
    route_metrics,
    route_readyz,
    route_version,
)
from faithsieve.api.pool import Job, WorkerPool
from faithsieve.api.reward import route_get_reward, warm_reward_grader
from faithsieve.api.reward_queue import RewardQueue
from faithsieve.api.schema import describe, document_limits
from faithsieve.api.service import (
    ClientGone,
    Service,
    ServiceDep,
    effective_settings,
    get_service,
    run_admitted,
    until_disconnected,
)
from faithsieve.api.settings import ServiceSettings
from faithsieve.api.worker import localize_job
from fastapi import FastAPI, Security
from fastapi.exceptions import RequestValidationError
from fastapi.middleware import Middleware
from fastapi.middleware.cors import CORSMiddleware
from fastapi.security import APIKeyHeader
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from faithsieve.core.errors import FaithSieveError
from faithsieve.verdict import Verdict
from faithsieve.web import routes as workbench

__all__ = [
    "API_VERSION",
    "ClientGone",
    "Service",
    "ServiceDep",
    "create_app",
    "document_limits",
    "effective_settings",
    "get_service",
    "limits_of",
    "run_admitted",
    "until_disconnected",
]

_PROTECTED = frozenset({"/localize", "/localize/batch", "/get_reward", "/metrics", *workbench.PROTECTED})

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


def _reward_slots() -> int:
    """Reward samples graded at once: the grader's worker processes (``FAITHSIEVE_GRADER_WORKERS``)."""
    from faithsieve.grading.config import default_config

    return default_config().workers


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
        rewards = RewardQueue(settings.reward_max_pending, _reward_slots(), metrics)
        service = Service(settings=settings, pipeline=pipeline, pool=pool, cache=cache, metrics=metrics,
                          rewards=rewards)
        await asyncio.gather(pool.start(), warm_reward_grader(settings))
        rewards.start()
        app.state.service = state["service"] = service
        try:
            yield
        finally:
            app.state.service = None
            state.pop("service", None)
            await rewards.close()
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
        protected_prefixes=workbench.PROTECTED_PREFIXES,
        body_limits={"/localize": settings.max_body_bytes, "/localize/batch": settings.max_batch_body_bytes,
                     "/get_reward": settings.max_batch_body_bytes, **workbench.body_limits(settings)},
        body_time_limit_s=settings.body_read_time_limit_s))

    app = FastAPI(
        title="FaithSieve API",
        version=API_VERSION,  # the API's version (GET /version has the package's)
        summary="First-error localization for natural-language math proofs, backed by local, faithful evidence.",
        description=describe(settings),
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

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to extend the schema
    workbench.mount(app, settings)  # the page at / and its /web/... routes (faithsieve.web)
    return app
