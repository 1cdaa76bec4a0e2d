"""The Lean tools offered to a model: specs, dispatch, validation, bounds, and the snippet helpers."""

from __future__ import annotations

import json

import pytest
from faithsieve.lean.backend import CheckResult, LeanUnavailable
from faithsieve.lean.screen import classify_repl
from faithsieve.lean.snippets import (
    counterexample_snippets,
    parse_header,
    split_proof,
    strip_imports,
    top_level_assign,
    unsafe_commands,
)
from faithsieve.lean.tools import (
    TOOL_NAMES,
    ToolLimits,
    ToolRunner,
    goal_snippet,
    search_snippet,
    tool_specs,
)

from faithsieve.llm.types import ToolCall
from tests.lean.test_kernel import Transcript, error, sorry, valid, when


def call(name: str, args: dict | str) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=args if isinstance(args, str) else json.dumps(args))


def runner(backend: Transcript | None = None, **limits: object) -> ToolRunner:
    return ToolRunner(backend or Transcript(default=valid("x")), ToolLimits(**limits))  # type: ignore[arg-type]


# ---- specs ----

def test_specs_are_openai_function_tools_with_closed_parameters() -> None:
    specs = tool_specs()
    assert [s["function"]["name"] for s in specs] == list(TOOL_NAMES) == ["lean_check", "lean_name", "lean_search",
                                                                          "lean_goal"]
    for s in specs:
        assert s["type"] == "function" and s["function"]["description"]
        params = s["function"]["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False and params["required"]
        assert all(set(p) <= {"type", "description"} for p in params["properties"].values())
    assert tool_specs(("lean_goal",))[0]["function"]["parameters"]["required"] == ["statement"]
    with pytest.raises(ValueError):
        ToolRunner(Transcript(), names=("lean_shell",))


# ---- dispatch ----

def test_lean_check_compiles_with_our_imports_and_returns_status_and_messages() -> None:
    backend = Transcript(default=error("unknown identifier 'foo'"))
    r = ToolRunner(backend, ToolLimits(timeout_s=7.0))
    out = r.run(call("lean_check", {"code": "import Mathlib.Tactic\nexample : foo = 1 := rfl"}))
    assert out.startswith("status: lean_error") and "unknown identifier 'foo'" in out
    assert backend.snippets == ["import Mathlib\n\nexample : foo = 1 := rfl"] and backend.timeouts == [7.0]
    core = Transcript(default=sorry())
    assert "goals at sorry" in ToolRunner(core, mathlib=False).run(call("lean_check", {"code": "example : 1 = 1 := sorry"}))
    assert core.snippets == ["example : 1 = 1 := sorry"]
    assert r.log and r.log[0].startswith("tool lean_check(")


def test_lean_name_checks_and_prints_one_identifier() -> None:
    backend = Transcript(default=classify_repl({"messages": [
        {"severity": "info", "pos": {"line": 3, "column": 0}, "data": "sq_nonneg.{u} {α : Type u} (a : α) : 0 ≤ a ^ 2"}]}))
    out = runner(backend).run(call("lean_name", {"name": "sq_nonneg"}))
    assert "0 ≤ a ^ 2" in out and backend.snippets == ["import Mathlib\n\n#check @sq_nonneg\n#print sq_nonneg"]


def test_lean_search_builds_a_core_program_and_returns_its_listing() -> None:
    listing = classify_repl({"messages": [{"severity": "info", "pos": {"line": 2, "column": 0},
                                           "data": "2 match(es) (at most 2000 counted); shown: 2\nadd_comm\nNat.add_comm"}]})
    backend = Transcript(default=listing)
    out = runner(backend, search_results=7).run(call("lean_search", {"fragment": "Add_Comm"}))
    assert out.endswith("add_comm\nNat.add_comm")
    snippet = backend.snippets[0]
    assert 'let frag := "add_comm"' in snippet and "hits.extract 0 7" in snippet and "#eval" in snippet
    assert search_snippet("x", 3).count("#eval") == 1


def test_lean_goal_returns_the_goal_at_the_final_sorry() -> None:
    backend = Transcript(default=sorry("x : ℝ\nh : 0 < x\n⊢ 0 < x ^ 2"))
    out = runner(backend).run(call("lean_goal", {"statement": "theorem t (x : ℝ) (h : 0 < x) : x ^ 2 > 0 := by simp",
                                                 "tactic_prefix": "rw [gt_iff_lt]"}))
    assert out == "goal after the prefix:\nx : ℝ\nh : 0 < x\n⊢ 0 < x ^ 2"
    assert backend.snippets[0].endswith("theorem t (x : ℝ) (h : 0 < x) : x ^ 2 > 0 := by\n  rw [gt_iff_lt]\n  sorry")
    closed = Transcript(default=error("no goals to be proved"))
    assert "closes every goal" in runner(closed).run(call("lean_goal", {"statement": "theorem t : 1 = 1",
                                                                        "tactic_prefix": "rfl"}))
    assert "may not contain sorry" in runner().run(call("lean_goal", {"statement": "theorem t : 1 = 1",
                                                                      "tactic_prefix": "sorry"}))


# ---- errors are strings for the model, never exceptions ----

@pytest.mark.parametrize(("name", "args", "expected"), [
    ("lean_shell", {"cmd": "ls"}, "unknown tool 'lean_shell'"),
    ("lean_check", "{not json", "not JSON"),
    ("lean_check", "[1, 2]", "must be a JSON object"),
    ("lean_check", {}, "code: Field required"),
    ("lean_check", {"code": "x", "extra": 1}, "extra: Extra inputs are not permitted"),
    ("lean_name", {"name": "Nat.add_comm\n#eval 1"}, "bad arguments for lean_name"),
    ("lean_search", {"fragment": 'a"; #eval'}, "bad arguments for lean_search"),
    ("lean_search", {"fragment": "a"}, "at least 2 characters"),
    ("lean_check", {"code": "#eval IO.Process.run {cmd := \"ls\"}"}, "commands the tools do not run: #eval"),
    ("lean_check", {"code": "run_cmd pure ()"}, "run_cmd"),
    ("lean_check", {"code": "x" * 7000}, "arguments too long"),
])
def test_bad_calls_come_back_as_error_strings_without_a_check(name: str, args: dict | str, expected: str) -> None:
    backend = Transcript()
    out = runner(backend).run(call(name, args))
    assert out.startswith("error:") and expected in out and backend.snippets == []


def test_the_call_budget_counts_per_turn() -> None:
    backend = Transcript(default=valid("x"))
    r = runner(backend, max_calls=2)
    for _ in range(2):
        assert r.run(call("lean_check", {"code": "example : 1 = 1 := rfl"})).startswith("status: valid")
    assert r.exhausted and "budget" in r.run(call("lean_check", {"code": "example : 1 = 1 := rfl"}))
    assert len(backend.snippets) == 2
    r.new_turn()
    assert not r.exhausted and r.run(call("lean_check", {"code": "example : 1 = 1 := rfl"})).startswith("status")
    assert r.total == 3


def test_output_is_bounded() -> None:
    big = classify_repl({"messages": [{"severity": "error", "pos": {"line": 1, "column": 0}, "data": "e" * 20_000}]})
    out = runner(Transcript(default=big), max_output_chars=500).run(call("lean_check", {"code": "example : True"}))
    assert len(out) <= 500


def test_backend_failures_are_strings() -> None:
    class Gone(Transcript):
        def check(self, code: str, timeout_s: float | None = None) -> CheckResult:
            raise LeanUnavailable("no toolchain")

    class Broken(Transcript):
        def check(self, code: str, timeout_s: float | None = None) -> CheckResult:
            raise RuntimeError("boom")

    for backend, text in ((Gone(), "Lean backend unavailable: no toolchain"), (Broken(), "check failed (RuntimeError)")):
        for name, args in (("lean_check", {"code": "example : True := trivial"}), ("lean_search", {"fragment": "ab"})):
            out = runner(backend).run(call(name, args))
            assert out.startswith("error:") and (text in out or "search failed" in out)


def test_timeouts_are_reported_as_status() -> None:
    from tests.lean.test_kernel import timeout

    out = runner(Transcript(rules=[when("example", timeout())])).run(call("lean_check", {"code": "example : True"}))
    assert out.startswith("status: timeout") and "timed out" in out


# ---- pure helpers ----

@pytest.mark.parametrize(("text", "header", "proof"), [
    ("theorem t (x : ℕ := 3) : x = x := rfl", "theorem t (x : ℕ := 3) : x = x", "rfl"),
    ("theorem t : ∀ n : ℕ, n = n := by\n  intro n; rfl", "theorem t : ∀ n : ℕ, n = n", "by\n  intro n; rfl"),
    ("theorem t : 1 = 1", "theorem t : 1 = 1", None),
])
def test_split_proof(text: str, header: str, proof: str | None) -> None:
    assert split_proof(text) == (header, proof)
    assert top_level_assign("(a := 1)") == -1


def test_strip_imports_and_unsafe_commands() -> None:
    assert strip_imports("import Mathlib\nimport Foo.Bar\n\ntheorem t : True := trivial") == "theorem t : True := trivial"
    # indented, after blank lines, the module on the next line; a name that starts with ``import`` is kept
    assert strip_imports("\n\n  import Mathlib\n\timport\n  Foo\ntheorem t : True := trivial") == "theorem t : True := trivial"
    assert strip_imports("theorem importance : True := trivial\n\n\nimport X") == "theorem importance : True := trivial"
    assert strip_imports("\n" * 20_000 + "import X\ntheorem t : True := trivial") == "theorem t : True := trivial"
    assert unsafe_commands("theorem t : True := by trivial") == []
    assert unsafe_commands("#eval IO.println 1\n@[implemented_by f] def g := 1") == ["#eval", "@[implemented_by", "IO"]
    assert unsafe_commands("open IO in\nelab \"x\" : term => do Process.run {cmd := \"ls\"}") == ["IO", "elab"]
    assert unsafe_commands("@[command_elab foo] def f : CommandElab := fun _ => pure ()") == ["@[command_elab"]
    assert unsafe_commands("theorem t (IOI : ℕ) : IOI = IOI := rfl") == []
    assert unsafe_commands("set_option maxHeartbeats 0 in\ntheorem t : True := trivial") == ["set_option maxHeartbeats 0"]


def test_parse_header_reads_binders_and_prelude() -> None:
    h = parse_header("open Real Nat\n@[simp] theorem t {α : Type} [Inhabited α] ⦃x : α⦄ (h : x = x) : True := trivial")
    assert h.name == "t" and h.prelude == "open Real Nat" and h.conclusion == "True"
    assert h.binders == ("{α : Type}", "[Inhabited α]", "⦃x : α⦄", "(h : x = x)")
    assert h.text() == "theorem t {α : Type} [Inhabited α] ⦃x : α⦄ (h : x = x) : True"
    assert h.text("u", with_prelude=True).startswith("open Real Nat\ntheorem u ")


def test_goal_snippet_dedents_the_prefix() -> None:
    assert goal_snippet("import Mathlib\ntheorem t : P := by simp", "    intro x\n    simp") == \
        "theorem t : P := by\n  intro x\n  simp\n  sorry"
    assert goal_snippet("theorem t : P", "") == "theorem t : P := by\n  sorry"


def test_counterexample_snippets() -> None:
    snippets = counterexample_snippets("theorem t {n : ℤ} [Fact True] (hn : 0 < n) : n ^ 2 > n", {"n": "1 (≈ 1.0)"},
                                       mathlib=False)
    name, closer, code = snippets[0]
    assert name == "t_cx" and closer == "simp at hcx" and len(snippets) == 3
    assert "¬ (∀ {n : ℤ} [Fact True] (hn : 0 < n), n ^ 2 > n)" in code
    assert "have hcx := @hall (1 : ℤ) _ (by decide)" in code
    for header, values, why in (("theorem t : 1 = 2", {"x": "1"}, "no variables"),
                                ("theorem t (x : ℕ) : x = 1", {"y": "1"}, "no value"),
                                ("theorem t (x : ℕ) : x = 1", {"x": "pi"}, "plain number")):
        with pytest.raises(ValueError, match=why):
            counterexample_snippets(header, values, mathlib=True)


def test_lean_search_in_core_lean_imports_lean_first() -> None:
    backend = Transcript(default=classify_repl({"messages": []}))
    ToolRunner(backend, mathlib=False).run(call("lean_search", {"fragment": "add_comm"}))
    assert backend.snippets[0].startswith("import Lean\n\nopen Lean Elab Command in\n#eval")
    mathlib = Transcript(default=classify_repl({"messages": []}))
    ToolRunner(mathlib, mathlib=True).run(call("lean_search", {"fragment": "add_comm"}))
    assert mathlib.snippets[0].startswith("import Mathlib\n\nopen Lean") and "import Lean\n" not in mathlib.snippets[0]
    core = Transcript(default=sorry())
    ToolRunner(core, mathlib=False).run(call("lean_check", {"code": "example : 1 = 1 := sorry"}))
    assert core.snippets == ["example : 1 = 1 := sorry"]  # only the search program needs the import
