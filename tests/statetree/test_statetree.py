"""Decomposition into EdgeUnits and the proof-state tree."""

import json

import networkx as nx
from faithsieve.statetree.decompose import decompose
from faithsieve.statetree.models import TransitionType

from faithsieve.split import proof_from_steps


def types(problem: str, steps: list[str]) -> list[tuple[int, str]]:
    tree = decompose(proof_from_steps(problem, steps))
    return [(e.step, e.type.value) for e in tree.edges]


def test_chain_links_are_separate_edges() -> None:
    tree = decompose(proof_from_steps("p", ["We get 2 + 3 = 5 = 10 / 2."]))
    assert [(e.type, e.text) for e in tree.edges] == [
        (TransitionType.COMPUTATION, "2 + 3 = 5"), (TransitionType.COMPUTATION, "5 = 10 / 2")]
    e0 = tree.edges[0]
    assert "We get 2 + 3 = 5 = 10 / 2."[e0.span[0] : e0.span[1]] == e0.text


def test_definitions_derivations_and_narration() -> None:
    got = types("Solve 2x + 3 = 7.", ["Let x be the number.", "Then 2x + 3 = 7.", "Subtracting, 2x = 4.", "So x = 2.",
                                      "We are done.", "The answer is 2."])
    assert got == [(1, "definition"), (2, "claim"), (3, "derivation"), (4, "definition"), (5, "narration"),
                   (6, "conclusion")]


def test_values_accumulate_and_scope_to_recent_steps() -> None:
    tree = decompose(proof_from_steps("p", ["So p = 1.5.", "The notebook costs 2p + 1 = 4 dollars."]))
    ctx = tree.contexts[tree.edges[1].id]
    assert str(ctx.env["p"]) == "3/2"


def test_hypotheses_are_not_facts() -> None:
    tree = decompose(proof_from_steps("p", ["If x = 3 then x + 1 = 4.", "So x + 1 = 9."]))
    assert all("x" not in tree.contexts[e.id].env for e in tree.edges)


def test_case_split_branches_from_one_state() -> None:
    steps = ["Case 1: n is even. Then n = 2k.", "Case 2: n is odd. Then n = 2k + 1."]
    tree = decompose(proof_from_steps("Let n be an integer.", steps))
    cases = [e for e in tree.edges if e.type == TransitionType.CASE]
    split = [e for e in tree.edges if e.type == TransitionType.CASE_SPLIT]
    assert len(split) == 1 and len(cases) == 2
    assert cases[0].parent == cases[1].parent == split[0].child
    branches = [tree.graph.nodes[c.child]["state"]["branch"] for c in cases]
    assert branches[0].startswith("n is even") and branches[1].startswith("n is odd")
    cov = [tree.contexts[e.id].coverage for e in tree.edges if tree.contexts[e.id].coverage]
    assert cov and cov[0].variable == "n"


def test_tree_exports_as_node_link_json() -> None:
    tree = decompose(proof_from_steps("p", ["2 + 2 = 4", "so 4 * 2 = 8"]))
    data = json.loads(json.dumps(tree.node_link()))
    assert len(data["nodes"]) == len(tree.edges) + 1
    assert nx.is_tree(tree.graph.to_undirected())


def test_edges_of_step_index_matches_a_scan_and_follows_new_edges() -> None:
    steps = ["2 + 3 = 5 and 5 * 2 = 10.", "We are done.", "So 10 - 4 = 6 = 12 / 2."]
    tree = decompose(proof_from_steps("p", steps))
    for k in range(0, len(steps) + 2):
        assert tree.edges_of_step(k) == [e for e in tree.edges if e.step == k]
    extra = tree.edges[0].model_copy(update={"id": "e99", "step": 2})
    tree.edges.append(extra)
    assert tree.edges_of_step(2)[-1] is extra
    tree.edges = [extra]
    assert tree.edges_of_step(1) == [] and tree.edges_of_step(2) == [extra]


def test_synthesis_reads_each_edge_once() -> None:
    """Step reports are built from one index: each EdgeUnit is visited a constant number of
    times however many steps there are (it was once a scan of every edge per step)."""
    from faithsieve.synthesis import step_reports

    proof = proof_from_steps("p", [f"{k} + 1 = {k + 1}." for k in range(1, 121)])
    tree = decompose(proof)
    reads = 0

    class Counting(list):
        def __iter__(self):
            nonlocal reads
            for e in list.__iter__(self):
                reads += 1
                yield e

    tree.edges = Counting(tree.edges)
    reports, coverage = step_reports(proof, tree, [])
    assert coverage.edges == len(tree.edges) == 120
    assert [len(r.edges) for r in reports] == [1] * 120
    assert reads <= 3 * len(tree.edges)
