"""Evidence fusion: local evidence back to the original steps, then one answer.

The rules (the paper's Algorithm 1 and Appendix E, written as the pure ``signals_from`` and
``decide``):

- Every piece of local evidence is a ``Signal`` on one step: it says the step is ``wrong``,
  ``fine`` or ``unsure``, with a reliability r in (0.5, 1), the chance that it is right:
  a formula the proof writes refuted by our checkers (``checked``, r = 0.99); a gated
  model-written statement refuted (``formalized`` / ``formal``, r = 0.9); a local review of one
  unit (r = 0.85, the same for each independent sample of it); the scan's prior (r = 0.6); a
  re-examination of the prefix (r = 0.65). A ``suspect`` refutation (its flag kind not yet measured clean
  on the reference bench, ``obligations.kinds.flagtable``) is a prior on its step like the scan's (r = 0.6): it
  never decides alone and is never the refutation floor. Drift, formalization failures, time limits, unknown
  checks and unread answers say nothing (``unsure``): they are never negative evidence.
- A step is wrong when any one of its moves is. Independent signals about one unit add up in
  log-odds, ``L_u = Σ ± log(r / (1 - r))``; the step's score is its worst unit's plus its step-wide
  signals (the scan's prior, a re-examination): ``L = L_wide + max_u L_u``. Signals about different
  units do not cancel: a unit reviewed fine says nothing about a formula it does not contain. A check
  of the offline sieve's reading of the original step (a formula the proof writes, found by the rule
  reader whatever the model's decomposition kept) belongs to the unit that writes that formula, or to
  a unit of its own when the model's sub-steps dropped it (no review saw it).
- A step is **wrong** when ``L ≥ logit(decide_at) + ln(n)`` (``wrong_bar``: decide_at = 0.9, n the
  number of units in the tree) and some local signal (not the scan alone) says so about its worst
  unit. Every sound unit judged is a chance of a false alarm, so the bar for one unit rises with
  their number (a Bonferroni correction); with a dozen units one review and its re-sample are not
  enough, a third agreeing judgment or a check is. The step is **cleared** when
  ``L ≤ -logit(clear_at)`` (0.8), i.e. every unit is. Agreement raises reliability (a review
  confirmed by a second sample reaches 0.97); disagreement about the same unit cancels.
- The answer is the earliest wrong step, provided every earlier step with signals leaning
  wrong was re-examined first (one ``reexamine`` call adds its signal and the rule runs again).
  Its basis is the strongest kind among the wrong signals that decided it: ``checked`` >
  ``formalized`` > ``formal`` > ``reviewed``.
- **The refutation floor** (``with_floor``). An exact refutation of a formula the proof writes
  (``checked``) is a floor for the answer: when no step before it reaches the bar, it decides (basis
  ``checked``, the disagreeing judgments in its reason), after the re-examination of the steps before
  it that lean wrong. Model judgments can move the answer earlier (a step before it reaching the bar,
  or re-examined), never later nor to ``correct``; no synthesis is asked, and its step is not
  re-sampled. Only one answer can move it: before it decides, one ``materiality`` call asks whether the
  step's conclusion depends on the refuted formula (shown with the checker's counter-evidence); an
  explicit ``material: false`` whose reason quotes the formula overrules it (``overrule``): the next
  evidence or the synthesis answers, with basis ``judged`` and a ``materiality`` record kept beside the
  refutation in the step's evidence. A generic "fine", no field, an unread answer: the floor stands.
- No wrong step, and every step cleared: ``correct``, basis ``reviewed`` (no synthesis call). A step
  with a checked refutation is never cleared.
- Otherwise one ``synthesis`` call over the reviews and the evidence answers: basis ``judged``.
  An unreadable synthesis is ``unknown`` (undecided); it never invents an error.

Ablations: ``nl_only`` drops checked/formalized/formal signals (reviews and synthesis only);
``no_gate`` lets ungated statements count (their refutations become signals).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from faithsieve.core.settings import Settings
from faithsieve.llm.structured import Unparsed
from faithsieve.obligations.kinds.models import Evidence
from faithsieve.stages.base import FusionResult, Review, RunContext, ScanResult
from faithsieve.stages.calibration import (
    Agreement,
    Calibration,
    Weights,
    load_calibration,
    review_accuracy,
    weights_from,
)
from faithsieve.stages.judge import (
    JudgeAnswer,
    anchor_judgment,
    answer_model,
    judgment_evidence,
    numbered_steps,
    parse_judgment,
)
from faithsieve.stages.verbatim import written_verbatim
from faithsieve.statetree.models import EdgeUnit, StateTree
from faithsieve.verdict import ReviewNote, ScanCandidate

Basis = Literal["checked", "formalized", "formal", "reviewed"]
Says = Literal["wrong", "fine", "unsure"]
Source = Literal["checked", "formalized", "formal", "review", "scan", "reexamine"]
MAX_SUMMARY_LINES = 60

RELIABILITY: dict[str, float] = {"checked": 0.99, "formalized": 0.9, "formal": 0.9, "review": 0.85,
                                 "scan": 0.6, "reexamine": 0.65}
"""Reliability of one signal of each source: the chance that it is right."""
VERIFIED_RELIABILITY = 0.6
"""A verified check speaks for its claim, not for the whole step: a weak ``fine``."""
DECIDE_AT = 0.9
"""Combined reliability at which a step is wrong."""
CLEAR_AT = 0.8
"""Combined reliability at which a step is cleared (fine)."""
SCAN_WRONG_AT = 0.6
"""Scan suspicion above which its prior says ``wrong`` (at or below 0.2 it says ``fine``)."""
_BASIS_OF: dict[str, Basis] = {"checked": "checked", "formalized": "formalized", "formal": "formal",
                               "review": "reviewed", "reexamine": "reviewed"}
_RANK: dict[str, int] = {"checked": 0, "formalized": 1, "formal": 2, "reviewed": 3}


# ---------------------------------------------------------------------------------------
# Pure rules


@dataclass(frozen=True)
class Signal:
    """One piece of local evidence about one step."""

    step: int
    says: Says
    source: Source
    reliability: float
    """Chance that the signal is right, in (0.5, 1)."""
    reason: str = ""
    unit: str | None = None


@dataclass(frozen=True)
class Decision:
    """What the evidence decides on its own."""

    step: int | None
    """Earliest wrong step (None: no step is wrong on this evidence)."""
    basis: Basis | None
    """What decided it; ``reviewed`` for a ``correct`` decided by reviews; None when undecided."""
    reason: str
    leaning: tuple[int, ...] = ()
    """Steps before ``step`` that lean wrong (L > 0) without reaching the bar: re-examine them first."""
    all_cleared: bool = False
    """No step is wrong and every step is cleared."""


def logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


STEP_SOURCES = frozenset({"scan", "reexamine"})
"""Sources whose signal speaks for the whole step (the scan's prior, a re-examination of the prefix);
every other signal speaks for the unit it names (``Signal.unit``; None: the step's one shared unit)."""


FORMULA_UNIT = "formula@"
"""Prefix of the unit of a formula no unit of the tree writes (``formula_unit``)."""


def samples_weight(k: int, rho: float) -> float:
    """How many independent opinions ``k`` samples of one prompt are worth when re-samples repeat the first
    with correlation ``rho`` (pure): ``k / (1 + (k - 1) rho)``, the design effect of ``k`` equally
    correlated draws. ``rho = 1`` (a model at temperature 0, or one whose errors are systematic): one
    opinion, however many repeats; ``rho = 0``: ``k``."""
    rho = min(max(rho, 0.0), 1.0)
    return k / (1 + (k - 1) * rho) if k > 0 else 0.0


def _groups(signals: Iterable[Signal], rho: float = 1.0) -> dict[int, tuple[float, dict[str | None, float]]]:
    """Per step: the log-odds of its step-wide signals and, per unit, those of the unit's own signals. The
    reviews of one unit (a first sample and its re-samples, one prompt) are one piece of evidence: their mean
    weight times ``samples_weight(k, rho)``."""
    out: dict[int, tuple[float, dict[str | None, float]]] = {}
    reviews: dict[tuple[int, str | None], list[float]] = {}
    for s in signals:
        if s.says == "unsure":
            continue
        w = logit(s.reliability) * (1 if s.says == "wrong" else -1)
        wide, units = out.get(s.step, (0.0, {}))
        if s.source in STEP_SOURCES:
            wide += w
        elif s.source == "review":
            reviews.setdefault((s.step, s.unit), []).append(w)
        else:
            units[s.unit] = units.get(s.unit, 0.0) + w
        out[s.step] = (wide, units)
    for (step, unit), ws in reviews.items():
        units = out[step][1]
        units[unit] = units.get(unit, 0.0) + sum(ws) / len(ws) * samples_weight(len(ws), rho)
    return out


def _worst_unit(units: Mapping[str | None, float]) -> str | None:
    scored = {u: v for u, v in units.items() if v > 0 or not (u or "").startswith(FORMULA_UNIT)}
    return max(scored, key=lambda u: scored[u]) if scored else None


def step_scores(signals: Iterable[Signal], rho: float = 1.0) -> dict[int, float]:
    """Log-odds that each step is wrong (pure): its step-wide signals plus its worst unit's. A step is
    wrong when any one of its moves is: independent signals about one unit add up; signals about
    different units of a step do not cancel (a unit found fine says nothing about a formula it does
    not contain)."""
    out: dict[int, float] = {}
    for step, (wide, units) in _groups(signals, rho).items():
        # a formula no unit writes can make its step wrong, never hold back its clearing: it is no unit of
        # the tree, and a verified claim speaks only for itself
        scored = [v for u, v in units.items() if v > 0 or not (u or "").startswith(FORMULA_UNIT)]
        out[step] = wide + (max(scored) if scored else 0.0)
    return out


def deciding_unit(signals: Sequence[Signal], step: int, rho: float = 1.0) -> str | None:
    """The unit of ``step`` whose signals score worst (None: the shared unit, or no unit signal)."""
    _, units = _groups(signals, rho).get(step, (0.0, {}))
    return _worst_unit(units)


def _local_wrong(signals: Sequence[Signal], step: int, rho: float = 1.0) -> list[Signal]:
    """The local ``wrong`` signals behind ``step``'s score: its worst unit's and a re-examination's."""
    unit = deciding_unit(signals, step, rho)
    return [s for s in signals if s.step == step and s.says == "wrong" and s.source != "scan"
            and (s.source in STEP_SOURCES or s.unit == unit)]


def wrong_bar(units: int, decide_at: float = DECIDE_AT) -> float:
    """Log-odds a unit's evidence must reach to call its step wrong when ``units`` units are judged:
    ``logit(decide_at) + ln(units)``. Each sound unit judged is one more chance of a false alarm, so the
    bar for one unit rises with their number (Bonferroni: the chance of a false ``wrong`` anywhere in
    the proof stays near ``1 - decide_at``)."""
    return logit(decide_at) + math.log(max(1, units))


def decide(signals: Sequence[Signal], n_steps: int, *, decide_at: float = DECIDE_AT,
           clear_at: float = CLEAR_AT, units: int = 1, rho: float = 1.0) -> Decision:
    """The earliest step whose signals reach ``wrong_bar(units)`` with a local ``wrong`` signal among them
    (see the module docstring); pure. ``rho``: the correlation of re-samples of one review (``samples_weight``)."""
    scores = step_scores(signals, rho)
    bar, clear = wrong_bar(units, decide_at), logit(clear_at)
    for step in sorted(scores):
        local_wrong = _local_wrong(signals, step, rho)
        if scores[step] + 1e-9 >= bar and local_wrong:
            best = min(local_wrong, key=lambda s: (_RANK[_BASIS_OF[s.source]], -s.reliability))
            basis = _BASIS_OF[best.source]
            leaning = tuple(k for k in sorted(scores) if k < step and scores[k] > 0)
            p = 1 / (1 + math.exp(-scores[step]))
            sources = ", ".join(sorted({s.source for s in local_wrong}))
            reason = f"step {step}: {best.reason or 'judged wrong'} [{sources}; combined reliability {p:.3f}]"
            return Decision(step=step, basis=basis, reason=reason[:500], leaning=leaning)
    # a formula the proof writes, refuted exactly, is never cleared by reviews alone: they may bring it
    # below the bar (an immaterial slip), and then the synthesis weighs it, but no model's "fine" erases it
    refuted = {s.step for s in signals if s.says == "wrong" and s.source == "checked"}
    cleared = not refuted and all(scores.get(k, 0.0) <= -clear + 1e-9 for k in range(1, n_steps + 1))
    if cleared and n_steps:
        return Decision(step=None, basis="reviewed", reason="every step cleared by local evidence", all_cleared=True)
    return Decision(step=None, basis=None, reason="no step reached the bar on local evidence",
                    leaning=tuple(k for k in sorted(scores) if scores[k] > 0))


def refutation_floor(signals: Sequence[Signal]) -> Signal | None:
    """The earliest exact refutation of a formula the proof writes (a ``checked`` ``wrong`` signal), or None
    (pure). It is a floor for the answer: model judgments may name an earlier step, never a later one
    and never ``correct``."""
    return min((s for s in signals if s.source == "checked" and s.says == "wrong"), key=lambda s: s.step, default=None)


def with_floor(decision: Decision, signals: Sequence[Signal], rho: float = 1.0) -> Decision:
    """``decision`` under the refutation floor (pure): when no step reached the bar before the earliest
    exact refutation, that refutation decides (basis ``checked``), with the steps before it that lean
    wrong to re-examine; judgments can move the answer earlier, never later nor to ``correct``."""
    floor = refutation_floor(signals)
    if floor is None or (decision.step is not None and decision.step <= floor.step):
        return decision
    scores = step_scores(signals, rho)
    said = f"the local evidence pointed at step {decision.step}" if decision.step is not None else \
        "no model judgment confirmed it"
    reason = f"step {floor.step}: {floor.reason} [checked; {said}, but a formula the proof writes is false as written]"
    return Decision(step=floor.step, basis="checked", reason=reason[:500],
                    leaning=tuple(k for k in sorted(scores) if k < floor.step and scores[k] > 0))


REPEATS_AT = 0.95
"""Measured re-sample correlation at or above which fusion asks no re-sample (it would repeat the first)."""
MAX_CONFIRMATIONS = 8
"""Most extra review calls fusion makes for one proof."""
MAX_ROUNDS = 3
"""Most re-sampling rounds for one step (so at most four judgments of one unit)."""
MAX_CONFIRM_UNITS = 3
"""Most units of one step re-reviewed."""


def contested_step(signals: Sequence[Signal], rounds: Mapping[int, int] | None = None,
                   max_rounds: int = MAX_ROUNDS, units: int = 1, rho: float = 1.0) -> int | None:
    """The earliest step (with fewer than ``max_rounds`` re-sampling rounds in ``rounds``) whose local
    evidence needs one more independent judgment (pure): a local signal of its worst unit says ``wrong``
    and the step is neither decided nor cleared (``-logit(CLEAR_AT) < L < logit(DECIDE_AT)``), or it is
    decided while a review of that unit says ``fine`` (a verified check of one claim is no conflict).
    Steps after the first decided, uncontested one, or after an exact refutation (``refutation_floor``),
    do not matter."""
    rounds = rounds or {}
    scores = step_scores(signals, rho)
    bar, clear = wrong_bar(units), logit(CLEAR_AT)
    for step in sorted(scores):
        unit = deciding_unit(signals, step, rho)
        local = [s for s in signals if s.step == step and s.source != "scan"
                 and (s.source in STEP_SOURCES or s.unit == unit)]
        wrong = any(s.says == "wrong" for s in local)
        decided = wrong and scores[step] + 1e-9 >= bar
        floor = any(s.says == "wrong" and s.source == "checked" for s in signals if s.step == step)
        if floor:  # an exact refutation is the answer's floor: no judgment of this step can move it
            return None
        conflict = decided and any(s.says == "fine" and s.source in ("review", "reexamine") for s in local)
        open_ = wrong and -clear + 1e-9 < scores[step] < bar - 1e-9
        if (open_ or conflict) and rounds.get(step, 0) < max_rounds:
            return step
        if decided and not conflict:
            return None
    return None


def evidence_signal(ev: Evidence, settings: Settings) -> Signal | None:
    """The signal one check gives, or None (unknown, drift, below the gate, a judgment)."""
    if ev.basis not in ("checked", "formalized", "formal") or ev.status == "unknown" or ev.drift:
        return None
    if ev.basis != "checked":
        gated = ev.faithfulness is not None and ev.faithfulness + 1e-9 >= settings.gate_threshold
        if not gated and "no_gate" not in settings.ablations:
            return None
    if ev.status == "verified":
        return Signal(ev.step, "fine", ev.basis, VERIFIED_RELIABILITY, f"{ev.claim[:160]} verified", ev.edge)
    if ev.basis == "checked" and not ev.counterexample:
        return None  # (a suspect refutation still advises, below; ``may_decide`` keeps it from the floor)
    cx = ", ".join(f"{k} = {v}" for k, v in (ev.counterexample or {}).items())
    why = f"{ev.kind.value} claim '{ev.claim[:160]}' refuted by {ev.method}" + (f" ({cx})" if cx else "")
    if ev.suspect:  # a kind not yet measured clean: a prior on its step, as the scan's (never a floor, never local)
        return Signal(ev.step, "wrong", "scan", RELIABILITY["scan"], f"suspect: {why} [{ev.suspect}]", ev.edge)
    return Signal(ev.step, "wrong", ev.basis, RELIABILITY[ev.basis], why, ev.edge)


def may_decide(ev: Evidence) -> bool:
    """Whether an exact refutation of a formula the proof writes may decide (the floor and fusion's ``checked``
    signal; the one place that says so): it carries a counterexample and its record is not marked ``suspect``
    (a flag kind whose precision on people's reference solutions is unmeasured advises, never decides)."""
    return bool(ev.counterexample) and not ev.suspect


def anchor_choice(judge: int | None, local: int | None, local_checked: bool,
                  synthesis: int | None | Literal["unasked"] = "unasked") -> Literal["local", "judge", "ask"]:
    """Whose answer the verdict takes (pure). Labels: 0 ``correct``, N step N, None none (unread judgment,
    undecided local evidence, unread synthesis).

    - No whole-proof judgment was read: the local answer, else the synthesis (``ask``), the method without its
      anchor.
    - The local evidence decides nothing: the judgment.
    - Local evidence agrees with the judgment, or is an exact refutation of a formula the proof writes that may
      decide (``may_decide``): the local answer.
    - Otherwise the local answer moves the verdict away from the judgment only when a different view
      corroborates it: the synthesis, which sees the local evidence, names the same answer (``ask`` until it
      was asked). Re-samples of the same review never corroborate: they are the same view."""
    if judge is None:
        return "local" if local is not None else "ask"
    if local is None:
        return "judge"
    if local == judge or local_checked:
        return "local"
    if synthesis == "unasked":
        return "ask"
    return "local" if synthesis == local else "judge"


def _label(label: int | None) -> str:
    return "nothing readable" if label is None else "correct" if label == 0 else f"step {label}"


def _with_overrule(result: FusionResult, overruled: Evidence, extra: tuple[Evidence, ...]) -> FusionResult:
    return result.model_copy(update={"evidence": (*extra, *result.evidence),
                                     "reason": ((result.reason or "") + "; the checked refutation at step "
                                                f"{overruled.step} was overruled as immaterial")[:500]})


def review_signal(review: Review, step: int, weights: Weights | None = None) -> Signal:
    says: Says = {"incorrect": "wrong", "correct": "fine"}.get(review.verdict, "unsure")  # type: ignore[assignment]
    r = RELIABILITY["review"] if weights is None else weights.review_wrong if says == "wrong" else weights.review_fine
    return Signal(step, says, "review", r, f"local review of {review.edge}: {review.reason[:200]}", review.edge)


def scan_signal(c: ScanCandidate, step: int) -> Signal:
    says: Says = "wrong" if c.likely_wrong or c.suspicion > SCAN_WRONG_AT else "fine" if c.suspicion <= 0.2 else "unsure"
    return Signal(step, says, "scan", RELIABILITY["scan"], f"scan prior {c.suspicion:.2f}", c.edge)


def formula_unit(ev: Evidence, units: Sequence[EdgeUnit]) -> str:
    """The unit a check of the rule-based reading speaks for (pure): the first unit of its step whose
    text writes the checked formula verbatim, else a unit of its own (``step 2: x = 5``): no
    review saw that formula, so no review's ``fine`` is about it."""
    for u in units:
        if u.step == ev.step and ev.source.strip() and written_verbatim(ev.source, u.text):
            return u.id
    return f"{FORMULA_UNIT}{ev.step}: {ev.source[:80]}"


def signals_from(evidence: Iterable[Evidence], scan: ScanResult, steps_of: Mapping[str, int],
                 settings: Settings, units: Sequence[EdgeUnit] = (), weights: Weights | None = None) -> list[Signal]:
    """Every signal of the checks, the reviews and the scan (pure). Under ``nl_only`` the checks give none.

    A check of the model's tree speaks for its unit (``ev.edge``); one of the offline sieve's reading
    (no unit) for the unit of ``units`` that writes its formula (``formula_unit``). One formula checked
    twice (the sieve and a verbatim copy in a model obligation) counts once. The scan's prior counts
    once per step (its most suspicious unit there)."""
    out: list[Signal] = []
    if "nl_only" not in settings.ablations:
        seen: set[tuple[object, ...]] = set()
        for e in evidence:
            sig = evidence_signal(e, settings)
            if sig is None:
                continue
            if e.edge is None:
                sig = replace(sig, unit=formula_unit(e, units))
            key = (sig.step, sig.unit, sig.source, sig.says, re.sub(r"\s+", "", e.claim))
            if key not in seen:
                seen.add(key)
                out.append(sig)
    out += [review_signal(r, steps_of[r.edge], weights) for r in scan.reviews if r.edge in steps_of]
    top: dict[int, ScanCandidate] = {}
    for c in scan.candidates:
        k = steps_of.get(c.edge)
        if k is not None and (k not in top or c.suspicion > top[k].suspicion):
            top[k] = c
    out += [scan_signal(c, k) for k, c in top.items()]
    return out


def unit_steps(tree: StateTree) -> dict[str, int]:
    return {e.id: e.step for e in tree.edges}


# ---------------------------------------------------------------------------------------
# Model answers


class Reexamination(BaseModel):
    """The ``reexamine`` answer."""

    earlier_step: int | None = Field(default=None)
    """One of the listed earlier steps that already holds a material error, or null."""
    reason: str = Field(default="", max_length=4000)

    @field_validator("earlier_step", mode="before")
    @classmethod
    def _step(cls, v: object) -> object:
        if isinstance(v, bool):
            raise ValueError("earlier_step must be a step number or null")
        if isinstance(v, str):
            low = v.strip().lower()
            if low in ("", "null", "none", "no"):
                return None
            return low.removeprefix("step").strip()
        return v


class Materiality(BaseModel):
    """The ``materiality`` answer: does the step's conclusion depend on the refuted formula? ``material`` is
    required: an answer without it (a bare "fine") cannot be read, and the refutation stands."""

    material: bool
    reason: str = Field(default="", max_length=4000)

    @field_validator("material", mode="before")
    @classmethod
    def _flag(cls, v: object) -> object:
        if isinstance(v, str) and v.strip().lower() in ("true", "false"):
            return v.strip().lower() == "true"
        if not isinstance(v, bool):
            raise ValueError("material must be true or false")
        return v


def _squash(text: str) -> str:
    return re.sub(r"[\s$]+|\\[()\[\]]", "", text).replace("\\times", "*").replace("\\cdot", "*").replace("×", "*").replace("·", "*")


def names_formula(reason: str, formula: str) -> bool:
    """Whether ``reason`` quotes ``formula`` (pure; spaces, ``$`` and the usual product signs aside)."""
    f = _squash(formula.rstrip(".,;"))
    return bool(f) and f in _squash(reason)


def overrule(signals: Sequence[Signal], floor: Signal) -> list[Signal]:
    """``signals`` without ``floor``, the one refutation a materiality answer overruled (pure)."""
    return [s for s in signals if s is not floor]


class SynthesisAnswer(JudgeAnswer):
    """The ``synthesis`` answer: ``{"answer": "correct" | "step N", "reason": ...}``."""

    reason: str = Field(default="", max_length=4000)


# ---------------------------------------------------------------------------------------
# The stage


class EvidenceFusion:
    """Local evidence decides (after re-examining steps that lean wrong before the answer); else synthesis."""

    name = "llm"

    def __init__(self) -> None:
        self.agreement = Agreement()
        self._calibration: tuple[str, Calibration, str] | None = None

    def fuse(self, ctx: RunContext, tree: StateTree, scan: ScanResult, evidence: list[Evidence]) -> FusionResult:
        """The whole-proof judgment (``--mode judge``'s own call) anchors the answer; local evidence moves it
        only when it decides and a different view corroborates it (``anchor_choice``)."""
        steps_of = unit_steps(tree)
        w = self._weights(ctx)
        judged = ctx.anchor if ctx.anchor is not None else anchor_judgment(ctx)
        j = None if judged.undecided else (judged.first_error_step or 0)
        local, scan, extra, overruled = self._local(ctx, tree, scan, evidence, steps_of, w)
        self._measure(scan)
        meta = {"judge": j, "calibration": w.source,
                "reviews": tuple(ReviewNote(edge=r.edge, step=steps_of[r.edge], verdict=r.verdict, sample=r.sample)
                                 for r in scan.reviews if r.edge in steps_of)}
        lab = None if local is None else (local.first_error_step or 0)
        choice = anchor_choice(j, lab, local is not None and local.basis == "checked")
        if choice == "ask":
            usable = [e for e in evidence if not (ctx.ablated("nl_only") and e.basis in ("checked", "formalized", "formal"))]
            syn = self._synthesis(ctx, scan, usable, steps_of, ctx.ablated("nl_only"))
            said = None if syn.undecided else (syn.first_error_step or 0)
            choice = anchor_choice(j, lab, False, said)
            extra = (*extra, *syn.evidence)
            if local is None and j is None:
                result = syn if overruled is None else _with_overrule(syn, overruled, extra)
                return result.model_copy(update=meta)
        result = self._anchored(choice, judged, local, extra, lab, j)
        return result.model_copy(update=meta)

    def _anchored(self, choice: str, judged: FusionResult, local: FusionResult | None, extra: tuple[Evidence, ...],
                  lab: int | None, j: int | None) -> FusionResult:
        """The answer ``anchor_choice`` chose, with its reason and every record behind it."""
        said = _label(j)
        if choice == "local" and local is not None:
            why = "; the whole-proof judgment agrees" if lab == j else \
                f"; the whole-proof judgment said {said}, the synthesis over the local evidence corroborates it" \
                if local.basis != "checked" else f"; the whole-proof judgment said {said}"
            return local.model_copy(update={"reason": ((local.reason or "") + why)[:500],
                                            "evidence": (*local.evidence, *extra, *judged.evidence)})
        moved = "" if lab is None else f" (local evidence pointed at {_label(lab)}, no different view corroborated it)"
        return judged.model_copy(update={"reason": ((judged.reason or "") + moved)[:500],
                                         "evidence": (*judged.evidence, *extra)})

    def _weights(self, ctx: RunContext) -> Weights:
        path = ctx.settings.llm_calibration
        cal, label = None, "default weights (no calibration)"
        if path:
            if self._calibration is None or self._calibration[0] != path:
                loaded, lab = load_calibration(path)
                self._calibration = (path, loaded, lab)
            cal, label = self._calibration[1], self._calibration[2]
        base = weights_from(cal, label, None)
        return base if base.rho_measured else weights_from(cal, label, self.agreement.rho(review_accuracy(base)))

    def _measure(self, scan: ScanResult) -> None:
        """Count this proof's re-samples that repeated their unit's first review (the run's agreement)."""
        first = {r.edge: r.verdict for r in scan.reviews if r.sample == 0 and r.verdict != "uncertain"}
        pairs = [(first[r.edge], r.verdict) for r in scan.reviews
                 if r.sample > 0 and r.edge in first and r.verdict != "uncertain"]
        if pairs:
            self.agreement.add(len(pairs), sum(1 for a, b in pairs if a == b))

    def _local(self, ctx: RunContext, tree: StateTree, scan: ScanResult, evidence: list[Evidence],
               steps_of: Mapping[str, int], w: Weights
               ) -> tuple[FusionResult | None, ScanResult, tuple[Evidence, ...], Evidence | None]:
        """What the local evidence decides on its own (None: nothing), the scan with its re-samples, the records
        fusion made, and the record of an overruled refutation."""
        n, units = len(ctx.proof.steps), len(tree.edges)
        scan = self._confirm(ctx, tree, scan, evidence, steps_of, w)
        signals = signals_from(evidence, scan, steps_of, ctx.settings, tree.edges, w)
        decision = with_floor(decide(signals, n, units=units, rho=w.rho), signals, w.rho)
        extra: tuple[Evidence, ...] = ()
        if decision.step is not None and decision.leaning:
            more, extra = self._reexamine(ctx, scan, evidence, steps_of, decision)
            if more:
                signals = [*signals, *more]
                decision = with_floor(decide(signals, n, units=units, rho=w.rho), signals, w.rho)
        floor = refutation_floor(signals)
        overruled: Evidence | None = None
        if decision.step is not None and decision.basis == "checked" and floor is not None and floor.step == decision.step:
            overruled = self._materiality(ctx, floor, evidence)
            if overruled is not None:  # an explicit "immaterial" about this formula: the next evidence decides
                signals = overrule(signals, floor)
                decision = with_floor(decide(signals, n, units=units, rho=w.rho), signals, w.rho)
                extra = (*extra, overruled)
        if overruled is not None:
            note = f"; the checked refutation at step {overruled.step} was overruled as immaterial"
            if decision.step is not None or decision.all_cleared:  # it rests on a model's judgment of the refutation
                return FusionResult(first_error_step=decision.step, basis="judged", reason=(decision.reason + note)[:500],
                                    evidence=extra), scan, (), overruled
        elif decision.step is not None:
            return FusionResult(first_error_step=decision.step, basis=decision.basis, reason=decision.reason,
                                evidence=extra), scan, (), None
        elif decision.all_cleared:
            return FusionResult(first_error_step=None, basis="reviewed", reason=decision.reason, evidence=extra), scan, (), None
        return None, scan, extra, overruled

    def _materiality(self, ctx: RunContext, floor: Signal, evidence: Sequence[Evidence]) -> Evidence | None:
        """One ``materiality`` call about the exact refutation that would decide: the record of its overruling
        when the answer says explicitly ``material: false`` with a reason that quotes the formula; None (the
        refutation stands) for anything else: material, no such field, an unreadable answer, no model."""
        ev = next((e for e in evidence if e.basis == "checked" and e.step == floor.step
                   and (sig := evidence_signal(e, ctx.settings)) is not None and sig.reason == floor.reason), None)
        if ev is None or ctx.llm is None:
            return None
        formula = (ev.statement or ev.source).strip()
        counter = ", ".join(f"{k} = {v}" for k, v in (ev.counterexample or {}).items())
        text = next((s.text.strip() for s in ctx.proof.steps if s.index == ev.step), "")
        values = {"problem": ctx.proof.problem.strip()[:8000], "step": str(ev.step), "text": text[:4000],
                  "formula": formula[:400], "counter": counter[:400] or ev.method}
        answer = ctx.ask("materiality", values, Materiality, max_tokens=256)
        if isinstance(answer, Unparsed):
            ctx.note(f"fusion: materiality of step {ev.step}'s refutation unreadable ({answer.reason}); the refutation stands")
            return None
        why = answer.value.reason.strip()
        if answer.value.material:
            return None
        if not names_formula(why, formula):
            ctx.note(f"fusion: materiality answer for step {ev.step} does not quote '{formula[:80]}'; the refutation stands")
            return None
        return Evidence(obligation=f"{ev.obligation}:materiality", kind=ev.kind, step=ev.step, span=ev.span,
                        source=ev.source, claim=f"overruled: '{formula[:200]}' ({counter}) judged immaterial to the "
                        f"step's conclusion", status="unknown", method="materiality",
                        reason=f"the checked refutation of this formula was overruled by a model judgment: {why}"[:1000],
                        basis="judged", statement=ev.statement)

    def _confirm(self, ctx: RunContext, tree: StateTree, scan: ScanResult, evidence: list[Evidence],
                 steps_of: Mapping[str, int], w: Weights) -> ScanResult:
        """Independent re-samples of local reviews until the evidence settles: the earliest contested step
        (``contested_step``) gets one more review of the unit its score rests on (``deciding_unit``), or of
        each of its units when that is no unit of the tree (a first review where a unit has none), at most
        ``MAX_ROUNDS`` rounds per step and ``MAX_CONFIRMATIONS`` reviews per proof. Returns the scan with
        the new reviews."""
        if ctx.llm is None or (w.rho_measured and w.rho >= REPEATS_AT):
            return scan  # re-samples measured to repeat the first answer settle nothing: none is asked
        from faithsieve.stages.tree_scan import LLMScanner

        reviewer, prior = LLMScanner(), {c.edge: c for c in scan.candidates}
        rounds: dict[int, int] = {}
        spent = 0
        while spent < MAX_CONFIRMATIONS:
            signals = signals_from(evidence, scan, steps_of, ctx.settings, tree.edges, w)
            step = contested_step(signals, rounds, units=len(tree.edges), rho=w.rho)
            if step is None:
                break
            rounds[step] = rounds.get(step, 0) + 1
            unit = deciding_unit(signals, step, w.rho)
            units = [e for e in tree.edges if e.step == step and e.id == unit] or \
                [e for e in tree.edges if e.step == step][:MAX_CONFIRM_UNITS]
            seen = {r.edge: r.sample for r in scan.reviews}
            new = []
            for e in units:
                if spent >= MAX_CONFIRMATIONS:
                    break
                sample = seen[e.id] + 1 if e.id in seen else 0
                new.append(reviewer.review(ctx, tree, e, prior.get(e.id), sample=sample))
                spent += 1
            scan = scan.model_copy(update={"reviews": (*scan.reviews, *new)})
        return scan

    def _reexamine(self, ctx: RunContext, scan: ScanResult, evidence: list[Evidence], steps_of: Mapping[str, int],
                   decision: Decision) -> tuple[list[Signal], tuple[Evidence, ...]]:
        """One ``reexamine`` call over the steps that lean wrong before the candidate: its answer is one
        more signal (``wrong`` on the step it names, ``fine`` on the others); unreadable: none."""
        prefix = list(decision.leaning)
        values = {"problem": ctx.proof.problem[:8000], "steps": numbered_steps(ctx.proof),
                  "candidate": decision.reason, "prefix": _prefix_text(prefix, scan.reviews, evidence, steps_of)}
        answer = ctx.ask("reexamine", values, Reexamination)
        if isinstance(answer, Unparsed):
            ctx.note(f"fusion: re-examination unparsed ({answer.reason}); no signal added")
            return [], ()
        earlier = answer.value.earlier_step
        why = answer.value.reason.strip() or "no reason given"
        if earlier is not None and earlier not in prefix:
            ctx.note(f"fusion: re-examination named step {earlier}, not one of {prefix}; ignored")
            return [], ()
        r = RELIABILITY["reexamine"]
        out = [Signal(k, "wrong" if k == earlier else "fine", "reexamine", r, f"re-examination: {why[:200]}")
               for k in prefix]
        record = judgment_evidence(ctx.proof, earlier, "reexamine", why) if earlier is not None else None
        return out, ((record,) if record is not None else ())

    def _synthesis(self, ctx: RunContext, scan: ScanResult, evidence: list[Evidence], steps_of: Mapping[str, int],
                   nl_only: bool) -> FusionResult:
        values = {"problem": ctx.proof.problem[:8000], "steps": numbered_steps(ctx.proof),
                  "reviews": _reviews_text(scan.reviews, steps_of),
                  "evidence": ("(formal and arithmetic checking disabled)" if nl_only
                               else _evidence_text(evidence))}
        answer = ctx.ask("synthesis", values, answer_model(len(ctx.proof.steps), SynthesisAnswer), anchor=True)
        n = len(ctx.proof.steps)
        value = None if isinstance(answer, Unparsed) else answer.value
        assert value is None or isinstance(value, SynthesisAnswer)
        label = None if value is None else parse_judgment(value.answer, n)
        if value is None or label is None:
            why = answer.reason if isinstance(answer, Unparsed) else f"answer {value.answer!r} is not correct or step 1..{n}"  # type: ignore[union-attr]
            ctx.note(f"fusion: final synthesis unparsed ({why}); verdict unknown")
            ev = judgment_evidence(ctx.proof, None, "synthesis", f"final synthesis unparsed: {why}", raw=answer.raw)
            return FusionResult(first_error_step=None, basis=None, undecided=True,
                                reason="no reliable negative evidence and the final synthesis could not be read: "
                                       "verdict unknown", evidence=(ev,))
        why = value.reason.strip() or "no reason given"
        ev = judgment_evidence(ctx.proof, label, "synthesis", why)
        if label == 0:
            return FusionResult(first_error_step=None, basis="judged",
                                reason=f"no reliable negative evidence; judged correct: {why}"[:500], evidence=(ev,))
        return FusionResult(first_error_step=label, basis="judged",
                            reason=f"no reliable negative evidence; judged step {label}: {why}"[:500], evidence=(ev,))


def _reviews_text(reviews: Iterable[Review], steps_of: Mapping[str, int]) -> str:
    lines = [f"- step {steps_of.get(r.edge, '?')}, unit {r.edge}: {r.verdict} (suspicion {r.suspicion:.2f}"
             f"{', ' + r.error_type[:80] if r.error_type else ''}): {r.reason[:400]}" for r in reviews]
    return "\n".join(lines[:MAX_SUMMARY_LINES]) or "(no local reviews)"


def _evidence_text(evidence: Iterable[Evidence]) -> str:
    lines = []
    for ev in sorted(evidence, key=lambda e: e.step):
        extra = []
        if ev.faithfulness is not None:
            extra.append(f"S_faith {ev.faithfulness:.2f}")
        if ev.drift:
            extra.append("drift: " + ", ".join(ev.drift))
        tail = f" [{'; '.join(extra)}]" if extra else ""
        status = f"{ev.status} (suspect: {ev.suspect})" if ev.suspect else ev.status
        lines.append(f"- step {ev.step} {ev.kind.value} {status} ({ev.basis}, {ev.method}){tail}: "
                     f"{ev.claim[:240]}" + (f" -- {ev.reason[:200]}" if ev.reason else ""))
    if len(lines) > MAX_SUMMARY_LINES:
        lines = [*lines[:MAX_SUMMARY_LINES], f"- ... {len(lines) - MAX_SUMMARY_LINES} more records omitted"]
    return "\n".join(lines) or "(no checks were run)"


def _prefix_text(prefix: list[int], reviews: Iterable[Review], evidence: Iterable[Evidence],
                 steps_of: Mapping[str, int]) -> str:
    reviews, evidence = list(reviews), list(evidence)
    blocks = []
    for s in prefix:
        rv = [r for r in reviews if steps_of.get(r.edge) == s]
        ev = [e for e in evidence if e.step == s]
        blocks.append(f"Step {s}:\n" + _reviews_text(rv, steps_of) + "\n" + _evidence_text(ev))
    return "\n\n".join(blocks)


__all__ = ["anchor_choice", "may_decide", "samples_weight", "Materiality", "names_formula", "overrule", "CLEAR_AT", "MAX_CONFIRMATIONS", "contested_step", "DECIDE_AT", "RELIABILITY", "Decision", "EvidenceFusion", "Reexamination", "Signal", "STEP_SOURCES", "with_floor", "wrong_bar", "refutation_floor", "deciding_unit", "formula_unit",
           "SynthesisAnswer", "decide", "evidence_signal", "logit", "review_signal", "scan_signal", "signals_from",
           "step_scores", "unit_steps"]
