"""Division with remainder and congruences between written integers, read from the step text.

``1529 ÷ 6 = 255 with a remainder of 4``, ``355 \\div 6 = 58 \\;\\mathrm{R}\\; 5``, ``the remainder when
327 is divided by 17 is 8`` and ``327 \\equiv 8 \\pmod{17}`` are claims about integers the text writes
out; the formula reader sees at most the quotient (``1529 / 6 = 255``, which a rounding reading lets
pass). Each becomes a closed arithmetic obligation with the meaning the notation fixes:

- quotient ``q`` and remainder ``r`` of ``a ÷ b``: ``a = b·q + r`` (division with remainder);
- "the remainder when ``a`` is divided by ``b`` is ``r``": ``a mod b = r``, read only for
  ``0 ≤ r < b`` (another convention, such as a least absolute residue, is not guessed at);
- ``a ≡ r (mod n)``: ``(a − r) mod n = 0``.

Only integers written as such are read: a number glued to an operator, a power, an index, a
decimal point or a thousands separator is part of something longer and is skipped, as is a
sentence that denies, questions or supposes (the same cues the formula reader uses).
"""

from __future__ import annotations

import re

from faithsieve.obligations.extraction.wordclaims import INT as _INT
from faithsieve.obligations.extraction.wordclaims import INT_FIRST as _INT_FIRST
from faithsieve.obligations.extraction.wordclaims import (
    MAX_PER_STEP,
    Found,
    closed_claims,
)
from faithsieve.obligations.extraction.wordclaims import SEP as _SEP
from faithsieve.obligations.extraction.wordclaims import glued as _glued
from faithsieve.obligations.extraction.wordclaims import num as _num
from faithsieve.obligations.extraction.wordclaims import word as _word
from faithsieve.obligations.kinds.models import ArithmeticObligation

from faithsieve.core.proof import Proof
from faithsieve.mathtext.ast import BinOp, Expr, Rel

_DIV = r"(?:÷|\\div|/|%s)" % _word(r"divided\s{1,3}by")
_EQ = r"(?:=|%s)" % _word(r"is|equals|gives")
_REM = _word(r"(?i:(?:with\s{1,3}(?:a\s{1,3})?|and\s{1,3}(?:a\s{1,3})?)?(?:remainder|rem\b\.?)(?:\s{1,3}(?:of|is))?)|R(?![A-Za-z])")
_QR = re.compile(_INT_FIRST + _SEP + _DIV + _SEP + _INT + _SEP + _EQ + _SEP + _INT + _SEP + r",?" + _SEP + _REM + _SEP
                 + r"(?:=" + _SEP + r")?" + _INT)
_REMAINDER_OF = re.compile(r"(?i)\bremainder\s{1,3}(?:when|of)" + _SEP + _INT + _SEP + r"(?:is\s{1,3})?" + _word(r"divided\s{1,3}by")
                           + _SEP + _INT + _SEP + r",?\s{0,3}(?:is|=)" + _SEP + _INT)
_MOD = r"(?:\(\s{0,3}(?:\\?mod|\\bmod|modulo)|\\pmod|\\mod|\\bmod|\bmod|\bmodulo)\s{0,3}\{?\s{0,3}"
_CONGRUENT = re.compile(_INT_FIRST + _SEP + r"(?:≡|\\equiv)" + _SEP + r"([-−]?)" + _INT + _SEP + _MOD + _INT)


def _claims(text: str) -> list[Found]:
    out: list[Found] = []
    for m in _QR.finditer(text):
        a, b, q, r = (int(g) for g in m.groups())
        if b > 0 and not _glued(text, m.start()):
            out.append((m.span(), Rel(_num(a), "=", BinOp("+", BinOp("*", _num(b), _num(q)), _num(r)))))
    for m in _REMAINDER_OF.finditer(text):
        a, b, r = (int(g) for g in m.groups())
        if 0 <= r < b:
            out.append((m.span(), Rel(BinOp("mod", _num(a), _num(b)), "=", _num(r))))
    for m in _CONGRUENT.finditer(text):
        left, sign, residue, n = m.group(1), m.group(2), m.group(3), m.group(4)
        if int(n) > 0 and not _glued(text, m.start()):
            rv: Expr = _num(int(residue))
            diff = BinOp("+" if sign else "-", _num(int(left)), rv)
            out.append((m.span(), Rel(BinOp("mod", diff, _num(int(n))), "=", _num(0))))
    return out


def remainder_obligations(proof: Proof) -> list[ArithmeticObligation]:
    """The division-with-remainder and congruence claims of every step, as closed arithmetic obligations."""
    return closed_claims(proof, "q", ("emainder", "equiv", "≡", " R", "{R}"), _claims)


__all__ = ["MAX_PER_STEP", "remainder_obligations"]
