"""Checker output screening: recorded REPL / lean-interact and Kimina responses, sorry and axiom
screens, the source guard, feedback text.

The recorded responses are written in the documented shapes (see ``faithsieve.lean.screen``):
Lean REPL ``CommandResponse`` JSON (``messages`` with ``severity``/``pos``/``endPos``/``data``,
``sorries`` with ``goal``), the REPL's ``{"message": ...}`` failure, and Kimina ``/api/check``
result items (``id``, ``time``, ``response`` or ``error``)."""

import pytest
from faithsieve.lean.backend import CheckResult, LeanMessage
from faithsieve.lean.screen import (
    STANDARD_AXIOMS,
    axioms_ok,
    classify_kimina,
    classify_repl,
    diagnostics_text,
    first_error,
    forbidden_in_proof,
    lex_regions,
    parse_print_axioms,
    strip_comments,
    uses_sorry,
)


def _pos(line: int, col: int) -> dict:
    return {"line": line, "column": col}


AXIOMS_INFO = {"severity": "info", "pos": _pos(3, 0), "endPos": _pos(3, 13),
               "data": "'fs_arith_o0' depends on axioms: [propext, Classical.choice, Quot.sound]"}
VALID = {"env": 1, "messages": [AXIOMS_INFO]}
SORRY = {
    "env": 0,
    "messages": [{"severity": "warning", "pos": _pos(3, 8), "endPos": _pos(3, 19), "data": "declaration uses 'sorry'"}],
    "sorries": [{"pos": _pos(3, 47), "endPos": _pos(3, 52), "goal": "⊢ (2 + 3 : ℤ) = 5", "proofState": 0}],
}
LEAN_ERROR = {
    "env": 0,
    "messages": [
        {"severity": "error", "pos": _pos(3, 42), "endPos": _pos(3, 50),
         "data": "unsolved goals\n⊢ (2 + 2 : ℤ) = 5"},
        {"severity": "error", "pos": _pos(4, 2), "endPos": None, "data": "unknown identifier 'foo'"},
    ],
}
ERROR_AND_SORRY = {"env": 0, "messages": LEAN_ERROR["messages"][:1] + SORRY["messages"], "sorries": SORRY["sorries"]}
REPL_FAILURE = {"message": "Unknown environment."}


@pytest.mark.parametrize(
    ("response", "status"),
    [
        ({"env": 0}, "valid"),
        (VALID, "valid"),
        ({"env": 0, "messages": [{"severity": "warning", "pos": _pos(1, 9), "data": "unused variable `h`"}]}, "valid"),
        ({"env": 0, "messages": [{"severity": "trace", "pos": _pos(1, 0), "data": "[Meta] ..."}]}, "valid"),
        (SORRY, "sorry"),
        ({"env": 0, "messages": SORRY["messages"]}, "sorry"),  # the warning alone
        (LEAN_ERROR, "lean_error"),
        (ERROR_AND_SORRY, "lean_error"),
        ({"env": 0, "messages": [{"severity": "fatal", "pos": _pos(1, 0), "data": "?"}]}, "lean_error"),
        ({"env": 0, "messages": ["not a message"]}, "lean_error"),
        (REPL_FAILURE, "repl_error"),
        ({"env": 0, "messages": "oops"}, "repl_error"),
        ("Traceback ...", "repl_error"),
        (None, "repl_error"),
    ],
)
def test_classify_repl(response, status: str) -> None:
    r = classify_repl(response)
    assert r.status == status and r.backend == "lean-interact"


def test_classify_repl_reads_messages_goals_and_axioms() -> None:
    r = classify_repl(LEAN_ERROR)
    assert r.messages[0] == LeanMessage(severity="error", text="unsolved goals\n⊢ (2 + 2 : ℤ) = 5", line=3, column=42)
    assert len(r.errors) == 2
    s = classify_repl(SORRY)
    assert s.goals == ("⊢ (2 + 3 : ℤ) = 5",) and uses_sorry(s)
    v = classify_repl(VALID)
    assert v.axioms == ("propext", "Classical.choice", "Quot.sound") and axioms_ok(v.axioms) and not uses_sorry(v)
    assert "Unknown environment" in classify_repl(REPL_FAILURE).detail
    assert classify_repl({"env": 0}).axioms is None


