"""Find out what Lean there is on this machine, without installing or writing anything.

``detect(settings)`` looks for ``lean``, ``lake`` and ``elan`` (on ``PATH``, at ``lake_path``,
under ``$ELAN_HOME``), reads the configured project's ``lean-toolchain`` and
``lake-manifest.json`` (is Mathlib there, at which revision, is it built), and finds a prebuilt
Lean REPL. The result, a ``LeanEnvironment``, is what ``faithsieve doctor`` prints and what the
local backend's ``available()`` answers from.

Two rules keep this safe. Versions are read only by running a real toolchain binary with a short
time limit; elan's proxies (``~/.elan/bin/lean``, ``~/.elan/bin/lake``) are never run here,
because a proxy downloads whatever toolchain the current directory names. And nothing here
imports lean-interact (whose import and config set-up may create caches, clone or build).
With nothing installed, detection runs no subprocess at all and takes milliseconds.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from faithsieve.core.settings import Settings

_FROZEN = ConfigDict(frozen=True)

VERSION_TIMEOUT_S = 3.0
"""Time limit of one ``--version`` call."""

REPL_BINARY = Path(".lake") / "build" / "bin" / "repl"
"""Where a built REPL checkout keeps its executable (the layout lean-interact expects)."""

NO_TOOLCHAIN = ("no Lean toolchain: `lean` not on PATH; install elan or set FAITHSIEVE_LAKE_PATH / "
                "FAITHSIEVE_LEAN_PROJECT")


class Tool(BaseModel):
    """One executable of the toolchain."""

    model_config = _FROZEN

    name: str
    path: str | None = None
    """Where it was found (``None``: not found)."""
    version: str | None = None
    """Version string it reported (``None``: not asked or it failed)."""
    via_elan: bool = False
    """The executable is an elan proxy (never run directly by detection)."""
    error: str = ""
    """Why the version could not be read."""


class ProjectInfo(BaseModel):
    """The Lake project named by ``lean_project``."""

    model_config = _FROZEN

    path: str
    exists: bool = False
    toolchain: str | None = None
    """Contents of ``lean-toolchain`` (``leanprover/lean4:v4.19.0``)."""
    lean_version: str | None = None
    """The Lean version that toolchain names (``v4.19.0``)."""
    toolchain_installed: bool | None = None
    """Whether elan has that toolchain (``None``: not using elan, so not known)."""
    mathlib: bool = False
    """Mathlib is a dependency (or the project itself)."""
    mathlib_rev: str | None = None
    """Mathlib's pinned commit from ``lake-manifest.json``."""
    mathlib_input_rev: str | None = None
    """The revision the project asked for (a tag such as ``v4.19.0``, or a branch)."""
    mathlib_built: bool = False
    """``Mathlib.olean`` exists, so ``import Mathlib`` can load."""
    missing_packages: tuple[str, ...] = ()
    """Manifest packages not fetched under ``.lake/packages`` (lake would clone them)."""
    problems: tuple[str, ...] = ()


class ReplInfo(BaseModel):
    """A prebuilt Lean REPL (a ``leanprover-community/repl`` checkout after ``lake build``)."""

    model_config = _FROZEN

    directory: str
    binary: str
    lean_version: str | None = None
    """Lean version from the checkout's ``lean-toolchain``."""
    source: str = ""
    """How it was found: ``setting``, ``project package`` or ``lean-interact cache``."""


