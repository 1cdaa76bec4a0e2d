"""The language-model decomposer against recorded answers: faithful split, repair prevention, state tree."""

from __future__ import annotations

import json

import pytest
from faithsieve.statetree.models import TransitionType

from faithsieve.core.proof import Proof, Step
from faithsieve.core.settings import Settings
from faithsieve.llm.types import LLMError
from faithsieve.stages.base import RunContext
from faithsieve.stages.llm_decompose import (
    MAX_SUBSTEPS,
    CoarseDecomposer,
    LLMDecomposer,
    cut_step,
    issue_label,
    screen_repair,
    verbatim_partition,
)
from faithsieve.stages.tree_build import (
    SubStep,
    find_span,
    normalize_pattern,
    transition_type,
)

PROBLEM = "Find all integers n such that n^2 - 5n + 6 = 0 and n > 2."
STEP1 = "Factor the quadratic: n^2 - 5n + 6 = (n - 2)(n - 3), so n = 2 or n = 3."
STEP2 = "Since n > 2, only n = 3 remains."
STEP3 = "Therefore the answer is n = 3."
PROOF = Proof(problem=PROBLEM, steps=(Step(index=1, text=STEP1), Step(index=2, text=STEP2), Step(index=3, text=STEP3)))

CUTS = {"substeps": [
    {"id": "1.1", "step": 1, "start": "Factor the quadratic:", "scope": ""},
    {"id": "1.2", "step": 1, "start": "so n = 2 or", "scope": ""},
    {"id": "2.1", "step": 2, "start": "Since n > 2,", "scope": ""},
    {"id": "3.1", "step": 3, "start": "Therefore the answer", "scope": ""},
]}
PIECE1 = "Factor the quadratic: n^2 - 5n + 6 = (n - 2)(n - 3),"

TREE = {
    "states": [
        {"id": "s0", "conditions": [{"name": "h_eq", "statement": "n^2 - 5n + 6 = 0"}, {"name": "h_gt", "statement": "n > 2"}],
         "goal": "determine every such n", "branch": ""},
        {"id": "s1", "conditions": [], "goal": "", "branch": ""},
        {"id": "s2a", "conditions": [{"name": "h_n2", "statement": "n = 2"}], "branch": "n = 2"},
        {"id": "s2b", "conditions": [{"name": "h_n3", "statement": "n = 3"}], "branch": "n = 3"},
        {"id": "s3", "conditions": []},
        {"id": "s4", "conditions": []},
    ],
    "edges": [
        {"substep": "1.1", "parent": "s0", "children": ["s1"], "pattern": "simple_implication", "goal_relation": "same_goal",
         "new_conditions": [{"name": "h_fact", "statement": "n^2 - 5n + 6 = (n - 2)(n - 3)"}], "explanation": "factoring"},
        {"substep": "1.2", "parent": "s1", "children": ["s2a", "s2b"], "pattern": "case_split_2", "goal_relation": "case_split",
         "explanation": "zero product gives two cases"},
        {"substep": "2.1", "parent": "s2b", "children": ["s3"], "pattern": "simple_implication",
         "consumed_conditions": ["h_gt"], "new_conditions": ["h_only: n = 3"], "explanation": "discard n = 2"},
        {"substep": "3.1", "parent": "s3", "children": ["s4"], "pattern": "simple_implication", "explanation": "answer"},
    ],
}


def _ctx(llm: object, **settings: object) -> RunContext:
    return RunContext(proof=PROOF, settings=Settings(**settings), llm=llm)  # type: ignore[arg-type]


MERGED = {**CUTS, "states": TREE["states"], "edges": TREE["edges"]}  # a goal_relation the moves carry is ignored


def _llm(scripted, decompose=None, repair=None, tree=None):
    return scripted({"decompose_tree": decompose if decompose is not None else [json.dumps(MERGED)],
                     "repair_check": repair if repair is not None else ['{"flags": []}'],
                     "state_tree": tree if tree is not None else [json.dumps(TREE)]})


def _user(request) -> str:
    return request.messages[1].content


# ---------------------------------------------------------------------------------------
# Well-formed answers


