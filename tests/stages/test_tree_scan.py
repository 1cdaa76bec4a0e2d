"""Suspicion scan, audit window and local review against recorded answers."""

from __future__ import annotations

import json

import pytest

from faithsieve.core.proof import Proof, Step
from faithsieve.core.settings import Settings
from faithsieve.llm.types import LLMError
from faithsieve.stages.base import RunContext
from faithsieve.stages.llm_decompose import CoarseDecomposer
from faithsieve.stages.tree_scan import (
    AllEdgesScanner,
    LLMScanner,
    audit_window,
    resolve_unit,
)

PROBLEM = "Compute 3 * (4 + 5) - 6 / 2 and show the result is 24."
TEXTS = ["4 + 5 = 9.", "3 * 9 = 27.", "6 / 2 = 4.", "27 - 4 = 23.", "So the result is 23.",
         "Check: 23 is odd.", "Round: 23 stays 23.", "Hence 23.", "Note 23 < 24.", "Thus the claim fails."]
PROOF = Proof(problem=PROBLEM, steps=tuple(Step(index=i + 1, text=t) for i, t in enumerate(TEXTS)))
EDGES = [f"e{i}" for i in range(len(TEXTS))]

SCANNER = LLMScanner(pack_steps=False, review_all_calls=0)
"""The scan as these tests script it: one review call per step (the answers below are written per unit or per
step review) and no whole-tree shortcut (their small caps force the scan). Packing and the shortcut, the
defaults every mode runs, are tested in ``test_review_calls.py`` and end to end by ``tests/llm``."""

REVIEW_OK = json.dumps({"verdict": "correct", "suspicion": 0.1, "error_type": "", "should_formalize": False,
                        "translation_difficulty": "easy", "reason": "the sum is right"})


def _ctx(llm, **settings):
    settings.setdefault("max_audit_units", 9)  # smaller than the tree (10 units): the window policy decides
    return RunContext(proof=PROOF, settings=Settings(**settings), llm=llm)


def _tree():
    # a linear tree with one EdgeUnit per step (e0..e9); its shape is checked in test_llm_decompose
    return CoarseDecomposer().decompose(RunContext(proof=PROOF, settings=Settings())).tree


def _scan_answer(pairs, overall="likely_incorrect"):
    return json.dumps({"overall_verdict": overall, "candidates": [
        {"unit_id": u, "suspicion": s, "likely_wrong": s > 0.6, "should_formalize": True,
         "error_type_prior": ["arithmetic"], "reason": f"look at {u}"} for u, s in pairs]})


# ---------------------------------------------------------------------------------------
# Audit window (pure)


@pytest.mark.parametrize("suspicion, threshold, prefix, cap, focus, window", [
    # earliest above the threshold wins over a later, higher one
    ({"e2": 0.7, "e5": 0.99}, 0.6, 6, 12, "e2", ["e0", "e1", "e2"]),
    # exactly at the threshold is not above it
    ({"e1": 0.6, "e4": 0.61}, 0.6, 6, 12, "e4", ["e0", "e1", "e2", "e3", "e4"]),
    # prefix of 6 preceding edges
    ({"e9": 0.9}, 0.6, 6, 12, "e9", ["e3", "e4", "e5", "e6", "e7", "e8", "e9"]),
    ({"e8": 0.8, "e9": 0.9}, 0.6, 2, 12, "e8", ["e6", "e7", "e8"]),
    ({"e5": 0.8}, 0.6, 0, 12, "e5", ["e5"]),
    # the cap keeps the units nearest the focus
    ({"e9": 0.9}, 0.6, 6, 3, "e9", ["e7", "e8", "e9"]),
    ({"e9": 0.9}, 0.6, 6, 1, "e9", ["e9"]),
    # nothing above the threshold: the three most suspicious, in tree order, no focus
    ({"e1": 0.5, "e7": 0.55, "e3": 0.2, "e8": 0.1}, 0.6, 6, 12, None, ["e1", "e3", "e7"]),
    ({"e1": 0.5, "e7": 0.55, "e3": 0.2}, 0.6, 6, 2, None, ["e1", "e7"]),
    # ties (including no scores at all) go to the earlier units
    ({}, 0.6, 6, 12, None, ["e0", "e1", "e2"]),
    ({"e4": 0.3, "e6": 0.3, "e2": 0.3, "e8": 0.3}, 0.6, 6, 12, None, ["e2", "e4", "e6"]),
])
def test_audit_window(suspicion, threshold, prefix, cap, focus, window):
    assert audit_window(EDGES, suspicion, threshold, prefix, cap) == (focus, tuple(window))


