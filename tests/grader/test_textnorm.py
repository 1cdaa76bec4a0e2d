"""``clean_text``: what a reader sees, before any reading (the grader and every proof the pipeline reads)."""

from __future__ import annotations

import sys
import time
import unicodedata

import pytest

from faithsieve.core.proof import Proof, Step
from faithsieve.mathtext.textnorm import clean_proof, clean_text


def test_every_format_character_is_removed() -> None:
    """The table of format characters (Cf) is complete for this Python's Unicode database: none survives."""
    missed = [hex(cp) for cp in range(sys.maxunicode + 1)
              if unicodedata.category(chr(cp)) == "Cf" and clean_text("a" + chr(cp) + "b") != "ab"]
    assert missed == []


@pytest.mark.parametrize("ch", ["\x00", "\x07", "\x1b", "\x7f", "\x85", "\u200b", "\u200c", "\u200d", "\u2060",
                                "\ufeff", "\u00ad", "\u202e", "\u2066", "\u2062", "\u034f", "\ufe0f", "\ue000",
                                "\ud800", "\U000e0041"])
def test_invisible_characters_are_removed(ch: str) -> None:
    assert clean_text(f"3 + 4 = 8{ch}.") == "3 + 4 = 8."
    assert clean_text(f"1{ch}2") == "12"


def test_line_breaks_and_tabs_are_kept() -> None:
    assert clean_text("a\tb\nc") == "a\tb\nc"
    assert clean_text("a\r\nb\rc\u2028d\u2029e") == "a\nb\nc\nd\ne"


@pytest.mark.parametrize(("raw", "clean"), [
    ("３ ＋ ４ ＝ ８", "3 + 4 = 8"),        # fullwidth forms
    ("𝑥 + 𝑦 = 𝟐", "x + y = 2"),          # mathematical alphanumerics
    ("x\u00a0=\u20091", "x = 1"),          # no-break and thin spaces
    ("−5", "-5"),                          # the minus sign
    ("ﬁve", "five"),                       # a ligature
    ("=\u0338", "≠"),                      # a combining overlay that makes a new character
    ("8\u0336", "8"),                      # a combining mark left on a digit
])
def test_compatibility_forms_are_folded(raw: str, clean: str) -> None:
    assert clean_text(raw) == clean


@pytest.mark.parametrize(("raw", "clean"), [
    ("a₁₂", "a_{12}"), ("½", "(1/2)"), ("3½", "(3+1/2)"), ("¾x", "(3/4)x"), ("1⁄2", "1/2"),
])
def test_marks_that_folding_would_change_are_written_out(raw: str, clean: str) -> None:
    """Plain NFKC reads ``a₁₂`` as ``a12`` and ``½`` as ``1⁄2``: they are written as what they mean first."""
    assert unicodedata.normalize("NFKC", raw) != clean
    assert clean_text(raw) == clean


@pytest.mark.parametrize("raw", ["x²", "x²³", "z⁻¹", "eⁱ", "36 cm²", "x ² = 4", "x⁺"])
def test_superscripts_stay_for_the_reader(raw: str) -> None:
    """The reader reads superscripts itself (a power, a unit's power, a detached mark): NFKC would make
    ``x²`` into ``x2``."""
    assert unicodedata.normalize("NFKC", raw) != raw
    assert clean_text(raw) == raw
    assert clean_text(raw + "\u200b＝") == raw + "="


def test_number_sets_stay() -> None:
    assert clean_text("x ∈ ℝ, n ∈ ℕ, ℤ, ℚ, ℂ") == "x ∈ ℝ, n ∈ ℕ, ℤ, ℚ, ℂ"


def test_idempotent_and_plain_text_is_returned_as_is() -> None:
    plain = "Step 1: 3 + 4 = 7.\n\tSo x = 7."
    assert clean_text(plain) is plain
    for raw in ("３\u200b²＝½", "a₁² + ℝ\r\n", "x² ⁿ"):
        once = clean_text(raw)
        assert clean_text(once) == once


def test_linear_time() -> None:
    text = ("Step: ３ + ４ = 8\u200b, x² ½ — ok. " * 8000)[:200_000]
    t = time.perf_counter()
    clean_text(text)
    assert time.perf_counter() - t < 1.0


def test_clean_proof_keeps_indices_offsets_and_identity() -> None:
    p = Proof(problem="Compute.", steps=(Step(index=1, text="3 + 4 = 7.", offset=0),
                                         Step(index=2, text="So 8\u200b = 8.", offset=11)))
    c = clean_proof(p)
    assert [s.text for s in c.steps] == ["3 + 4 = 7.", "So 8 = 8."]
    assert [(s.index, s.offset) for s in c.steps] == [(1, 0), (2, 11)] and c.steps[0] is p.steps[0]
    plain = Proof(problem="Compute.", steps=(Step(index=1, text="3 + 4 = 7.", offset=0),))
    assert clean_proof(plain) is plain


@pytest.mark.parametrize("ch", ["\u200b", "\ufeff", "\u2060", "\u202e", "\x00", "\u00ad"])
def test_the_pipeline_reads_through_invisible_characters(ch: str) -> None:
    """``/localize``, ``localize`` and ``score`` all read a proof through ``Pipeline.localize``: a false
    claim with an invisible character inside is refuted as it is without it."""
    from faithsieve.pipeline import localize
    from faithsieve.split import proof_from_text

    v = localize(proof_from_text("Compute.", f"Step 1: 3 + 4 = 8{ch}.\nStep 2: So the answer is 7."))
    assert v.first_error_step == 1
