"""What the routes share: the running ``Service``, the app's settings and run registry as dependencies,
the request's settings, and running a job admitted.

``run_admitted`` is the one way a route runs one proof in the worker pool: its lane from the
text (``faithsieve.api.admission``), one admission in that lane, the request's hard time limit,
and cancellation when the client goes away. ``POST /localize`` and the workbench's
``POST /web/tree`` use it; the batch route admits its items together with ``admission``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from faithsieve.api import errors
from faithsieve.api.admission import Lane, lane_of
from faithsieve.api.cache import VerdictCache
from faithsieve.api.errors import ClientGone, ServiceError
from faithsieve.api.metrics import ServiceMetrics
from faithsieve.api.models import LocalizeOptions
from faithsieve.api.pool import Job, WorkerPool
from faithsieve.api.reward_queue import RewardQueue
from faithsieve.api.settings import ServiceSettings
from faithsieve.api.workbench.runs import RunRegistry
from faithsieve.api.worker import JobError, JobResult
from fastapi import Depends, Request

from faithsieve.core.errors import InputError
from faithsieve.core.settings import Settings

__all__ = ["ClientGone", "RunsDep", "Service", "ServiceDep", "SettingsDep", "admission", "effective_settings",
           "get_runs", "get_service", "get_settings", "job_error", "lane_for", "run_admitted", "until_disconnected"]

T = TypeVar("T")


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
    rewards: RewardQueue
    """``/get_reward``'s admission and sample scheduling."""


def get_service(request: Request) -> Service:
    """Dependency: the running service (503 before the lifespan started it)."""
    service: Service | None = getattr(request.app.state, "service", None)
    if service is None:
        raise errors.NotReady("the service is starting", headers={"Retry-After": "1"})
    return service


ServiceDep = Annotated[Service, Depends(get_service)]


def get_settings(request: Request) -> ServiceSettings:
    """Dependency: the service's settings (the app's, there before the lifespan starts the service)."""
    settings: ServiceSettings = request.app.state.settings
    return settings


SettingsDep = Annotated[ServiceSettings, Depends(get_settings)]


def get_runs(request: Request) -> RunRegistry:
    """Dependency: the scoring runs the workbench may show (the app's, opened by ``faithsieve view``)."""
    runs: RunRegistry = request.app.state.workbench_runs
    return runs


RunsDep = Annotated[RunRegistry, Depends(get_runs)]


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


def job_error(result: JobResult) -> ServiceError:
    """The error a failed job answers, as the service's exception (its code and status kept)."""
    err = result.error or JobError("error", "error")
    exc = ServiceError(err.message, err.detail)
    exc.code = err.code
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


def lane_for(service: Service, data: dict[str, Any]) -> Lane:
    """The lane of one proof on this server (``heavy_chars`` from its settings): the cost model's one
    estimate, read once per proof (callers run it in a thread, off the event loop)."""
    return lane_of(data, service.settings.heavy_chars)


def admission(service: Service, lanes: Sequence[Lane]) -> AbstractContextManager[None]:
    """Hold one admission per proof, the heavy ones in the heavy lane, for the block (or 429/503 now)."""
    return service.pool.admit(len(lanes), heavy=list(lanes).count("heavy"))


async def run_admitted(request: Request, service: Service, data: dict[str, Any], settings: Settings,
                       deadline: float, job: Job | None = None) -> JobResult:
    """Run one proof's job (``job``, or the pool's) admitted in its lane, until ``deadline`` (loop time) and
    at most ``request_time_limit_s``; cancelled, its worker killed, when the client disconnects."""
    lane = await asyncio.to_thread(lane_for, service, data)  # the text is read off the event loop
    with admission(service, [lane]):
        return await until_disconnected(
            request, service.pool.run(data, settings, deadline, service.settings.request_time_limit_s, lane, job=job),
            service.metrics)
