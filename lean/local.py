"""``LocalLeanBackend``: check snippets in local Lean REPLs driven by lean-interact.

Detection comes first (``faithsieve.lean.detect``): without a toolchain, a prebuilt REPL and
(when configured) a fetched project, ``available()`` says why in one line and ``check()`` raises
``LeanUnavailable`` at once. lean-interact is imported only after that, and configured so it
never clones, downloads or builds: ``LeanREPLConfig(local_repl_path=..., build_repl=False)`` and
``LocalProject(auto_build=False)``.

The backend keeps ``lean_workers`` REPL slots, each started on first use (``LeanServer``: one
``lake env repl`` process). Every command gets a time limit (lean-interact has none by default).
A REPL is retired after ``lean_recycle_after`` commands or when its resident memory (process tree)
exceeds ``lean_memory_mb``; an address-space ceiling of ``max(2 * lean_memory_mb, 16 GiB)`` stops a
single runaway command. That ceiling is clipped to the hard limit of the process that starts the REPL
(``repl_memory_mb``): a worker's own cap (4 GiB, a soft limit) never passes to the REPL, and a hard limit
below the ceiling is said (a warning here, a line in ``faithsieve doctor``). A REPL that dies or stops answering yields ``repl_error`` / ``timeout``
for that command, and the next command starts a fresh one.

Leading ``import`` lines are elaborated once per REPL, as a command of their own under their own
limit (``IMPORT_TIMEOUT_S``, 15 minutes by default: ``import Mathlib`` loads some GiB of ``.olean``
files and takes from seconds to minutes on a cold disk), and the rest of each snippet runs in that
environment (``env``), with message lines shifted back to snippet coordinates and the check's own
limit. So a REPL imports Mathlib once when it starts and every later check reuses the environment;
a check's time limit never covers the import. Proof attempts are bounded by ``maxHeartbeats`` (see
``faithsieve.lean.kernel``), which Lean reports as an error in a REPL that stays alive; only the
wall-clock limit, the backstop, kills the process (lean-interact's ``run(timeout=)`` does), and then
the next check starts a fresh REPL and imports again. An import that runs past its limit is not
retried: later snippets with that header answer ``repl_error`` at once, with the reason.

lean-interact is imported lazily, inside the ``try`` that reports an unusable install: a missing
package, one older than ``MIN_LEAN_INTERACT`` (``build_repl`` arrived in 0.6, ``auto_build`` in 0.8,
``enable_parallel_elaboration`` in 0.9) or one that rejects the configuration gives
``LeanUnavailable`` with the reason, never an uncaught ``TypeError``.

Why not lean-interact's ``LeanServerPool`` / ``AutoLeanServer``: the pool starts every worker
eagerly, and the auto server restarts on *system-wide* memory pressure with exponential sleeps
(up to 2**5 s) before raising ``MemoryError``; the plain ``LeanServer`` plus the slot logic here
gives bounded, per-command behaviour.
"""

from __future__ import annotations

import logging
import queue
import re
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from faithsieve.lean.backend import CheckResult, CheckStatus, LeanUnavailable
from faithsieve.lean.detect import LeanEnvironment, detect
from faithsieve.lean.screen import classify_repl
from faithsieve.lean.versions import parse_version
from typing_extensions import Self

if TYPE_CHECKING:
    from faithsieve.core.settings import Settings

log = logging.getLogger(__name__)

BACKEND_NAME = "lean-interact"

IMPORT_TIMEOUT_S = 900.0
"""Default time limit of the import command a REPL runs once (``LocalLeanBackend(import_timeout_s=)``)."""
MIN_LEAN_INTERACT = (0, 9)
"""Oldest lean-interact whose keywords this backend uses (``enable_parallel_elaboration``: 0.9)."""

HARD_LIMIT_FLOOR_MB = 16384
"""Least address-space ceiling given to a REPL (Mathlib's mapped .olean files need several GiB)."""

_ENV_PROBLEM = re.compile(r"unknown module prefix|unknown package|object file .* does not exist|"
                          r"incompatible header|failed to read file .*\.olean", re.IGNORECASE)
"""Errors that mean the environment cannot load the imports (not a fact about the snippet)."""


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _death_detail(exc: BaseException) -> str:
    """A line about a REPL that died: lean-interact's message carries its stdout/stderr dumps."""
    text = str(exc)
    m = re.search(r"stderr:\n(.*?)\n-{10,}", text, re.DOTALL)
    stderr = m.group(1).strip() if m else ""
    if stderr:
        return f"the Lean REPL died ({type(exc).__name__}); stderr: {_one_line(stderr[-400:], 240)}"
    return f"the Lean REPL died ({type(exc).__name__}: {_one_line(text.split(chr(10))[0], 160)}), no stderr"


