"""Every route and every error path of the service, through TestClient, on the real pipeline."""

from __future__ import annotations

import json
from typing import Any

import pytest
from faithsieve.api.settings import ServiceSettings


def _error(r: Any, status: int, code: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "detail"}
    assert body["error"]["code"] == code, body
    assert body["error"]["message"]
    return body["error"]


# -- POST /localize ------------------------------------------------------------------------------


def test_localize_finds_first_error_with_evidence(client, proof):
    r = client.post("/localize", json=proof)
    assert r.status_code == 200, r.text
    v = r.json()
    assert list(v)[:3] == ["verdict", "first_error_step", "reason"]
    assert v["verdict"] == "error" and v["first_error_step"] == 2
    assert v["flag_scope"] == "first"  # step 1 ("5x = 25", an equation in its unknown) holds no obligation
    step2 = v["steps"][1]
    assert step2["status"] == "refuted"
    ev = next(e for e in step2["evidence"] if e["status"] == "refuted")
    start, end = ev["span"]
    assert proof["steps"][1][start:end] == ev["source"]
    assert ev["counterexample"]
    assert v["coverage"]["steps"] == 2
    assert v["timings"]["total_ms"] >= 0
    assert "sympy" in v["backends"] and "checkers" in v["backends"]
    assert r.headers["content-type"].startswith("application/json")
    assert r.headers["x-request-id"]


def test_localize_correct_proof_from_text(client):
    r = client.post("/localize", json={"problem": "Compute 2 + 3 and double it.",
                                       "proof": "1. 2 + 3 = 5\n2. 2 * 5 = 10\n3. The answer is 10."})
    assert r.status_code == 200, r.text
    v = r.json()
    assert v["verdict"] == "correct" and v["first_error_step"] is None
    assert len(v["steps"]) == 3


def test_localize_ignores_unknown_top_level_keys(client, proof):
    r = client.post("/localize", json={**proof, "id": "x1", "expected": {"verdict": "error"}})
    assert r.status_code == 200, r.text


def test_cache_hit_miss_and_off(client):
    body = {"problem": "cache test", "steps": ["3 + 4 = 7", "7 * 2 = 15"]}
    first = client.post("/localize", json=body)
    second = client.post("/localize", json=body)
    off = client.post("/localize", json={**body, "options": {"use_cache": False}})
    assert (first.headers["x-faithsieve-cache"], second.headers["x-faithsieve-cache"],
            off.headers["x-faithsieve-cache"]) == ("miss", "hit", "off")
    assert first.content == second.content
    assert off.json()["first_error_step"] == first.json()["first_error_step"] == 2


def test_integral_float_is_an_integer(client):
    body = {"problem": "p", "steps": ["1 = 1"], "options": {"obligation_time_limit_ms": 50.0, "time_limit_s": 1}}
    assert client.post("/localize", json=body).status_code == 200


