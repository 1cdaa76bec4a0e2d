"""Fixtures for the service tests: apps built with explicit settings, one worker each (the
machine is small), the real pipeline or the diagnostic ``sleep_job``."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import uvicorn
from faithsieve.api.app import create_app
from faithsieve.api.server import uvicorn_config
from faithsieve.api.settings import ServiceSettings
from faithsieve.api.worker import sleep_job
from fastapi.testclient import TestClient

PROOF = {"problem": "Solve 5x - 7 = 18.", "steps": ["Add 7 to both sides: 5x = 25.", "Divide by 5: x = 25 / 5 = 6."]}
"""A two-step proof whose step 2 is wrong (25 / 5 = 6: closed arithmetic, a flag kind that decides)."""


def settings(**overrides: Any) -> ServiceSettings:
    base: dict[str, Any] = {"workers": 1, "max_pending": 8, "batch_max_items": 8}
    base.update(overrides)
    return ServiceSettings(**base)


@contextmanager
def client_for(job: Callable[..., Any] | None = None, **overrides: Any) -> Iterator[TestClient]:
    app = create_app(settings(**overrides), job=job)
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    """The real pipeline, default limits, one worker."""
    with client_for() as c:
        yield c


@pytest.fixture(scope="module")
def sleepy() -> Iterator[TestClient]:
    """``sleep_job`` (the problem text is the seconds to sleep), one worker, tight limits:
    checking budget 0.3 s, request limit 1.5 s, at most 2 admitted."""
    with client_for(sleep_job, proof_time_limit_s=0.3, request_time_limit_s=1.5, max_pending=2,
                    batch_max_items=2, batch_time_limit_s=2.0) as c:
        yield c


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def live_server(job: Callable[..., Any] | None = None, **overrides: Any) -> Iterator[str]:
    """A real uvicorn server on 127.0.0.1 (a free port) in a thread, configured as ``faithsieve serve``
    configures it; yields its base URL."""
    app_settings = settings(**overrides)
    app = create_app(app_settings, job=job)
    port = free_port()
    server = uvicorn.Server(uvicorn_config(app, app_settings, app.state.metrics, host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


@pytest.fixture
def make_client() -> Callable[..., Any]:
    """``make_client(job=None, **settings)``: a context manager yielding a TestClient."""
    return client_for


@pytest.fixture
def make_server() -> Callable[..., Any]:
    """``make_server(job=None, **settings)``: a context manager yielding a live server's base URL."""
    return live_server


@pytest.fixture
def proof() -> dict[str, Any]:
    return {k: (list(v) if isinstance(v, list) else v) for k, v in PROOF.items()}


@pytest.fixture(scope="module")
def make_server_module(request: pytest.FixtureRequest) -> Iterator[str]:
    """A live server (real pipeline, one worker) shared by a module's tests, with the settings in
    the module's ``SERVER_SETTINGS`` if it has one."""
    with live_server(**getattr(request.module, "SERVER_SETTINGS", {})) as base:
        yield base
