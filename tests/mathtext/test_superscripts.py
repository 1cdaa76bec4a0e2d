"""Unicode superscript exponents ('5²', '(x + 1)²', '10⁻²'), as LLM-written solutions type them: a
superscript run glued to an operand reads exactly as '^N'; units with superscripts stay units; a
superscript anywhere else stays a break."""

from __future__ import annotations

import pytest

from faithsieve.mathtext.formulas import extract_formulas
from faithsieve.mathtext.lexer import POW, tokenize_plain
from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps


def verdict(step: str):  # type: ignore[no-untyped-def]
    return localize(proof_from_steps("Compute.", [step, "Done."]))


def statuses(step: str) -> list[str]:
    return [e.status for s in verdict(step).steps for e in s.evidence]


def reasons(step: str) -> str:
    return " ".join(e.reason or "" for s in verdict(step).steps for e in s.evidence)


def kinds(text: str) -> list[tuple[str, str]]:
    return [(t.kind, t.value) for t in tokenize_plain(text)]


@pytest.mark.parametrize("step", ["5² + 12² = 169", "2¹⁰ = 1024", "10⁻² = 0.01", "3!² = 36", "π⁰ = 1"])
def test_true_claims_with_superscripts_are_verified(step: str) -> None:
    assert statuses(step) == ["verified"]
    assert verdict(step).verdict == "correct"


def test_an_identity_in_superscripts_is_verified_as_an_identity() -> None:
    v = verdict("(x + 1)² = x² + 2x + 1")
    assert [(e.status, e.reason) for s in v.steps for e in s.evidence] == [("verified", "identity")]


@pytest.mark.parametrize("step", ["2⁷ = 64", "3² + 4² = 24", "y′ = 3 · 3² − 4 = 25", "10⁻² = 0.02", "2⁻¹ = 3"])
def test_false_claims_with_superscripts_are_refuted(step: str) -> None:
    assert "refuted" in statuses(step)
    assert verdict(step).first_error_step == 1


@pytest.mark.parametrize(("sup", "caret"), [
    ("5² + 12² = 169", "5^2 + 12^2 = 169"),
    ("10⁻² = 0.01", "10^-2 = 0.01"),
    ("2¹⁰ = 1024", "2^10 = 1024"),
    ("(r + s)² = r² + 2rs + s²", "(r + s)^2 = r^2 + 2rs + s^2"),
])
def test_a_superscript_reads_exactly_as_a_caret(sup: str, caret: str) -> None:
    assert [k for k, _ in kinds(sup)] == [k for k, _ in kinds(caret)]
    assert [str(f.chain) for f in extract_formulas(sup)] == [str(f.chain) for f in extract_formulas(caret)]


def test_superscript_plus_and_detached_superscripts_stay_breaks() -> None:
    # ⁺ is not an exponent; a superscript after a space or after a word is not glued to an operand
    for text in ("x⁺² = 4", "x ² = 4", "The square ² = 4"):
        assert POW not in [k for k, _ in kinds(text)]
        assert [f.text for f in extract_formulas(text)] == ["4"]
    assert ("BREAK", "⁻") in kinds("x⁻ = 4")  # a minus with no digit is no exponent


def test_units_with_superscripts_stay_units() -> None:
    assert statuses("The area is 36 m².") == []  # no relation: nothing is claimed
    # 'cm²' after the number: the formula ends before the unit, which is never read as cm to a power
    assert [f.text for f in extract_formulas("6 cm × 6 cm = 36 cm²")] == ["6 cm × 6 cm = 36"]
    assert statuses("6 cm × 6 cm = 36 cm²") == ["verified"]
    # a false product before a squared unit is not refuted: the power may belong to the unit
    assert verdict("6 cm × 7 cm = 36 cm²").verdict == "correct"
    assert "unit with an exponent" in reasons("6 cm × 7 cm = 36 cm²")
    assert "unit with an exponent" in reasons("The box holds 4 × 5 × 6 = 100 cm³.")
    # a one-letter unit reads as a letter to a power, exactly as 'm^3' does: nothing is refuted
    assert verdict("The box holds 4 × 5 × 6 = 100 m³.").verdict == "correct"


def test_a_superscript_in_prose_makes_no_claim() -> None:
    for step in ("The x² term has coefficient 3.", "Consider x² and y² together.", "The coefficient of x³ is 4."):
        assert extract_formulas(step) == []
        assert statuses(step) == []


def test_a_superscript_exponent_is_bounded_like_any_exponent() -> None:
    # the evaluator's max_exponent (10,000) applies: pinned on both sides of the bound
    assert statuses("1¹⁰⁰⁰⁰ = 1") == ["verified"]
    assert [(e.status, e.reason) for s in verdict("1¹⁰⁰⁰¹ = 1").steps for e in s.evidence] == [
        ("unknown", "evaluation_limit: exponent too large")]
    # a run of thousands of superscript digits comes back decided as unknown, never a hang
    long = "2" + "⁹" * 5000 + " = 4"
    assert "refuted" not in statuses(long)
    assert verdict(long).verdict == "correct"