def test_options_tighten_limits_and_select_checkers(client):
    body = {"problem": "p", "steps": ["2 + 2 = 5"],
            "options": {"time_limit_s": 1.0, "obligation_time_limit_ms": 50, "checkers": ["exact"]}}
    r = client.post("/localize", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["backends"]["checkers"] == "exact"
    assert r.json()["first_error_step"] == 1


def test_checker_not_enabled_on_server(make_client):
    with make_client(checkers=("exact",)) as c:
        err = _error(c.post("/localize", json={"problem": "p", "steps": ["1 = 1"], "options": {"checkers": ["z3"]}}),
                     422, "invalid_input")
        assert err["detail"] == {"field": "options.checkers"}


@pytest.mark.parametrize("body,field", [
    ({"problem": "p"}, "body"),
    ({"problem": "p", "steps": "1 + 1 = 2"}, "steps"),
    ({"problem": "p", "steps": [1, 2]}, "steps.0"),
    ({"problem": 3, "steps": ["1 = 1"]}, "problem"),
    ({"problem": "p", "proof": ["x"]}, "proof"),
    ({"problem": "p", "steps": ["1 = 1"], "options": {"time_limit_s": -1}}, "options.time_limit_s"),
    ({"problem": "p", "steps": ["1 = 1"], "options": {"checkers": ["lean"]}}, "options.checkers.0"),
    ({"problem": "p", "steps": ["1 = 1"], "options": {"bogus": 1}}, "options.#0"),  # a key the client made up: its position
    ({"problem": "p", "steps": ["1 = 1"], "options": {"use_cache": 1}}, "options.use_cache"),
    ({"problem": "p", "steps": ["1 = 1"], "options": {"obligation_time_limit_ms": True}}, "options.obligation_time_limit_ms"),
    ({"problem": "p", "steps": ["1 = 1"], "options": {"time_limit_s": "2"}}, "options.time_limit_s"),
    ([1, 2, 3], "body"),
    ("just a string", "body"),
    (None, "body"),
])
def test_invalid_input_names_the_field(client, body, field):
    r = client.post("/localize", content=json.dumps(body), headers={"content-type": "application/json"})
    err = _error(r, 422, "invalid_input")
    assert err["detail"][0]["field"] == field, err
    assert "input" not in err["detail"][0]


@pytest.mark.parametrize("body,field", [
    ({"problem": "p", "steps": []}, "steps"),
    ({"problem": "p", "proof": "   "}, "proof"),
])
def test_empty_proof_is_422_from_the_pipeline(client, body, field):
    err = _error(client.post("/localize", json=body), 422, "invalid_input")
    assert err["detail"] == {"field": field}


def test_empty_body_is_422(client):
    err = _error(client.post("/localize", content=b"", headers={"content-type": "application/json"}),
                 422, "invalid_input")
    assert err["detail"][0]["field"] == "body"


def test_lone_surrogate_is_422(client):
    r = client.post("/localize", content=b'{"problem": "p", "steps": ["x = \\ud800"]}',
                    headers={"content-type": "application/json"})
    err = _error(r, 422, "invalid_input")
    assert "surrogate" in err["message"]


@pytest.mark.parametrize("raw", [b"{bad json", b'{"problem": "p", "steps": ["1 = 1"]', b"\xff\xfe\x00garbage",
                                 b"[" * 100_000 + b"]" * 100_000])
def test_malformed_json_is_400(client, raw):
    _error(client.post("/localize", content=raw, headers={"content-type": "application/json"}), 400, "malformed_json")


def test_non_json_media_type_is_415(client, proof):
    _error(client.post("/localize", data={"problem": "p"}), 415, "unsupported_media_type")
    _error(client.post("/localize", content=json.dumps(proof), headers={"content-type": "text/plain"}),
           415, "unsupported_media_type")
    r = client.post("/localize", content=json.dumps(proof), headers={"content-type": "application/problem+json"})
    assert r.status_code == 200


def test_too_many_steps_and_too_long_step_are_413(client):
    err = _error(client.post("/localize", json={"problem": "p", "steps": ["1 = 1"] * 201}), 413, "input_too_large")
    assert err["detail"] == {"field": "steps"}
    err = _error(client.post("/localize", json={"problem": "p", "steps": ["1 = 1", "x" * 20_001]}),
                 413, "input_too_large")
    assert err["detail"] == {"field": "steps[1]"}


def test_body_over_limit_is_413_declared_and_streamed(make_client):
    with make_client(max_body_bytes=1000) as c:
        big = json.dumps({"problem": "p", "steps": ["1 = 1 " * 300]}).encode()
        err = _error(c.post("/localize", content=big, headers={"content-type": "application/json"}),
                     413, "input_too_large")
        assert err["detail"]["limit"] == 1000

        def chunks():  # no Content-Length: the streaming counter must stop it
            for i in range(0, len(big), 256):
                yield big[i:i + 256]

        _error(c.post("/localize", content=chunks(), headers={"content-type": "application/json"}),
               413, "input_too_large")
        assert c.post("/localize", json={"problem": "p", "steps": ["1 = 1"]}).status_code == 200


def test_unknown_route_and_wrong_method(client):
    _error(client.get("/nope"), 404, "not_found")
    r = client.get("/localize")
    _error(r, 405, "method_not_allowed")
    assert "POST" in r.headers["allow"]
    _error(client.delete("/healthz"), 405, "method_not_allowed")


# -- POST /localize/batch ------------------------------------------------------------------------


def test_batch_results_in_order_and_bad_items_isolated(client):
    items = [
        {"problem": "p", "steps": ["1 + 1 = 3"]},
        5,
        {"problem": "p", "steps": [1]},
        {"problem": "p", "proof": "1. 2 + 2 = 4\n2. 3 + 3 = 7"},
        {"problem": "p", "steps": ["1 = 1"] * 300},
        {"problem": "p", "steps": ["2 + 2 = 4"]},
    ]
    r = client.post("/localize/batch", json={"items": items})
    assert r.status_code == 200, r.text
    res = r.json()["results"]
    assert [x["index"] for x in res] == list(range(len(items)))
    assert [x["status"] for x in res] == [200, 422, 422, 200, 413, 200]
    assert res[0]["result"]["first_error_step"] == 1 and res[0]["error"] is None
    assert res[1]["error"]["code"] == "invalid_input" and res[1]["result"] is None
    assert res[2]["error"]["detail"][0]["field"] == "steps.0"
    assert res[3]["result"]["first_error_step"] == 2
    assert res[4]["error"]["code"] == "input_too_large"
    assert res[5]["result"]["verdict"] == "correct"
    assert r.json()["counts"] == {"correct": 1, "error": 2, "failed": 3}


def test_batch_options_apply_to_items_without_their_own(client):
    r = client.post("/localize/batch", json={
        "items": [{"problem": "p", "steps": ["5 - 2 = 3"]},
                  {"problem": "p", "steps": ["5 - 2 = 3"], "options": {"checkers": ["exact", "z3"]}}],
        "options": {"checkers": ["exact"], "use_cache": False}})
    assert r.status_code == 200, r.text
    res = r.json()["results"]
    assert res[0]["result"]["backends"]["checkers"] == "exact"
    assert res[1]["result"]["backends"]["checkers"] == "exact,z3"


def test_batch_limits(client):
    err = _error(client.post("/localize/batch", json={"items": [{"problem": "p", "steps": ["1 = 1"]}] * 9}),
                 413, "input_too_large")
    assert err["detail"]["field"] == "items"
    _error(client.post("/localize/batch", json={"items": []}), 422, "invalid_input")
    _error(client.post("/localize/batch", json={"items": "no"}), 422, "invalid_input")
    _error(client.post("/localize/batch", json={"problem": "p", "steps": ["1 = 1"]}), 422, "invalid_input")


# -- operations ----------------------------------------------------------------------------------


def test_healthz_readyz_version_limits(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["status"] == "ready" and ready.json()["workers"] == 1
    v = client.get("/version").json()
    assert v["service"] == "faithsieve" and v["api_version"] == "1" and "z3-solver" in v["backends"]
    limits = client.get("/limits").json()
    assert limits["max_steps"] == 200 and limits["max_body_bytes"] == 1_048_576 and limits["workers"] == 1


def test_not_ready_before_the_lifespan_ran():
    from faithsieve.api.app import create_app
    from fastapi.testclient import TestClient

    c = TestClient(create_app(ServiceSettings(workers=1)))  # no `with`: the lifespan does not run
    _error(c.get("/readyz"), 503, "not_ready")
    _error(c.post("/localize", json={"problem": "p", "steps": ["1 = 1"]}), 503, "not_ready")
    assert c.get("/healthz").status_code == 200


def test_openapi_and_docs(client):
    spec = client.get("/openapi.json").json()
    assert {"/localize", "/localize/batch", "/healthz", "/readyz", "/version", "/limits", "/metrics"} <= set(spec["paths"])
    schemas = spec["components"]["schemas"]
    assert {"LocalizeRequest", "Verdict", "ErrorBody", "BatchResponse"} <= set(schemas)
    responses = spec["paths"]["/localize"]["post"]["responses"]
    assert {"200", "400", "413", "422", "429", "504"} <= set(responses)
    req = schemas["LocalizeRequest"]
    steps = next(b for b in req["properties"]["steps"]["anyOf"] if b.get("type") == "array")
    assert (steps["minItems"], steps["maxItems"], steps["items"]["maxLength"]) == (1, 200, 20_000)
    assert schemas["BatchRequest"]["properties"]["items"]["maxItems"] == 8
    assert req["properties"]["steps"]["description"]  # field docstrings reach the schema
    docs = client.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()


def test_metrics_exposition(client, proof):
    client.post("/localize", json={**proof, "options": {"use_cache": False}})
    client.post("/localize", json={"problem": "p"})
    r = client.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = r.text
    for name in ("faithsieve_http_requests_total", "faithsieve_http_request_duration_seconds_bucket",
                 "faithsieve_evidence_total", "faithsieve_proofs_total", "faithsieve_timeouts_total",
                 "faithsieve_workers_up 1", "faithsieve_pending_capacity 8"):
        assert name in text, name
    assert 'faithsieve_http_requests_total{route="/localize",method="POST",status="200"}' in text
    assert 'faithsieve_http_requests_total{route="/localize",method="POST",status="422"}' in text
    assert 'faithsieve_evidence_total{status="refuted"}' in text
    assert 'faithsieve_proofs_total{outcome="error"}' in text
    for line in text.splitlines():  # every sample line parses as `name{labels} number`
        if line and not line.startswith("#"):
            float(line.rsplit(" ", 1)[1].replace("+Inf", "inf"))


# -- access --------------------------------------------------------------------------------------


def test_api_key(make_client, proof):
    with make_client(api_key="s3cret-key") as c:
        _error(c.post("/localize", json=proof), 401, "unauthorized")
        r = c.post("/localize", json=proof, headers={"X-API-Key": "wrong"})
        _error(r, 401, "unauthorized")
        assert r.headers["www-authenticate"] == "Bearer"
        _error(c.post("/localize", json=proof, headers={"X-API-Key": "s3cret-ke\u00e9".encode("latin-1")}), 401, "unauthorized")
        assert c.post("/localize", json=proof, headers={"X-API-Key": "s3cret-key"}).status_code == 200
        assert c.post("/localize", json=proof, headers={"Authorization": "Bearer s3cret-key"}).status_code == 200
        assert c.post("/localize/batch", json={"items": [proof]}).status_code == 401
        assert c.post("/get_reward", json={"query": ["1 + 1 = 2. #### 2"]}).status_code == 401
        assert c.get("/metrics").status_code == 401
        assert c.get("/metrics", headers={"X-API-Key": "s3cret-key"}).status_code == 200
        assert c.get("/healthz").status_code == 200 and c.get("/readyz").status_code == 200
        spec = c.get("/openapi.json").json()
        assert "APIKeyHeader" in spec["components"]["securitySchemes"]


def test_cors_off_by_default_and_on_when_configured(client, make_client):
    pre = {"Origin": "https://example.org", "Access-Control-Request-Method": "POST"}
    r = client.get("/healthz", headers={"Origin": "https://example.org"})
    assert "access-control-allow-origin" not in r.headers
    assert "access-control-allow-origin" not in client.options("/localize", headers=pre).headers
    with make_client(cors_origins=("https://example.org",)) as c:
        r = c.options("/localize", headers=pre)
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "https://example.org"
        r = c.get("/healthz", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in r.headers
