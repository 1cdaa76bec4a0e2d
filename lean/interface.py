"""The kernel interface the verify stage receives (``RunContext.kernel``): ``available``,
``formalize`` (draft a statement, or revise one from the faithfulness gate's feedback) and
``prove`` (the statement or its negation). Results are values: ``FormalStatement``, ``KernelResult``.

The faithfulness gate between formalizing and proving is the verify stage's
(``faithsieve.stages.verify``), not the kernel's. The kernel over Lean is ``lean.kernel.LeanKernel``
(lean-interact or Kimina, as ``faithsieve.pipeline.build_kernel`` reads the settings); when no
backend is configured or usable the pipeline receives ``UnavailableKernel``, which says why in every
result, and obligations that need a formal statement stay ``unknown`` (left to review).
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from faithsieve.obligations.kinds.models import NLObligation
from pydantic import BaseModel, ConfigDict

_FROZEN = ConfigDict(frozen=True)


class FormalStatement(BaseModel):
    """A formal statement drafted for one obligation."""

    model_config = _FROZEN

    text: str
    """The statement (a Lean 4 theorem header ending in ``:= by sorry``, or an equation)."""
    language: Literal["lean4", "equation"] = "lean4"
    """What ``text`` is written in."""
    compiled: bool = False
    """The checker accepted the statement (with ``sorry`` as proof)."""
    diagnostics: str = ""
    """Checker messages from the last compile, verbatim."""
    trajectory: tuple[str, ...] = ()
    """How the statement was reached (drafts, checker diagnostics, tool calls), bounded; may be empty."""


class KernelResult(BaseModel):
    """What the kernel established about a (faithful) statement."""

    model_config = _FROZEN

    status: Literal["passed", "refuted", "inconclusive"]
    """``passed``: the statement was proved; ``refuted``: its negation or a counterexample was proved."""
    reason: str = ""
    """Why inconclusive (timeout, search exhausted, unavailable), or a note."""
    artifact: str | None = None
    """The checked proof text, when there is one."""
    method: str = ""
    """Backend that decided it (``lean-interact``, ``kimina``, ...)."""


@runtime_checkable
class Kernel(Protocol):
    """Formal backend: draft a statement, then prove it or its negation."""

    name: str
    """Backend name, reported in the verdict."""

    def available(self) -> tuple[bool, str]:
        """Whether the backend can run, and why not when it cannot."""
        ...

    def formalize(self, obligation: NLObligation, context: str, feedback: str | None = None,
                  previous: FormalStatement | None = None) -> FormalStatement | None:
        """Draft (or, with ``feedback`` from the gate, revise) a formal statement; ``None`` if none compiles."""
        ...

    def prove(self, statement: FormalStatement, branch: Literal["original", "negation"]) -> KernelResult:
        """Prove the statement (``original``) or refute it (``negation``)."""
        ...


class UnavailableKernel:
    """The kernel when no formal backend is configured: every result says so."""

    name = "none"

    def __init__(self, reason: str = "no Lean backend configured") -> None:
        self.reason = reason

    def available(self) -> tuple[bool, str]:
        return False, self.reason

    def formalize(self, obligation: NLObligation, context: str, feedback: str | None = None,
                  previous: FormalStatement | None = None) -> FormalStatement | None:
        return None

    def prove(self, statement: FormalStatement, branch: Literal["original", "negation"]) -> KernelResult:
        return KernelResult(status="inconclusive", reason=self.reason, method=self.name)
