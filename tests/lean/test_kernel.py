"""LeanKernel against recorded checker transcripts and scripted model answers.

``Transcript`` stands in for the external Lean process only: it replays REPL responses in the
documented shape (``faithsieve.lean.screen.classify_repl`` turns them into ``CheckResult``),
chosen by a rule over the snippet or in order. ``ToolLLM`` answers each request with the next
scripted answer for its prompt id: text, or a list of tool calls. Everything between (the
statement loop, the tool dispatch, the portfolio, the screens) runs for real.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from faithsieve.lean.answers import read_proof
from faithsieve.lean.backend import CheckResult, LeanUnavailable
from faithsieve.lean.interface import FormalStatement, Kernel
from faithsieve.lean.kernel import (
    BOUND_TACTICS,
    CORE_TACTICS,
    MATHLIB_TACTICS,
    MAX_HEARTBEATS,
    NOT_ELABORATED,
    WITNESSES,
    LeanKernel,
    core_tactics,
    witness_tactics,
)
from faithsieve.lean.screen import classify_kimina, classify_repl
from faithsieve.lean.snippets import negate_header, parse_header
from faithsieve.obligations.kinds.models import NLObligation, ObligationKind

from faithsieve.core.settings import Settings
from faithsieve.llm.types import ChatRequest, ChatResponse, LLMError, ToolCall, Usage

# ---------------------------------------------------------------------------------------
# Recorded responses (REPL CommandResponse shapes) and the doubles


def _msg(severity: str, text: str, line: int = 3, column: int = 0) -> dict[str, Any]:
    return {"severity": severity, "pos": {"line": line, "column": column},
            "endPos": {"line": line, "column": column + 5}, "data": text}


def sorry(goal: str = "x : ℝ\n⊢ x ^ 2 ≥ 0") -> CheckResult:
    return classify_repl({"env": 0, "messages": [_msg("warning", "declaration uses 'sorry'", 3, 8)],
                          "sorries": [{"pos": {"line": 3, "column": 40}, "goal": goal, "proofState": 0}]})


def error(text: str, line: int = 3) -> CheckResult:
    return classify_repl({"env": 0, "messages": [_msg("error", text, line, 12)]})


def valid(name: str, axioms: str = "propext, Classical.choice, Quot.sound") -> CheckResult:
    return classify_repl({"env": 0, "messages": [_msg("info", f"'{name}' depends on axioms: [{axioms}]", 6)]})


def timeout() -> CheckResult:
    return classify_kimina({"id": "0", "time": 60.0, "error": "Lean REPL command timed out in 60.0 seconds"})


Rule = Callable[[str], "CheckResult | None"]


class Transcript:
    """A ``LeanBackend`` replaying recorded results: the first rule that answers wins, then the
    queue in order, then ``default``."""

    name = "transcript"

    def __init__(self, rules: Iterable[Rule] = (), queue: Iterable[CheckResult] = (),
                 default: CheckResult | None = None, ok: bool = True, elaborates: bool = False) -> None:
        """``elaborates``: every statement checked with ``:= by sorry`` (the kernel's pre-check before
        tactics) elaborates, with its one ``sorry``."""
        self.rules = [ELABORATES, *rules] if elaborates else list(rules)
        self.queue = deque(queue)
        self.default = default
        self.ok = ok
        self.snippets: list[str] = []
        self.timeouts: list[float | None] = []

    def available(self) -> tuple[bool, str]:
        return (True, "") if self.ok else (False, "no toolchain found")

    def versions(self) -> dict[str, str]:
        return {"lean": "4.19.0", "mathlib": "unknown"}

    def check(self, code: str, timeout_s: float | None = None) -> CheckResult:
        self.snippets.append(code)
        self.timeouts.append(timeout_s)
        for rule in self.rules:
            out = rule(code)
            if out is not None:
                return out
        if self.queue:
            return self.queue.popleft()
        if self.default is not None:
            return self.default
        raise AssertionError(f"no recorded result for snippet:\n{code}")

    def close(self) -> None:
        pass


def when(fragment: str, result: CheckResult) -> Rule:
    return lambda code: result if fragment in code else None


def ELABORATES(code: str) -> CheckResult | None:
    return sorry() if code.rstrip().endswith(":= by sorry") else None


Answer = "str | list[tuple[str, dict[str, Any] | str]] | LLMError"


class ToolLLM:
    """Scripted answers per prompt id: a string is the text answer, a list is tool calls
    ``(name, arguments)``, an ``LLMError`` is raised. ``refuse_tools`` raises on any request
    that offers tools (a server without function calling)."""

    model = "scripted-tools"

    def __init__(self, script: dict[str, list[Any]] | None = None, refuse_tools: bool = False) -> None:
        self.queues: dict[str, deque[Any]] = defaultdict(deque)
        for k, v in (script or {}).items():
            self.queues[k].extend(v)
        self.requests: list[ChatRequest] = []
        self.refuse_tools = refuse_tools
        self.usage = Usage()

    def calls(self, prompt_id: str) -> list[ChatRequest]:
        return [r for r in self.requests if r.prompt_id == prompt_id]

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        if self.refuse_tools and request.tools:
            raise LLMError("HTTP 500: tools are not supported by this chat format")
        q = self.queues[request.prompt_id]
        if not q:
            raise AssertionError(f"no scripted answer left for {request.prompt_id!r}")
        answer = q.popleft()
        if isinstance(answer, LLMError):
            raise answer
        if isinstance(answer, list):
            calls = tuple(ToolCall(id=f"call_{len(self.requests)}_{i}", name=n,
                                   arguments=a if isinstance(a, str) else json.dumps(a))
                          for i, (n, a) in enumerate(answer))
            return ChatResponse(text="", model=self.model, tool_calls=calls, finish_reason="tool_calls")
        return ChatResponse(text=answer, model=self.model, finish_reason="stop")


def lean(text: str) -> str:
    return json.dumps({"lean": text})


def settings(**kw: Any) -> Settings:
    base: dict[str, Any] = {"lean_statement_budget": 4, "lean_proof_budget": 2, "lean_tool_calls": 3,
                            "lean_timeout_s": 20.0}
    base.update(kw)
    return Settings(**base)


OB = NLObligation(id="u1.o1", edge="u1", step=2, kind=ObligationKind.DERIVED_FACT, premises=("x is a real number",),
                  claim="x^2 is nonnegative")
GOOD = "theorem sq_nonneg' (x : ℝ) : x ^ 2 ≥ 0"
NAME = "fs_u1_o1"

# ---------------------------------------------------------------------------------------
# negate_header and proof reading (pure)


@pytest.mark.parametrize(("header", "expected"), [
    ("theorem t (x : ℝ) (h : 0 < x) : x ^ 2 > 0", "theorem t_neg : ¬ (∀ (x : ℝ) (h : 0 < x), x ^ 2 > 0)"),
    ("theorem t : (2 : ℤ) + 2 = 4", "theorem t_neg : ¬ ((2 : ℤ) + 2 = 4)"),
    ("theorem t : 2 + 2 = 4 := by sorry", "theorem t_neg : ¬ (2 + 2 = 4)"),
    ("lemma a.b {n : ℕ} [NeZero n] (h : n ∣ 6) : n ≤ 6 := by\n  omega",
     "theorem a.b_neg : ¬ (∀ {n : ℕ} [NeZero n] (h : n ∣ 6), n ≤ 6)"),
    ("example (x y : ℚ) : x * y = y * x", "theorem obligation_neg : ¬ (∀ (x y : ℚ), x * y = y * x)"),
    ("open Real\ntheorem t (x : ℝ) (hx : 0 ≤ x) : sqrt x ^ 2 = x",
     "open Real\ntheorem t_neg : ¬ (∀ (x : ℝ) (hx : 0 ≤ x), sqrt x ^ 2 = x)"),
    ("theorem t (f : ℕ → ℕ) (h : ∀ n, f n = n + 1) : f 1 = 2",
     "theorem t_neg : ¬ (∀ (f : ℕ → ℕ) (h : ∀ n, f n = n + 1), f 1 = 2)"),
    ("theorem t  -- the claim\n  (x : ℤ) : x ≤ x ^ 2", "theorem t_neg : ¬ (∀ (x : ℤ), x ≤ x ^ 2)"),
    ("theorem t /- one -/ (x : ℤ)\n  /- two\n lines -/ -- and a line\n  -- another\n  (h : 0 ≤ x) : x ≤ x ^ 2",
     "theorem t_neg : ¬ (∀ (x : ℤ) (h : 0 ≤ x), x ≤ x ^ 2)"),
])
def test_negate_header_table(header: str, expected: str) -> None:
    assert negate_header(header) == expected


@pytest.mark.parametrize("bad", ["def f : ℕ := 3", "theorem t (x : ℝ", "theorem t x : x = x", "theorem t (x : ℕ)",
                                 "theorem t (x : ℕ) /- never closed : x = x", "theorem t -- : x = x"])
def test_negate_header_refuses_what_is_not_a_theorem_header(bad: str) -> None:
    with pytest.raises(ValueError):
        negate_header(bad)


TARGET = parse_header("theorem t (x : ℝ) : x ^ 2 ≥ 0")


@pytest.mark.parametrize(("answer", "proof"), [
    (lean("by positivity"), "by\n  positivity"),
    (lean("nlinarith [sq_nonneg x]"), "by\n  nlinarith [sq_nonneg x]"),
    (lean("by\nintro y\nsimp"), "by\n  intro y\n  simp"),
    (lean("theorem t (x : ℝ) : x ^ 2 ≥ 0 := by\n    positivity"), "by\n  positivity"),
    (lean("theorem other_name  (x : ℝ) :  x ^ 2 ≥ 0 := sq_nonneg x"), "sq_nonneg x"),
    ("```lean\nby positivity\n```", "by\n  positivity"),
])
def test_read_proof_table(answer: str, proof: str) -> None:
    assert read_proof(answer, TARGET) == (proof, "")


@pytest.mark.parametrize(("answer", "why"), [
    (lean("theorem t (x : ℝ) (hx : 0 < x) : x ^ 2 ≥ 0 := by positivity"), "changed the statement"),
    (lean("theorem t (x : ℝ) : x ^ 2 > 0 := by positivity"), "changed the statement"),
    (lean("by sorry"), "sorry"),
    (lean("by positivity\n\ntheorem extra : False := by sorry"), "sorry"),
    ("I think positivity works.", "JSON"),
])
def test_read_proof_refusals(answer: str, why: str) -> None:
    proof, reason = read_proof(answer, TARGET)
    assert proof is None and why in reason


# ---------------------------------------------------------------------------------------
# available


def test_kernel_satisfies_the_protocol_and_spells_out_why_it_cannot_run() -> None:
    k = LeanKernel(Transcript(ok=False), None, settings())
    assert isinstance(k, Kernel)
    ok, why = k.available()
    assert not ok and "no toolchain found" in why and "no language model configured" in why
    assert LeanKernel(Transcript(), ToolLLM(), settings()).available() == (True, "")


# ---------------------------------------------------------------------------------------
# The statement loop


def test_error_then_repair_then_compiles() -> None:
    backend = Transcript(queue=[error("unknown identifier 'sqr'"), sorry()])
    llm = ToolLLM({"formalize": [lean("theorem t (x : ℝ) : sqr x ≥ 0"), lean(GOOD + " := by sorry")]})
    st = LeanKernel(backend, llm, settings()).formalize(OB, "Problem: show x^2 ≥ 0.")
    assert st is not None and st.compiled and st.language == "lean4"
    assert st.text == f"theorem {NAME} (x : ℝ) : x ^ 2 ≥ 0 := by sorry"
    assert all(s.startswith("import Mathlib\n") and s.rstrip().endswith(":= by sorry") for s in backend.snippets)
    second = llm.calls("formalize")[1].messages
    assert second[-1].role == "user" and "unknown identifier 'sqr'" in second[-1].content
    assert second[-2].role == "assistant" and "sqr x" in second[-2].content  # same conversation, repaired
    assert any("draft 1" in t for t in st.trajectory) and any("unknown identifier" in t for t in st.trajectory)


def test_same_error_twice_is_drift_and_stops_early() -> None:
    backend = Transcript(default=error("type mismatch\n  x\nhas type ℕ but is expected to have type ℝ"))
    llm = ToolLLM({"formalize": [lean("theorem t (x : ℕ) : (x : ℝ) = x + y"), lean("theorem t (x : ℕ) : x = y + 0")]})
    k = LeanKernel(backend, llm, settings(lean_statement_budget=5))
    assert k.formalize(OB, "ctx") is None
    assert len(llm.calls("formalize")) == 2 and len(backend.snippets) == 2
    assert "drift" in k.last_trajectory[-1]


def test_budget_exhausted_returns_none() -> None:
    backend = Transcript(queue=[error(f"error number {i}") for i in range(3)])
    llm = ToolLLM({"formalize": [lean(f"theorem t (x : ℝ) : x ^ {i} ≥ 0") for i in range(3)]})
    k = LeanKernel(backend, llm, settings(lean_statement_budget=3))
    assert k.formalize(OB, "ctx") is None
    assert len(backend.snippets) == 3 and "budget" in k.last_trajectory[-1]


def test_a_statement_growing_without_fewer_errors_is_drift() -> None:
    errors = [classify_repl({"messages": [_msg("error", f"e{i}-{j}") for j in range(2)]}) for i in range(3)]
    backend = Transcript(queue=errors)
    long_tail = " ∧ ".join(f"x ^ {i} ≥ 0" for i in range(60))
    llm = ToolLLM({"formalize": [lean(GOOD), lean(f"theorem t (x : ℝ) : {long_tail}"), lean(GOOD)]})
    k = LeanKernel(backend, llm, settings())
    assert k.formalize(OB, "ctx") is None
    assert len(backend.snippets) == 2 and "growing" in k.last_trajectory[-1]


def test_revision_with_gate_feedback_starts_from_the_previous_statement() -> None:
    previous = FormalStatement(text=f"theorem {NAME} (x : ℝ) (hx : 0 < x) : x ^ 2 ≥ 0 := by sorry", compiled=True)
    llm = ToolLLM({"formalize": [lean(GOOD)]})
    st = LeanKernel(Transcript(default=sorry()), llm, settings()).formalize(
        OB, "ctx", feedback="drift: missing_assumptions; the hypothesis 0 < x is not in the source", previous=previous)
    assert st is not None and "hx" not in st.text
    first = llm.calls("formalize")[0].messages[-1].content
    assert "(hx : 0 < x)" in first and "0 < x is not in the source" in first and "Revise" in first


@pytest.mark.parametrize("answer", [
    lean("def sq (x : ℝ) := x ^ 2\ntheorem t (x : ℝ) : sq x ≥ 0"),
    lean("theorem a : 1 = 1\ntheorem b : 2 = 2"),
    lean("theorem t (x : ℝ) (h : sorry) : x ^ 2 ≥ 0"),
    lean("#eval IO.println 1\ntheorem t : 1 = 1"),
    "no json here",
])
def test_unusable_drafts_are_refused_with_a_reason_and_never_checked(answer: str) -> None:
    backend = Transcript(default=sorry())
    llm = ToolLLM({"formalize": [answer, lean(GOOD)]})
    st = LeanKernel(backend, llm, settings()).formalize(OB, "ctx")
    assert st is not None and len(backend.snippets) == 1
    assert "cannot be used" in llm.calls("formalize")[1].messages[-1].content


def test_a_statement_needs_exactly_its_one_sorry() -> None:
    two = classify_repl({"messages": [_msg("warning", "declaration uses 'sorry'", 3), _msg("warning",
                         "declaration uses 'sorry'", 5)], "sorries": [{"goal": "⊢ P"}, {"goal": "⊢ Q"}]})
    backend = Transcript(queue=[two, sorry()])
    llm = ToolLLM({"formalize": [lean(GOOD), lean(GOOD)]})
    assert LeanKernel(backend, llm, settings()).formalize(OB, "ctx") is not None
    assert len(backend.snippets) == 2


def test_model_tool_calls_are_answered_and_bounded_per_turn() -> None:
    search_hit = classify_repl({"messages": [_msg("info", "2 match(es) (at most 2000 counted); shown: 2\nsq_nonneg\n"
                                                          "pow_two_nonneg", 4)]})
    backend = Transcript(rules=[when("#eval show CommandElabM", search_hit)],
                         queue=[error("unknown constant"), error("unknown constant"), sorry()])  # 2 tools, the draft
    calls = [("lean_search", {"fragment": "sq_nonneg"}), ("lean_check", {"code": "example : 1 = 1 := rfl"}),
             ("lean_name", {"name": "sq_nonneg"}), ("lean_name", {"name": "pow_two"})]
    llm = ToolLLM({"formalize": [calls[:2], calls[2:], lean(GOOD)]})
    st = LeanKernel(backend, llm, settings(lean_tool_calls=3)).formalize(OB, "ctx")
    assert st is not None
    reqs = llm.calls("formalize")
    assert reqs[0].tools and reqs[0].tool_choice == "auto" and reqs[0].json_schema is None
    tool_msgs = [m for m in reqs[1].messages if m.role == "tool"]
    assert [m.tool_call_id for m in tool_msgs] == ["call_1_0", "call_1_1"]
    assert "sq_nonneg" in tool_msgs[0].content and "status: lean_error" in tool_msgs[1].content
    last = [m for m in reqs[2].messages if m.role == "tool"]
    assert "budget" in last[-1].content  # the 4th call of the turn is refused without a check
    assert reqs[2].tools is None and reqs[2].json_schema is not None  # budget spent: answer now
    assert len(backend.snippets) == 4  # search, check, one name lookup, the draft
    assert any(t.startswith("tool lean_search") for t in st.trajectory)


def test_an_endpoint_without_function_calling_gets_plain_requests() -> None:
    llm = ToolLLM({"formalize": [lean(GOOD)]}, refuse_tools=True)
    k = LeanKernel(Transcript(default=sorry()), llm, settings())
    assert k.formalize(OB, "ctx") is not None
    assert [bool(r.tools) for r in llm.requests] == [True, False] and not k.tools_enabled


def test_no_model_answer_or_no_backend_is_none_not_an_exception() -> None:
    llm = ToolLLM({"formalize": [LLMError("down"), LLMError("down")]})
    assert LeanKernel(Transcript(), llm, settings(lean_tool_calls=0)).formalize(OB, "ctx") is None
    k = LeanKernel(Transcript(), ToolLLM({"formalize": [LLMError("down"), LLMError("down")]}), settings())
    assert k.formalize(OB, "ctx") is None and k.tools_enabled  # an outage is not a refusal of tools

    class Gone(Transcript):
        def check(self, code: str, timeout_s: float | None = None) -> CheckResult:
            raise LeanUnavailable("REPL binary missing")

    k = LeanKernel(Gone(), ToolLLM({"formalize": [lean(GOOD)]}), settings(lean_tool_calls=0))
    assert k.formalize(OB, "ctx") is None and "unavailable" in k.last_trajectory[-1]
    assert LeanKernel(Transcript(), None, settings()).formalize(OB, "ctx") is None


# ---------------------------------------------------------------------------------------
# The proof loop

STATEMENT = FormalStatement(text=f"theorem {NAME} (x : ℝ) : x ^ 2 ≥ 0 := by sorry", compiled=True)


def _tactic_of(code: str) -> str:
    return code.split(":= by\n  ", 1)[1].split("\n\n#print axioms")[0]


def test_portfolio_runs_cheapest_first_one_check_each_and_proves() -> None:
    backend = Transcript(elaborates=True, rules=[when("  positivity\n", valid(NAME))], default=error("failed"))
    r = LeanKernel(backend, None, settings()).prove(STATEMENT, "original")
    assert r.status == "passed" and r.method == "transcript" and "positivity" in r.reason
    assert r.artifact == (f"set_option autoImplicit false in\nset_option maxHeartbeats {MAX_HEARTBEATS} in\n"
                          f"theorem {NAME} (x : ℝ) : x ^ 2 ≥ 0 := by\n  positivity")
    assert backend.snippets[0].endswith(f"theorem {NAME} (x : ℝ) : x ^ 2 ≥ 0 := by sorry")  # elaborates first
    tried = [_tactic_of(s) for s in backend.snippets[1:]]
    assert tried == list(MATHLIB_TACTICS[:MATHLIB_TACTICS.index("positivity") + 1])
    assert all(s.rstrip().endswith(f"#print axioms {NAME}") for s in backend.snippets[1:])


def test_core_only_flavour_uses_core_tactics_and_no_mathlib() -> None:
    backend = Transcript(elaborates=True, default=error("failed"))
    r = LeanKernel(backend, None, settings(lean_mathlib=False)).prove(STATEMENT, "original")
    assert r.status == "inconclusive" and "search exhausted" in r.reason
    assert [_tactic_of(s) for s in backend.snippets[1:]] == list(core_tactics("4.19.0"))  # the transcript's version
    assert "decide +kernel" in core_tactics("4.19.0") and "grind" not in core_tactics("4.19.0")
    assert not any("import" in s for s in backend.snippets)


def test_negation_branch_refutes_with_the_negated_statement() -> None:
    neg = f"{NAME}_neg"
    backend = Transcript(elaborates=True, rules=[when(":= by sorry", sorry("⊢ ¬∀ (x : ℝ), x ^ 2 ≥ 0")), when("  norm_num\n", valid(neg))],
                         default=error("failed"))
    r = LeanKernel(backend, None, settings()).prove(STATEMENT, "negation")
    assert r.status == "refuted" and r.artifact is not None
    assert f"\ntheorem {neg} : ¬ (∀ (x : ℝ), x ^ 2 ≥ 0) := by" in r.artifact
    assert backend.snippets[0].endswith(f"theorem {neg} : ¬ (∀ (x : ℝ), x ^ 2 ≥ 0) := by sorry")
    assert all(f"#print axioms {neg}" in s for s in backend.snippets[1:])


def test_a_negation_that_does_not_elaborate_is_inconclusive() -> None:
    backend = Transcript(default=error("unknown identifier 'y'"))
    r = LeanKernel(backend, None, settings()).prove(STATEMENT, "negation")
    assert r.status == "inconclusive" and "does not elaborate" in r.reason and len(backend.snippets) == 1


@pytest.mark.parametrize(("result", "why"), [
    (valid(NAME, "propext, sorryAx, Classical.choice, Quot.sound"), "nonstandard axioms"),
    (valid(NAME, "propext, Lean.ofReduceBool"), "nonstandard axioms"),
    (classify_repl({"env": 0}), "#print axioms gave no answer"),
])
def test_a_valid_check_still_needs_the_standard_axioms(result: CheckResult, why: str) -> None:
    backend = Transcript(elaborates=True, rules=[when("  decide\n", result)], default=error("failed"))
    r = LeanKernel(backend, None, settings()).prove(STATEMENT, "original")
    assert r.status == "inconclusive" and r.reason.startswith("screening failure") and why in r.reason


def test_model_proofs_after_the_portfolio_screen_changes_and_sorry_then_pass() -> None:
    model_proof = "nlinarith [sq_nonneg x, sq_abs x]"
    backend = Transcript(elaborates=True, rules=[when(model_proof, valid(NAME))], default=error("linarith failed"))
    llm = ToolLLM({"prove": [lean("theorem t (x : ℝ) (hx : x ≠ 0) : x ^ 2 ≥ 0 := by positivity"),
                             lean("by\n  sorry"), lean(f"by\n  {model_proof}")]})
    r = LeanKernel(backend, llm, settings(lean_proof_budget=3, lean_tool_calls=0)).prove(STATEMENT, "original")
    assert r.status == "passed" and "attempt 3" in r.reason and model_proof in (r.artifact or "")
    assert len(backend.snippets) == 1 + len(MATHLIB_TACTICS) + 1  # refused attempts are never checked
    msgs = llm.calls("prove")[2].messages
    assert "sorry" in msgs[-1].content and "changed the statement" in msgs[-3].content
    assert f"theorem {NAME} (x : ℝ) : x ^ 2 ≥ 0 := by\n  sorry" in msgs[1].content


def test_failed_model_proof_gets_diagnostics_and_goals_back() -> None:
    unsolved = classify_repl({"messages": [_msg("error", "unsolved goals\nx : ℝ\n⊢ 0 ≤ x ^ 2", 4)],
                              "sorries": []})
    backend = Transcript(elaborates=True, rules=[when("simp [pow_two]", unsolved)], default=error("failed"))
    llm = ToolLLM({"prove": [lean("by simp [pow_two]"), lean("by simp [pow_two]")]})
    r = LeanKernel(backend, llm, settings(lean_proof_budget=2, lean_tool_calls=0)).prove(STATEMENT, "original")
    assert r.status == "inconclusive" and "2 model attempt(s)" in r.reason
    assert "⊢ 0 ≤ x ^ 2" in llm.calls("prove")[1].messages[-1].content


def test_timeouts_are_inconclusive_never_evidence() -> None:
    r = LeanKernel(Transcript(elaborates=True, default=timeout()), None, settings()).prove(STATEMENT, "original")
    assert r.status == "inconclusive" and r.reason.startswith("timeout")


def test_the_search_time_budget_stops_the_portfolio() -> None:
    now = [0.0]
    backend = Transcript(elaborates=True, default=error("failed"))
    original = backend.check

    def slow(code: str, timeout_s: float | None = None) -> CheckResult:
        now[0] += 10.0
        return original(code, timeout_s)

    backend.check = slow  # type: ignore[method-assign]
    k = LeanKernel(backend, None, settings(), search_time_s=25.0, clock=lambda: now[0])
    r = k.prove(STATEMENT, "original")
    assert r.status == "inconclusive" and r.reason.startswith("timeout") and len(backend.snippets) == 3
    assert all(t is not None and t <= 20.0 for t in backend.timeouts)


def test_unavailable_backend_and_uncompiled_statements_are_inconclusive() -> None:
    class Gone(Transcript):
        def check(self, code: str, timeout_s: float | None = None) -> CheckResult:
            raise LeanUnavailable("server unreachable")

    r = LeanKernel(Gone(), None, settings()).prove(STATEMENT, "original")
    assert r.status == "inconclusive" and "server unreachable" in r.reason
    r = LeanKernel(Transcript(), None, settings()).prove(FormalStatement(text="x = 1", language="equation"), "original")
    assert r.status == "inconclusive" and "no compiled" in r.reason


# ---------------------------------------------------------------------------------------
# Counterexamples


def test_counterexample_checked_in_lean() -> None:
    st = FormalStatement(text="theorem t (x : ℚ) (hx : x ≠ 0) : x ^ 2 = x", compiled=True)
    backend = Transcript(rules=[when("norm_num at hcx", valid("t_cx"))], default=error("failed"))
    r = LeanKernel(backend, None, settings()).refute_with_counterexample(st, {"x": "2", "lhs": "4"})
    assert r.status == "refuted" and "x = 2" in r.reason
    assert "have hcx := @hall (2 : ℚ) (by norm_num)" in backend.snippets[0]
    r = LeanKernel(backend, None, settings()).refute_with_counterexample(st, {"x": "sqrt(2)"})
    assert r.status == "inconclusive" and "not a plain number" in r.reason
    r = LeanKernel(Transcript(default=error("failed")), None, settings()).refute_with_counterexample(st, {"x": "2"})
    assert r.status == "inconclusive" and "did not check" in r.reason


# ---------------------------------------------------------------------------------------
# Elaboration pre-check, heartbeats, autoImplicit, the portfolio's additions


def heartbeats() -> CheckResult:
    """What Lean answers when a tactic runs past ``maxHeartbeats`` (the REPL stays alive)."""
    return classify_repl({"env": 1, "messages": [_msg("error", "(deterministic) timeout at `whnf`, maximum number of "
                                                      "heartbeats (200000) has been reached\nUse `set_option "
                                                      "maxHeartbeats <num>` to set the limit.", 4, 2)]})


def test_a_statement_that_does_not_elaborate_stops_before_any_tactic() -> None:
    backend = Transcript(default=error("unknown identifier 'y'"))
    kernel = LeanKernel(backend, None, settings())
    r = kernel.prove(STATEMENT, "original")
    assert r.status == "inconclusive" and r.reason.startswith(NOT_ELABORATED) and "unknown identifier 'y'" in r.reason
    assert len(backend.snippets) == 1 and backend.snippets[0].rstrip().endswith(":= by sorry")
    tactic, why = kernel.prove_by_tactics(STATEMENT.text)
    assert tactic is None and why.startswith(NOT_ELABORATED) and len(backend.snippets) == 2


def test_the_elaboration_check_runs_once_per_search_then_the_tactics() -> None:
    backend = Transcript(elaborates=True, rules=[when("  omega\n", valid(NAME))], default=error("failed"))
    tactic, why = LeanKernel(backend, None, settings()).prove_by_tactics(STATEMENT.text)
    assert tactic == "omega" and why == ""
    assert sum(s.rstrip().endswith(":= by sorry") for s in backend.snippets) == 1
    assert backend.snippets[0].rstrip().endswith(":= by sorry") and "maxHeartbeats" not in backend.snippets[0]


def test_every_attempt_is_bounded_by_heartbeats_and_a_heartbeat_timeout_moves_on() -> None:
    backend = Transcript(elaborates=True, rules=[when("  norm_num\n", heartbeats()), when("  simp\n", valid(NAME))],
                         default=error("failed"))
    r = LeanKernel(backend, None, settings()).prove(STATEMENT, "original")
    assert heartbeats().status == "timeout" and "environment" in heartbeats().detail
    assert r.status == "passed" and "simp" in r.reason  # the next tactic ran after the heartbeat timeout
    attempts = backend.snippets[1:]
    assert attempts and all(f"set_option maxHeartbeats {MAX_HEARTBEATS} in\ntheorem {NAME}" in s for s in attempts)


def test_checked_statements_turn_auto_implicit_off() -> None:
    backend = Transcript(queue=[sorry()])
    llm = ToolLLM({"formalize": [lean(GOOD + " := by sorry")]})
    st = LeanKernel(backend, llm, settings()).formalize(OB, "Problem: show x^2 ≥ 0.")
    assert st is not None and st.compiled
    assert backend.snippets[0] == f"import Mathlib\n\nset_option autoImplicit false in\ntheorem {NAME} (x : ℝ) : x ^ 2 ≥ 0 := by sorry"
    backend = Transcript(elaborates=True, default=error("failed"))
    LeanKernel(backend, None, settings()).prove(STATEMENT, "original")
    assert all(s.count("set_option autoImplicit false in\n") == 1 for s in backend.snippets)


def test_checker_stops_on_a_statement_that_does_not_elaborate() -> None:
    from faithsieve.lean.checker import LeanChecker
    from faithsieve.obligations.kinds.models import IdentityObligation, Unknown

    from faithsieve.mathtext import extract_formulas
    from faithsieve.mathtext.ast import Rel

    a, op, b = extract_formulas("(x+1)^2 = x^2 + 1")[0].chain.links()[0]
    ob = IdentityObligation(id="o0", step=1, span=(0, 1), edge="e0", source="", claim=Rel(a, op, b),
                            asserted_identity=True)
    backend = Transcript(default=error("unknown constant"))
    out = LeanChecker(backend=backend, settings=settings()).check(ob, float("inf"))
    assert isinstance(out, Unknown) and NOT_ELABORATED in out.reason
    assert len(backend.snippets) == 1  # no tactic, no negation, no counterexample snippet


@pytest.mark.parametrize(("version", "expected"), [
    (None, CORE_TACTICS),
    ("v4.14.0", CORE_TACTICS),
    ("v4.15.0", ("decide", "rfl", "decide +kernel", *CORE_TACTICS[2:])),
    ("v4.24.0", ("decide", "rfl", "decide +kernel", *CORE_TACTICS[2:], "grind")),
])
def test_core_tactics_follow_the_lean_version(version: str | None, expected: tuple[str, ...]) -> None:
    assert core_tactics(version) == expected


def test_bounds_on_pi_and_e_join_the_portfolio_only_where_the_goal_mentions_them() -> None:
    kernel = LeanKernel(Transcript(), None, settings())
    pi = parse_header("theorem t : Real.pi > 3")
    e = parse_header("theorem t : Real.exp 1 < 3")
    plain = parse_header("theorem t (x : ℝ) : x ^ 2 ≥ 0")
    assert [t for t in kernel.portfolio(pi) if "Real.pi_gt_three" in t] and not any("exp_one" in t for t in kernel.portfolio(pi))
    assert [t for t in kernel.portfolio(e) if "Real.exp_one_gt_d9" in t and "Real.exp_one_lt_d9" in t]
    assert kernel.portfolio(plain) == MATHLIB_TACTICS
    assert [k for k, _ in BOUND_TACTICS] and all(t not in CORE_TACTICS for _, t in BOUND_TACTICS)
    core = LeanKernel(Transcript(), None, settings(lean_mathlib=False))
    assert not any("Real." in t for t in core.portfolio(pi))


def test_small_witnesses_are_tried_for_an_existential_goal() -> None:
    two = witness_tactics("∃ (x : ℝ) (y : ℝ), x + y = 1 ∧ ¬ (x * y = 0)", mathlib=True)
    assert two[0] == "exact ⟨(0), (0), by norm_num⟩" and len(two) == len(WITNESSES)
    assert "exact ⟨(1 / 2), (1 / 2), by norm_num⟩" in two
    grouped = witness_tactics("∃ (a b : Int), a = b", mathlib=False)
    assert grouped[0] == "exact ⟨(0), (0), by decide⟩" and not any("/" in t for t in grouped)
    assert witness_tactics("¬ (x = 1)", mathlib=True) == ()
    backend = Transcript(elaborates=True, rules=[when("exact ⟨(2), by norm_num⟩", valid("t"))], default=error("failed"))
    tactic, _ = LeanKernel(backend, None, settings()).prove_by_tactics("theorem t : ∃ (x : ℚ), x ^ 2 = 4 ∧ ¬ (x = -2)")
    assert tactic == "exact ⟨(2), by norm_num⟩"  # the evidence names the witness that closed the goal


def test_the_elaboration_pre_check_is_capped_by_the_deadline() -> None:
    """Issue 39: ``:= by sorry`` went out under the full 60 s check limit whatever the search's deadline."""
    now = [100.0]
    backend = Transcript(elaborates=True, default=error("failed"))
    k = LeanKernel(backend, None, settings(), clock=lambda: now[0])
    header = "theorem t (x : ℚ) : x ^ 2 ≥ 0"
    tactic, why = k.prove_by_tactics(header, deadline=102.5)
    assert tactic is None
    assert backend.snippets[0].rstrip().endswith(":= by sorry") and backend.timeouts[0] == 2.5
    assert all(t is not None and t <= 2.5 for t in backend.timeouts)
    sent = len(backend.snippets)
    tactic, why = k.prove_by_tactics(header, deadline=99.0)  # already past: nothing is sent
    assert tactic is None and why.startswith("the proof-search time budget was spent") and len(backend.snippets) == sent
