"""Written arithmetic as tokens with character spans, evaluated exactly by ``faithsieve.mathtext``.

Mutations edit step texts by character spans, so this tokenizer keeps every token's span
(spaces included). Evaluation hands the tokens to ``faithsieve.mathtext``'s bounded parser and
exact evaluator (``+ - * /``, unary signs, ``%``, parentheses; nothing is ever ``eval``-ed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext import evaluate as mt_evaluate
from faithsieve.mathtext import lexer as mt
from faithsieve.mathtext.first_pass import NUMBER, SPACE, WORD, Scanned, scan
from faithsieve.mathtext.literals import GROUPED_WHOLE
from faithsieve.mathtext.parser import parse_tokens

__all__ = ["ArithError", "Tok", "evaluate", "evaluate_tokens", "tokenize"]


class ArithError(FaithSieveError, ValueError):
    """A text is not bounded plain arithmetic that can be read and evaluated exactly (or it divides
    by zero): raised by this tokenizer and by the benchmark rewriter's annotation reader
    (``faithsieve.rewrite.arith``). Also a ``ValueError``, as it was before the exception root."""

    code = "arith_error"


# ---------------------------------------------------------------------------
# Tokenizer
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Tok:
    """One token of a step text with its character span."""

    kind: str
    """NUM, OP, LP, RP, EQ, CUR, PCT, SP, WORD or OTHER."""
    text: str
    start: int
    end: int
    op: str = ""
    """For OP tokens: the ASCII operator ``+ - * /``."""
    value: Fraction | None = None
    """For NUM tokens: the exact value."""


_OPS = {"+": "+", "-": "-", "\u2212": "-", "\u2013": "-", "*": "*", "\u00d7": "*", "\u00b7": "*", "\u22c5": "*",
        "/": "/", "\u00f7": "/"}
_SINGLE = {"(": "LP", ")": "RP", "=": "EQ", "$": "CUR", "%": "PCT"}
_MAX_TEXT = 20_000


def tokenize(text: str) -> list[Tok]:
    """Split ``text`` into tokens. A lone ``x``/``X`` between numbers is multiplication.

    A thin walk over ``faithsieve.mathtext.first_pass``'s raw pass (numbers as the injector edits them:
    a grouped number ends its digits; Unicode words; whitespace runs kept as tokens): only the
    symbols are named here."""
    if len(text) > _MAX_TEXT:
        raise ArithError(f"text too long ({len(text)} characters)")
    toks = [_tok(raw) for raw in scan(text, GROUPED_WHOLE)]
    # A lone "x" before a number is a multiplication sign when it follows a number
    # ("3 x 4", "3x4") or stands apart as a word ("12 marigolds x $3").
    for idx, t in enumerate(toks):
        if t.kind == "WORD" and t.text in ("x", "X"):
            prev = _neighbour(toks, idx, -1)
            nxt = _neighbour(toks, idx, +1)
            if nxt is None or nxt.kind not in ("NUM", "LP", "CUR") or prev is None:
                continue
            apart = idx > 0 and toks[idx - 1].kind == "SP" and toks[idx + 1].kind == "SP"
            if prev.kind in ("NUM", "RP", "PCT") or apart:
                toks[idx] = Tok("OP", t.text, t.start, t.end, op="*")
    return toks


_RAW_KINDS = {SPACE: "SP", WORD: "WORD"}


def _tok(raw: Scanned) -> Tok:
    if raw.kind == NUMBER:
        return Tok("NUM", raw.text, raw.start, raw.end, value=raw.value)
    kind = _RAW_KINDS.get(raw.kind)
    if kind is not None:
        return Tok(kind, raw.text, raw.start, raw.end)
    ch = raw.text
    if ch in _OPS:
        return Tok("OP", ch, raw.start, raw.end, op=_OPS[ch])
    return Tok(_SINGLE.get(ch, "OTHER"), ch, raw.start, raw.end)


def _neighbour(toks: Sequence[Tok], idx: int, step: int) -> Tok | None:
    j = idx + step
    while 0 <= j < len(toks):
        if toks[j].kind != "SP":
            return toks[j]
        j += step
    return None


# ---------------------------------------------------------------------------
# Evaluation: faithsieve.mathtext's grammar and exact evaluator (no eval)
# ---------------------------------------------------------------------------

_TO_MATHTEXT = {"NUM": mt.NUM, "OP": mt.OP, "LP": mt.LP, "RP": mt.RP, "PCT": mt.PCT}
"""Token kinds of this module that an arithmetic expression may contain, as mathtext's kinds."""


def evaluate_tokens(toks: Sequence[Tok]) -> Fraction:
    """Exact value of an arithmetic token sequence (spaces and ``$`` ignored), parsed by
    ``faithsieve.mathtext.parser`` and evaluated by ``faithsieve.mathtext.evaluate``:
    ``+ - * /``, unary signs, parentheses and postfix ``%``. Every token is marked as spaced,
    so mathtext reads no juxtaposition as a product (``3 4`` and ``2(3)`` are refused, as a
    written equation's operands must be joined by an operator)."""
    seq: list[mt.Token] = []
    for t in toks:
        if t.kind in ("SP", "CUR"):
            continue
        kind = _TO_MATHTEXT.get(t.kind)
        if kind is None:
            raise ArithError(f"unexpected {t.text!r}")
        seq.append(mt.Token(kind, t.op if kind == mt.OP else t.text, t.start, t.end, space_before=True))
    if not seq:
        raise ArithError("empty expression")
    try:
        chain, _ = parse_tokens(seq, latex=False)
        return mt_evaluate(chain.exprs[0])
    except FaithSieveError as exc:
        raise ArithError(exc.message) from None


def evaluate(text: str) -> Fraction:
    """Exact value of an arithmetic expression such as ``"16 - 3 - 4"`` or ``"$3 x 5"``.

    Raises :class:`ArithError` for anything else (words, unbalanced parentheses,
    division by zero).
    """
    return evaluate_tokens(tokenize(text))
