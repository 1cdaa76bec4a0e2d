"""Tree-suspicion scan, audit window and local review.

``LLMScanner`` makes one ``scan`` call over every EdgeUnit, picks the audit window with the pure
``audit_window`` function, then reviews each unit in the window: one ``review`` call per unit, except that
consecutive units of one original step share one ``review_units`` call that answers for each of them
separately (the step, the problem and the instructions are read once, not once per unit). When the whole tree
fits the review cap (``max_audit_units``) every unit is reviewed and no scan call is made: the local
reviews are the evidence, and a whole-proof scan would only add a weak prior at the price of a call.

Audit window (``audit_window``). The focus is the earliest EdgeUnit, in tree order (the order
of ``StateTree.edges``), whose suspicion is strictly above the threshold (0.6): an earlier
moderately suspicious unit wins over a later, more suspicious one, because the target is the
first error. The window is the ``prefix`` (6) units immediately before the focus, plus the
focus; no preference among predecessors by transition type. When ``cap`` is smaller than
that, the units nearest the focus are kept. When no unit passes the threshold the window is
the ``min(3, cap)`` most suspicious units (ties: earlier first), listed in tree order, with no
focus: the local reviewer still looks at the likeliest spots instead of nothing.

Degraded paths. An unusable scan answer leaves every unit without a candidate and the window
is the first ``min(prefix + 1, cap)`` units. Candidates naming unknown units, or with a
suspicion outside [0, 1] (or not finite), are dropped with a note. An unusable review becomes
``Review(verdict="uncertain", reason="unparsed: ...")``.

``AllEdgesScanner`` makes no call: every unit is in the window and nothing is reviewed (the
offline and ablation paths).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict

from faithsieve.core.proof import Step
from faithsieve.llm.structured import Unparsed
from faithsieve.stages.base import Review, RunContext, ScanResult
from faithsieve.stages.llm_decompose import answer_tokens, verbatim_partition
from faithsieve.stages.tree_build import GOAL_RELATIONS, Text, as_list
from faithsieve.statetree.models import EdgeUnit, ProofState, StateTree
from faithsieve.verdict import ScanCandidate

NO_FOCUS_WINDOW = 3
"""Units reviewed when none passes the threshold (before the cap)."""
UNIT_TEXT_CHARS = 600
"""Unit text shown to the scan, at most."""
SCAN_CONDITIONS = 6
"""Most recent parent conditions shown per unit in the scan."""
REVIEW_CONDITIONS = 30
"""Most recent conditions shown per state in a review."""
MAX_UNITS_PER_REVIEW = 4
"""Most units of one step reviewed in one call (more become further calls)."""
PACK_STEPS = True
"""Whole consecutive steps share a review call (``review_groups``); the default of ``LLMScanner(pack_steps=)``."""
REVIEW_ALL_CALLS = 8
"""Review calls up to which every unit is reviewed without a scan (the default of
``LLMScanner(review_all_calls=)``): one scan call reads the whole tree and costs about as much as four or five
step reviews, and its window still takes three or four of them, so below about eight calls reviewing everything
is the cheaper way to the same local evidence."""

# ---------------------------------------------------------------------------------------
# The pure window function


def audit_window(edges_in_order: Sequence[str], suspicion_by_edge: Mapping[str, float], threshold: float,
                 prefix: int, cap: int, step_of: Mapping[str, int] | None = None) -> tuple[str | None, tuple[str, ...]]:
    """``(focus, window)``: the earliest edge with suspicion above ``threshold`` and the window
    of up to ``prefix`` edges before it plus itself (at most ``cap``, nearest kept), then the later
    sub-steps of the focus's own step (``step_of``), while the cap allows; with no such edge,
    ``(None, top-min(3, cap) edges by suspicion)``. Edges missing from ``suspicion_by_edge`` count
    as 0. The window is in tree order."""
    cap = max(1, cap)
    order = list(edges_in_order)
    for i, e in enumerate(order):
        if suspicion_by_edge.get(e, 0.0) > threshold:
            lo = max(0, i - max(0, prefix), i + 1 - cap)
            hi = i + 1
            while (step_of is not None and hi < len(order) and hi - lo < cap
                   and step_of.get(order[hi], -1) == step_of.get(e, -2)):
                hi += 1
            return e, tuple(order[lo:hi])
    ranked = sorted(range(len(order)), key=lambda i: (-suspicion_by_edge.get(order[i], 0.0), i))
    chosen = sorted(ranked[: min(NO_FOCUS_WINDOW, cap)])
    return None, tuple(order[i] for i in chosen)


# ---------------------------------------------------------------------------------------
# Answer models


def _to_bool(v: Any) -> Any:
    if isinstance(v, str) and v.strip().lower() in ("yes", "no", "true", "false"):
        return v.strip().lower() in ("yes", "true")
    return v


Flag = Annotated[bool, BeforeValidator(_to_bool)]


class CandidateOut(BaseModel):
    """The scan's judgment of one unit."""

    model_config = ConfigDict(extra="ignore")

    unit_id: Text
    suspicion: float
    likely_wrong: Flag = False
    should_formalize: Flag = False
    error_type_prior: Annotated[list[Text], BeforeValidator(as_list)] = []
    reason: Text = ""


