"""The word prefilter of the sentence cues (``mathtext.cues.CUE_WORDS``) never hides a match.

``cue_search`` skips a pattern on ASCII text that holds none of the pattern's words; that is only
sound if every match of the pattern contains one of them. Checked on seeded matches drawn from
each pattern itself (hypothesis ``from_regex``, derandomized), and on seeded text built from the
patterns' words in random case between separators, where the prefiltered calls must give exactly
the pattern's answer; each word is shown to be needed (dropping it lets some drawn match through
unseen), so a word list cut short fails here.
"""

from __future__ import annotations

import random
import re

import faithsieve.obligations.extraction.readings as readings
import pytest
from faithsieve.obligations.extraction.readings import READING_WORDS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import faithsieve.mathtext.cues as cues
from faithsieve.mathtext.cues import (
    CUE_STARTS,
    CUE_WORDS,
    by_identity,
    cue_absent,
    cue_finditer,
    cue_search,
    words_absent,
)

TABLES = {**CUE_WORDS, **READING_WORDS}
"""Every prefiltered pattern and its words: the sentence cues and the readings' patterns."""

_SEPARATORS = ["", " ", " ", " ", "  ", "\t", "\n", ". ", ", ", "; ", ": ", "$", "\\(", "\\)", "\\[", "\\]", "(", ")",
               "?", "!", "*", "#", "-", "'", "{", "}", "^", "_", "/", "\\"]
_FILLERS = ["x", "n", "k", "a", "i", "b", "2", "3", "12", "x = 2", "Case", "Step", "the", "we", "so", "that", "I",
            "1.", "(a)", "(ii)", "Part", "\\neq", "\\bot", "\\boxed{5}", "Q.E.D", "qed", "⊥", "≠", "ı", "ſ", "K"]


def _vocabulary(pattern: re.Pattern[str]) -> list[str]:
    """The words and escaped literals the pattern is written with, and its cue words."""
    words = re.findall(r"\\\\[A-Za-z]+|[A-Za-z']{2,}", pattern.pattern)
    return sorted(set(words) | set(TABLES[pattern]))


_OTHER_WORDS = sorted({w for ws in TABLES.values() for w in ws})


def _random_case(rng: random.Random, word: str) -> str:
    mode = rng.random()
    if mode < 0.5:
        return word
    if mode < 0.7:
        return word.upper()
    if mode < 0.85:
        return word.capitalize()
    return "".join(c.upper() if rng.random() < 0.5 else c for c in word)


def _texts(pattern: re.Pattern[str], n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    vocab = _vocabulary(pattern)
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 9)):
            pool = vocab if rng.random() < 0.6 else (_FILLERS if rng.random() < 0.6 else _OTHER_WORDS)
            word = rng.choice(pool).replace("\\\\", "\\")
            parts.append(_random_case(rng, word))
            parts.append(rng.choice(_SEPARATORS))
        out.append("".join(parts))
    return out


_SAMPLES = 3000


def _matches(pattern: re.Pattern[str], n: int = 300) -> list[str]:
    """Seeded strings that contain a match of ``pattern`` (hypothesis draws them from the pattern)."""
    out: list[str] = []

    @settings(max_examples=n, derandomize=True, database=None, suppress_health_check=list(HealthCheck), deadline=None)
    @given(st.from_regex(pattern))
    def draw(text: str) -> None:
        out.append(text)

    draw()
    return out


@pytest.mark.parametrize("pattern", list(TABLES), ids=lambda p: p.pattern[:40])
def test_no_match_is_hidden(pattern: re.Pattern[str]) -> None:
    """Every drawn match (ASCII and not) is seen, and the prefiltered calls give the pattern's own answer,
    also on generated text that mostly does not match."""
    drawn = _matches(pattern)
    assert sum(t.isascii() for t in drawn) >= 50
    for t in drawn:
        assert pattern.search(t) is not None
        assert not words_absent(t, TABLES[pattern]), t
    for t in _texts(pattern, _SAMPLES, seed=len(pattern.pattern)):
        if pattern.search(t) is not None:
            assert not words_absent(t, TABLES[pattern]), t


@pytest.mark.parametrize("pattern", list(CUE_WORDS), ids=lambda p: p.pattern[:40])
def test_cue_calls_give_the_patterns_answers(pattern: re.Pattern[str]) -> None:
    for t in _matches(pattern, 100) + _texts(pattern, 1000, seed=len(pattern.pattern)):
        found = pattern.search(t)
        assert (cue_search(pattern, t) is None) == (found is None), t
        assert found is None or cue_search(pattern, t).span() == found.span()  # type: ignore[union-attr]
        assert [m.span() for m in cue_finditer(pattern, t)] == [m.span() for m in pattern.finditer(t)]


