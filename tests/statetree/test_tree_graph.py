"""The rule-based tree's graph, built when first read, is the graph the builder used to build as it went.

``decompose`` records each state node and each edge and ``StateTree.from_records`` builds the networkx
graph at the first read of ``tree.graph`` (nodes first, then edges). Built as it went, the builder
added each node when it made the state and each edge right after making its child. Here the lazy
graph is compared with that interleaved construction on seeded generated proofs: the same nodes and
edges with the same data, in the same order, and the same successor and predecessor order at every
node, with each state's hypotheses rendered when the builder made it. The offline pipeline must not build it (that is the point of building it late).
"""

from __future__ import annotations

import networkx as nx
from faithsieve.statetree.decompose import Scope, TreeBuilder
from faithsieve.statetree.models import ProofState, StateTree

from faithsieve.core.proof import Proof
from faithsieve.core.settings import Settings
from faithsieve.mathtext.ast import Rel
from faithsieve.pipeline import Pipeline
from tests.statetree.test_tree_records import _PROOFS


class _Eager(TreeBuilder):
    """The builder, also rendering each state's hypotheses at the moment it makes the state (as it
    used to: facts as text, then ``name = value`` for the values in scope, the last 12 of each)."""

    def __init__(self, proof: Proof) -> None:
        super().__init__(proof)
        self.states: dict[str, dict[str, object]] = {}

    def new_state(self, scope: Scope, goal: str = "") -> str:
        hyps = tuple(str(x) for x in scope.facts[-12:]) + tuple(f"{k} = {v}" for k, v in list(scope.env.items())[-12:])
        sid = super().new_state(scope, goal)
        self.states[sid] = ProofState(id=sid, hypotheses=hyps, goal=goal, branch=scope.branch).model_dump()
        return sid


def _built_as_it_went(b: _Eager) -> nx.DiGraph:
    """The graph with each edge added right after its child node, as the builder used to add them."""
    g = nx.DiGraph()
    after_child = {edge.child: (edge.parent, edge) for edge in b.edges}
    for node, *_ in b.node_records:
        g.add_node(node, state=b.states[node])
        if node in after_child:
            parent, edge = after_child[node]
            g.add_edge(parent, node, edge=edge.model_dump())
    return g


def test_lazy_graph_is_the_graph_built_as_it_went() -> None:
    checked = relations = values = 0
    for proof in _PROOFS:
        b = _Eager(proof)
        tree = b.build()
        assert tree.__dict__["_graph"] is None  # not built yet
        expected = _built_as_it_went(b)
        g = tree.graph
        assert tree.graph is g  # built once
        assert list(g.nodes(data=True)) == list(expected.nodes(data=True))
        assert list(g.edges(data=True)) == list(expected.edges(data=True))
        for node in g:
            assert list(g.successors(node)) == list(expected.successors(node))
            assert list(g.predecessors(node)) == list(expected.predecessors(node))
        assert {d["edge"]["id"]: (u, v) for u, v, d in g.edges(data=True)} == {e.id: (e.parent, e.child) for e in tree.edges}
        checked += len(tree.edges)
        relations += sum(isinstance(x, Rel) for _, facts, *_ in b.node_records for x in facts)
        values += sum(len(vals) for _, _, vals, *_ in b.node_records)
    assert checked > 500
    assert relations > 500 and values > 500  # relations and values are rendered late, not only texts


def test_given_graph_is_kept() -> None:
    g = nx.DiGraph()
    g.add_node("s0", state={"id": "s0"})
    tree = StateTree(graph=g, edges=[])
    assert tree.graph is g and tree.state("s0").id == "s0"


def test_offline_pipeline_never_builds_the_graph(monkeypatch) -> None:
    real = StateTree.from_records.__func__  # type: ignore[attr-defined]

    def spy(cls, *args, **kwargs):  # type: ignore[no-untyped-def]
        tree = real(cls, *args, **kwargs)
        trees.append(tree)
        return tree

    trees: list[StateTree] = []
    monkeypatch.setattr(StateTree, "from_records", classmethod(spy))
    pipeline = Pipeline(Settings())
    for proof in _PROOFS[:20]:
        pipeline.localize(proof)
    assert len(trees) == 20
    assert all(t.__dict__["_graph"] is None for t in trees)
