"""End to end against a real Lean (marker ``lean``; run with ``pytest -m lean tests/lean``).

Configure through the usual settings: ``FAITHSIEVE_LEAN_REPL_PATH`` (a built REPL checkout),
``FAITHSIEVE_LEAN_PROJECT`` (a Lake project, with Mathlib for the ``norm_num`` check),
``FAITHSIEVE_LAKE_PATH`` when ``lake`` is not on PATH; ``FAITHSIEVE_LEAN_SERVER_URL`` adds the
Kimina backend. Each backend that cannot run here is skipped with the reason detection gives.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
from faithsieve.lean.backend import LeanBackend
from faithsieve.lean.detect import detect

from faithsieve.core.settings import Settings

pytestmark = pytest.mark.lean

TIMEOUT_SNIPPET = "partial def spin (n : Nat) : Nat := spin (n + 1)\n\n#eval spin 0\n"


def _settings(**kw: object) -> Settings:
    return Settings(lean_timeout_s=120.0, lean_cache_path="", **kw)  # type: ignore[arg-type]


def _local() -> tuple[LeanBackend | None, str]:
    settings = _settings(lean_backend="local")
    env = detect(settings)
    ok, why = env.local_status()
    if not ok:
        project = os.environ.get("FAITHSIEVE_LEAN_PROJECT")
        return None, (f"no Lean toolchain found ({why}; FAITHSIEVE_LEAN_PROJECT "
                      f"{'= ' + project if project else 'unset'})")
    from faithsieve.lean.local import LocalLeanBackend

    return LocalLeanBackend(settings, environment=env), ""


def _remote() -> tuple[LeanBackend | None, str]:
    settings = _settings(lean_backend="remote")
    if not settings.lean_server_url:
        return None, "no Lean server configured (FAITHSIEVE_LEAN_SERVER_URL unset)"
    from faithsieve.lean.remote import KiminaBackend

    b = KiminaBackend(settings)
    ok, why = b.available()
    return (b, "") if ok else (None, f"Lean server not usable: {why}")


@pytest.fixture(params=["local", "remote"], scope="module")
def backend(request: pytest.FixtureRequest) -> Iterator[LeanBackend]:
    b, why = _local() if request.param == "local" else _remote()
    if b is None:
        pytest.skip(why)
    yield b
    b.close()


def _has_mathlib(b: LeanBackend) -> bool:
    return b.versions().get("mathlib", "unknown") not in ("none",)


def test_versions_are_pinned(backend: LeanBackend) -> None:
    v = backend.versions()
    assert v["lean"].startswith("v4"), v


def test_valid_proof(backend: LeanBackend) -> None:
    if _has_mathlib(backend):
        res = backend.check("import Mathlib\n\ntheorem t : 2 + 2 = 4 := by norm_num")
    else:
        res = backend.check("theorem t : 2 + 2 = 4 := by decide")
    assert res.status == "valid", res


def test_sorry(backend: LeanBackend) -> None:
    res = backend.check("theorem t (n : Nat) : n + 0 = n := by sorry")
    assert res.status == "sorry", res
    assert res.goals and "n + 0 = n" in res.goals[0]


def test_error(backend: LeanBackend) -> None:
    res = backend.check("theorem t : 2 + 2 = 5 := by decide")
    assert res.status == "lean_error", res
    assert res.errors and res.errors[0].line == 1


def test_timeout(backend: LeanBackend) -> None:
    started = time.monotonic()
    res = backend.check(TIMEOUT_SNIPPET, timeout_s=3.0)
    assert res.status == "timeout", res
    assert time.monotonic() - started < 40.0
    assert backend.check("theorem t : 1 = 1 := rfl").status == "valid"  # a fresh REPL answers


# ---- issue 39: what a user with Lean and Mathlib runs to confirm D1 and D2 (docs/lean.md says the same) ----

_D1_PROBE = r"""
import json, resource
import psutil
from faithsieve.core.settings import Settings
from faithsieve.lean.local import LocalLeanBackend
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (4096 * 2 ** 20, hard))   # a worker's cap, as init_worker sets it
b = LocalLeanBackend(Settings(lean_backend="local", lean_cache_path=""))
warm = b.warm("import Mathlib")
limits = []
for w in b._workers:
    if w.server is not None:
        for p in [psutil.Process(w.server._proc.pid), *psutil.Process(w.server._proc.pid).children(recursive=True)]:
            limits.append(p.rlimit(psutil.RLIMIT_AS)[0] // 2 ** 20)
print(json.dumps({"warm": warm.status, "detail": warm.detail, "repl_mb": limits, "note": b.memory_note}))
b.close()
"""


def test_d1_the_repl_is_not_held_to_the_worker_cap() -> None:
    """D1. As the user who runs faithsieve (not root), with Mathlib configured:

        faithsieve doctor        # the lean-memory line: "the Lean REPL gets 16384 MiB of address space ..."
        pytest -m lean tests/lean/test_live_lean.py -k d1

    What it shows: a process capped at 4096 MiB (soft, as a worker is) starts a REPL that imports Mathlib
    (``warm`` is ``valid``) and whose processes have a 16384 MiB limit (or the hard limit, when that is lower,
    and the doctor line says "gets only"). Before issue 39 the REPL kept 4096 MiB and the import failed or
    the REPL died (``repl_error``)."""
    import json
    import subprocess
    import sys

    b, why = _local()
    if b is None:
        pytest.skip(why)
    b.close()
    if not _has_mathlib(b):
        pytest.skip("no Mathlib in FAITHSIEVE_LEAN_PROJECT: the 4 GiB cap matters for import Mathlib")
    done = subprocess.run([sys.executable, "-c", _D1_PROBE], capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["warm"] == "valid", out
    assert out["repl_mb"] and min(out["repl_mb"]) > 4096, out


def test_d2_localize_imports_before_the_proof_and_lean_decides_within_it(tmp_path: object) -> None:
    """D2. With Mathlib configured:

        faithsieve localize proof.json --backend lean --format text

    stderr says, before the proof is checked, "lean: this `faithsieve localize` starts its own Lean REPL(s)
    and imports `import Mathlib` ...", then "lean: lean-interact: REPL(s) started, `import Mathlib` imported
    in N s, outside the proof's limits"; the proof's Lean evidence then names tactics or Lean's answers, never
    a spent time budget. Before issue 39 the import ran inside the first obligation's check: its 5 s budget
    was gone, and a cold import past the 60 s item limit ended the run as ``unknown``, exit 1."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    b, why = _local()
    if b is None:
        pytest.skip(why)
    b.close()
    if not _has_mathlib(b):
        pytest.skip("no Mathlib in FAITHSIEVE_LEAN_PROJECT")
    proof = Path(str(tmp_path)) / "proof.json"
    proof.write_text(json.dumps({"problem": "Show that x^2 + 1 > 0 for every real x.",
                                 "steps": ["For every real $x$, $(x^2 - 2)^2 \\geq 0$.", "Hence $x^2 + 1 > 0$."]}))
    done = subprocess.run([sys.executable, "-m", "faithsieve", "localize", str(proof), "--backend", "lean"],
                          capture_output=True, text=True, timeout=1200,
                          env={**os.environ, "FAITHSIEVE_LEAN_CACHE_PATH": ""})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "outside the proof's limits" in done.stderr, done.stderr
    verdict = json.loads(done.stdout)
    lean = [ev for step in verdict["steps"] for ev in step["evidence"] if ev.get("method") == "lean"]
    assert all("budget" not in (ev.get("reason") or "") for ev in lean), lean