def test_well_formed_answers_build_one_edge_per_substep(scripted):
    llm = _llm(scripted)
    ctx = _ctx(llm)
    d = LLMDecomposer().decompose(ctx)
    assert d.kind == "llm" and d.substeps == 4
    tree = d.tree
    assert [e.id for e in tree.edges] == ["e0", "e1", "e2", "e3"]
    assert [e.substep for e in tree.edges] == ["1.1", "1.2", "2.1", "3.1"]
    assert [e.step for e in tree.edges] == [1, 1, 2, 3]
    assert [e.type for e in tree.edges] == [TransitionType.DERIVATION, TransitionType.CASE_SPLIT,
                                            TransitionType.DERIVATION, TransitionType.DERIVATION]
    e0, e1, e2, _ = tree.edges
    assert STEP1[e0.span[0]:e0.span[1]] == PIECE1
    assert STEP1[e1.span[0]:e1.span[1]] == "so n = 2 or n = 3."
    assert e0.parent == "s0" and e0.new_conditions == ("h_fact: n^2 - 5n + 6 = (n - 2)(n - 3)",)
    # the split opens two branch children; the next sub-step continues in the second one
    assert len(e1.children) == 2 and e1.child == e1.children[0]
    assert e2.parent == e1.children[1]
    assert tree.state(e1.children[1]).branch == "n = 3"
    assert "h_n3: n = 3" in tree.state(e1.children[1]).hypotheses
    assert "h_n3: n = 3" not in tree.state(e1.children[0]).hypotheses
    # root conditions are inherited; a consumed condition leaves the context
    assert tree.state("s0").hypotheses == ("h_eq: n^2 - 5n + 6 = 0", "h_gt: n > 2")
    assert tree.state("s0").goal == "determine every such n"
    after = tree.state(e2.child).hypotheses
    assert "h_only: n = 3" in after and "h_gt: n > 2" not in after and "h_eq: n^2 - 5n + 6 = 0" in after
    # graph: every node but the root has exactly one parent; edges carry the EdgeUnit
    g = tree.graph
    assert all(g.in_degree(n) == 1 for n in g.nodes if n != "s0") and g.in_degree("s0") == 0
    assert g.edges["s0", e0.child]["edge"]["id"] == "e0"
    assert not tree.contexts
    assert ctx.notes == []


def test_one_call_does_split_and_tree(scripted):
    llm = _llm(scripted)
    LLMDecomposer().decompose(_ctx(llm))
    dec = llm.calls("decompose_tree")[0]
    assert PROBLEM in _user(dec) and all(t in _user(dec) for t in (STEP1, STEP2, STEP3))
    assert dec.json_schema is not None and PROBLEM not in dec.messages[0].content  # fixed instructions first
    # the pieces are the step cut in two, word for word: no repair check, and the moves need no second call
    assert llm.calls("repair_check") == [] and llm.calls("state_tree") == []


def test_no_moves_listed_is_a_line_of_plain_derivations(scripted):
    whole = {"substeps": [{"id": f"{i}.1", "step": i, "start": ""} for i in (1, 2, 3)], "edges": []}
    llm = scripted({"decompose_tree": [json.dumps(whole)]})
    ctx = _ctx(llm)
    d = LLMDecomposer().decompose(ctx)
    assert [r.prompt_id for r in llm.requests] == ["decompose_tree"] and d.substeps == 3
    assert [e.text for e in d.tree.edges] == [STEP1, STEP2, STEP3] and ctx.notes == []
    assert [e.parent for e in d.tree.edges[1:]] == [e.child for e in d.tree.edges[:-1]]


@pytest.mark.parametrize("text, starts, pieces, lost", [
    ("Since 2x + 1 = 7, we get 2x = 6, so x = 3.", ["we get", "so x"], ["Since 2x + 1 = 7,", "we get 2x = 6,", "so x = 3."], []),
    # a start inside a formula, next to an operator, or mid-word is not a cut
    ("We have 1024 + 100 = 1124, and 2 divides it.", ["= 1124", "100 = 1124"], ["We have 1024 + 100 = 1124, and 2 divides it."], [0, 1]),
    ("Let $x = 2$ so $y = x + 1$.", ["y = x"], ["Let $x = 2$ so $y = x + 1$."], [0]),
    ("Thus ab = 3.", ["b = 3"], ["Thus ab = 3."], [0]),
    # white space runs compare equal, a trailing ellipsis is ignored, order is kept
    ("First A.  Then\nB. Then C.", ["Then B. ...", "Then C"], ["First A.", "Then\nB.", "Then C."], []),
    ("A. B. A again.", ["A again", "B."], ["A. B.", "A again."], [1]),
])
def test_cut_step(text, starts, pieces, lost):
    got, missed = cut_step(text, starts)
    assert (got, missed) == (pieces, lost)
    assert verbatim_partition(text, got)