class ScanAnswer(BaseModel):
    """The answer of the ``scan`` prompt."""

    model_config = ConfigDict(extra="ignore")

    overall_verdict: Text = "uncertain"
    candidates: list[CandidateOut]


class ReviewOut(BaseModel):
    """The answer of the ``review`` prompt."""

    model_config = ConfigDict(extra="ignore")

    verdict: Text
    suspicion: float = 0.5
    error_type: Annotated[str, BeforeValidator(lambda v: ", ".join(map(str, v)) if isinstance(v, list) else v)] = ""
    should_formalize: Flag = False
    translation_difficulty: Text = "medium"
    reason: Text = ""


class UnitReviewOut(ReviewOut):
    """One unit's review inside a ``review_units`` answer."""

    unit_id: Text


class UnitReviewsAnswer(BaseModel):
    """The answer of the ``review_units`` prompt: one review per unit shown."""

    model_config = ConfigDict(extra="ignore")

    reviews: Annotated[list[UnitReviewOut], BeforeValidator(as_list)]


_OVERALL = {"likely_correct", "likely_incorrect", "uncertain"}
_VERDICTS = {"correct": "correct", "valid": "correct", "ok": "correct", "sound": "correct",
             "incorrect": "incorrect", "wrong": "incorrect", "invalid": "incorrect", "error": "incorrect",
             "unsound": "incorrect", "uncertain": "uncertain", "unsure": "uncertain", "unknown": "uncertain"}


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def resolve_unit(raw: str, ids: Mapping[str, int]) -> str | None:
    """The edge id a model's ``unit_id`` names: exact, or ``edge_3`` / ``E3`` / ``edge 3`` / ``3`` for ``e3``."""
    key = raw.strip()
    if key in ids:
        return key
    m = re.fullmatch(r"(?i)(?:e|edge|unit)?[ _\-#]*(\d+)", key)
    return f"e{int(m.group(1))}" if m and f"e{int(m.group(1))}" in ids else None


# ---------------------------------------------------------------------------------------
# Rendering


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _state(tree: StateTree, node: str) -> ProofState:
    try:
        return tree.state(node)
    except (KeyError, ValueError):
        return ProofState(id=node)


def _kind(e: EdgeUnit) -> str:
    return f"pattern: {e.pattern}" if e.pattern else f"type: {e.type.value}"


def _scan_before(tree: StateTree, e: EdgeUnit) -> str:
    before = _state(tree, e.parent)
    conds = "; ".join(_clip(h, 160) for h in before.hypotheses[-SCAN_CONDITIONS:]) or "(none listed)"
    branch = f"  branch: {_clip(before.branch, 160)}\n" if before.branch else ""
    return f"{branch}  before: goal: {_clip(before.goal, 240) or '(none)'} | conditions: {conds}"


