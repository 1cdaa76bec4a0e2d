"""Error bodies never echo the client's text; credentials and framing edge cases; X-Request-ID
rules; the 422 ``resource_limit`` path."""

from __future__ import annotations

import re
import socket

import pytest
from faithsieve.api import worker as worker_mod
from faithsieve.api.handler import response_for
from faithsieve.api.worker import sleep_job

EVIL = "<script>alert(1)</script>"
KEY = {"X-API-Key": "k"}


def _client(make_client, **kw):
    return make_client(sleep_job, api_key="k", **kw)


def _assert_no_echo(text: str) -> None:
    assert "script" not in text and "alert" not in text, text


def test_unknown_option_key_is_a_position(make_client) -> None:
    with _client(make_client) as c:
        r = c.post("/localize", json={"problem": "0", "steps": ["x"], "options": {"use_cache": False, EVIL: 1}},
                   headers=KEY)
        assert r.status_code == 422
        _assert_no_echo(r.text)
        assert r.json()["error"]["detail"][0]["field"] == "options.#1"  # the second key of "options"
        r = c.post("/localize/batch", json={"items": [{"problem": "0", "steps": ["x"], "options": {EVIL: 1}}]},
                   headers=KEY)
        item = r.json()["results"][0]
        assert item["status"] == 422 and item["error"]["message"].startswith("item 0, field 'options.#0': ")
        _assert_no_echo(r.text)
        # known field names and list positions are kept
        r = c.post("/localize", json={"problem": "0", "steps": ["x", {EVIL: 1}]}, headers=KEY)
        assert r.json()["error"]["detail"][0]["field"] == "steps.1"
        _assert_no_echo(r.text)


def test_content_type_is_not_echoed(make_client) -> None:
    with _client(make_client) as c:
        r = c.post("/localize", content=b"{}", headers={**KEY, "Content-Type": f"text/{EVIL}"})
        assert r.status_code == 415
        _assert_no_echo(r.text)


def test_empty_api_key_header_does_not_hide_a_valid_bearer(make_client) -> None:
    body = {"problem": "0", "steps": ["x"]}
    with _client(make_client) as c:
        assert c.post("/localize", json=body, headers={"X-API-Key": "", "Authorization": "Bearer k"}).status_code == 200
        assert c.post("/localize", json=body, headers={"X-API-Key": "k", "Authorization": "Bearer no"}).status_code == 200
        assert c.post("/localize", json=body, headers={"X-API-Key": "", "Authorization": "Bearer "}).status_code == 401
        assert c.post("/localize", json=body, headers={"X-API-Key": "no"}).status_code == 401
        assert c.post("/localize", json=body, headers={"Authorization": "Basic k"}).status_code == 401


def test_content_length_with_chunked_encoding_is_refused(make_server) -> None:
    with make_server(sleep_job) as base:
        host, port = base.removeprefix("http://").split(":")
        body = b'{"problem":"0","steps":["x"]}'
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(b"POST /localize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n"
                      % (len(body), len(body), body))
            answer = s.recv(65536)
        assert answer.startswith(b"HTTP/1.1 400"), answer[:200]  # by the HTTP parser or by the guard


def test_guard_refuses_both_framings_whatever_the_parser_lets_through(make_client) -> None:
    with _client(make_client) as c:
        r = c.post("/localize", content=b'{"problem":"0","steps":["x"]}',
                   headers={**KEY, "Content-Type": "application/json", "Transfer-Encoding": "chunked",
                            "Content-Length": "29"})
        assert r.status_code == 400 and r.json()["error"]["code"] == "bad_request"


@pytest.mark.parametrize(("given", "echoed"), [
    ("abc-123", True), ("trace:9f.2/x+y=", True), ("a" * 64, True),
    ("a" * 65, False), (EVIL, False), ("has space", False), ("", False), ("é", False),
])
def test_request_id_echo_rules(client, given: str, echoed: bool) -> None:
    headers = {"X-Request-ID": given.encode("utf-8")} if given else {}
    rid = client.get("/healthz", headers=headers).headers["x-request-id"]
    if echoed:
        assert rid == given
    else:
        assert re.fullmatch(r"[0-9a-f]{32}", rid)


@pytest.mark.parametrize(("exc", "message"), [
    (MemoryError, "memory limit"), (RecursionError, "nested too deeply"),
])
def test_resource_exhaustion_is_422_resource_limit(monkeypatch, exc: type[BaseException], message: str) -> None:
    import faithsieve.pipeline

    def explode(*_a, **_k):
        raise exc()

    monkeypatch.setattr(faithsieve.pipeline, "localize", explode)
    result = worker_mod.localize_job({"problem": "p", "steps": ["1 = 1"]}, worker_mod.Settings.model_construct())
    assert result.status == 422 and result.error is not None
    assert result.error is not None and result.error.code == "resource_limit" and message in result.error.message
    # and the service answers it as such
    from faithsieve.api.service import job_error

    response = response_for(job_error(result))
    assert response.status_code == 422
    assert b'"resource_limit"' in response.body


BIG = [{"problem": "Solve x^2 - 3x + 2 = 0.", "steps": ["The solutions are x = 10^{5000} and x = 2."]},
       {"problem": "p", "steps": ["Let a = 10^{5000}.", "Then a + 1 = 2."]},
       {"problem": "p", "steps": ["$\\gcd(10^{5000}, 10^{4999}) = 3$"]}]


def test_integers_past_the_str_limit_are_answered_on_every_route(client) -> None:
    """Python refuses ``str`` of an integer past 4,300 digits: evidence and trees print such numbers
    within bounds (``show_number``), never a 500 (issue 38)."""
    for body in BIG:
        r = client.post("/localize", json=body)
        assert r.status_code == 200, r.text[:300]
        assert len(r.text) < 30_000
        t = client.post("/web/tree", json=body)
        assert t.status_code == 200, t.text[:300]
    b = client.post("/localize/batch", json={"items": BIG})
    assert b.status_code == 200, b.text[:300]
    assert all(it.get("error") is None for it in b.json()["results"]), b.text[:500]