def test_audit_window_empty():
    assert audit_window([], {}, 0.6, 6, 12) == (None, ())


@pytest.mark.parametrize("raw, resolved", [
    ("e3", "e3"), ("edge_3", "e3"), ("E3", "e3"), ("edge 3", "e3"), ("3", "e3"), (" e03 ", "e3"),
    ("e42", None), ("step 3", None), ("", None),
])
def test_resolve_unit(raw, resolved):
    assert resolve_unit(raw, {e: i for i, e in enumerate(EDGES)}) == resolved


# ---------------------------------------------------------------------------------------
# LLM scanner


def test_scan_focus_window_and_reviews(scripted):
    llm = scripted({"scan": [_scan_answer([("e1", 0.1), ("e2", 0.95), ("e3", 0.99), ("e0", 0.05)])],
                    "review": [REVIEW_OK] * 3})
    ctx = _ctx(llm)
    r = SCANNER.scan(ctx, _tree())
    assert r.overall == "likely_incorrect"
    assert r.focus == "e2" and r.window == ("e0", "e1", "e2")
    assert [c.edge for c in r.candidates] == ["e0", "e1", "e2", "e3"]  # edge order
    c2 = r.candidates[2]
    assert c2.suspicion == 0.95 and c2.likely_wrong and c2.should_formalize and c2.error_type_prior == ("arithmetic",)
    assert [rv.edge for rv in r.reviews] == ["e0", "e1", "e2"]
    assert r.reviews[0].verdict == "correct" and r.reviews[0].translation_difficulty == "easy"
    assert ctx.notes == []


def test_requests_carry_problem_proof_units_and_prior(scripted):
    llm = scripted({"scan": [_scan_answer([("e2", 0.9)])], "review": [REVIEW_OK] * 3})
    SCANNER.scan(_ctx(llm), _tree())
    scan = llm.calls("scan")[0].messages[1].content
    assert PROBLEM in scan and all(t in scan for t in TEXTS) and all(f"[{e}]" in scan for e in EDGES)
    reviews = llm.calls("review")
    assert len(reviews) == 3
    last = reviews[-1].messages[1].content
    assert PROBLEM in last and "6 / 2 = 4." in last and "(step 3" in last
    assert "suspicion 0.90" in last and "look at e2" in last
    assert "first scan" not in reviews[0].messages[1].content  # e0 had no candidate: no hint line at all
    # the fixed instructions come first (a stable prefix for provider caching), the unit last
    assert reviews[0].messages[0].content == reviews[-1].messages[0].content and PROBLEM not in reviews[0].messages[0].content
    assert last.index(PROBLEM) < last.index("6 / 2 = 4.")


def test_prefix_and_cap_come_from_settings(scripted):
    llm = scripted({"scan": [_scan_answer([("e9", 0.9)])], "review": [REVIEW_OK] * 4})
    r = SCANNER.scan(_ctx(llm, audit_prefix=6, max_audit_units=4), _tree())
    assert r.window == ("e6", "e7", "e8", "e9") and len(llm.calls("review")) == 4


@pytest.mark.parametrize("wrap", [
    lambda s: f"After reading the tree carefully, my assessment is:\n{s}\nThe third unit is the first problem.",
    lambda s: f"```json\n{s}\n```",
    lambda s: s[:-1] + ', "notes": "extra key", "confidence": "high"}',
])
def test_scan_shapes(scripted, wrap):
    llm = scripted({"scan": [wrap(_scan_answer([("e2", 0.8)]))], "review": [REVIEW_OK] * 3})
    r = SCANNER.scan(_ctx(llm), _tree())
    assert r.focus == "e2" and r.window == ("e0", "e1", "e2")