def test_verbatim_partition():
    assert verbatim_partition("So x = 1, hence y = 2.", ["So x = 1,", "hence y = 2."])
    assert verbatim_partition("The terms a … b.", ["The terms a", "... b."])  # compared as cleaned text
    assert not verbatim_partition("So x = 1, hence y = 2.", ["So x = 1,", "hence y = 3."])
    assert not verbatim_partition("So x = 1, hence y = 2.", ["hence y = 2."])


# ---------------------------------------------------------------------------------------
# Shapes real models return


@pytest.mark.parametrize("wrap", [
    lambda s: f"Here is the decomposition you asked for:\n\n{s}\n\nLet me know if you need more.",
    lambda s: f"```json\n{s}\n```",
])
def test_json_in_prose_or_fence(scripted, wrap):
    llm = _llm(scripted, decompose=[wrap(json.dumps(MERGED))])
    d = LLMDecomposer().decompose(_ctx(llm))
    assert d.kind == "llm" and d.substeps == 4 and len(d.tree.edges) == 4


def test_extra_keys_and_harmless_type_slips(scripted):
    answer = json.loads(json.dumps(MERGED))
    answer["reasoning"] = "I split step 1 into two."
    answer["substeps"][0].update(confidence=0.9, step="1")
    answer["substeps"][1]["id"] = 1.2
    answer["substeps"][2] = {"id": "2.1", "start": "Since", "scope": None}  # step left out: read from the id
    answer["substeps"][3]["step"] = 3.0
    answer["edges"][0]["children"] = "s1"  # a bare string instead of a list
    answer["edges"][3]["substep"] = 3.1  # a number instead of a string
    llm = _llm(scripted, decompose=[json.dumps(answer)])
    ctx = _ctx(llm)
    d = LLMDecomposer().decompose(ctx)
    assert d.kind == "llm" and [e.substep for e in d.tree.edges] == ["1.1", "1.2", "2.1", "3.1"]
    assert ctx.notes == []


def test_grouped_answer_is_flattened(scripted):
    grouped = {"steps": [{"step": 1, "substeps": ["Factor the", "so n = 2"]},
                         {"step": 2, "substeps": [{"id": "2.1", "start": "Since"}]},
                         {"step": 3, "substeps": ["Therefore"]}], "edges": []}
    llm = _llm(scripted, decompose=[json.dumps(grouped)])
    d = LLMDecomposer().decompose(_ctx(llm))
    assert d.substeps == 4 and [e.substep for e in d.tree.edges] == ["1.1", "1.2", "2.1", "3.1"]


def test_wrong_type_is_retried_then_succeeds(scripted):
    bad = json.dumps({"substeps": [{"id": "1.1", "step": "first", "start": "Factor"}]})
    llm = _llm(scripted, decompose=[bad, json.dumps(MERGED)])
    d = LLMDecomposer().decompose(_ctx(llm))
    calls = llm.calls("decompose_tree")
    assert len(calls) == 2 and "could not be used" in calls[1].messages[-1].content
    assert d.substeps == 4


WHOLE_TREE = {"states": [{"id": "s0"}], "edges": [
    {"substep": "1.1", "parent": "s0", "children": ["a"]}, {"substep": "2.1", "parent": "a", "children": ["b"]},
    {"substep": "3.1", "parent": "b", "children": ["c"]}]}


