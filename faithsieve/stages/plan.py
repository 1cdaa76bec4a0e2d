"""A mode as a typed list of stages, and the joints that pass each stage's result to the next.

Every stage has a protocol in ``base`` (``Decomposer``, ``Sieve``, ``Scanner``, ``Typer``,
``Verifier``, ``Fusion``, ``ProofJudge``, ``TreeJudge``) with typed inputs and a typed result. A
joint wraps one stage: it reads the stage's inputs from the proof's ``Work``, runs it, and writes
its result back. ``ModeStages`` is one mode: the joints that build the tree, then those that check
it, in the order they run. The registry builds one per mode; the pipeline runs whatever it is
given and makes no decision of its own:

- ``offline``: rule decomposition | literal sieve
- ``judge``:   rule decomposition | direct judge
- ``llm``:     rule decomposition, literal sieve (``llm_rule_kinds``), model decomposition |
  scan, type, verify, fuse (or the graph judge, ablated)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from faithsieve.core.errors import FaithSieveError
from faithsieve.obligations.kinds.models import Evidence, NLObligation
from faithsieve.stages.base import (
    Decomposer,
    Decomposition,
    Fusion,
    FusionResult,
    ProofJudge,
    RunContext,
    Scanner,
    ScanResult,
    Sieve,
    TreeJudge,
    Typer,
    Verifier,
)
from faithsieve.statetree.models import StateTree

Mode = Literal["offline", "llm", "judge"]

NO_SCAN = ScanResult()
"""The scan of a mode that scans nothing (frozen, shared)."""


class StageOrderError(FaithSieveError):
    """A stage ran before the stage whose result it reads (a mode's list is out of order)."""


@dataclass
class Work:
    """What one proof's stages have produced so far."""

    decomposition: Decomposition | None = None
    """The latest tree: the one the verdict reports (the model's, once its decomposer has run)."""
    scan: ScanResult = NO_SCAN
    obligations: list[NLObligation] = field(default_factory=list)
    """Typed obligations of the scheduled EdgeUnits."""
    evidence: list[Evidence] = field(default_factory=list)
    """Evidence of the checks, in the order the stages produced it (the sieve's first)."""
    fused: FusionResult | None = None
    """The answer of a fusion or judge stage; ``None`` leaves the answer to the checked evidence."""

    def decomposed(self) -> Decomposition:
        if self.decomposition is None:
            raise StageOrderError("a stage needs the proof-state tree before any decomposer ran")
        return self.decomposition

    def tree(self) -> StateTree:
        return self.decomposed().tree


class Stage(Protocol):
    """One joint of a mode's list."""

    def run(self, ctx: RunContext, work: Work) -> None:
        """Run the stage on what ``work`` holds and record its result there."""
        ...


@dataclass(frozen=True)
class Anchor:
    """ctx -> the whole-proof judgment fusion anchors on (``ctx.anchor``), asked first, whatever the budget says:
    the per-proof token budget is counted in its tokens, and a proof whose later calls fail or run out of budget
    still has it."""

    def run(self, ctx: RunContext, work: Work) -> None:
        from faithsieve.stages.judge import anchor_judgment

        before = ctx.llm.usage.snapshot() if ctx.llm is not None else None
        ctx.anchor = anchor_judgment(ctx)
        if ctx.llm is not None and before is not None:
            used = ctx.llm.usage.since(before)
            ctx.anchor_tokens = used.prompt_tokens + used.completion_tokens
            if used.failures:  # every later call would wait out the same retries: the proof ends unknown now
                ctx.endpoint_down = ctx.anchor.reason or "call failed"


@dataclass(frozen=True)
class Decompose:
    """ctx -> ``Decomposition`` (replaces the tree so far)."""

    decomposer: Decomposer

    def run(self, ctx: RunContext, work: Work) -> None:
        work.decomposition = self.decomposer.decompose(ctx)


@dataclass(frozen=True)
class Sift:
    """The tree so far -> evidence of the formulas it writes literally."""

    sieve: Sieve

    def run(self, ctx: RunContext, work: Work) -> None:
        work.evidence.extend(self.sieve.sift(ctx, work.decomposed()))


@dataclass(frozen=True)
class Scan:
    """tree -> ``ScanResult`` (suspicion, audit window, reviews)."""

    scanner: Scanner

    def run(self, ctx: RunContext, work: Work) -> None:
        work.scan = self.scanner.scan(ctx, work.tree())


@dataclass(frozen=True)
class TypeObligations:
    """tree, scan -> typed obligations of the scheduled units."""

    typer: Typer

    def run(self, ctx: RunContext, work: Work) -> None:
        work.obligations = self.typer.obligations(ctx, work.tree(), work.scan)


@dataclass(frozen=True)
class Verify:
    """tree, obligations, scan -> evidence (after the sieve's)."""

    verifier: Verifier

    def run(self, ctx: RunContext, work: Work) -> None:
        work.evidence.extend(self.verifier.verify(ctx, work.tree(), work.obligations, work.scan))


@dataclass(frozen=True)
class Fuse:
    """tree, scan, evidence -> the fused answer."""

    fusion: Fusion

    def run(self, ctx: RunContext, work: Work) -> None:
        work.fused = self.fusion.fuse(ctx, work.tree(), work.scan, work.evidence)


@dataclass(frozen=True)
class JudgeProof:
    """ctx -> the judged answer (the whole proof, no tree)."""

    judge: ProofJudge

    def run(self, ctx: RunContext, work: Work) -> None:
        work.fused = self.judge.judge(ctx)


@dataclass(frozen=True)
class JudgeTree:
    """tree -> the judged answer."""

    judge: TreeJudge

    def run(self, ctx: RunContext, work: Work) -> None:
        work.fused = self.judge.judge(ctx, work.tree())


@dataclass(frozen=True)
class ModeStages:
    """One mode's stages, in the order they run, and what they need from the pipeline."""

    mode: Mode
    """The verdict's ``mode``."""
    decompose: tuple[Stage, ...]
    """The stages timed as decomposition (``Timings.decompose_ms``)."""
    check: tuple[Stage, ...]
    """The stages timed as checking (``Timings.check_ms``)."""
    time_limit_s: float
    """Budget of one proof: no new check starts after it."""
    needs_llm: bool = False
    """A language model must be configured (its usage is reported)."""
    needs_kernel: bool = False
    """The formal kernel is built and reported."""


__all__ = ["NO_SCAN", "Anchor", "Decompose", "Fuse", "JudgeProof", "JudgeTree", "Mode", "ModeStages", "Scan", "Sift",
           "Stage", "StageOrderError", "TypeObligations", "Verify", "Work"]