def test_classify_repl_accepts_lean_interact_objects() -> None:
    from lean_interact.interface import CommandResponse, LeanError

    obj = CommandResponse.model_validate(LEAN_ERROR)
    assert classify_repl(obj).status == "lean_error"
    assert classify_repl(CommandResponse.model_validate(SORRY)).status == "sorry"
    assert classify_repl(LeanError(message="REPL died")).status == "repl_error"


KIMINA = [
    ({"id": "k1", "time": 0.84, "response": VALID}, "valid", 840.0),
    ({"id": "k2", "time": 1.5, "response": SORRY, "diagnostics": {"repl_uuid": "9f1c", "cpu_max": 98.0}},
     "sorry", 1500.0),
    ({"id": "k3", "time": 2.0, "response": LEAN_ERROR}, "lean_error", 2000.0),
    ({"id": "k4", "time": 20.0, "error": "Lean REPL command timed out in 20.0 seconds",
      "diagnostics": {"repl_uuid": "77ab"}}, "timeout", 20000.0),
    ({"id": "k5", "time": 20.0, "error": "Lean REPL header command timed out in 20.0 seconds"}, "timeout", 20000.0),
    ({"id": "k6", "time": 0.1, "error": "REPL process exited with code 137"}, "repl_error", 100.0),
    ({"id": "k7", "time": 0.3, "response": {"message": "Lean error: could not parse JSON"}}, "repl_error", 300.0),
    ({"id": "k8"}, "repl_error", 0.0),
    ({"custom_id": "v1", "response": {"env": 0, "messages": [], "sorries": [], "time": 1.25}}, "valid", 1250.0),
    (["not", "an", "item"], "repl_error", 0.0),
]


@pytest.mark.parametrize(("item", "status", "ms"), KIMINA)
def test_classify_kimina(item, status: str, ms: float) -> None:
    r = classify_kimina(item)
    assert (r.status, r.backend, r.time_ms) == (status, "kimina", ms)


def test_kimina_timeout_keeps_the_reason() -> None:
    r = classify_kimina(KIMINA[3][0])
    assert r.detail == "Lean REPL command timed out in 20.0 seconds"
    assert first_error(r) == "timeout: Lean REPL command timed out in 20.0 seconds"


@pytest.mark.parametrize(
    ("texts", "name", "expected"),
    [
        (["'t' depends on axioms: [propext, Classical.choice, Quot.sound]"], None,
         ("propext", "Classical.choice", "Quot.sound")),
        (["'t' does not depend on any axioms"], None, ()),
        (["'t' depends on axioms: [propext, sorryAx]"], "t", ("propext", "sorryAx")),
        (["'t' depends on axioms: [propext,\n Classical.choice,\n Lean.ofReduceBool]"], None,
         ("propext", "Classical.choice", "Lean.ofReduceBool")),
        (["'a' depends on axioms: [propext]", "'b' depends on axioms: [sorryAx]"], "a", ("propext",)),
        (["'a' depends on axioms: [propext]", "'b' depends on axioms: [sorryAx]"], None, ("propext", "sorryAx")),
        (["'«my thm»' depends on axioms: [Quot.sound]"], "my thm", ("Quot.sound",)),
        (["'b' depends on axioms: [propext]"], "a", None),
        (["unsolved goals"], None, None),
        ([], None, None),
    ],
)
def test_parse_print_axioms(texts: list[str], name: str | None, expected) -> None:
    msgs = [LeanMessage(severity="info", text=t) for t in texts]
    assert parse_print_axioms(msgs, name) == expected
    assert parse_print_axioms([{"severity": "info", "data": t} for t in texts], name) == expected


@pytest.mark.parametrize(
    ("axioms", "ok"),
    [
        (("propext", "Classical.choice", "Quot.sound"), True),
        ((), True),
        (("propext",), True),
        (("propext", "sorryAx"), False),
        (("Classical.choice", "Lean.ofReduceBool"), False),
        (("Lean.trustCompiler",), False),
        (("myAxiom",), False),
        (None, False),
    ],
)
def test_axioms_ok(axioms, ok: bool) -> None:
    assert axioms_ok(axioms) is ok
    assert {"propext", "Classical.choice", "Quot.sound"} == STANDARD_AXIOMS


def test_uses_sorry_sees_the_axiom_too() -> None:
    r = CheckResult(status="valid", axioms=("propext", "sorryAx"))
    assert uses_sorry(r)
    assert not uses_sorry(CheckResult(status="lean_error"))


