"""Reading an answer: normalize its surface form, then parse it into a number, expression, sequence,
set or plain text (``parse_answer``). Never evaluates text as code; every computation is bounded."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from faithsieve.errors import FaithSieveError
from faithsieve.grading.extract import MAX_ANSWER_CHARS
from faithsieve.mathtext.ast import Call, Expr, Neg, Num, Var
from faithsieve.mathtext.evaluate import Limits, evaluate
from faithsieve.mathtext.lexer import BREAK, UNIT, brace_group_end, tokenize_latex, tokenize_plain
from faithsieve.mathtext.parser import parse_tokens

LIMITS = Limits(max_bits=2048, max_exponent=2048, max_factorial=300, max_binom_n=10_000)
"""Evaluation guards for answers: tighter than the pipeline's, answers are short."""

# ---------------------------------------------------------------------------
# Normalization
# ---------------------------------------------------------------------------

_TEXT_CMD = re.compile(r"\\(?:text|textbf|textit|textrm|mathrm|mathbf|mbox|operatorname)\s*\{")
_WRAPPERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
_SPACING = re.compile(r"\\[,;:! ]|\\q?quad\b|\\displaystyle\b|\\left\b|\\right\b|\\big[lr]?\b|\\Big[lr]?\b")
_DEGREE = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree\b")
_THOUSANDS = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d,])(?:\.\d+)?")
_VAR_PREFIX = re.compile(r"^\s*[A-Za-z](?:_\{?\w{1,3}\}?)?\s*=\s*(?=\S)")
_UNIT_TAIL = re.compile(
    r"^(?P<val>[-+−]?\s*(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:\s*/\s*\d+)?\s*%?)\s*"
    r"(?P<unit>(?:[A-Za-z][A-Za-z'.]*\.?(?:\^\{?\d\}?)?)(?:[\s/-]+[A-Za-z][A-Za-z'.]*(?:\^\{?\d\}?)?){0,5})\s*\.?$"
)
_WORDS_TAIL = re.compile(r"^(?P<val>.*?[\d})])\s+(?P<unit>[A-Za-z]{2,}(?:[\s/-]+[A-Za-z]{2,}){0,4})$")
_CURRENCY = re.compile(r"\\\$|\$|€|£|¥|\\euro\b|\bUSD\b|\bdollars?\b(?=\s*$)")
_MULTI_CHOICE = re.compile(r"^\(?\s*([A-Ea-e])\s*\)?$")


def _unwrap_text_cmds(s: str) -> str:
    """``5 \\text{ cm}`` -> ``5`` (a unit after a value); ``\\text{Monday}`` -> ``Monday``."""
    for _ in range(20):
        m = _TEXT_CMD.search(s)
        if not m:
            break
        close = brace_group_end(s, m.end() - 1)
        if close < 0:
            break
        inner = s[m.end() : close - 1]
        before = s[: m.start()].rstrip()
        after = s[close:].strip()
        if before and not after and re.search(r"[\d})]$", before) and re.search(r"[A-Za-z]", inner):
            s = before  # a trailing unit
        else:
            s = s[: m.start()] + inner + s[close:]
    return s