class LeanEnvironment(BaseModel):
    """Everything detection found; ``local_status()`` says whether the local backend can run."""

    model_config = _FROZEN

    lean: Tool
    lake: Tool
    elan: Tool
    elan_home: str | None = None
    toolchains: tuple[str, ...] = ()
    """Toolchains elan has installed."""
    default_toolchain: str | None = None
    project: ProjectInfo | None = None
    repl: ReplInfo | None = None
    problems: tuple[str, ...] = ()
    """Blocking problems, in the order they should be fixed (the first is the reason)."""
    notes: tuple[str, ...] = ()
    """Non-blocking remarks (Mathlib missing, versions unknown)."""
    elapsed_ms: float = 0.0

    @property
    def lean_version(self) -> str | None:
        """The Lean version checks would run under: the project's, else the REPL's, else ``lean``'s."""
        if self.project is not None and self.project.lean_version:
            return self.project.lean_version
        if self.repl is not None and self.repl.lean_version:
            return self.repl.lean_version
        return self.lean.version

    @property
    def mathlib_version(self) -> str | None:
        """``v4.19.0@1a2b3c4d5e6f`` style pin of Mathlib in the project, when there is one."""
        p = self.project
        if p is None or not p.mathlib:
            return None
        rev = (p.mathlib_rev or "")[:12]
        if p.mathlib_input_rev and rev:
            return f"{p.mathlib_input_rev}@{rev}"
        return p.mathlib_input_rev or rev or "present (revision unknown)"

    def local_status(self) -> tuple[bool, str]:
        """``(True, "")`` when the local backend can start, else ``(False, first problem)``."""
        return (False, self.problems[0]) if self.problems else (True, "")


def normalize_lean_version(text: str | None) -> str | None:
    """``leanprover/lean4:v4.19.0`` / ``4.19.0`` / ``v4.19.0`` -> ``v4.19.0``; other text unchanged."""
    if not text:
        return None
    text = text.strip()
    if ":" in text:
        text = text.rsplit(":", 1)[1]
    if re.match(r"^\d+\.\d+", text):
        text = "v" + text
    return text or None


def _decode_toolchain_dir(name: str) -> str:
    """elan stores ``leanprover/lean4:v4.19.0`` as ``leanprover--lean4---v4.19.0``."""
    return name.replace("---", ":").replace("--", "/")


