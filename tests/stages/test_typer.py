"""Typed obligation discovery: the pure typing rules and bundles, and the LLM instantiation."""

from __future__ import annotations

import json

import networkx as nx
import pytest
from faithsieve.obligations.kinds.models import ObligationKind
from faithsieve.statetree.models import EdgeUnit, ProofState, StateTree, TransitionType

from faithsieve.core.proof import Proof, Step
from faithsieve.core.settings import Settings
from faithsieve.stages.base import Review, RunContext, ScanResult
from faithsieve.stages.typer import (
    LLMTyper,
    bundle,
    case_kind,
    infer_kind,
    new_facts,
    statement_of,
)

K = ObligationKind
S0 = ProofState(id="s0", hypotheses=("hn: n is a positive integer", "hEq: 2^n + 1 = 3^m"), goal="(n, m) = (1, 1)")


def edge(text: str = "", **kw: object) -> EdgeUnit:
    base: dict[str, object] = {"id": "e1", "type": TransitionType.DERIVATION, "parent": "s0", "child": "s1",
                               "step": 1, "span": (0, len(text)), "text": text}
    base.update(kw)
    return EdgeUnit(**base)  # type: ignore[arg-type]


def tree_of(states: list[ProofState], edges: list[EdgeUnit]) -> StateTree:
    g = nx.DiGraph()
    for s in states:
        g.add_node(s.id, state=s.model_dump())
    for e in edges:
        for c in e.children or (e.child,):
            g.add_edge(e.parent, c, id=e.id)
    return StateTree(graph=g, edges=edges)


# ---------------------------------------------------------------------------------------
# infer_kind: one row per rule, in the order of precedence


@pytest.mark.parametrize(("e", "kind"), [
    # case analysis wins over everything (structure or words)
    (edge("Split on the parity of m.", type=TransitionType.CASE_SPLIT, children=("s1", "s2")), K.CASE_SPLIT),
    (edge("Case 1: m is odd; take k = 2.", new_conditions=("h: m odd",)), K.CASE_SPLIT),
    (edge("We consider m odd.", pattern="case_split_2"), K.CASE_SPLIT),
    # witness / chosen object
    (edge("Take k = (m - 1)/2.", new_conditions=("hk: m = 2k + 1",)), K.WITNESS),
    (edge("Let x be the largest root.", goal_relation="same_goal"), K.WITNESS),
    (edge("Define f(t) = t^2 - 1."), K.WITNESS),
    (edge("It suffices to exhibit one.", pattern="existential_instantiation"), K.WITNESS),
    (edge("x = 5 for the new unknown.", type=TransitionType.DEFINITION), K.WITNESS),
    # goal changes + new conditions
    (edge("Since 2^n ≡ 2 mod 4, it suffices to show n = 1.", new_conditions=("h4: 2^n ≡ 2 mod 4",),
          goal_relation="lemma_subgoal"), K.FACT_PLUS_REDUCTION),
    # goal changes only
    (edge("It suffices to prove both directions.", goal_relation="iff_split"), K.GOAL_REDUCTION),
    (edge("By induction on n.", type=TransitionType.INDUCTION), K.GOAL_REDUCTION),
    # rewrite cues
    (edge("Simplifying, the left side becomes 3x + 1."), K.REWRITE),
    (edge("Expanding gives x^2 + 2x + 1."), K.REWRITE),
    (edge("12 + 22 = 35", type=TransitionType.COMPUTATION), K.REWRITE),
    # otherwise: derived fact
    (edge("Hence n is even.", new_conditions=("h: n even",), goal_relation="same_goal"), K.DERIVED_FACT),
    (edge("Therefore m ≥ 2."), K.DERIVED_FACT),
    # words that look like cues but are not
    (edge("Let's note that n ≥ 2 follows."), K.DERIVED_FACT),
    (edge("Taking logs of both sides, n log 2 < m log 3."), K.DERIVED_FACT),
    (edge("The factorial 5! equals 120."), K.DERIVED_FACT),
])
def test_infer_kind_table(e: EdgeUnit, kind: ObligationKind) -> None:
    assert infer_kind(e, None) == kind


