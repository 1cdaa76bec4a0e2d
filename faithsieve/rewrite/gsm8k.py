"""Reading a GSM8K item: the numbers its question writes, its calculator annotations, its answer.

A question number is a ``Literal`` with its character span and a ``kind``:

- ``integer`` / ``decimal`` (digits, thousands commas kept for rewriting), ``percent`` (``25%``,
  ``25 percent``) — these may be resampled;
- ``fixed``: written in a way a resampled value could not keep meaning — parts of a fraction
  (``3/4``, ``two-thirds``) or a clock time (``3:30``), ordinals (``5th``), years (``1990``), counts
  of a group the question names (``the two``, ``all three``), the values 0 and 1
  (``1 apple`` → ``2 apple``), and every number written in words: in the GSM8K test set those were
  the ones whose change broke the question (``split three ways with her two parents``). A fixed number can still be the source of an annotation number; it
  simply keeps its value.

``CONSTANTS`` are the conversion factors a solution may use without the question writing them
(100 for percent, 60 minutes, 12 per dozen, ...). Each is allowed only when one of its cue words
appears in the question, and the cue is recorded as the justification.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal as TLiteral

from faithsieve.datasets.injection.tokens import ArithError
from faithsieve.rewrite.arith import Node, leaves, number_value, parse
from faithsieve.rewrite.arith import value as node_value

MAX_QUESTION_CHARS = 4000
MAX_ANSWER_CHARS = 6000
MAX_ANNOTATIONS = 40

Kind = TLiteral["integer", "decimal", "percent", "fixed"]

_NUM = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+|(?=\.\d))(?:\.(\d+))?(?![\d])")
_UNITS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
WORD_VALUES: dict[str, int] = {w: i + 1 for i, w in enumerate(_UNITS)}
WORD_VALUES.update({w: 20 + 10 * i for i, w in enumerate(_TENS)})
_WORD_FRACTION = re.compile(r"[- ](halves|halfs|thirds?|quarters?|fourths?|fifths?|sixths?|sevenths?|eighths?|ninths?|"
                            r"tenths?|twelfths?)\b", re.IGNORECASE)
_DENOMINATORS = {"third": 3, "quarter": 4, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
                 "tenth": 10, "twelfth": 12}
_DENOMINATOR = re.compile(r"\b(a|one|two|three|four|five|six|seven|eight|nine)[- ](thirds?|quarters?|fourths?|fifths?|"
                          r"sixths?|sevenths?|eighths?|ninths?|tenths?|twelfths?)\b", re.IGNORECASE)
_WORD = re.compile(r"\b(" + "|".join(_TENS) + r")(?:-(" + "|".join(_UNITS[:9]) + r"))?\b|\b("
                   + "|".join(_UNITS) + r")\b", re.IGNORECASE)

CONSTANTS: dict[Fraction, tuple[tuple[str, ...], ...]] = {
    Fraction(100): (("%",), ("percent",), ("cent", "dollar"), ("centur",)),
    Fraction(60): (("minute", "hour"), ("second", "minute")),
    Fraction(12): (("dozen",), ("month", "year"), ("inch", "foot"), ("inch", "feet")),
    Fraction(24): (("hour", "day"),),
    Fraction(7): (("week", "day"),),
    Fraction(5): (("weekday",), ("week", "weekend")),
    Fraction(52): (("week", "year"),),
    Fraction(365): (("day", "year"),),
    Fraction(30): (("day", "month"),),
    Fraction(4): (("quarter",), ("quadruple",), ("a fourth",), ("fourths",), ("week", "month")),
    Fraction(1000): (("thousand",), ("gram", "kilogram"), ("meter", "kilometer"), ("liter", "milliliter")),
    Fraction(2): (("half",), ("halves",), ("twice",), ("double",), ("pair",), ("couple",), ("round trip",),
                  ("twin",), ("every other",), ("weekend",)),
    Fraction(3): (("triple",), ("thrice",), ("a third",), ("one third",), ("thirds",), ("yard", "feet"),
                  ("yard", "foot")),
    Fraction(1, 2): (("half",), ("halves",)),
    Fraction(1, 4): (("quarter",),),
    Fraction(1, 10): (("dime",),),
    Fraction(1, 20): (("nickel",),),
    Fraction(1, 100): (("%",), ("percent",), ("penny",), ("pennies",), ("cent", "dollar")),
    Fraction(16): (("ounce", "pound"),),
}
"""Conversion factors a solution may use unwritten. Each is justified by one of its cues: a group of
word beginnings that must all occur in the question (``("minute", "hour")``: 60 converts between
the two units the question names)."""


@dataclass(frozen=True)
class Literal:
    """One number written in the question."""

    index: int
    start: int
    end: int
    text: str
    value: Fraction
    kind: Kind
    decimals: int = 0
    """Digits after the point as written (decimals keep that many)."""
    commas: bool = False
    """Written with thousands separators."""
    why_fixed: str = ""


@dataclass(frozen=True)
class Annotation:
    """One ``<<expr=result>>`` of the solution."""

    index: int
    start: int
    """Offset of ``<<`` in the answer text."""
    end: int
    """Offset just after ``>>``."""
    expr: str
    node: Node
    result: Fraction
    prose: bool = False
    """A prose equation of the solution (``60 - 3 = 57``), not a ``<<...>>``: ``expr`` is its left side as
    written from ``start`` (``$`` blanked, ``x`` read as ``*``, same length), its result is written at
    ``[result_start, end)``."""
    result_start: int = -1
    restates: bool = False
    """A prose left side written right before an annotation (``60 + 30 = <<90=90>>``): it writes no
    result of its own; its value must stay the next annotation's result (``identity.held_inputs``)."""


