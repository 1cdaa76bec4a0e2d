"""``faithsieve doctor``: on this machine (no Lean) it names what is missing and exits 0."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from faithsieve.cli import main
from faithsieve.core.settings import Settings
from faithsieve.doctor import render_text, run_doctor

KEY = "sk-doctor-secret-987654321"


@pytest.fixture
def bare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No Lean, no FAITHSIEVE settings, an empty HOME."""
    import os

    for var in [v for v in os.environ if v.startswith("FAITHSIEVE_")]:
        monkeypatch.delenv(var)
    home = tmp_path / "home"
    home.mkdir()
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ELAN_HOME", str(tmp_path / "no-elan"))
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setattr("faithsieve.lean.detect._lean_interact_cache", lambda: None)
    return home


class FakeModels:
    """``GET /v1/models`` (and a ``/health``), recording the Authorization header."""

    def __init__(self, status: int = 200) -> None:
        self.auth: list[str | None] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_GET(self) -> None:
                fake.auth.append(self.headers.get("Authorization"))
                body = json.dumps({"object": "list", "data": [{"id": "smollm2", "object": "model"}]}).encode()
                code = status if self.path == "/v1/models" else (200 if self.path == "/health" else 404)
                self.send_response(code)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def models() -> Iterator[FakeModels]:
    s = FakeModels()
    yield s
    s.close()