@pytest.mark.parametrize("answers, reason", [
    ([json.dumps({"substeps": "1.1 factor; 1.2 solve"})] * 2, "answer unusable"),  # wrong type, twice
    (['{"substeps": [{"id": "1.1", "step": 1, "start": "n^2 - 5n'] * 2, "not closed"),  # truncated
    (["I'm sorry, but I can't help with splitting this proof."] * 2, "no JSON object"),  # refusal
    ([LLMError("connection refused")], "endpoint"),
])
def test_unusable_split_falls_back_to_whole_steps(scripted, answers, reason):
    llm = _llm(scripted, decompose=answers, tree=[json.dumps(WHOLE_TREE)])
    ctx = _ctx(llm)
    d = LLMDecomposer().decompose(ctx)
    assert any(n.startswith("decompose:") and reason in n for n in ctx.notes), ctx.notes
    assert llm.calls("repair_check") == []
    assert [e.text for e in d.tree.edges] == [STEP1, STEP2, STEP3]
    assert [e.substep for e in d.tree.edges] == ["1.1", "2.1", "3.1"]
    assert [e.span for e in d.tree.edges] == [(0, len(STEP1)), (0, len(STEP2)), (0, len(STEP3))]
    # the tree prompt saw the whole steps
    assert STEP2 in _user(llm.calls("state_tree")[0])


@pytest.mark.parametrize("substeps, reason", [
    ([1, 5, 3], "outside"),
    ([1, 3, 2], "after step 3"),
    ([0, 2, 3], "outside"),
])
def test_bad_pointers_reject_the_split(scripted, substeps, reason):
    answer = {"substeps": [{"id": f"{k}.1", "step": k, "start": ""} for k in substeps]}
    llm = _llm(scripted, decompose=[json.dumps(answer)], tree=[json.dumps(WHOLE_TREE)])
    ctx = _ctx(llm)
    d = LLMDecomposer().decompose(ctx)
    assert any("split rejected" in n and reason in n for n in ctx.notes), ctx.notes
    assert [e.text for e in d.tree.edges] == [STEP1, STEP2, STEP3]


def test_a_step_no_cut_names_stays_whole(scripted):
    answer = {"substeps": [{"id": "1.1", "step": 1, "start": ""}, {"id": "3.1", "step": 3, "start": ""}], "edges": []}
    llm = _llm(scripted, decompose=[json.dumps(answer)])
    d = LLMDecomposer().decompose(_ctx(llm))
    assert [e.text for e in d.tree.edges] == [STEP1, STEP2, STEP3]


def test_blank_step_need_not_be_covered(scripted):
    proof = Proof(problem=PROBLEM, steps=(Step(index=1, text=STEP1), Step(index=2, text="   "), Step(index=3, text=STEP3)))
    answer = {"substeps": [{"id": "1.1", "step": 1, "start": ""}, {"id": "3.1", "step": 3, "start": ""}],
              "edges": [{"substep": "1.1", "parent": "s0", "children": ["a"]}, {"substep": "3.1", "parent": "a", "children": ["b"]}]}
    llm = scripted({"decompose_tree": [json.dumps(answer)]})
    ctx = RunContext(proof=proof, settings=Settings(), llm=llm)
    d = LLMDecomposer().decompose(ctx)
    assert [e.step for e in d.tree.edges] == [1, 3] and ctx.notes == []


def test_too_many_substeps_fall_back(scripted):
    many = {"substeps": [{"id": f"1.{i}", "step": 1, "start": "n = 2"} for i in range(MAX_SUBSTEPS + 1)]
            + [{"id": "2.1", "step": 2, "start": ""}, {"id": "3.1", "step": 3, "start": ""}]}
    llm = _llm(scripted, decompose=[json.dumps(many)], tree=[json.dumps(WHOLE_TREE)])
    ctx = _ctx(llm)
    d = LLMDecomposer().decompose(ctx)
    assert any("limit 400" in n for n in ctx.notes) and d.substeps == 3


def test_a_start_not_in_the_step_is_noted_and_merged(scripted):
    answer = {"substeps": [{"id": "1.1", "step": 1, "start": "Factor"}, {"id": "1.2", "step": 1, "start": "so n = 4"},
                           {"id": "2.1", "step": 2, "start": ""}, {"id": "3.1", "step": 3, "start": ""}], "edges": []}
    llm = _llm(scripted, decompose=[json.dumps(answer)])
    ctx = _ctx(llm)
    d = LLMDecomposer().decompose(ctx)
    assert [e.text for e in d.tree.edges] == [STEP1, STEP2, STEP3]
    assert any("'so n = 4' not found" in n for n in ctx.notes), ctx.notes


# ---------------------------------------------------------------------------------------
# Repair prevention