@dataclass(frozen=True)
class Item:
    """A parsed GSM8K record."""

    id: str
    question: str
    answer: str
    literals: tuple[Literal, ...]
    annotations: tuple[Annotation, ...]
    final: Fraction
    final_text: str


class ItemRejected(Exception):
    """The item cannot be rewritten safely; ``stage`` and ``reason`` say why (for the statistics)."""

    def __init__(self, stage: str, reason: str, detail: str = "") -> None:
        super().__init__(f"{stage}/{reason}: {detail}")
        self.stage = stage
        self.reason = reason
        self.detail = detail[:300]


_GROUP = re.compile(r"\b(the|all|these|those|both|each of the|of the)\s+$", re.IGNORECASE)


def _fixed_reason(q: str, start: int, end: int, value: Fraction, text: str) -> str:
    before, after = q[max(0, start - 2):start], q[end:end + 3]
    if re.match(r"\s?/\s?\d", after) or re.search(r"\d\s?/\s?$", before):
        return "part of a fraction"
    if after.startswith(":") or before.endswith(":"):
        return "part of a clock time"
    if re.match(r"(st|nd|rd|th)\b", after):
        return "ordinal"
    if re.fullmatch(r"(19|20)\d\d", text):
        return "a year"
    if value in (0, 1):
        return "0 and 1 change the grammar"
    if _GROUP.search(q[max(0, start - 12):start]):
        return "counts a group the question names (the two, all three)"
    return ""


def question_literals(question: str) -> tuple[Literal, ...]:
    """Every number the question writes, in order, classified."""
    found: list[tuple[int, int, str, Fraction, Kind, int, bool, str]] = []
    for m in _NUM.finditer(question):
        text = m.group()
        value = number_value(text)
        decimals = len(m.group(2) or "")
        why = _fixed_reason(question, m.start(), m.end(), value, text)
        kind: Kind
        if why:
            kind = "fixed"
        elif re.match(r"\s?(%|percent\b)", question[m.end():m.end() + 9]):
            kind = "percent"
        else:
            kind = "decimal" if decimals else "integer"
        found.append((m.start(), m.end(), text, value, kind, decimals, "," in text, why))
    for m in _WORD.finditer(question):
        value = word_value(m)
        why = ("part of a fraction" if _WORD_FRACTION.match(question, m.end())
               else "a count in words often fixes the structure (three ways with her two parents)")
        found.append((m.start(), m.end(), m.group(), value, "fixed", 0, False, why))
    for m in _DENOMINATOR.finditer(question):
        found.append((m.start(2), m.end(2), m.group(2), Fraction(_DENOMINATORS[m.group(2).lower().rstrip("s")]), "fixed",
                      0, False, "denominator of a fraction in words"))
    found.sort(key=lambda f: f[0])
    return tuple(Literal(i, *f) for i, f in enumerate(found))


_ANNOTATION = re.compile(r"<<([^<>]{0,400})>>")
_FINAL = re.compile(r"####\s*(-?[\d,]*\.?\d+)\s*$")