def normalize_answer(s: str) -> str:
    """Canonical surface form of an answer (used before parsing and for string fallback)."""
    s = s.strip()
    if len(s) > MAX_ANSWER_CHARS * 4:
        s = s[: MAX_ANSWER_CHARS * 4]
    s = s.replace("**", "").replace("`", "").strip()
    changed = True
    while changed:
        changed = False
        for a, b in _WRAPPERS:
            if len(s) > len(a) + len(b) and s.startswith(a) and s.endswith(b):
                s = s[len(a) : len(s) - len(b)].strip()
                changed = True
        if s.endswith((".", ";", ",")) and not s.endswith("\\."):
            s = s[:-1].rstrip()
            changed = True
    s = _unwrap_text_cmds(s)
    s = re.sub(r"\\[dt]frac\b", r"\\frac", s)
    s = re.sub(r"\\[dt]binom\b", r"\\binom", s)
    s = _SPACING.sub(" ", s)
    s = _DEGREE.sub("", s)
    s = _CURRENCY.sub("", s)
    s = re.sub(r"\\(?=\d)", "", s)  # "\\15" (a broken "\\$15")
    s = s.replace("\\%", "%").replace("−", "-").replace("\\cdot", "*").replace("\\times", "*")
    s = s.replace("{,}", ",")
    s = _VAR_PREFIX.sub("", s)
    s = re.sub(r"\s+", " ", s).strip()
    s = s.rstrip(".").strip() if not re.search(r"\d\.$", s) else s[:-1]
    m = _UNIT_TAIL.match(s)
    if m and re.search(r"[A-Za-z]{2}", m.group("unit")):
        s = m.group("val").strip()
    elif len(s) <= MAX_ANSWER_CHARS:
        m = _WORDS_TAIL.match(s)
        if m and not re.search(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+", "", m.group("val"))):
            s = m.group("val").strip()  # "\frac{1}{2} cup", "2\sqrt{3} square units"
    return s


def _strip_thousands(s: str) -> str:
    return _THOUSANDS.sub(lambda m: m.group().replace(",", ""), s)


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ParsedAnswer:
    """An answer read as a value: number, expression, sequence, or plain text."""

    kind: Literal["number", "expr", "seq", "set", "text"]
    norm: str
    """Normalized string (for the text fallback)."""
    value: Fraction | None = None
    """Exact value (numbers)."""
    expr: Expr | None = None
    """Parsed expression (numbers and expressions)."""
    percent_base: Fraction | None = None
    """For ``p%``: the value of ``p`` (the reading without the percent sign)."""
    decimals: int | None = None
    """For a plain decimal literal: its number of places."""
    brackets: str = ""
    items: tuple[ParsedAnswer, ...] = field(default=())


def _text_key(s: str) -> str:
    t = s.lower()
    t = re.sub(r"\\(?:text|textbf|mathrm|mbox|mathbf|operatorname)\s*\{([^{}]*)\}", r"\1", t)
    t = re.sub(r"\s+", "", t)
    t = t.replace("{", "").replace("}", "")
    m = _MULTI_CHOICE.match(t)
    if m:
        return m.group(1)
    return t


_OPEN = {"(": ")", "[": "]", "\\{": "\\}", "\\langle": "\\rangle", "{": "}"}


def _top_level_split(s: str) -> list[str] | None:
    """Split on commas at bracket depth 0 (None when there is none)."""
    depth = 0
    parts, cur = [], []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s) and s[i + 1] in "{}":
            cur.append(s[i : i + 2])
            depth += 1 if s[i + 1] == "{" else -1
            i += 2
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    if not parts:
        return None
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def _sequence(s: str) -> tuple[str, str] | None:
    """``(a, b)`` / ``[a, b)`` / ``\\{a, b\\}``: (brackets, inner) when the outer pair encloses all."""
    for op in ("\\langle", "\\{", "(", "["):
        if s.startswith(op):
            break
    else:
        return None
    for cl in ("\\rangle", "\\}", ")", "]"):
        if s.endswith(cl):
            break
    else:
        return None
    inner = s[len(op) : len(s) - len(cl)]
    depth = 0
    for c in inner:  # the outer pair must enclose everything
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0 and not (op in "([" and cl in ")]"):
                return None
        if depth < 0:
            return None
    if depth != 0 or _top_level_split(inner) is None:
        return None
    return op + cl, inner


def _parse_scalar(s: str) -> ParsedAnswer:
    norm = s
    if not s or len(s) > MAX_ANSWER_CHARS:
        return ParsedAnswer("text", _text_key(norm))
    latex = "\\" in s or "{" in s or "^" in s
    try:
        toks = tokenize_latex(s) if latex else tokenize_plain(s)
        toks = [t for t in toks if t.kind != UNIT]
        if not toks or any(t.kind == BREAK for t in toks):
            return ParsedAnswer("text", _text_key(norm))
        chain, _ = parse_tokens(toks, latex)
    except (FaithSieveError, RecursionError, ValueError, IndexError):
        return ParsedAnswer("text", _text_key(norm))
    if chain.rels:
        if all(r == "=" for r in chain.rels) and isinstance(chain.exprs[0], Var):
            expr = chain.exprs[-1]  # "x = 5", "x = 2 + 3 = 5": the value
        else:
            return ParsedAnswer("text", _text_key(norm))  # "x > 3": compared as written
    else:
        expr = chain.exprs[0]
    pct_base: Fraction | None = None
    if isinstance(expr, Call) and expr.fn == "percent":
        try:
            pct_base = evaluate(expr.args[0], None, LIMITS)
        except (FaithSieveError, ArithmeticError, ValueError):
            pct_base = None
    decimals = expr.decimals if isinstance(expr, Num) and expr.decimals else None
    if isinstance(expr, Neg) and isinstance(expr.operand, Num) and expr.operand.decimals:
        decimals = expr.operand.decimals
    try:
        value = evaluate(expr, None, LIMITS)
        return ParsedAnswer("number", _text_key(norm), value=value, expr=expr, percent_base=pct_base,
                            decimals=decimals)
    except (FaithSieveError, ArithmeticError, ValueError, RecursionError):
        return ParsedAnswer("expr", _text_key(norm), expr=expr)


def parse_answer(s: str) -> ParsedAnswer:
    """Read a (raw or normalized) answer string."""
    norm = normalize_answer(s)
    seq = _sequence(norm)
    if seq is not None:
        brackets, inner = seq
        parts = _top_level_split(inner) or [inner]
        return ParsedAnswer("seq", _text_key(norm), brackets=brackets,
                            items=tuple(_parse_scalar(_strip_thousands(normalize_answer(p))) for p in parts[:50]))
    stripped = _strip_thousands(norm)
    elems = _top_level_split(stripped)
    if elems is not None and len(elems) > 1 and all(elems):
        return ParsedAnswer("set", _text_key(norm), items=tuple(_parse_scalar(normalize_answer(p)) for p in elems[:50]))
    return _parse_scalar(stripped)
