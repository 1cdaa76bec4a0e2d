"""``faithsieve doctor``: what can run on this machine, checked before anything uses it.

Each check is a value (``DoctorCheck``) with a status:

- ``ok``: present and working;
- ``off``: not configured (nothing to check);
- ``missing``: absent but optional under the current settings;
- ``fail``: required (z3, sympy) or configured (LLM endpoint, Lean backend and the lean-interact it
  needs, Lean server) and not working. ``--strict`` exits 1 when any check fails.

Nothing here installs, downloads or writes: Lean detection is file-system inspection plus
bounded ``--version`` calls (``faithsieve.lean.detect``), the LLM probe is one ``GET /models``
and the Lean-server probe one ``GET /health``, each with a 5 s limit. API keys are sent, never
printed.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal

import httpx
from pydantic import BaseModel, Field

from faithsieve.lean.detect import LeanEnvironment, detect
from faithsieve.runtime.urls import public_url

if TYPE_CHECKING:
    from faithsieve.core.settings import Settings

Status = Literal["ok", "off", "missing", "fail"]
HTTP_TIMEOUT_S = 5.0


class DoctorCheck(BaseModel):
    """One line of the report."""

    name: str
    status: Status
    summary: str
    details: dict[str, Any] = Field(default_factory=dict)


class DoctorReport(BaseModel):
    """All checks, in display order."""

    checks: list[DoctorCheck]
    notes: list[str] = Field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(c.status == "fail" for c in self.checks)

    def get(self, name: str) -> DoctorCheck:
        return next(c for c in self.checks if c.name == name)


def check_z3() -> DoctorCheck:
    try:
        import z3
    except ImportError as exc:
        return DoctorCheck(name="z3", status="fail", summary=f"not importable: {exc}")
    try:
        x = z3.Int("x")
        solver = z3.Solver()
        solver.set("timeout", 2000)
        solver.add(x > 1, x < 3)
        verdict = solver.check()
        value = solver.model()[x].as_long() if verdict == z3.sat else None
    except Exception as exc:  # noqa: BLE001 (a broken solver is a finding, not a crash)
        return DoctorCheck(name="z3", status="fail", summary=f"z3 {z3.get_version_string()} does not solve: {exc}")
    ok = verdict == z3.sat and value == 2
    return DoctorCheck(name="z3", status="ok" if ok else "fail",
                       summary=f"z3 {z3.get_version_string()}: 1 < x < 3 is {verdict}" + (f", x = {value}" if ok else ""),
                       details={"version": z3.get_version_string()})


def check_sympy() -> DoctorCheck:
    try:
        import sympy
    except ImportError as exc:
        return DoctorCheck(name="sympy", status="fail", summary=f"not importable: {exc}")
    x = sympy.Symbol("x")
    ok = sympy.simplify((x**2 - 1) / (x - 1) - (x + 1)) == 0
    return DoctorCheck(name="sympy", status="ok" if ok else "fail",
                       summary=f"sympy {sympy.__version__}" + ("" if ok else ": simplification check failed"),
                       details={"version": sympy.__version__})


def check_llm(settings: Settings, *, transport: httpx.BaseTransport | None = None) -> DoctorCheck:
    """One ``GET {llm_base_url}/models`` with a 5 s limit, only when an endpoint is configured."""
    if not settings.llm_base_url:
        return DoctorCheck(name="llm", status="off", summary="no endpoint configured (set FAITHSIEVE_LLM_BASE_URL and "
                                                            "FAITHSIEVE_LLM_MODEL for --mode llm / judge)")
    url = settings.llm_base_url.rstrip("/")
    endpoint = public_url(url)
    key = os.environ.get(settings.llm_api_key_env, "") if settings.llm_api_key_env else ""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    needed = settings.mode != "offline"
    bad: Status = "fail" if needed else "missing"
    details: dict[str, Any] = {"endpoint": endpoint, "model": settings.llm_model, "api_key": "set" if key else "unset"}

    def scrub(text: str) -> str:
        text = text.replace(url, endpoint)
        return text.replace(key, "***") if key and len(key) >= 4 else text

    try:
        with httpx.Client(transport=transport, timeout=HTTP_TIMEOUT_S) as client:
            r = client.get(f"{url}/models", headers=headers)
    except (httpx.ReadTimeout, httpx.WriteTimeout, httpx.PoolTimeout) as exc:  # connected, no answer: busy
        return DoctorCheck(name="llm", status=bad, details=details,
                           summary=scrub(f"{endpoint} busy or slow: no answer within {HTTP_TIMEOUT_S} s "
                                         f"({type(exc).__name__})")[:300])
    except httpx.HTTPError as exc:
        return DoctorCheck(name="llm", status=bad, details=details,
                           summary=scrub(f"{endpoint} unreachable: {type(exc).__name__}: {exc}")[:300])
    if r.status_code in (429, 503):
        return DoctorCheck(name="llm", status=bad, details=details,
                           summary=f"{endpoint} busy (HTTP {r.status_code} to GET /models); try again when it is idle")
    if r.status_code in (401, 403):
        return DoctorCheck(name="llm", status=bad, details=details,
                           summary=f"{endpoint} refused the key (HTTP {r.status_code}; key from ${settings.llm_api_key_env})")
    if r.status_code == 404:
        return DoctorCheck(name="llm", status="ok", details=details,
                           summary=f"{endpoint} reachable (no /models route); model {settings.llm_model or 'unset'}")
    if r.status_code != 200:
        return DoctorCheck(name="llm", status=bad, details=details,
                           summary=f"{endpoint} answered HTTP {r.status_code} to GET /models")
    try:
        ids = [str(m.get("id")) for m in r.json().get("data", []) if isinstance(m, dict)]
    except (ValueError, AttributeError):
        ids = []
    details["models"] = ids[:20]
    if not settings.llm_model:
        note, status = "no model configured (FAITHSIEVE_LLM_MODEL)", bad
    elif settings.llm_model in ids or not ids:
        note, status = f"model {settings.llm_model}", "ok"
    else:
        note, status = f"model {settings.llm_model} not listed (server offers {', '.join(ids[:5])})", "ok"
    return DoctorCheck(name="llm", status=status, summary=f"{endpoint} reachable; {note}", details=details)


def _lean_checks(settings: Settings, env: LeanEnvironment) -> list[DoctorCheck]:
    local = settings.lean_backend == "local"
    bad: Status = "fail" if local else "missing"
    checks = []
    lean = env.lean
    where = f" at {lean.path}" + (" (elan proxy)" if lean.via_elan else "") if lean.path else ""
    if lean.path is None and env.lake.path is None:
        elan = "no elan" if env.elan.path is None else f"elan at {env.elan.path}"
        checks.append(DoctorCheck(name="lean", status=bad, summary=f"not found: `lean` not on PATH, {elan}, "
                                  f"`{settings.lake_path}` not found", details={"lake_path": settings.lake_path}))
    elif lean.version:
        elan = f"; elan {env.elan.version}" if env.elan.version else ""
        checks.append(DoctorCheck(name="lean", status="ok", summary=f"Lean {lean.version}{where}{elan}",
                                  details={"lean": lean.model_dump(), "lake": env.lake.model_dump(),
                                           "toolchains": list(env.toolchains)}))
    else:
        checks.append(DoctorCheck(name="lean", status=bad, summary=f"`lean`{where} gives no version: "
                                  f"{lean.error or env.lake.error or 'unknown'}",
                                  details={"lean": lean.model_dump(), "lake": env.lake.model_dump()}))
    p = env.project
    if p is None:
        checks.append(DoctorCheck(name="mathlib", status="missing" if not (local and settings.lean_mathlib) else bad,
                                  summary="no Lean project configured (FAITHSIEVE_LEAN_PROJECT), so no Mathlib"))
    elif not p.exists:
        checks.append(DoctorCheck(name="mathlib", status=bad, summary=p.problems[0] if p.problems else "no project"))
    elif not p.mathlib:
        checks.append(DoctorCheck(name="mathlib", status=bad if settings.lean_mathlib else "missing",
                                  summary=f"Mathlib is not a dependency of {p.path}"))
    else:
        built = "built" if p.mathlib_built else "NOT built (run `lake exe cache get && lake build` there)"
        checks.append(DoctorCheck(name="mathlib", status="ok" if p.mathlib_built else bad,
                                  summary=f"Mathlib {env.mathlib_version} in {p.path}, {built}",
                                  details=p.model_dump()))
    if env.repl is not None:
        checks.append(DoctorCheck(name="lean-repl", status="ok", details=env.repl.model_dump(),
                                  summary=f"{env.repl.binary} ({env.repl.source}, Lean {env.repl.lean_version or '?'})"))
    else:
        reason = next((x for x in env.problems if "REPL" in x or "repl" in x), "no prebuilt Lean REPL found")
        checks.append(DoctorCheck(name="lean-repl", status=bad, summary=reason))
    return checks


def check_lean_interact(settings: Settings) -> DoctorCheck:
    """Whether the installed lean-interact can drive the local Lean backend (``lean.local.lean_interact_problem``:
    package metadata only, nothing imported): a missing or too old package is said in one line, a failure when
    the local backend is configured."""
    from importlib import metadata

    from faithsieve.lean import local

    problem = local.lean_interact_problem()
    if problem is not None:
        return DoctorCheck(name="lean-interact", status="fail" if settings.lean_backend == "local" else "missing",
                           summary=problem)
    try:
        version = metadata.version("lean-interact")
    except metadata.PackageNotFoundError:  # uninstalled between the two reads
        version = "?"
    return DoctorCheck(name="lean-interact", status="ok", summary=f"lean-interact {version}",
                       details={"version": version})


def check_lean_memory(settings: Settings) -> DoctorCheck:
    """What address space a Lean REPL started by ``faithsieve`` gets (``lean.local.repl_memory_mb``): the worker's
    own cap is a soft limit and does not pass to it; a hard limit below what it is given is a warning line."""
    from faithsieve.lean import local

    want = max(2 * settings.lean_memory_mb, local.HARD_LIMIT_FLOOR_MB)
    got, note = local.repl_memory_mb(want)
    short = got < local.HARD_LIMIT_FLOOR_MB
    status: Status = ("fail" if settings.lean_backend == "local" else "missing") if short else "ok"
    return DoctorCheck(name="lean-memory", status=status, summary=note, details={"repl_mb": got, "wanted_mb": want})


def check_lean_server(settings: Settings, *, transport: httpx.BaseTransport | None = None) -> DoctorCheck:
    if not settings.lean_server_url:
        return DoctorCheck(name="lean-server", status="off",
                           summary="no Lean server configured (FAITHSIEVE_LEAN_SERVER_URL)")
    from faithsieve.lean.remote import KiminaBackend

    backend = KiminaBackend(settings, transport=transport)
    try:
        ok, why = backend.available()
    finally:
        backend.close()
    bad: Status = "fail" if settings.lean_backend == "remote" else "missing"
    return DoctorCheck(name="lean-server", status="ok" if ok else bad,
                       summary=f"{backend.endpoint} healthy" if ok else why, details={"endpoint": backend.endpoint})


def check_backend(settings: Settings, env: LeanEnvironment, server: DoctorCheck,
                  interact: DoctorCheck | None = None) -> DoctorCheck:
    """What the Lean kernel would do with these settings (``--backend lean``); ``interact``: the lean-interact
    check (a toolchain without a usable lean-interact still fails fast)."""
    fallback = f"obligations fall back to the other checkers ({', '.join(settings.checkers)}) and the ones needing " \
               "Lean stay unknown"
    local_ok, local_why = env.local_status()
    if local_ok and interact is not None and interact.status != "ok":
        local_ok, local_why = False, interact.summary
    if local_ok:
        local = (f"checks in {settings.lean_workers} lean-interact REPL(s) (Lean {env.lean_version or '?'}, "
                 f"Mathlib {env.mathlib_version or 'none'}), {settings.lean_timeout_s:g} s per check, recycled after "
                 f"{settings.lean_recycle_after} commands or {settings.lean_memory_mb} MB")
    else:
        local = f"fails fast: {local_why}; {fallback}"
    details = {"lean_backend": settings.lean_backend, "local_ready": local_ok}
    if settings.lean_backend == "none":
        return DoctorCheck(name="backend", status="off", details=details,
                           summary=f"lean_backend=none: no formal checks. `--backend lean` (FAITHSIEVE_LEAN_BACKEND=local) {local}")
    if settings.lean_backend == "local":
        return DoctorCheck(name="backend", status="ok" if local_ok else "fail", details=details,
                           summary=f"lean_backend=local {local}")
    ok = server.status == "ok"
    return DoctorCheck(name="backend", status="ok" if ok else "fail", details=details,
                       summary=f"lean_backend=remote checks on {server.details.get('endpoint', '?')}" if ok
                       else f"lean_backend=remote fails fast: {server.summary}; {fallback}")


def run_doctor(settings: Settings, *, transport: httpx.BaseTransport | None = None) -> DoctorReport:
    """Run every check (``transport``: an httpx transport for the HTTP probes, for tests)."""
    env = detect(settings)
    checks = [check_z3(), check_sympy(), check_llm(settings, transport=transport)]
    checks.extend(_lean_checks(settings, env))
    interact = check_lean_interact(settings)
    checks.append(interact)
    checks.append(check_lean_memory(settings))
    server = check_lean_server(settings, transport=transport)
    checks.append(server)
    checks.append(check_backend(settings, env, server, interact))
    return DoctorReport(checks=checks, notes=list(env.notes))


def render_text(report: DoctorReport) -> str:
    """The report as aligned lines."""
    width = max(len(c.name) for c in report.checks)
    lines = ["faithsieve doctor"]
    for c in report.checks:
        lines.append(f"  {'[' + c.status + ']':<9} {c.name:<{width}}  {c.summary}")
    for n in report.notes:
        lines.append(f"  note: {n}")
    return "\n".join(lines)
