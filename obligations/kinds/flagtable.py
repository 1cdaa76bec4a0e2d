"""Which flag kinds decide: each kind's measured record on the reference bench, and the rule that reads it.

A refutation says "this formula is false"; a verdict, a grader's step penalty and llm mode's floor take
that as fact. A kind of refutation earns that right only by its record on correct solutions people and
models wrote (``bench/reference_precision.py``: about 10,600 reference solutions, every refutation read,
genuine slips of the authors listed in ``bench/reference_slips.json``). A kind with any misreading there
does not decide: its refutations are ``suspect`` evidence (shown, counted, given to llm mode's scan as a
prior) until its misreadings are fixed and the bench says so. A kind the bench never measured is suspect too.

``MEASURED`` below is written by ``python bench/reference_precision.py --write-table``; do not edit it
by hand.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from faithsieve.obligations.kinds.models import Evidence

from faithsieve.mathtext.formulas import Segment, find_segments

__all__ = ["KNOWN_KINDS", "MEASURED", "KindMeasure", "arithmetic_form", "in_math_notation", "mark_suspects", "suspect_reason",
           "evidence_key", "trust_key"]


@dataclass(frozen=True)
class KindMeasure:
    """One flag kind's record on the reference bench."""

    refutations: int
    """Refutations of this kind on the bench's correct solutions."""
    slips: int
    """Of those, genuine slips of the solution's author (listed, with the true value)."""
    misreadings: int
    """Of those, misreadings: refutations of formulas that are true as their author meant them."""
    solutions: int
    """Reference solutions the bench checked."""

    @property
    def decides(self) -> bool:
        """Measured clean: no misreading on the bench."""
        return self.misreadings == 0 and self.solutions > 0


KNOWN_KINDS: tuple[str, ...] = (
    "false_as_written/arithmetic-literal", "false_as_written/arithmetic-worded", "false_as_written/arithmetic-quotient",
    "false_as_written/arithmetic-words",
    "false_as_written/identity", "known_values", "does_not_follow",
    "claimed_solution", "cases_do_not_cover", "identity_by_display", "identity_by_rewriting",
    "identity_by_expansion", "identity_by_chain",
)
"""Every key the offline checkers produce (``trust_key``)."""


def trust_key(flag_kind: str, kind: str, form: str = "literal") -> str:
    """The table's key for a refutation of ``flag_kind`` on an obligation of ``kind``. ``false_as_written`` is
    split by what was false as written, since each rests on its own reading: a formula in letters
    (``identity``), and a closed computation (``arithmetic-<form>``, ``arithmetic_form``). Every other flag kind
    is its own key."""
    if flag_kind != "false_as_written":
        return flag_kind
    if kind == "arithmetic":
        return f"{flag_kind}/arithmetic-{form}"
    return f"{flag_kind}/{kind}"


_UNIT_WORD = r"[A-Za-z]{2,}"
_CONTINUED = re.compile(r"(?:(?<![\w)])\.|\d|\b(?:days?|weeks?|months?|years?|steps?|cases?|parts?|pages?|chapters?|"
                        r"questions?|problems?|lines?|rows?|columns?|levels?|grades?|rounds?|games?|rooms?|"
                        r"sections?|a\.m\.|p\.m\.))\s*$", re.IGNORECASE)
"""Text before a formula that its first numeral continues: a digit or a decimal point (``. 84``), a label (``day 1``, ``Weeks 1-2``), a time of day (``11 a.m. - 2 hours``)."""
_MIXED_BEFORE = re.compile(r"\d\s+and\s*$")
_FRACTION_START = re.compile(r"^\s*\d{1,3}\s*/\s*\d{1,3}(?!\d)")
"""A fraction right after ``1 and``: the fractional part of a mixed number (``1 and 1/4``)."""
_THOUSANDS_BEFORE = re.compile(r"\d,\s*$")
_THREE_DIGITS = re.compile(r"^\s*\d{3}(?!\d)")
"""A formula whose first numeral has three digits right after ``14,``: the rest of a number in groups (``14, 400``)."""
_OPERATOR_WORD = re.compile(r"^\s*(?:(?:of|times|divided|multiplied|plus|minus|less|more|percent|per|over|squared|"
                            r"cubed)\b|[*×/+%-])", re.IGNORECASE)