def parse_item(record: dict[str, object], item_id: str) -> Item:
    """Parse one GSM8K record; raises ``ItemRejected`` (stage ``parse``) when it cannot be used."""
    q, a = record.get("question"), record.get("answer")
    if not isinstance(q, str) or not isinstance(a, str):
        raise ItemRejected("parse", "bad_record", "needs string fields 'question' and 'answer'")
    if len(q) > MAX_QUESTION_CHARS or len(a) > MAX_ANSWER_CHARS:
        raise ItemRejected("parse", "too_long", f"question {len(q)} / answer {len(a)} characters")
    fm = _FINAL.search(a)
    if not fm:
        raise ItemRejected("parse", "no_final_answer", "no '#### N' line")
    final_text = fm.group(1)
    try:
        final = -number_value(final_text[1:]) if final_text.startswith("-") else number_value(final_text)
    except ArithError as exc:
        raise ItemRejected("parse", "no_final_answer", str(exc)) from None
    anns: list[Annotation] = []
    for m in _ANNOTATION.finditer(a):
        if len(anns) >= MAX_ANNOTATIONS:
            raise ItemRejected("parse", "too_many_annotations", f"more than {MAX_ANNOTATIONS}")
        lhs, eq, rhs = m.group(1).partition("=")
        if not eq or "=" in rhs:
            raise ItemRejected("parse", "annotation_unparsable", m.group(1))
        try:
            node = parse(lhs)
            computed = node_value(node)
            written = number_value(rhs.strip()) if not rhs.strip().startswith("-") else -number_value(rhs.strip()[1:])
        except ArithError as exc:
            raise ItemRejected("parse", "annotation_unparsable", f"{m.group(1)}: {exc}") from None
        if computed != written:
            raise ItemRejected("parse", "annotation_false", f"{lhs} is {computed}, written {rhs.strip()}")
        anns.append(Annotation(len(anns), m.start(), m.end(), lhs, node, computed))
    if not anns:
        raise ItemRejected("parse", "no_annotations", "the solution has no calculator annotation")
    steps = prose_steps(a)
    if len(steps) > MAX_ANNOTATIONS:
        raise ItemRejected("parse", "too_many_annotations", f"more than {MAX_ANNOTATIONS} prose equations")
    merged = sorted([*anns, *steps], key=lambda x: x.start)
    anns = [dataclasses.replace(x, index=i) for i, x in enumerate(merged)]
    return Item(id=item_id, question=q, answer=a, literals=question_literals(q), annotations=tuple(anns),
                final=final, final_text=final_text)


def cues_for(value: Fraction, question: str) -> str | None:
    """The cue in ``question`` that justifies ``value`` as an unwritten constant (``"minute+hour"``), if any:
    a conversion factor's cue words, or a fraction the question writes (``1/4`` or ``one-fourth`` gives 1/4,
    so a solution may write ``.25``)."""
    low = question.lower()
    for group in CONSTANTS.get(value, ()):
        if all(w in low if w == "%" else re.search(r"\b" + re.escape(w), low) for w in group):
            return "+".join(group)
    if value.denominator != 1:
        return written_fractions(question).get(value)
    return None


_DIGIT_FRACTION = re.compile(r"(?<![\d.,/])(\d{1,3}) ?/ ?(\d{1,3})(?![\d/]|\.\d)")


def written_fractions(question: str) -> dict[Fraction, str]:
    """Proper fractions the question writes: ``3/4``, ``two-thirds``, ``a quarter``, ``one fifth`` (value -> text)."""
    out: dict[Fraction, str] = {}
    for m in _DIGIT_FRACTION.finditer(question):
        num, den = int(m.group(1)), int(m.group(2))
        if 0 < num < den:
            out.setdefault(Fraction(num, den), m.group())
    for m in _DENOMINATOR.finditer(question):
        word = m.group(1).lower()
        num = 1 if word in ("a", "one") else WORD_VALUES[word]
        den = _DENOMINATORS[m.group(2).lower().rstrip("s")]
        if num < den:
            out.setdefault(Fraction(num, den), m.group())
    return out


def unit_class(question: str, lit: Literal) -> str:
    """``percent``, ``money`` (``$5``, ``5 dollars``) or ``other``: numbers compared for order only within a class."""
    if lit.kind == "percent":
        return "percent"
    if question[max(0, lit.start - 1):lit.start] in ("$", "€", "£") or \
            re.match(r"\s(dollars?|cents?|euros?)\b", question[lit.end:lit.end + 9], re.IGNORECASE):
        return "money"
    return "other"


