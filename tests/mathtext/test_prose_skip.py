"""Prose segments are skipped before tokenizing only when they cannot yield a formula."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from faithsieve.mathtext import formulas as extract
from faithsieve.mathtext.formulas import extract_formulas
from faithsieve.mathtext.lexer import REL, Token, plain_may_relate, tokenize_plain

EXAMPLES = Path(__file__).resolve().parents[2] / "datasets" / "examples"

TEXTS = [
    "We add the two numbers together and then we are done.",
    "The total cost is 12 dollars plus 5 dollars tax, so 17 dollars in all.",
    "12 equals 12", "3 + 4 EQUALS 7", "x ≃ 3", "y ⩽ 4", "so 2+2 is approximately 4", "about 30 people came",
    "5 + 5 equal2 10", "unequal parts of 3 and 4", "the result => 5", "a != b", "8 == 8", "10 <= 12",
    "He is around 40; the sum 20 + 20 is roughly 40.", "- 5 apples and 3 pears", "$5 + $6 = $11", "2 1/2 cups",
]


def _corpus() -> list[str]:
    out = list(TEXTS)
    for f in sorted(EXAMPLES.glob("*.json")):
        data = json.loads(f.read_text())
        out.append(data.get("problem", ""))
        out.extend(data.get("steps", []) or [data.get("proof", "")])
    return out


def _has_rel(toks: list[Token]) -> bool:
    return any(t.kind == REL for t in toks)


def test_no_cue_means_no_relation_token() -> None:
    for text in _corpus():
        if not plain_may_relate(text):
            assert not _has_rel(tokenize_plain(text)), text


_PIECES = list("0123456789 +-*/().,xyzaAIis%$=<>!≈≤\n") + [
    "equal", "Equals", "about", "approximately", "roughly", "of", "times", "is", "near", "circa", "ly", "un"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_no_cue_means_no_relation_token_fuzz(pieces: list[str]) -> None:
    text = "".join(pieces)
    if not plain_may_relate(text):
        assert not _has_rel(tokenize_plain(text))


def test_cues_are_seen() -> None:
    for text in ("12 equals 12", "3 + 4 EQUALS 7", "x ≃ 3", "y ⩽ 4", "so it is approximately 4", "5 + 5 equal2 10",
                 "a != b", "10 <= 12"):
        assert plain_may_relate(text), text
    for text in ("We add the two numbers.", "unequal parts of 3 and 4", "aboutness", "5 apples - 3 pears"):
        assert not plain_may_relate(text), text


def test_extraction_is_the_same_with_and_without_the_skip(monkeypatch) -> None:
    corpus = _corpus()
    fast = [extract_formulas(t) for t in corpus]
    monkeypatch.setattr(extract, "plain_may_relate", lambda text: True)
    slow = [extract_formulas(t) for t in corpus]
    assert fast == slow
    assert sum(len(f) for f in fast) > 50  # the corpus has formulas to find
