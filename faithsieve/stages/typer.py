"""Typed obligations for the audit window's EdgeUnits.

Three steps per unit:

1. ``infer_kind(edge, review)`` (pure): the transition type, in this order of precedence:
   case analysis -> ``case_split``; a witness or a named object introduced -> ``witness``;
   the goal changes and conditions are added -> ``fact_plus_reduction``; the goal changes
   alone -> ``goal_reduction``; a rewrite, simplification or computation -> ``rewrite``;
   anything else -> ``derived_fact``. Structural fields of the EdgeUnit (type, pattern,
   goal relation, new conditions) are read first, cue words in its text second.
2. ``bundle(edge, before, after, kind)`` (pure): the obligation skeletons. Premises always come
   from the before-state, never from what this edge introduces; a ``fact_plus_reduction``
   becomes the fact first and then the reduction, which may use the fact and says it depends
   on the fact's obligation.
3. One ``obligations`` call per unit fills in the claims (wording, an optional bare
   ``equation``, ``use_formal``, ``translation_confidence``, ``priority``). Premises are never
   taken from the model. A unit whose review says ``incorrect`` also gets a ``contested_claim``.
   An unusable answer keeps the skeletons' default claims, built without a model: the edge's
   declared new facts (statement part), ``if G_out holds then G_in holds`` for a reduction, and
   the edge's own text whenever the edge declares nothing more precise.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from pydantic import BaseModel, Field

from faithsieve.llm.structured import Unparsed
from faithsieve.obligations.kinds.models import NLObligation, ObligationKind
from faithsieve.stages.base import Review, RunContext, ScanResult
from faithsieve.statetree.models import EdgeUnit, ProofState, StateTree, TransitionType

K = ObligationKind
MAX_OBLIGATIONS_PER_PROOF = 40
"""Most obligations typed for one proof (later units get none, with a note); the default of
``LLMTyper(max_obligations_per_proof=)``."""
MAX_CLAIMS_PER_UNIT = 3
"""Most new facts of one edge turned into separate obligations."""

_CASE = re.compile(r"(?i)\b(cases?|split(?:s|ting)?|casework|subcases?)\b")
_WITNESS = re.compile(r"(?i)\b(?:witness(?:es)?|choose|chose|chosen|choosing|pick(?:ed|ing)?|define[sd]?|defining|"
                      r"let\b(?!['’]s\b|\s+us\b)|tak(?:e|ing)\s+\S{1,12}\s*(?:=|to be\b|be\b|as\b))")
"""Witness cues. 'take' counts only as 'take x = ...' / 'take k to be ...' (not 'taking logs');
'let' not as "let's" or 'let us'."""
_REWRITE = re.compile(r"(?i)\b(rewrit\w*|simplif\w*|factor(?:s|ed|ing|i[sz]\w*)?|expand\w*|substitut\w*|"
                      r"evaluat\w*|arithmetic\w*|comput\w*|calculat\w*|plug\w*)\b")
_ELIMINATE = re.compile(r"(?i)\b(impossible|contradict\w*|cannot|can't|rule[sd]? out|discard\w*|eliminat\w*|"
                        r"no solutions?|infeasible)\b")
_PARTITION = re.compile(r"(?i)\b(overlap\w*|partition\w*|disjoint|mutually exclusive)\b")
_ARITH_ERROR = re.compile(r"(?i)(arithmetic|calculation|computation|algebra)")
_NAMED = re.compile(r"^\s*([A-Za-z_][\w'.]{0,40})\s*:\s+(\S.*)$", re.DOTALL)


# ---------------------------------------------------------------------------------------
# Pure rules


def _norm(text: str) -> str:
    return " ".join(text.split()).strip().lower()


def statement_of(condition: str) -> str:
    """``h_n: n ≥ 2`` -> ``n ≥ 2`` (a condition without a name is returned as is)."""
    m = _NAMED.match(condition)
    return m.group(2).strip() if m else condition.strip()


def goal_changed(before: ProofState, after: ProofState) -> bool:
    """The edge replaces the goal by another (closing the goal is not a change of goal)."""
    return bool(after.goal.strip()) and _norm(after.goal) != _norm(before.goal)


def new_facts(edge: EdgeUnit, before: ProofState, after: ProofState) -> tuple[str, ...]:
    """What this edge adds: its declared new conditions, else the hypotheses the after-state gained."""
    if edge.new_conditions:
        return tuple(c for c in edge.new_conditions if c.strip())
    known = {_norm(statement_of(h)) for h in before.hypotheses}
    return tuple(h for h in after.hypotheses if h.strip() and _norm(statement_of(h)) not in known)


_SAME_GOAL = frozenset({"same_goal", "existential_elimination", "universal_instantiation", "case_split",
                        "closes_goal", "goal_closed"})
"""Goal relations that keep the goal (a case split is typed before goal changes are looked at)."""
_NEW_GOAL = frozenset({"lemma_subgoal", "induction", "iff_split", "witness_instantiation", "goal_reduction",
                       "reduction", "new_goal", "goal_change"})
"""Goal relations that replace the goal."""


def infer_kind(edge: EdgeUnit, review: Review | None = None, *, before: ProofState | None = None,
               after: ProofState | None = None) -> ObligationKind:
    """The transition type of ``edge``: one of the six discovery types, first rule that fires.

    Whether the goal changed comes from ``goal_relation`` when it names a known relation, else
    from comparing the goals of ``before`` and ``after`` (when given). New conditions are the
    edge's declared ones, else the hypotheses the after-state gained. ``review`` only matters
    when nothing else fires: an arithmetic or algebra error type makes the unit a rewrite.
    """
    text = f"{edge.text}\n{edge.explanation}"
    if (edge.type in (TransitionType.CASE_SPLIT, TransitionType.CASE) or edge.pattern.startswith("case_split")
            or edge.goal_relation == "case_split" or _CASE.search(text)):
        return K.CASE_SPLIT
    if (edge.type in (TransitionType.WITNESS, TransitionType.DEFINITION) or edge.pattern == "existential_instantiation"
            or edge.goal_relation == "witness_instantiation" or _WITNESS.search(text)):
        return K.WITNESS
    if edge.goal_relation in _NEW_GOAL or edge.type in (TransitionType.GOAL_REDUCTION, TransitionType.LEMMA,
                                                         TransitionType.INDUCTION):
        changed = True
    elif edge.goal_relation in _SAME_GOAL:
        changed = False
    else:
        changed = before is not None and after is not None and goal_changed(before, after)
    added = bool(edge.new_conditions) or (before is not None and after is not None
                                          and bool(new_facts(edge, before, after)))
    if changed and added:
        return K.FACT_PLUS_REDUCTION
    if changed:
        return K.GOAL_REDUCTION
    if (edge.type == TransitionType.COMPUTATION or edge.transformed_conditions or _REWRITE.search(text)
            or (review is not None and _ARITH_ERROR.search(review.error_type))):
        return K.REWRITE
    return K.DERIVED_FACT


SAFE_SUSPICION = 0.3
"""A unit whose review says correct at or below this suspicion, and that neither the review nor the scan
marks for a formal check, gets no obligations (no ``obligations`` call)."""


def is_safe(review: Review | None, scan_suspicion: float | None) -> bool:
    """The review calls the unit correct with low suspicion, asks for no formal check, and the scan
    does not suspect it either (pure). A unit with no review is never safe."""
    return (review is not None and review.verdict == "correct" and review.suspicion <= SAFE_SUSPICION
            and not review.should_formalize and (scan_suspicion is None or scan_suspicion <= SAFE_SUSPICION))


@dataclass(frozen=True)
class Skeleton:
    """An obligation before its claim is worded."""

    kind: ObligationKind
    premises: tuple[str, ...]
    claim: str
    """Default claim (used as is when the model's answer is unusable)."""
    role: str
    """What the obligation checks, in words (shown to the model)."""
    depends_on: int | None = None
    """Index of the skeleton in the same bundle whose fact this one uses as a premise."""


def case_kind(edge: EdgeUnit) -> ObligationKind:
    """Which case-analysis obligation fits: elimination, partition, coverage or justification."""
    text = f"{edge.text}\n{edge.explanation}"
    if _ELIMINATE.search(text):
        return K.BRANCH_ELIMINATION
    if _PARTITION.search(text):
        return K.OVERLAP_PARTITION
    if (len(edge.children) > 1 or edge.type == TransitionType.CASE_SPLIT or edge.pattern.startswith("case_split")
            or edge.goal_relation == "case_split"):
        return K.CASE_SPLIT
    return K.JUSTIFICATION


def bundle(edge: EdgeUnit, before: ProofState, after: ProofState, kind: ObligationKind) -> list[Skeleton]:
    """The obligation skeletons of one edge of type ``kind``.

    Premises are the before-state's hypotheses minus anything this edge introduces.
    """
    facts = new_facts(edge, before, after)
    fresh = {_norm(statement_of(f)) for f in facts}
    context = tuple(h for h in before.hypotheses if h.strip() and _norm(statement_of(h)) not in fresh)
    text = edge.text.strip() or edge.explanation.strip()
    claims = [statement_of(f) for f in facts[:MAX_CLAIMS_PER_UNIT]] or [text]
    if kind in (K.DERIVED_FACT, K.REWRITE):
        role = ("the rewrite or computation is valid" if kind == K.REWRITE
                else "the new fact follows from the context")
        return [Skeleton(kind, context, c, role) for c in claims]
    if kind == K.GOAL_REDUCTION:
        return [Skeleton(kind, context, _reduction(before, after, text), "proving the new goal suffices for the old goal")]
    if kind == K.FACT_PLUS_REDUCTION:
        out = [Skeleton(K.DERIVED_FACT, context, c, "the new fact follows from the context (checked before it is used)")
               for c in claims]
        reduction = Skeleton(K.GOAL_REDUCTION, context + tuple(statement_of(f) for f in facts),
                             _reduction(before, after, text),
                             "with the new fact available, proving the new goal suffices for the old goal",
                             depends_on=0)
        return [*out, reduction]
    if kind == K.WITNESS:
        chosen = "; ".join(claims)
        return [Skeleton(kind, context, f"the object introduced here exists and satisfies what it is chosen for: {chosen}",
                         "the witness or newly named object is legitimate")]
    sub = case_kind(edge)
    roles = {K.BRANCH_ELIMINATION: "the discarded branch is impossible under its hypotheses",
             K.OVERLAP_PARTITION: "the cases are disjoint and together cover every possibility",
             K.CASE_SPLIT: "the cases cover every possibility allowed by the context",
             K.JUSTIFICATION: "the branch consequence follows from the branch hypothesis for the stated reason"}
    branch = f" (branch: {after.branch})" if after.branch else ""
    if sub in (K.JUSTIFICATION, K.BRANCH_ELIMINATION) and after.branch.strip():
        # inside one branch its hypothesis is an assumption, not a fact awaiting a check
        context = (*context, f"branch hypothesis: {after.branch.strip()}")
    return [Skeleton(sub, context, f"{text}{branch}", roles[sub])]


def _reduction(before: ProofState, after: ProofState, text: str) -> str:
    if before.goal.strip() and after.goal.strip():
        return f"if {after.goal.strip()} holds then {before.goal.strip()} holds"
    return text


# ---------------------------------------------------------------------------------------
# The model's instantiation


class ObligationText(BaseModel):
    """One worded obligation of the ``obligations`` answer."""

    slot: int = Field(ge=1, le=32)
    """Which skeleton (1-based, as listed in the prompt) this fills."""
    claim: str = Field(min_length=1, max_length=3000)
    equation: str | None = Field(default=None, max_length=500)
    """The claim as a bare formula when it is pure mathematics, else null."""
    use_formal: bool = True
    translation_confidence: float = Field(default=0.5, ge=0, le=1)
    priority: float = Field(default=0.5, ge=0, le=1)
    reason: str = Field(default="", max_length=2000)


class ObligationsAnswer(BaseModel):
    """The ``obligations`` answer."""

    obligations: list[ObligationText] = Field(max_length=32)


_DIFFICULTY = {"easy": 0.8, "medium": 0.5, "hard": 0.2}


class LLMTyper:
    """Typed obligations for the audit window (one ``obligations`` call per unit), at most
    ``max_obligations_per_proof`` of them."""

    name = "llm"

    def __init__(self, *, max_obligations_per_proof: int = MAX_OBLIGATIONS_PER_PROOF) -> None:
        self.max_obligations_per_proof = max_obligations_per_proof

    def obligations(self, ctx: RunContext, tree: StateTree, scan: ScanResult) -> list[NLObligation]:
        edges = {e.id: e for e in tree.edges}
        reviews = {r.edge: r for r in scan.reviews}
        suspicion = {c.edge: c.suspicion for c in scan.candidates}
        out: list[NLObligation] = []
        safe: list[str] = []
        for uid in scan.window:
            edge = edges.get(uid)
            if edge is None:
                ctx.note(f"typer: window unit {uid} is not an edge of the tree; skipped")
                continue
            if is_safe(reviews.get(uid), suspicion.get(uid)):
                safe.append(uid)
                continue
            if len(out) >= self.max_obligations_per_proof:
                ctx.note(f"typer: obligation cap {self.max_obligations_per_proof} reached; unit {uid} and later untyped")
                break
            made = self._unit(ctx, tree, edge, reviews.get(uid), suspicion.get(uid, 0.5))
            out.extend(made[: self.max_obligations_per_proof - len(out)])
        if safe:
            ctx.note(f"typer: {len(safe)} unit(s) the review and the scan found safe left untyped "
                     f"({', '.join(safe[:6])}{', ...' if len(safe) > 6 else ''})")
        return out

    def _unit(self, ctx: RunContext, tree: StateTree, edge: EdgeUnit, review: Review | None,
              prior: float) -> list[NLObligation]:
        before, after = _states(tree, edge)
        kind = infer_kind(edge, review, before=before, after=after)
        skeletons = bundle(edge, before, after, kind)
        if review is not None and review.verdict == "incorrect":
            skeletons.append(Skeleton(K.CONTESTED_CLAIM, skeletons[0].premises if skeletons else (),
                                      edge.text.strip(), f"the claim the reviewer flagged is true ({review.reason[:200]})"))
        risk = review.suspicion if review is not None else prior
        conf = _DIFFICULTY.get(review.translation_difficulty, 0.5) if review is not None else 0.5
        ids = [f"{edge.id}.o{i + 1}" for i in range(len(skeletons))]
        base = [NLObligation(id=ids[i], edge=edge.id, step=edge.step, span=edge.span, source=edge.text,
                             kind=s.kind, premises=s.premises, claim=s.claim, priority=round(risk, 4),
                             translation_confidence=conf,
                             use_formal=(review.should_formalize or review.verdict != "correct") if review else True,
                             reason=_reason(s, ids))
                for i, s in enumerate(skeletons)]
        if time.monotonic() > ctx.deadline:
            ctx.note(f"typer: time budget exhausted; unit {edge.id} keeps its default claims")
            return base
        answer = ctx.ask("obligations", _values(ctx, edge, before, after, kind, review, skeletons), ObligationsAnswer)
        if isinstance(answer, Unparsed):
            ctx.note(f"typer: obligations for {edge.id} unparsed ({answer.reason}); default claims kept "
                     "(the edge's declared facts or goals, else its text)")
            return base
        by_slot: dict[int, ObligationText] = {}
        for item in answer.value.obligations:
            by_slot.setdefault(item.slot, item)
        unfilled = [i + 1 for i in range(len(base)) if i + 1 not in by_slot]
        if unfilled:
            ctx.note(f"typer: {edge.id} answer left slot(s) {unfilled} unfilled; default claims used")
        out = []
        for i, ob in enumerate(base):
            filled = by_slot.get(i + 1)
            if filled is None:
                out.append(ob)
                continue
            equation = (filled.equation or "").strip() or None
            out.append(ob.model_copy(update={
                "claim": filled.claim.strip(), "equation": equation, "use_formal": filled.use_formal,
                "translation_confidence": filled.translation_confidence, "priority": filled.priority,
                "reason": "; ".join(p for p in (ob.reason, filled.reason.strip()) if p)[:2000]}))
        return out


def _states(tree: StateTree, edge: EdgeUnit) -> tuple[ProofState, ProofState]:
    def get(node: str) -> ProofState:
        try:
            return tree.state(node)
        except (KeyError, ValueError):
            return ProofState(id=node)
    return get(edge.parent), get(edge.child)


def _reason(s: Skeleton, ids: list[str]) -> str:
    if s.depends_on is None:
        return s.role
    return f"{s.role}; depends on {ids[s.depends_on]} (the new fact is used here only as checked there)"


def _bullets(items: tuple[str, ...] | list[str], empty: str = "(none)") -> str:
    return "\n".join(f"- {x[:600]}" for x in items[:40]) or empty


def _values(ctx: RunContext, edge: EdgeUnit, before: ProofState, after: ProofState, kind: ObligationKind,
            review: Review | None, skeletons: list[Skeleton]) -> dict[str, str]:
    unit = (f"id: {edge.id}\nsource step: {edge.step}\ntransition: {edge.type.value}"
            f"{' / ' + edge.pattern if edge.pattern else ''}\ngoal relation: {edge.goal_relation or 'unspecified'}\n"
            f"text: {edge.text[:3000]}"
            + (f"\nexplanation: {edge.explanation[:1000]}" if edge.explanation else "")
            + (f"\nnew conditions:\n{_bullets(edge.new_conditions)}" if edge.new_conditions else ""))
    state = "hypotheses:\n{h}\ngoal: {g}{b}"
    rv = ("(no local review)" if review is None else
          f"verdict: {review.verdict}\nsuspicion: {review.suspicion:.2f}\nerror type: {review.error_type or '-'}\n"
          f"reason: {review.reason[:1500] or '-'}")
    slots = "\n".join(
        f"{i + 1}. kind: {s.kind.value}\n   checks: {s.role}\n   may assume:\n"
        + "\n".join(f"     - {p[:400]}" for p in s.premises[:30]) + ("\n" if s.premises else "     (nothing beyond the problem)\n")
        + (f"   default claim: as slot {i}" if i and s.claim == skeletons[i - 1].claim
           else f"   default claim: {s.claim[:1500]}")
        for i, s in enumerate(skeletons))
    return {
        "problem": ctx.proof.problem[:6000],
        "unit": unit,
        "before": state.format(h=_bullets(before.hypotheses), g=before.goal or "(none)",
                               b=f"\nbranch: {before.branch}" if before.branch else ""),
        "after": ("(unchanged)" if (after.hypotheses, after.goal, after.branch) == (before.hypotheses, before.goal,
                                                                                    before.branch)
                  else state.format(h=_bullets(after.hypotheses), g=after.goal or "(closed)",
                                    b=f"\nbranch: {after.branch}" if after.branch else "")),
        "kind": kind.value,
        "review": rv,
        "slots": slots,
    }


__all__ = ["SAFE_SUSPICION", "is_safe", "LLMTyper", "ObligationText", "ObligationsAnswer", "Skeleton", "bundle", "case_kind", "goal_changed",
           "infer_kind", "new_facts", "statement_of"]
