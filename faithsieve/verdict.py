"""The pipeline's answer: Verdict and its parts (step reports, coverage, timings, the model stages' audit).

Frozen pydantic models with a docstring per field. Steps are numbered from 1 in every public
interface. The input types (``Proof``, ``Step``) are in ``faithsieve.core.proof``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from faithsieve.llm.types import UsageReport
from faithsieve.obligations.kinds.models import Evidence
from faithsieve.statetree.models import EdgeUnit

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class StepReport(BaseModel):
    """Everything FaithSieve did with one step."""

    model_config = _FROZEN

    step: int
    """1-based step number."""
    status: Literal["refuted", "verified", "unknown", "unchecked"]
    """Roll-up: refuted if any obligation is refuted; verified only if every obligation is verified;
    unknown if obligations exist and some stayed undecided (a step is never shown verified on part of its
    claims); unchecked if the step had none."""
    flag_kind: str | None = None
    """For a refuted step: what its refutation rests on (``Evidence.flag_kind``): ``false_as_written``
    when the refuted formula is false read literally under every reading, otherwise the rule that made
    it an error (``known_values``, ``does_not_follow``, ``claimed_solution``, ``identity_by_rewriting``, ...)."""
    edges: tuple[EdgeUnit, ...] = ()
    """The EdgeUnits this step decomposed into."""
    evidence: tuple[Evidence, ...] = ()
    """Evidence for each obligation extracted from the step."""


class Coverage(BaseModel):
    """How much of the proof received a decided check."""

    model_config = _FROZEN

    steps: int
    """Number of steps."""
    steps_with_obligations: int
    """Steps that produced at least one obligation."""
    steps_decided: int
    """Steps with at least one verified or refuted obligation."""
    edges: int
    """Number of EdgeUnits."""
    edges_decided: int
    """EdgeUnits with at least one decided obligation."""
    obligations: int
    """Number of obligations checked."""
    obligations_decided: int
    """Obligations with a verified or refuted outcome."""


class Timings(BaseModel):
    """Wall-clock time per stage, in milliseconds."""

    model_config = _FROZEN

    decompose_ms: float
    """Splitting, formula extraction and state-tree construction."""
    check_ms: float
    """Obligation checking."""
    total_ms: float
    """End to end."""
    llm_ms: float = 0.0
    """Time spent waiting for language-model answers (included in the other figures)."""


class ScanCandidate(BaseModel):
    """The suspicion scan's judgment of one EdgeUnit."""

    model_config = _FROZEN

    edge: str
    """EdgeUnit id."""
    suspicion: float = Field(ge=0, le=1)
    """Risk that this transition holds the first material error."""
    likely_wrong: bool = False
    """The scan thinks the transition is wrong."""
    should_formalize: bool = False
    """Formal or precise checking looks useful here."""
    error_type_prior: tuple[str, ...] = ()
    """Error kinds the scan suspects (``arithmetic``, ``logic``, ``missing_case``, ...)."""
    reason: str = ""
    """The scan's reason, in a sentence."""


class ReviewNote(BaseModel):
    """One local review as the audit keeps it (what ``faithsieve calibrate`` measures)."""

    model_config = _FROZEN

    edge: str
    """EdgeUnit id."""
    step: int
    """Original step of the unit."""
    verdict: Literal["correct", "incorrect", "uncertain"]
    """The review's answer."""
    sample: int = 0
    """0 for the first review of the unit, k > 0 for its k-th re-sample."""


class Audit(BaseModel):
    """What the language-model stages did with a proof (empty in offline mode)."""

    model_config = _FROZEN

    substeps: int = 0
    """Fine-grained sub-steps after pre-decomposition."""
    decomposition: Literal["llm", "rule", "coarse"] = "rule"
    """Which decomposition the tree was built from (``coarse``: one edge per original step)."""
    overall: str | None = None
    """The scan's overall verdict (``likely_correct``, ``likely_incorrect``, ``uncertain``)."""
    scan: tuple[ScanCandidate, ...] = ()
    """Scan judgments, in edge order."""
    window: tuple[str, ...] = ()
    """EdgeUnits scheduled for review and typed obligations (the audit window)."""
    notes: tuple[str, ...] = ()
    """What went wrong or was skipped in a stage (unparsed answers, rejected decompositions, budgets)."""
    reviews: tuple[ReviewNote, ...] = ()
    """Every local review and re-sample fusion weighed."""
    judge: int | None = None
    """The whole-proof judgment fusion anchors on: 0 for ``correct``, N for step N, null when none was read."""
    calibration: str | None = None
    """Which weights fusion ran with: a calibration file, or the conservative defaults (and the re-sample
    correlation the run measured)."""


