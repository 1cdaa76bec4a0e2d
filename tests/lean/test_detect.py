"""Detection of the Lean toolchain, project, Mathlib and REPL, on fake file trees."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from faithsieve.lean import detect as det
from faithsieve.lean.detect import NO_TOOLCHAIN, detect, normalize_lean_version

from faithsieve.core.settings import Settings

LEAN_VERSION_OUT = "Lean (version 4.19.0, x86_64-unknown-linux-gnu, commit 0000000000, Release)"


def exe(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def repl_checkout(root: Path, version: str = "v4.19.0") -> Path:
    exe(root / ".lake" / "build" / "bin" / "repl", "#!/bin/sh\nexit 0\n")
    (root / "lean-toolchain").write_text(f"leanprover/lean4:{version}\n")
    return root


def project(root: Path, version: str = "v4.19.0", *, mathlib: bool = True, built: bool = True,
            fetched: bool = True) -> Path:
    root.mkdir(parents=True)
    (root / "lean-toolchain").write_text(f"leanprover/lean4:{version}\n")
    pkgs = []
    if mathlib:
        pkgs = [{"url": "https://github.com/leanprover-community/mathlib4", "type": "git", "name": "mathlib",
                 "rev": "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d", "inputRev": version},
                {"url": "https://github.com/leanprover-community/aesop", "type": "git", "name": "aesop",
                 "rev": "f" * 40, "inputRev": "master"}]
        if fetched:
            for p in pkgs:
                (root / ".lake" / "packages" / p["name"]).mkdir(parents=True)
        if built and fetched:
            olean = root / ".lake/packages/mathlib/.lake/build/lib/lean/Mathlib.olean"
            olean.parent.mkdir(parents=True)
            olean.write_bytes(b"olean")
    (root / "lake-manifest.json").write_text(json.dumps({"version": "1.1.0", "packagesDir": ".lake/packages",
                                                          "packages": pkgs, "name": "proj"}))
    return root


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    for var in ("FAITHSIEVE_LEAN_PROJECT", "FAITHSIEVE_LEAN_REPL_PATH", "FAITHSIEVE_LAKE_PATH", "ELAN_TOOLCHAIN"):
        monkeypatch.delenv(var, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ELAN_HOME", str(tmp_path / "elan"))
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setattr(det, "_lean_interact_cache", lambda: None)
    return {"root": tmp_path, "home": home, "bin": bin_dir, "elan": tmp_path / "elan"}


def fake_tools(bin_dir: Path) -> None:
    exe(bin_dir / "lean", f"#!/bin/sh\necho '{LEAN_VERSION_OUT}'\n")
    exe(bin_dir / "lake", "#!/bin/sh\necho 'Lake version 5.0.0-abc (Lean version 4.19.0)'\n")


@pytest.mark.parametrize(("text", "want"), [
    ("leanprover/lean4:v4.19.0", "v4.19.0"), ("4.19.0", "v4.19.0"), ("v4.9.0-rc1", "v4.9.0-rc1"),
    ("leanprover/lean4:nightly-2025-01-01", "nightly-2025-01-01"), ("", None), (None, None),
])
def test_normalize_lean_version(text: Any, want: Any) -> None:
    assert normalize_lean_version(text) == want


def test_nothing_installed_is_fast_runs_nothing_writes_nothing(env: dict[str, Path],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    def no_subprocess(*a: Any, **k: Any) -> None:
        raise AssertionError("detection ran a subprocess with nothing installed")

    monkeypatch.setattr(subprocess, "run", no_subprocess)
    started = time.monotonic()
    e = detect(Settings())
    assert time.monotonic() - started < 2.0
    assert e.local_status() == (False, NO_TOOLCHAIN)
    assert e.lean.path is None and e.lake.path is None and e.elan.path is None
    assert e.lean_version is None and e.mathlib_version is None
    assert list(env["home"].iterdir()) == []


def test_full_fake_setup_is_ready(env: dict[str, Path]) -> None:
    fake_tools(env["bin"])
    repl = repl_checkout(env["root"] / "repl")
    proj = project(env["root"] / "proj")
    e = detect(Settings(lean_project=str(proj), lean_repl_path=str(repl)))
    assert e.local_status() == (True, "")
    assert e.lean.version == "4.19.0" and e.lake.version and "5.0.0" in e.lake.version
    assert e.lean_version == "v4.19.0"
    assert e.project is not None and e.project.mathlib and e.project.mathlib_built
    assert e.mathlib_version == "v4.19.0@1a2b3c4d5e6f"
    assert e.repl is not None and e.repl.source == "setting" and e.repl.lean_version == "v4.19.0"
    assert e.notes == ()


def test_repl_path_may_name_the_binary_inside_a_checkout(env: dict[str, Path], tmp_path: Path) -> None:
    fake_tools(env["bin"])
    repl = repl_checkout(tmp_path / "repl")
    e = detect(Settings(lean_repl_path=str(repl / ".lake/build/bin/repl")))
    assert e.repl is not None and Path(e.repl.directory) == repl
    stray = exe(tmp_path / "elsewhere" / "repl", "#!/bin/sh\n")
    e = detect(Settings(lean_repl_path=str(stray)))
    assert not e.local_status()[0] and "outside a REPL checkout" in e.local_status()[1]


def test_project_problems_are_named(env: dict[str, Path]) -> None:
    fake_tools(env["bin"])
    repl = repl_checkout(env["root"] / "repl")
    e = detect(Settings(lean_project=str(env["root"] / "nowhere"), lean_repl_path=str(repl)))
    assert "does not exist" in e.local_status()[1]
    unfetched = project(env["root"] / "unfetched", fetched=False)
    e = detect(Settings(lean_project=str(unfetched), lean_repl_path=str(repl)))
    ok, why = e.local_status()
    assert not ok and "dependencies not fetched (mathlib, aesop)" in why and "never lets lake clone" in why
    unbuilt = project(env["root"] / "unbuilt", built=False)
    e = detect(Settings(lean_project=str(unbuilt), lean_repl_path=str(repl)))
    assert e.local_status() == (True, "")  # runs, but `import Mathlib` cannot load: said in a note
    assert any("not built" in n for n in e.notes)
    core = project(env["root"] / "core", mathlib=False)
    e = detect(Settings(lean_project=str(core), lean_repl_path=str(repl)))
    assert e.mathlib_version is None and any("not a dependency" in n for n in e.notes)


def test_repl_for_another_lean_version_is_refused(env: dict[str, Path]) -> None:
    fake_tools(env["bin"])
    repl = repl_checkout(env["root"] / "repl", "v4.18.0")
    proj = project(env["root"] / "proj", "v4.19.0")
    ok, why = detect(Settings(lean_project=str(proj), lean_repl_path=str(repl))).local_status()
    assert not ok and "built for Lean v4.18.0" in why


def test_repl_found_in_project_packages_and_lean_interact_cache(env: dict[str, Path],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    fake_tools(env["bin"])
    proj = project(env["root"] / "proj")
    repl_checkout(proj / ".lake" / "packages" / "REPL")
    e = detect(Settings(lean_project=str(proj)))
    assert e.repl is not None and e.repl.source == "project package"
    cache = env["root"] / "li-cache"
    repl_checkout(cache / "augustepoiroux" / "repl" / "repl_v1.3.19_lean-toolchain-v4.18.0", "v4.18.0")
    repl_checkout(cache / "augustepoiroux" / "repl" / "repl_v1.3.19_lean-toolchain-v4.19.0", "v4.19.0")
    monkeypatch.setattr(det, "_lean_interact_cache", lambda: cache)
    other = project(env["root"] / "other")
    e = detect(Settings(lean_project=str(other)))
    assert e.repl is not None and e.repl.source == "lean-interact cache" and e.repl.lean_version == "v4.19.0"


def test_elan_proxy_with_missing_toolchain_is_never_run(env: dict[str, Path],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy would download the toolchain: detection must not execute it, and must say so."""
    marker = env["root"] / "proxy-ran"
    elan_bin = env["elan"] / "bin"
    exe(elan_bin / "elan", "#!/bin/sh\necho 'elan 4.0.0 (fake)'\n")
    for name in ("lean", "lake"):
        exe(elan_bin / name, f"#!/bin/sh\ntouch {marker}\necho 'would download'\n")
    monkeypatch.setenv("PATH", f"{elan_bin}{os.pathsep}{env['bin']}")
    repl = repl_checkout(env["root"] / "repl")
    proj = project(env["root"] / "proj")
    e = detect(Settings(lean_project=str(proj), lean_repl_path=str(repl)))
    ok, why = e.local_status()
    assert not ok and "leanprover/lean4:v4.19.0" in why and "not installed" in why and "elan would download" in why
    assert e.lean.via_elan and e.lake.via_elan and e.lean.version is None
    assert e.project is not None and e.project.toolchain_installed is False
    assert not marker.exists()
    assert e.elan.version == "4.0.0"  # `elan --version` is safe to run


