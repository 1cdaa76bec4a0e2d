"""The operations routes: liveness, readiness, versions, limits and Prometheus metrics.

``router`` holds the probes, open to anyone; ``metrics_router`` holds ``GET /metrics``, which
needs the API key when the server has one (``create_app`` documents it so)."""

from __future__ import annotations

import platform

from faithsieve.api.metrics import CONTENT_TYPE
from faithsieve.api.models import Health, LimitsInfo, Liveness, VersionInfo
from faithsieve.api.schema import API_VERSION
from faithsieve.api.service import ServiceDep
from faithsieve.api.settings import ServiceSettings
from fastapi import APIRouter
from starlette.responses import JSONResponse, Response

__all__ = ["limits_of", "metrics_router", "route_healthz", "route_limits", "route_metrics", "route_readyz",
           "route_version", "router"]

router = APIRouter()
metrics_router = APIRouter()


@router.get("/healthz", tags=["ops"], summary="Liveness")
async def route_healthz() -> Liveness:
    """Liveness: the event loop answers."""
    return Liveness()


@router.get("/readyz", tags=["ops"], summary="Readiness", response_model=Health,
            responses={503: {"model": Health, "description": "Not ready."}})
async def route_readyz(service: ServiceDep) -> JSONResponse:
    """Readiness: 200 when at least one worker is up, else 503."""
    pool = service.pool
    ready = pool.ready
    body = Health(status="ready" if ready else "not_ready", workers=pool.up, restarting=pool.restarting,
                  pending=pool.pending, capacity=pool.capacity)
    return JSONResponse(body.model_dump(), status_code=200 if ready else 503)


@router.get("/version", tags=["ops"], summary="Versions")
async def route_version() -> VersionInfo:
    """Versions of the service and its checker backends."""
    from faithsieve.pipeline import backend_versions

    backends = backend_versions()
    return VersionInfo(service="faithsieve", version=backends.get("faithsieve", "unknown"), api_version=API_VERSION,
                       python=platform.python_version(), backends=backends)


@router.get("/limits", tags=["ops"], summary="Limits")
async def route_limits(service: ServiceDep) -> LimitsInfo:
    """The limits this server enforces."""
    return limits_of(service.settings)


@metrics_router.get("/metrics", tags=["ops"], summary="Prometheus metrics", response_class=Response,
                    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}},
                                     "description": "Metrics."}})
async def route_metrics(service: ServiceDep) -> Response:
    """Prometheus metrics (text exposition format 0.0.4)."""
    return Response(service.metrics.render(), media_type=CONTENT_TYPE)


def limits_of(s: ServiceSettings) -> LimitsInfo:
    values = {name: getattr(s, name) for name in LimitsInfo.model_fields if name != "batch_max_items"}
    return LimitsInfo(batch_max_items=s.batch_limit, **values)