def render_unit(tree: StateTree, e: EdgeUnit, previous: EdgeUnit | None = None) -> str:
    """One EdgeUnit summary for the scan. The plain pattern and default goal relation are not written, and
    the state before is left out when it is the one shown for ``previous`` (the unit listed just before)."""
    sub = f", sub-step {e.substep}" if e.substep else ""
    kind = "" if e.pattern in ("", "simple_implication") else f" | {_kind(e)}"
    if e.goal_relation and e.goal_relation not in ("same_goal", GOAL_RELATIONS.get(e.pattern, "")):
        kind += f" | goal relation: {e.goal_relation}"
    lines = [f"[{e.id}] step {e.step}{sub}{kind}"]
    before = _scan_before(tree, e)
    if previous is None or before != _scan_before(tree, previous):
        lines.append(before)
    if e.new_conditions:
        lines.append(f"  adds: {'; '.join(_clip(c, 200) for c in e.new_conditions)}")
    if len(e.children) > 1:
        branches = [_state(tree, c).branch for c in e.children]
        lines.append(f"  opens {len(e.children)} branches: {' | '.join(_clip(b, 120) or '?' for b in branches)}")
    lines.append(f"  text: {_clip(e.text, UNIT_TEXT_CHARS)}")
    return "\n".join(lines)


def units_are_the_proof(steps: Sequence[Step], edges: Sequence[EdgeUnit]) -> bool:
    """Whether the units' texts, in order, are every step cut into consecutive pieces and none is clipped
    for the scan (pure): the proof then need not be sent beside them."""
    if any(len(" ".join(e.text.split())) > UNIT_TEXT_CHARS for e in edges):
        return False
    by_step: dict[int, list[str]] = {}
    for e in edges:
        by_step.setdefault(e.step, []).append(e.text)
    return (list(by_step) == [s.index for s in steps]
            and all(verbatim_partition(s.text.strip(), by_step[s.index]) for s in steps))


def render_state(state: ProofState) -> str:
    hyps = state.hypotheses[-REVIEW_CONDITIONS:]
    out = [f"Goal: {_clip(state.goal, 600) or '(none)'}"]
    if state.branch:
        out.append(f"Branch: {_clip(state.branch, 300)}")
    if len(state.hypotheses) > len(hyps):
        out.append(f"({len(state.hypotheses) - len(hyps)} earlier conditions not shown)")
    if not hyps:
        out[0] += " (no conditions listed)"
    out += [f"- {_clip(h, 400)}" for h in hyps]
    return "\n".join(out)


def review_state(tree: StateTree, node: str) -> str:
    """The state a review is shown, or "" when it says nothing the problem does not: no condition, no
    branch, and the goal the tree starts from (the claim of the problem)."""
    state = _state(tree, node)
    root = _state(tree, tree.root)
    if not state.hypotheses and not state.branch and state.goal.strip() == root.goal.strip():
        return ""
    return render_state(state)


def render_review_unit(e: EdgeUnit) -> str:
    sub = f", sub-step {e.substep}" if e.substep else ""
    kind = "" if e.pattern in ("", "simple_implication") else f", {_kind(e)}"
    if e.goal_relation and e.goal_relation not in ("same_goal", GOAL_RELATIONS.get(e.pattern, "")):
        kind += f", goal relation: {e.goal_relation}"
    lines = [f"Unit {e.id} (step {e.step}{sub}{kind})", f"Text: {e.text}"]
    for label, items in (("New conditions", e.new_conditions), ("Consumed conditions", e.consumed_conditions),
                         ("Transformed conditions", e.transformed_conditions)):
        if items:
            lines.append(f"{label}: {'; '.join(items)}")
    if e.explanation:
        lines.append(f"Explanation given when the tree was built: {e.explanation}")
    return "\n".join(lines)


def render_review(step: str, unit: str, before: str, after: str, prior: str) -> str:
    """The variable part of a review prompt, after the problem: the move's step when the move is only part of
    it, the move, the state before, the states after when they differ, and the scan's hint when there is one."""
    parts = [f"The step it is part of: {step}"] if step else []
    parts += [unit, f"Before the move:\n{before}"] if before else [unit]
    if after:
        parts.append(f"After the move:\n{after}")
    if prior:
        parts.append(f"A quick first scan said (a hint only): {prior}")
    return "\n\n".join(parts)