def result_from_repl(data: Any, *, backend: str, time_ms: float = 0.0, line_offset: int = 0) -> CheckResult:
    """Classify one REPL command answer (the REPL's JSON, as lean-interact or Kimina return it):
    ``faithsieve.lean.screen.classify_repl``, with message lines moved by ``line_offset`` and
    import failures (the environment, not the snippet) turned into ``repl_error``."""
    res = classify_repl(data, backend=backend, time_ms=time_ms)
    if line_offset and res.messages:
        moved = tuple(m.model_copy(update={"line": m.line + line_offset}) if m.line is not None else m
                      for m in res.messages)
        res = res.model_copy(update={"messages": moved})
    if res.status == "lean_error":
        env_error = next((m for m in res.errors if _ENV_PROBLEM.search(m.text)), None)
        if env_error is not None:
            res = res.model_copy(update={"status": "repl_error", "detail": "the Lean environment cannot load the "
                                         f"imports: {_one_line(env_error.text, 200)}"})
    return res


def split_header(code: str) -> tuple[str, str, int]:
    """``(imports, rest, lines before rest)``: the leading ``import`` lines (blank lines and ``--``
    comments among them allowed) and the remainder; ``("", code, 0)`` when there are none."""
    lines = code.split("\n")
    end = 0
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith("import "):
            end = i + 1
        elif s and not s.startswith("--"):
            break
    if end == 0:
        return "", code, 0
    imports = "\n".join(ln.strip() for ln in lines[:end] if ln.strip().startswith("import "))
    return imports, "\n".join(lines[end:]), end


def lean_interact_problem() -> str | None:
    """Why the installed lean-interact cannot drive this backend (None: it can). Reads the package
    metadata only; the package itself is imported later, in ``_lean_config``."""
    from importlib import metadata

    try:
        installed = metadata.version("lean-interact")
    except metadata.PackageNotFoundError:
        return "lean-interact is not installed (pip install 'lean-interact>=0.9')"
    found = tuple(int(x) for x in re.findall(r"\d+", installed)[:2])
    if found < MIN_LEAN_INTERACT:
        return (f"lean-interact {installed} is too old (needs >= {'.'.join(map(str, MIN_LEAN_INTERACT))}: "
                "pip install -U 'lean-interact>=0.9')")
    return None


_MIB = 1024 * 1024


def repl_memory_mb(want_mb: int, limits: tuple[int, int] | None = None) -> tuple[int, str]:
    """The address-space limit (MiB) a REPL started from this process gets, and one line saying so.

    lean-interact sets ``RLIMIT_AS`` to ``(limit, limit)`` in the REPL's child before it runs Lean, and says
    nothing when that fails (it does without privileges when ``limit`` is above the hard limit, and the REPL
    then keeps the caller's soft limit, a worker's 4 GiB cap). So the limit asked for is ``want_mb`` clipped to
    the hard limit: raising a soft limit up to the hard one needs no privileges, so the REPL gets exactly
    that, never the worker's cap. ``limits``: ``(soft, hard)`` in bytes (default: this process's)."""
    try:
        import resource
    except ImportError:  # not a POSIX system: lean-interact sets no limit there either
        return want_mb, "no address-space limits on this platform (the Lean REPL is not capped)"
    soft, hard = limits if limits is not None else resource.getrlimit(resource.RLIMIT_AS)
    own = "unlimited" if soft == resource.RLIM_INFINITY else f"{soft // _MIB} MiB"
    if hard == resource.RLIM_INFINITY or hard >= want_mb * _MIB:
        ceiling = "unlimited" if hard == resource.RLIM_INFINITY else f"{hard // _MIB} MiB"
        return want_mb, (f"the Lean REPL gets {want_mb} MiB of address space (hard limit {ceiling}; the soft limit "
                         f"of the process that starts it, {own} here, a worker's cap in a worker, does not pass to it)")
    got = hard // _MIB
    return got, (f"the Lean REPL gets only {got} MiB of address space, the hard limit here (it is given {want_mb} MiB "
                 "where the hard limit allows; import Mathlib maps several GiB and may fail): raise the hard limit "
                 "before starting faithsieve (it takes privileges: `ulimit -Hv unlimited` in a root shell, "
                 "`prlimit --as=unlimited --pid PID` as root, or an `as` line in /etc/security/limits.conf)")


