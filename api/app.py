"""The FastAPI app: ``create_app(settings)`` builds it; its lifespan owns the worker pool and the cache.

Routes are thin: validate, look in the cache, admit, run the job in the pool until it
finishes or the client goes away, count, answer. They live in ``faithsieve.api.routers``, one
router per concern (``docs``, ``localize``, ``reward``, ``ops``, ``workbench``, ``runs``), and get
the running service, the settings and the run registry as dependencies (``service``). Every
error becomes the one JSON error body through ``faithsieve.api.handler``, with the codes and
statuses of the error table (``faithsieve.api.errors``). This module builds the middleware and the
metrics gauges, mounts the routers in order, writes the server's limits into the OpenAPI document
(``schema``), and re-exports the service's public names.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from faithsieve.api import handler
from faithsieve.api.cache import VerdictCache
from faithsieve.api.errors import ClientGone
from faithsieve.api.metrics import ServiceMetrics
from faithsieve.api.middleware import GuardMiddleware, MetricsMiddleware
from faithsieve.api.pool import Job, WorkerPool
from faithsieve.api.reward_queue import RewardQueue
from faithsieve.api.routers import docs, localize, ops, reward, runs, workbench
from faithsieve.api.routers.ops import limits_of
from faithsieve.api.routers.reward import warm_reward_grader
from faithsieve.api.schema import API_VERSION, describe, document_limits
from faithsieve.api.service import (
    Service,
    ServiceDep,
    effective_settings,
    get_service,
    run_admitted,
    until_disconnected,
)
from faithsieve.api.settings import ServiceSettings
from faithsieve.api.workbench.runs import RunRegistry
from faithsieve.api.worker import localize_job
from fastapi import FastAPI, Security
from fastapi.exceptions import RequestValidationError
from fastapi.middleware import Middleware
from fastapi.middleware.cors import CORSMiddleware
from fastapi.security import APIKeyHeader
from starlette.exceptions import HTTPException as StarletteHTTPException

from faithsieve.core.errors import FaithSieveError

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
        protected_prefixes=runs.PROTECTED_PREFIXES,
        body_limits={"/localize": settings.max_body_bytes, "/localize/batch": settings.max_batch_body_bytes,
                     "/get_reward": settings.max_batch_body_bytes, **workbench.body_limits(settings),
                     **runs.BODY_LIMITS},
        body_time_limit_s=settings.body_read_time_limit_s))

    app = FastAPI(
        title="FaithSieve API",
        version=API_VERSION,  # the API's version (GET /version has the package's)
        summary="First-error localization for natural-language math proofs, backed by local, faithful evidence.",
        description=describe(settings),
        lifespan=lifespan,
        middleware=middleware,
        docs_url=None,  # served from local assets by routers.docs (the defaults load a CDN)
        redoc_url=None,
    )
    app.state.service = None
    app.state.metrics = metrics
    app.state.settings = settings
    app.state.workbench_runs = RunRegistry.from_env()
    for exc_type in (FaithSieveError, RequestValidationError, StarletteHTTPException, Exception):
        app.add_exception_handler(exc_type, handler.handle)

    # the API key's routes say so in the OpenAPI document (the guard middleware checks the key)
    secured = [Security(APIKeyHeader(name="X-API-Key", auto_error=False))] if api_key else []
    app.include_router(docs.router)
    app.include_router(localize.router, dependencies=secured)
    app.include_router(reward.router, dependencies=secured)
    app.include_router(ops.router)
    app.include_router(ops.metrics_router, dependencies=secured)
    base_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = document_limits(base_openapi(), settings)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to extend the schema
    app.include_router(workbench.router)  # the page at / and its /web/... routes
    app.include_router(runs.router)
    return app
