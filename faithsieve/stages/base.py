"""Stage protocols, their result types, and the context every stage receives.

Stages take data and return data. The only I/O they do goes through ``RunContext``: the
LLM client (``ctx.ask``), the kernel and the checkers, all injected by the pipeline. A stage
never raises for a bad model answer: it records a note (``ctx.note``) and degrades, and an
unusable answer ends as ``unknown`` evidence, never as a pass.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from faithsieve.core.proof import Proof
from faithsieve.core.settings import Settings
from faithsieve.lean.interface import Kernel, UnavailableKernel
from faithsieve.llm.prompts import load_prompt
from faithsieve.llm.structured import Parsed, Unparsed, ask
from faithsieve.llm.types import LLMClient, UsageReport
from faithsieve.mathtext.formulas import RecentReadings
from faithsieve.obligations.checkers.portfolio import Checker
from faithsieve.obligations.kinds.models import Evidence, NLObligation
from faithsieve.statetree.models import StateTree
from faithsieve.verdict import ReviewNote, ScanCandidate

T = TypeVar("T", bound=BaseModel)
SHARE_OF: dict[str, float] = {"obligations": 0.6, "semantic_check": 0.6}
"""Part of the per-proof token budget a call of these prompts may reach: typing and gating rarely decide, so
they stop first and leave the rest to the reviews' re-samples and the synthesis, which do."""
MIN_ANSWER_TOKENS = 64
"""Fewest answer tokens a call is made for (less: the budget is spent)."""
JUDGE_PROMPT_TOKENS = 400
"""Tokens of one whole-proof judgment besides the proof (its instructions and answer), for the token budget."""
SAMPLE_TEMPERATURE = 0.7
"""Least temperature of a second, independent sample of one judgment."""