@pytest.mark.parametrize("original, pieces, expected", [
    # changed constant
    ("Since 2x + 1 = 7, we get 2x = 6, so x = 3.", ["2x + 1 = 7", "2x = 6", "x = 4"], ["changed constant 4"]),
    # dropped decisive word
    ("The only solution is x = 2.", ["The solution is x = 2."], ["dropped decisive word 'only'"]),
    ("Hence n is not prime.", ["Hence n is prime."], ["dropped decisive word 'not'"]),
    ("Every term is positive, so the sum is positive.", ["The terms are positive", "so the sum is positive"],
     ["dropped decisive word 'all'"]),
    ("x must be at least 3.", ["x is at least 3."], ["dropped decisive word 'must'"]),
    # changed relation
    ("So x < 5.", ["So x ≤ 5."], ["changed relation ≤"]),
    ("Thus a = b.", ["Thus a ≥ b."], ["changed relation ≥"]),
    # faithful splits
    ("Since 2x + 1 = 7, we get 2x = 6, so x = 3.", ["2x + 1 = 7", "we get 2x = 6", "so x = 3."], []),
    ("The only solution is x = 2.", ["The only solution is x = 2."], []),
    ("We have x \\leq 5 and y \\neq 0.", ["x ≤ 5", "y ≠ 0"], []),
    ("The total is 1,000 dollars.", ["The total is 1000 dollars."], []),
    ("The price is $2.50 each.", ["The price is $2.5 each."], []),
    ("Here x² = 4.", ["x^2 = 4"], []),
    ("x is at least 3, which is sufficient.", ["x ≥ 3", "which is sufficient"], []),
    ("n is odd, so n cannot be 2.", ["n is odd", "so n cannot be 2."], []),
    # conservative: a relation written in words in the original counts as new when a piece uses a symbol
    ("The total is 12.", ["total = 12"], ["changed relation ="]),
    # a number the step states that no piece keeps
    ("So x = 2 or x = 4.", ["So x = 2."], ["dropped constant 4"]),
    ("The larger root is 4.", ["The larger root is the bigger one."], ["dropped constant 4"]),
    # a piece made of words the proof never used (a model copying its instructions)
    ("The larger root is \\( \\boxed{4} \\).", ["case n even", "the larger root is 4"],
     ["words not in the proof: case, even"]),
])
def test_repair_screen(original, pieces, expected):
    issues = screen_repair(original, pieces)
    if not expected:
        assert issues == []
    for want in expected:
        assert any(i.startswith(want) for i in issues), issues


def test_scope_words_from_earlier_context_are_not_foreign():
    # "In the case m even" restates a scope that the proof opened earlier: allowed
    context = "Problem: show 2^n + 1 = 3^m. Step 1: Split on the parity of m; first the case m is even."
    assert screen_repair("Then 3^m is 1 mod 4.", ["In the case m even, 3^m is 1 mod 4."], context) == []
    assert screen_repair("Then 3^m is 1 mod 4.", ["In the case m even, 3^m is 1 mod 4."]) != []


@pytest.mark.parametrize("raw, label", [
    ("strengthening", "strengthening"), ("Strengthened conclusion", "strengthening"), ("weakening", "weakening"),
    ("dropped decisive words", "dropped_decisive_word"), ("changed-constant", "changed_constant"),
    ("missing branch scope", "missing_branch_scope"), ("action/result split", "action_result_split"),
    ("none", None), ("", None), ("OK", None), ("added a lemma", "other: added_a_lemma"),
])
def test_issue_labels(raw, label):
    assert issue_label(raw) == label


def _subs(*pieces: tuple[int, str]) -> list[SubStep]:
    counts: dict[int, int] = {}
    out = []
    for k, t in pieces:
        counts[k] = counts.get(k, 0) + 1
        out.append(SubStep(id=f"{k}.{counts[k]}", step=k, text=t))
    return out


STEPS = {1: STEP1, 2: STEP2, 3: STEP3}
REWORDED = _subs((1, "n^2 - 5n + 6 = (n - 2)(n - 3)"), (1, "so n = 2 or n = 3."), (2, STEP2), (3, STEP3))
"""Step 1 split with its opening words dropped: not a verbatim partition, so the model check is asked."""


