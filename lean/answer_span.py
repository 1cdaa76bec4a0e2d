"""Answer extraction from a checked Lean proof (pure).

An answer may be copied out of a proof only as a *literal span* of proof text that Lean checked:
never from a comment or a string literal (Lean checks neither), and never from near an
evaluation or inspection command (``#eval``, ``#reduce``, ``#check``, ``#print``), whose output
is computed, not proved.

Matching rules of ``literal_span``:

* whitespace-normalised: the answer is read as tokens (numbers such as ``3.5``, identifiers,
  single symbols); between two word tokens the proof must have some whitespace, elsewhere any
  amount or none (``x+1`` matches ``x + 1``; ``a b`` does not match ``ab``);
* token-bounded: an answer that starts or ends with a word character may not continue a word or
  number of the proof (``12`` is not found in ``312``, ``123``, ``0.12``, ``12.5`` or ``x12``);
  one that starts with a sign may not follow a word or a closing bracket (``-3`` is not found in
  ``5-3``);
* an occurrence is rejected when any line it touches holds one of the commands above, or when
  one of them starts within ``window`` characters before or after it;
* the first occurrence left is returned as ``(start, end)`` offsets into the proof text.
"""

from __future__ import annotations

import itertools
import re

from faithsieve.lean.screen import lex_regions

MAX_ANSWER_CHARS = 2000
"""Longer answers are not searched."""
MAX_ANSWER_TOKENS = 300
"""Answers with more tokens are not searched."""
_COMMANDS = re.compile(r"#(?:eval|reduce|check|print)\b")
_TOKEN = re.compile(r"\d+(?:\.\d+)?|\w+|\S")


def _wordy(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _pattern(answer: str) -> re.Pattern[str] | None:
    tokens = _TOKEN.findall(answer.strip())
    if not tokens or len(tokens) > MAX_ANSWER_TOKENS:
        return None
    parts = [re.escape(tokens[0])]
    for prev, tok in itertools.pairwise(tokens):
        parts.append(r"\s+" if _wordy(prev[-1]) and _wordy(tok[0]) else r"\s*")
        parts.append(re.escape(tok))
    body = "".join(parts)
    if _wordy(tokens[0][0]):
        body = r"(?<![\w'.])" + body
    elif tokens[0][0] in "+-":
        body = r"(?<![\w')\]])" + body
    if _wordy(tokens[-1][-1]):
        body += r"(?![\w'])(?!\.\d)"
    return re.compile(body)


def _near_command(text: str, start: int, end: int, window: int) -> bool:
    """A command on a line the span touches, or starting (or running) within ``window`` characters."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    lo, hi = min(line_start, max(0, start - window)), max(line_end, min(len(text), end + window))
    return any(m.end() > lo for m in _COMMANDS.finditer(text, max(0, lo - 8), hi))


def literal_span(answer: str, checked_proof: str, window: int = 80) -> tuple[int, int] | None:
    """Offsets of the first acceptable literal occurrence of ``answer`` in ``checked_proof``, or
    ``None`` (see the module docstring for what counts)."""
    if not answer.strip() or len(answer) > MAX_ANSWER_CHARS:
        return None
    pat = _pattern(answer)
    if pat is None:
        return None
    regions, _ = lex_regions(checked_proof)
    for m in pat.finditer(checked_proof):
        a, b = m.span()
        if any(ra < b and a < rb for ra, rb, _ in regions):
            continue  # inside (or across) a comment or a string literal: not checked text
        if _near_command(checked_proof, a, b, window):
            continue
        return a, b
    return None


__all__ = ["MAX_ANSWER_CHARS", "MAX_ANSWER_TOKENS", "literal_span"]