@dataclass
class RunContext:
    """What one proof's run may use: its input, settings, and the injected backends."""

    proof: Proof
    settings: Settings
    llm: LLMClient | None = None
    kernel: Kernel = field(default_factory=UnavailableKernel)
    checkers: list[Checker] = field(default_factory=list)
    deadline: float = float("inf")
    """``time.monotonic()`` after which no new check starts."""
    notes: list[str] = field(default_factory=list)
    llm_ms: float = 0.0
    usage_start: UsageReport | None = None
    """The client's usage when this proof started (the per-proof budget is counted from it)."""
    anchor: FusionResult | None = None
    """The whole-proof judgment ``--mode llm`` asked first (its fused answer is anchored on it)."""
    anchor_tokens: int = 0
    """Tokens that judgment took (the per-proof token budget is counted in them; 0: not measured)."""
    endpoint_down: str = ""
    """Why the endpoint is taken to be down for this proof (its anchoring call failed after its retries): no
    further call is made, the verdict is ``unknown`` at once rather than after every stage's calls failed."""
    readings: RecentReadings = field(default_factory=RecentReadings)
    """The last few texts read (the pipeline's own, shared by its proofs: a problem is read once)."""

    def note(self, message: str) -> None:
        """Record what a stage skipped or could not use (shown in the verdict's audit)."""
        if len(self.notes) < 200:
            self.notes.append(message[:500])

    def ask(self, prompt_id: str, values: Mapping[str, str], model: type[T], *,
            max_tokens: int | None = None, sample: int = 0, anchor: bool = False) -> Parsed[T] | Unparsed:
        """Ask the configured model with a shipped prompt; ``Unparsed`` when no model is configured.
        ``sample > 0`` asks for an independent sample: temperature at least ``SAMPLE_TEMPERATURE``, seed ``sample``.
        ``anchor``: the whole-proof judgment the answer is anchored on, asked whatever the per-proof budget says
        (one judgment's cost; without it a spent budget would leave the proof ``unknown``)."""
        if self.llm is None:
            return Unparsed(reason="no language model configured", unavailable=True)
        spent = "" if anchor else self.budget_spent(SHARE_OF.get(prompt_id, 1.0))
        if not spent and time.monotonic() > self.deadline and not anchor:
            spent = "the proof's time limit passed"
        if not spent and self.endpoint_down:
            spent = f"the endpoint failed the anchoring judgment ({self.endpoint_down[:200]})"
        if spent:
            self.note(f"{prompt_id}: not asked, {spent}")
            return Unparsed(reason=spent, unavailable=True)
        prompt = load_prompt(prompt_id)
        cap = max_tokens or self.settings.llm_max_tokens
        if not anchor:  # the answer may not take the proof past its token budget: its length is capped to what is left
            left = self.tokens_left() - sum(len(m.content) for m in prompt.render(values)) // 4
            if left < MIN_ANSWER_TOKENS:
                why = f"per-proof token budget spent (this prompt leaves {max(left, 0)} tokens for the answer)"
                self.note(f"{prompt_id}: not asked, {why}")
                return Unparsed(reason=why, unavailable=True)
            cap = min(cap, left)
        t = time.perf_counter()
        temperature = self.settings.llm_temperature
        if sample:
            temperature = max(temperature, SAMPLE_TEMPERATURE)
        try:
            return ask(self.llm, prompt, values, model, max_tokens=cap,
                       temperature=temperature, seed=sample or None,
                       budget=None if anchor else self.budget_spent)
        finally:
            self.llm_ms += (time.perf_counter() - t) * 1000

    def budget_spent(self, share: float = 1.0) -> str:
        """Why no further call may be made for this proof ("" while the per-proof budget allows); ``share``: the
        part of the token budget the call may reach (``SHARE_OF``)."""
        s = self.settings
        if self.llm is None or self.usage_start is None:
            return ""
        used = self.llm.usage.since(self.usage_start)
        tokens = used.prompt_tokens + used.completion_tokens
        if tokens >= int(share * self.token_budget()):
            part = "" if share >= 1 else f" for this call ({share:.0%} of it)"
            return f"per-proof token budget spent{part} ({tokens} of {self.token_budget()})"
        if s.llm_max_calls_per_item is not None and used.calls >= s.llm_max_calls_per_item:
            return f"per-proof call budget spent ({used.calls} of {s.llm_max_calls_per_item})"
        if s.llm_max_cost_per_item is not None and used.cost_usd >= s.llm_max_cost_per_item:
            return f"per-proof cost budget spent (${used.cost_usd:.4f} of ${s.llm_max_cost_per_item:.4f})"
        return ""

    def tokens_left(self) -> int:
        """Tokens this proof may still spend (``token_budget`` less what its calls took)."""
        if self.llm is None or self.usage_start is None:
            return self.token_budget()
        used = self.llm.usage.since(self.usage_start)
        return self.token_budget() - used.prompt_tokens - used.completion_tokens

    def token_budget(self) -> int:
        """Most tokens this proof may spend (``Settings.llm_max_tokens_per_item``, else ``llm_token_budget_factor``
        whole-proof judgments of it: the one asked first, or an estimate from its length when that is more)."""
        if self.settings.llm_max_tokens_per_item is not None:
            return self.settings.llm_max_tokens_per_item
        estimate = JUDGE_PROMPT_TOKENS + (len(self.proof.problem) + sum(len(s.text) for s in self.proof.steps)) // 4
        judgment = max(self.anchor_tokens, estimate)  # a server that reports few or no tokens gets the estimate
        return int(self.settings.llm_token_budget_factor * judgment)

    def ablated(self, name: str) -> bool:
        return name in self.settings.ablations


# ---------------------------------------------------------------------------------------
# Stage results


class Decomposition(BaseModel):
    """A proof-state tree and how it was made."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    tree: StateTree
    """The tree (both decomposers produce the same types)."""
    kind: Literal["llm", "rule", "coarse"]
    """``llm``: faithful pre-decomposition + LLM state tree; ``rule``: rule-based; ``coarse``: one edge per step."""
    substeps: int = 0
    """Fine-grained sub-steps (0 for rule-based)."""


class Review(BaseModel):
    """The local review of one scheduled EdgeUnit."""

    model_config = ConfigDict(frozen=True)

    edge: str
    """EdgeUnit id."""
    verdict: Literal["correct", "incorrect", "uncertain"]
    """The reviewer's judgment of this transition alone."""
    suspicion: float = Field(default=0.5, ge=0, le=1)
    """Its risk estimate after looking closely."""
    error_type: str = ""
    """Kind of error it sees, if any."""
    should_formalize: bool = False
    """A formal check looks useful."""
    translation_difficulty: Literal["easy", "medium", "hard"] = "medium"
    """How hard a faithful formal statement would be."""
    reason: str = ""
    """The reviewer's reason."""
    sample: int = 0
    """0 for the first review of the unit; k > 0 for the k-th independent re-sample (fusion asks
    for one where the evidence on the unit's step conflicts or rests on one judgment)."""


