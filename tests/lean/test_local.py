"""LocalLeanBackend driven through the real lean-interact code against a fake toolchain.

No Lean is needed. The test writes into ``tmp_path``: a fake ``lake`` (a shell script whose
``lake env PROG`` just execs PROG, as the real one does after setting up paths), a fake ``lean``
(prints a version), and a REPL checkout whose ``.lake/build/bin/repl`` is a Python script speaking
the REPL's protocol (JSON request, blank line; JSON answer, blank line) with recorded answers and
cues to crash, hang or print garbage. lean-interact's ``LeanREPLConfig(local_repl_path=...,
build_repl=False)`` and ``LeanServer`` then run exactly as they would with Lean installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from faithsieve.lean.backend import LeanBackend, LeanUnavailable
from faithsieve.lean.detect import NO_TOOLCHAIN
from faithsieve.lean.factory import build_backend
from faithsieve.lean.local import LocalLeanBackend, result_from_repl, split_header

from faithsieve.core.errors import FaithSieveError
from faithsieve.core.settings import Settings

FAKE_REPL = r'''
import json, os, sys, time

LOG = os.environ.get("FAKE_REPL_LOG")
envs = []

def read_request():
    lines = []
    while True:
        line = sys.stdin.readline()
        if not line:
            return "".join(lines) or None
        if not line.strip():
            if lines:
                return "".join(lines)
            continue
        lines.append(line)

def line_of(cmd, needle):
    for i, text in enumerate(cmd.split("\n")):
        if needle in text:
            return i + 1
    return 1

def answer(req):
    cmd = req.get("cmd", "")
    if req.get("env") is not None and req["env"] not in envs:
        return {"message": "unknown environment."}
    if "CRASH" in cmd:
        sys.stderr.write("INTERNAL PANIC: out of fake memory\n")
        sys.stderr.flush()
        os._exit(3)
    if "HANG" in cmd:
        time.sleep(3600)
    if cmd.startswith("import Mathlib") and req.get("env") is None:
        time.sleep(float(os.environ.get("FAKE_IMPORT_S", "0")))  # loading Mathlib's .olean files
    envs.append(len(envs))
    env = envs[-1]
    if "import Nope" in cmd:
        return {"messages": [{"severity": "error", "pos": {"line": 1, "column": 0}, "endPos": None,
                              "data": "unknown module prefix 'Nope'\n\nNo directory 'Nope' or file 'Nope.olean'"}],
                "env": env}
    if "#pid" in cmd:
        return {"messages": [{"severity": "info", "pos": {"line": line_of(cmd, "#pid"), "column": 0},
                              "endPos": {"line": 1, "column": 4}, "data": "pid %d" % os.getpid()}], "env": env}
    if "#cwd" in cmd:
        return {"messages": [{"severity": "info", "pos": {"line": 1, "column": 0}, "data": os.getcwd()}], "env": env}
    if "sorry" in cmd:
        n = line_of(cmd, "sorry")
        return {"sorries": [{"proofState": 0, "pos": {"line": n, "column": 26}, "goal": "⊢ 2 + 2 = 4",
                             "endPos": {"line": n, "column": 31}}],
                "messages": [{"severity": "warning", "pos": {"line": n, "column": 8},
                              "endPos": {"line": n, "column": 9}, "data": "declaration uses 'sorry'"}],
                "env": env}
    if "HEARTBEAT" in cmd:  # Lean's answer when a tactic runs past maxHeartbeats: an error, the REPL lives on
        n = line_of(cmd, "HEARTBEAT")
        return {"messages": [{"severity": "error", "pos": {"line": n, "column": 2}, "endPos": None,
                              "data": "(deterministic) timeout at `whnf`, maximum number of heartbeats (200000) "
                                      "has been reached\nUse `set_option maxHeartbeats <num>` to set the limit."}],
                "env": env}
    if "= 5" in cmd:
        n = line_of(cmd, "= 5")
        return {"messages": [{"severity": "error", "pos": {"line": n, "column": 25},
                              "endPos": {"line": n, "column": 33},
                              "data": "unsolved goals\n⊢ False"}], "env": env}
    return {"env": env}

while True:
    raw = read_request()
    if raw is None:
        break
    req = json.loads(raw)
    if LOG:
        with open(LOG, "a") as fh:
            fh.write(json.dumps({"pid": os.getpid(), "req": req}) + "\n")
    if "GARBAGE" in req.get("cmd", ""):
        sys.stdout.write("this is not json\n\n")
        sys.stdout.flush()
        continue
    sys.stdout.write(json.dumps(answer(req), indent=2, ensure_ascii=False) + "\n\n")
    sys.stdout.flush()
'''

FAKE_LAKE = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "Lake version 5.0.0-fake (Lean version 4.19.0)"; exit 0; fi
if [ "$1" = "env" ]; then shift; exec "$@"; fi
echo "fake lake: unsupported command $1" >&2
exit 1
"""