def test_changed_constant_keeps_only_that_step_whole(scripted):
    subs = _subs((1, "n^2 - 5n + 6 = (n - 2)(n - 3)"), (1, "so n = 2 or n = 4."), (2, "Since n > 2,"),
                 (2, "only n = 3 remains."), (3, STEP3))
    llm = _llm(scripted)
    ctx = _ctx(llm)
    out = LLMDecomposer().prevent_repairs(ctx, STEPS, subs)
    assert [s.text for s in out] == [STEP1, "Since n > 2,", "only n = 3 remains.", STEP3]
    rejected = [n for n in ctx.notes if n.startswith("repair:")]
    assert len(rejected) == 1 and "step 1" in rejected[0] and "changed constant 4" in rejected[0]
    # only step 1 was reworded; step 2 is cut word for word and is not sent to the model check
    sent = _user(llm.calls("repair_check")[0])
    assert STEP1 in sent and "only n = 3 remains." not in sent


def test_model_flag_rejects_the_flagged_step(scripted):
    flags = ('The split of step 1 hides an assumption.\n```json\n{"flags": [{"id": "1.2", "issues": '
             '["strengthening", "action-result split"], "reason": "reads as a proven fact", "severity": "high"}]}\n```')
    ctx = _ctx(_llm(scripted, repair=[flags]))
    out = LLMDecomposer().prevent_repairs(ctx, STEPS, REWORDED)
    assert [s.text for s in out] == [STEP1, STEP2, STEP3]
    note = next(n for n in ctx.notes if n.startswith("repair:"))
    assert "step 1" in note and "strengthening" in note and "action_result_split" in note


def test_flags_for_unknown_substeps_are_ignored(scripted):
    ctx = _ctx(_llm(scripted, repair=['{"flags": [{"id": "7.3", "issues": ["weakening"]}, {"id": "1.1", "issues": []}]}']))
    assert len(LLMDecomposer().prevent_repairs(ctx, STEPS, REWORDED)) == 4
    assert any("unknown sub-steps" in n and "7.3" in n for n in ctx.notes)


def test_unusable_repair_check_leaves_the_screen(scripted):
    ctx = _ctx(_llm(scripted, repair=["I cannot evaluate faithfulness.", '{"flags": "maybe']))
    assert len(LLMDecomposer().prevent_repairs(ctx, STEPS, REWORDED)) == 4
    assert any("deterministic screen only" in n for n in ctx.notes)


# ---------------------------------------------------------------------------------------
# State tree repairs and fallbacks


def test_unlisted_piece_is_a_plain_derivation(scripted):
    tree = json.loads(json.dumps(TREE))
    del tree["edges"][3]
    llm = _llm(scripted, decompose=[json.dumps({**CUTS, **tree})])
    ctx = _ctx(llm)
    d = LLMDecomposer().decompose(ctx)
    last = d.tree.edges[-1]
    assert last.substep == "3.1" and last.pattern == "simple_implication" and last.type == TransitionType.DERIVATION
    assert last.parent == d.tree.edges[2].child
    assert ctx.notes == []  # an unlisted piece is a plain derivation, as the prompt says


def test_invented_and_duplicate_edges_are_dropped(scripted):
    tree = json.loads(json.dumps(TREE))
    tree["edges"].insert(1, {"substep": "1.3", "parent": "s1", "children": ["sx"], "pattern": "simple_implication"})
    tree["edges"].append({"substep": "2.1", "parent": "s0", "children": ["sy"], "pattern": "have_lemma"})
    llm = _llm(scripted, decompose=[json.dumps({**CUTS, **tree})])
    ctx = _ctx(llm)
    d = LLMDecomposer().decompose(ctx)
    assert [e.substep for e in d.tree.edges] == ["1.1", "1.2", "2.1", "3.1"]
    assert d.tree.edges[2].type == TransitionType.DERIVATION  # the first edge for 2.1 is kept
    assert any("unknown sub-steps (1.3)" in n for n in ctx.notes)
    assert any("extra edge(s) for sub-steps 2.1" in n for n in ctx.notes)


def test_unknown_parent_attaches_to_previous_state(scripted):
    tree = json.loads(json.dumps(TREE))
    tree["edges"][3]["parent"] = "s99"
    llm = _llm(scripted, decompose=[json.dumps({**CUTS, **tree})])
    ctx = _ctx(llm)
    d = LLMDecomposer().decompose(ctx)
    assert d.tree.edges[3].parent == d.tree.edges[2].child
    assert any("unknown parent" in n and "3.1" in n for n in ctx.notes)


