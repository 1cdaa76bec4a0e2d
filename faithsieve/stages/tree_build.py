"""Building a ``StateTree`` from fine-grained sub-steps and a model's proof-state answer.

Pure helpers of the language-model decomposer (``llm_decompose``): the answer models of the
``state_tree`` prompt (and the moves of the merged ``decompose_tree`` prompt), pattern normalisation, span location, the tree builder and the linear
fallback. Nothing here calls a model.

Node ids. The root is ``s0``. A transition with one child continues the line by bumping the
last number (``s0 -> s1``, ``s2.1.0 -> s2.1.1``); a transition with several children opens one
branch each under its parent (``s2 -> s2.1.0, s2.2.0``). Line ids never end in ``.0`` and
branch ids always do, so the two never collide; a line id already taken (a state used twice as
a parent) opens a branch instead.

Conditions accumulate in code, not in the model's copy of them: a child state holds its
parent's hypotheses, plus any conditions the model listed for that state, plus the edge's new
conditions (for single-child edges), minus the consumed ones (matched by name).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict

from faithsieve.mathtext.textnorm import squeeze_spaces
from faithsieve.runtime.lazy import lazy_module
from faithsieve.statetree.models import EdgeUnit, ProofState, StateTree, TransitionType

if TYPE_CHECKING:
    import networkx as nx
else:
    nx = lazy_module("networkx", globals(), "nx")  # imported when the first tree is built

MAX_CHILDREN = 16
"""Most child states one transition may open."""
MAX_CONDITIONS = 200
"""Most conditions the model may list for one state or one edge."""
MAX_HYPOTHESES = 120
"""Most hypotheses kept on one state (the most recent ones)."""
MAX_FREE_TEXT = 600
"""Model-written free text (conditions, goals, explanations) is clipped to this many characters."""
GOAL_CHARS = 400
"""The root goal defaults to the problem text, clipped to this many characters."""

PATTERN_TYPES: dict[str, TransitionType] = {
    "simple_implication": TransitionType.DERIVATION,
    "case_split_2": TransitionType.CASE_SPLIT,
    "case_split_n": TransitionType.CASE_SPLIT,
    "have_lemma": TransitionType.LEMMA,
    "induction": TransitionType.INDUCTION,
    "existential_instantiation": TransitionType.WITNESS,
    "existential_elimination": TransitionType.INSTANTIATION,
    "universal_instantiation": TransitionType.INSTANTIATION,
    "iff_split": TransitionType.GOAL_REDUCTION,
}
"""Transition type of each pattern of the proof-state manual (unknown patterns are ``CLAIM``)."""

GOAL_RELATIONS: dict[str, str] = {
    "simple_implication": "same_goal", "case_split_2": "case_split", "case_split_n": "case_split",
    "have_lemma": "lemma_subgoal", "induction": "induction", "existential_instantiation": "witness_instantiation",
    "existential_elimination": "existential_elimination", "universal_instantiation": "universal_instantiation",
    "iff_split": "iff_split",
}
"""Goal relation used when the model gives none."""

_PATTERN_ALIASES = {
    "implication": "simple_implication", "simple": "simple_implication", "derivation": "simple_implication",
    "case_split_2_way": "case_split_2", "case_split_2way": "case_split_2", "case_split_two_way": "case_split_2",
    "2_way_case_split": "case_split_2", "two_way_case_split": "case_split_2",
    "case_split_3": "case_split_n", "case_split_3+": "case_split_n", "case_split_3_way": "case_split_n",
    "case_split_n_way": "case_split_n", "case_split_nway": "case_split_n", "case_split_multi": "case_split_n",
    "case_split_3+_way": "case_split_n", "n_way_case_split": "case_split_n", "multi_way_case_split": "case_split_n",
    "have": "have_lemma", "lemma": "have_lemma", "have_or_lemma": "have_lemma",
    "mathematical_induction": "induction", "witness": "existential_instantiation",
    "witness_instantiation": "existential_instantiation", "iff": "iff_split",
}


def normalize_pattern(raw: str, n_children: int = 1) -> str:
    """The canonical pattern name for ``raw`` (a bare ``case split`` is named by its child count);
    an unknown pattern comes back cleaned (lower case, underscores, at most 40 characters)."""
    key = re.sub(r"[^a-z0-9+]+", "_", raw.lower()).strip("_")[:40]
    key = _PATTERN_ALIASES.get(key, key)
    if key in ("case_split", "case_analysis", "cases"):
        return "case_split_2" if n_children == 2 else "case_split_n"
    return key


def transition_type(pattern: str) -> TransitionType:
    return PATTERN_TYPES.get(pattern, TransitionType.CLAIM)


# ---------------------------------------------------------------------------------------
# Sub-steps and spans


@dataclass(frozen=True)
class SubStep:
    """One faithful fine-grained sub-step (or a whole original step after a fallback)."""

    id: str
    """``3.2``: second sub-step of original step 3."""
    step: int
    """1-based original step."""
    text: str
    """The sub-step text."""
    scope: str = ""
    """Case, contradiction, induction or witness scope it lies in ("" when none)."""


def find_span(original: str, fragment: str) -> tuple[int, int]:
    """Where ``fragment`` lies in ``original`` (whitespace runs compare equal; a trailing
    ``.``, ``,`` or ``;`` of the fragment may be missing in the original); else the whole text."""
    whole = (0, len(original))
    frag = " ".join(fragment.split())
    if not frag:
        return whole
    norm, index = squeeze_spaces(original)
    for candidate in (frag, frag.rstrip(".,;: ")):
        k = norm.find(candidate) if candidate else -1
        if k >= 0:
            return index[k], index[k + len(candidate) - 1] + 1
    return whole


# ---------------------------------------------------------------------------------------
# Answer models of the ``state_tree`` prompt (lenient about harmless type slips)


def _to_text(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return str(v)
    return v


def as_list(v: Any) -> Any:
    if v is None:
        return []
    if isinstance(v, (str, int, float, dict)) and not isinstance(v, bool):
        return [v]
    return v


def _condition_text(v: Any) -> Any:
    if isinstance(v, dict) and ("name" in v or "statement" in v):
        name, statement = str(v.get("name") or "").strip(), str(v.get("statement") or "").strip()
        return f"{name}: {statement}" if name and statement else name or statement
    return _to_text(v)


Text = Annotated[str, BeforeValidator(_to_text)]
TextList = Annotated[list[Annotated[str, BeforeValidator(_condition_text)]], BeforeValidator(as_list)]


class Condition(BaseModel):
    """A named hypothesis (``h_odd``: ``m is odd``)."""

    model_config = ConfigDict(extra="ignore")

    name: Text = ""
    statement: Text

    def render(self) -> str:
        name, statement = self.name.strip(), self.statement.strip()
        return f"{name}: {statement}" if name and statement else name or statement


def _to_condition(v: Any) -> Any:
    if isinstance(v, str):  # "h1: x > 0" or a bare statement
        name, sep, rest = v.partition(":")
        if sep and name.strip() and len(name.strip()) <= 40 and " " not in name.strip():
            return {"name": name.strip(), "statement": rest.strip()}
        return {"name": "", "statement": v}
    return v


ConditionList = Annotated[list[Annotated[Condition, BeforeValidator(_to_condition)]], BeforeValidator(as_list)]


class StateOut(BaseModel):
    """A proof state as the model describes it."""

    model_config = ConfigDict(extra="ignore")

    id: Text
    conditions: ConditionList = []
    goal: Text = ""
    branch: Text = ""


class EdgeOut(BaseModel):
    """One transition (one per sub-step) as the model describes it."""

    model_config = ConfigDict(extra="ignore")

    substep: Text
    parent: Text
    children: Annotated[list[Text], BeforeValidator(as_list)] = []
    pattern: Text = "simple_implication"
    goal_relation: Text = ""
    new_conditions: ConditionList = []
    consumed_conditions: TextList = []
    transformed_conditions: TextList = []
    explanation: Text = ""


class TreeAnswer(BaseModel):
    """The answer of the ``state_tree`` prompt."""

    model_config = ConfigDict(extra="ignore")

    states: list[StateOut] = []
    edges: list[EdgeOut]


class MoveOut(BaseModel):
    """One transition as the merged ``decompose_tree`` prompt asks for it: an ``EdgeOut`` without the goal
    relation, which the pattern determines (``GOAL_RELATIONS``), so the model need not write it."""

    model_config = ConfigDict(extra="ignore")

    substep: Text
    parent: Text
    children: Annotated[list[Text], BeforeValidator(as_list)] = []
    pattern: Text = "simple_implication"
    new_conditions: ConditionList = []
    consumed_conditions: TextList = []
    transformed_conditions: TextList = []
    explanation: Text = ""

    def edge(self, substep: str | None = None) -> EdgeOut:
        """This move as an ``EdgeOut`` (naming ``substep`` instead of the model's id when given)."""
        return EdgeOut(substep=self.substep if substep is None else substep, parent=self.parent,
                       children=self.children, pattern=self.pattern, new_conditions=self.new_conditions,
                       consumed_conditions=self.consumed_conditions,
                       transformed_conditions=self.transformed_conditions, explanation=self.explanation)


class TreeBuildError(ValueError):
    """The answer cannot be turned into a tree (oversized, or no edge names a sub-step)."""


# ---------------------------------------------------------------------------------------
# Builders


def _clip(text: str, clipped: list[bool]) -> str:
    text = text.strip()
    if len(text) > MAX_FREE_TEXT:
        clipped.append(True)
        return text[: MAX_FREE_TEXT - 1] + "…"
    return text


def _cond_key(text: str) -> str:
    name, sep, _ = text.partition(":")
    return name.strip().lower() if sep and name.strip() and " " not in name.strip() else text.strip().lower()


class _Graph:
    """Node bookkeeping shared by the LLM builder and the linear fallback."""

    def __init__(self, root_goal: str, root_hyps: Sequence[str] = ()) -> None:
        self.g = nx.DiGraph()
        self.branches: dict[str, int] = {}
        self.hyps: dict[str, list[str]] = {}
        self.add_node("s0", list(root_hyps), root_goal, "")

    def add_node(self, node: str, hyps: list[str], goal: str, branch: str) -> None:
        hyps = hyps[-MAX_HYPOTHESES:]
        self.hyps[node] = hyps
        self.g.add_node(node, state=ProofState(id=node, hypotheses=tuple(hyps), goal=goal, branch=branch).model_dump())

    def state(self, node: str) -> ProofState:
        return ProofState.model_validate(self.g.nodes[node]["state"])

    def child_ids(self, parent: str, n: int) -> list[str]:
        if n == 1:
            head, _, last = parent.rpartition(".")
            line = f"{head}.{int(last) + 1}" if head else f"s{int(last[1:]) + 1}"
            if line not in self.g:
                return [line]
        out: list[str] = []
        while len(out) < n:
            j = self.branches.get(parent, 0) + 1
            self.branches[parent] = j
            cand = f"{parent}.{j}.0"
            if cand not in self.g:
                out.append(cand)
        return out

    def add_edge(self, edge: EdgeUnit) -> None:
        for child in edge.children or (edge.child,):
            self.g.add_edge(edge.parent, child, edge=edge.model_dump())


def linear_tree(problem: str, steps: Mapping[int, str], substeps: Sequence[SubStep], *,
                coarse: bool = False) -> StateTree:
    """One simple-implication edge per sub-step, in order; states carry the goal and the
    sub-step's scope but accumulate no conditions. ``coarse`` leaves the sub-step id empty
    (one edge per original step: the "without local EdgeUnits" ablation)."""
    gb = _Graph(problem.strip()[:GOAL_CHARS])
    edges: list[EdgeUnit] = []
    node = "s0"
    for i, sub in enumerate(substeps):
        (child,) = gb.child_ids(node, 1)
        gb.add_node(child, [], gb.state("s0").goal, sub.scope)
        original = steps.get(sub.step, "")
        edge = EdgeUnit(id=f"e{i}", type=TransitionType.DERIVATION, parent=node, child=child, step=sub.step,
                        span=(0, len(original)) if coarse else find_span(original, sub.text), text=sub.text,
                        substep="" if coarse else sub.id, pattern="simple_implication", goal_relation="same_goal")
        gb.add_edge(edge)
        edges.append(edge)
        node = child
    return StateTree(graph=gb.g, edges=edges)


def _sizes_ok(answer: TreeAnswer, n_sub: int) -> str | None:
    if len(answer.states) > 4 * n_sub + 16:
        return f"{len(answer.states)} states for {n_sub} sub-steps"
    if len(answer.edges) > 2 * n_sub + 16:
        return f"{len(answer.edges)} edges for {n_sub} sub-steps"
    for e in answer.edges:
        if len(e.children) > MAX_CHILDREN:
            return f"an edge with {len(e.children)} children"
        if max(len(e.new_conditions), len(e.consumed_conditions), len(e.transformed_conditions)) > MAX_CONDITIONS:
            return "an edge with too many conditions"
    if any(len(s.conditions) > MAX_CONDITIONS for s in answer.states):
        return "a state with too many conditions"
    return None


def _norm_id(raw: str) -> str:
    """State ids compare without case, spacing or a ``State``/``s`` prefix (``State 0.1`` = ``s0.1`` = ``0.1``)."""
    key = " ".join(raw.split()).lower()
    return re.sub(r"^(?:state\s*|s(?=\d))", "", key)


def build_tree(problem: str, steps: Mapping[int, str], substeps: Sequence[SubStep],
               answer: TreeAnswer, *, implicit: bool = False) -> tuple[StateTree, list[str]]:
    """The proof-state tree the answer describes, with exactly one EdgeUnit per sub-step, and
    notes on what was repaired. Raises ``TreeBuildError`` when the answer is unusable.

    ``implicit``: the answer lists only the moves that do more than derive one fact from the previous
    state (the ``decompose_tree`` prompt): an unlisted sub-step, or a move with an empty parent, continues
    from the previous state without a note, and an answer listing no move is a line."""
    if (why := _sizes_ok(answer, len(substeps))) is not None:
        raise TreeBuildError(f"oversized answer: {why}")
    notes: list[str] = []
    clipped: list[bool] = []
    by_sub = _edges_by_substep(answer, substeps, notes, allow_none=implicit)
    states: dict[str, StateOut] = {}
    for s in answer.states:
        states.setdefault(_norm_id(s.id), s)
    gb, mapping = _rooted_graph(problem, states, by_sub, substeps, clipped)
    if implicit:  # the prompt names the root "s0" and lists no state it has nothing to say about
        mapping.setdefault(_norm_id("s0"), "s0")

    edges: list[EdgeUnit] = []
    missing: list[str] = []
    bad_parent: list[str] = []
    reused: list[str] = []
    current = "s0"
    for i, sub in enumerate(substeps):
        found = by_sub.get(sub.id)
        if found is None:
            missing.append(sub.id)
            e = EdgeOut(substep=sub.id, parent="", children=[], pattern="simple_implication")
            parent = current
        else:
            e = found
            parent = mapping.get(_norm_id(e.parent), "")
            if not parent:
                if not (implicit and not e.parent.strip()):
                    bad_parent.append(sub.id)
                parent = current
        model_children = [c for c in e.children if c.strip()] or [""]
        pattern = normalize_pattern(e.pattern or "simple_implication", len(model_children))
        nodes = gb.child_ids(parent, len(model_children))
        new = [_clip(c.render(), clipped) for c in e.new_conditions if c.render()]
        consumed = [_clip(c, clipped) for c in e.consumed_conditions if c.strip()]
        _add_children(gb, states, mapping, sub, parent, list(zip(model_children, nodes, strict=True)),
                      new if len(nodes) == 1 else [], {_cond_key(c) for c in consumed}, clipped, reused)
        original = steps.get(sub.step, "")
        edge = EdgeUnit(
            id=f"e{i}", type=transition_type(pattern), parent=parent, child=nodes[0], step=sub.step,
            span=find_span(original, sub.text), text=sub.text, substep=sub.id, pattern=pattern,
            goal_relation=_clip(e.goal_relation, clipped) or GOAL_RELATIONS.get(pattern, ""),
            children=tuple(nodes) if len(nodes) > 1 else (), new_conditions=tuple(new),
            consumed_conditions=tuple(consumed),
            transformed_conditions=tuple(_clip(c, clipped) for c in e.transformed_conditions if c.strip()),
            explanation=_clip(e.explanation, clipped))
        gb.add_edge(edge)
        edges.append(edge)
        current = nodes[0]
    if missing and not implicit:
        notes.append(f"tree: no edge for sub-step(s) {', '.join(missing[:8])}: added as simple implications")
    if bad_parent:
        notes.append(f"tree: unknown parent state for sub-step(s) {', '.join(bad_parent[:8])}: attached to the previous state")
    if reused:
        notes.append(f"tree: state id(s) {', '.join(reused[:5])} used as a child twice: given fresh nodes")
    if clipped:
        notes.append(f"tree: {len(clipped)} model-written text field(s) clipped to {MAX_FREE_TEXT} characters")
    return StateTree(graph=gb.g, edges=edges), notes


def _edges_by_substep(answer: TreeAnswer, substeps: Sequence[SubStep], notes: list[str],
                      allow_none: bool = False) -> dict[str, EdgeOut]:
    """The answer's first edge for each known sub-step (notes on the edges dropped); raises
    ``TreeBuildError`` when no edge names a known sub-step (unless ``allow_none`` and the answer lists none)."""
    known = {s.id for s in substeps}
    by_sub: dict[str, EdgeOut] = {}
    invented: list[str] = []
    duplicated: list[str] = []
    for e in answer.edges:
        key = e.substep.strip()
        if key not in known:
            invented.append(key or "?")
        elif key in by_sub:
            duplicated.append(key)
        else:
            by_sub[key] = e
    if not by_sub and not (allow_none and not answer.edges):
        raise TreeBuildError("no edge names a known sub-step")
    if invented:
        notes.append(f"tree: dropped {len(invented)} edge(s) for unknown sub-steps ({', '.join(invented[:5])})")
    if duplicated:
        notes.append(f"tree: dropped {len(duplicated)} extra edge(s) for sub-steps {', '.join(duplicated[:5])}")
    return by_sub


def _rooted_graph(problem: str, states: Mapping[str, StateOut], by_sub: Mapping[str, EdgeOut],
                  substeps: Sequence[SubStep], clipped: list[bool]) -> tuple[_Graph, dict[str, str]]:
    """The graph holding only the root state ``s0`` (the first sub-step's parent when no edge leads to
    it, else the first state no edge leads to, else the problem), and the model's id for it."""
    child_ids = {_norm_id(c) for e in by_sub.values() for c in e.children}
    first = by_sub.get(substeps[0].id)
    root_id = (_norm_id(first.parent) if first is not None and _norm_id(first.parent)
               and _norm_id(first.parent) not in child_ids else None)
    if root_id is None:
        root_id = next((k for k in states if k not in child_ids), None)
    root_state = states.get(root_id) if root_id is not None else None
    root_goal = _clip(root_state.goal, clipped) if root_state and root_state.goal.strip() else problem.strip()[:GOAL_CHARS]
    root_hyps = [_clip(c.render(), clipped) for c in root_state.conditions] if root_state else []
    mapping: dict[str, str] = {root_id: "s0"} if root_id is not None else {}
    return _Graph(root_goal, root_hyps), mapping


def _add_children(gb: _Graph, states: Mapping[str, StateOut], mapping: dict[str, str], sub: SubStep, parent: str,
                  children: list[tuple[str, str]], new: list[str], gone: set[str], clipped: list[bool],
                  reused: list[str]) -> None:
    """Add the child states of one edge (``(model id, node)`` pairs): the parent's hypotheses with the
    model's conditions and ``new`` on top, less those ``gone``; the model's ids mapped to the nodes."""
    pstate = gb.state(parent)
    for model_id, node in children:
        st = states.get(_norm_id(model_id)) if model_id else None
        merged: dict[str, str] = {_cond_key(h): h for h in gb.hyps[parent]}
        for c in [*(_clip(c.render(), clipped) for c in (st.conditions if st else []) if c.render()), *new]:
            merged[_cond_key(c)] = c
        hyps = [h for k, h in merged.items() if k not in gone]
        goal = _clip(st.goal, clipped) if st and st.goal.strip() else pstate.goal
        branch = _clip(st.branch, clipped) if st and st.branch.strip() else pstate.branch or sub.scope
        gb.add_node(node, hyps, goal, branch)
        if model_id:
            key = _norm_id(model_id)
            if key in mapping:
                reused.append(model_id)
            mapping[key] = node