def test_scan_string_numbers_and_flags_are_read(scripted):
    answer = json.dumps({"overall_verdict": "Likely incorrect", "candidates": [
        {"unit_id": "edge_4", "suspicion": "0.7", "likely_wrong": "yes", "should_formalize": "false",
         "error_type_prior": "arithmetic"}]})
    llm = scripted({"scan": [answer], "review": [REVIEW_OK] * 5})
    r = SCANNER.scan(_ctx(llm), _tree())
    assert r.overall == "likely_incorrect" and r.focus == "e4"
    c = r.candidates[0]
    assert c.likely_wrong and not c.should_formalize and c.error_type_prior == ("arithmetic",)


@pytest.mark.parametrize("answers, reason", [
    ([json.dumps({"overall_verdict": "uncertain", "candidates": [{"unit_id": "e1", "suspicion": "high"}]})] * 2,
     "answer unusable"),  # wrong type, twice
    (['{"overall_verdict": "likely_incorrect", "candidates": [{"unit_id": "e1", "susp'] * 2, "not closed"),
    (["I can't assess this proof."] * 2, "no JSON object"),
    ([LLMError("HTTP 503")], "endpoint"),
])
def test_unusable_scan_reviews_the_first_units(scripted, answers, reason):
    llm = scripted({"scan": answers, "review": [REVIEW_OK] * 7})
    ctx = _ctx(llm)
    r = SCANNER.scan(ctx, _tree())
    assert r.candidates == () and r.overall is None and r.focus is None
    assert r.window == tuple(EDGES[:7])
    assert len(r.reviews) == 7
    assert any(n.startswith("scan:") and reason in n for n in ctx.notes), ctx.notes


def test_unusable_scan_window_respects_cap(scripted):
    llm = scripted({"scan": ["no"] * 2, "review": [REVIEW_OK] * 2})
    r = SCANNER.scan(_ctx(llm, max_audit_units=2), _tree())
    assert r.window == ("e0", "e1")


def test_unknown_units_and_out_of_range_suspicion_are_dropped(scripted):
    answer = json.dumps({"overall_verdict": "likely_incorrect", "candidates": [
        {"unit_id": "e77", "suspicion": 0.9}, {"unit_id": "e1", "suspicion": 1.7},
        {"unit_id": "e2", "suspicion": -0.2}, {"unit_id": "e5", "suspicion": 0.65}, {"unit_id": "e3", "suspicion": 0.3}]})
    llm = scripted({"scan": [answer], "review": [REVIEW_OK] * 7})
    ctx = _ctx(llm)
    r = SCANNER.scan(ctx, _tree())
    assert [c.edge for c in r.candidates] == ["e3", "e5"]
    assert r.focus == "e5"  # the 1.7 on e1 was not clamped into a focus
    assert any("unknown units" in n and "e77" in n for n in ctx.notes)
    assert any("outside [0, 1]" in n and "e1=1.7" in n and "e2=-0.2" in n for n in ctx.notes)


def test_nan_suspicion_is_rejected(scripted):
    answer = '{"overall_verdict": "uncertain", "candidates": [{"unit_id": "e0", "suspicion": NaN}]}'
    llm = scripted({"scan": [answer], "review": [REVIEW_OK] * 3})
    ctx = _ctx(llm)
    r = SCANNER.scan(ctx, _tree())
    assert r.candidates == () and r.focus is None
    assert any("outside [0, 1]" in n for n in ctx.notes)


def test_duplicate_candidates_keep_the_higher_suspicion(scripted):
    llm = scripted({"scan": [_scan_answer([("e4", 0.2), ("edge_4", 0.8)])], "review": [REVIEW_OK] * 5})
    r = SCANNER.scan(_ctx(llm), _tree())
    assert [(c.edge, c.suspicion) for c in r.candidates] == [("e4", 0.8)]


