"""Verbatim formulas: whether a formula is written, as it stands, in a text (pure).

The verifier uses it to recognise a model's equation that copies the proof ("202 = 2 * 101" as the
proof writes it is the proof's own claim, checked without the gate); the repair screen uses it span
by span: every computation a sub-step writes must be written so in its original step, so a split
that swaps a result ("1024 + 100 = 1124" -> "1024 + 100 = 2") is caught even when the new number
occurs elsewhere in the step.
"""

from __future__ import annotations

import re

MAX_SOURCE_CHARS = 20_000
"""Longest text searched (a step is at most 20,000 characters)."""

_TIMES = re.compile(r"\\times|\\cdot|[×·⋅∙]")
_MATH_NOISE = re.compile(r"\$|\\[()\[\]]|\\[,;!: ]|\s+")
_JOINS = frozenset("0123456789.+-*/^=<>≤≥≠_")
"""Characters that, next to a match, make it part of a longer formula (so not the formula itself)."""


def _flat(text: str) -> str:
    """``text`` with delimiters and spacing removed and every product sign written ``*``."""
    return _MATH_NOISE.sub("", _TIMES.sub("*", text))


def written_verbatim(equation: str, source: str) -> bool:
    """The equation is a verbatim copy of a formula in the source ("202 = 2 * 101", "10 = 2 \\times 5"):
    equal up to spacing, math delimiters and the product sign, and not part of a longer formula there
    (the characters around the match neither continue a number nor an operation)."""
    needle = _flat(equation.strip().rstrip(".").strip())
    if not needle or len(source) > MAX_SOURCE_CHARS:
        return False
    hay = _flat(source)
    start = hay.find(needle)
    while start != -1:
        before = hay[start - 1] if start else ""
        after = hay[start + len(needle)] if start + len(needle) < len(hay) else ""
        sentence_end = after == "." and not hay[start + len(needle) + 1:start + len(needle) + 2].isdigit()
        if before not in _JOINS and (after not in _JOINS or sentence_end):
            return True
        start = hay.find(needle, start + 1)
    return False


_RUN = re.compile(r"(?<![\d.,])\(?\d+(?:[.,]\d+)*\)?"
                  r"(?:\s*(?:[-+*/×·⋅^=<>≤≥≠]|\\times|\\cdot|\\leq?|\\geq?|\\neq?)\s*(?:\(\s*)?\d+(?:[.,]\d+)*\)?)+")
"""A run of numbers joined by operations. Each number is digits with single separators and a match
starts only where a number starts, so the pattern is linear on hostile text ("1,1,1,…", blank runs)."""
_OPEN = frozenset("+-*/^=<>≤≥≠·×⋅_}){")
"""Characters before a number run that make it the tail of a symbolic formula (``2x + 1 = 7``)."""
_REL = re.compile(r"[=<>≤≥≠]|\\leq?|\\geq?|\\neq?")
_OPERATOR_BEFORE = re.compile(r"(?:\\[A-Za-z]+|\b(?:log|lg|ln|exp|sin|cos|tan|sqrt|gcd|lcm|deg|det))"
                              r"(?:\s*[_^]\s*(?:\{[^{}]{0,40}\}|[A-Za-z0-9]))*\s*$")
"""Text before a number run that makes the run an operator's argument: ``\\log_2 2^5 = 5`` reads as
``log_2(2^5) = 5``, as the formula reader reads it, not as the false ``2^5 = 5``."""


def numeric_formulas(text: str) -> list[str]:
    """The numeric formulas ``text`` writes: runs of numbers joined by operations that contain a
    relation ("1024 + 100 = 1124", "2^10 = 1024"), trailing sentence punctuation dropped; a run that
    continues a symbolic formula (``2x + 1 = 7``, ``1 = 7x``) is not one."""
    text = text[:MAX_SOURCE_CHARS]
    out = []
    for m in _RUN.finditer(text):
        glued, before = text[m.start() - 1: m.start()], text[: m.start()].rstrip()[-1:]
        after = text[m.end(): m.end() + 1]
        symbolic = (glued.isalnum() or (bool(before) and before in _OPEN) or after.isalpha() or after in ("^", "_", "{")
                    or _OPERATOR_BEFORE.search(text[max(0, m.start() - 60): m.start()]) is not None)
        if _REL.search(m.group()) and not symbolic:
            out.append(m.group().rstrip(".,"))
    return out


def unwritten_formulas(original: str, piece: str) -> list[str]:
    """The numeric formulas of ``piece`` that ``original`` does not write verbatim."""
    return [f for f in numeric_formulas(piece) if not written_verbatim(f, original)]


__all__ = ["numeric_formulas", "unwritten_formulas", "written_verbatim"]
