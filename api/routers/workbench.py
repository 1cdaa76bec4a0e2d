"""The workbench's routes: the page at ``/``, its assets, and the JSON it needs beyond the public API.

The page checks proofs with the public ``POST /localize``; what it adds here is read-only
(configuration, shipped examples) except ``POST /web/tree``, which rebuilds the proof-state tree in
the worker pool (same admission, time limit and disconnect handling as ``/localize``). The run
browser's routes are ``faithsieve.api.routers.runs``. All are left out of the OpenAPI schema: they
serve the page, not clients. Every error is the service's error body.
"""

from __future__ import annotations

import asyncio
import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any

from faithsieve.api.errors import NotFound
from faithsieve.api.models import LocalizeRequest
from faithsieve.api.schema import API_VERSION
from faithsieve.api.service import (
    RunsDep,
    ServiceDep,
    SettingsDep,
    job_error,
    run_admitted,
)
from faithsieve.api.settings import ServiceSettings
from faithsieve.api.workbench.tree import tree_job
from fastapi import APIRouter, Request
from starlette.responses import HTMLResponse, Response

__all__ = ["CSP", "PROTECTED", "TREE_PATH", "body_limits", "examples_index", "mode_choices", "router"]

TREE_PATH = "/web/tree"
PROTECTED = frozenset({TREE_PATH})
"""Paths that need the API key when the server has one (they run the pipeline's decomposer)."""
_ASSET = re.compile(r"^[a-z0-9_-]{1,40}\.(js|css|svg)$")
_EXAMPLE = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
_MEDIA = {"js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8", "svg": "image/svg+xml"}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
"""The page may load and contact nothing but this server."""


def body_limits(settings: ServiceSettings) -> dict[str, int]:
    """Body limits of the workbench's POST routes (for the service's guard middleware)."""
    return {TREE_PATH: settings.max_body_bytes}


def _static() -> Any:
    return resources.files("faithsieve.api") / "static" / "workbench"


def _examples_dir() -> Any:
    return resources.files("faithsieve.datasets") / "examples"


def _headers() -> dict[str, str]:
    return {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-cache"}


@lru_cache(maxsize=1)
def examples_index() -> list[dict[str, Any]]:
    """The shipped examples: name, title, category, expected verdict and note (sorted by name)."""
    out = []
    for entry in sorted(_examples_dir().iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".json"):
            continue
        doc = json.loads(entry.read_text(encoding="utf-8"))
        name = entry.name[:-5]
        title = re.sub(r"^\d+_", "", name).replace("_", " ")
        out.append({"name": name, "title": title, "category": doc.get("category"),
                    "expected": doc.get("expected"), "note": doc.get("note")})
    return out


def mode_choices(settings: ServiceSettings) -> list[dict[str, Any]]:
    """The modes the page offers, each with whether this server runs it and why not."""
    missing = [name for name, value in (("FAITHSIEVE_LLM_BASE_URL", settings.llm_base_url),
                                        ("FAITHSIEVE_LLM_MODEL", settings.llm_model)) if not value]
    if len(missing) == 2:
        why = "needs a language-model endpoint; none is configured (FAITHSIEVE_LLM_BASE_URL, FAITHSIEVE_LLM_MODEL)"
    elif missing:
        given = "FAITHSIEVE_LLM_MODEL" if missing[0] == "FAITHSIEVE_LLM_BASE_URL" else "FAITHSIEVE_LLM_BASE_URL"
        why = f"needs a language-model endpoint: {given} is set, {missing[0]} is not"
    else:
        why = (f"an endpoint is configured ({settings.llm_model}), but the service runs the offline sieve only "
               "(its limits are sized for milliseconds); use `faithsieve localize --mode ...`")
    return [{"mode": "offline", "available": True, "reason": None},
            {"mode": "llm", "available": False, "reason": why},
            {"mode": "judge", "available": False, "reason": why}]


router = APIRouter(include_in_schema=False)


@router.get("/", response_class=HTMLResponse)
async def page() -> HTMLResponse:
    html = (_static() / "index.html").read_text(encoding="utf-8")
    return HTMLResponse(html, headers=_headers())


@router.get("/web/static/{name}")
async def asset(name: str) -> Response:
    if not _ASSET.fullmatch(name):
        raise NotFound("no such asset", {"field": "name"})
    path = _static() / name
    if not path.is_file():
        raise NotFound("no such asset", {"field": "name"})
    return Response(path.read_bytes(), media_type=_MEDIA[name.rsplit(".", 1)[1]], headers=_headers())


@router.get("/web/config")
async def config(settings: SettingsDep, registry: RunsDep) -> dict[str, Any]:
    return {"api_version": API_VERSION, "modes": mode_choices(settings), "api_key_required": settings.api_key
            is not None, "runs_root": registry.root is not None,
            "limits": {"max_proof_chars": settings.max_proof_chars, "max_steps": settings.max_steps,
                       "max_step_chars": settings.max_step_chars}}


@router.get("/web/examples")
async def examples() -> dict[str, Any]:
    return {"examples": examples_index()}


@router.get("/web/examples/{name}")
async def example(name: str) -> Response:
    known = {e["name"] for e in examples_index()}
    if not _EXAMPLE.fullmatch(name) or name not in known:
        raise NotFound("no such example", {"field": "name"})
    return Response((_examples_dir() / f"{name}.json").read_bytes(), media_type="application/json")


@router.post(TREE_PATH)
async def tree(body: LocalizeRequest, request: Request, service: ServiceDep) -> Response:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + service.settings.request_time_limit_s
    # the same admission as /localize: its lane, time limit and disconnect handling
    result = await run_admitted(request, service, body.pipeline_input(), service.pipeline, deadline, job=tree_job)
    if result.status != 200:
        raise job_error(result)
    return Response(result.body, media_type="application/json")