def test_cli_on_a_machine_without_lean(bare: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    import httpx

    waited: list[str] = []  # what could make the doctor wait: a network probe, a program run

    def no_request(self: object, request: httpx.Request, **kwargs: object) -> httpx.Response:
        waited.append(str(request.url))
        raise httpx.ConnectError("no network in this test")

    real_popen = subprocess.Popen.__init__

    def record_popen(self: subprocess.Popen[bytes], args: object, *rest: object, **kwargs: object) -> None:
        waited.append(str(args))
        real_popen(self, args, *rest, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(httpx.Client, "send", no_request)
    monkeypatch.setattr(subprocess.Popen, "__init__", record_popen)
    started = time.monotonic()
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    # nothing configured and no Lean on PATH: nothing probed, nothing run, so nothing to wait on (the check
    # that used to be a 5 s wall bound, the HTTP probe's limit); the bound left is a generous hang guard
    assert waited == []
    assert time.monotonic() - started < 30.0
    lines = {line.split()[1]: line for line in out.splitlines()[1:] if line.startswith("  [")}
    assert lines["z3"].startswith("  [ok]") and "x = 2" in lines["z3"]
    assert lines["sympy"].startswith("  [ok]")
    assert lines["llm"].startswith("  [off]")
    assert lines["lean"].startswith("  [missing]") and "`lean` not on PATH" in lines["lean"]
    assert lines["mathlib"].startswith("  [missing]")
    assert lines["lean-repl"].startswith("  [missing]")
    assert lines["lean-server"].startswith("  [off]")
    assert "fails fast" in lines["backend"] and "z3" in lines["backend"]
    assert list(bare.iterdir()) == []


def test_json_report(bare: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    status = {c["name"]: c["status"] for c in data["checks"]}
    from faithsieve.lean.local import lean_interact_problem

    interact = "ok" if lean_interact_problem() is None else "missing"  # installed with the lean extra, or not
    assert status == {"z3": "ok", "sympy": "ok", "llm": "off", "lean": "missing", "mathlib": "missing",
                      "lean-repl": "missing", "lean-interact": interact, "lean-memory": "ok", "lean-server": "off",
                      "backend": "off"}
    assert data["checks"][0]["details"]["version"]
    memory = next(c for c in data["checks"] if c["name"] == "lean-memory")
    assert memory["details"] == {"repl_mb": 16384, "wanted_mb": 16384}  # this machine: no hard address-space limit
    assert "the Lean REPL gets 16384 MiB" in memory["summary"]


def test_strict_fails_only_when_something_configured_is_broken(bare: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--strict"]) == 0  # nothing configured: nothing broken
    monkeypatch.setenv("FAITHSIEVE_LEAN_BACKEND", "local")
    assert main(["doctor"]) == 0
    assert main(["doctor", "--strict"]) == 1
    out = capsys.readouterr().out
    assert "[fail]    lean " in out and "lean_backend=local fails fast" in out


def test_llm_endpoint_probe(bare: Path, models: FakeModels, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", KEY)
    s = Settings(llm_base_url=f"{models.url}/v1", llm_model="smollm2", llm_api_key_env="MY_KEY")
    report = run_doctor(s)
    llm = report.get("llm")
    assert llm.status == "ok" and "reachable" in llm.summary and "model smollm2" in llm.summary
    assert models.auth == [f"Bearer {KEY}"]
    assert KEY not in report.model_dump_json() and KEY not in render_text(report)


def test_llm_model_not_listed_is_said(bare: Path, models: FakeModels) -> None:
    llm = run_doctor(Settings(llm_base_url=f"{models.url}/v1", llm_model="gpt-x")).get("llm")
    assert llm.status == "ok" and "not listed" in llm.summary and "smollm2" in llm.summary


def test_llm_refused_key(bare: Path) -> None:
    srv = FakeModels(status=401)
    try:
        llm = run_doctor(Settings(llm_base_url=f"{srv.url}/v1", llm_model="m", mode="llm")).get("llm")
    finally:
        srv.close()
    assert llm.status == "fail" and "401" in llm.summary


def test_llm_unreachable_is_fail_only_when_needed(bare: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    assert run_doctor(Settings(llm_base_url=url, llm_model="m")).get("llm").status == "missing"
    failing = run_doctor(Settings(llm_base_url=url, llm_model="m", mode="llm")).get("llm")
    assert failing.status == "fail" and "unreachable" in failing.summary


def test_lean_server_probe(bare: Path, models: FakeModels) -> None:
    report = run_doctor(Settings(lean_backend="remote", lean_server_url=models.url))
    assert report.get("lean-server").status == "ok"
    assert report.get("backend").status == "ok" and models.url in report.get("backend").summary


def test_fake_toolchain_is_reported(bare: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "tc"
    bin_dir.mkdir()
    for name, text in (("lean", "Lean (version 4.19.0, x86_64-unknown-linux-gnu, commit 0, Release)"),
                       ("lake", "Lake version 5.0.0 (Lean version 4.19.0)")):
        (bin_dir / name).write_text(f"#!/bin/sh\necho '{text}'\n")
        (bin_dir / name).chmod(0o755)
    repl = tmp_path / "repl"
    (repl / ".lake/build/bin").mkdir(parents=True)
    (repl / ".lake/build/bin/repl").write_text("#!/bin/sh\n")
    (repl / ".lake/build/bin/repl").chmod(0o755)
    (repl / "lean-toolchain").write_text("leanprover/lean4:v4.19.0\n")
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setattr("faithsieve.lean.local.lean_interact_problem", lambda: None)
    report = run_doctor(Settings(lean_backend="local", lean_repl_path=str(repl)))
    assert report.get("lean").status == "ok" and "Lean 4.19.0" in report.get("lean").summary
    assert report.get("lean-repl").status == "ok"
    assert report.get("mathlib").status == "fail"  # local backend, Mathlib rendering on, no project
    backend = report.get("backend")
    assert backend.status == "ok" and "lean-interact" in backend.summary and "v4.19.0" in backend.summary


TOO_OLD = "lean-interact 0.7.2 is too old (needs >= 0.9: pip install -U 'lean-interact>=0.9')"


def test_a_lean_interact_problem_is_one_clear_line(bare: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """What ``lean.local`` would refuse to drive, the doctor says: missing (not configured) or fail (the local
    backend configured), in the words of ``lean_interact_problem``, and the backend line says it fails fast."""
    monkeypatch.setattr("faithsieve.lean.local.lean_interact_problem", lambda: TOO_OLD)
    assert main(["doctor", "--strict"]) == 0  # the local backend is not configured: optional, not broken
    line = next(ln for ln in capsys.readouterr().out.splitlines() if " lean-interact " in ln)
    assert line.startswith("  [missing]") and line.endswith(TOO_OLD)
    report = run_doctor(Settings(lean_backend="local"))
    assert report.get("lean-interact").status == "fail" and report.get("lean-interact").summary == TOO_OLD
    assert report.failed and report.get("backend").status == "fail"


def test_a_usable_lean_interact_names_its_version(bare: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    monkeypatch.setattr("faithsieve.lean.local.lean_interact_problem", lambda: None)
    monkeypatch.setattr(metadata, "version", lambda name: "0.11.6" if name == "lean-interact" else "0")
    check = run_doctor(Settings()).get("lean-interact")
    assert check.status == "ok" and check.summary == "lean-interact 0.11.6"


def test_a_toolchain_without_a_usable_lean_interact_fails_fast(bare: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from faithsieve.lean.detect import detect

    from faithsieve.doctor import check_backend, check_lean_interact

    s = Settings(lean_backend="local")
    env = detect(s)
    monkeypatch.setattr(type(env), "local_status", lambda self: (True, ""))  # a complete toolchain
    monkeypatch.setattr("faithsieve.lean.local.lean_interact_problem", lambda: TOO_OLD)
    server = run_doctor(s).get("lean-server")
    backend = check_backend(s, env, server, check_lean_interact(s))
    assert backend.status == "fail" and TOO_OLD in backend.summary and "fails fast" in backend.summary


def test_invalid_settings_are_reported_not_raised(bare: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FAITHSIEVE_LEAN_TIMEOUT_S", "-3")
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "[fail]    settings" in out and "FAITHSIEVE_LEAN_TIMEOUT_S" in out
    assert main(["doctor", "--strict"]) == 1