def test_elan_proxy_reads_versions_from_the_installed_toolchain(env: dict[str, Path],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    marker = env["root"] / "proxy-ran"
    elan_bin = env["elan"] / "bin"
    exe(elan_bin / "elan", "#!/bin/sh\necho 'elan 4.0.0'\n")
    for name in ("lean", "lake"):
        exe(elan_bin / name, f"#!/bin/sh\ntouch {marker}\n")
    tc = env["elan"] / "toolchains" / "leanprover--lean4---v4.19.0" / "bin"
    fake_tools(tc)
    (env["elan"] / "settings.toml").write_text('default_toolchain = "leanprover/lean4:v4.19.0"\n')
    monkeypatch.setenv("PATH", f"{elan_bin}{os.pathsep}{env['bin']}")
    repl = repl_checkout(env["root"] / "repl")
    e = detect(Settings(lean_repl_path=str(repl)))
    assert e.local_status() == (True, "")
    assert e.lean.via_elan and e.lean.version == "4.19.0"
    assert e.toolchains == ("leanprover/lean4:v4.19.0",) and e.default_toolchain == "leanprover/lean4:v4.19.0"
    assert not marker.exists()


def test_elan_bin_off_path_is_still_found(env: dict[str, Path]) -> None:
    elan_bin = env["elan"] / "bin"
    for name in ("elan", "lean", "lake"):
        exe(elan_bin / name, "#!/bin/sh\necho 'elan 4.0.0'\n")
    e = detect(Settings())
    assert e.lean.path == str(elan_bin / "lean") and e.lake.via_elan


def test_hanging_lean_is_bounded(env: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    exe(env["bin"] / "lean", "#!/bin/sh\n/bin/sleep 30\n")  # a wrapper whose child holds the pipes
    exe(env["bin"] / "lake", "#!/bin/sh\nexec /bin/sleep 30\n")
    monkeypatch.setattr(det, "VERSION_TIMEOUT_S", 0.5)
    started = time.monotonic()
    e = detect(Settings())
    assert time.monotonic() - started < 5.0
    assert e.lean.version is None and "took over" in e.lean.error
    assert "lake does not run" in " ".join(e.problems)


def test_explicit_lake_path(env: dict[str, Path], tmp_path: Path) -> None:
    e = detect(Settings(lake_path=str(tmp_path / "opt" / "lake")))
    assert e.lake.path is None
    fake_tools(tmp_path / "opt")
    repl = repl_checkout(tmp_path / "repl")
    e = detect(Settings(lake_path=str(tmp_path / "opt" / "lake"), lean_repl_path=str(repl)))
    assert e.local_status() == (True, "")
    assert e.lean.path == str(tmp_path / "opt" / "lean")  # found next to lake


def test_environment_is_json_serializable(env: dict[str, Path]) -> None:
    e = detect(Settings())
    data = json.loads(e.model_dump_json())
    assert data["problems"][0] == NO_TOOLCHAIN