class ScanResult(BaseModel):
    """Suspicion per EdgeUnit, the audit window, and the reviews of scheduled units."""

    model_config = ConfigDict(frozen=True)

    candidates: tuple[ScanCandidate, ...] = ()
    """Scan judgments (edges the scan did not mention are absent)."""
    overall: str | None = None
    """``likely_correct`` / ``likely_incorrect`` / ``uncertain``, or None when no scan ran."""
    window: tuple[str, ...] = ()
    """Scheduled EdgeUnits, in tree order (focus unit last)."""
    focus: str | None = None
    """The earliest edge above the threshold, if any."""
    reviews: tuple[Review, ...] = ()
    """Local reviews of the window's units."""


class FusionResult(BaseModel):
    """The fused answer before it is dressed as a ``Verdict``."""

    model_config = ConfigDict(frozen=True)

    first_error_step: int | None
    """1-based step, or None for ``correct``."""
    basis: Literal["checked", "formalized", "formal", "reviewed", "judged"] | None = None
    """What backs the answer (see ``Verdict.basis``)."""
    reason: str | None = None
    """One-line account."""
    evidence: tuple[Evidence, ...] = ()
    """Evidence the fusion stage itself produced (prefix re-examination, final synthesis)."""
    undecided: bool = False
    """No answer could be had (the deciding answer was unreadable): the verdict is ``unknown``."""
    judge: int | None = None
    """The whole-proof judgment the answer is anchored on (0: ``correct``), None when none was read."""
    reviews: tuple[ReviewNote, ...] = ()
    """The local reviews (with re-samples) fusion weighed."""
    calibration: str | None = None
    """Which weights fusion ran with."""


# ---------------------------------------------------------------------------------------
# Protocols


class Decomposer(Protocol):
    name: str

    def decompose(self, ctx: RunContext) -> Decomposition:
        """Build the proof-state tree of ``ctx.proof``."""
        ...


class Scanner(Protocol):
    name: str

    def scan(self, ctx: RunContext, tree: StateTree) -> ScanResult:
        """Score every EdgeUnit, schedule the audit window, review its units."""
        ...


class Typer(Protocol):
    name: str

    def obligations(self, ctx: RunContext, tree: StateTree, scan: ScanResult) -> list[NLObligation]:
        """Typed obligations for the scheduled units (a new fact is never a premise before it is checked)."""
        ...


class Verifier(Protocol):
    name: str

    def verify(self, ctx: RunContext, tree: StateTree, obligations: list[NLObligation],
               scan: ScanResult) -> list[Evidence]:
        """Check each obligation: our checkers for pure formulas, the kernel behind the gate otherwise."""
        ...


class Fusion(Protocol):
    name: str

    def fuse(self, ctx: RunContext, tree: StateTree, scan: ScanResult, evidence: list[Evidence]) -> FusionResult:
        """Roll evidence up to the original steps and answer."""
        ...


class GateVerdict(BaseModel):
    """The faithfulness gate's decision on one formal statement."""

    model_config = ConfigDict(frozen=True)

    passed: bool
    """The statement may be used as evidence for the obligation."""
    s_faith: float = Field(ge=0, le=1)
    """Cube root of S_prem · S_conc · S_hol (0 when the judgment could not be read)."""
    s_prem: float = Field(default=0.0, ge=0, le=1)
    s_conc: float = Field(default=0.0, ge=0, le=1)
    s_hol: float = Field(default=0.0, ge=0, le=1)
    drift: tuple[str, ...] = ()
    """Drift categories reported."""
    report: str = ""
    """The drift report (reason, missing or changed slots, suggested revision), for the next revision."""
    raw: str | None = None
    """The judge's answer as it came, when it could not be read."""


class Gate(Protocol):
    name: str

    def assess(self, ctx: RunContext, obligation: NLObligation, statement: str, context: str) -> GateVerdict:
        """Score how faithfully ``statement`` renders ``obligation`` under ``context``."""
        ...


class Sieve(Protocol):
    name: str

    def sift(self, ctx: RunContext, decomposition: Decomposition) -> list[Evidence]:
        """Check the formulas the proof writes literally in ``decomposition``'s EdgeUnits (no model)."""
        ...


class ProofJudge(Protocol):
    name: str

    def judge(self, ctx: RunContext) -> FusionResult:
        """Read the whole proof and name its first wrong step (the direct-judge baseline)."""
        ...


class TreeJudge(Protocol):
    name: str

    def judge(self, ctx: RunContext, tree: StateTree) -> FusionResult:
        """Read the proof with its proof-state tree and name its first wrong step (the graph-judge ablation)."""
        ...
