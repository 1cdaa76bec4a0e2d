"""``GET /docs`` (Swagger UI) and ``GET /redoc`` (ReDoc) from assets shipped in the package.

FastAPI's own pages load their JavaScript and CSS from a CDN (and ReDoc its fonts from Google),
so they are blank offline. These pages reference only ``/docs/assets/<name>`` on this server,
which serves the vendored files of ``api/static/docs`` (see its README for versions and licenses).
Only the listed file names are served; anything else under ``/docs/assets/`` is a 404. The app
is built with ``docs_url=None, redoc_url=None`` and includes ``router`` instead.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import HTMLResponse, Response

__all__ = ["ASSETS", "ASSET_DIR", "ASSET_PREFIX", "router"]

ASSET_DIR = Path(__file__).resolve().parents[1] / "static" / "docs"
ASSET_PREFIX = "/docs/assets"
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon-32x32.png": "image/png",
    "redoc.standalone.js": "text/javascript; charset=utf-8",
}
"""The files served, with their media types."""
_FAVICON = f"{ASSET_PREFIX}/favicon-32x32.png"

router = APIRouter(include_in_schema=False)


@lru_cache(maxsize=len(ASSETS))
def _asset_bytes(name: str) -> bytes:
    return (ASSET_DIR / name).read_bytes()


def _title(request: Request) -> str:
    return f"{request.app.title} v{request.app.version}"


@router.get("/docs")
async def swagger_ui(request: Request) -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url=request.app.openapi_url, title=f"{_title(request)} - Swagger UI", oauth2_redirect_url=None,
        swagger_js_url=f"{ASSET_PREFIX}/swagger-ui-bundle.js", swagger_css_url=f"{ASSET_PREFIX}/swagger-ui.css",
        swagger_favicon_url=_FAVICON,
        swagger_ui_parameters={"validatorUrl": None},  # the default badge asks validator.swagger.io
    )


@router.get("/redoc")
async def redoc(request: Request) -> HTMLResponse:
    return get_redoc_html(openapi_url=request.app.openapi_url, title=f"{_title(request)} - ReDoc",
                          redoc_js_url=f"{ASSET_PREFIX}/redoc.standalone.js", redoc_favicon_url=_FAVICON,
                          with_google_fonts=False)


@router.get(ASSET_PREFIX + "/{name}")
async def asset(name: str) -> Response:
    media = ASSETS.get(name)
    if media is None:
        raise StarletteHTTPException(404)
    return Response(_asset_bytes(name), media_type=media,
                    headers={"Cache-Control": "public, max-age=86400", "X-Content-Type-Options": "nosniff"})
