"""``faithsieve formalize``: a proof's obligations printed as a Lean file, refusals with their reasons."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from faithsieve.lean.formalize import formalize_proof
from faithsieve.lean.render import LeanStatement, Unrenderable

from faithsieve.cli.commands import main
from faithsieve.split import proof_from_input

EXAMPLES = Path(__file__).resolve().parents[2] / "datasets" / "examples"
PROOF = {"problem": "Compute.", "steps": [
    "The area is 12 × 15 = 180.",
    r"Half of it is \( \frac{180}{4} = 45 \).",
    r"Since \( \sqrt{-4} = 0 \), nothing changes.",
    r"Also \( \tan(\pi/2) = 0 \) and \( \ln 0 = 0 \).",
]}


@pytest.fixture
def proof_file(tmp_path: Path) -> Path:
    p = tmp_path / "proof.json"
    p.write_text(json.dumps(PROOF), encoding="utf-8")
    return p


def test_prints_a_lean_file_with_statements_refutations_and_refusals(proof_file: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["formalize", str(proof_file)]) == 0
    out = capsys.readouterr().out
    # no Mathlib project here: the header it assumes is said, and `import Mathlib` is only a comment
    assert out.startswith("-- header assumed: import Mathlib")
    assert "\n-- import Mathlib\n" in out and not any(line.startswith("import") for line in out.splitlines())
    # each declaration as the kernel checks it
    assert "set_option autoImplicit false in\ntheorem fs_arith_o0 : (12 * 15 : ℤ) = 180 := by sorry" in out
    assert "set_option autoImplicit false in\ntheorem fs_arith_o0_neg : ¬ ((12 * 15 : ℤ) = 180) := by sorry" in out
    assert "theorem fs_arith_o1 : (180 / 4 : ℚ) = 45 := by sorry" in out
    assert "-- not rendered: √(-4) has no real value" in out
    assert "-- not rendered: tan(pi / 2) has no value" in out and "-- not rendered: log(0) has no real value" in out
    assert "Real.sqrt (-4)" not in out and "Real.log 0" not in out


def test_core_flavour_follows_the_lean_version(proof_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["formalize", str(proof_file), "--flavour", "core", "--lean-version", "v4.19.0", "--json"]) == 0
    recs = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert recs["o0"]["statement"] == "theorem fs_arith_o0 : (12 * 15 : Int) = 180"
    assert not recs["o1"]["rendered"] and "v4.24.0" in recs["o1"]["reason"] and "v4.19.0" in recs["o1"]["reason"]
    assert main(["formalize", str(proof_file), "--flavour", "core", "--lean-version", "4.24.0", "--json"]) == 0
    recs = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert recs["o1"]["statement"] == "theorem fs_arith_o1 : (180 / 4 : Rat) = 45"
    assert recs["o1"]["refutation"] == "theorem fs_arith_o1_neg : ¬ ((180 / 4 : Rat) = 45)"


@pytest.mark.parametrize(("argv", "needle"), [
    (["--lean-version", "four"], "expected a Lean version"),
    (["--flavour", "lean3"], "invalid choice"),
])
def test_bad_options_are_one_line_errors(argv: list[str], needle: str, proof_file: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["formalize", str(proof_file), *argv])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and needle in err and err.count("\n") == 1


def test_unreadable_input_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["formalize", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert main(["formalize", str(bad)]) == 2
    assert "not valid JSON" in capsys.readouterr().err


@pytest.mark.parametrize("flavour", ["mathlib", "core"])
def test_every_shipped_example_formalizes_without_error(flavour: str) -> None:
    total = rendered = 0
    for path in sorted(EXAMPLES.glob("*.json")):
        items = formalize_proof(proof_from_input(json.loads(path.read_text(encoding="utf-8"))), flavour, "v4.24.0")
        for f in items:
            total += 1
            assert isinstance(f.statement, (LeanStatement, Unrenderable))
            if isinstance(f.statement, LeanStatement):
                rendered += 1
                assert f.statement.flavour == flavour
            else:
                assert f.statement.reason
    assert total > 100 and rendered > total * 0.8


def test_the_header_is_written_where_mathlib_is_found_and_said_for_core() -> None:
    from faithsieve.lean.formalize import lean_file

    from faithsieve.core.settings import Settings

    items = formalize_proof(proof_from_input(PROOF, Settings()), "mathlib")
    found = lean_file(items, "mathlib", None, mathlib_here=True).splitlines()
    assert found[:2] == ["-- header assumed: import Mathlib (the kernel's checks begin with it)", "import Mathlib"]
    core = lean_file(formalize_proof(proof_from_input(PROOF, Settings()), "core", "v4.24.0"), "core", "v4.24.0")
    assert core.startswith("-- header assumed: none (core Lean") and "import" not in core.split("\n", 1)[1]


@pytest.mark.parametrize("step", [
    r"$\left.\frac{d}{dx} e^{e^{e^{x}}}\right|_{x=100} = 1$",
    r"$\int \cos x\,dx = \tan(1000000x) + C$",
    r"$\int_0^1 x\,dx = \frac{1}{2}$",
    r"$\lim_{x \to 0} \frac{\sin x}{x} = 1$",
])
def test_calculus_claims_are_refused_with_a_reason_not_a_crash(step: str, tmp_path: Path, capsys) -> None:
    """A derivative, an integral or a limit has no Lean rendering here: a refusal with its reason (an
    ``AssertionError`` before)."""
    p = tmp_path / "calc.json"
    p.write_text(json.dumps({"problem": "Compute.", "steps": [step, "So $2 + 2 = 5$."]}), encoding="utf-8")
    assert main(["formalize", "--flavour", "mathlib", str(p)]) == 0
    out = capsys.readouterr().out
    assert "a derivative, an integral or a limit" in out and "(2 + 2" in out.replace("((", "(")


def test_huge_integers_are_refused_or_printed_within_bounds(tmp_path: Path, capsys) -> None:
    p = tmp_path / "big.json"
    p.write_text(json.dumps({"problem": "p", "steps": ["Let a = 10^{5000}.", "Then a + 1 = 2.",
                                                       "$\\gcd(10^{5000}, 10^{4999}) = 3$"]}), encoding="utf-8")
    assert main(["formalize", "--flavour", "mathlib", str(p)]) == 0
    out = capsys.readouterr().out
    assert "a = 10^5000" in out and len(out) < 20_000
