"""The faithfulness gate: does a formal statement say what the natural-language obligation says?

Two layers:

- pure arithmetic (``slot_mean``, ``holistic``, ``s_faith``, ``gate_decision``): a judge's slot
  and aspect scores in, a ``GateVerdict`` out. S_prem and S_conc are means of slot matches
  (an empty slot set counts as one vacuous slot scoring 1), S_hol is the mean of five aspects,
  S_faith is the cube root of their product. A statement passes only when S_faith reaches the
  threshold, each critical part (conclusion fidelity, directionality, role alignment) reaches
  the critical threshold, and the judge itself called it faithful.
- ``LLMGate``: ``settings.gate_judges`` independent judgments with the ``semantic_check``
  prompt. Scores outside {0, .25, .5, .75, 1} make the answer unusable; an unusable judgment
  fails the gate (S_faith 0, drift ``unparsed``). Every judge must pass.

``PassGate`` lets every statement through (the ``no_gate`` ablation).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from faithsieve.llm.structured import Unparsed
from faithsieve.obligations.kinds.models import NLObligation
from faithsieve.stages.base import GateVerdict, RunContext

SCORE_LEVELS: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
"""The only scores a judge may give a slot or an aspect."""
ASPECTS: tuple[str, ...] = ("step_relation", "object_witness", "directionality", "role_alignment", "syntax_surface")
"""The five holistic aspects, equally weighted."""
CRITICAL_ASPECTS: tuple[str, ...] = ("directionality", "role_alignment")
"""Aspects that no average can compensate for (conclusion fidelity is the third critical part)."""
DRIFT_CATEGORIES: tuple[str, ...] = (
    "missing_assumptions", "overgeneralized", "undergeneralized", "wrong_objects", "wrong_quantifiers",
    "wrong_direction", "role_swap", "vacuous_or_trivialized",
)
_EPS = 1e-9


# ---------------------------------------------------------------------------------------
# Pure arithmetic


def snap_score(value: float) -> float:
    """``value`` as one of ``SCORE_LEVELS`` (within 1e-6), else ``ValueError``."""
    if isinstance(value, bool):
        raise ValueError("a score must be a number, not a boolean")
    for level in SCORE_LEVELS:
        if abs(float(value) - level) <= 1e-6:
            return level
    raise ValueError(f"score {value!r} is not one of {SCORE_LEVELS}")


def slot_mean(scores: Sequence[float]) -> float:
    """Mean slot match; an empty slot set is one vacuous slot that scores 1."""
    if not scores:
        return 1.0
    return sum(scores) / len(scores)


def holistic(aspects: Mapping[str, float]) -> float:
    """S_hol: the uniform mean of the five aspects (``KeyError`` if one is missing)."""
    return sum(aspects[a] for a in ASPECTS) / len(ASPECTS)


def s_faith(s_prem: float, s_conc: float, s_hol: float) -> float:
    """Cube root of S_prem · S_conc · S_hol, rounded to 12 places so that exact cubes come out exact
    (0.729 gives 0.9, not 0.8999999999999999)."""
    product = s_prem * s_conc * s_hol
    if product <= 0:
        return 0.0
    root: float = product ** (1.0 / 3.0)
    root = root - (root ** 3 - product) / (3 * root ** 2)  # one Newton step
    return min(1.0, round(root, 12))


@dataclass(frozen=True)
class GateScores:
    """One judge's scores, already validated."""

    premise_slots: tuple[float, ...] = ()
    conclusion_slots: tuple[float, ...] = ()
    aspects: Mapping[str, float] = field(default_factory=dict)
    status: Literal["faithful", "repairable_drift", "unfaithful"] = "faithful"
    drift: tuple[str, ...] = ()
    report: str = ""


@dataclass(frozen=True)
class GateThresholds:
    threshold: float = 0.9
    """Least S_faith."""
    critical: float = 0.75
    """Least score of each critical part."""


def gate_decision(scores: GateScores, thresholds: GateThresholds) -> GateVerdict:
    """Apply the thresholds to one judge's scores."""
    prem = slot_mean(scores.premise_slots)
    conc = slot_mean(scores.conclusion_slots)
    hol = holistic(scores.aspects)
    faith = s_faith(prem, conc, hol)
    reasons: list[str] = []
    if faith + _EPS < thresholds.threshold:
        reasons.append(f"S_faith {faith:.3f} below {thresholds.threshold}")
    critical = {"conclusion_fidelity": conc, **{a: scores.aspects[a] for a in CRITICAL_ASPECTS}}
    for name, value in critical.items():
        if value + _EPS < thresholds.critical:
            reasons.append(f"{name} {value:.2f} below the critical threshold {thresholds.critical}")
    if scores.status != "faithful":
        reasons.append(f"the judge reported {scores.status}")
    drift = scores.drift
    if not drift and reasons:
        drift = _implied_drift(critical, thresholds.critical) or ("low_faithfulness",)
    report = "; ".join(p for p in (scores.report, *reasons) if p)
    return GateVerdict(passed=not reasons, s_faith=faith, s_prem=round(prem, 12), s_conc=round(conc, 12),
                       s_hol=round(hol, 12), drift=tuple(drift), report=report[:4000])


def _implied_drift(critical: Mapping[str, float], floor: float) -> tuple[str, ...]:
    named = {"directionality": "wrong_direction", "role_alignment": "role_swap"}
    return tuple(named[k] for k, v in critical.items() if k in named and v + _EPS < floor)


# ---------------------------------------------------------------------------------------
# The judge's answer


