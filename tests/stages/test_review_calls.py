"""How the local reviews are grouped into calls, and when the scan is skipped for a tree reviewed whole: the
scanner's defaults (``LLMScanner()``, what every mode runs), and each setting changed by constructing the scanner
with it (the other stage tests build ``LLMScanner(pack_steps=False, review_all_calls=0)``)."""

from __future__ import annotations

import json

from faithsieve.core.proof import Proof, Step
from faithsieve.core.settings import Settings
from faithsieve.stages import tree_scan as scan
from faithsieve.stages.base import RunContext
from faithsieve.stages.tree_build import SubStep, linear_tree

PROBLEM = "Compute 3 * (4 + 5) - 6 / 2."
STEPS = {1: "Here 4 + 5 = 9, so 3 * 9 = 27, and 27 - 3 = 24.", 2: "So the result is 24.", 3: "It is even.",
         4: "Done."}


def _tree():
    subs = [SubStep(id="1.1", step=1, text="Here 4 + 5 = 9,"), SubStep(id="1.2", step=1, text="so 3 * 9 = 27,"),
            SubStep(id="1.3", step=1, text="and 27 - 3 = 24."), SubStep(id="2.1", step=2, text=STEPS[2]),
            SubStep(id="3.1", step=3, text=STEPS[3]), SubStep(id="4.1", step=4, text=STEPS[4])]
    return linear_tree(PROBLEM, STEPS, subs)


def _proof() -> Proof:
    return Proof(problem=PROBLEM, steps=tuple(Step(index=k, text=t) for k, t in STEPS.items()))


def test_whole_steps_share_a_call_and_no_step_is_split_to_fill_one() -> None:
    tree = _tree()
    groups = [[e.id for e in g] for g in scan.review_groups(tree, [e.id for e in tree.edges])]
    # step 1 (three units) and step 2 fill one call of four; steps 3 and 4 share the next
    assert groups == [["e0", "e1", "e2", "e3"], ["e4", "e5"]]
    assert all(len(g) <= scan.MAX_UNITS_PER_REVIEW for g in groups)


def test_a_step_cut_by_the_window_is_never_packed_with_another() -> None:
    tree = _tree()
    groups = [[e.id for e in g] for g in scan.review_groups(tree, ["e2", "e3", "e4"])]
    assert groups == [["e2"], ["e3", "e4"]]  # e2 is only part of step 1


def test_without_packing_each_step_is_its_own_call() -> None:
    tree = _tree()
    groups = [[e.id for e in g] for g in scan.review_groups(tree, [e.id for e in tree.edges], pack_steps=False)]
    assert groups == [["e0", "e1", "e2"], ["e3"], ["e4"], ["e5"]]


def test_units_are_the_proof_only_when_they_cut_every_step_word_for_word() -> None:
    tree, proof = _tree(), _proof()
    assert scan.units_are_the_proof(proof.steps, tree.edges)
    changed = Proof(problem=PROBLEM, steps=(*proof.steps[:3], Step(index=4, text="Done, and 24 is even.")))
    assert not scan.units_are_the_proof(changed.steps, tree.edges)
    assert not scan.units_are_the_proof(proof.steps, tree.edges[:-1])  # step 4 has no unit


def test_a_root_state_with_nothing_in_it_is_not_shown_to_a_review() -> None:
    tree = _tree()
    assert scan.review_state(tree, tree.root) == ""


def test_a_cheap_tree_over_the_unit_cap_is_reviewed_whole_without_a_scan(scripted) -> None:
    tree = _tree()
    ok = {"verdict": "correct", "suspicion": 0.1, "error_type": "", "should_formalize": False,
          "translation_difficulty": "easy", "reason": "fine"}
    groups = scan.review_groups(tree, [e.id for e in tree.edges])
    answers = [json.dumps({"reviews": [{"unit_id": e.id, **ok} for e in g]}) for g in groups]
    llm = scripted({"review_units": answers})
    ctx = RunContext(proof=_proof(), settings=Settings(max_audit_units=3), llm=llm)
    res = scan.LLMScanner().scan(ctx, tree)
    assert [r.prompt_id for r in llm.requests] == ["review_units"] * len(groups)  # no scan call
    assert [r.edge for r in res.reviews] == [e.id for e in tree.edges]


def test_a_tree_needing_more_calls_than_the_bound_is_scanned(scripted) -> None:
    tree = _tree()
    llm = scripted({"scan": ["not json"]}, default=json.dumps({"reviews": []}))
    ctx = RunContext(proof=_proof(), settings=Settings(max_audit_units=3), llm=llm)
    scan.LLMScanner(review_all_calls=1).scan(ctx, tree)
    assert llm.requests[0].prompt_id == "scan"
    # the units cut every step word for word: the proof is not sent a second time beside them
    assert "Proof as written:\n(the units' texts" in llm.requests[0].messages[1].content