"""Text after a formula that continues its right side in words (``= 360 divided by 5``, ``= 1/3 of $150``)."""
_WORDED_RIGHT = re.compile(r"\b(?:(?<!remainder )of|times|divided|multiplied|plus|minus|less|more|percent|per|over)\b",
                           re.IGNORECASE)
"""An operator word on a formula's right side (``= 360 divided by 5``, ``= 15% of $300``, ``= 20 times 2``)."""
_LEADING_ZERO = re.compile(r"(?<![\d.,])0\d")
_SUM_OF_UNITS = re.compile(rf"(?<![\d.,])\d[\d.,]*\s*({_UNIT_WORD})\s*[-+−]\s*\$?(?<![\d.,])\d[\d.,]*\s*({_UNIT_WORD})")
_LABEL_LEFT = re.compile(rf"^\s*\d[\d.,]*\s+{_UNIT_WORD}(?:\s+{_UNIT_WORD})?\s*=")
_QUOTIENT = re.compile(r"(\d{1,12})\s*/\s*(\d{1,12})|\\[dt]?frac\{(\d{1,12})\}\{(\d{1,12})\}")
_TERM = r"\s*(?:\d{1,12}\s*/\s*\d{1,12}|\\[dt]?frac\{\d{1,12}\}\{\d{1,12}\}|\d{1,12})\s*"
_SUM_OF_QUOTIENTS = re.compile(rf"^{_TERM}(?:\+{_TERM})*=[\d\s+]+$")


def _inexact_quotient(source: str) -> bool:
    """A sum of integer quotients, one of which does not divide, set equal to an integer expression
    (``42/5 + 42/25 = 8 + 1``: in counting, ``n/p`` is often written for its integer part)."""
    if not _SUM_OF_QUOTIENTS.match(source):
        return False
    for m in _QUOTIENT.finditer(source):
        a, b = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        if int(b) != 0 and int(a) % int(b):
            return True
    return False


def _currency_one_side(source: str, before: str, latex: bool) -> bool:
    """A currency sign on one side of the relation only (``100 * 0.75 = $0.75``: the other side's unit is
    unwritten); between math delimiters only ``\\$`` is a currency sign."""
    if "=" not in source:
        return False
    sign = "\\$" if latex else "$"
    left, right = source.split("=", 1)
    return (sign in right) != (sign in left or before.rstrip().endswith(sign))


_OPERATOR_COMMAND = re.compile(r"\\(?:times|cdot|div)(?![A-Za-z])")
_COMMAND = re.compile(r"\\[A-Za-z]+|\\[,;:!]")


def _words_only(text: str) -> str:
    """LaTeX read for its words: ``\\times``, ``\\cdot``, ``\\div`` as operators, other commands and thin spaces
    dropped, ``{,}`` as the digit-group comma it is (``100{,}001``)."""
    return _COMMAND.sub(" ", _OPERATOR_COMMAND.sub(" * ", text.replace("{,}", ",")))


_RELATION = re.compile(r"[=<>≤≥≠]|\\(?:n?eq|neq|ne|le|ge|leq|geq|lt|gt)(?![A-Za-z])")
"""A relation written as a symbol: a source without one is a claim the word-claim reader built from a sentence."""


def arithmetic_form(source: str, before: str, after: str, latex: bool = False) -> str:
    """What a closed computation's refutation rests on, read from the formula as written and the text around it:
    ``words`` when no relation is written at all (a claim read from a sentence, "the remainder when 17 is
    divided by 5 is 3": its own reading procedure, so its own record), ``worded`` when its numbers live among words (the text before continues its first numeral, the text after
    continues its right side, a clock time, a sum of two different units, a currency sign on one side only, a
    percentage written on one side only, a count with its noun set equal to a computation), ``quotient`` when an
    integer quotient that does not divide is set equal to an integer (the integer part may be meant), otherwise
    ``literal``."""
    source, before, after = _words_only(source), _words_only(before), _words_only(after)
    if _RELATION.search(source) is None:
        return "words"
    worded = (
        _CONTINUED.search(before[-40:]) is not None
        or (_MIXED_BEFORE.search(before) is not None and _FRACTION_START.match(source) is not None)
        or (_THOUSANDS_BEFORE.search(before) is not None and _THREE_DIGITS.match(source) is not None)
        or _OPERATOR_WORD.match(after) is not None
        or _WORDED_RIGHT.search(source.rsplit("=", 1)[-1]) is not None
        or _LEADING_ZERO.search(source) is not None
        or any(a.lower().rstrip("s") != b.lower().rstrip("s") for a, b in _SUM_OF_UNITS.findall(source))
        or _currency_one_side(source, before, latex)
        or ("%" in source.split("=", 1)[0]) != ("%" in source.split("=", 1)[-1] + after[:2])
        or _LABEL_LEFT.match(source) is not None
    )
    if worded:
        return "worded"
    return "quotient" if _inexact_quotient(source) else "literal"