def test_nothing_above_threshold_still_reviews(scripted):
    llm = scripted({"scan": [_scan_answer([("e6", 0.4), ("e2", 0.5), ("e9", 0.1), ("e0", 0.3)], "likely_correct")],
                    "review": [REVIEW_OK] * 3})
    r = SCANNER.scan(_ctx(llm), _tree())
    assert r.overall == "likely_correct" and r.focus is None
    assert r.window == ("e0", "e2", "e6") and len(r.reviews) == 3


def test_unknown_overall_verdict_reads_as_uncertain(scripted):
    llm = scripted({"scan": [_scan_answer([("e1", 0.9)], overall="probably fine")], "review": [REVIEW_OK] * 2})
    ctx = _ctx(llm)
    r = SCANNER.scan(ctx, _tree())
    assert r.overall == "uncertain" and any("read as uncertain" in n for n in ctx.notes)


# ---------------------------------------------------------------------------------------
# Reviews


def test_review_answers_are_normalised(scripted):
    reviews = [
        "```json\n" + json.dumps({"verdict": "Wrong", "suspicion": 0.9, "error_type": ["arithmetic", "sign"],
                                  "should_formalize": True, "translation_difficulty": "Hard", "reason": "6/2 is 3",
                                  "extra": 1}) + "\n```",
        "Sorry, I cannot review this.", "Still no.",
        json.dumps({"verdict": "looks fine to me", "suspicion": 3, "translation_difficulty": "trivial"}),
    ]
    llm = scripted({"scan": [_scan_answer([("e2", 0.9)])], "review": reviews})
    ctx = _ctx(llm, audit_prefix=2)
    r = SCANNER.scan(ctx, _tree())
    first, second, third = r.reviews
    assert (first.edge, first.verdict, first.suspicion, first.error_type, first.should_formalize,
            first.translation_difficulty, first.reason) == ("e0", "incorrect", 0.9, "arithmetic, sign", True, "hard",
                                                            "6/2 is 3")
    assert second.edge == "e1" and second.verdict == "uncertain" and second.reason.startswith("unparsed: ")
    assert (third.verdict, third.suspicion, third.translation_difficulty) == ("uncertain", 0.5, "medium")
    assert any(n.startswith("review e1:") for n in ctx.notes)
    assert any(n.startswith("review e2:") and "outside [0, 1]" in n for n in ctx.notes)
    assert any(n.startswith("review e2:") and "read as uncertain" in n for n in ctx.notes)


def test_review_endpoint_failure_is_uncertain(scripted):
    llm = scripted({"scan": [_scan_answer([("e0", 0.9)])], "review": [LLMError("timed out")]})
    r = SCANNER.scan(_ctx(llm), _tree())
    assert [(v.edge, v.verdict) for v in r.reviews] == [("e0", "uncertain")]
    assert "timed out" in r.reviews[0].reason


# ---------------------------------------------------------------------------------------
# Other paths


def test_empty_tree_makes_no_call(scripted):
    llm = scripted({})
    ctx = RunContext(proof=Proof(problem=PROBLEM, steps=()), settings=Settings(), llm=llm)
    tree = CoarseDecomposer().decompose(ctx).tree
    assert SCANNER.scan(ctx, tree).window == () and llm.requests == []


def test_no_model_configured(scripted):
    ctx = RunContext(proof=PROOF, settings=Settings(), llm=None)
    r = SCANNER.scan(ctx, _tree())
    assert r.window == tuple(EDGES) and all(v.verdict == "uncertain" for v in r.reviews)  # fits the cap


def test_all_edges_scanner(scripted):
    llm = scripted({})
    r = AllEdgesScanner().scan(_ctx(llm), _tree())
    assert r.window == tuple(EDGES) and r.reviews == () and r.candidates == () and r.overall is None
    assert llm.requests == []


def test_a_tree_that_fits_the_cap_is_reviewed_whole(scripted):
    llm = scripted({"scan": [_scan_answer([("e1", 0.9)])], "review": [REVIEW_OK] * 10})
    r = SCANNER.scan(_ctx(llm, max_audit_units=10), _tree())
    assert r.window == tuple(EDGES) and len(r.reviews) == 10
    assert llm.calls("scan") == [] and r.candidates == ()  # every unit is reviewed: no whole-proof scan call


