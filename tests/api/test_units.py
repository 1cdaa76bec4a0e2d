"""The service's pure parts, table-tested: error mapping, metrics exposition, cache, settings;
and how internal failures (a job that raises, a worker that dies) are answered."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest
from faithsieve.api.app import effective_settings
from faithsieve.api.cache import VerdictCache, cache_key
from faithsieve.api.errors import RequestTimeout, Saturated, WorkerFailed
from faithsieve.api.handler import response_for
from faithsieve.api.metrics import Counter, Histogram, Registry, ServiceMetrics
from faithsieve.api.models import LocalizeOptions
from faithsieve.api.pool import WorkerPool
from faithsieve.api.settings import ServiceSettings
from faithsieve.api.worker import localize_job, sleep_job
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError
from starlette.exceptions import HTTPException

from faithsieve.core.errors import (
    EvaluationLimit,
    InputError,
    InputTooLarge,
)
from faithsieve.core.settings import Settings


@pytest.mark.parametrize("exc,status,code", [
    (InputError("bad", {"field": "steps"}), 422, "invalid_input"),
    (InputTooLarge("big"), 413, "input_too_large"),
    (EvaluationLimit("huge"), 422, "evaluation_limit"),
    (Saturated("full", headers={"Retry-After": "3"}), 429, "saturated"),
    (RequestTimeout("late"), 504, "timeout"),
    (WorkerFailed("died"), 500, "internal_error"),
    (HTTPException(404), 404, "not_found"),
    (HTTPException(405, headers={"Allow": "POST"}), 405, "method_not_allowed"),
    (HTTPException(400, "There was an error parsing the body"), 400, "malformed_json"),
    (RequestValidationError([{"type": "json_invalid", "loc": ("body", 3), "msg": "x", "ctx": {"error": "E"}}]),
     400, "malformed_json"),
    (RequestValidationError([{"type": "missing", "loc": ("body", "steps"), "msg": "Field required",
                              "input": "x" * 10_000}]), 422, "invalid_input"),
    (RuntimeError("boom"), 500, "internal_error"),
])
def test_one_mapping_for_every_error(exc, status, code):
    r = response_for(exc)
    assert r.status_code == status
    import json

    body = json.loads(r.body)
    assert body["error"]["code"] == code
    assert "x" * 100 not in r.body.decode()  # inputs are never echoed
    if isinstance(exc, Saturated):
        assert r.headers["retry-after"] == "3"
    if status == 405:
        assert r.headers["allow"] == "POST"
    if isinstance(exc, RuntimeError):
        assert "boom" not in body["error"]["message"]  # internals are logged, not sent


def test_metrics_exposition_format():
    reg = Registry()
    c = reg.add(Counter("t_total", "A counter.", ("route",)))
    h = reg.add(Histogram("t_seconds", "A histogram.", ("route",), buckets=(0.1, 1.0)))
    c.inc('/a"b\\c\nd')
    c.inc("/x", amount=2)
    for v in (0.05, 0.5, 5.0):
        h.observe(v, "/x")
    text = reg.render()
    assert '# TYPE t_total counter' in text and '# HELP t_seconds A histogram.' in text
    assert 't_total{route="/a\\"b\\\\c\\nd"} 1' in text
    assert 't_total{route="/x"} 2' in text
    assert 't_seconds_bucket{route="/x",le="0.1"} 1' in text
    assert 't_seconds_bucket{route="/x",le="1"} 2' in text
    assert 't_seconds_bucket{route="/x",le="+Inf"} 3' in text
    assert 't_seconds_count{route="/x"} 3' in text and 't_seconds_sum{route="/x"} 5.55' in text
    assert text.endswith("\n")
    assert "faithsieve_client_disconnects_total 0" in ServiceMetrics().render()


def test_cache_is_lru_and_bounded_in_entries_and_bytes():
    c = VerdictCache(max_entries=2, max_bytes=10)
    c.put("a", b"1234", "correct", {})
    c.put("b", b"5678", "error", {})
    assert c.get("a") is not None  # a is now most recent
    c.put("c", b"9", "correct", {})
    assert c.get("b") is None and c.get("a") is not None and len(c) == 2
    c.put("d", b"0123456789", "correct", {})  # 10 bytes: evicts everything else
    assert len(c) == 1 and c.bytes == 10
    c.put("e", b"x" * 11, "correct", {})  # larger than the whole budget: not stored
    assert c.get("e") is None
    assert not VerdictCache(0, 100).enabled


def test_cache_key_depends_on_input_and_settings():
    data = {"problem": "p", "steps": ["1 = 1"]}
    s = Settings()
    assert cache_key(data, s) == cache_key(dict(data), Settings())
    assert cache_key(data, s) != cache_key({**data, "steps": ["1 = 2"]}, s)
    assert cache_key(data, s) != cache_key(data, s.model_copy(update={"max_exponent": 5}))


def test_effective_settings_only_tighten():
    base = Settings()
    assert effective_settings(base, None) is base
    s = effective_settings(base, LocalizeOptions(time_limit_s=999, obligation_time_limit_ms=10, checkers=("z3", "exact")))
    assert s.proof_time_limit_s == base.proof_time_limit_s
    assert s.obligation_time_limit_ms == 10
    assert s.checkers == ("exact", "z3")  # the server's order
    with pytest.raises(InputError):
        effective_settings(Settings(checkers=("exact",)), LocalizeOptions(checkers=("sympy",)))


def test_service_settings_validation_and_pipeline_part(monkeypatch):
    with pytest.raises(ValidationError, match="request_time_limit_s"):
        ServiceSettings(proof_time_limit_s=5, request_time_limit_s=5)
    s = ServiceSettings(max_pending=4, batch_max_items=32, api_key="secret")
    assert s.batch_limit == 4
    assert "secret" not in repr(s)
    p = s.pipeline_settings()
    assert type(p) is Settings and not hasattr(p, "api_key")
    assert p.max_steps == s.max_steps
    monkeypatch.setenv("FAITHSIEVE_CORS_ORIGINS", '["https://a.example"]')
    monkeypatch.setenv("FAITHSIEVE_WORKERS", "3")
    env = ServiceSettings()
    assert env.cors_origins == ("https://a.example",) and env.workers == 3


def test_localize_job_answers_errors_as_values():
    ok = localize_job({"problem": "p", "steps": ["2 + 2 = 5"]}, Settings())
    assert ok.status == 200 and ok.verdict == "error" and ok.evidence.get("refuted", 0) >= 1
    bad = localize_job({"problem": "p", "steps": []}, Settings())
    assert bad.status == 422 and bad.error and bad.error.code == "invalid_input"
    big = localize_job({"problem": "p", "steps": ["x"] * 500}, Settings())
    assert big.status == 413


def test_a_job_that_raises_is_a_json_500(make_client):
    # divmod(dict, Settings) raises TypeError in the worker: stands in for a broken job.
    with make_client(job=divmod) as c:
        r = c.post("/localize", json={"problem": "p", "steps": ["1 = 1"]})
        assert r.status_code == 500
        assert r.json()["error"]["code"] == "internal_error"
        assert c.get("/readyz").status_code == 200  # the worker survived


def test_a_worker_that_dies_is_replaced():
    async def scenario() -> None:
        metrics = ServiceMetrics()
        pool = WorkerPool(1, 4, 0, metrics, sleep_job)
        await pool.start()
        try:
            loop = asyncio.get_running_loop()
            job = asyncio.ensure_future(pool.run({"problem": "30"}, Settings(), loop.time() + 60, 60))
            await asyncio.sleep(0.3)
            os.kill(pool._slots[0].pid, signal.SIGKILL)  # a segfault, an OOM kill
            with pytest.raises(WorkerFailed):
                await job
            assert metrics.restarts.get("crashed") == 1
            res = await pool.run({"problem": "0"}, Settings(), loop.time() + 20, 20)
            assert res.status == 200
        finally:
            await pool.close()

    asyncio.run(scenario())