def render_prior(c: ScanCandidate | None) -> str:
    if c is None:
        return "no judgment for this unit."
    types = ", ".join(c.error_type_prior) or "none"
    return (f"suspicion {c.suspicion:.2f}; likely wrong: {'yes' if c.likely_wrong else 'no'}; "
            f"suspected error types: {types}; reason: {c.reason or '(none)'}")


# ---------------------------------------------------------------------------------------
# Stages


def review_groups(tree: StateTree, window: Sequence[str], pack_steps: bool = PACK_STEPS) -> list[list[EdgeUnit]]:
    """The window's units as review calls (pure): consecutive units of one original step, at most
    ``MAX_UNITS_PER_REVIEW`` together, share one call; with ``pack_steps``, consecutive steps whose units are
    all in the window also share one, while the call stays within ``MAX_UNITS_PER_REVIEW`` units (a step is
    never split to fill a call). A model judges each unit apart, so packing changes what one call reads,
    never which unit an answer is about."""
    by_id = {e.id: e for e in tree.edges}
    chunks: list[list[EdgeUnit]] = []
    for eid in window:
        e = by_id[eid]
        if chunks and chunks[-1][-1].step == e.step and len(chunks[-1]) < MAX_UNITS_PER_REVIEW:
            chunks[-1].append(e)
        else:
            chunks.append([e])
    if not pack_steps:
        return chunks
    size = {k: sum(1 for e in tree.edges if e.step == k) for k in {e.step for e in tree.edges}}
    groups: list[list[EdgeUnit]] = []
    for c in chunks:
        whole = len(c) == size[c[0].step]
        if (groups and whole and len(groups[-1]) + len(c) <= MAX_UNITS_PER_REVIEW
                and len(groups[-1]) == sum(size[k] for k in {e.step for e in groups[-1]})):
            groups[-1].extend(c)
        else:
            groups.append(list(c))
    return groups


class AllEdgesScanner:
    """Every EdgeUnit is scheduled, nothing is reviewed, no model call."""

    name = "all"

    def scan(self, ctx: RunContext, tree: StateTree) -> ScanResult:
        return ScanResult(window=tuple(e.id for e in tree.edges))


