"""Final answers: find the one a solution states, and compare it with a reference as a value.

Extraction (``extract_answer``), most explicit marker first:

1. the last ``\\boxed{...}`` (or ``\\fbox{...}``) whose braces balance;
2. otherwise whichever of "The answer is X" / "Final answer: X" and GSM8K's ``#### X``
   comes last in the text;
3. otherwise, if enabled, the last number in the text.

Comparison (``answers_equal``) never evaluates text as code. An answer is normalized
(``$``, ``\\text{}`` units, trailing unit words, thousands separators, ``\\dfrac``, a
trailing period, ``x =`` prefixes), then read with the project's bounded math
tokenizer and parser and compared as an exact value:

* numbers as ``Fraction`` (``0.5 == 1/2 == \\frac{1}{2} == 2/4``);
* closed forms that are not rational (``2\\sqrt{3}``, ``\\pi/2``) with sympy, built node
  by node under size guards, equal when their difference is 0 or below 1e-40 at 50 digits;
* expressions in variables (``2x+2`` vs ``2(x+1)``) at fixed pseudo-random rational points
  (deterministic; a polynomial identity test);
* tuples and intervals element by element with matching brackets; unbracketed lists
  (``2, 3``) as unordered collections; everything else as a normalized string.

Policies (see ``AnswerPolicy``): percent (``50%`` against ``0.5`` and ``50``) and
rounded decimals (``0.33`` against ``1/3``).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from faithsieve.errors import FaithSieveError
from faithsieve.mathtext.ast import Call, Expr, Neg, Num, Var, variables, walk
from faithsieve.mathtext.evaluate import Limits, evaluate, to_sympy
from faithsieve.mathtext.lexer import BREAK, UNIT, brace_group_end, tokenize_latex, tokenize_plain
from faithsieve.mathtext.parser import parse_tokens

__all__ = [
    "AnswerPolicy", "ExtractedAnswer", "ParsedAnswer", "answers_equal", "extract_answer", "normalize_answer",
    "parse_answer", "reference_answer",
]

MAX_ANSWER_CHARS = 300
"""Answers longer than this are compared as normalized strings only (never parsed)."""
LIMITS = Limits(max_bits=2048, max_exponent=2048, max_factorial=300, max_binom_n=10_000)
"""Evaluation guards for answers: tighter than the pipeline's, answers are short."""
MAX_SYMPY_NODES = 80
_POINTS = 6


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


# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------

def _readings(a: ParsedAnswer, policy: AnswerPolicy) -> list[Fraction]:
    assert a.value is not None
    if a.percent_base is None:
        return [a.value]
    if policy.percent == "value":
        return [a.value]
    if policy.percent == "strip":
        return [a.percent_base]
    return [a.value, a.percent_base]


def _terminating(x: Fraction) -> bool:
    d = x.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d == 1


def _rounded_match(dec: ParsedAnswer, other: ParsedAnswer) -> bool:
    """A decimal with >= 2 places against a value with no finite decimal expansion."""
    if dec.decimals is None or dec.decimals < 2 or dec.value is None:
        return False
    half_ulp = Fraction(1, 2 * 10**dec.decimals)
    if other.kind == "number" and other.value is not None:
        if _terminating(other.value):
            return False
        return abs(other.value - dec.value) <= half_ulp
    if other.kind == "expr" and other.expr is not None and not variables(other.expr):
        v = _numeric(other.expr)
        if v is None:
            return False
        return abs(v - dec.value) <= half_ulp
    return False


def _size(e: Expr) -> int:
    """Node count, stopping early once past the symbolic size limit."""
    n = 0
    for _ in walk(e):
        n += 1
        if n > MAX_SYMPY_NODES:
            break
    return n


def _sympy(e: Expr):  # type: ignore[no-untyped-def]
    if _size(e) > MAX_SYMPY_NODES:
        return None
    try:
        return to_sympy(e, LIMITS)
    except (FaithSieveError, ArithmeticError, ValueError, TypeError, RecursionError):
        return None


def _numeric(e: Expr) -> Fraction | None:
    """A closed real value to ~40 digits, as a Fraction (None if not real or not computable)."""
    import sympy  # type: ignore[import-untyped]

    s = _sympy(e)
    if s is None:
        return None
    try:
        v = sympy.N(s, 45)
        if not v.is_real or not v.is_finite:
            return None
        return Fraction(str(v))
    except (ArithmeticError, ValueError, TypeError, RecursionError):
        return None


def _closed_equal(a: Expr, b: Expr) -> bool:
    import sympy  # type: ignore[import-untyped]

    sa, sb = _sympy(a), _sympy(b)
    if sa is None or sb is None:
        return False
    try:
        d = sa - sb
        if d == 0:
            return True
        dv = sympy.N(d, 50)
        mag = sympy.N(abs(sa), 20)
        if not (dv.is_number and mag.is_number) or not dv.is_finite:
            return False
        return bool(abs(dv) <= sympy.Float(10, 60) ** -40 * max(mag, 1))
    except (ArithmeticError, ValueError, TypeError, RecursionError):
        return False


def _identity_equal(a: Expr, b: Expr) -> bool:
    """Equal as functions: agree at fixed pseudo-random rational points (bounded exact arithmetic)."""
    names = sorted(variables(a) | variables(b))
    if len(names) > 8:
        return False
    rng = random.Random(1729)
    agreed = 0
    for _ in range(_POINTS * 3):
        env = {n: Fraction(rng.randint(-97, 97), rng.randint(1, 13)) for n in names}
        try:
            va, vb = evaluate(a, env, LIMITS), evaluate(b, env, LIMITS)
        except (FaithSieveError, ArithmeticError, ValueError, RecursionError):
            continue
        if va != vb:
            return False
        agreed += 1
        if agreed >= _POINTS:
            return True
    return False


def _scalar_equal(p: ParsedAnswer, r: ParsedAnswer, policy: AnswerPolicy) -> bool:
    if p.kind == "number" and r.kind == "number":
        if set(_readings(p, policy)) & set(_readings(r, policy)):
            return True
        return policy.decimal_rounding and (_rounded_match(p, r) or _rounded_match(r, p))
    if p.kind in ("number", "expr") and r.kind in ("number", "expr"):
        assert p.expr is not None and r.expr is not None
        if variables(p.expr) or variables(r.expr):
            return _identity_equal(p.expr, r.expr)
        if _closed_equal(p.expr, r.expr):
            return True
        return policy.decimal_rounding and (_rounded_match(p, r) or _rounded_match(r, p))
    return p.norm == r.norm and bool(p.norm)


def _equal(p: ParsedAnswer, r: ParsedAnswer, policy: AnswerPolicy) -> bool:
    if p.kind == "seq" or r.kind == "seq":
        if p.kind != r.kind:
            return p.norm == r.norm
        if p.brackets != r.brackets or len(p.items) != len(r.items):
            return False
        return all(_scalar_equal(a, b, policy) for a, b in zip(p.items, r.items))
    if p.kind == "set" or r.kind == "set":
        if p.kind != r.kind or len(p.items) != len(r.items):
            return p.norm == r.norm
        left = list(r.items)
        for a in p.items:
            for i, b in enumerate(left):
                if _scalar_equal(a, b, policy):
                    del left[i]
                    break
            else:
                return False
        return True
    return _scalar_equal(p, r, policy)


def answers_equal(predicted: str, reference: str, policy: AnswerPolicy = DEFAULT_POLICY) -> bool:
    """Whether two final answers denote the same value (see the module docstring)."""
    if not predicted or not reference:
        return False
    p, r = parse_answer(predicted), parse_answer(reference)
    return _equal(p, r, policy)
