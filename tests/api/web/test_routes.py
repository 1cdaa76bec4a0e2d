"""The workbench's HTTP side (no browser): the page and its assets, examples, modes, the tree route."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from faithsieve.api.app import create_app
from faithsieve.api.routers.workbench import CSP, examples_index
from fastapi.testclient import TestClient

from tests.api.web.support import SLIP, web_settings

STATIC = resources.files("faithsieve.api") / "static" / "workbench"
EXAMPLES = Path(str(resources.files("faithsieve.datasets") / "examples"))


def test_page_is_served_with_a_policy_that_forbids_other_origins(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert r.headers["content-security-policy"] == CSP
    assert "default-src 'none'" in CSP and "connect-src 'self'" in CSP and "http" not in CSP
    assert "<title>FaithSieve workbench</title>" in r.text


def test_every_asset_the_page_names_is_shipped_and_local(client: TestClient) -> None:
    page = client.get("/").text
    refs = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert refs and all(ref.startswith("/web/static/") or ref.startswith("data:") for ref in refs)
    names = {p.name for p in STATIC.iterdir()}
    # every module import inside the scripts is local too
    for name in names:
        text = (STATIC / name).read_text(encoding="utf-8")
        for target in re.findall(r'from "([^"]+)"', text):
            assert target.startswith("./") and target[2:] in names, (name, target)
        # no URL anywhere except the SVG namespace name (an identifier, never fetched)
        urls = set(re.findall(r"https?://[^\s\"'`)]+", text)) - {"http://www.w3.org/2000/svg"}
        assert not urls, (name, urls)
    for ref in refs:
        if ref.startswith("/web/static/"):
            r = client.get(ref)
            assert r.status_code == 200, ref
            assert r.headers["content-security-policy"] == CSP


def test_the_page_weighs_under_its_budget() -> None:
    """docs/workbench.md: the page and all its assets stay under 64 KiB."""
    total = sum(len((STATIC / p.name).read_bytes()) for p in STATIC.iterdir())
    assert total < 64 * 1024, total


@pytest.mark.parametrize("name", ["../routes.py", "..%2Froutes.py", "main.py", "MAIN.JS", "x" * 60 + ".js", "nope.js"])
def test_assets_outside_the_static_folder_or_unknown_are_404(client: TestClient, name: str) -> None:
    r = client.get(f"/web/static/{name}")
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "not_found"


def test_examples_are_the_shipped_files(client: TestClient) -> None:
    listed = client.get("/web/examples").json()["examples"]
    assert [e["name"] for e in listed] == sorted(p.stem for p in EXAMPLES.glob("*.json"))
    one = client.get("/web/examples/37_wrong_linear_solution").json()
    assert one == json.loads((EXAMPLES / "37_wrong_linear_solution.json").read_text(encoding="utf-8"))
    assert listed == examples_index()
    for bad in ("nope", "..%2F..%2Fpyproject", "37_wrong_linear_solution.json"):
        r = client.get(f"/web/examples/{bad}")
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


def test_modes_other_than_offline_are_offered_greyed_with_the_reason(client: TestClient) -> None:
    modes = {m["mode"]: m for m in client.get("/web/config").json()["modes"]}
    assert modes["offline"]["available"] is True
    for name in ("llm", "judge"):
        assert modes[name]["available"] is False
        assert "FAITHSIEVE_LLM_BASE_URL" in modes[name]["reason"]
    app = create_app(web_settings(llm_base_url="http://127.0.0.1:9/v1", llm_model="m"))
    with TestClient(app) as c:
        modes = {m["mode"]: m for m in c.get("/web/config").json()["modes"]}
    assert modes["llm"]["available"] is False and "offline sieve only" in modes["llm"]["reason"]


def test_tree_matches_the_verdict_of_every_shipped_example(client: TestClient) -> None:
    """The tree's EdgeUnits and obligations are those of the verdict (ids, order, step texts)."""
    for path in sorted(EXAMPLES.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        body = {k: doc[k] for k in ("problem", "proof", "steps") if k in doc}
        verdict = client.post("/localize", json=body).json()
        tree = client.post("/web/tree", json=body).json()
        edges = [e for s in verdict["steps"] for e in s["edges"]]
        assert tree["edges"] == [e["id"] for e in edges], path.name
        obligations = {ev["obligation"] for s in verdict["steps"] for ev in s["evidence"]}
        assert obligations == set(tree["obligations"]), path.name
        assert [s["index"] for s in tree["steps"]] == [s["step"] for s in verdict["steps"]]
        for e in edges:  # every edge's parent state exists, and its span lies in its step's text
            assert e["parent"] in tree["states"]
            text = tree["steps"][e["step"] - 1]["text"]
            assert 0 <= e["span"][0] <= e["span"][1] <= len(text)


def test_tree_of_the_slip_has_states_with_facts_and_goal(client: TestClient) -> None:
    tree = client.post("/web/tree", json=SLIP).json()
    assert tree["obligations"]["o0"] == "e1"  # step 1 restates the equation: no obligation; step 2's solution
    s1 = tree["states"]["s1"]
    assert "2 * x + 3 = 11" in s1["hypotheses"]
    assert s1["goal"] == SLIP["problem"] and s1["goal_from"] == "s0"
    assert tree["steps"][1]["text"] == "Solving, we get x = 5."


def test_tree_errors_are_the_service_error_body(client: TestClient) -> None:
    r = client.post("/web/tree", json={"problem": "p", "proof": "   "})
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_input"
    r = client.post("/web/tree", content=b"{", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "malformed_json"
    r = client.post("/web/tree", content=b"{}", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415
    r = client.post("/web/tree", json={"problem": "p", "steps": ["x"] * 201})
    assert r.status_code == 413 and r.json()["error"]["code"] == "input_too_large"


def test_tree_body_limit_and_api_key_are_those_of_localize() -> None:
    app = create_app(web_settings(max_body_bytes=2000, api_key="k3y"))
    with TestClient(app, raise_server_exceptions=False) as c:
        assert c.get("/").status_code == 200  # the page itself is public
        assert c.get("/web/config").json()["api_key_required"] is True
        r = c.post("/web/tree", json=SLIP)
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
        assert c.post("/web/tree", json=SLIP, headers={"X-API-Key": "k3y"}).status_code == 200
        big = {"problem": "p", "proof": "1 + 1 = 2. " * 200}
        r = c.post("/web/tree", json=big, headers={"X-API-Key": "k3y"})
        assert r.status_code == 413 and r.json()["error"]["code"] == "input_too_large"


def test_workbench_routes_stay_out_of_the_public_schema(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert not [p for p in paths if p == "/" or p.startswith("/web")]


def _adversarial_cases() -> list[Any]:
    path = Path(__file__).parents[2] / "adversarial" / "corpus.py"
    spec = importlib.util.spec_from_file_location("faithsieve_web_adversarial_corpus", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return [c for c in module.load_cases() if c.id not in module.XFAIL]


def test_hostile_inputs_to_the_tree_are_answered_2xx_or_4xx_in_time(client: TestClient) -> None:
    """The adversarial corpus of ``POST /localize`` through ``POST /web/tree``: no 5xx, no hang."""
    limit = web_settings().request_time_limit_s
    cases = _adversarial_cases()
    assert len(cases) >= 100
    for case in cases:
        t0 = time.monotonic()
        r = client.post("/web/tree", content=case.body, headers={"content-type": "application/json"})
        took = time.monotonic() - t0
        assert r.status_code < 500, (case.id, r.status_code, r.text[:200])
        assert took < limit, (case.id, took)
        if r.status_code >= 400:
            assert r.json()["error"]["code"], case.id


def test_facts_per_state_are_capped_to_the_latest(monkeypatch: pytest.MonkeyPatch) -> None:
    from faithsieve.api.workbench import tree

    from faithsieve.core.settings import Settings

    doc = json.loads((EXAMPLES / "15_case_parity_n2_plus_n.json").read_text(encoding="utf-8"))
    full = tree.tree_document(doc, Settings())["states"]["s12"]
    assert full["facts_total"] == len(full["hypotheses"]) == 3
    monkeypatch.setattr(tree, "MAX_FACTS", 1)
    capped = tree.tree_document(doc, Settings())["states"]["s12"]
    assert capped["facts_total"] == 3 and capped["hypotheses"] == full["hypotheses"][-1:]


def test_the_mode_hint_names_what_is_missing_not_what_is_set() -> None:
    """With only one of the endpoint's two settings given, the hint names the missing one (it said
    "none is configured" and named the one that was set); with both, it says why the service still
    runs offline."""
    from faithsieve.api.routers.workbench import mode_choices

    from tests.api.web.support import web_settings

    only_url = {m["mode"]: m["reason"] for m in mode_choices(web_settings(llm_base_url="http://127.0.0.1:9/v1"))}
    assert only_url["llm"] == "needs a language-model endpoint: FAITHSIEVE_LLM_BASE_URL is set, FAITHSIEVE_LLM_MODEL is not"
    only_model = {m["mode"]: m["reason"] for m in mode_choices(web_settings(llm_model="m"))}
    assert "FAITHSIEVE_LLM_MODEL is set, FAITHSIEVE_LLM_BASE_URL is not" in only_model["judge"]
    both = {m["mode"]: m["reason"] for m in mode_choices(web_settings(llm_base_url="http://x/v1", llm_model="m"))}
    assert "FAITHSIEVE_LLM" not in both["llm"] and "offline sieve only" in both["llm"]
