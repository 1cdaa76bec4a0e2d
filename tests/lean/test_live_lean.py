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