def test_infer_kind_reads_goal_change_from_states_when_relation_is_absent() -> None:
    after = ProofState(id="s1", hypotheses=(*S0.hypotheses, "h2: n ≥ 2"), goal="n = 1")
    e = edge("So n ≥ 2 and we must show n = 1.")
    assert infer_kind(e, None, before=S0, after=after) == K.FACT_PLUS_REDUCTION
    only_goal = ProofState(id="s1", hypotheses=S0.hypotheses, goal="n = 1")
    assert infer_kind(e, None, before=S0, after=only_goal) == K.GOAL_REDUCTION
    # an explicit same_goal relation is trusted over a reworded goal
    e_same = edge("So n ≥ 2.", goal_relation="same_goal")
    assert infer_kind(e_same, None, before=S0, after=after) == K.DERIVED_FACT
    # closing the goal is not a change of goal
    closed = ProofState(id="s1", hypotheses=S0.hypotheses, goal="")
    assert infer_kind(edge("Thus the pair is (1, 1)."), None, before=S0, after=closed) == K.DERIVED_FACT


def test_infer_kind_uses_review_error_type_only_as_last_resort() -> None:
    r = Review(edge="e1", verdict="incorrect", error_type="arithmetic slip")
    assert infer_kind(edge("Thus the total is 47."), r) == K.REWRITE
    assert infer_kind(edge("Case 2: n odd."), r) == K.CASE_SPLIT


@pytest.mark.parametrize(("e", "kind"), [
    (edge("The case m even is impossible since 3^m ≡ 1 mod 4."), K.BRANCH_ELIMINATION),
    (edge("The cases n < 0, n = 0, n > 0 form a partition."), K.OVERLAP_PARTITION),
    (edge("Split on parity.", children=("s1", "s2")), K.CASE_SPLIT),
    (edge("Case 1: m odd, so 3^m ≡ 3 mod 4.", type=TransitionType.CASE), K.JUSTIFICATION),
])
def test_case_kind(e: EdgeUnit, kind: ObligationKind) -> None:
    assert case_kind(e) == kind


# ---------------------------------------------------------------------------------------
# bundle


def test_statement_of_strips_names() -> None:
    assert statement_of("h_n2: n ≥ 2") == "n ≥ 2"
    assert statement_of("n ≥ 2") == "n ≥ 2"


def test_fact_plus_reduction_checks_the_fact_first() -> None:
    e = edge("Since 2^n ≡ 2 mod 4, it suffices to show n = 1.", new_conditions=("h4: 2^n ≡ 2 mod 4",),
             goal_relation="lemma_subgoal")
    after = ProofState(id="s1", hypotheses=(*S0.hypotheses, "h4: 2^n ≡ 2 mod 4"), goal="n = 1")
    fact, reduction = bundle(e, S0, after, K.FACT_PLUS_REDUCTION)
    assert fact.kind == K.DERIVED_FACT and fact.claim == "2^n ≡ 2 mod 4"
    assert all("2^n ≡ 2 mod 4" not in p for p in fact.premises)
    assert reduction.kind == K.GOAL_REDUCTION
    assert "2^n ≡ 2 mod 4" in reduction.premises
    assert reduction.depends_on == 0
    assert "n = 1" in reduction.claim and "(n, m) = (1, 1)" in reduction.claim


def test_derived_fact_never_uses_its_own_fact_even_if_the_before_state_leaks_it() -> None:
    leaky = ProofState(id="s0", hypotheses=(*S0.hypotheses, "h2: n ≥ 2"), goal=S0.goal)
    e = edge("Hence n ≥ 2.", new_conditions=("h2: n ≥ 2",))
    (sk,) = bundle(e, leaky, leaky, K.DERIVED_FACT)
    assert sk.claim == "n ≥ 2"
    assert sk.premises == S0.hypotheses


def test_edge_text_is_the_claim_when_nothing_more_precise_is_declared() -> None:
    (sk,) = bundle(edge("Therefore m ≥ 2."), S0, S0, K.DERIVED_FACT)
    assert sk.claim == "Therefore m ≥ 2." and sk.premises == S0.hypotheses


def test_new_facts_fall_back_to_hypotheses_gained() -> None:
    after = ProofState(id="s1", hypotheses=(*S0.hypotheses, "m is odd"), goal=S0.goal)
    assert new_facts(edge("m is odd"), S0, after) == ("m is odd",)


