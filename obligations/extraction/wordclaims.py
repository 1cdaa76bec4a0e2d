"""Closed claims about written integers that the step states in words or in notation the formula
reader does not read (``1529 ÷ 6 = 254 R 5``, "the GCD of 116 and 174 is 58"), turned into
closed arithmetic obligations.

Shared by ``obligations.extraction.remainders`` and ``obligations.extraction.divisibility``: the pieces of a pattern
(an integer written as such, the spacing between pieces) and the guard that keeps a claim only
when the sentence asserts it: a number glued to an operator, a power, an index or a decimal point
ends a longer expression and is skipped, and a sentence that denies, questions, supposes or tests
(the formula reader's own cues, outside the claim's words) asserts nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction

from faithsieve.obligations.kinds.models import ArithmeticObligation

from faithsieve.core.proof import Proof
from faithsieve.mathtext.ast import Num, Rel
from faithsieve.mathtext.cues import HYPOTHETICAL, NEGATION, cue_search

MAX_DIGITS = 30  # longer literals are not read (the exact checker bounds the rest)
MAX_PER_STEP = 20

# between two pieces of a claim: spaces and LaTeX spacing or math delimiters
SEP = r"(?:\s|\\[,;:! ]|\\quad|\$|\\\(|\\\)|~){0,8}"
# an integer written as such: nothing numeric glued to either side
INT = r"(?<![\d.])(\d{1,%d})(?![\d]|[.,]\d|\s{0,2}[\^_!])" % MAX_DIGITS
INT_FIRST = r"(?<![\d.,])" + INT
# what may not come right before the first number of a claim (spaces and delimiters skipped): then the number
# ends a longer expression (a term or factor, a power, an index, a fraction) and the claim is about that
_GLUED = re.compile(r"(?:[-−–+*/×·÷^_{}]|\\(?:cdot|times|div|pm|mp))(?:\s|\\[,;:! ]|\$|\\\(|~)*\Z")

Found = tuple[tuple[int, int], Rel]


def word(w: str) -> str:
    """``w`` as plain text or wrapped in ``\\text{}``/``\\mathrm{}``."""
    return r"(?:\\(?:text|mathrm|textrm|mbox|operatorname)\s{0,2}\{\s{0,3})?(?:%s)(?:\s{0,3}\})?" % w


def num(n: int) -> Num:
    return Num(Fraction(n), str(n), 0)


def glued(text: str, start: int) -> bool:
    """The number starting at ``start`` ends a longer expression."""
    return _GLUED.search(text, max(0, start - 40), start) is not None


def _sentence_of(text: str, start: int, end: int) -> str:
    """The sentence around ``text[start:end]`` without the claim itself (stops at a full stop, a line
    break or a colon before it)."""
    left = max(text.rfind(". ", 0, start), text.rfind("\n", 0, start), text.rfind(": ", 0, start)) + 1
    right = min((i for i in (text.find(". ", end), text.find("\n", end)) if i >= 0), default=len(text))
    return text[left:start] + " " + text[end:right + 1]


def closed_claims(proof: Proof, prefix: str, cues: tuple[str, ...],
                  read: Callable[[str], list[Found]]) -> list[ArithmeticObligation]:
    """Obligations for the claims ``read`` finds in each step that names one of ``cues``, each kept only
    when its sentence asserts it."""
    out: list[ArithmeticObligation] = []
    for step in proof.steps:
        text = step.text
        if not any(c in text for c in cues):
            continue  # the cheap test first: most steps name none of these
        for span, rel in sorted(read(text), key=lambda c: c[0])[:MAX_PER_STEP]:
            sentence = _sentence_of(text, *span)
            if cue_search(NEGATION, sentence) or cue_search(HYPOTHETICAL, sentence):
                continue  # denied, questioned, supposed or being tested: not asserted
            out.append(ArithmeticObligation(id=f"{prefix}{len(out)}", step=step.index, span=span, edge="",
                                            source=text[span[0]:span[1]], claim=rel))
    return out


__all__ = ["INT", "INT_FIRST", "MAX_PER_STEP", "SEP", "closed_claims", "glued", "num", "word"]