def in_math_notation(text: str, span: tuple[int, int], segments: Sequence[Segment] | None = None) -> bool:
    """Whether ``span`` of a step's ``text`` lies inside one LaTeX math segment (``segments``: the text's, when
    already read)."""
    segs = find_segments(text) if segments is None else segments
    return any(seg.latex and seg.start <= span[0] and span[1] <= seg.end for seg in segs)


def suspect_reason(key: str) -> str | None:
    """Why a refutation of the kind ``key`` (``trust_key``) does not decide (None: it decides)."""
    m = MEASURED.get(key)
    if m is None:
        return f"kind {key} not yet measured on the reference bench"
    if not m.decides:
        return (f"kind {key} not yet measured clean: {m.misreadings} misreading(s) of {m.refutations} refutations "
                f"on the reference bench ({m.solutions} correct solutions)")
    return None


def evidence_key(ev: Evidence, steps: Mapping[int, str], segments: Sequence[Segment] | None = None) -> str:
    """The table's key of one refutation; ``steps`` maps a step number to its text (``segments``: that step's,
    when already read)."""
    if ev.kind.value != "arithmetic":
        return trust_key(ev.flag_kind or ev.basis, ev.kind.value)
    text = steps.get(ev.step, "")
    a, b = ev.span
    latex = in_math_notation(text, ev.span, segments)
    return trust_key(ev.flag_kind or ev.basis, ev.kind.value,
                     arithmetic_form(ev.source, text[max(0, a - 80):a], text[b:b + 40], latex))


def mark_suspects(evidence: Sequence[Evidence], steps: Mapping[int, str]) -> list[Evidence]:
    """``evidence`` with each exact refutation of a formula the proof writes (``checked``, with a counterexample)
    whose kind does not decide marked ``suspect`` with the reason; every other record unchanged. Each step's
    text is read for its math segments once, however many refutations it holds."""
    out = []
    segments: dict[int, list[Segment]] = {}
    for ev in evidence:
        if ev.status == "refuted" and ev.basis == "checked" and ev.counterexample:
            if ev.kind.value == "arithmetic" and ev.step not in segments:
                segments[ev.step] = find_segments(steps.get(ev.step, ""))
            why = suspect_reason(evidence_key(ev, steps, segments.get(ev.step)))
            if why is not None:
                ev = ev.model_copy(update={"suspect": why})
        out.append(ev)
    return out


MEASURED: dict[str, KindMeasure] = {
    'cases_do_not_cover': KindMeasure(refutations=0, slips=0, misreadings=0, solutions=10613),
    'claimed_solution': KindMeasure(refutations=4, slips=4, misreadings=0, solutions=10613),
    'does_not_follow': KindMeasure(refutations=1, slips=1, misreadings=0, solutions=10613),
    'false_as_written/arithmetic-literal': KindMeasure(refutations=48, slips=48, misreadings=0, solutions=10613),
    'false_as_written/arithmetic-quotient': KindMeasure(refutations=1, slips=0, misreadings=1, solutions=10613),
    'false_as_written/arithmetic-worded': KindMeasure(refutations=10, slips=3, misreadings=7, solutions=10613),
    'false_as_written/arithmetic-words': KindMeasure(refutations=2, slips=2, misreadings=0, solutions=10613),
    'false_as_written/identity': KindMeasure(refutations=0, slips=0, misreadings=0, solutions=10613),
    'identity_by_chain': KindMeasure(refutations=0, slips=0, misreadings=0, solutions=10613),
    'identity_by_display': KindMeasure(refutations=0, slips=0, misreadings=0, solutions=10613),
    'identity_by_expansion': KindMeasure(refutations=0, slips=0, misreadings=0, solutions=10613),
    'identity_by_rewriting': KindMeasure(refutations=0, slips=0, misreadings=0, solutions=10613),
    'known_values': KindMeasure(refutations=0, slips=0, misreadings=0, solutions=10613),
}
# end of the measured table
