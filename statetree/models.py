"""Proof states and EdgeUnits: the nodes and edges of the proof-state tree."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from faithsieve.mathtext.ast import Rel
from faithsieve.mathtext.formulas import Formula
from faithsieve.mathtext.literals import show_number
from faithsieve.runtime.lazy import lazy_module

if TYPE_CHECKING:
    import networkx as nx
    from networkx import DiGraph
else:
    nx = lazy_module("networkx", globals(), "nx")  # imported when the first tree is built
    DiGraph = Any  # what pydantic reads for a model holding a tree: reading it must not import networkx


class TransitionType(str, Enum):
    """What one local reasoning transition does."""

    COMPUTATION = "computation"
    """Rewrite/computation: a link of an equation chain, ``a op b = c``."""
    DERIVATION = "derivation"
    """A new relation derived from earlier ones ("so", "therefore", "⇒")."""
    DEFINITION = "definition"
    """Introduces a name or value ("let x be ...", ``x = 5`` for a fresh x)."""
    CASE_SPLIT = "case_split"
    """Splits the goal into cases; each case is a child state."""
    CASE = "case"
    """Enters one case under its branch hypothesis."""
    CONCLUSION = "conclusion"
    """States the answer or closes the goal."""
    CLAIM = "claim"
    """A relation asserted without a detectable derivation (an equation set up, a fact)."""
    NARRATION = "narration"
    """Text with no checkable mathematics."""
    LEMMA = "lemma"
    """Opens a have/lemma subgoal whose result returns to the context."""
    INDUCTION = "induction"
    """Splits into base case and inductive step (with the induction hypothesis)."""
    WITNESS = "witness"
    """Picks a concrete witness for an existential goal."""
    INSTANTIATION = "instantiation"
    """Uses an existential or universal fact at a specific object."""
    GOAL_REDUCTION = "goal_reduction"
    """Replaces the goal by one that suffices (including an iff split into two directions)."""


class ProofState(BaseModel):
    """A node: hypotheses available and the goal still to prove."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Node id in the tree, e.g. ``s3``."""
    hypotheses: tuple[str, ...] = ()
    """Γ: established facts, rendered as text (equations, variable values, branch hypotheses)."""
    goal: str = ""
    """G: what remains to be shown (the problem's question until a conclusion closes it)."""
    branch: str = ""
    """Case label when this state lies inside a case split ("Case 1: n even"), else empty."""


class EdgeUnit(BaseModel):
    """An edge: one local reasoning transition taken from one step."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Edge id, e.g. ``e7``."""
    type: TransitionType
    """Transition type τ."""
    parent: str
    """Parent state id."""
    child: str
    """Child state id."""
    step: int
    """1-based source step."""
    span: tuple[int, int]
    """Character span ``[start, end)`` of the source text inside the step."""
    text: str
    """The source text of this transition (verbatim for rule-based edges; the faithful sub-step
    for edges built by the language-model decomposer)."""
    substep: str = ""
    """Fine-grained sub-step id (``3.2``) when a language model pre-decomposed the step."""
    pattern: str = ""
    """Transition pattern (``simple_implication``, ``case_split_2``, ``case_split_n``, ``have_lemma``,
    ``induction``, ``existential_instantiation``, ``existential_elimination``,
    ``universal_instantiation``, ``iff_split``); "" for rule-based edges."""
    goal_relation: str = ""
    """How the goal changes (``same_goal``, ``case_split``, ``lemma_subgoal``, ...)."""
    children: tuple[str, ...] = ()
    """All child states when the edge branches (case split, induction, iff split); ``child`` is the first."""
    new_conditions: tuple[str, ...] = ()
    """Conditions this transition adds (``name: statement``)."""
    consumed_conditions: tuple[str, ...] = ()
    """Conditions it removes or uses up (existential elimination)."""
    transformed_conditions: tuple[str, ...] = ()
    """Conditions it rewrites into another form."""
    explanation: str = ""
    """What the transition does, in a sentence."""