class Verdict(BaseModel):
    """The answer: correct, or the first erroneous step, with the evidence behind it."""

    model_config = _FROZEN

    verdict: Literal["correct", "error", "unknown"]
    """``error`` when some step carries a refutation confirmed exactly (or, with a model, the fused
    answer names a step); ``unknown`` when a model method could not answer: a call failed (endpoint
    unreachable, time limit, retries spent) or the deciding answer arrived but could not be read.
    ``unknown`` is never a pass."""
    first_error_step: int | None
    """1-based index of the first refuted step, or null when the verdict is ``correct`` or ``unknown``."""
    reason: str | None = None
    """One-line account of the first refutation."""
    flag_kind: str | None = None
    """The flagged step's ``StepReport.flag_kind`` (null for a ``correct`` verdict)."""
    suspect: tuple[Evidence, ...] = ()
    """Refutations shown but not deciding: their flag kind has not been measured clean on the reference bench
    (``Evidence.suspect`` says why). They count in no verdict, step penalty or floor; a step that holds one is
    ``unknown``, never ``verified``. A ``correct`` verdict with suspects says how many formulas it could not clear."""
    steps: tuple[StepReport, ...]
    """Per-step reports, in order."""
    coverage: Coverage
    """How much of the proof was decided."""
    timings: Timings
    """Time spent per stage."""
    backends: dict[str, str] = Field(default_factory=dict)
    """Names and versions of the checkers that ran."""
    flag_scope: Literal["first", "at_or_before"] | None = None
    """How far an offline flag can be trusted as the *first* error: ``first`` when every obligation
    of every earlier step was decided and none refuted (as far as formulas go, nothing before it is
    wrong), ``at_or_before`` when some earlier obligation stayed ``unknown`` (the first error is at
    or before the flagged step). ``None`` for a ``correct`` verdict and for the model methods."""
    mode: Literal["offline", "llm", "judge"] = "offline"
    """Which method produced the verdict."""
    basis: Literal["checked", "formalized", "formal", "reviewed", "judged"] | None = None
    """What backs the answer: ``checked`` (our checkers refuted a formula the proof writes, as
    written), ``formalized`` (our checkers refuted a statement the model wrote, admitted through the
    faithfulness gate), ``formal`` (a Lean statement that passed the gate was refuted), ``reviewed``
    (local model reviews of single units decided, by fusion of their evidence), ``judged`` (the final
    whole-proof synthesis, a judgment, not a proof; also any answer reached after a model judged a
    ``checked`` refutation immaterial, whose step keeps the refutation and an ``overruled`` record of
    method ``materiality``). ``None`` for an offline ``correct`` and for ``unknown``."""
    audit: Audit | None = None
    """Language-model stage record (``llm`` and ``judge`` modes)."""
    usage: UsageReport | None = None
    """Calls, tokens, cache hits and cost of the language-model work for this verdict."""

    @property
    def first_refutation(self) -> int | None:
        """The first step holding an exact refutation of a formula it writes, deciding or ``suspect``: where the
        reading finds a false formula, whatever the deciding table says (``first_error_step`` is where one
        decides). What the reading rules' tests ask."""
        steps = [e.step for e in self.suspect]
        if self.first_error_step is not None and self.verdict == "error":
            steps.append(self.first_error_step)
        return min(steps, default=None)

    @classmethod
    def stopped(cls, reason: str, steps: int, mode: Literal["offline", "llm", "judge"], total_ms: float) -> Verdict:
        """The verdict of a proof whose check was stopped before it answered (a hard limit, a lost worker):
        ``unknown`` with ``reason``, no step reported, nothing decided, ``total_ms`` spent in all."""
        return cls(verdict="unknown", first_error_step=None, reason=reason, steps=(), mode=mode,
                   coverage=Coverage(steps=steps, steps_with_obligations=0, steps_decided=0, edges=0, edges_decided=0,
                                     obligations=0, obligations_decided=0),
                   timings=Timings(decompose_ms=0.0, check_ms=0.0, total_ms=round(total_ms, 3)))


def flag_kind_of(evidence: Evidence) -> str:
    """The kind of a refutation: the one its checker recorded, else (a formal or a model's refutation)
    its basis."""
    return evidence.flag_kind or evidence.basis


def verdict_json(v: Verdict) -> dict[str, Any]:
    """Verdict as JSON with the headline fields first."""
    data = v.model_dump(mode="json")
    head = {k: data.pop(k) for k in ("verdict", "first_error_step", "reason", "flag_kind", "suspect")}
    return {**head, **data}