FAKE_LEAN = """#!/bin/sh
echo "Lean (version 4.19.0, x86_64-unknown-linux-gnu, commit 0000000000, Release)"
"""

LEAN_ENV_VARS = ("FAITHSIEVE_LEAN_BACKEND", "FAITHSIEVE_LEAN_PROJECT", "FAITHSIEVE_LEAN_REPL_PATH",
                 "FAITHSIEVE_LAKE_PATH", "FAITHSIEVE_LEAN_SERVER_URL", "ELAN_TOOLCHAIN")


def _write_exe(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def make_toolchain(root: Path, lean_version: str = "v4.19.0") -> dict[str, Path]:
    """A fake toolchain bin folder and a fake built REPL checkout under ``root``."""
    _write_exe(root / "bin" / "lake", FAKE_LAKE)
    _write_exe(root / "bin" / "lean", FAKE_LEAN)
    repl = root / "repl"
    _write_exe(repl / ".lake" / "build" / "bin" / "repl", f"#!{sys.executable}\n{FAKE_REPL}")
    (repl / "lean-toolchain").write_text(f"leanprover/lean4:{lean_version}\n")
    return {"bin": root / "bin", "repl": repl}


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No FAITHSIEVE Lean settings, an empty HOME, no elan."""
    for var in LEAN_ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ELAN_HOME", str(tmp_path / "no-elan"))
    return home


@pytest.fixture
def fake(tmp_path: Path, clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    paths = make_toolchain(tmp_path / "tc")
    monkeypatch.setenv("PATH", f"{paths['bin']}{os.pathsep}/usr/bin{os.pathsep}/bin")
    log = tmp_path / "requests.jsonl"
    monkeypatch.setenv("FAKE_REPL_LOG", str(log))
    return {**paths, "log": log, "home": clean_env}


def settings_for(fake: dict[str, Path], **kw: Any) -> Settings:
    base: dict[str, Any] = {"lean_backend": "local", "lean_repl_path": str(fake["repl"]), "lean_timeout_s": 10.0,
                            "lean_cache_path": ""}
    return Settings(**{**base, **kw})


def requests(fake: dict[str, Path]) -> list[dict[str, Any]]:
    if not fake["log"].exists():
        return []
    return [json.loads(x) for x in fake["log"].read_text().splitlines()]


def pid_of(backend: LocalLeanBackend) -> int:
    res = backend.check("#pid")
    assert res.status == "valid", res
    return int(res.messages[0].text.split()[1])


# ---- pure helpers -------------------------------------------------------------------------------

RECORDED = [
    ({"env": 0}, "valid"),
    ({"env": 3, "messages": [{"severity": "info", "pos": {"line": 1, "column": 0}, "data": "Nat : Type"}]}, "valid"),
    ({"env": 1, "sorries": [{"pos": {"line": 1, "column": 20}, "endPos": {"line": 1, "column": 25}, "goal": "⊢ True",
                             "proofState": 0}],
      "messages": [{"severity": "warning", "pos": {"line": 1, "column": 8}, "data": "declaration uses 'sorry'"}]},
     "sorry"),
    ({"env": 1, "messages": [{"severity": "warning", "pos": {"line": 1, "column": 8},
                              "data": "declaration uses 'sorry'"}]}, "sorry"),
    ({"env": 2, "messages": [{"severity": "error", "pos": {"line": 2, "column": 4}, "data": "unsolved goals"}]},
     "lean_error"),
    ({"env": 2, "sorries": [{"goal": "⊢ p"}],
      "messages": [{"severity": "error", "pos": {"line": 1, "column": 0}, "data": "type mismatch"}]}, "lean_error"),
    ({"message": "unknown environment."}, "repl_error"),
    ({"env": 0, "messages": [{"severity": "error", "pos": {"line": 1, "column": 0},
                              "data": "unknown module prefix 'Mathlib'"}]}, "repl_error"),
    ({"env": 0, "messages": [{"severity": "error", "pos": {"line": 1, "column": 0},
                              "data": "object file ./.lake/build/lib/Mathlib.olean of module Mathlib does not exist"}]},
     "repl_error"),
    ("not a dict", "repl_error"),
]


@pytest.mark.parametrize(("answer", "status"), RECORDED)
def test_result_from_repl_classifies_recorded_answers(answer: Any, status: str) -> None:
    res = result_from_repl(answer, backend="lean-interact")
    assert res.status == status
    assert res.backend == "lean-interact"
    if status == "repl_error":
        assert res.detail


def test_result_from_repl_keeps_messages_goals_and_shifts_lines() -> None:
    answer = {"env": 1, "sorries": [{"goal": "x : ℕ\n⊢ x = x", "pos": {"line": 2, "column": 3}}],
              "messages": [{"severity": "trace", "pos": {"line": 2, "column": 3}, "data": "trace"},
                           {"severity": "warning", "pos": {"line": 2, "column": 8}, "data": "declaration uses 'sorry'"}]}
    res = result_from_repl(answer, backend="x", line_offset=3)
    assert res.goals == ("x : ℕ\n⊢ x = x",)
    assert [(m.severity, m.line, m.column) for m in res.messages] == [("info", 5, 3), ("warning", 5, 8)]


def test_result_from_repl_reads_print_axioms() -> None:
    answer = {"env": 4, "messages": [{"severity": "info", "pos": {"line": 3, "column": 0},
                                      "data": "'t' depends on axioms: [propext, Classical.choice, Quot.sound]"}]}
    res = result_from_repl(answer, backend="lean-interact", line_offset=1)
    assert res.status == "valid" and res.messages[0].line == 4
    assert res.axioms is not None and set(res.axioms) == {"propext", "Classical.choice", "Quot.sound"}


@pytest.mark.parametrize(("code", "header", "offset"), [
    ("theorem t : True := trivial", "", 0),
    ("import Mathlib\ntheorem t : True := trivial", "import Mathlib", 1),
    ("-- a comment\nimport Mathlib\n\nimport Mathlib.Tactic\n\ntheorem t : True := trivial",
     "import Mathlib\nimport Mathlib.Tactic", 4),
    ("import Mathlib", "import Mathlib", 1),
    ("theorem t : True := trivial\nimport Mathlib", "", 0),
])
def test_split_header(code: str, header: str, offset: int) -> None:
    h, body, n = split_header(code)
    assert (h, n) == (header, offset)
    if header:
        assert "\n".join(code.split("\n")[n:]) == body


# ---- the backend over the fake REPL -------------------------------------------------------------

def test_fake_backend_satisfies_protocol_and_classifies(fake: dict[str, Path]) -> None:
    with LocalLeanBackend(settings_for(fake)) as b:
        assert isinstance(b, LeanBackend)
        assert b.available() == (True, "")
        assert b.versions() == {"lean": "v4.19.0", "mathlib": "none"}
        assert b.check("theorem t : 2 + 2 = 4 := by norm_num").status == "valid"
        s = b.check("theorem t : 2 + 2 = 4 := by sorry")
        assert s.status == "sorry" and s.goals == ("⊢ 2 + 2 = 4",)
        e = b.check("theorem t : 2 + 2 = 5 := by norm_num")
        assert e.status == "lean_error" and e.errors[0].text.startswith("unsolved goals") and e.errors[0].line == 1
        assert b.check("import Nope\ntheorem t : True := trivial").status == "repl_error"
    sent = requests(fake)
    assert all("timeout" not in r["req"] for r in sent)  # the limit is enforced on our side
    assert sent[0]["req"]["incrementality"] is True  # Lean 4.19: lean-interact's incremental mode is on


def test_imports_run_once_per_repl_and_lines_map_back(fake: dict[str, Path]) -> None:
    with LocalLeanBackend(settings_for(fake)) as b:
        r1 = b.check("import Mathlib\n\ntheorem a : 2 + 2 = 5 := by norm_num")
        r2 = b.check("import Mathlib\ntheorem b : 1 = 1 := by sorry")
    assert r1.status == "lean_error" and r1.errors[0].line == 3
    assert r2.status == "sorry"
    cmds = [r["req"] for r in requests(fake)]
    assert [c["cmd"] for c in cmds].count("import Mathlib") == 1
    assert cmds[1]["env"] == cmds[2]["env"] == 0 and "import" not in cmds[1]["cmd"]


def test_recycles_after_n_commands(fake: dict[str, Path]) -> None:
    with LocalLeanBackend(settings_for(fake, lean_recycle_after=3)) as b:
        pids = [pid_of(b) for _ in range(7)]
        assert b.counters["recycled_count"] == 2
    assert pids[0] == pids[1] == pids[2] != pids[3]
    assert pids[3] == pids[4] == pids[5] != pids[6]


def test_crash_gives_repl_error_then_a_fresh_repl(fake: dict[str, Path]) -> None:
    with LocalLeanBackend(settings_for(fake)) as b:
        before = pid_of(b)
        res = b.check("theorem t : True := by CRASH")
        assert res.status == "repl_error"
        assert "died" in res.detail and "INTERNAL PANIC" in res.detail and "\n" not in res.detail
        after = pid_of(b)
        assert after != before
        assert b.counters["crashed"] == 1


def test_garbage_answer_is_repl_error_and_recovers(fake: dict[str, Path]) -> None:
    with LocalLeanBackend(settings_for(fake)) as b:
        assert b.check("GARBAGE").status == "repl_error"
        assert b.check("theorem t : True := trivial").status == "valid"


def test_hang_times_out_within_the_limit_and_recovers(fake: dict[str, Path]) -> None:
    with LocalLeanBackend(settings_for(fake, lean_timeout_s=30.0)) as b:
        before = pid_of(b)
        started = time.monotonic()
        res = b.check("theorem t : True := by HANG", timeout_s=1.0)
        elapsed = time.monotonic() - started
        assert res.status == "timeout" and "1 s" in res.detail
        # the call's 1 s limit, not the 30 s setting: the kill and the fresh REPL's start come on top, which a
        # loaded runner has stretched past 4 s
        assert 0.9 <= elapsed < 10.0
        assert pid_of(b) != before
        assert b.counters["timeouts"] == 1


def test_memory_cap_recycles_through_the_probe_hook(fake: dict[str, Path]) -> None:
    readings = iter([100.0, 100.0, 999_999.0])

    def probe(server: Any) -> float:
        return next(readings, 100.0)

    with LocalLeanBackend(settings_for(fake, lean_memory_mb=1024), memory_probe=probe) as b:
        pids = [pid_of(b) for _ in range(4)]
        assert b.counters["recycled_memory"] == 1
    assert pids[0] == pids[1] == pids[2] != pids[3]


def test_default_memory_probe_reads_the_real_process(fake: dict[str, Path]) -> None:
    seen: list[float] = []

    def probe(server: Any) -> float:
        seen.append(float(server.get_memory_usage()))
        return seen[-1]

    with LocalLeanBackend(settings_for(fake), memory_probe=probe) as b:
        pid_of(b)
    assert seen and 1.0 < seen[0] < 1024.0  # a small Python process, in MB


def test_unknown_environment_drops_the_cached_header(fake: dict[str, Path]) -> None:
    with LocalLeanBackend(settings_for(fake)) as b:
        assert b.check("import Mathlib\ntheorem a : True := trivial").status == "valid"
        b._workers[0].headers["import Mathlib"] = 999  # as if the REPL had forgotten it
        assert b.check("import Mathlib\ntheorem b : True := trivial").status == "repl_error"
        assert b.check("import Mathlib\ntheorem c : True := trivial").status == "valid"


def test_workers_run_in_parallel_threads(fake: dict[str, Path]) -> None:
    results: list[str] = []
    with LocalLeanBackend(settings_for(fake, lean_workers=2)) as b:
        def work(i: int) -> None:
            results.append(b.check(f"theorem t{i} : True := trivial").status)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert b.counters["started"] <= 2
    assert results == ["valid"] * 8
    assert len({r["pid"] for r in requests(fake)}) <= 2


def test_project_is_the_working_directory(fake: dict[str, Path], tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "lean-toolchain").write_text("leanprover/lean4:v4.19.0\n")
    (project / "lake-manifest.json").write_text(json.dumps({"version": 7, "packages": []}))
    with LocalLeanBackend(settings_for(fake, lean_project=str(project))) as b:
        res = b.check("#cwd")
        assert Path(res.messages[0].text).resolve() == project.resolve()
        assert b.versions() == {"lean": "v4.19.0", "mathlib": "none"}


def test_close_stops_the_repls_and_refuses_more(fake: dict[str, Path]) -> None:
    b = LocalLeanBackend(settings_for(fake))
    pid = pid_of(b)
    b.close()
    deadline = time.monotonic() + 5
    while psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert b.available()[0] is False
    with pytest.raises(LeanUnavailable):
        b.check("theorem t : True := trivial")


def test_no_files_written_outside_tmp(fake: dict[str, Path]) -> None:
    with LocalLeanBackend(settings_for(fake)) as b:
        assert b.check("theorem t : True := trivial").status == "valid"
    assert list(fake["home"].iterdir()) == []


def test_factory_wraps_the_local_backend_in_the_cache(fake: dict[str, Path], tmp_path: Path) -> None:
    db = tmp_path / "cache" / "lean.sqlite"
    b = build_backend(settings_for(fake, lean_cache_path=str(db)))
    assert b is not None and b.name == "lean-interact" and type(b).__name__ == "CachedBackend"
    try:
        assert b.check("theorem t : 2 + 2 = 4 := by sorry").status == "sorry"
        assert b.check("theorem t : 2 + 2 = 4 := by sorry").status == "sorry"
    finally:
        b.close()
    assert db.is_file()
    assert sum("sorry" in r["req"]["cmd"] for r in requests(fake)) == 1  # the second came from the cache


# ---- no toolchain ---------------------------------------------------------------------------------

@pytest.fixture
def no_lean(tmp_path: Path, clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    return clean_env


def test_missing_toolchain_fails_fast_with_one_line(no_lean: Path) -> None:
    started = time.monotonic()
    settings = Settings(lean_backend="local")
    b = LocalLeanBackend(settings)
    assert b.available() == (False, NO_TOOLCHAIN)
    with pytest.raises(LeanUnavailable) as info:
        b.check("theorem t : True := trivial")
    with pytest.raises(LeanUnavailable) as built:
        build_backend(settings)
    assert time.monotonic() - started < 2.0
    for exc in (info.value, built.value):
        assert isinstance(exc, FaithSieveError) and "\n" not in exc.message and "`lean` not on PATH" in exc.message
    assert list(no_lean.iterdir()) == []  # nothing under HOME: no cache, no lean-interact download


def test_missing_toolchain_in_a_fresh_process_leaves_no_trace(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": str(tmp_path), "HOME": str(home), "ELAN_HOME": str(tmp_path / "no-elan"),
           "FAITHSIEVE_LEAN_BACKEND": "local", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    code = ("from faithsieve.core.settings import Settings\nfrom faithsieve.lean.factory import build_backend\n"
            "from faithsieve.lean.backend import LeanUnavailable\nimport sys\n"
            "try:\n    build_backend(Settings())\nexcept LeanUnavailable as e:\n    print(e.message)\n"
            "    sys.exit(3)\n"
            "print('lean_interact' in sys.modules)\n")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code], check=False, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "`lean` not on PATH" in proc.stdout
    assert time.monotonic() - started < 10.0  # interpreter start included; detection itself is milliseconds
    assert list(home.iterdir()) == []


def test_configured_but_unbuilt_repl_is_unavailable(fake: dict[str, Path], tmp_path: Path) -> None:
    bare = tmp_path / "bare-repl"
    bare.mkdir()
    ok, why = LocalLeanBackend(settings_for(fake, lean_repl_path=str(bare))).available()
    assert not ok and "not built" in why


def test_no_repl_anywhere_is_unavailable(fake: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("faithsieve.lean.detect._lean_interact_cache", lambda: None)
    ok, why = LocalLeanBackend(settings_for(fake, lean_repl_path=None)).available()
    assert not ok and "no prebuilt Lean REPL" in why and "never clones" in why


# ---- imports once, heartbeats keep the environment (recorded REPL transcripts) ----------------------

MATHLIB_SNIPPET = "import Mathlib\n\nset_option autoImplicit false in\n"


def test_one_import_per_backend_start_under_its_own_limit(fake: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_IMPORT_S", "1.5")  # longer than the check's limit: the import has its own
    with LocalLeanBackend(settings_for(fake, lean_timeout_s=1.0), import_timeout_s=30.0) as b:
        first = b.check(MATHLIB_SNIPPET + "theorem t : 2 + 2 = 4 := by norm_num", 1.0)
        assert first.status == "valid", first
        for i in range(3):
            assert b.check(MATHLIB_SNIPPET + f"theorem t{i} : 2 + 2 = 4 := by sorry", 1.0).status == "sorry"
        assert b.counters["started"] == 1
    sent = requests(fake)
    imports = [r for r in sent if r["req"]["cmd"].startswith("import Mathlib")]
    assert len(imports) == 1 and "env" not in imports[0]["req"]  # elaborated once, in a fresh environment
    assert [r["req"].get("env") for r in sent[1:]] == [0] * 4  # every snippet body runs in that environment
    assert len({r["pid"] for r in sent}) == 1


def test_a_heartbeat_timeout_keeps_the_repl_and_its_environment(fake: dict[str, Path]) -> None:
    with LocalLeanBackend(settings_for(fake)) as b:
        assert b.check(MATHLIB_SNIPPET + "theorem a : 2 + 2 = 4 := by sorry").status == "sorry"
        slow = b.check(MATHLIB_SNIPPET + "set_option maxHeartbeats 200000 in\ntheorem b : HEARTBEAT := by\n  simp")
        assert slow.status == "timeout" and "environment" in slow.detail and slow.errors[0].line == 5
        after = b.check(MATHLIB_SNIPPET + "theorem c : 2 + 2 = 4 := by norm_num")
        assert after.status == "valid"
        assert b.counters["timeouts"] == 0 and b.counters["started"] == 1  # nothing was killed
    sent = requests(fake)
    assert sum(r["req"]["cmd"].startswith("import Mathlib") for r in sent) == 1
    assert len({r["pid"] for r in sent}) == 1


def test_a_wall_clock_timeout_still_kills_and_the_next_check_imports_again(fake: dict[str, Path]) -> None:
    with LocalLeanBackend(settings_for(fake)) as b:
        assert b.check(MATHLIB_SNIPPET + "theorem a : True := HANG", 1.0).status == "timeout"
        assert b.check(MATHLIB_SNIPPET + "theorem c : 2 + 2 = 4 := by norm_num").status == "valid"
        assert b.counters["timeouts"] == 1 and b.counters["started"] == 2
    assert sum(r["req"]["cmd"].startswith("import Mathlib") for r in requests(fake)) == 2


def test_an_import_past_its_limit_is_not_retried(fake: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_IMPORT_S", "5")
    with LocalLeanBackend(settings_for(fake), import_timeout_s=1.0) as b:
        first = b.check(MATHLIB_SNIPPET + "theorem a : True := trivial")
        assert first.status == "timeout" and "not retried" in first.detail and "within 1 s" in first.detail
        again = b.check(MATHLIB_SNIPPET + "theorem b : True := trivial")
        assert again.status == "repl_error" and again.detail == first.detail and again.time_ms < 1000
        assert b.check("theorem c : 2 + 2 = 4 := by norm_num").status == "valid"  # other snippets still run
    assert sum(r["req"]["cmd"].startswith("import Mathlib") for r in requests(fake)) == 1


def test_an_unusable_lean_interact_is_reported_not_raised(fake: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    real = metadata.version
    monkeypatch.setattr(metadata, "version", lambda name: "0.8.1" if name == "lean-interact" else real(name))
    with LocalLeanBackend(settings_for(fake)) as b, pytest.raises(LeanUnavailable, match=r"0\.8\.1 is too old"):
        b.check("theorem t : True := trivial")

    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    with LocalLeanBackend(settings_for(fake)) as b, pytest.raises(LeanUnavailable, match="not installed"):
        b.check("theorem t : True := trivial")
    monkeypatch.setattr(metadata, "version", real)
    monkeypatch.setitem(sys.modules, "lean_interact", None)  # present in the metadata, but the import fails
    with LocalLeanBackend(settings_for(fake)) as b, pytest.raises(LeanUnavailable, match="cannot be imported"):
        b.check("theorem t : True := trivial")


# ---- issue 39 (D2): the header is imported at start-up, never inside a check -------------------------------


def test_warm_imports_the_header_once_per_repl_before_any_check(fake: dict[str, Path],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_IMPORT_S", "1.5")  # longer than every check's limit below
    with LocalLeanBackend(settings_for(fake, lean_workers=2, lean_timeout_s=1.0), import_timeout_s=30.0) as b:
        warm = b.warm("import Mathlib")
        assert warm.status == "valid" and warm.time_ms >= 1500
        assert b.counters["started"] == 2 and b.counters["imports"] == 2
        for i in range(4):
            assert b.check(MATHLIB_SNIPPET + f"theorem t{i} : 2 + 2 = 4 := by sorry", 1.0).status == "sorry"
        assert b.counters["imports"] == 2
    sent = requests(fake)
    by_pid: dict[int, list[dict[str, Any]]] = {}
    for r in sent:
        by_pid.setdefault(r["pid"], []).append(r["req"])
    assert len(by_pid) == 2
    for reqs in by_pid.values():  # per REPL: the import first, alone, then only bodies in its environment
        assert reqs[0]["cmd"] == "import Mathlib" and "env" not in reqs[0]
        assert all(r.get("env") == 0 and "import" not in r["cmd"] for r in reqs[1:])


def test_a_restarted_repl_never_imports_inside_a_check(fake: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_IMPORT_S", "1.0")
    with LocalLeanBackend(settings_for(fake, lean_timeout_s=5.0), import_timeout_s=30.0) as b:
        assert b.warm("import Mathlib").status == "valid"
        assert b.check(MATHLIB_SNIPPET + "theorem a : True := HANG", 0.5).status == "timeout"  # killed
        # the kill leaves the slot importing again in the background: this check waits for it (it is free
        # again within its limit), and is not charged for the import itself
        t0 = time.perf_counter()
        after = b.check(MATHLIB_SNIPPET + "theorem c : 2 + 2 = 4 := by sorry", 5.0)
        assert after.status == "sorry", after
        assert after.time_ms < 900 and time.perf_counter() - t0 < 5.0
        assert b.counters["imports"] == 2 and b.counters["started"] == 2
    sent = requests(fake)
    imports = [r for r in sent if r["req"]["cmd"].startswith("import")]
    assert len(imports) == 2 and all("env" not in r["req"] for r in imports)
    assert all("import" not in r["req"]["cmd"] for r in sent if r["req"].get("env") is not None)


def test_a_check_that_finds_no_free_repl_in_its_limit_times_out(fake: dict[str, Path],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_IMPORT_S", "3.0")
    with LocalLeanBackend(settings_for(fake), import_timeout_s=30.0) as b:
        b._startup_headers.add("import Mathlib")  # as after warm(): the header is imported at start-up only
        first = b.check(MATHLIB_SNIPPET + "theorem a : True := trivial", 1.0)
        assert first.status == "repl_error" and "imports run at start-up" in first.detail  # not imported here
        t0 = time.perf_counter()
        busy = b.check(MATHLIB_SNIPPET + "theorem b : True := trivial", 0.5)  # the slot is importing
        assert busy.status == "timeout" and "no Lean REPL free" in busy.detail
        assert time.perf_counter() - t0 < 2.0


def test_a_failed_start_up_import_is_said_at_once_by_later_checks(fake: dict[str, Path]) -> None:
    with LocalLeanBackend(settings_for(fake)) as b:
        failed = b.warm("import Nope")
        assert failed.status == "repl_error"
        later = b.check("import Nope\ntheorem b : True := trivial")
        assert later.status == "repl_error" and "failed at start-up" in later.detail and later.time_ms < 1000
    assert sum(r["req"]["cmd"].startswith("import Nope") for r in requests(fake)) == 1


def test_localize_imports_once_in_the_worker_start_up_outside_the_item_limit(fake: dict[str, Path],
                                                                              tmp_path: Path) -> None:
    """``faithsieve localize --backend lean``: the import (3 s here) runs before the proof, whose limit is 2 s;
    the proof's Lean checks all run in the imported environment, none sends an import."""
    proof = tmp_path / "proof.json"
    proof.write_text(json.dumps({"problem": "Let x be real with x^3 + x = 10.", "steps": [
        "We have $x^3 + x = 10$.", "Then $x^3 + x + \\sin(x)^2 + \\cos(x)^2 = 11$."]}))
    env = {**os.environ, "FAKE_IMPORT_S": "3", "FAITHSIEVE_LEAN_REPL_PATH": str(fake["repl"]),
           "FAITHSIEVE_LEAN_CACHE_PATH": ""}
    done = subprocess.run([sys.executable, "-m", "faithsieve", "localize", str(proof), "--backend", "lean",
                           "--item-time-limit", "2"], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "imports `import Mathlib` before the proof is checked" in done.stderr
    assert "`import Mathlib` imported in" in done.stderr and "outside the proof's limits" in done.stderr
    sent = requests(fake)
    assert len({r["pid"] for r in sent}) == 1
    assert sent[0]["req"]["cmd"] == "import Mathlib" and "env" not in sent[0]["req"]
    checks = sent[1:]
    assert checks and all(r["req"].get("env") == 0 and "import" not in r["req"]["cmd"] for r in checks)
    assert any(r["req"]["cmd"].rstrip().endswith(":= by sorry") for r in checks)  # the pre-check, in that env


def test_scoring_workers_import_the_header_at_start_up(fake: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """``faithsieve score`` with a Lean backend: each worker imports the header while it starts, before any item."""
    from faithsieve.runtime.limits import ItemLimits
    from faithsieve.scoring.chunks import scoring_pool

    # the pool's workers fork from a server that an earlier test may have started with another environment:
    # what they need travels in the settings (lake) and in the fake REPL itself (its log), not in os.environ
    monkeypatch.setenv("FAITHSIEVE_LEAN_REPL_PATH", str(fake["repl"]))
    repl = fake["repl"] / ".lake" / "build" / "bin" / "repl"
    repl.write_text(repl.read_text().replace('LOG = os.environ.get("FAKE_REPL_LOG")', f"LOG = {str(fake['log'])!r}"))
    settings = settings_for(fake, lake_path=str(fake["bin"] / "lake"))
    with scoring_pool(settings, 1, ItemLimits(10.0, 0)) as pool:
        pool.run(os.getpid, time_limit=10)  # an item that never touches Lean: whatever was sent, start-up sent it
        sent = requests(fake)
    assert [r["req"]["cmd"] for r in sent] == ["import Mathlib"]