@dataclass(frozen=True)
class CaseSplit:
    """The cases of one split, as read from their headers (rule-based decomposer)."""

    variable: str
    """The variable the cases split on."""
    residues: tuple[str, ...]
    """Per case: ``even``, ``odd``, ``mod m r``, or "" for a relational case."""
    relations: tuple[tuple[Rel, ...], ...]
    """Per case: its relational conditions (empty for a residue case)."""
    integer: bool
    """The variable ranges over the integers."""
    headers: tuple[str, ...] = ()
    """The case headers as written."""
    constraints: tuple[Rel, ...] = ()
    """Constraints on the variable stated in the problem (including 'positive', 'non-negative')."""
    domain_stated: bool = False
    """The text fixes the domain outright ("for every integer n", "the cases cover all integers"):
    a gap anywhere in it is a gap, not a guess."""


@dataclass(frozen=True)
class EdgeContext:
    """What the obligation extractor needs to know about one EdgeUnit (rule-based decomposer)."""

    formula: Formula | None
    link: int = -1
    """Index of the chain link this edge covers (-1 for non-link edges)."""
    rel: Rel | None = None
    env: dict[str, Fraction] = field(default_factory=dict)
    """Established values in scope at this edge."""
    env_origin: dict[str, str] = field(default_factory=dict)
    env_steps: dict[str, int] = field(default_factory=dict)
    """Step where each value in ``env`` was established (very large for the problem statement)."""
    premises: tuple[Rel, ...] = ()
    """Relations this edge derives from (derivations and solution claims)."""
    other_premises: tuple[Rel, ...] = ()
    """Other relations the text may derive this one from (the line above the premise, when the premise
    may be an alternative): a refutation stands only if the claim contradicts each of them too."""

    negated: bool = False
    """The sentence denies or questions the relation ("not", "?", "contradiction"): never refuted."""
    parallel: bool = False
    """The formula is one of several alternatives ("x = 2 or x = 3"): never a derivation."""
    hypothetical: bool = False
    """The sentence supposes, tests or checks the relation ("if", "suppose", "check"): not a fact."""
    around: tuple[str, str] = ("", "")
    """A few characters of the step just before and just after the formula (is it cut out of more?)."""
    rewrites: bool = False
    """The relation pairs a display opened with "=" and the expression it continues, in the same
    letters with nothing known about them (``statetree.continuation``): an identity is claimed."""
    supposed: bool = False
    """The relation is the object of a supposition ("Suppose 2 + 2 = 5", "If x = 3, then ...",
    "Try n = 4"): it is what the argument supposes, not a claim, so it is never checked."""
    reductio: bool = False
    """The edge lies in a context opened by a supposition the argument means to refute (a supposed
    closed relation, "for contradiction", "on the contrary"): a contradiction reached there is
    the point of the argument, so contradictions ("4 = 5", no value satisfies it) are not errors."""
    rounded: frozenset[str] = frozenset()
    """Literals the proof produced by rounding earlier."""
    integer_vars: frozenset[str] = frozenset()
    coverage: CaseSplit | None = None
    """For a case split: the cases found (variable, conditions, domain)."""
    system: tuple[tuple[Rel, ...], dict[str, Fraction]] | None = None
    """For the first of a run of assignments: the system of equations they claim to solve."""
    word_problem: bool = False
    """The problem states no equations in variables: letters in the proof name its quantities."""
    definition_of: str | None = None
    """For a definition edge: the variable being defined."""
    roots_listed: int = 0
    """For the first of a run of values of one letter that the text gives as all the roots or
    solutions of its premise ("the roots are x = 2 and x = 3"): how many distinct values it lists."""
    rel_vars: frozenset[str] | None = None
    """The variables of ``rel`` (both sides), when the decomposer read them already (else None)."""
    asked_rewrite: bool = False
    """One side of ``rel`` is an expression the problem asks to expand, simplify or factor ("Expand
    $(x - y)^2$."): the relation writes that expression in another form, so it claims an identity."""
    restates: Rel | None = None
    """An equation the problem states that ``rel`` keeps one side of, rewriting the other
    (``(6r^2 - 19r - 7)/(2r - 7) = 4r - 3``, then ``(2r - 7)(3r + 1)/(2r - 7) = 4r - 3``): ``rel`` is
    that equation to solve, and what it claims for all values is only the equality of the two forms."""


NodeRecord = tuple[str, tuple[object, ...], tuple[tuple[str, Fraction], ...], str, str]
"""A state node as a builder records it: its id, the facts it holds (texts, or relations to render with
``str``), the values in scope (each becomes ``name = value``), its goal and its branch."""