def _run_version(binary: str) -> tuple[str | None, str]:
    """``binary --version`` under a time limit; the whole process group is killed when it is hit
    (a wrapper script's children would otherwise keep the pipes open)."""
    try:
        proc = subprocess.Popen([binary, "--version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    except OSError as exc:
        return None, f"`{binary} --version` could not run: {exc.strerror or exc}"
    try:
        stdout, stderr = proc.communicate(timeout=VERSION_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
        proc.communicate()
        return None, f"`{binary} --version` took over {VERSION_TIMEOUT_S:g} s"
    out = (stdout or stderr or "").strip()
    if proc.returncode != 0:
        return None, f"`{binary} --version` exited with {proc.returncode}: {' '.join(out.split())[:200]}"
    m = re.search(r"version\s+(\d[^\s,]*)", out) or re.search(r"\b(\d+\.\d+[^\s,()]*)", out)
    return (m.group(1) if m else out.splitlines()[0][:120] if out else None), ""


def _which(name_or_path: str) -> str | None:
    if os.sep in name_or_path or (os.altsep and os.altsep in name_or_path):
        p = Path(name_or_path).expanduser()
        return str(p) if p.is_file() and os.access(p, os.X_OK) else None
    return shutil.which(name_or_path)


def _is_proxy(path: str, elan_bin: Path | None, elan_exe: str | None) -> bool:
    """An elan proxy: in elan's ``bin`` folder, or a link to the elan executable."""
    try:
        if elan_bin is not None and elan_bin.resolve() in (Path(path).parent.resolve(), Path(path).resolve().parent):
            return True
        return elan_exe is not None and (os.path.samefile(path, elan_exe)
                                         or Path(path).resolve().name in ("elan", "elan-init"))
    except OSError:
        return False


def _toolchain_from_files(start: Path) -> tuple[str | None, str]:
    """The toolchain a directory selects (its or a parent's ``lean-toolchain``) and that file."""
    for d in (start, *start.parents):
        f = d / "lean-toolchain"
        if f.is_file():
            try:
                return f.read_text(encoding="utf-8").strip() or None, str(f)
            except OSError:
                return None, str(f)
    return None, ""


def _match_toolchain(wanted: str, installed: dict[str, Path]) -> Path | None:
    if wanted in installed:
        return installed[wanted]
    short = normalize_lean_version(wanted)
    for name, path in installed.items():
        if normalize_lean_version(name) == short:
            return path
    return None


def _read_manifest(project: Path) -> list[dict[str, Any]]:
    f = project / "lake-manifest.json"
    if not f.is_file():
        return []
    try:
        data = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    pkgs = data.get("packages", []) if isinstance(data, dict) else []
    return [p for p in pkgs if isinstance(p, dict)]


def _mathlib_built(root: Path) -> bool:
    return any((root / rel).is_file() for rel in (".lake/build/lib/lean/Mathlib.olean", ".lake/build/lib/Mathlib.olean",
                                                  "build/lib/Mathlib.olean"))


def _inspect_project(path: str) -> ProjectInfo:
    root = Path(path).expanduser()
    if not root.is_dir():
        return ProjectInfo(path=str(root), problems=(f"Lean project {root} does not exist (FAITHSIEVE_LEAN_PROJECT)",))
    problems: list[str] = []
    toolchain = None
    tc_file = root / "lean-toolchain"
    if tc_file.is_file():
        toolchain = tc_file.read_text(encoding="utf-8", errors="replace").strip() or None
    if toolchain is None:
        problems.append(f"Lean project {root} has no lean-toolchain file (is it a Lake project?)")
    pkgs = _read_manifest(root)
    mathlib = next((p for p in pkgs if str(p.get("name", "")).lower() == "mathlib"), None)
    own_lakefile = " ".join((root / n).read_text(encoding="utf-8", errors="replace")
                            for n in ("lakefile.lean", "lakefile.toml") if (root / n).is_file())
    is_mathlib = bool(re.search(r'package\s+«?mathlib»?|name\s*=\s*"mathlib"', own_lakefile))
    pkg_dir = root / ".lake" / "packages"
    missing = tuple(str(p.get("name")) for p in pkgs if p.get("type", "git") == "git" and p.get("name")
                    and not (pkg_dir / str(p["name"])).is_dir() and not (root / "lake-packages" / str(p["name"])).is_dir())
    if missing:
        problems.append(f"Lean project {root}: dependencies not fetched ({', '.join(missing[:5])}); run "
                        "`lake exe cache get && lake build` there yourself (FaithSieve never lets lake clone)")
    built = is_mathlib and _mathlib_built(root)
    if mathlib is not None:
        built = any(_mathlib_built(d / "mathlib") for d in (pkg_dir, root / "lake-packages"))
    return ProjectInfo(path=str(root), exists=True, toolchain=toolchain, lean_version=normalize_lean_version(toolchain),
                       mathlib=mathlib is not None or is_mathlib,
                       mathlib_rev=str(mathlib.get("rev")) if mathlib and mathlib.get("rev") else None,
                       mathlib_input_rev=str(mathlib.get("inputRev")) if mathlib and mathlib.get("inputRev") else None,
                       mathlib_built=built, missing_packages=missing, problems=tuple(problems))


def _repl_at(directory: Path, source: str) -> ReplInfo:
    tc_file = directory / "lean-toolchain"
    tc = tc_file.read_text(encoding="utf-8", errors="replace").strip() if tc_file.is_file() else None
    return ReplInfo(directory=str(directory), binary=str(directory / REPL_BINARY),
                    lean_version=normalize_lean_version(tc), source=source)


def _lean_interact_cache() -> Path | None:
    """lean-interact's cache folder, found without importing the package (its import creates it)."""
    try:
        spec = importlib.util.find_spec("lean_interact")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).parent / "cache"


def _find_repl(setting: str | None, project: ProjectInfo | None, wanted: str | None) -> tuple[ReplInfo | None, str]:
    """A prebuilt REPL, and a problem when the configured one is unusable."""
    if setting:
        p = Path(setting).expanduser()
        if p.is_file():
            if p.parts[-4:] == (".lake", "build", "bin", "repl"):
                return _repl_at(p.parents[3], "setting"), ""
            return None, (f"lean_repl_path {p} is a binary outside a REPL checkout; give the checkout directory "
                          "(the one holding .lake/build/bin/repl)")
        if p.is_dir():
            if (p / REPL_BINARY).is_file():
                return _repl_at(p, "setting"), ""
            return None, f"lean_repl_path {p} is not built (no .lake/build/bin/repl): run `lake build` there"
        return None, f"lean_repl_path {p} does not exist (FAITHSIEVE_LEAN_REPL_PATH)"
    if project is not None and project.exists:
        for name in ("repl", "REPL", "Repl"):
            d = Path(project.path) / ".lake" / "packages" / name
            if (d / REPL_BINARY).is_file():
                return _repl_at(d, "project package"), ""
    cache = _lean_interact_cache()
    if cache is not None and cache.is_dir():
        found = [_repl_at(b.parents[3], "lean-interact cache")
                 for b in sorted(cache.glob("*/*/repl_*/.lake/build/bin/repl")) if b.is_file()]
        for r in found:
            if wanted is None or r.lean_version == wanted:
                return r, ""
    return None, ""


def _elan() -> tuple[Path, Path | None, str | None, dict[str, Path], str | None]:
    """elan's home, its bin folder, its executable, the installed toolchains and the default one."""
    elan_home = Path(os.environ.get("ELAN_HOME") or Path.home() / ".elan")
    elan_bin = elan_home / "bin" if (elan_home / "bin").is_dir() else None
    elan_path = shutil.which("elan") or (str(elan_bin / "elan") if elan_bin and (elan_bin / "elan").is_file() else None)
    installed: dict[str, Path] = {}
    if (elan_home / "toolchains").is_dir():
        installed = {_decode_toolchain_dir(d.name): d for d in sorted((elan_home / "toolchains").iterdir()) if d.is_dir()}
    default_tc = None
    settings_file = elan_home / "settings.toml"
    if settings_file.is_file():
        m = re.search(r'default_toolchain\s*=\s*"([^"]+)"', settings_file.read_text(encoding="utf-8", errors="replace"))
        default_tc = m.group(1) if m else None
    return elan_home, elan_bin, elan_path, installed, default_tc


def _lean_and_lake(settings: Settings, elan_bin: Path | None) -> tuple[str | None, str | None]:
    """Where ``lean`` and ``lake`` are: on PATH, in elan's bin folder, or next to each other."""
    lake_path = _which(settings.lake_path)
    lean_path = shutil.which("lean")
    if elan_bin is not None:  # elan installed but its bin folder not on PATH
        if lean_path is None and (elan_bin / "lean").is_file():
            lean_path = str(elan_bin / "lean")
        if lake_path is None and settings.lake_path == "lake" and (elan_bin / "lake").is_file():
            lake_path = str(elan_bin / "lake")
    if lean_path is None and lake_path is not None and (Path(lake_path).parent / "lean").is_file():
        lean_path = str(Path(lake_path).parent / "lean")
    if lake_path is None and settings.lake_path == "lake" and lean_path is not None \
            and (Path(lean_path).parent / "lake").is_file():
        lake_path = str(Path(lean_path).parent / "lake")
    return lean_path, lake_path


def _selector(project: ProjectInfo | None, repl: ReplInfo | None, default_tc: str | None) -> tuple[str | None, str]:
    """Which toolchain would run, and what selects it: the project, the REPL checkout or elan's default."""
    if project and project.toolchain:
        return project.toolchain, "the project"
    if repl is not None:
        selector = _toolchain_from_files(Path(repl.directory))[0]
        if selector is not None:
            return selector, "the REPL checkout"
    return os.environ.get("ELAN_TOOLCHAIN") or default_tc, "elan's default"


def _tool(name: str, path: str | None, proxy: bool, tc_dir: Path | None, run_versions: bool) -> Tool:
    if path is None:
        return Tool(name=name)
    binary = str(tc_dir / "bin" / name) if proxy and tc_dir is not None else (None if proxy else path)
    if not run_versions or binary is None:
        return Tool(name=name, path=path, via_elan=proxy,
                    error="elan proxy; its toolchain is not installed" if proxy and binary is None else "")
    version, error = _run_version(binary)
    return Tool(name=name, path=path, version=version, via_elan=proxy, error=error)


def _toolchain_problems(settings: Settings, lean_path: str | None, lake_path: str | None, elan_path: str | None,
                        project: ProjectInfo | None, tc_installed: bool | None, selector: str | None,
                        selector_src: str, lake: Tool) -> list[str]:
    problems: list[str] = []
    if lake_path is None:
        if lean_path is None and elan_path is None:
            problems.append(NO_TOOLCHAIN)
        elif settings.lake_path != "lake":
            problems.append(f"`lake` not found at {settings.lake_path} (FAITHSIEVE_LAKE_PATH)")
        else:
            problems.append("`lake` not found on PATH (set FAITHSIEVE_LAKE_PATH)")
    if project is not None:
        problems.extend(project.problems)
    if tc_installed is False:
        problems.append(f"Lean toolchain {selector} (selected by {selector_src}) is not installed; elan would download "
                        f"it on first use: run `elan toolchain install {selector}` yourself")
    elif lake.path and lake.error and not lake.via_elan:
        problems.append(f"lake does not run: {lake.error}")
    return problems


def _repl_problems(project: ProjectInfo | None, repl: ReplInfo | None, repl_problem: str) -> list[str]:
    problems: list[str] = []
    if repl_problem:
        problems.append(repl_problem)
    elif repl is None:
        problems.append("no prebuilt Lean REPL: set FAITHSIEVE_LEAN_REPL_PATH to a checkout of "
                        "github.com/leanprover-community/repl built with `lake build` for your Lean version "
                        "(FaithSieve never clones or builds one)")
    if project is not None and repl is not None and project.lean_version and repl.lean_version \
            and project.lean_version != repl.lean_version:
        problems.append(f"REPL at {repl.directory} is built for Lean {repl.lean_version} but the project uses "
                        f"{project.lean_version}; build a REPL for {project.lean_version}")
    return problems


def _notes(lean: Tool, project: ProjectInfo | None) -> list[str]:
    notes: list[str] = []
    if lean.version and not lean.via_elan and project is not None and project.lean_version \
            and normalize_lean_version(lean.version) != project.lean_version:
        notes.append(f"`lean` on PATH is {normalize_lean_version(lean.version)} but the project asks for "
                     f"{project.lean_version}")
    if project is None:
        notes.append("no Lean project (FAITHSIEVE_LEAN_PROJECT unset): core Lean only, no Mathlib")
    elif project.exists and not project.mathlib:
        notes.append(f"Mathlib is not a dependency of {project.path}: `import Mathlib` snippets will fail")
    elif project.exists and not project.mathlib_built:
        notes.append(f"Mathlib in {project.path} is not built: run `lake exe cache get && lake build` there")
    return notes


def detect(settings: Settings, *, run_versions: bool = True) -> LeanEnvironment:
    """Inspect the machine for the local Lean backend configured by ``settings`` (no side effects)."""
    started = time.perf_counter()
    elan_home, elan_bin, elan_path, installed, default_tc = _elan()
    lean_path, lake_path = _lean_and_lake(settings, elan_bin)
    project = _inspect_project(settings.lean_project) if settings.lean_project else None
    repl, repl_problem = _find_repl(settings.lean_repl_path, project, project.lean_version if project else None)
    selector, selector_src = _selector(project, repl, default_tc)
    lean_proxy = lean_path is not None and _is_proxy(lean_path, elan_bin, elan_path)
    lake_proxy = lake_path is not None and _is_proxy(lake_path, elan_bin, elan_path)
    tc_dir = _match_toolchain(selector, installed) if selector else None
    tc_installed: bool | None = None
    if lean_proxy or lake_proxy:
        tc_installed = tc_dir is not None
        if project is not None and project.exists:
            project = project.model_copy(update={"toolchain_installed": tc_installed})

    lean = _tool("lean", lean_path, lean_proxy, tc_dir, run_versions)
    lake = _tool("lake", lake_path, lake_proxy, tc_dir, run_versions)
    elan = Tool(name="elan", path=elan_path)
    if elan_path and run_versions:
        v, e = _run_version(elan_path)  # elan's own --version never installs anything
        elan = elan.model_copy(update={"version": v, "error": e})

    problems = (_toolchain_problems(settings, lean_path, lake_path, elan_path, project, tc_installed, selector,
                                    selector_src, lake)
                + _repl_problems(project, repl, repl_problem))
    notes = _notes(lean, project)
    return LeanEnvironment(lean=lean, lake=lake, elan=elan, elan_home=str(elan_home) if elan_bin else None,
                           toolchains=tuple(installed), default_toolchain=default_tc, project=project, repl=repl,
                           problems=tuple(dict.fromkeys(problems)), notes=tuple(notes),
                           elapsed_ms=(time.perf_counter() - started) * 1000.0)
