"""The run browser's routes, ``/web/runs...``: read-only views of the scoring runs this server may show.

Which runs those are, and what of them may be read, is ``faithsieve.api.workbench.runs``; the
routes receive its registry (``RunsDep``). Left out of the OpenAPI schema; with an API key set,
every one of them needs it (``PROTECTED_PREFIXES``)."""

from __future__ import annotations

from typing import Any

from faithsieve.api.service import RunsDep
from faithsieve.api.workbench.runs import MAX_PAGE, MAX_PATH_CHARS, OUTCOMES
from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from faithsieve.core.errors import InputError

__all__ = ["BODY_LIMITS", "OPEN_RUN_PATH", "PROTECTED_PREFIXES", "OpenRun", "router"]

OPEN_RUN_PATH = "/web/runs/open"
PROTECTED_PREFIXES = ("/web/runs",)
"""Path prefixes that need the API key when the server has one (the run browser's routes)."""
BODY_LIMITS = {OPEN_RUN_PATH: 8192}
"""Body limits of the run browser's POST routes (for the service's guard middleware)."""

router = APIRouter(include_in_schema=False)


class OpenRun(BaseModel):
    """``POST /web/runs/open``: the path of a run directory."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str = Field(max_length=MAX_PATH_CHARS)
    """A run directory (absolute, or relative to the runs root)."""


def _row_view(rec: dict[str, Any]) -> dict[str, Any]:
    reason = rec.get("reason")
    return {"id": rec.get("id"), "subset": rec.get("subset"), "label": rec.get("label"),
            "predicted": rec.get("predicted"), "outcome": rec["outcome"], "time_ms": rec.get("time_ms"),
            "error": rec.get("error"), "reason": reason[:200] if isinstance(reason, str) else None}


@router.get("/web/runs")
def list_runs(registry: RunsDep) -> dict[str, Any]:
    return {"runs": registry.listing(), "root": registry.root is not None}


@router.post(OPEN_RUN_PATH)
def open_run(body: OpenRun, registry: RunsDep) -> dict[str, Any]:
    return registry.open(body.path).summary()


@router.get("/web/runs/{run_id}")
def summary(run_id: str, registry: RunsDep) -> dict[str, Any]:
    return registry.get(run_id).summary()


@router.get("/web/runs/{run_id}/items")
def items(run_id: str, registry: RunsDep, outcome: str = "", subset: str = Query("", max_length=200),
          q: str = Query("", max_length=200), offset: int = Query(0, ge=0),
          limit: int = Query(100, ge=1, le=MAX_PAGE)) -> dict[str, Any]:
    wanted = set(outcome.split(",")) - {""}
    unknown = sorted(wanted - set(OUTCOMES))
    if unknown:
        raise InputError(f"unknown outcome(s) {unknown}; known: {list(OUTCOMES)}", {"field": "outcome"})
    needle = q.casefold()
    rows = [r for r in registry.get(run_id).rows()
            if (not wanted or r["outcome"] in wanted) and (not subset or str(r.get("subset")) == subset)
            and (not needle or needle in str(r.get("id")).casefold())]
    return {"total": len(rows), "offset": offset, "limit": limit,
            "rows": [_row_view(r) for r in rows[offset:offset + limit]]}


@router.get("/web/runs/{run_id}/item")
def item(run_id: str, registry: RunsDep, id: str = Query(min_length=1, max_length=1000)) -> dict[str, Any]:
    run = registry.get(run_id)
    rec = run.record(id)
    it, source = run.item(id)
    return {"prediction": rec, "item": it, "item_source": source if it is not None else None,
            "item_missing": None if it is not None else source}


@router.get("/web/runs/{run_id}/plots/{name}")
def plot(run_id: str, name: str, registry: RunsDep) -> Response:
    return Response(registry.get(run_id).plot(name).read_bytes(), media_type="image/png")
