"""The tree builder's shortcuts record exactly what the long way records.

``decompose`` writes each node's state and each edge's record into the graph as plain dicts built
directly (not through ``ProofState(...).model_dump()`` / ``EdgeUnit.model_dump()``), hands the
variables it read for a relation on to the extractor (``EdgeContext.rel_vars``), shares one copy of
the values' origins among the links of a chain until a link changes them, and the extractor asks
the readings module once per formula. Each is compared here with the long way on seeded generated
proofs (chains, definitions, derivations, cases, rounding, named quantities).
"""

from __future__ import annotations

import random

from faithsieve.obligations.extraction.edgeunits import _from_edge, extract_obligations
from faithsieve.statetree.decompose import decompose
from faithsieve.statetree.models import EdgeUnit, ProofState

from faithsieve.core.proof import Proof, Step
from faithsieve.mathtext.ast import variables

_PIECES = [
    "Let $x$ be the number of apples.", "So $x = 5$.", "Then $2x + 3 = 13$.", "$3 \\times 4 = 12 = 12 + 0$.",
    "Case 1: $n$ is even.", "Case 2: $n$ is odd.", "Therefore $y = 2x - 1 = 9$.", "Total cost = 3 × 4.",
    "Total cost = 12.", "\\[ (x+1)^2 = x^2 + 2x + 1 \\]", "\\[ = x^2 + 1 \\]", "We get $7 / 3 \\approx 2.33$.",
    "Suppose $a = 2$.", "$\\log 100 = 2$", "$\\sin 30 = 0.5$", "Substituting, $x + y = 5 + 4 = 9$.",
    "so $y = 4$", "Hence $x - 1 = 4$, so $x = 5$.", "The answer is $\\boxed{9}$.", "$1,200 + 300 = 1500$",
    "In base 8, $7 + 1 = 10$.", "Thus $a = 3$ and $b = 4$.", "Since $a + b = 7$ and $a - b = -1$,",
    "which at $x = 2$ equals $12$", "$x = 2.5$ so $x \\approx 3$", "Not $5 + 5 = 11$.",
]


def _proofs(n: int, seed: int) -> list[Proof]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        steps = [Step(index=i + 1, text=" ".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 4))))
                 for i in range(rng.randint(1, 6))]
        problem = rng.choice(["Find x if x + 2 = 7 and x is an integer.", "A farmer has 5 cows.", "Solve $2y = 8$."])
        out.append(Proof(problem=problem, steps=steps))
    return out


_PROOFS = _proofs(120, seed=7)


def test_graph_records_are_the_models_dumps() -> None:
    seen_states = seen_edges = 0
    for proof in _PROOFS:
        tree = decompose(proof)
        for _node, data in tree.graph.nodes(data=True):
            state = ProofState.model_validate(data["state"])
            assert data["state"] == state.model_dump() and type(data["state"]["hypotheses"]) is tuple
            seen_states += 1
        for _, _, data in tree.graph.edges(data=True):
            edge = EdgeUnit.model_validate(data["edge"])
            assert data["edge"] == edge.model_dump()
            assert edge in tree.edges
            seen_edges += 1
    assert seen_states > 500 and seen_edges > 300


def test_relation_variables_handed_on_are_the_relations_own() -> None:
    handed = 0
    for proof in _PROOFS:
        tree = decompose(proof)
        for ctx in tree.contexts.values():
            if ctx.rel_vars is not None:
                assert ctx.rel is not None and ctx.rel_vars == variables(ctx.rel.lhs) | variables(ctx.rel.rhs)
                handed += 1
    assert handed > 300


def test_one_origin_copy_per_chain_matches_a_copy_per_link() -> None:
    """A link's ``env_origin``/``env_steps`` are what the scope held when that link was read: a definition
    earlier in the same chain (``x = 5 = y``) is seen by the links after it, as with a copy per link."""
    proof = Proof(problem="A farmer has cows.", steps=[Step(index=1, text="Let $x = 5$."),
                                                      Step(index=2, text="So $x = 7 = x + 0$ and $y = x$.")])
    tree = decompose(proof)
    ctxs = [tree.contexts[e.id] for e in tree.edges if e.step == 2 and tree.contexts[e.id].rel is not None]
    assert ctxs[0].env_origin.get("x", "").startswith("step 1")
    assert ctxs[1].env_origin["x"].startswith("step 2") and ctxs[1].env_steps["x"] == 2


def test_per_formula_readings_match_per_edge_readings() -> None:
    compared = 0
    for proof in _PROOFS:
        tree = decompose(proof)
        obs = extract_obligations(tree)
        # each edge on its own (a fresh cache per edge): what extract_obligations gave before it kept one per tree
        alone = [ob for e in tree.edges if (ob := _from_edge(e, tree.contexts[e.id], "o")) is not None]
        assert [ob.model_copy(update={"id": "o"}) for ob in obs] == alone
        compared += sum(bool(ob.ambiguity) for ob in obs)
    assert compared > 10  # the notes were asked about formulas with readings and guesses too


def test_readings_asked_only_for_edges_that_get_an_obligation(monkeypatch) -> None:
    """The extractor asks for a formula's readings only when one of its edges gets an obligation, and
    each obligation carries what the readings module says of its formula, asked directly."""
    import faithsieve.obligations.extraction.edgeunits as extract
    from faithsieve.obligations.extraction.readings import (
        guessed_reading,
        notation_readings,
        notation_written,
    )

    asked: list[int] = []
    real = extract.guessed_reading

    def counted(f, before, after):  # type: ignore[no-untyped-def]
        asked.append(id(f))
        return real(f, before, after)

    monkeypatch.setattr(extract, "guessed_reading", counted)
    skipped = checked = 0
    for proof in _PROOFS:
        tree = decompose(proof)
        asked.clear()
        obs = {ob.edge: ob for ob in extract_obligations(tree)}
        with_obligation = {id(tree.contexts[e].formula) for e in obs}
        assert set(asked) <= with_obligation
        for e in tree.edges:
            ctx = tree.contexts[e.id]
            if e.id not in obs:
                skipped += ctx.formula is not None and id(ctx.formula) not in with_obligation
                continue
            ob = obs[e.id]
            if ctx.formula is None or ctx.rel is None:
                continue
            readings, ambiguity = notation_readings(ctx.rel, ctx.formula, ctx.link) if notation_written(ctx.formula) else ((), "")
            guessed = guessed_reading(ctx.formula, *ctx.around)
            if guessed:
                readings, ambiguity = (), guessed
            assert (ob.readings, ob.ambiguity) == (readings, ambiguity)
            checked += 1
    assert skipped > 20 and checked > 100  # formulas with no obligation were met, and many with one