class LLMScanner:
    """One suspicion scan over the tree, the audit window, one local review per scheduled unit.

    ``pack_steps``: whole consecutive steps share a review call (``review_groups``); ``review_all_calls``: the
    review calls up to which a tree is reviewed whole with no scan call (0: only a tree within the settings'
    ``max_audit_units``). The defaults are what every mode runs; a test that scripts one answer per unit or per
    step review builds ``LLMScanner(pack_steps=False, review_all_calls=0)``."""

    name = "llm"

    def __init__(self, *, pack_steps: bool = PACK_STEPS, review_all_calls: int = REVIEW_ALL_CALLS) -> None:
        self.pack_steps = pack_steps
        self.review_all_calls = review_all_calls

    def scan(self, ctx: RunContext, tree: StateTree) -> ScanResult:
        if not tree.edges:
            return ScanResult()
        s = ctx.settings
        order = [e.id for e in tree.edges]
        calls = len(review_groups(tree, order, self.pack_steps))
        if len(order) <= s.max_audit_units or calls <= self.review_all_calls:
            # the whole tree fits, in units or in review calls: every unit is reviewed, no scan call
            ctx.note(f"scan: skipped; all {len(order)} units are reviewed in {calls} calls "
                     f"(review cap {s.max_audit_units} units or {self.review_all_calls} calls)")
            return ScanResult(window=tuple(order), reviews=self.reviews(ctx, tree, order, {}))
        candidates, overall = self.suspicions(ctx, tree)
        suspicion = {c.edge: c.suspicion for c in candidates}
        if overall is None:
            focus, window = None, tuple(order[: min(s.audit_prefix + 1, s.max_audit_units)])
        else:
            focus, window = audit_window(order, suspicion, s.scan_threshold, s.audit_prefix, s.max_audit_units,
                                         {e.id: e.step for e in tree.edges})
        reviews = self.reviews(ctx, tree, window, {c.edge: c for c in candidates})
        return ScanResult(candidates=tuple(candidates), overall=overall, window=window, focus=focus, reviews=reviews)

    def suspicions(self, ctx: RunContext, tree: StateTree) -> tuple[list[ScanCandidate], str | None]:
        """Candidates in edge order and the overall verdict (``None``: the answer could not be used)."""
        units = "\n".join(render_unit(tree, e, tree.edges[i - 1] if i else None) for i, e in enumerate(tree.edges))
        proof = ("(the units' texts below are the proof's steps, cut in order, word for word)"
                 if units_are_the_proof(ctx.proof.steps, tree.edges)
                 else "\n".join(f"Step {s.index}: {s.text.strip()}" for s in ctx.proof.steps))
        res = ctx.ask("scan", {"problem": ctx.proof.problem.strip(), "proof": proof, "units": units}, ScanAnswer,
                      max_tokens=answer_tokens(ctx, 90 * len(tree.edges) + 256))
        if isinstance(res, Unparsed):
            ctx.note(f"scan: answer unusable ({res.reason}); reviewing the first units")
            return [], None
        ids = {e.id: i for i, e in enumerate(tree.edges)}
        found: dict[str, ScanCandidate] = {}
        unknown, out_of_range = [], []
        for c in res.value.candidates:
            eid = resolve_unit(c.unit_id, ids)
            if eid is None:
                unknown.append(c.unit_id.strip() or "?")
                continue
            if not (math.isfinite(c.suspicion) and 0.0 <= c.suspicion <= 1.0):
                out_of_range.append(f"{eid}={c.suspicion}")
                continue
            cand = ScanCandidate(edge=eid, suspicion=c.suspicion, likely_wrong=c.likely_wrong,
                                 should_formalize=c.should_formalize,
                                 error_type_prior=tuple(_clip(t, 40) for t in c.error_type_prior if t.strip())[:5],
                                 reason=_clip(c.reason, 500))
            if eid not in found or cand.suspicion > found[eid].suspicion:
                found[eid] = cand
        if unknown:
            ctx.note(f"scan: candidates for unknown units ignored ({', '.join(unknown[:5])})")
        if out_of_range:
            ctx.note(f"scan: suspicion outside [0, 1] rejected ({', '.join(out_of_range[:5])})")
        overall = _key(res.value.overall_verdict)
        if overall not in _OVERALL:
            ctx.note(f"scan: overall verdict {res.value.overall_verdict[:40]!r} read as uncertain")
            overall = "uncertain"
        return sorted(found.values(), key=lambda c: ids[c.edge]), overall

    def reviews(self, ctx: RunContext, tree: StateTree, window: Sequence[str],
                prior: Mapping[str, ScanCandidate]) -> tuple[Review, ...]:
        """The local reviews of the window's units, in window order, grouped by ``review_groups``: a group of
        one unit is one ``review`` call, a larger group one ``review_units`` call (each unit with its own
        answer), which reads the problem and the state once instead of once per unit."""
        out: list[Review] = []
        for group in review_groups(tree, window, self.pack_steps):
            if len(group) == 1:
                out.append(self.review(ctx, tree, group[0], prior.get(group[0].id)))
            else:
                out.extend(self.review_units(ctx, tree, group, prior))
        return tuple(out)

    def review_units(self, ctx: RunContext, tree: StateTree, units: Sequence[EdgeUnit],
                     prior: Mapping[str, ScanCandidate]) -> list[Review]:
        """The reviews of several consecutive units (of one step, or of whole consecutive steps) from one call;
        a unit the answer does not review (or an answer that cannot be used) is ``uncertain`` with a note."""
        before = review_state(tree, units[0].parent)
        blocks = []
        for e in units:
            states = [render_state(_state(tree, c)) for c in (e.children or (e.child,))]
            parent = render_state(_state(tree, e.parent))
            after = ("" if len(states) == 1 and states[0] == parent
                     else "\n".join(f"Child state {c}: {st}" for c, st in zip(e.children or (e.child,), states, strict=True)))
            hint = prior.get(e.id)
            blocks.append("\n".join(x for x in (render_review_unit(e), f"After it: {after}" if after else "",
                                                  f"Scan hint: {render_prior(hint)}" if hint else "") if x))
        # a step the moves cut whole need not be repeated; one they are only part of is shown
        texts = {s.index: s.text.strip() for s in ctx.proof.steps}
        partial = [k for k in dict.fromkeys(e.step for e in units)
                   if not verbatim_partition(texts.get(k, ""), [e.text for e in units if e.step == k])]
        values = {"problem": ctx.proof.problem.strip(),
                  "units": "".join(f"The step {k} they are part of: {texts.get(k, '')}\n\n" for k in partial)
                  + (f"State before the first move:\n{before}\n\n" if before else "") + "\n\n".join(blocks)}
        res = ctx.ask("review_units", values, UnitReviewsAnswer,
                      max_tokens=answer_tokens(ctx, 120 * len(units) + 128))
        if isinstance(res, Unparsed):
            ctx.note(f"review {', '.join(e.id for e in units)}: answer unusable ({res.reason})")
            return [Review(edge=e.id, verdict="uncertain", reason=f"unparsed: {res.reason}"[:500]) for e in units]
        ids = {e.id: i for i, e in enumerate(units)}
        got: dict[str, UnitReviewOut] = {}
        for r in res.value.reviews:
            eid = resolve_unit(r.unit_id, ids)
            if eid is not None:
                got.setdefault(eid, r)
        missing = [e.id for e in units if e.id not in got]
        if missing:
            ctx.note(f"review {', '.join(missing)}: not in the answer of the step's review")
        return [self._read(ctx, e, got[e.id], 0) if e.id in got
                else Review(edge=e.id, verdict="uncertain", reason="unparsed: not in the step's review") for e in units]

    def review(self, ctx: RunContext, tree: StateTree, e: EdgeUnit, prior: ScanCandidate | None,
               sample: int = 0) -> Review:
        """The local review of one unit (``uncertain`` with a note when the answer cannot be used);
        ``sample > 0``: an independent re-sample of it."""
        step = next((s.text.strip() for s in ctx.proof.steps if s.index == e.step), "")
        before = review_state(tree, e.parent)
        states = [render_state(_state(tree, c)) for c in (e.children or (e.child,))]
        after = ("" if len(states) == 1 and states[0] == render_state(_state(tree, e.parent))
                 else "\n\n".join(f"Child state {c}:\n{st}" for c, st in zip(e.children or (e.child,), states, strict=True)))
        same = " ".join(step.split()) == " ".join(e.text.split())
        values = {"problem": ctx.proof.problem.strip(),
                  "unit": render_review("" if same else step, render_review_unit(e), before, after,
                                        render_prior(prior) if prior is not None else "")}
        res = ctx.ask("review", values, ReviewOut, sample=sample)
        if isinstance(res, Unparsed):
            ctx.note(f"review {e.id}: answer unusable ({res.reason})")
            return Review(edge=e.id, verdict="uncertain", reason=f"unparsed: {res.reason}"[:500], sample=sample)
        return self._read(ctx, e, res.value, sample)

    def _read(self, ctx: RunContext, e: EdgeUnit, r: ReviewOut, sample: int) -> Review:
        """One review answer as a ``Review`` (an unknown verdict is uncertain, a suspicion outside [0, 1] is 0.5)."""
        verdict = _VERDICTS.get(_key(r.verdict))
        if verdict is None:
            ctx.note(f"review {e.id}: verdict {r.verdict[:40]!r} read as uncertain")
            verdict = "uncertain"
        suspicion = r.suspicion
        if not (math.isfinite(suspicion) and 0.0 <= suspicion <= 1.0):
            ctx.note(f"review {e.id}: suspicion {suspicion} outside [0, 1] replaced by 0.5")
            suspicion = 0.5
        difficulty = _key(r.translation_difficulty)
        return Review(edge=e.id, verdict=verdict, suspicion=suspicion, error_type=_clip(r.error_type, 80),
                      should_formalize=r.should_formalize,
                      translation_difficulty=difficulty if difficulty in ("easy", "medium", "hard") else "medium",
                      reason=_clip(r.reason, 1000), sample=sample)