@pytest.mark.parametrize("answers, reason", [
    (["Sorry, I can't build that tree."] * 2, "answer unusable"),
    (['{"states": [{"id": "s0"}], "edges": [{"substep": "1.1", "parent": "s0", "chil'] * 2, "answer unusable"),
    ([json.dumps({"states": [], "edges": [{"substep": "9.1", "parent": "s0", "children": ["a"]}]})], "no edge names"),
    ([json.dumps({"states": [], "edges": [{"substep": "1.1", "parent": "s0", "children": [f"c{i}" for i in range(40)]}]})],
     "oversized"),
    ([json.dumps({"states": [{"id": f"x{i}"} for i in range(500)], "edges": []})], "oversized"),
])
def test_unusable_tree_gives_linear_tree(scripted, answers, reason):
    unusable = {**CUTS, "edges": [{"substep": "9.1", "parent": "s0", "children": ["a"]}]}
    llm = _llm(scripted, decompose=[json.dumps(unusable)], tree=answers)
    ctx = _ctx(llm)
    d = LLMDecomposer().decompose(ctx)
    assert d.kind == "llm" and d.substeps == 4
    assert any("moves of the decomposition unusable" in n for n in ctx.notes), ctx.notes
    assert any(n.startswith("tree:") and reason in n for n in ctx.notes), ctx.notes
    edges = d.tree.edges
    assert [e.substep for e in edges] == ["1.1", "1.2", "2.1", "3.1"]
    assert all(e.pattern == "simple_implication" and e.type == TransitionType.DERIVATION for e in edges)
    assert [e.parent for e in edges[1:]] == [e.child for e in edges[:-1]]
    assert all(d.tree.state(n).hypotheses == () for n in d.tree.graph.nodes)


def test_no_model_gives_coarse_tree():
    ctx = RunContext(proof=PROOF, settings=Settings(), llm=None)
    d = LLMDecomposer().decompose(ctx)
    assert d.kind == "coarse" and [e.text for e in d.tree.edges] == [STEP1, STEP2, STEP3]
    assert any("no language model configured" in n for n in ctx.notes)


# ---------------------------------------------------------------------------------------
# Coarse decomposer


def test_coarse_makes_one_edge_per_step_without_calls(scripted):
    llm = scripted({})  # any call would fail the test
    for ctx, decomposer in ((_ctx(llm), CoarseDecomposer()), (_ctx(llm, ablations=("no_local_edges",)), LLMDecomposer())):
        d = decomposer.decompose(ctx)
        assert d.kind == "coarse" and d.substeps == 0
        assert [(e.id, e.step, e.text, e.span) for e in d.tree.edges] == [
            ("e0", 1, STEP1, (0, len(STEP1))), ("e1", 2, STEP2, (0, len(STEP2))), ("e2", 3, STEP3, (0, len(STEP3)))]
        assert [(e.parent, e.child) for e in d.tree.edges] == [("s0", "s1"), ("s1", "s2"), ("s2", "s3")]
    assert llm.requests == []


# ---------------------------------------------------------------------------------------
# Pure helpers


@pytest.mark.parametrize("raw, children, pattern, ttype", [
    ("simple_implication", 1, "simple_implication", TransitionType.DERIVATION),
    ("Simple implication", 1, "simple_implication", TransitionType.DERIVATION),
    ("case split 2-way", 2, "case_split_2", TransitionType.CASE_SPLIT),
    ("Case split 3+", 3, "case_split_n", TransitionType.CASE_SPLIT),
    ("case split", 2, "case_split_2", TransitionType.CASE_SPLIT),
    ("case split", 4, "case_split_n", TransitionType.CASE_SPLIT),
    ("Have/lemma", 1, "have_lemma", TransitionType.LEMMA),
    ("Mathematical induction", 2, "induction", TransitionType.INDUCTION),
    ("existential instantiation", 1, "existential_instantiation", TransitionType.WITNESS),
    ("existential_elimination", 1, "existential_elimination", TransitionType.INSTANTIATION),
    ("universal instantiation", 1, "universal_instantiation", TransitionType.INSTANTIATION),
    ("iff split", 2, "iff_split", TransitionType.GOAL_REDUCTION),
    ("contrapositive", 1, "contrapositive", TransitionType.CLAIM),
])
def test_patterns(raw, children, pattern, ttype):
    assert normalize_pattern(raw, children) == pattern
    assert transition_type(normalize_pattern(raw, children)) == ttype


