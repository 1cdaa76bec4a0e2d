"""/docs and /redoc load everything from this server: no request leaves the machine."""

from __future__ import annotations

import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from faithsieve.api.app import create_app
from faithsieve.api.routers.docs import ASSET_DIR, ASSETS
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


def test_the_docs_carry_the_api_version_and_offer_steps_or_proof(client) -> None:
    """Issue 24: the title is "FaithSieve API" with the API version as its version (not "FaithSieve 1");
    the request body is one of two titled variants (not ``LocalizeRequest | LocalizeRequest``) with an
    example of each, none holding both; a body with both is a 422."""
    from faithsieve.api.schema import API_VERSION

    doc = client.get("/openapi.json").json()
    assert doc["info"]["title"] == "FaithSieve API" and doc["info"]["version"] == API_VERSION
    req = doc["components"]["schemas"]["LocalizeRequest"]
    assert "anyOf" not in req and [v["title"] for v in req["oneOf"]] == ["steps (a list)", "proof (one text)"]
    examples = doc["paths"]["/localize"]["post"]["requestBody"]["content"]["application/json"]["examples"]
    assert {k: sorted(v["value"]) for k, v in examples.items()} == {"steps": ["problem", "steps"],
                                                                   "proof": ["problem", "proof"]}
    assert "FaithSieve API v1" in client.get("/redoc").text
    r = client.post("/localize", json={"problem": "p", "steps": ["1 = 1"], "proof": "1 = 1"})
    assert r.status_code == 422 and r.json()["error"]["message"] == \
        "body: give either 'steps' (a list of strings) or 'proof' (a string), not both"


def test_a_batch_item_error_is_one_sentence_naming_the_field(client) -> None:
    r = client.post("/localize/batch", json={"items": [{"problem": "p", "steps": ["1 = 1"]},
                                                        {"problem": "p", "steps": ["x", 3]}, {"problem": "p"}]})
    res = r.json()["results"]
    assert res[1]["error"]["message"] == "item 1, field 'steps.1': Input should be a valid string"
    assert res[2]["error"]["message"] == "item 2: give 'steps' (a list of strings) or 'proof' (a string)"
