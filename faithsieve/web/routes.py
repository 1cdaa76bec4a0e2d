"""Routes of the workbench: the page at ``/``, its assets, and the JSON it needs beyond the public API.

``mount(app, settings)`` adds them to the service's app. The page checks proofs with the public
``POST /localize``; what it adds here is read-only (configuration, shipped examples, scoring
runs) except ``POST /web/tree``, which rebuilds the proof-state tree in the worker pool (same
admission, time limit and disconnect handling as ``/localize``). All routes are left out of the
OpenAPI schema: they serve the page, not clients. Every error is the service's error body.
"""

import asyncio
import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from starlette.responses import HTMLResponse, Response

from faithsieve.api.settings import ServiceSettings
from faithsieve.core.errors import FaithSieveError

TREE_PATH = "/web/tree"
OPEN_RUN_PATH = "/web/runs/open"
PROTECTED = frozenset({TREE_PATH})
"""Paths that need the API key when the server has one (they run the pipeline's decomposer)."""
PROTECTED_PREFIXES = ("/web/runs",)
"""Path prefixes that need the API key when the server has one (the run browser's routes)."""
_OPEN_RUN_BODY_BYTES = 8192
_ASSET = re.compile(r"^[a-z0-9_-]{1,40}\.(js|css|svg)$")
_EXAMPLE = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
_MEDIA = {"js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8", "svg": "image/svg+xml"}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
"""The page may load and contact nothing but this server."""


class NotFound(FaithSieveError):
    """A workbench resource (asset, example, run, item) that does not exist."""

    code = "not_found"
    status = 404


def body_limits(settings: ServiceSettings) -> dict[str, int]:
    """Body limits of the workbench's POST routes (for the service's guard middleware)."""
    return {TREE_PATH: settings.max_body_bytes, OPEN_RUN_PATH: _OPEN_RUN_BODY_BYTES}


def _static() -> Any:
    return resources.files("faithsieve.web") / "static"


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


async def page() -> HTMLResponse:
    html = (_static() / "index.html").read_text(encoding="utf-8")
    return HTMLResponse(html, headers=_headers())


async def asset(name: str) -> Response:
    if not _ASSET.fullmatch(name):
        raise NotFound("no such asset", {"field": "name"})
    path = _static() / name
    if not path.is_file():
        raise NotFound("no such asset", {"field": "name"})
    return Response(path.read_bytes(), media_type=_MEDIA[name.rsplit(".", 1)[1]], headers=_headers())


async def examples() -> dict[str, Any]:
    return {"examples": examples_index()}


async def example(name: str) -> Response:
    known = {e["name"] for e in examples_index()}
    if not _EXAMPLE.fullmatch(name) or name not in known:
        raise NotFound("no such example", {"field": "name"})
    return Response((_examples_dir() / f"{name}.json").read_bytes(), media_type="application/json")


def mount(app: FastAPI, settings: ServiceSettings) -> None:
    """Add the workbench to the service's app (the page at ``/``, ``/web/...``).

    (This module does not use postponed annotations: FastAPI reads the route's parameter types,
    imported here, with the service's parts, when they are defined.)"""
    from faithsieve.api.models import LocalizeRequest
    from faithsieve.api.service import ServiceDep, job_error, run_admitted
    from faithsieve.web.jobs import tree_job
    from faithsieve.web.runs import RunRegistry, runs_router

    registry = RunRegistry.from_env()
    app.state.workbench_runs = registry

    async def config() -> dict[str, Any]:
        from faithsieve.api.ops import API_VERSION

        return {"api_version": API_VERSION, "modes": mode_choices(settings), "api_key_required": settings.api_key
                is not None, "runs_root": registry.root is not None,
                "limits": {"max_proof_chars": settings.max_proof_chars, "max_steps": settings.max_steps,
                           "max_step_chars": settings.max_step_chars}}

    async def tree(body: LocalizeRequest, request: Request, service: ServiceDep) -> Response:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + service.settings.request_time_limit_s
        # the same admission as /localize: its lane, time limit and disconnect handling
        result = await run_admitted(request, service, body.pipeline_input(), service.pipeline, deadline, job=tree_job)
        if result.status != 200:
            raise job_error(result)
        return Response(result.body, media_type="application/json")

    router = APIRouter(include_in_schema=False)
    router.get("/", response_class=HTMLResponse)(page)
    router.get("/web/static/{name}")(asset)
    router.get("/web/config")(config)
    router.get("/web/examples")(examples)
    router.get("/web/examples/{name}")(example)
    router.post(TREE_PATH)(tree)
    app.include_router(router)
    app.include_router(runs_router(registry))

