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
    source: Literal["boxed", "answer_is", "hash", "closing_math", "last_number", "reference"]
    start: int
    """Offset of the answer in the solution text."""


_BOXED = re.compile(r"\\(?:boxed|fbox)\b")
_ANSWER_IS = re.compile(
    r"(?im)\b(?:final\s+answer|the\s+answer|answer)\b[ \t]*(?:\*\*)?[ \t]*(?:is\b|:|=)[ \t]*(?:\*\*)?[ \t]*:?[ \t]*"
    r"|^\#{1,3}[ \t]*answer[ \t]*:?[ \t]*$"  # PRM800K/MATH style: a "# Answer" heading, the answer below it
)
_HASH = re.compile(r"####[ \t]*")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:/\d+)?|-?\.\d+")
_TAIL_SCAN = 4000
_SENTENCE_END = re.compile(r"\.(?=\s|$)")
_PROSE = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")
_BARE_BOXED = re.compile(r"[^\s$\\]{1,100}")
_JOIN_NOISE = re.compile(r"\\q?quad\b|\\text\s*\{|\\mbox\s*\{|[{}$]|\\[()\[\]]|\\[,;:! ]|\\\\")
_JOIN_LABEL = re.compile(r"[A-Za-z](?:_\{?\w{1,4}\}?)?\s*=\s*$")
_REVISION_WORDS = frozenset({
    "then", "wait", "but", "actually", "correct", "correcting", "corrected", "recheck", "instead", "not", "no", "so",
    "hence", "thus", "therefore", "final", "answer", "is", "was", "oops", "mistake", "however", "rather", "becomes",
})
_TURN_END = re.compile(r"<\|im_start\|>|<\|im_end\|>|<\|endoftext\|>|<\|eot_id\|>|<\|start_header_id\|>")
_CLOSING_MATH = re.compile(r"(?:\$\$([^$]{1,300})\$\$|\$([^$]{1,300})\$|\\\((.{1,300}?)\\\)|\\\[(.{1,300}?)\\\])[\s.!]*$", re.S)
_NEXT_LINE = re.compile(r"\s{0,40}([^\n]{1," + str(MAX_ANSWER_CHARS) + "})")


def _boxes(text: str) -> list[tuple[int, int, int]]:
    """The last (up to 50) boxed answers whose braces balance: (marker start, content start, content end)."""
    out: list[tuple[int, int, int]] = []
    for m in list(_BOXED.finditer(text))[-50:]:
        i = m.end()
        while i < len(text) and text[i] in " \t":
            i += 1
        if i < len(text) and text[i] == "{":
            close = brace_group_end(text, i)
            if close > 0:
                out.append((m.start(), i + 1, close - 1))
            continue
        bare = _BARE_BOXED.match(text, i)  # "\boxed 5"
        if bare:
            out.append((m.start(), bare.start(), bare.end()))
    return out


def _joins(between: str) -> bool:
    r"""Text between two boxed answers that joins them into one answer: ``\boxed{1} and \boxed{2}``,
    ``\boxed{2}, \boxed{3}``, ``\boxed{(2, 2)} \quad \text{and} \quad \boxed{(6, 2)}``. A revision
    ("then correcting:", "wait") or a sentence between them does not join."""
    if len(between) > 60 or "\n\n" in between or _SENTENCE_END.search(between.replace("\\]", "")):
        return False
    t = _JOIN_LABEL.sub(" ", _JOIN_NOISE.sub(" ", between))  # "\\) and \\( y_2 = \\boxed{...}"
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", t)]
    if len(words) > 4 or any(w in _REVISION_WORDS for w in words):
        return False
    rest = re.sub(r"[A-Za-z]+", "", t)
    return not re.search(r"[^\s,;&()]", rest) and (not words or "and" in words or "or" in words or "," in t)


def _last_boxed(text: str) -> tuple[ExtractedAnswer, int] | None:
    """The last boxed answer, with the boxed answers just before it that it is joined to; and where
    the last one ends."""
    boxes = [b for b in _boxes(text) if text[b[1] : b[2]].strip()]
    if not boxes:
        return None
    run = [boxes[-1]]
    for prev in reversed(boxes[:-1]):
        # the closing brace of prev sits at prev[2]; the next box's marker at run[0][0]
        if not _joins(text[prev[2] + 1 : run[0][0]]):
            break
        run.insert(0, prev)
    if len(run) == 1:
        return ExtractedAnswer(text[run[0][1] : run[0][2]], "boxed", run[0][1]), run[0][2]
    return ExtractedAnswer(", ".join(text[b[1] : b[2]].strip() for b in run), "boxed", run[0][1]), run[-1][2]


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
    """The final answer ``text`` states, or None. Linear in the text size.

    Text after a chat-template turn marker (``<|im_start|>``: the model began another turn) is not
    part of the answer. The last boxed answer (with the boxed answers joined to it) wins, unless an
    "answer is" statement comes after it (the closing "Final Answer: ..." after intermediate boxes).
    Without markers, a formula that closes the text (``... is $(7, 6)$.``), else the last number."""
    if not text:
        return None
    turn = _TURN_END.search(text)
    if turn is not None and text[: turn.start()].strip():
        text = text[: turn.start()]
    found = _last_boxed(text)
    best = _marked_answer(text)
    if found is not None:
        boxed, boxed_end = found
        if best is not None and best.source == "answer_is" and best.start > boxed_end:
            return best
        return boxed
    if best is not None:
        return best
    return _unmarked_answer(text, policy)


def _last_match(pattern: re.Pattern[str], text: str, pos: int = 0) -> re.Match[str] | None:
    """The last match of ``pattern`` in ``text`` from ``pos``."""
    last = None
    for m in pattern.finditer(text, pos):
        last = m
    return last


def _marked_answer(text: str) -> ExtractedAnswer | None:
    """The latest answer after an "answer is" statement or a ``####`` marker."""
    best: ExtractedAnswer | None = None
    for pattern, source in ((_ANSWER_IS, "answer_is"), (_HASH, "hash")):
        last = _last_match(pattern, text)
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
    return best


def _unmarked_answer(text: str, policy: AnswerPolicy) -> ExtractedAnswer | None:
    """Without markers: a formula that closes the text, else (``policy.last_number``) the last number."""
    tail = _CLOSING_MATH.search(text, max(0, len(text) - 700))
    if tail is not None:
        for g in range(1, 5):
            if tail.group(g) is not None and tail.group(g).strip():
                return ExtractedAnswer(tail.group(g), "closing_math", tail.start(g))
    if policy.last_number:
        last_num = _last_match(_NUMBER, text, max(0, len(text) - _TAIL_SCAN))
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