def test_window_covers_later_substeps_of_the_focus_step():
    steps = {"a": 1, "b": 2, "c": 2, "d": 2, "e": 3}
    focus, window = audit_window(list(steps), {"b": 0.9}, 0.6, 1, 12, steps)
    assert (focus, window) == ("b", ("a", "b", "c", "d"))
    assert audit_window(list(steps), {"b": 0.9}, 0.6, 1, 3, steps) == ("b", ("a", "b", "c"))  # the cap holds


# ---------------------------------------------------------------------------------------
# Several units of one step: one call, one answer per unit

STEP = "Here 4 + 5 = 9, so 3 * 9 = 27, and 27 - 3 = 25."
SPLIT_PROOF = Proof(problem=PROBLEM, steps=(Step(index=1, text=STEP), Step(index=2, text="So the result is 25.")))


def _split_tree():
    from faithsieve.stages.tree_build import SubStep, linear_tree

    subs = [SubStep(id="1.1", step=1, text="Here 4 + 5 = 9,"), SubStep(id="1.2", step=1, text="so 3 * 9 = 27,"),
            SubStep(id="1.3", step=1, text="and 27 - 3 = 25."), SubStep(id="2.1", step=2, text="So the result is 25.")]
    return linear_tree(PROBLEM, {1: STEP, 2: "So the result is 25."}, subs)


def _unit_review(uid, verdict):
    return {"unit_id": uid, "verdict": verdict, "suspicion": 0.9 if verdict == "incorrect" else 0.1, "error_type": "",
            "should_formalize": False, "translation_difficulty": "easy", "reason": f"{uid} alone"}


def test_units_of_one_step_share_one_call_with_separate_answers(scripted):
    answer = json.dumps({"reviews": [_unit_review("e2", "incorrect"), _unit_review("e0", "correct"),
                                     _unit_review("E1", "correct"), _unit_review("e7", "incorrect")]})
    llm = scripted({"review_units": [answer], "review": [REVIEW_OK]})
    ctx = RunContext(proof=SPLIT_PROOF, settings=Settings(), llm=llm)
    res = SCANNER.scan(ctx, _split_tree())
    assert [r.prompt_id for r in llm.requests] == ["review_units", "review"]
    assert [(r.edge, r.verdict) for r in res.reviews] == [("e0", "correct"), ("e1", "correct"), ("e2", "incorrect"),
                                                         ("e3", "correct")]
    sent = llm.requests[0].messages[1].content
    assert all(f"Unit e{i} (step 1, sub-step 1.{i + 1})" in sent for i in range(3)) and "e3" not in sent
    # the three moves are the step word for word: the step is not sent a second time
    assert sent.count("27 - 3 = 25") == 1 and PROBLEM in sent


def test_a_unit_the_answer_leaves_out_is_uncertain(scripted):
    answer = json.dumps({"reviews": [_unit_review("e0", "correct"), _unit_review("e2", "correct")]})
    llm = scripted({"review_units": [answer], "review": [REVIEW_OK]})
    ctx = RunContext(proof=SPLIT_PROOF, settings=Settings(), llm=llm)
    res = SCANNER.scan(ctx, _split_tree())
    assert [(r.edge, r.verdict) for r in res.reviews][:3] == [("e0", "correct"), ("e1", "uncertain"), ("e2", "correct")]
    assert any("e1: not in the answer" in n for n in ctx.notes)


def test_an_unusable_step_review_leaves_each_unit_uncertain(scripted):
    llm = scripted({"review_units": ["They all look fine to me."] * 2, "review": [REVIEW_OK]})
    ctx = RunContext(proof=SPLIT_PROOF, settings=Settings(), llm=llm)
    res = SCANNER.scan(ctx, _split_tree())
    assert [r.verdict for r in res.reviews] == ["uncertain", "uncertain", "uncertain", "correct"]
    assert all(r.reason.startswith("unparsed:") for r in res.reviews[:3])