@pytest.mark.parametrize(
    ("proof", "found"),
    [
        ("by norm_num", []),
        ("by\n  nlinarith [sq_nonneg (x - 1), sq_nonneg (x + 1)]", []),
        ("by sorry", ["sorry"]),
        ("by\n  constructor\n  · admit\n  · simp", ["admit"]),
        ("by exact sorryAx _ false", ["sorryAx"]),
        ("by native_decide", ["native_decide"]),
        ("by decide +native", ["native_decide"]),
        ("by exact Lean.ofReduceBool _ _ rfl", ["Lean.ofReduceBool"]),
        ("by\n  -- no sorry needed here\n  norm_num", []),
        ("by /- sorry /- nested -/ still a comment -/ simp", []),
        ("by /-- doc: admit -/ simp", []),
        ("by simp /- never closed", ["unterminated comment or string"]),
        ("by\n  simp [sorry_free_lemma, h.admitted]", []),
        ("by\n  have h' : x' = 1 := rfl\n  simp [h']", []),
        ('by\n  exact "sorry"', ["sorry"]),  # string literals are not exempt
        ("by\n  set_option debug.skipKernelTC true in\n  simp", ["set_option debug"]),
        ("by\n  set_option maxHeartbeats 400000 in\n  nlinarith", []),
        ("by\n  run_tac pure ()", ["run_cmd/#eval"]),
        ("by\n  unsafe exact x", ["unsafe"]),
        ("by simp\n\naxiom cheat : False", ["axiom"]),
        ("by simp\n#exit", ["#exit", "new command"]),
        ("by simp\nimport Mathlib", ["import"]),
        ("by simp\n\nmacro \"norm_num\" : tactic => `(tactic| sorry)", ["macro/elab/syntax", "sorry"]),
        ("by simp\n\nsyntax \"trivial\" : tactic", ["macro/elab/syntax"]),
        ("by simp\n@[implemented_by foo] def bar : Nat := 1", ["new command", "@[implemented_by]"]),
        ("by simp\n\nnamespace Foo\ntheorem fs_arith_o0 : True := trivial", ["new command"]),
        ("by simp\n#print axioms fs_arith_o0", ["new command"]),
        ("by\n  open Real in\n  simp", []),
    ],
)
def test_forbidden_in_proof(proof: str, found: list[str]) -> None:
    assert forbidden_in_proof(proof) == found


def test_lexer_regions() -> None:
    text = 'a -- c\nb /- x /- y -/ z -/ "s\\"t" \'"\' d'
    regions, open_end = lex_regions(text)
    kinds = [(text[a:b], k) for a, b, k in regions]
    assert kinds == [("-- c", "comment"), ("/- x /- y -/ z -/", "comment"), ('"s\\"t"', "string"),
                     ("'\"'", "string")]
    assert not open_end
    stripped, _ = strip_comments(text)
    assert len(stripped) == len(text) and "c" not in stripped[:6] and stripped.count("\n") == 1


def test_first_error_is_one_line() -> None:
    assert first_error(classify_repl(LEAN_ERROR)) == "line 3:42: unsolved goals ⊢ (2 + 2 : ℤ) = 5"
    assert first_error(classify_repl(SORRY)) == "incomplete proof: sorry remains (goal: ⊢ (2 + 3 : ℤ) = 5)"
    assert first_error(classify_repl(VALID)) == ""
    assert first_error(classify_repl(REPL_FAILURE)) == "repl_error: REPL error: Unknown environment."
    long = classify_repl({"env": 0, "messages": [{"severity": "error", "pos": _pos(1, 0), "data": "x" * 1000}]})
    line = first_error(long, limit=80)
    assert len(line) == 80 and line.endswith("…") and "\n" not in line


def test_diagnostics_text_is_bounded() -> None:
    text = diagnostics_text(classify_repl(ERROR_AND_SORRY))
    assert text == ("error at line 3:42: unsolved goals\n⊢ (2 + 2 : ℤ) = 5\n"
                    "warning at line 3:8: declaration uses 'sorry'\n"
                    "open goal at a sorry:\n⊢ (2 + 3 : ℤ) = 5")
    many = classify_repl({"env": 0, "messages": [
        {"severity": "error", "pos": _pos(i, 0), "data": f"error number {i} " + "y" * 100} for i in range(200)]})
    bounded = diagnostics_text(many, limit=1000)
    assert len(bounded) <= 1000 and "more)" in bounded and bounded.startswith("error at line 0:0: error number 0")
    timeout = diagnostics_text(classify_kimina(KIMINA[3][0]))
    assert timeout == "timeout: Lean REPL command timed out in 20.0 seconds"
