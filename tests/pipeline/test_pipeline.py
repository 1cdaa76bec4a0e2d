"""Synthesis and the end-to-end pipeline."""

import json

from faithsieve.cli import main
from faithsieve.core.settings import Settings
from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps


def test_first_refuted_step_wins() -> None:
    v = localize(proof_from_steps("p", ["3 + 4 = 7", "7 × 2 = 15", "15 - 1 = 13"]))
    assert v.verdict == "error" and v.first_error_step == 2
    refuted = [e for e in v.steps[1].evidence if e.status == "refuted"]
    assert refuted[0].counterexample == {"lhs": "14", "rhs": "15", "difference": "-1"}
    assert v.steps[2].status == "refuted"  # later errors are reported too, but are not the verdict
    assert "7 × 2 = 15" in v.reason or "7 * 2 = 15" in v.reason


def test_correct_with_coverage() -> None:
    v = localize(proof_from_steps("p", ["3 + 4 = 7", "We are done."]))
    assert v.verdict == "correct" and v.first_error_step is None
    c = v.coverage
    assert (c.steps, c.steps_with_obligations, c.steps_decided, c.obligations_decided) == (2, 1, 1, 1)


def test_unknown_never_flags() -> None:
    v = localize(proof_from_steps("p", [r"\( 10^{10^{10}} = 7 \)", r"\( x^2 + 3x = 5 \)"]))
    assert v.verdict == "correct"
    assert {e.status for s in v.steps for e in s.evidence} == {"unknown"}


def test_budget_exhaustion_is_unknown() -> None:
    s = Settings(proof_time_limit_s=1e-9)
    v = localize(proof_from_steps("p", ["1 + 1 = 3"] * 3), s)
    assert v.verdict == "correct"
    assert all(e.status == "unknown" and "budget" in (e.reason or "") for st in v.steps for e in st.evidence)


def test_cli_localize_json_and_text(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"problem": "p", "proof": "Step 1: 2 + 2 = 5\nStep 2: done"}))
    assert main(["localize", str(f)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out)[:2] == ["verdict", "first_error_step"] and out["first_error_step"] == 1
    assert main(["localize", str(f), "--format", "text"]) == 0
    text = capsys.readouterr().out
    assert "VERDICT: error at step 1" in text and "counterexample" in text
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["localize", str(bad)]) == 2


def test_imaginary_unit_in_complex_work() -> None:
    v = localize(proof_from_steps("Compute (1+2i)(1-2i).", ["We use i^2 = -1.", r"So \((1+2i)(1-2i) = 1 - 4i^2 = 5\)."]))
    assert v.verdict == "correct"
    assert [e.status for s in v.steps for e in s.evidence] == ["verified"] * 3


def test_custom_operations_are_not_multiplication() -> None:
    problem = "Define the operation a * b = a^2 + b. Compute 1 * 2."
    v = localize(proof_from_steps(problem, ["Using the operation, 1*2 = 1^2 + 2 = 3."]))
    assert v.verdict == "correct"


def test_flag_scope_says_whether_every_earlier_step_was_decided() -> None:
    v = localize(proof_from_steps("p", ["3 + 4 = 7", "7 × 2 = 15"]))
    assert v.first_error_step == 2 and v.flag_scope == "first"
    # an earlier obligation left unknown: the first error is at or before the flag
    v = localize(proof_from_steps("p", [r"\( \pi \approx 3 \)", "7 × 2 = 15"]))
    assert v.first_error_step == 2 and v.flag_scope == "at_or_before"
    assert localize(proof_from_steps("p", ["3 + 4 = 7"])).flag_scope is None