@pytest.mark.parametrize("original, fragment, span", [
    ("So x = 3, and y = 4.", "y = 4.", (14, 20)),
    ("So x  =\n3, and y = 4.", "x = 3", (3, 9)),
    ("Thus x = 3, hence done.", "x = 3.", (5, 10)),
    ("Thus x = 3.", "x equals 3", (0, 11)),
    ("Thus x = 3.", "   ", (0, 11)),
])
def test_find_span(original, fragment, span):
    assert find_span(original, fragment) == span


@pytest.mark.parametrize(("original", "pieces", "caught"), [
    # a computation's result swapped for another number of the same step
    ("We have 1024 + 100 = 1124, and 2 divides 1124.", ["We have 1024 + 100 = 2,", "and 2 divides 1124."], True),
    ("Then 3 * 7 = 21 and 7 - 3 = 4.", ["Then 3 * 7 = 4", "and 7 - 3 = 21."], True),
    ("Since 2^10 = 1024 we get 1024 < 1100.", ["Since 2^10 = 1100", "we get 1024 < 1024."], True),
    # a faithful split keeps every computation as written
    ("We have 1024 + 100 = 1124, and 2 divides 1124.", ["We have 1024 + 100 = 1124,", "and 2 divides 1124."], False),
    ("So 7·8·15/6 = 140/2 = 70 ways.", ["So 7·8·15/6 = 140/2 = 70 ways."], False),
])
def test_screen_repair_checks_each_formula_against_its_step(original: str, pieces: list[str], caught: bool) -> None:
    issues = screen_repair(original, pieces)
    assert any(i.startswith("formula not in its step") for i in issues) is caught, issues


def test_listed_moves_with_an_empty_parent_continue_and_branches_are_named(scripted):
    answer = {**CUTS, "states": [{"id": "s0", "conditions": ["h_gt: n > 2"], "goal": "find n"},
                                 {"id": "b", "conditions": ["h_n3: n = 3"], "branch": "n = 3"}],
              "edges": [{"substep": "1.2", "parent": "", "children": ["a", "b"], "pattern": "case_split_2"},
                        {"substep": "2.1", "parent": "b", "children": ["c"], "pattern": "simple_implication",
                         "consumed_conditions": ["h_gt"]}]}
    llm = _llm(scripted, decompose=[json.dumps(answer)])
    ctx = _ctx(llm)
    tree = LLMDecomposer().decompose(ctx).tree
    e0, e1, e2, e3 = tree.edges
    assert ctx.notes == []
    assert e0.parent == "s0" and e1.parent == e0.child and len(e1.children) == 2  # "" is the previous state
    assert e2.parent == e1.children[1] and tree.state(e1.children[1]).branch == "n = 3"
    assert e3.parent == e2.child and "h_gt: n > 2" not in tree.state(e2.child).hypotheses  # unlisted: continues


@pytest.mark.parametrize("step", [r"We have $\log_2 2^5 = 5$, so the exponent is 5.",
                                  r"Then log_2 2^5 = 5 and 3^2 = 9.", r"Hence $\sqrt{4} 9 = 6$ holds."])
def test_the_screen_reads_an_operators_argument_as_the_reader_does(step: str) -> None:
    # issue 36: `\log_2 2^5 = 5` is log_2(2^5) = 5, not the false `2^5 = 5`
    cut = step.index(", so") + 1 if ", so" in step else step.index(" and") if " and" in step else len(step)
    pieces = [step[:cut].strip(), step[cut:].strip()] if cut < len(step) else [step]
    assert not [i for i in screen_repair(step, pieces) if i.startswith("formula not in its step")]


def test_a_swapped_result_after_an_operator_is_still_caught() -> None:
    step = "Since 2^5 = 32, the answer is 32."
    assert screen_repair(step, ["Since 2^5 = 5,", "the answer is 32."])