def _rss_mb(server: Any) -> float:
    return float(server.get_memory_usage())


class _Worker:
    """One REPL slot: the server (``None`` until started or after retirement) and its bookkeeping."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.server: Any = None
        self.commands = 0
        self.headers: dict[str, int] = {}


class LocalLeanBackend:
    """A ``LeanBackend`` over local REPLs (see the module docstring)."""

    name = BACKEND_NAME

    def __init__(self, settings: Settings, *, environment: LeanEnvironment | None = None,
                 memory_probe: Callable[[Any], float] | None = None, import_timeout_s: float = IMPORT_TIMEOUT_S) -> None:
        """``environment``: detection already done (else done here, fast, no side effects);
        ``memory_probe``: MB used by a server (default: resident memory of its process tree);
        ``import_timeout_s``: the limit of the one import command per REPL."""
        self.settings = settings
        self.import_timeout_s = import_timeout_s
        self._import_failures: dict[str, str] = {}
        self._startup_headers: set[str] = set()
        self.environment = environment if environment is not None else detect(settings)
        self._memory_probe = memory_probe or _rss_mb
        self._config: Any = None
        self._config_lock = threading.Lock()
        self._stats_lock = threading.Lock()
        self._workers = [_Worker(i) for i in range(settings.lean_workers)]
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        for w in reversed(self._workers):
            self._idle.put(w)
        self._closed = False
        self.memory_note = ""
        """What address space the REPLs get (``repl_memory_mb``), once the configuration is built."""
        self.counters = {"started": 0, "recycled_count": 0, "recycled_memory": 0, "crashed": 0, "timeouts": 0,
                         "commands": 0, "imports": 0}

    # ---- the protocol ----
    def available(self) -> tuple[bool, str]:
        if self._closed:
            return False, "the local Lean backend is closed"
        return self.environment.local_status()

    def versions(self) -> dict[str, str]:
        env = self.environment
        mathlib = env.mathlib_version or ("none" if env.project is None or (env.project.exists and not env.project.mathlib)
                                          else "unknown")
        return {"lean": env.lean_version or "unknown", "mathlib": mathlib}

    def check(self, code: str, timeout_s: float | None = None) -> CheckResult:
        ok, why = self.available()
        if not ok:
            raise LeanUnavailable(why)
        timeout = float(timeout_s) if timeout_s and timeout_s > 0 else self.settings.lean_timeout_s
        if not code.strip():
            return CheckResult(status="valid", backend=self.name, detail="empty snippet")
        try:
            worker = self._idle.get(timeout=timeout)
        except queue.Empty:
            return CheckResult(status="timeout", backend=self.name,
                               detail=f"no Lean REPL free within {timeout:g} s (busy, or importing its header again "
                                      "after a restart)")
        handed_off = False
        try:
            if self._closed:
                raise LeanUnavailable("the local Lean backend is closed")
            result = self._check_on(worker, code, timeout)
            handed_off = self._rewarm_in_background(worker)
            return result
        finally:
            if self._closed:
                self._retire(worker, None)
            if not handed_off:
                self._idle.put(worker)

    def warm(self, header: str) -> CheckResult:
        """Start every REPL and import ``header`` in each, under the import limit: the worker's start-up,
        outside any check's limit. From then on ``header`` is a start-up header: a check never imports it (a
        REPL restarted after a kill answers ``repl_error`` at once and imports it again in the background,
        before it takes another check). ``valid`` with the time taken, or the first failure."""
        ok, why = self.available()
        if not ok:
            raise LeanUnavailable(why)
        started = time.perf_counter()
        self._startup_headers.add(header)
        failure: CheckResult | None = None
        held = [self._idle.get() for _ in self._workers]  # every slot, each once
        try:
            for worker in held:
                answer = self._warm_slot(worker, started)
                failure = failure or (answer if answer.status != "valid" else None)
        finally:
            for worker in held:
                self._idle.put(worker)
        return failure or self._fail("valid", f"{len(held)} REPL(s) started, header imported", started)

    def _warm_slot(self, worker: _Worker, started: float) -> CheckResult:
        """Start ``worker``'s REPL if needed and import every start-up header it lacks."""
        if worker.server is not None and not worker.server.is_alive():
            self._retire(worker, "crashed")
        if worker.server is None:
            try:
                self._start(worker)
            except LeanUnavailable as exc:
                return self._fail("repl_error", exc.message, started)
            except Exception as exc:  # noqa: BLE001 (any start failure is a reason)
                return self._fail("repl_error", f"the Lean REPL could not start: {_one_line(str(exc), 240)}", started)
        for header in sorted(self._startup_headers):
            if header and header not in worker.headers and header not in self._import_failures:
                got = self._import(worker, header, started)
                if isinstance(got, CheckResult):  # recorded: later checks with the header say so at once
                    why = got.detail or "; ".join(m.text for m in got.errors) or got.status
                    self._import_failures.setdefault(header, f"the imports ({_one_line(header, 80)}) failed at "
                                                             f"start-up: {_one_line(why, 200)}")
                    return got
        return self._fail("valid", "", started)

    def _rewarm_in_background(self, worker: _Worker) -> bool:
        """A slot whose REPL lost a start-up header (killed, recycled) imports it again in a thread, holding
        the slot until done; True when the slot was handed to that thread."""
        if self._closed or not any(h and h not in worker.headers and h not in self._import_failures
                                   for h in self._startup_headers):
            return False

        def rewarm() -> None:
            try:
                self._warm_slot(worker, time.perf_counter())
            finally:
                if self._closed:
                    self._retire(worker, None)
                self._idle.put(worker)

        threading.Thread(target=rewarm, daemon=True, name=f"lean-rewarm-{worker.index}").start()
        return True

    def close(self) -> None:
        self._closed = True
        for w in self._workers:
            self._retire(w, None)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- lean-interact set-up ----
    def _lean_config(self) -> Any:
        """The ``LeanREPLConfig``, built once; never builds, clones or downloads anything."""
        with self._config_lock:
            if self._config is not None:
                return self._config
            env = self.environment
            assert env.repl is not None and env.lake.path is not None  # local_status() said so
            problem = lean_interact_problem()
            if problem is not None:
                raise LeanUnavailable(problem)
            version = parse_version(env.lean_version)
            try:
                from lean_interact import LeanREPLConfig, LocalProject

                project = (LocalProject(directory=env.project.path, lake_path=env.lake.path, auto_build=False)
                           if env.project is not None else None)
                limit_mb, self.memory_note = repl_memory_mb(max(2 * self.settings.lean_memory_mb, HARD_LIMIT_FLOOR_MB))
                if limit_mb < HARD_LIMIT_FLOOR_MB:
                    log.warning("%s", self.memory_note)
                self._config = LeanREPLConfig(
                    project=project, local_repl_path=env.repl.directory, build_repl=False, lake_path=env.lake.path,
                    memory_hard_limit_mb=limit_mb,
                    enable_incremental_optimization=version is not None and version >= (4, 8, 0),
                    enable_parallel_elaboration=version is not None and version >= (4, 19, 0), verbose=False)
            except ImportError as exc:
                raise LeanUnavailable(f"lean-interact cannot be imported: {_one_line(str(exc), 200)}") from None
            except (ValueError, RuntimeError, OSError, TypeError) as exc:
                raise LeanUnavailable(f"lean-interact rejected the configuration ({type(exc).__name__}: "
                                      f"{_one_line(str(exc), 200)}); lean-interact >= 0.9 is needed") from None
            return self._config

    def _start(self, worker: _Worker) -> None:
        config = self._lean_config()
        try:
            from lean_interact import LeanServer
        except ImportError as exc:
            raise LeanUnavailable(f"lean-interact cannot be imported: {_one_line(str(exc), 200)}") from None
        worker.server = LeanServer(config)
        worker.commands = 0
        worker.headers = {}
        self._count("started")

    def _retire(self, worker: _Worker, reason: str | None) -> None:
        server, worker.server = worker.server, None
        worker.headers = {}
        worker.commands = 0
        if server is not None:
            try:
                server.kill()
            except Exception as exc:  # noqa: BLE001 (best effort: the process may already be gone)
                log.debug("killing REPL %d: %s", worker.index, exc)
            if reason:
                self._count(reason)

    def _count(self, key: str) -> None:
        with self._stats_lock:
            self.counters[key] = self.counters.get(key, 0) + 1

    # ---- one check ----
    def _fail(self, status: CheckStatus, detail: str, started: float) -> CheckResult:
        return CheckResult(status=status, detail=detail, backend=self.name,
                           time_ms=(time.perf_counter() - started) * 1000.0)

    def _check_on(self, worker: _Worker, code: str, timeout: float) -> CheckResult:
        started = time.perf_counter()
        if worker.server is not None and not worker.server.is_alive():
            self._retire(worker, "crashed")  # died between commands
        if worker.server is None:
            try:
                self._start(worker)
            except LeanUnavailable:
                raise
            except Exception as exc:  # noqa: BLE001 (any start failure is this command's repl_error)
                return self._fail("repl_error", f"the Lean REPL could not start: {_one_line(str(exc), 240)}", started)
        header, body, offset = split_header(code)
        env: int | None = None
        if header and body.strip():
            env = worker.headers.get(header)
            if env is None and header in self._import_failures:
                return self._fail("repl_error", self._import_failures[header], started)
            if env is None and header in self._startup_headers:
                return self._fail("repl_error", f"this Lean REPL restarted and has not imported {_one_line(header, 80)} "
                                  "again; imports run at start-up, outside a check's limit (it is being imported again "
                                  "before the REPL takes another check)", started)
            if env is None:
                got = self._import(worker, header, started)
                if isinstance(got, CheckResult):
                    return got
                env = got
        text, shift = (body, offset) if env is not None else (code, 0)
        answer = self._run(worker, text, env, timeout, started)
        if isinstance(answer, CheckResult):
            return answer
        result = result_from_repl(answer, backend=self.name, line_offset=shift,
                                  time_ms=(time.perf_counter() - started) * 1000.0)
        if result.status == "repl_error" and env is not None:
            worker.headers.pop(header, None)  # e.g. "unknown environment": do not trust that env again
        self._after(worker)
        return result

    def _import(self, worker: _Worker, header: str, started: float) -> int | None | CheckResult:
        """Elaborate ``header`` alone in ``worker``'s REPL under the import limit: the environment it gives
        (None when the answer names none), or the failure. An import past its limit is not retried."""
        answer = self._run(worker, header, None, self.import_timeout_s, started)
        if isinstance(answer, CheckResult):
            if answer.status == "timeout":
                why = (f"the imports ({_one_line(header, 80)}) did not finish within {self.import_timeout_s:g} s; "
                       "not retried (raise the import limit, or warm the .olean files)")
                self._import_failures[header] = why
                return answer.model_copy(update={"detail": why})
            return answer
        head = result_from_repl(answer, backend=self.name)
        if head.status in ("lean_error", "repl_error"):
            return head.model_copy(update={"time_ms": (time.perf_counter() - started) * 1000.0})
        if isinstance(answer.get("env"), int):
            worker.headers[header] = answer["env"]
            self._count("imports")
            return int(answer["env"])
        return None

    def _run(self, worker: _Worker, cmd: str, env: int | None, timeout: float,
             started: float) -> dict[str, Any] | CheckResult:
        """Send one command; the REPL's answer as a dict, or the failure as a ``CheckResult``."""
        from lean_interact.interface import Command, LeanError

        worker.commands += 1
        self._count("commands")
        try:
            answer = worker.server.run(Command(cmd=cmd, env=env), timeout=timeout)
        except TimeoutError:
            self._retire(worker, "timeouts")
            return self._fail("timeout", f"no answer within {timeout:g} s; the REPL was stopped", started)
        except (ConnectionError, ChildProcessError, OSError, EOFError) as exc:
            self._retire(worker, "crashed")
            return self._fail("repl_error", _death_detail(exc), started)
        except ValueError as exc:  # unparsable JSON or an answer of the wrong shape: stream state unknown
            self._retire(worker, "crashed")
            return self._fail("repl_error", f"unreadable REPL answer: {_one_line(str(exc), 240)}", started)
        if isinstance(answer, LeanError):
            return {"message": answer.message}
        dumped: dict[str, Any] = answer.model_dump(by_alias=True, exclude_none=True)
        return dumped

    def _after(self, worker: _Worker) -> None:
        """Retire the REPL when it has served its commands or grown past the memory cap."""
        if worker.server is None:
            return
        if worker.commands >= self.settings.lean_recycle_after:
            self._retire(worker, "recycled_count")
            return
        try:
            used = self._memory_probe(worker.server)
        except Exception:  # noqa: BLE001 (no reading: keep the REPL)
            return
        if used > self.settings.lean_memory_mb:
            log.info("Lean REPL %d uses %.0f MB (cap %d MB): restarting it", worker.index, used,
                     self.settings.lean_memory_mb)
            self._retire(worker, "recycled_memory")