def test_bundle_per_kind_shapes() -> None:
    after = ProofState(id="s1", hypotheses=S0.hypotheses, goal="n = 1")
    (red,) = bundle(edge("It suffices to show n = 1."), S0, after, K.GOAL_REDUCTION)
    # direction: the new goal must imply the old one, not the reverse
    assert red.claim.index("n = 1") < red.claim.index("(n, m) = (1, 1)")
    (wit,) = bundle(edge("Take k = 3.", new_conditions=("hk: k = 3",)), S0, S0, K.WITNESS)
    assert wit.kind == K.WITNESS and "k = 3" in wit.claim
    (cs,) = bundle(edge("Split on the parity of m.", children=("s1", "s2")), S0, S0, K.CASE_SPLIT)
    assert cs.kind == K.CASE_SPLIT
    branch = ProofState(id="s1", hypotheses=S0.hypotheses, goal=S0.goal, branch="m is odd")
    (just,) = bundle(edge("Case 1: m odd, so 3^m ≡ 3 mod 4.", type=TransitionType.CASE), S0, branch, K.CASE_SPLIT)
    assert just.kind == K.JUSTIFICATION
    assert any("m is odd" in p for p in just.premises)  # a branch hypothesis is assumed, not derived
    rw = bundle(edge("Expanding.", new_conditions=("a: x^2 = 4", "b: x = 2", "c: y = 1", "d: z = 0")), S0, S0,
                K.REWRITE)
    assert [s.claim for s in rw] == ["x^2 = 4", "x = 2", "y = 1"]  # capped at three claims


# ---------------------------------------------------------------------------------------
# LLMTyper over recorded answers


PROOF = Proof(problem="Find all positive integers n, m with 2^n + 1 = 3^m.",
              steps=(Step(index=1, text="Since 2^n ≡ 2 mod 4, it suffices to show n = 1."),
                     Step(index=2, text="Adding, 12 + 22 = 35.")))
E1 = edge("Since 2^n ≡ 2 mod 4, it suffices to show n = 1.", new_conditions=("h4: 2^n ≡ 2 mod 4",),
          goal_relation="lemma_subgoal")
S1 = ProofState(id="s1", hypotheses=(*S0.hypotheses, "h4: 2^n ≡ 2 mod 4"), goal="n = 1")
E2 = edge("Adding, 12 + 22 = 35.", id="e2", parent="s1", child="s2", step=2, new_conditions=("hs: 12 + 22 = 35",),
          goal_relation="same_goal")
S2 = ProofState(id="s2", hypotheses=(*S1.hypotheses, "hs: 12 + 22 = 35"), goal="n = 1")
TREE = tree_of([S0, S1, S2], [E1, E2])


def run(llm: object, scan: ScanResult, settings: Settings | None = None,
        typer: LLMTyper | None = None) -> tuple[list, RunContext]:
    ctx = RunContext(proof=PROOF, settings=settings or Settings(), llm=llm)  # type: ignore[arg-type]
    return (typer or LLMTyper()).obligations(ctx, TREE, scan), ctx


def test_typer_instantiates_slots_and_keeps_premises_its_own(scripted: type) -> None:
    e1 = {"obligations": [
        {"slot": 2, "claim": "If n = 1 then (n, m) = (1, 1).", "use_formal": True, "translation_confidence": 0.7,
         "priority": 0.4, "premises": ["anything the model likes"]},
        {"slot": 1, "claim": "For positive n with n ≥ 2, 2^n ≡ 0 mod 4; so 2^n ≡ 2 mod 4 forces n = 1.",
         "equation": None, "use_formal": "true", "translation_confidence": "0.8", "priority": 0.9,
         "extra_field": 1},
    ]}
    e2 = {"obligations": [{"slot": 1, "claim": "12 + 22 = 35", "equation": "12 + 22 = 35", "use_formal": False,
                           "translation_confidence": 1, "priority": 0.95}]}
    llm = scripted({"obligations": ["Sure! " + json.dumps(e1), "```json\n" + json.dumps(e2) + "\n```"]})
    obs, ctx = run(llm, ScanResult(window=("e1", "e2")))
    assert [o.id for o in obs] == ["e1.o1", "e1.o2", "e2.o1"]
    fact, reduction, arith = obs
    assert fact.kind == K.DERIVED_FACT and fact.priority == 0.9 and fact.use_formal is True
    assert "2^n ≡ 2 mod 4" not in " ".join(fact.premises)
    assert reduction.kind == K.GOAL_REDUCTION
    assert "anything the model likes" not in reduction.premises
    assert "2^n ≡ 2 mod 4" in reduction.premises and "e1.o1" in reduction.reason
    assert arith.equation == "12 + 22 = 35" and arith.step == 2 and arith.edge == "e2"
    assert not ctx.notes


