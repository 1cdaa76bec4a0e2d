"""The direct judge and the graph judge: answer parsing and the judged results."""

from __future__ import annotations

import json

import networkx as nx
import pytest
from faithsieve.obligations.kinds.models import ObligationKind
from faithsieve.statetree.models import EdgeUnit, ProofState, StateTree, TransitionType

from faithsieve.core.proof import Proof, Step
from faithsieve.core.settings import Settings
from faithsieve.stages.base import RunContext
from faithsieve.stages.judge import (
    UNPARSED_NOTE,
    DirectJudge,
    GraphJudge,
    parse_judgment,
    render_tree,
)


@pytest.mark.parametrize(("text", "label"), [
    ("correct", 0),
    ("Correct.", 0),
    ("step 3", 3),
    ("Step 3", 3),
    ("**Step 4**", 4),
    ("step3", 3),
    ("Answer: step 2", 2),
    ("Final answer: correct", 0),
    ("`correct`", 0),
    ('{"answer": "step 2"}', 2),
    ('```json\n{"answer": "correct"}\n```', 0),
    ('{"answer": 4, "reason": "sum is wrong"}', 4),
    ('{"answer": " 3 "}', 3),
    ("Let me check each step.\nStep 1 holds. Step 2 has an error.\nstep 2", 2),  # last line reads
    ("step 1\nThe first step divides by zero.", 1),                               # first line reads
])
def test_parse_judgment_reads(text: str, label: int) -> None:
    assert parse_judgment(text, 5) == label


@pytest.mark.parametrize("text", [
    "incorrect",
    "The solution is correct.",
    "step 2 is fine but step 3 is wrong",
    "step 6",                         # out of range
    "step 0",
    '{"answer": "step 7"}',
    '{"answer": true}',
    '{"answer": "Step 3: the sum is wrong"}',
    '{"verdict": "step 2"}',           # JSON without the answer field: not read as prose either
    "step 2\n...\ncorrect",             # first and last lines disagree
    "",
    "I'm sorry, I can't evaluate this proof.",
    '{"answer": "step',
])
def test_parse_judgment_rejects(text: str) -> None:
    assert parse_judgment(text, 5) is None


PROOF = Proof(problem="Find x with 2x + 3 = 11.",
              steps=(Step(index=1, text="2x = 11 - 3 = 8."), Step(index=2, text="x = 8 / 2 = 3."),
                     Step(index=3, text="So x = 3.")))


def ctx_with(llm: object) -> RunContext:
    return RunContext(proof=PROOF, settings=Settings(), llm=llm)  # type: ignore[arg-type]


def test_direct_judge_step(scripted: type) -> None:
    llm = scripted({"judge": ['{"answer": "step 2"}']})
    result = DirectJudge().judge(ctx_with(llm))
    assert result.first_error_step == 2 and result.basis == "judged"
    (record,) = result.evidence
    assert record.kind == ObligationKind.JUDGMENT and record.basis == "judged" and record.step == 2
    assert record.source == PROOF.steps[1].text
    prompt = llm.calls("judge")[0].messages[1].content
    assert "Step 1: 2x = 11 - 3 = 8." in prompt and "Step 3: So x = 3." in prompt


def test_direct_judge_correct(scripted: type) -> None:
    result = DirectJudge().judge(ctx_with(scripted({"judge": ['{"answer": "correct", "reason": "fine"}']})))
    assert result.first_error_step is None and result.basis == "judged"
    assert result.evidence[0].status == "unknown"


def test_direct_judge_plain_text_answer_is_read(scripted: type) -> None:
    """A model that ignores the JSON request and says ``step 2`` twice is still understood."""
    result = DirectJudge().judge(ctx_with(scripted({"judge": ["step 2", "Step 2"]})))
    assert result.first_error_step == 2 and result.basis == "judged"


@pytest.mark.parametrize("answers", [
    ["I think the proof is mostly fine.", "It is probably correct overall."],
    ['{"answer": "step 9"}'],
    ['{"answer": "step 1", "reason": "x', "Sorry, I cannot comply."],
])
def test_direct_judge_unparsed(scripted: type, answers: list[str]) -> None:
    ctx = ctx_with(scripted({"judge": answers}))
    result = DirectJudge().judge(ctx)
    assert result.first_error_step is None and result.basis is None and result.undecided
    assert any(n.startswith(UNPARSED_NOTE) for n in ctx.notes)
    (record,) = result.evidence
    assert record.status == "unknown" and record.raw == answers[-1]


def test_render_tree_and_graph_judge(scripted: type) -> None:
    g = nx.DiGraph()
    s0 = ProofState(id="s0", hypotheses=("2x + 3 = 11",), goal="find x")
    s1 = ProofState(id="s1", hypotheses=("2x + 3 = 11", "2x = 8"), goal="find x")
    for s in (s0, s1):
        g.add_node(s.id, state=s.model_dump())
    g.add_edge("s0", "s1")
    e = EdgeUnit(id="e1", type=TransitionType.DERIVATION, parent="s0", child="s1", step=1, span=(0, 15),
                 text="2x = 11 - 3 = 8.", new_conditions=("h1: 2x = 8",))
    tree = StateTree(graph=g, edges=[e])
    text = render_tree(tree)
    assert "s0" in text and "2x + 3 = 11" in text and "h1: 2x = 8" in text and "step 1" in text
    llm = scripted({"graph_judge": [json.dumps({"answer": "step 2", "reason": "8 / 2 is 4"})]})
    result = GraphJudge().judge(ctx_with(llm), tree)
    assert result.first_error_step == 2 and result.basis == "judged"
    assert "h1: 2x = 8" in llm.calls("graph_judge")[0].messages[1].content