def word_value(m: re.Match[str]) -> Fraction:
    """The value of a ``_WORD`` match (``three`` -> 3, ``twenty-five`` -> 25)."""
    if m.group(3):
        return Fraction(WORD_VALUES[m.group(3).lower()])
    return Fraction(WORD_VALUES[m.group(1).lower()] + (WORD_VALUES[m.group(2).lower()] if m.group(2) else 0))


_STEP = re.compile(r"(?<![\w.,$])(?=[$(]|\.?\d)([\d $.()+\-*/x×÷−–]{3,160}?) *= *\$?"
                   r"(\d{1,3}(?:,\d{3})+(?!\d)|\d+(?:\.\d+)?|\.\d+)(?![\w%,.]?\d|[\w%]| *[-+*/x×÷−–] *[\d$(.])")
_STEP_OPERATOR = re.compile(r"\d *[-+*/x×÷−–] *[$(.]?\d")
_RESTATEMENT = re.compile(r"(?<![\w.,$])(?=[$(]|\.?\d)([\d $.()+\-*/x×÷−–]{3,160}?) *= *\$? *(?=\x00)")


def _masked(answer: str, fill: str) -> str:
    """``answer`` with its annotations and its final ``####`` line overwritten by ``fill``."""
    masked = _ANNOTATION.sub(lambda m: fill * len(m.group()), answer)
    fm = _FINAL.search(masked)
    if fm:
        masked = masked[:fm.start()] + fill * (len(masked) - fm.start())
    return masked


def prose_steps(answer: str) -> list[Annotation]:
    """Equations the solution writes in prose without an annotation (``60 - 3 = 57 seconds``,
    ``$48 / 2 = $24``): two or more plain numbers joined by ``+ - * / x × ÷`` (or a typographic minus
    ``−`` ``–``), ``=``, one number.
    Kept only when the arithmetic is exactly true; a false or unparsable one is no step (its numbers
    stay prose numbers). Not a step: a left side that continues an expression (an operator or ``=``
    right before it), a result followed by ``%`` or by more arithmetic. A true left side written right
    before an annotation (``60 + 30 = <<90=90>>``) is a step that ``restates`` it."""
    masked = _masked(answer, "\x00")
    out: list[Annotation] = []
    for m in _STEP.finditer(masked):
        step = _step(masked, m)
        if step is not None and step[1] == number_value(m.group(2)):
            out.append(Annotation(0, m.start(1), m.end(2), step[0], parse(step[0]), step[1], prose=True,
                                  result_start=m.start(2)))
    for m in _RESTATEMENT.finditer(masked):
        step = _step(masked, m)
        ann = _ANNOTATION.match(answer, m.end())
        if step is None or ann is None:
            continue
        rhs = ann.group(1).partition("=")[2]
        try:
            result = number_value(rhs.strip())
        except ArithError:
            continue
        if step[1] == result:
            out.append(Annotation(0, m.start(1), m.start(1) + len(step[0]), step[0], parse(step[0]), step[1],
                                  prose=True, restates=True))
    return sorted(out, key=lambda a: a.start)


def _step(masked: str, m: re.Match[str]) -> tuple[str, Fraction] | None:
    """The left side of a prose equation as an annotation expression and its value, or ``None``."""
    lhs = m.group(1).rstrip()
    before = masked[:m.start()].rstrip(" $")
    if before[-1:] in ("+", "-", "*", "/", "x", "×", "÷", "−", "–", "=") or not _STEP_OPERATOR.search(lhs):
        return None
    expr = lhs.replace("$", " ").replace("x", "*").replace("×", "*").replace("÷", "/").replace("−", "-").replace("–", "-")
    try:
        node = parse(expr)
        if len(leaves(node)) < 2:
            return None
        return expr, node_value(node)
    except ArithError:
        return None


def prose_numbers(answer: str) -> list[tuple[int, int, Fraction, bool]]:
    """Numbers the solution writes outside its annotations, its prose equations and its final ``####``
    line: ``(start, end, value, written_as_word)``; the word ``one`` is left out (a pronoun as often as not)."""
    out: list[tuple[int, int, Fraction, bool]] = []
    masked = _masked(answer, " ")
    for step in prose_steps(answer):
        end = step.end if not step.restates else step.start + len(step.expr)
        masked = masked[:step.start] + " " * (end - step.start) + masked[end:]
    for m in _NUM.finditer(masked):
        out.append((m.start(), m.end(), number_value(m.group()), False))
    for m in _WORD.finditer(masked):
        v = word_value(m)
        if v != 1 and not _WORD_FRACTION.match(masked, m.end()):
            out.append((m.start(), m.end(), v, True))
    return sorted(out)