def test_typer_unparsed_answer_keeps_skeletons(scripted: type) -> None:
    truncated = '{"obligations": [{"slot": 1, "claim": "2^n ≡ 2 mod 4 hol'
    refusal = "I cannot help with that request."
    llm = scripted({"obligations": [truncated, refusal]})
    obs, ctx = run(llm, ScanResult(window=("e1",)))
    assert [o.kind for o in obs] == [K.DERIVED_FACT, K.GOAL_REDUCTION]
    assert obs[0].claim == "2^n ≡ 2 mod 4"
    assert obs[0].equation is None
    assert any("unparsed" in n for n in ctx.notes)


def test_typer_wrong_types_are_unparsed(scripted: type) -> None:
    bad = json.dumps({"obligations": [{"slot": 1, "claim": ["a", "list"], "priority": "high"}]})
    obs, ctx = run(scripted({"obligations": [bad, bad]}), ScanResult(window=("e2",)))
    assert len(obs) == 1 and obs[0].claim == "12 + 22 = 35"
    assert any("unparsed" in n for n in ctx.notes)


def test_typer_missing_slot_uses_default_claim(scripted: type) -> None:
    only_one = json.dumps({"obligations": [{"slot": 1, "claim": "2^n ≡ 2 mod 4 for n = 1"}]})
    obs, ctx = run(scripted({"obligations": [only_one]}), ScanResult(window=("e1",)))
    assert obs[0].claim == "2^n ≡ 2 mod 4 for n = 1"
    assert obs[1].claim.index("n = 1") < obs[1].claim.index("(n, m) = (1, 1)")
    assert any("unfilled" in n for n in ctx.notes)


def test_flagged_unit_gets_contested_claim(scripted: type) -> None:
    review = Review(edge="e2", verdict="incorrect", suspicion=0.9, error_type="arithmetic", reason="12 + 22 is 34")
    answer = json.dumps({"obligations": [
        {"slot": 1, "claim": "12 + 22 = 35", "equation": "12 + 22 = 35"},
        {"slot": 2, "claim": "The sum of 12 and 22 is 35."},
    ]})
    obs, _ = run(scripted({"obligations": [answer]}), ScanResult(window=("e2",), reviews=(review,)))
    assert [o.kind for o in obs] == [K.REWRITE, K.CONTESTED_CLAIM]
    assert obs[1].claim == "The sum of 12 and 22 is 35."
    assert obs[1].premises == obs[0].premises
    assert "12 + 22 is 34" in obs[1].reason  # the reviewer's reason travels with the contested claim


def test_typer_skips_unknown_units_and_no_model(scripted: type) -> None:
    obs, ctx = run(None, ScanResult(window=("e9", "e2")))
    assert [o.id for o in obs] == ["e2.o1"]
    assert any("e9" in n for n in ctx.notes)
    assert any("unparsed" in n for n in ctx.notes)  # no model configured: defaults kept, said so


def test_typer_caps_obligations_per_proof(scripted: type) -> None:
    obs, ctx = run(scripted(default='{"obligations": []}'), ScanResult(window=("e1", "e2")),
                   typer=LLMTyper(max_obligations_per_proof=2))
    assert len(obs) == 2
    assert any("cap" in n for n in ctx.notes)


@pytest.mark.parametrize(("review", "scan", "safe"), [
    (Review(edge="e1", verdict="correct", suspicion=0.1), None, True),
    (Review(edge="e1", verdict="correct", suspicion=0.1), 0.9, False),      # the scan suspects it
    (Review(edge="e1", verdict="correct", suspicion=0.1, should_formalize=True), None, False),
    (Review(edge="e1", verdict="correct", suspicion=0.31), 0.1, False),      # just above the bound
    (Review(edge="e1", verdict="uncertain", suspicion=0.1), None, False),
    (None, 0.0, False),                                                      # never reviewed
])
def test_safe_units_get_no_obligations_call(review: Review | None, scan: float | None, safe: bool) -> None:
    from faithsieve.stages.typer import is_safe

    assert is_safe(review, scan) is safe
