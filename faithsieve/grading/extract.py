"""Final-answer extraction: the answer a solution states, and the answer part of a reference.

Most explicit marker first: the last ``\\boxed{...}``; else whichever of "The answer is X" /
"Final answer: X" and GSM8K's ``#### X`` comes last; else (if enabled) the last number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from faithsieve.mathtext.lexer import brace_group_end

MAX_ANSWER_CHARS = 300
"""Answers longer than this are compared as normalized strings only (never parsed)."""


@dataclass(frozen=True)
class AnswerPolicy:
    """How lenient the comparison is. All defaults are documented in the README (RL section)."""

    percent: Literal["either", "value", "strip"] = "either"
    """``value``: ``50%`` is 0.5. ``strip``: ``50%`` is 50. ``either``: both readings count,
    so ``50%`` matches a reference of ``50`` and of ``0.5`` (never of anything else)."""
    decimal_rounding: bool = True
    """A decimal with at least 2 places matches a value with no finite decimal expansion
    (``1/3``, ``\\sqrt{2}``, ``\\pi``) when it agrees to the places shown (half a unit in
    the last place). Terminating values are always compared exactly (0.5 never matches 0.52)."""
    last_number: bool = True
    """Fall back to the last number in the text when no explicit answer marker is found."""


DEFAULT_POLICY = AnswerPolicy()


# ---------------------------------------------------------------------------
# Extraction
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ExtractedAnswer:
    """The final answer a solution states, as written."""

    text: str
    source: Literal["boxed", "answer_is", "hash", "last_number", "reference"]
    start: int
    """Offset of the answer in the solution text."""


_BOXED = re.compile(r"\\(?:boxed|fbox)\b")
_ANSWER_IS = re.compile(
    r"(?i)\b(?:final\s+answer|the\s+answer|answer)\b[ \t]*(?:\*\*)?[ \t]*(?:is\b|:|=)[ \t]*(?:\*\*)?[ \t]*:?[ \t]*"
)
_HASH = re.compile(r"####[ \t]*")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:/\d+)?|-?\.\d+")
_TAIL_SCAN = 4000
_SENTENCE_END = re.compile(r"\.(?=\s|$)")
_PROSE = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")
_BARE_BOXED = re.compile(r"[^\s$\\]{1,100}")
_NEXT_LINE = re.compile(r"\s{0,40}([^\n]{1," + str(MAX_ANSWER_CHARS) + "})")


def _last_boxed(text: str) -> ExtractedAnswer | None:
    # walk the markers from the end; the first one that closes is the answer
    ends = [m.end() for m in _BOXED.finditer(text)]
    for end in reversed(ends[-50:]):
        i = end
        while i < len(text) and text[i] in " \t":
            i += 1
        if i < len(text) and text[i] == "{":
            close = brace_group_end(text, i)
            if close > 0:
                return ExtractedAnswer(text[i + 1 : close - 1], "boxed", i + 1)
            continue
        m = _BARE_BOXED.match(text, i)  # "\boxed 5"
        if m:
            return ExtractedAnswer(m.group(), "boxed", m.start())
    return None


def _cut_sentence(s: str) -> str:
    """End an "answer is ..." capture at the end of its sentence (a period not inside a number)."""
    m = _SENTENCE_END.search(s)
    if m:
        s = s[: m.start()]
    return s.strip()


def _after_marker(text: str, end: int) -> tuple[str, int]:
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    seg = text[end : min(line_end, end + MAX_ANSWER_CHARS)]
    if seg.strip():
        return seg, end
    # "Final answer:\n\n18": the next non-empty line
    m = _NEXT_LINE.match(text, line_end)
    if m:
        return m.group(1), m.start(1)
    return "", end


def extract_answer(text: str, policy: AnswerPolicy = DEFAULT_POLICY) -> ExtractedAnswer | None:
    """The final answer ``text`` states, or None. Linear in the text size."""
    if not text:
        return None
    boxed = _last_boxed(text)
    if boxed is not None and boxed.text.strip():
        return boxed
    best: ExtractedAnswer | None = None
    for pattern, source in ((_ANSWER_IS, "answer_is"), (_HASH, "hash")):
        last = None
        for last in pattern.finditer(text):
            pass
        if last is None:
            continue
        seg, at = _after_marker(text, last.end())
        raw = seg
        seg = _cut_sentence(seg) if source == "answer_is" else seg.strip()
        at += raw.find(seg) if seg else 0
        if source == "answer_is" and len(_PROSE.findall(seg)) >= 2:
            # "Verna received $7.00 in change": a sentence naming exactly one number answers with it
            nums = list(_NUMBER.finditer(seg))
            if len(nums) == 1:
                at, seg = at + nums[0].start(), nums[0].group()
        if seg and (best is None or at > best.start):
            best = ExtractedAnswer(seg, source, at)  # type: ignore[arg-type]
    if best is not None:
        return best
    if policy.last_number:
        base = max(0, len(text) - _TAIL_SCAN)
        last_num = None
        for last_num in _NUMBER.finditer(text, base):
            pass
        if last_num is not None:
            return ExtractedAnswer(last_num.group(), "last_number", last_num.start())
    return None


def reference_answer(reference: object) -> str:
    """The answer part of a reference: the text after ``####`` or inside the last ``\\boxed{}``
    when present (a full GSM8K/MATH solution), else the reference itself."""
    ref = reference if isinstance(reference, str) else _plain_str(reference)
    if "####" in ref or "\\boxed" in ref or "\\fbox" in ref:
        ex = extract_answer(ref, AnswerPolicy(last_number=False))
        if ex is not None:
            return ex.text
    return ref


def _plain_str(x: object) -> str:
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, float):
        if x.is_integer():
            return str(int(x))
        return repr(x)
    return str(x)
