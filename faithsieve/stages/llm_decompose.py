"""The language-model decomposer: faithful sub-steps, a repair-prevention check, a proof-state tree.

``LLMDecomposer`` makes one call per proof when the answer is good, more only to recover:

1. ``decompose_tree``: one answer that splits each original step into fine-grained sub-steps, each
   pointing back to its step, and records each sub-step as a move between proof states (the two
   jobs read the same text, so one call does both). Sub-steps that cannot be read, break the
   pointers (out of range, going backwards, a step with content left uncovered) or are oversized
   are dropped with a note: the original steps are then used whole, one sub-step each.
2. Repair prevention, ``screen_repair`` (deterministic) plus the ``repair_check`` call: a split
   step whose sub-steps change a number or a relation symbol, lose a decisive word, or that the
   model flags (strengthening, weakening, dropped decisive word, changed constant, missing branch
   scope, action-result split) is kept whole as a single sub-step. Only that step loses its split.
   When the check cannot be read the deterministic screen alone decides (with a note). A step cut
   into consecutive verbatim pieces (``verbatim_partition``) is not sent to the model check: its
   pieces say word for word what the step says, so none of the textual issues can arise, and the
   contextual ones (scope, an action cut from its result) stay visible to every later review, which
   is shown the whole original step.
3. The tree: the moves of the ``decompose_tree`` answer are turned into a ``StateTree`` by
   ``tree_build.build_tree``. When repair prevention changed the sub-steps, or the moves are
   unusable, one ``state_tree`` call builds it over the final sub-steps; when that answer is
   unusable too, a linear tree over the sub-steps is used.

``CoarseDecomposer`` is the "without local EdgeUnits" ablation: one edge per original step,
linear, no model call. A stage never raises for a bad answer; it notes it and degrades.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, model_validator

from faithsieve.llm.structured import Unparsed
from faithsieve.mathtext.lexer import SUPERSCRIPTS
from faithsieve.mathtext.literals import GROUPED_INTEGERS, scan_numbers
from faithsieve.mathtext.textnorm import clean_text, squeeze_spaces
from faithsieve.stages.base import Decomposition, RunContext
from faithsieve.stages.tree_build import (
    MoveOut,
    StateOut,
    SubStep,
    Text,
    TreeAnswer,
    TreeBuildError,
    as_list,
    build_tree,
    find_span,
    linear_tree,
)
from faithsieve.stages.verbatim import unwritten_formulas
from faithsieve.statetree.models import StateTree

MAX_SUBSTEPS = 400
"""Most sub-steps accepted for one proof."""
MAX_SUBSTEP_CHARS = 4000
"""A sub-step may be this long, or twice its original step if that is longer."""
MAX_SCOPE_CHARS = 200
"""Scope labels are clipped to this many characters."""

# ---------------------------------------------------------------------------------------
# Answer models


class _StepFromId(BaseModel):
    """An answer row that names its step, or only an id ``"3.2"`` whose leading number is the step."""

    model_config = ConfigDict(extra="ignore")

    @model_validator(mode="before")
    @classmethod
    def _step_from_id(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("step") is None:
            m = re.match(r"\s*(\d+)\.", str(data.get("id", "")))
            if m:
                return {**data, "step": int(m.group(1))}
        return data


class SubStepOut(_StepFromId):
    """One sub-step with its text, before validation (made by ``cut_substeps`` from the model's cuts)."""

    model_config = ConfigDict(extra="ignore")

    id: Text = ""
    step: int
    text: Text
    scope: Text = ""


class CutOut(_StepFromId):
    """Where one sub-step begins, as the ``decompose_tree`` answer gives it: the first words of the piece,
    copied from its step (the first piece of a step begins at the step's start whatever it quotes)."""

    model_config = ConfigDict(extra="ignore")

    id: Text = ""
    step: int
    start: Text = ""
    scope: Text = ""


def _flatten_groups(data: Any) -> Any:
    """Cuts grouped per original step (``{"steps": [{"step": 1, "substeps": [...]}]}``) as one flat
    ``substeps`` list (a bare string is a piece's start); any other shape is returned unchanged."""
    if not (isinstance(data, dict) and "substeps" not in data and isinstance(data.get("steps"), list)):
        return data
    flat: list[Any] = []
    for block in data["steps"]:
        if not isinstance(block, dict) or not isinstance(block.get("substeps"), list):
            return data
        for s in block["substeps"]:
            flat.append({"step": block.get("step"), "start": s} if isinstance(s, str)
                        else {"step": block.get("step"), **s} if isinstance(s, dict) else s)
    return {**{k: v for k, v in data.items() if k != "steps"}, "substeps": flat}


class DecomposeTreeAnswer(BaseModel):
    """The answer of the ``decompose_tree`` prompt: where each sub-step begins, the states that say something
    new, and the moves that do more than derive one fact from the previous state (an unlisted sub-step is
    such a plain derivation)."""

    model_config = ConfigDict(extra="ignore")

    substeps: list[CutOut]
    states: list[StateOut] = []
    edges: list[MoveOut] = []

    @model_validator(mode="before")
    @classmethod
    def _flatten(cls, data: Any) -> Any:
        return _flatten_groups(data)

    def tree(self, ids: Mapping[str, str]) -> TreeAnswer:
        """The moves as a ``state_tree`` answer over the canonical sub-step ids (``ids``: the model's id of
        each sub-step to its canonical one; a move naming another id keeps it, and ``build_tree`` drops it)."""
        return TreeAnswer(states=self.states, edges=[m.edge(ids.get(m.substep.strip(), m.substep)) for m in self.edges])


# ---------------------------------------------------------------------------------------
# Cutting a step where the model says its pieces begin

_MATH_OPEN = re.compile(r"\\\(|\\\[|\$\$?")
_OPERATOR_CHARS = frozenset("=<>+-*/^≤≥≠≈≡·×÷∣|")


def _without_ellipsis(quote: str) -> str:
    """A quote less a trailing ``...`` or ``…`` (the model marks where its quotation stops); string methods,
    since a pattern ``\\s*(...)\\s*$`` would rescan every run of spaces from each of its positions."""
    body = quote.rstrip()
    for tail in ("...", "…"):
        if body.endswith(tail):
            return body[: -len(tail)].rstrip()
    return body


def _math_mask(text: str) -> list[bool]:
    """For each character: it lies inside a ``$...$``, ``$$...$$``, ``\\(...\\)`` or ``\\[...\\]`` formula."""
    inside = [False] * len(text)
    i = 0
    while True:
        m = _MATH_OPEN.search(text, i)
        if m is None:
            return inside
        closer = {"\\(": "\\)", "\\[": "\\]"}.get(m.group(), m.group())
        end = text.find(closer, m.end())
        stop = len(text) if end < 0 else end + len(closer)
        for k in range(m.end(), stop):
            inside[k] = True
        i = stop


def cut_step(text: str, starts: Sequence[str]) -> tuple[list[str], list[int]]:
    """``text`` cut where each of ``starts`` (the second and later pieces' first words, in order) begins,
    and the positions in ``starts`` of those that could not be used. Pure. A start is looked for after the previous cut, with
    white space runs equal and a trailing ``...`` ignored; it is used only where a word begins (after white
    space), outside any delimited formula, and not next to an operator or relation sign, so a cut never
    splits a formula (``1024 + 100 | = 1124``). The pieces together are the text."""
    norm, index = squeeze_spaces(text)
    mask = _math_mask(text)
    cuts: list[int] = [0]
    lost: list[int] = []
    pos = 1
    for n, raw in enumerate(starts):
        quote = " ".join(_without_ellipsis(clean_text(raw)).split())
        at = -1
        k = norm.find(quote, pos) if quote else -1
        while k >= 0:
            orig = index[k]
            before = text[:orig].rstrip()
            if (norm[k - 1] == " " and not mask[orig] and quote[0] not in _OPERATOR_CHARS
                    and (not before or before[-1] not in _OPERATOR_CHARS)):
                at = orig
                break
            k = norm.find(quote, k + 1)
        if at < 0:
            lost.append(n)
            continue
        cuts.append(at)
        pos = k + len(quote)
    bounds = [*cuts, len(text)]
    return [text[bounds[i]:bounds[i + 1]].strip() for i in range(len(cuts))], lost


def cut_substeps(cuts: Sequence[CutOut], steps: Mapping[int, str]) -> tuple[list[SubStepOut], dict[str, str], list[str]] | str:
    """The sub-steps the cuts make (in proof order, each with the scope of the cut that begins it), the
    model's id of each kept cut to the canonical id it gets, and notes on starts that were not found;
    or why the cuts cannot be used (a pointer out of range or going backwards). A step with content that
    no cut names stays whole. Pure."""
    groups: dict[int, list[CutOut]] = {}
    prev = min(steps, default=1)
    for c in cuts:
        if c.step not in steps:
            return f"sub-step points to step {c.step}, outside 1..{len(steps)}"
        if c.step < prev:
            return f"sub-step points to step {c.step} after step {prev}"
        prev = c.step
        groups.setdefault(c.step, []).append(c)
    out: list[SubStepOut] = []
    ids: dict[str, str] = {}
    notes: list[str] = []
    for k, text in steps.items():
        if not text.strip():
            continue
        group = groups.get(k) or [CutOut(step=k)]
        cleaned = clean_text(text)
        pieces, lost = cut_step(cleaned, [c.start for c in group[1:]])
        kept = [group[0], *(c for n, c in enumerate(group[1:]) if n not in lost)]
        if lost:
            notes.append(f"decompose: start(s) {', '.join(repr(group[n + 1].start[:40]) for n in lost[:3])} not found "
                         f"where step {k} may be cut; those pieces stay with the piece before")
        for i, (piece, cut) in enumerate(zip(pieces, kept, strict=True), 1):
            out.append(SubStepOut(id=f"{k}.{i}", step=k, text=piece, scope=cut.scope))
            if cut.id.strip():
                ids[cut.id.strip()] = f"{k}.{i}"
    return out, ids, notes


class RepairFlag(BaseModel):
    """A sub-step (or a whole step) the repair check found unfaithful."""

    model_config = ConfigDict(extra="ignore")

    id: Text
    issues: Annotated[list[Text], BeforeValidator(as_list)] = []
    reason: Text = ""


class RepairAnswer(BaseModel):
    """The answer of the ``repair_check`` prompt (an empty list: every split is faithful)."""

    model_config = ConfigDict(extra="ignore")

    flags: Annotated[list[RepairFlag], BeforeValidator(as_list)]


REPAIR_ISSUES = ("strengthening", "weakening", "dropped_decisive_word", "changed_constant",
                 "missing_branch_scope", "action_result_split")
_ISSUE_STEMS = (("strength", "strengthening"), ("weak", "weakening"), ("decisive", "dropped_decisive_word"),
                ("dropped", "dropped_decisive_word"), ("constant", "changed_constant"), ("number", "changed_constant"),
                ("scope", "missing_branch_scope"), ("branch", "missing_branch_scope"), ("action", "action_result_split"))
_NO_ISSUE = {"", "none", "no", "no_issue", "no_issues", "ok", "faithful", "n_a", "na", "null"}


def issue_label(raw: str) -> str | None:
    """The canonical repair issue for ``raw``; ``None`` for "no issue"; other labels are kept as ``other:``."""
    key = re.sub(r"[^a-z]+", "_", raw.lower()).strip("_")
    if key in _NO_ISSUE:
        return None
    for stem, label in _ISSUE_STEMS:
        if stem in key:
            return label
    return f"other: {key[:40]}"


# ---------------------------------------------------------------------------------------
# Deterministic repair screen

_RELATION = re.compile(
    r"\\(?:leqslant|geqslant|leq|geq|le|ge|neq|ne|lt|gt|equiv|approx|iff|implies|rightarrow|leftrightarrow|"
    r"notin|in|subseteq|subset|nmid|mid)(?![a-z])|<=>|<=|>=|!=|==|:=|=>|[<>=≤≥≠≈≡∈∉⊂⊆⇒⇔⟹⟺∣∤⩽⩾]")
_REL_CANON = {"\\leqslant": "≤", "\\leq": "≤", "\\le": "≤", "<=": "≤", "⩽": "≤", "\\geqslant": "≥", "\\geq": "≥",
              "\\ge": "≥", ">=": "≥", "⩾": "≥", "\\neq": "≠", "\\ne": "≠", "!=": "≠", "\\lt": "<", "\\gt": ">",
              "\\equiv": "≡", "\\approx": "≈", "\\iff": "⇔", "<=>": "⇔", "⟺": "⇔", "\\leftrightarrow": "⇔",
              "\\implies": "⇒", "=>": "⇒", "⟹": "⇒", "\\rightarrow": "⇒", "==": "=", ":=": "=", "\\in": "∈",
              "\\notin": "∉", "\\subset": "⊂", "\\subseteq": "⊆", "\\mid": "∣", "\\nmid": "∤"}
_VERBAL_RELATIONS = ((r"\bless than or equal to\b|\bat most\b|\bno more than\b", "≤"),
                     (r"\bgreater than or equal to\b|\bat least\b|\bno less than\b|\bno fewer than\b", "≥"),
                     (r"\bnot equal to\b", "≠"), (r"\bless than\b|\bsmaller than\b|\bfewer than\b", "<"),
                     (r"\bgreater than\b|\blarger than\b|\bmore than\b|\bexceeds?\b", ">"),
                     (r"\bequals?\b|\bequal to\b", "="), (r"\bif and only if\b", "⇔"), (r"\bimplies\b", "⇒"),
                     (r"\bdivides\b", "∣"))
_DECISIVE: tuple[tuple[str, str], ...] = (
    ("only", r"\bonly\b"),
    ("all", r"\ball\b|\bevery\b|\beach\b|\bfor any\b|∀|\\forall"),
    ("exists", r"\bexists?\b|\bexistence\b|\bthere (?:is|are)\b|∃|\\exists"),
    ("unique", r"\bunique(?:ly|ness)?\b|\bexactly one\b"),
    ("at least", r"\bat least\b|\bno (?:less|fewer) than\b|≥|>=|⩾|\\geq?(?![a-z])"),
    ("at most", r"\bat most\b|\bno (?:more|greater) than\b|≤|<=|⩽|\\leq?(?![a-z])"),
    ("least", r"\bleast\b|\bsmallest\b|\bminim(?:um|al)\b|\\min\b"),
    ("greatest", r"\bgreatest\b|\blargest\b|\bmaxim(?:um|al)\b|\\max\b"),
    ("must", r"\bmust\b|\bnecessarily\b|\b(?:has|have) to\b"),
    ("valid", r"\bvalid\b"),
    ("invalid", r"\binvalid\b"),
    ("sufficient", r"\bsufficient(?:ly)?\b|\bsuffices?\b|\benough\b"),
    ("necessary", r"\bnecessary\b"),
    ("not", r"\bnot\b|n't\b|\bcannot\b|\bno\b|\bnone\b|\bneither\b|\bnor\b|≠|!=|\\neq?(?![a-z])"),
    ("never", r"\bnever\b"),
    ("always", r"\balways\b"),
    ("if and only if", r"\bif and only if\b|\biff\b|⇔|\\iff\b"),
    ("exactly", r"\bexactly\b"),
    ("strictly", r"\bstrictly\b"),
    ("impossible", r"\bimpossible\b"),
)
_DECISIVE_RE = tuple((word, re.compile(p)) for word, p in _DECISIVE)


def _numbers(text: str) -> set[str]:
    out = set()
    for lit in scan_numbers(text.translate(SUPERSCRIPTS), GROUPED_INTEGERS):
        whole, _, frac = lit.text.replace(",", "").partition(".")
        frac = frac.rstrip("0")
        out.add((whole.lstrip("0") or "0") + (f".{frac}" if frac else ""))
    return out


def _relations(text: str) -> set[str]:
    low = text.lower()
    found = {_REL_CANON.get(m.group(), m.group()) for m in _RELATION.finditer(low)}
    found.update(sym for pattern, sym in _VERBAL_RELATIONS if re.search(pattern, low))
    return found


def _decisive(text: str) -> set[str]:
    low = text.lower().replace("’", "'")
    no_bounds = re.sub(r"\bat (?:least|most)\b", " ", low)
    return {w for w, rx in _DECISIVE_RE if rx.search(no_bounds if w in ("least", "greatest") else low)}


_WORD = re.compile(r"[a-z]{4,}")


def _content_words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def screen_repair(original: str, pieces: Sequence[str], context: str = "") -> list[str]:
    """Issues that make a split of ``original`` into ``pieces`` unfaithful, by inspection alone. Pure.

    - a numeric formula in a piece that the original step does not write verbatim (span by span:
      ``1024 + 100 = 2`` from ``1024 + 100 = 1124`` is caught even when 2 occurs elsewhere in the step);
    - a number or relation symbol in a piece that the original step does not contain (changed
      constant / relation), or a number of the original that no piece keeps (dropped constant):
      the numbers and relations of a step are its claims, and a split must keep them all;
    - a decisive word of the original that no piece keeps;
    - a piece whose words mostly come from nowhere: more than half of its words of four letters
      or more (and at least two) appear neither in the step nor in ``context`` (the problem and
      the steps before it), so the piece says something the proof does not.
    """
    issues: list[str] = []
    for piece in pieces:  # span by span: a computation the piece writes is written so in the step
        issues += [f"formula not in its step: {f}" for f in unwritten_formulas(original, piece)
                   if f"formula not in its step: {f}" not in issues]
    nums, rels = _numbers(original), _relations(original)
    for piece in pieces:
        issues += [f"changed constant {n}" for n in sorted(_numbers(piece) - nums) if f"changed constant {n}" not in issues]
        issues += [f"changed relation {r}" for r in sorted(_relations(piece) - rels) if f"changed relation {r}" not in issues]
    kept_nums = set().union(*(_numbers(p) for p in pieces)) if pieces else set()
    issues += [f"dropped constant {n}" for n in sorted(nums - kept_nums)]
    kept = set().union(*(_decisive(p) for p in pieces)) if pieces else set()
    issues += [f"dropped decisive word '{w}'" for w, _ in _DECISIVE if w in _decisive(original) - kept]
    known = _content_words(original) | _content_words(context)
    for piece in pieces:
        words = _content_words(piece)
        foreign = sorted(words - known)
        if len(foreign) >= 2 and 2 * len(foreign) > len(words):
            issues.append(f"words not in the proof: {', '.join(foreign[:4])}")
    return issues


def verbatim_partition(original: str, pieces: Sequence[str]) -> bool:
    """The pieces, in order, are the original step cut into consecutive parts (whitespace runs compare
    equal; a cut falls where the step has white space; both sides are compared as the service cleans input
    text, so a compatibility form such as ``…`` for ``...`` is the same text). Pure. Such a split says word
    for word what the step says: no strengthening, weakening, changed constant or lost word is possible, so
    the model's repair check has nothing textual to find."""
    whole = " ".join(clean_text(original).split())
    return bool(whole) and whole == " ".join(" ".join(clean_text(p).split()) for p in pieces)


# ---------------------------------------------------------------------------------------
# Helpers


def _norm(text: str) -> str:
    return " ".join(text.split())


def answer_tokens(ctx: RunContext, estimate: int) -> int:
    """Answer budget for a structure answer: the estimate, at least the configured budget, at most the ceiling."""
    return min(ctx.settings.llm_max_structure_tokens, max(ctx.settings.llm_max_tokens, estimate))


def whole_steps(steps: Mapping[int, str]) -> list[SubStep]:
    """Every original step as its own single sub-step (the fallback when no split can be used)."""
    return [SubStep(id=f"{k}.1", step=k, text=t.strip()) for k, t in steps.items()]


def validate_substeps(raw: Sequence[SubStepOut], steps: Mapping[int, str]) -> list[SubStep] | str:
    """The sub-steps with canonical ids (``3.1``, ``3.2``, ...) and cleaned text, or why they cannot be used: a
    pointer out of range or going backwards, a step with content left uncovered, too many
    sub-steps, or a sub-step far longer than its step. Empty sub-steps are dropped first."""
    items = [s for s in raw if s.text.strip()]
    if not items:
        return "no sub-steps"
    if len(items) > MAX_SUBSTEPS:
        return f"{len(items)} sub-steps (limit {MAX_SUBSTEPS})"
    prev = min(steps, default=1)
    for s in items:
        if s.step not in steps:
            return f"sub-step points to step {s.step}, outside 1..{len(steps)}"
        if s.step < prev:
            return f"sub-step points to step {s.step} after step {prev}"
        if len(s.text) > max(MAX_SUBSTEP_CHARS, 2 * len(steps[s.step])):
            return f"a sub-step of step {s.step} is {len(s.text)} characters long"
        prev = s.step
    uncovered = [k for k, t in steps.items() if t.strip() and k not in {s.step for s in items}]
    if uncovered:
        return f"step(s) {', '.join(map(str, uncovered[:8]))} not covered by any sub-step"
    out: list[SubStep] = []
    counts: dict[int, int] = {}
    for s in items:
        counts[s.step] = counts.get(s.step, 0) + 1
        # cleaned as the proof's own text is (compatibility forms, invisible characters): a model that writes
        # ``a₁`` or ``…`` where the cleaned step says ``a_1`` or ``...`` copied it, it did not change it
        out.append(SubStep(id=f"{s.step}.{counts[s.step]}", step=s.step, text=clean_text(s.text).strip(),
                           scope=_norm(clean_text(s.scope))[:MAX_SCOPE_CHARS]))
    return out


def render_steps(steps: Mapping[int, str]) -> str:
    return "\n\n".join(f"### Step {k}\n{t.strip()}" for k, t in steps.items())


def render_substeps(substeps: Sequence[SubStep]) -> str:
    lines = []
    for s in substeps:
        scope = f" [scope: {s.scope}]" if s.scope else ""
        lines.append(f"- {s.id} (from step {s.step}){scope}: {s.text}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# Stages


class CoarseDecomposer:
    """One EdgeUnit per original step, in a line; no model call (the "w/o local EdgeUnits" ablation)."""

    name = "coarse"

    def decompose(self, ctx: RunContext) -> Decomposition:
        steps = {s.index: s.text for s in ctx.proof.steps}
        subs = [SubStep(id=f"{k}.1", step=k, text=t) for k, t in steps.items()]
        return Decomposition(tree=linear_tree(ctx.proof.problem, steps, subs, coarse=True), kind="coarse")


class LLMDecomposer:
    """Faithful pre-decomposition, repair prevention, and a model-built proof-state tree."""

    name = "llm"

    def decompose(self, ctx: RunContext) -> Decomposition:
        if ctx.ablated("no_local_edges"):
            return CoarseDecomposer().decompose(ctx)
        steps = {s.index: s.text for s in ctx.proof.steps}
        if not steps:
            return CoarseDecomposer().decompose(ctx)
        found = self.pre_decompose(ctx, steps)
        split = found is not None
        tree: StateTree | None = None
        if found is None:
            subs = whole_steps(steps)
        else:
            subs, answer, ids = found
            subs_kept = self.prevent_repairs(ctx, steps, subs)
            if subs_kept == subs:
                tree = self.tree_from_moves(ctx, steps, subs, answer, ids)
            subs = subs_kept
        if tree is None:
            tree = self.state_tree(ctx, steps, subs)
        if tree is None:
            if not split:
                ctx.note("decompose: no usable model answer; one edge per original step")
                return CoarseDecomposer().decompose(ctx)
            tree = linear_tree(ctx.proof.problem, steps, subs)
        return Decomposition(tree=tree, kind="llm", substeps=len(subs))

    # -- 1. faithful sub-steps and their moves ------------------------------------------
    def pre_decompose(self, ctx: RunContext, steps: Mapping[int, str]) -> tuple[list[SubStep], DecomposeTreeAnswer, dict[str, str]] | None:
        """The validated sub-steps with the answer they came in and the model's id of each sub-step to its
        canonical id, or ``None`` (with a note) when the answer cannot be used."""
        res = ctx.ask("decompose_tree", {"problem": ctx.proof.problem.strip(), "steps": render_steps(steps)},
                      DecomposeTreeAnswer, max_tokens=answer_tokens(ctx, 160 * len(steps) + 512))
        if isinstance(res, Unparsed):
            ctx.note(f"decompose: answer unusable ({res.reason}); original steps used whole")
            return None
        if len(res.value.substeps) > MAX_SUBSTEPS:
            ctx.note(f"decompose: split rejected ({len(res.value.substeps)} sub-steps (limit {MAX_SUBSTEPS})); "
                     "original steps used whole")
            return None
        made = cut_substeps(res.value.substeps, steps)
        if isinstance(made, str):
            ctx.note(f"decompose: split rejected ({made}); original steps used whole")
            return None
        raw, ids, notes = made
        for n in notes:
            ctx.note(n)
        subs = validate_substeps(raw, steps)
        if isinstance(subs, str):
            ctx.note(f"decompose: split rejected ({subs}); original steps used whole")
            return None
        return subs, res.value, ids

    def tree_from_moves(self, ctx: RunContext, steps: Mapping[int, str], subs: Sequence[SubStep],
                        answer: DecomposeTreeAnswer, ids: Mapping[str, str]) -> StateTree | None:
        """The tree the ``decompose_tree`` answer describes (unlisted sub-steps are plain derivations from the
        previous state), or ``None`` (with a note) when it cannot be used (the ``state_tree`` call then
        builds it)."""
        try:
            tree, notes = build_tree(ctx.proof.problem, steps, subs, answer.tree(ids), implicit=True)
        except TreeBuildError as exc:
            ctx.note(f"tree: moves of the decomposition unusable ({exc}); asking for the tree separately")
            return None
        for n in notes:
            ctx.note(n)
        return tree

    # -- 2. repair prevention ---------------------------------------------------------
    def prevent_repairs(self, ctx: RunContext, steps: Mapping[int, str], subs: list[SubStep]) -> list[SubStep]:
        """``subs`` with every step whose split looks unfaithful put back whole (one note per step)."""
        groups: dict[int, list[SubStep]] = {}
        for s in subs:
            groups.setdefault(s.step, []).append(s)
        changed = [k for k, g in groups.items() if not (len(g) == 1 and _norm(g[0].text) == _norm(steps[k]))]
        if not changed:
            return subs
        issues: dict[int, list[str]] = {}
        for k in changed:
            texts = [s.text for s in groups[k]]
            if verbatim_partition(steps[k], texts):  # the step's own words: only a cut inside a formula can mislead
                found = [f"formula not in its step: {f}" for t in texts for f in unwritten_formulas(steps[k], t)]
            else:
                before = "\n".join([ctx.proof.problem, *(steps[j] for j in steps if j < k)])
                found = screen_repair(steps[k], texts, before)
            if found:
                issues[k] = found
        to_check = {k: groups[k] for k in changed if not verbatim_partition(steps[k], [s.text for s in groups[k]])}
        for k, found in (self.repair_flags(ctx, steps, to_check) if to_check else {}).items():
            issues.setdefault(k, []).extend(found)
        for k in changed:
            if k not in issues:
                lost = [g.id for g in groups[k] if find_span(steps[k], g.text) == (0, len(steps[k]))
                        and _norm(g.text) != _norm(steps[k])]
                if lost:
                    ctx.note(f"repair: sub-step(s) {', '.join(lost[:5])} of step {k} not found verbatim in the step; "
                             "their spans are the whole step")
        out: list[SubStep] = []
        for k, group in groups.items():
            if k in issues:
                ctx.note(f"repair: step {k} kept whole ({'; '.join(issues[k][:4])})")
                scopes = {s.scope for s in group}
                out.append(SubStep(id=f"{k}.1", step=k, text=steps[k].strip(),
                                   scope=scopes.pop() if len(scopes) == 1 else ""))
            else:
                out.extend(group)
        return out

    def repair_flags(self, ctx: RunContext, steps: Mapping[int, str],
                     groups: Mapping[int, list[SubStep]]) -> dict[int, list[str]]:
        """Issues the model's repair check reports, per original step."""
        blocks = [f"### Step {k} (original)\n{steps[k].strip()}\nSub-steps:\n{render_substeps(g)}" for k, g in groups.items()]
        res = ctx.ask("repair_check", {"problem": ctx.proof.problem.strip(), "splits": "\n\n".join(blocks)},
                      RepairAnswer, max_tokens=answer_tokens(ctx, 64 * sum(map(len, groups.values())) + 256))
        if isinstance(res, Unparsed):
            ctx.note(f"repair: model check unusable ({res.reason}); deterministic screen only")
            return {}
        by_id = {s.id: k for k, g in groups.items() for s in g}
        out: dict[int, list[str]] = {}
        unknown: list[str] = []
        for flag in res.value.flags:
            labels = [lab for lab in (issue_label(i) for i in flag.issues) if lab]
            if not labels:
                continue
            key = flag.id.strip()
            m = re.fullmatch(r"(?i)(?:step\s*)?(\d+)(?:\.\d+)?", key)
            step = by_id.get(key) or (int(m.group(1)) if m and int(m.group(1)) in groups else None)
            if step is None:
                unknown.append(key or "?")
                continue
            reason = f": {_norm(flag.reason)[:160]}" if flag.reason.strip() else ""
            out.setdefault(step, []).append(f"check {', '.join(labels)}{reason}")
        if unknown:
            ctx.note(f"repair: flags for unknown sub-steps ignored ({', '.join(unknown[:5])})")
        return out

    # -- 3. proof-state tree ----------------------------------------------------------
    def state_tree(self, ctx: RunContext, steps: Mapping[int, str], subs: Sequence[SubStep]) -> StateTree | None:
        """The model's tree with one EdgeUnit per sub-step, or ``None`` (with a note) when unusable."""
        res = ctx.ask("state_tree", {"problem": ctx.proof.problem.strip(), "substeps": render_substeps(subs)},
                      TreeAnswer, max_tokens=answer_tokens(ctx, 220 * len(subs) + 512))
        if isinstance(res, Unparsed):
            ctx.note(f"tree: answer unusable ({res.reason}); linear tree over the sub-steps")
            return None
        try:
            tree, notes = build_tree(ctx.proof.problem, steps, subs, res.value)
        except TreeBuildError as exc:
            ctx.note(f"tree: {exc}; linear tree over the sub-steps")
            return None
        for n in notes:
            ctx.note(n)
        return tree
