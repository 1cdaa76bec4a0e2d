"""The Formal Evaluation Agent: arithmetic route, left-to-review route, and the kernel statement loop."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Literal

import networkx as nx
import pytest
from faithsieve.lean.interface import FormalStatement, KernelResult, UnavailableKernel
from faithsieve.obligations.checkers.portfolio import CHECKERS
from faithsieve.obligations.kinds.models import NLObligation, ObligationKind
from faithsieve.statetree.models import EdgeUnit, ProofState, StateTree, TransitionType

from faithsieve.core.proof import Proof, Step
from faithsieve.core.settings import Settings
from faithsieve.mathtext.ast import render_chain
from faithsieve.stages.base import Review, RunContext, ScanResult
from faithsieve.stages.gate import ASPECTS, LLMGate, PassGate
from faithsieve.stages.verify import (
    FormalVerifier,
    literals_in_source,
    proof_branch,
    pure_numeric_chain,
)
from faithsieve.verdict import ScanCandidate

K = ObligationKind


# ---------------------------------------------------------------------------------------
# pure numeric claims (the paper's examples and near misses)


@pytest.mark.parametrize(("text", "rendered"), [
    ("3 + 4 = 7", "3 + 4 = 7"),
    ("12 + 22 = 35", "12 + 22 = 35"),
    ("1 + 2 = 3 = \\sqrt{9}", "1 + 2 = 3 = sqrt(9)"),
    ("5 < 8", "5 < 8"),
    ("$\\frac{1}{2} + \\frac{1}{3} = \\frac{5}{6}$", "1 / 2 + 1 / 3 = 5 / 6"),
    ("2^{10} = 1024.", "2^10 = 1024"),
    ("3.5 \\times 2 = 7", "3.5 * 2 = 7"),
])
def test_pure_numeric_accepts(text: str, rendered: str) -> None:
    chain = pure_numeric_chain(text)
    assert chain is not None and render_chain(chain) == rendered


@pytest.mark.parametrize("text", [
    "\\forall x, x^2 + 7 \\ge 7",
    "f_1(0)^2 + \\cdots + f_n(0)^2 = 7",
    "1 + 2 + ... + 10 = 55",
    "x + 1 = 2",
    "\\pi > 3",
    "10! = 3628800",
    "7 = 2 mod 5",
    "sin(0) = 0",
    "7 is prime",
    "12 + 22",
    "",
    "1 + " * 300 + "1 = 301",
])
def test_pure_numeric_rejects(text: str) -> None:
    assert pure_numeric_chain(text) is None


def test_equation_numbers_must_be_written_in_the_source() -> None:
    chain = pure_numeric_chain("12 + 22 = 35")
    assert chain is not None
    assert literals_in_source(chain, "Adding the 12 red and 22 blue marbles gives 35 marbles.")
    assert not literals_in_source(chain, "Adding the red and blue marbles gives 35 marbles.")
    assert literals_in_source(pure_numeric_chain("1000 + 5 = 1005"), "so 1,000 + 5 = 1,005")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------
# fixtures


PROOF = Proof(problem="Show that for every positive integer n, n^2 + n is even; also count the marbles.",
              steps=(Step(index=1, text="Adding, 12 + 22 = 35 marbles."),
                     Step(index=2, text="n^2 + n = n(n + 1) is odd since one factor is odd.")))
S0 = ProofState(id="s0", hypotheses=("n is a positive integer",), goal="n^2 + n is even")
EDGES = [EdgeUnit(id="e1", type=TransitionType.COMPUTATION, parent="s0", child="s1", step=1, span=(0, 30),
                  text="Adding, 12 + 22 = 35 marbles."),
         EdgeUnit(id="e2", type=TransitionType.DERIVATION, parent="s1", child="s2", step=2, span=(0, 50),
                  text="n^2 + n = n(n + 1) is odd since one factor is odd.", explanation="parity of a product")]


def tree() -> StateTree:
    g = nx.DiGraph()
    for sid in ("s0", "s1", "s2"):
        g.add_node(sid, state=S0.model_copy(update={"id": sid}).model_dump())
    g.add_edge("s0", "s1")
    g.add_edge("s1", "s2")
    return StateTree(graph=g, edges=EDGES)


ARITH = NLObligation(id="e1.o1", edge="e1", step=1, span=(0, 30), source=EDGES[0].text, kind=K.REWRITE,
                     claim="12 + 22 = 35", equation="12 + 22 = 35", priority=0.9)
PARITY = NLObligation(id="e2.o1", edge="e2", step=2, span=(0, 50), source=EDGES[1].text, kind=K.DERIVED_FACT,
                      premises=("n is a positive integer",), claim="n^2 + n is odd", priority=0.8)


def context(llm: object = None, kernel: object = None, **settings: object) -> RunContext:
    checkers = [CHECKERS[n]() for n in ("exact", "sympy", "z3")]
    return RunContext(proof=PROOF, settings=Settings(**settings), llm=llm,  # type: ignore[arg-type]
                      kernel=kernel or UnavailableKernel(), checkers=checkers)


# ---------------------------------------------------------------------------------------
# a recorded-transcript stand-in for the external Lean process


@dataclass
class TranscriptKernel:
    """Replays recorded kernel answers in order; records what it was asked."""

    statements: list[FormalStatement | None]
    proofs: dict[str, KernelResult]
    name: str = "transcript"
    formalize_calls: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    prove_calls: list[tuple[str, str]] = field(default_factory=list)

    def available(self) -> tuple[bool, str]:
        return True, ""

    def formalize(self, obligation: NLObligation, context: str, feedback: str | None = None,
                  previous: FormalStatement | None = None) -> FormalStatement | None:
        self.formalize_calls.append((obligation.id, feedback, previous.text if previous else None))
        return self.statements.pop(0)

    def prove(self, statement: FormalStatement, branch: Literal["original", "negation"]) -> KernelResult:
        self.prove_calls.append((statement.text, branch))
        return self.proofs[branch]


DRIFTED = FormalStatement(text="theorem t (n : ℕ) : Even (n * (n + 1)) := by sorry", compiled=True)
FAITHFUL = FormalStatement(text="theorem t (n : ℕ) (hn : 0 < n) : Odd (n ^ 2 + n) := by sorry", compiled=True)
NEGATION_PROVED = KernelResult(status="refuted", reason="negation proved", artifact="by decide", method="lean-interact")


def judgment(**over: object) -> str:
    base: dict[str, object] = {
        "premise_slots": [{"slot": "n is a positive integer", "match": 1}],
        "conclusion_slots": [{"slot": "n^2 + n is odd", "match": 1}],
        "aspects": dict.fromkeys(ASPECTS, 1), "status": "faithful", "drift_categories": [],
        "reason": "same claim", "missing_or_changed_slots": [], "suggested_revision": "",
    }
    base.update(over)
    return json.dumps(base)


DRIFT_ANSWER = judgment(premise_slots=[{"slot": "n is a positive integer", "match": 0}],
                        conclusion_slots=[{"slot": "n^2 + n is odd", "match": 0}],
                        aspects={**dict.fromkeys(ASPECTS, 1), "directionality": 0}, status="unfaithful",
                        drift_categories=["wrong_direction", "missing_assumptions"],
                        reason="states evenness instead of oddness", suggested_revision="conclude Odd (n^2 + n)")
SUSPICIOUS = ScanResult(window=("e1", "e2"), reviews=(
    Review(edge="e2", verdict="incorrect", suspicion=0.85, reason="a product of consecutive integers is even"),))


# ---------------------------------------------------------------------------------------
# routes


def test_false_numeric_equation_is_refuted_by_our_checkers() -> None:
    (ev,) = FormalVerifier(gate=PassGate()).verify(context(), tree(), [ARITH], ScanResult())
    assert ev.status == "refuted" and ev.basis == "checked"
    assert ev.counterexample and "34" in " ".join(ev.counterexample.values())
    assert ev.kind == K.REWRITE and ev.edge == "e1" and ev.step == 1 and ev.obligation == "e1.o1"
    assert ev.claim == ARITH.text() and ev.statement == "12 + 22 = 35"


def test_true_numeric_chain_is_verified_link_by_link() -> None:
    ob = ARITH.model_copy(update={"equation": "12 + 22 = 34 = 2 \\times 17", "source": "12 + 22 = 34 = 2 × 17"})
    (ev,) = FormalVerifier(gate=PassGate()).verify(context(), tree(), [ob], ScanResult())
    assert ev.status == "verified" and ev.basis == "checked"


def test_chain_refuted_at_the_false_link() -> None:
    ob = ARITH.model_copy(update={"equation": "1 + 2 = 3 = 4", "source": "1 + 2 = 3 = 4"})
    (ev,) = FormalVerifier(gate=PassGate()).verify(context(), tree(), [ob], ScanResult())
    assert ev.status == "refuted" and "link 2" in (ev.reason or "")


def test_non_numeric_claim_is_left_to_review_without_a_kernel() -> None:
    (ev,) = FormalVerifier(gate=PassGate()).verify(context(), tree(), [PARITY], SUSPICIOUS)
    assert ev.status == "unknown"
    assert ev.reason is not None and ev.reason.startswith("left to review: no formal backend")
    assert "no Lean backend configured" in ev.reason


def test_equation_with_numbers_not_in_the_source_is_not_checked_as_arithmetic() -> None:
    ob = ARITH.model_copy(update={"equation": "12 + 23 = 35"})
    ctx = context()
    (ev,) = FormalVerifier(gate=PassGate()).verify(ctx, tree(), [ob], ScanResult())
    assert ev.status == "unknown"
    assert any("does not write" in n for n in ctx.notes)


def test_nl_only_checks_nothing() -> None:
    evs = FormalVerifier(gate=PassGate()).verify(context(ablations=("nl_only",)), tree(), [ARITH, PARITY], SUSPICIOUS)
    assert [e.status for e in evs] == ["unknown", "unknown"]
    assert all("left to review" in (e.reason or "") for e in evs)


def test_deadline_leaves_everything_unknown() -> None:
    ctx = context()
    ctx.deadline = time.monotonic() - 1
    (ev,) = FormalVerifier(gate=PassGate()).verify(ctx, tree(), [ARITH], ScanResult())
    assert ev.status == "unknown" and "budget" in (ev.reason or "")


# ---------------------------------------------------------------------------------------
# the statement loop with a kernel


def test_formalize_gate_fail_revise_gate_pass_prove_negation(scripted: type) -> None:
    kernel = TranscriptKernel(statements=[DRIFTED, FAITHFUL], proofs={"negation": NEGATION_PROVED})
    llm = scripted({"semantic_check": [DRIFT_ANSWER, "```json\n" + judgment() + "\n```"]})
    (ev,) = FormalVerifier(gate=LLMGate()).verify(context(llm, kernel), tree(), [PARITY], SUSPICIOUS)
    # the revision was asked with the drift report and the previous statement
    (_, fb0, prev0), (_, fb1, prev1) = kernel.formalize_calls
    assert fb0 is None and prev0 is None
    assert fb1 is not None and "wrong_direction" in fb1 and "conclude Odd (n^2 + n)" in fb1
    assert prev1 == DRIFTED.text
    # the unit looked wrong, so the negation branch ran on the faithful statement
    assert kernel.prove_calls == [(FAITHFUL.text, "negation")]
    assert ev.status == "refuted" and ev.basis == "formal"
    assert ev.faithfulness == 1.0 and ev.statement == FAITHFUL.text and ev.drift == ()
    assert ev.method == "lean-interact"


def test_statement_never_faithful_is_unknown_with_drift(scripted: type) -> None:
    kernel = TranscriptKernel(statements=[DRIFTED, DRIFTED], proofs={})
    llm = scripted({"semantic_check": [DRIFT_ANSWER, DRIFT_ANSWER]})
    (ev,) = FormalVerifier(gate=LLMGate()).verify(context(llm, kernel, gate_revisions=1), tree(), [PARITY], SUSPICIOUS)
    assert ev.status == "unknown" and ev.basis == "formal"
    assert "wrong_direction" in ev.drift
    assert ev.faithfulness is not None and ev.faithfulness < 0.9
    assert kernel.prove_calls == []


def test_unparsed_gate_answer_blocks_the_proof(scripted: type) -> None:
    kernel = TranscriptKernel(statements=[FAITHFUL], proofs={"negation": NEGATION_PROVED})
    llm = scripted({"semantic_check": ["The statement looks right to me.", "Yes, faithful."]})
    (ev,) = FormalVerifier(gate=LLMGate()).verify(context(llm, kernel, gate_revisions=0), tree(), [PARITY], SUSPICIOUS)
    assert ev.status == "unknown" and ev.drift == ("unparsed",)
    assert kernel.prove_calls == []


def test_no_gate_ablation_skips_the_gate(scripted: type) -> None:
    kernel = TranscriptKernel(statements=[DRIFTED], proofs={"negation": NEGATION_PROVED})
    llm = scripted({})  # any semantic_check call would fail the test
    (ev,) = FormalVerifier(gate=LLMGate()).verify(context(llm, kernel, ablations=("no_gate",)), tree(), [PARITY],
                                                  SUSPICIOUS)
    assert llm.calls("semantic_check") == []
    assert ev.status == "refuted" and ev.basis == "formal" and ev.faithfulness is None
    assert ev.statement == DRIFTED.text


def test_pass_gate_outside_the_ablation_records_no_faithfulness() -> None:
    """A gate that assesses nothing must not leave a faithfulness score that fusion would trust."""
    from faithsieve.stages.fusion import evidence_signal

    kernel = TranscriptKernel(statements=[DRIFTED], proofs={"negation": NEGATION_PROVED})
    ctx = context(None, kernel)
    (ev,) = FormalVerifier(gate=PassGate()).verify(ctx, tree(), [PARITY], SUSPICIOUS)
    assert ev.status == "refuted" and ev.faithfulness is None
    assert evidence_signal(ev, ctx.settings) is None
    signal = evidence_signal(ev, Settings(ablations=("no_gate",)))
    assert signal is not None and (signal.says, signal.source) == ("wrong", "formal")


def test_formalization_failure_and_inconclusive_proof_are_unknown(scripted: type) -> None:
    kernel = TranscriptKernel(statements=[None], proofs={})
    (ev,) = FormalVerifier(gate=PassGate()).verify(context(None, kernel), tree(), [PARITY], SUSPICIOUS)
    assert ev.status == "unknown" and "formalization failed" in (ev.reason or "")
    timeout = KernelResult(status="inconclusive", reason="timeout after 600 s", method="lean-interact")
    kernel = TranscriptKernel(statements=[FAITHFUL], proofs={"original": timeout})
    (ev,) = FormalVerifier(gate=PassGate()).verify(context(None, kernel), tree(), [PARITY], ScanResult())
    assert ev.status == "unknown" and "timeout" in (ev.reason or "")
    assert kernel.prove_calls == [(FAITHFUL.text, "original")]


def test_kernel_crash_is_a_note_not_an_exception() -> None:
    class Crashing(TranscriptKernel):
        def formalize(self, *a: object, **k: object) -> FormalStatement | None:
            raise RuntimeError("lean process died")

    ctx = context(None, Crashing(statements=[], proofs={}))
    (ev,) = FormalVerifier(gate=PassGate()).verify(ctx, tree(), [PARITY], ScanResult())
    assert ev.status == "unknown"
    assert any("lean process died" in n for n in ctx.notes)


@pytest.mark.parametrize(("scan", "kind", "branch"), [
    (ScanResult(), K.DERIVED_FACT, "original"),
    (SUSPICIOUS, K.DERIVED_FACT, "negation"),
    (ScanResult(reviews=(Review(edge="e2", verdict="correct", suspicion=0.1),)), K.DERIVED_FACT, "original"),
    (ScanResult(reviews=(Review(edge="e2", verdict="uncertain", suspicion=0.7),)), K.DERIVED_FACT, "negation"),
    (ScanResult(candidates=(ScanCandidate(edge="e2", suspicion=0.2, likely_wrong=True),)), K.DERIVED_FACT, "negation"),
    (ScanResult(), K.CONTESTED_CLAIM, "negation"),
])
def test_proof_branch(scan: ScanResult, kind: ObligationKind, branch: str) -> None:
    assert proof_branch(PARITY.model_copy(update={"kind": kind}), scan, 0.6) == branch


def test_priority_order() -> None:
    """Higher priority is checked first (it gets the budget); the output keeps the input order."""
    proved = KernelResult(status="passed", method="lean-interact")
    kernel = TranscriptKernel(statements=[FAITHFUL, FAITHFUL], proofs={"original": proved})
    low = PARITY.model_copy(update={"id": "e2.o2", "priority": 0.1})
    evs = FormalVerifier(gate=PassGate()).verify(context(None, kernel), tree(), [low, PARITY], ScanResult())
    assert [c[0] for c in kernel.formalize_calls] == ["e2.o1", "e2.o2"]
    assert [e.obligation for e in evs] == ["e2.o2", "e2.o1"]
    assert [e.status for e in evs] == ["verified", "verified"]


# ---------------------------------------------------------------------------------------
# literal claims vs equations the model wrote from words


@pytest.mark.parametrize(("equation", "source", "literal"), [
    ("12 + 22 = 35", "Adding, 12 + 22 = 35 marbles.", True),
    ("35 = 12 + 22", "Adding, 12 + 22 = 35 marbles.", True),            # an equality either way round
    ("12 + 22 = 35", "Adding the 12 red and 22 blue marbles gives 35 marbles.", False),  # words, not a formula
    ("22 + 12 = 35", "Adding, 12 + 22 = 35 marbles.", False),           # not what the proof wrote
    ("3 * 4 = 12", "$3 \\times 4 = 12$ pens", True),
    ("12 < 35", "so 12 > 35", False),
])
def test_written_in_source(equation: str, source: str, literal: bool) -> None:
    from faithsieve.stages.verify import written_in_source

    chain = pure_numeric_chain(equation)
    assert chain is not None and written_in_source(chain, source) is literal


WORDS = "Adding the 12 red and 22 blue marbles gives 35 marbles."
WORDED = ARITH.model_copy(update={"source": WORDS, "claim": "12 red and 22 blue marbles make 35 marbles"})
EQ_JUDGMENT = judgment(premise_slots=[], conclusion_slots=[{"slot": "12 + 22 = 35", "match": 1}])
EQ_DRIFT = judgment(premise_slots=[], conclusion_slots=[{"slot": "12 + 22 = 35", "match": 0.25}],
                    aspects={**dict.fromkeys(ASPECTS, 1), "object_witness": 0.25}, status="unfaithful",
                    drift_categories=["wrong_objects"], reason="counts other things")


def test_model_written_equation_must_pass_the_gate_before_it_counts(scripted: type) -> None:
    llm = scripted({"semantic_check": [EQ_JUDGMENT]})
    [ev] = FormalVerifier(LLMGate()).verify(context(llm), tree(), [WORDED], ScanResult())
    assert llm.calls("semantic_check"), "a model-written equation is gated"
    # refuted by our checkers, but what was checked is the model's statement: formalized, never checked
    assert (ev.status, ev.basis, ev.faithfulness) == ("refuted", "formalized", 1.0)
    assert ev.counterexample == {"lhs": "34", "rhs": "35", "difference": "-1"}


def test_model_written_equation_below_the_gate_stays_unknown(scripted: type) -> None:
    llm = scripted({"semantic_check": [EQ_DRIFT]})
    [ev] = FormalVerifier(LLMGate()).verify(context(llm), tree(), [WORDED], ScanResult())
    assert (ev.status, ev.counterexample) == ("unknown", None)
    assert ev.drift == ("wrong_objects",) and ev.faithfulness is not None and ev.faithfulness < 0.9


def test_literal_equation_needs_no_gate(scripted: type) -> None:
    llm = scripted({})  # any semantic_check call would fail the test
    [ev] = FormalVerifier(LLMGate()).verify(context(llm), tree(), [ARITH], ScanResult())
    assert (ev.status, ev.basis, ev.faithfulness) == ("refuted", "checked", None) and llm.calls() == []


def test_unreadable_gate_answer_keeps_the_raw_text_and_stays_unknown(scripted: type) -> None:
    garbage = "The equation seems fine to me, I would say faithful!"
    llm = scripted({"semantic_check": [garbage, garbage]})
    [ev] = FormalVerifier(LLMGate()).verify(context(llm), tree(), [WORDED], ScanResult())
    assert (ev.status, ev.drift) == ("unknown", ("unparsed",))
    assert ev.raw == garbage


@pytest.mark.parametrize(("equation", "source", "literal"), [
    ("202 = 2 * 101", "Since 202 = 2 * 101, the number is not prime.", True),
    ("10 = 2 \\times 5", "Write $10 = 2 \\times 5$.", True),
    ("10 = 2 * 5", "Write $10 = 2 \\cdot 5$ first.", True),       # the product sign as the proof writes it
    ("02 = 2 * 10", "202 = 2 * 101", False),                        # a piece of a longer formula
    ("202 = 2 * 101", "x + 202 = 2 * 101", False),
    ("202 = 2 * 101", "202 = 2 * 1011", False),
    ("1024 + 100 = 2", "1024 + 100 = 1124, and 2 divides it.", False),
])
def test_verbatim_copies_are_literal(equation: str, source: str, literal: bool) -> None:
    from faithsieve.stages.verify import written_verbatim

    assert written_verbatim(equation, source) is literal


def test_verbatim_copy_is_checked_without_the_gate(scripted: type) -> None:
    ob = ARITH.model_copy(update={"source": "Since 202 = 2 * 102, it is even.", "equation": "202 = 2 * 102"})
    llm = scripted({})
    [ev] = FormalVerifier(LLMGate()).verify(context(llm), tree(), [ob], ScanResult())
    assert (ev.status, ev.basis) == ("refuted", "checked") and llm.calls() == []


@pytest.mark.parametrize(("text", "verdict"), [
    ("The number of ways is 7·8·15/6 = 140/2 = 70.", "error"),   # a false link, not running-total notation
    ("We get 5 × 3 = 15 + 2 = 17.", "correct"),                  # a running total adds the next amount
    ("So 6 · 4 = 24 − 4 = 20 remain.", "correct"),
])
def test_running_total_excuse_covers_only_added_amounts(text: str, verdict: str) -> None:
    from faithsieve.pipeline import localize
    from faithsieve.split import proof_from_steps

    assert localize(proof_from_steps("Count the ways.", [text])).verdict == verdict


@pytest.mark.parametrize("hostile", ["1," * 10000, "1 +" + " " * 20000, "1" + " = 1" * 5000 + "x", "(1" * 5000])
def test_numeric_formula_reader_is_linear_on_hostile_text(hostile: str) -> None:
    from faithsieve.stages.verbatim import numeric_formulas, unwritten_formulas

    t = time.perf_counter()
    numeric_formulas(hostile)
    unwritten_formulas(hostile, hostile)
    assert time.perf_counter() - t < 1.0  # the first version took 16 s on "1,1,1,…"
