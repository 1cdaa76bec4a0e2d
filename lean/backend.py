"""The checking interface over Lean: one snippet in, a classified result out.

Backends (local lean-interact REPLs, a remote Kimina Lean Server) implement ``LeanBackend``.
A Lean error in the snippet is a *value* (``status="lean_error"`` with messages); a backend
that cannot run at all raises ``LeanUnavailable``; a REPL that dies or hangs is reported as
``repl_error`` / ``timeout`` and the backend restarts it for the next call.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from faithsieve.core.errors import BackendUnavailable

_FROZEN = ConfigDict(frozen=True)

CheckStatus = Literal["valid", "sorry", "lean_error", "repl_error", "timeout"]
"""``valid``: no error and no ``sorry``; ``sorry``: no error but a ``sorry``/``admit`` remains
(a statement that elaborates); ``lean_error``: the elaborator reported an error; ``repl_error``:
the REPL crashed or answered something unreadable; ``timeout``: the time limit was hit (the backend's
wall clock, or Lean's ``maxHeartbeats``, which leaves the REPL and its environment alive)."""


class LeanUnavailable(BackendUnavailable):
    """No Lean backend can run here (no toolchain, no project, server unreachable)."""

    code = "lean_unavailable"


class LeanMessage(BaseModel):
    """One elaborator message."""

    model_config = _FROZEN

    severity: Literal["error", "warning", "info"]
    """Message severity."""
    text: str
    """The message, verbatim."""
    line: int | None = None
    """1-based line of the start position in the snippet."""
    column: int | None = None
    """0-based column of the start position."""


class CheckResult(BaseModel):
    """The outcome of checking one snippet."""

    model_config = _FROZEN

    status: CheckStatus
    """Classification (see ``CheckStatus``)."""
    messages: tuple[LeanMessage, ...] = ()
    """Elaborator messages, in order."""
    goals: tuple[str, ...] = ()
    """Open goals reported for ``sorry`` positions (pretty-printed), when the backend gives them."""
    axioms: tuple[str, ...] | None = None
    """Axioms the checked declaration depends on (from ``#print axioms``), when asked for."""
    time_ms: float = 0.0
    """Wall-clock time of the check."""
    backend: str = ""
    """Which backend answered (``lean-interact``, ``kimina``)."""
    detail: str = ""
    """Why a ``repl_error``/``timeout`` happened, in a line."""

    @property
    def errors(self) -> tuple[LeanMessage, ...]:
        return tuple(m for m in self.messages if m.severity == "error")


@runtime_checkable
class LeanBackend(Protocol):
    """Something that checks Lean 4 snippets."""

    name: str
    """Backend name, reported in verdicts."""

    def available(self) -> tuple[bool, str]:
        """Whether checks can run, and a one-line reason when they cannot. Never installs anything."""
        ...

    def versions(self) -> dict[str, str]:
        """Pinned versions the verdict reports: ``lean``, ``mathlib`` (``unknown`` where not known)."""
        ...

    def check(self, code: str, timeout_s: float | None = None) -> CheckResult:
        """Check one self-contained snippet (imports included). Raises ``LeanUnavailable`` only when
        the backend cannot run at all."""
        ...

    def close(self) -> None:
        """Stop processes / connections held by the backend."""
        ...


def warm_backend(backend: LeanBackend, header: str) -> CheckResult | None:
    """Start ``backend``'s REPLs and import ``header`` now (a worker's start-up, outside every check's limit),
    where the backend has such a step (``warm``: the local REPLs, a Kimina server, the cache over either);
    None where it has none."""
    warm = getattr(backend, "warm", None)
    if not callable(warm):
        return None
    result = warm(header)
    return result if isinstance(result, CheckResult) else None