@pytest.mark.parametrize("pattern", [p for p, ws in TABLES.items() if len(ws) > 1], ids=lambda p: p.pattern[:40])
def test_every_word_is_needed(pattern: re.Pattern[str]) -> None:
    """With any one word left out, some ASCII match (drawn or generated) holds none of the others: the
    samples are rich enough that a word list missing a word would fail ``test_no_match_is_hidden``."""
    texts = _matches(pattern) + _texts(pattern, _SAMPLES, seed=len(pattern.pattern))
    drawn = [t.lower() for t in texts if t.isascii() and pattern.search(t)]
    for word in TABLES[pattern]:
        rest = [w for w in TABLES[pattern] if w != word]
        assert any(not any(w in t for w in rest) for t in drawn), word


def test_words_are_lower_case_ascii() -> None:
    for words in TABLES.values():
        for w in words:
            assert w.isascii() and w == w.lower(), w


def test_non_ascii_text_always_runs_the_pattern() -> None:
    """Case-insensitive matching folds some non-ASCII letters onto ASCII ones (the dotless ı onto i,
    the long ſ onto s, the Kelvin sign onto k): such text is never skipped."""
    (if_cue,) = [p for p in CUE_WORDS if p.pattern.startswith("(?i)\\b(check")]
    text = "ıf x = 2 then"  # dotless i
    assert if_cue.search(text) is not None and "if" not in text.lower()
    assert not cue_absent(if_cue, text)
    assert cue_search(if_cue, text) is not None


def _begins(low: str, pos: int, words: tuple[str, ...]) -> bool:
    return any(low.startswith(w, pos) for w in words)


@pytest.mark.parametrize("pattern", list(CUE_STARTS), ids=lambda p: p.pattern[:40])
def test_every_match_begins_with_a_start_word(pattern: re.Pattern[str]) -> None:
    """``CUE_STARTS``: every match the pattern finds on ASCII text (drawn or generated), lower-cased,
    begins with one of its start words; and each start word is needed (with any one left out, some
    match begins with none of the others), so a list cut short fails here."""
    words = CUE_STARTS[pattern]
    texts = _matches(pattern) + _texts(pattern, _SAMPLES, seed=len(pattern.pattern) + 1)
    spans = [(t.lower(), m.start()) for t in texts if t.isascii() for m in pattern.finditer(t)]
    assert len(spans) >= 100
    for low, pos in spans:
        assert _begins(low, pos, words), (low, pos)
    for word in words:
        rest = tuple(w for w in words if w != word)
        assert any(not _begins(low, pos, rest) for low, pos in spans), word


@pytest.mark.parametrize("pattern", list(CUE_STARTS), ids=lambda p: p.pattern[:40])
def test_start_word_scan_gives_the_patterns_matches(pattern: re.Pattern[str]) -> None:
    """Trying the pattern only where a start word begins gives exactly ``search`` and ``finditer``, on
    seeded text dense with the words, their near misses glued to letters, and repeated matches."""
    rng = random.Random(len(pattern.pattern))
    texts = _matches(pattern, 100) + _texts(pattern, 1000, seed=len(pattern.pattern) + 2)
    texts += [rng.choice("ab_1") + t + rng.choice(["", "x", " "]) + t for t in texts[:400]]
    for t in texts:
        found = pattern.search(t)
        got = cue_search(pattern, t)
        assert (got is None) == (found is None), t
        assert found is None or got is not None and (got.span(), got.groups()) == (found.span(), found.groups())
        assert [(m.span(), m.groups()) for m in cue_finditer(pattern, t)] == [(m.span(), m.groups()) for m in pattern.finditer(t)]


def test_start_words_are_lower_case_ascii_and_listed_as_cue_words() -> None:
    for pattern, words in CUE_STARTS.items():
        assert pattern in CUE_WORDS
        for w in words:
            assert w.isascii() and w == w.lower(), w


@pytest.mark.parametrize(("table", "by_id"), [(CUE_WORDS, cues._WORDS_OF), (CUE_STARTS, cues._STARTS_OF),
                                             (READING_WORDS, readings._WORDS_OF)], ids=["cue", "start", "reading"])
def test_tables_looked_up_by_identity_are_the_tables(table, by_id) -> None:  # type: ignore[no-untyped-def]
    """The id-keyed copies the lookups use hold every pattern's words, and nothing else."""
    assert len(by_id) == len(table)
    for pattern, words in table.items():
        assert by_id[id(pattern)] is words


def test_lookup_by_identity_needs_the_listed_pattern_itself() -> None:
    """A pattern missing from a table is not found by id either (never the words of another pattern)."""
    other = re.compile(r"(?i)\bnot listed\b")
    table = by_identity(CUE_WORDS)
    assert id(other) not in table
    with pytest.raises(KeyError):
        cue_absent(other, "not listed")
