"""/docs and /redoc load everything from this server: no request leaves the machine."""

from __future__ import annotations

import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from faithsieve.api.app import create_app
from faithsieve.api.docs import ASSET_DIR, ASSETS
from fastapi.testclient import TestClient

from .conftest import settings

ROOT = Path(__file__).resolve().parents[2]


class _Refs(HTMLParser):
    """Every src/href of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.refs += [v for k, v in attrs if k in ("src", "href", "spec-url") and v]


@pytest.fixture(scope="module")
def web() -> TestClient:
    return TestClient(create_app(settings()), raise_server_exceptions=False)  # no lifespan: no workers needed


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_pages_reference_only_this_server(web: TestClient, page: str) -> None:
    r = web.get(page)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    parser = _Refs()
    parser.feed(r.text)
    assert parser.refs, "the page loads its UI from somewhere"
    assert all(ref.startswith("/") and not ref.startswith("//") for ref in parser.refs), parser.refs
    # nothing absolute anywhere in the page, inline script included (CDNs, Google Fonts, the validator badge)
    assert not re.search(r"https?://|//cdn|fonts\.googleapis", r.text), r.text
    scripts = [ref for ref in parser.refs if ref.endswith(".js")]
    assert scripts, "no script: the page would be blank"
    for ref in parser.refs:
        if ref.startswith("/docs/assets/"):
            asset = web.get(ref)
            assert asset.status_code == 200, ref
            name = ref.rsplit("/", 1)[1]
            assert asset.headers["content-type"] == ASSETS[name]
            assert asset.content == (ASSET_DIR / name).read_bytes() and len(asset.content) > 500
        else:
            assert ref == "/openapi.json"
            assert web.get(ref).status_code == 200


def test_swagger_ui_does_not_ask_the_online_validator(web: TestClient) -> None:
    assert '"validatorUrl": null' in web.get("/docs").text


def test_only_listed_assets_are_served(web: TestClient) -> None:
    for bad in ("/docs/assets/README.md", "/docs/assets/LICENSE-redoc", "/docs/assets/..%2Fdocs.py",
                "/docs/assets/nope.js"):
        assert web.get(bad).status_code == 404, bad


def test_vendored_files_match_the_recorded_hashes_and_are_package_data() -> None:
    readme = (ASSET_DIR / "README.md").read_text(encoding="utf-8")
    recorded = dict((name, digest) for digest, name in re.findall(r"^([0-9a-f]{64})  (\S+)$", readme, re.M))
    assert set(recorded) == set(ASSETS)
    for name, digest in recorded.items():
        assert hashlib.sha256((ASSET_DIR / name).read_bytes()).hexdigest() == digest, name
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    # the wheel itself is built and listed by tests/test_packaging.py (slow; .ci/run runs it)
    assert re.search(r'^"faithsieve\.api\.static\.docs" = \["\*"\]', pyproject, re.M)
    assert re.search(r'^  "faithsieve\.api\.static\.docs",$', pyproject, re.M)