def _number(v: object) -> float:
    """A score as a float: numbers and numeric strings only (``true`` is not a score)."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise ValueError(f"score {v!r} is not a number")
    try:
        return float(v)
    except ValueError:
        raise ValueError(f"score {v!r} is not a number") from None


class SlotMatch(BaseModel):
    """One semantic slot of the obligation and how well the statement keeps it."""

    slot: str = Field(default="", max_length=1000)
    """The slot as read from the obligation or its context."""
    match: float
    """0, 0.25, 0.5, 0.75 or 1."""

    @field_validator("match", mode="before")
    @classmethod
    def _snap(cls, v: object) -> float:
        return snap_score(_number(v))


class SemanticCheck(BaseModel):
    """The ``semantic_check`` answer."""

    premise_slots: list[SlotMatch] = Field(default_factory=list, max_length=64)
    conclusion_slots: list[SlotMatch] = Field(default_factory=list, max_length=64)
    aspects: dict[str, float]
    """The five aspect scores (``step_relation`` ... ``syntax_surface``; a ``_fidelity`` suffix is accepted)."""
    status: Literal["faithful", "repairable_drift", "unfaithful"]
    drift_categories: list[str] = Field(default_factory=list, max_length=16)
    reason: str = Field(default="", max_length=4000)
    missing_or_changed_slots: list[str] = Field(default_factory=list, max_length=32)
    suggested_revision: str = Field(default="", max_length=4000)

    @field_validator("aspects", mode="before")
    @classmethod
    def _aspects(cls, v: object) -> dict[str, float]:
        if not isinstance(v, dict):
            raise ValueError("aspects must be an object of five scores")
        out: dict[str, float] = {}
        for key, score in v.items():
            name = str(key).strip().lower().removesuffix("_fidelity")
            if name in ASPECTS:
                out[name] = snap_score(_number(score))
        missing = [a for a in ASPECTS if a not in out]
        if missing:
            raise ValueError(f"aspect scores missing: {', '.join(missing)}")
        return out

    @field_validator("drift_categories", mode="after")
    @classmethod
    def _drift(cls, v: list[str]) -> list[str]:
        return [d.strip().lower()[:60] for d in v if d.strip() and d.strip().lower() != "none"]

    def scores(self) -> GateScores:
        parts = [self.reason.strip()]
        if self.missing_or_changed_slots:
            parts.append("missing or changed: " + "; ".join(s[:300] for s in self.missing_or_changed_slots))
        if self.suggested_revision.strip():
            parts.append("suggested revision: " + self.suggested_revision.strip())
        return GateScores(premise_slots=tuple(s.match for s in self.premise_slots),
                          conclusion_slots=tuple(s.match for s in self.conclusion_slots),
                          aspects=self.aspects, status=self.status, drift=tuple(self.drift_categories),
                          report=" | ".join(p for p in parts if p))


# ---------------------------------------------------------------------------------------
# Gates


class LLMGate:
    """The semantic checker: ``settings.gate_judges`` independent judgments, all must pass."""

    name = "llm"

    def assess(self, ctx: RunContext, obligation: NLObligation, statement: str, context: str) -> GateVerdict:
        thresholds = GateThresholds(ctx.settings.gate_threshold, ctx.settings.gate_critical_threshold)
        judges = ctx.settings.gate_judges
        verdicts: list[GateVerdict] = []
        for k in range(judges):
            values = {"context": context[:12000], "obligation": obligation.text()[:4000],
                      "kind": obligation.kind.value, "statement": statement[:8000],
                      "judge": f"{k + 1} of {judges}"}
            answer = ctx.ask("semantic_check", values, SemanticCheck)
            if isinstance(answer, Unparsed):
                ctx.note(f"semantic check of {obligation.id} (judge {k + 1}) unparsed: {answer.reason}")
                verdicts.append(GateVerdict(passed=False, s_faith=0.0, drift=("unparsed",),
                                            report=f"the semantic check could not be read: {answer.reason}"[:4000],
                                            raw=answer.raw[:4000]))
                break
            verdict = gate_decision(answer.value.scores(), thresholds)
            verdicts.append(verdict)
            if not verdict.passed:
                break
        return combine(verdicts)


def combine(verdicts: Sequence[GateVerdict]) -> GateVerdict:
    """All judges must pass; the weakest judgment speaks for the statement."""
    if not verdicts:
        return GateVerdict(passed=False, s_faith=0.0, drift=("unparsed",), report="no judgment")
    failed = [v for v in verdicts if not v.passed]
    worst = min(failed or verdicts, key=lambda v: v.s_faith)
    drift = tuple(dict.fromkeys(d for v in (failed or verdicts) for d in v.drift))
    report = " || ".join(dict.fromkeys(v.report for v in (failed or verdicts) if v.report))
    return worst.model_copy(update={"passed": not failed, "drift": drift, "report": report[:4000]})


class PassGate:
    """No gate: every statement counts as faithful (the ``no_gate`` ablation)."""

    name = "pass"

    def assess(self, ctx: RunContext, obligation: NLObligation, statement: str, context: str) -> GateVerdict:
        return GateVerdict(passed=True, s_faith=1.0, s_prem=1.0, s_conc=1.0, s_hol=1.0,
                           report="not assessed: faithfulness gate disabled")


__all__ = [
    "ASPECTS",
    "CRITICAL_ASPECTS",
    "DRIFT_CATEGORIES",
    "SCORE_LEVELS",
    "GateScores",
    "GateThresholds",
    "LLMGate",
    "PassGate",
    "SemanticCheck",
    "SlotMatch",
    "combine",
    "gate_decision",
    "holistic",
    "s_faith",
    "slot_mean",
    "snap_score",
]