class _Graph:
    """``StateTree.graph``: the networkx graph given at construction, or, for a tree made by
    ``StateTree.from_records``, one built from the records at first access.

    Building it then is the same sequence of ``add_node`` and ``add_edge`` calls a builder would make
    as it goes: every node in the order it was made, then every edge in order (each edge joins two
    nodes made before it, so adding the nodes first gives the same node order and the same adjacency
    order). The records are final when the tree is made (tuples of strings, immutable relations
    and Fractions; the tree's own list of frozen EdgeUnits, which nothing extends afterwards), and rendering is a function of them alone, so the graph does
    not depend on when it is built. The offline pipeline
    never reads the graph, so it never pays for it."""

    def __get__(self, tree: StateTree | None, owner: type | None = None) -> nx.DiGraph:
        if tree is None:
            raise AttributeError("graph")  # a required field: no class-level default (see dataclasses)
        g = tree.__dict__["_graph"]
        if g is None:
            nodes = tree.__dict__.pop("_records")
            g = nx.DiGraph()
            for node, facts, values, goal, branch in nodes:
                hyps = tuple(str(x) for x in facts) + tuple(f"{k} = {show_number(v)}" for k, v in values)
                # what ProofState(...).model_dump() gives, built directly (every field is a str or a tuple of str)
                g.add_node(node, state={"id": node, "hypotheses": hyps, "goal": goal, "branch": branch})
            for edge in tree.edges:
                g.add_edge(edge.parent, edge.child, edge=dict(edge.__dict__))  # = edge.model_dump(): flat fields
            tree.__dict__["_graph"] = g
        return g

    def __set__(self, tree: StateTree, g: nx.DiGraph | None) -> None:
        tree.__dict__["_graph"] = g


@dataclass
class StateTree:
    """The proof-state tree: a networkx DiGraph of ProofStates joined by EdgeUnits.

    Both decomposers produce it: the rule-based one fills ``contexts`` (what its obligation
    extractor needs); the language-model one leaves it empty and records states on the nodes.
    """

    graph: DiGraph = _Graph()  # a descriptor: see ``_Graph``
    edges: list[EdgeUnit]  # type: ignore[misc]  # required: ``_Graph`` gives ``graph`` no class-level default
    contexts: dict[str, EdgeContext] = field(default_factory=dict)
    root: str = "s0"
    _by_step: dict[int, list[EdgeUnit]] = field(default_factory=dict, init=False, repr=False, compare=False)
    _indexed: tuple[int, int] = field(default=(0, -1), init=False, repr=False, compare=False)

    @classmethod
    def from_records(cls, nodes: list[NodeRecord], edges: list[EdgeUnit], contexts: dict[str, EdgeContext]) -> StateTree:
        """A tree whose graph is built from ``nodes`` and ``edges`` (each joining its ``parent`` to its
        ``child``) when first read (see ``_Graph``)."""
        tree = cls(graph=None, edges=edges, contexts=contexts)
        tree.__dict__["_records"] = nodes
        return tree

    def facts_at(self, node: str) -> tuple[object, ...]:
        """The relations held at ``node`` as the rule-based decomposer recorded them (the last twelve),
        unrendered; empty for a tree built without records."""
        records = self.__dict__.get("_records") or ()
        index = self.__dict__.get("_facts_index")
        if index is None:
            index = {rec[0]: rec[1] for rec in records}
            self.__dict__["_facts_index"] = index
        return tuple(index.get(node, ()))

    def state(self, node: str) -> ProofState:
        """The proof state at ``node``."""
        return ProofState.model_validate(self.graph.nodes[node]["state"])

    def node_link(self) -> dict[str, object]:
        """The tree as node-link JSON (for inspection)."""
        data: dict[str, object] = nx.node_link_data(self.graph, edges="edges")
        return data

    def edges_of_step(self, step: int) -> list[EdgeUnit]:
        """The EdgeUnits taken from ``step``, in order. The index is built once (and again only when
        edges were added or the list replaced since), so asking for every step is linear in the number
        of edges."""
        key = (id(self.edges), len(self.edges))
        if self._indexed != key:
            by_step: dict[int, list[EdgeUnit]] = {}
            for e in self.edges:
                by_step.setdefault(e.step, []).append(e)
            self._by_step, self._indexed = by_step, key
        return list(self._by_step.get(step, ()))
