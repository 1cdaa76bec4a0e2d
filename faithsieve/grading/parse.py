"""Reading an answer as a value: a number, an expression, an equation, a tuple or interval, a set,
a union of intervals, a matrix, or plain text (``parse_answer``).

The answer forms read here, each from model output: several answers joined by "and", "or", ``;``
or commas (a set); a label before a value (``(p,q)=(3,2)``, ``|AB| = 1``, ``x \\in [-2, 7]``);
``a < x < b`` (an interval) and ``a \\le |x| \\le b`` (two); ``\\pm``; unions with ``\\cup``;
tuples written with ``;``; matrices. Never evaluates text as code; every computation is bounded.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from faithsieve.core.errors import FaithSieveError
from faithsieve.grading.normalize import (
    _MULTI_CHOICE,
    IMPLICIT_PRODUCT,
    LIMITS,
    _strip_thousands,
    normalize_answer,
)
from faithsieve.grading.stated_answer import MAX_ANSWER_CHARS
from faithsieve.mathtext.ast import BinOp, Call, Expr, Neg, Num, Var, variables
from faithsieve.mathtext.evaluate import evaluate
from faithsieve.mathtext.lexer import BREAK, UNIT, tokenize_latex, tokenize_plain
from faithsieve.mathtext.parser import parse_tokens


@dataclass(frozen=True)
class ParsedAnswer:
    """An answer read as a value: number, expression, sequence, or plain text."""

    kind: Literal["number", "expr", "equation", "relation", "seq", "set", "text"]
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
    """relation: its operator, ``<``, ``<=`` or ``!=`` (``a > b`` is read as ``b < a``: ``expr`` is the
    larger side minus the smaller, so ``expr > 0`` or ``>= 0``; for ``!=``, left - right). seq: ``()``, ``[]``, ``[)``, ``(]``, ``\\langle\\rangle``, ``matrix``, ``row``; set: ``""`` (a list as
    written, joined by commas, "and", "or" or ``;``), ``\\{\\}``, or ``cup`` (a union)."""
    items: tuple[ParsedAnswer, ...] = field(default=())
    labelled: bool = False
    """A label stood before the value (``p = 5``)."""
    equation: Expr | None = None
    """For a labelled value in variables (``y = 1 - x``): the whole read as an equation, left - right
    (compared with an equation written another way, ``x + y = 1``)."""
    tail: ParsedAnswer | None = None
    """For a computation written out (``7 - (-3) + 1 = 11``, ``2x = 16\\sqrt{3}``): its last side, when
    that is a constant. Compared with a reference that is a single value."""


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
    parts = _split_top(s, _COMMA)
    return parts if len(parts) > 1 else None


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
    if depth != 0 or len(_split_top(inner, re.compile(r"[,;]"))) < 2:
        return None
    return op + cl, inner


_BARS = re.compile(r"\|([^|]{1,200})\|")
_NAME_BARS = re.compile(r"[A-Z]{2,3}")
_POWER_RUN = re.compile(r"(\^\s*(?:\{[^{}]{1,20}\}|\d+))\s+(?=[\d(\\])")
_GROUP_RUN = re.compile(r"\)\s+\(")
_IMAGINARY_CALL = re.compile(r"(?<![A-Za-z\\])i\s*\(")
_FLIP = {">": "<", ">=": "<="}


def _bars(m: re.Match[str]) -> str:
    """``|x - 1|`` -> ``\\left|x - 1\\right|`` (the reader's absolute value); a name such as ``|AB|`` stays."""
    inner = m.group(1)
    return m.group(0) if _NAME_BARS.fullmatch(inner.strip()) else "\\left|" + inner + "\\right|"


def _spelled(s: str) -> str:
    """Products written by juxtaposition the reader does not take (``2^6 3^5``, ``(1+2) (3-4)``, ``i(2-i)``)
    and absolute-value bars, written out."""
    if "|" in s:
        s = _BARS.sub(_bars, s)
    if "^" in s:
        s = _POWER_RUN.sub(r"\1*", s)
    if ")" in s:
        s = _GROUP_RUN.sub(")*(", s)
    if "i" in s:
        s = _IMAGINARY_CALL.sub("i*(", s)
    if "=" in s and ("\\" in s or "{" in s or "^" in s):  # LaTeX is read: write its relations
        s = s.replace(">=", "\\geq ").replace("<=", "\\leq ").replace("!=", "\\neq ")
    return s


def _relation(chain_rels: tuple[str, ...], exprs: tuple[Expr, ...], norm: str) -> ParsedAnswer | None:
    """One inequality or ``!=`` (``x^2 <= 2x``, ``1 < x``) as a relation."""
    if len(chain_rels) != 1 or chain_rels[0] not in ("<", "<=", ">", ">=", "!="):
        return None
    op, (a, b) = chain_rels[0], exprs
    if op in _FLIP:
        op, a, b = _FLIP[op], b, a
    return ParsedAnswer("relation", _text_key(norm), expr=BinOp("-", b, a) if op != "!=" else BinOp("-", a, b),
                        brackets=op)


def _parse_scalar(s: str) -> ParsedAnswer:
    norm = s
    if not s or len(s) > MAX_ANSWER_CHARS:
        return ParsedAnswer("text", _text_key(norm))
    s = _spelled(s)
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
        rel = _relation(chain.rels, chain.exprs, norm)
        if rel is not None:
            return rel
        if all(r == "=" for r in chain.rels) and isinstance(chain.exprs[0], Var):
            expr = chain.exprs[-1]  # "x = 5", "x = 2 + 3 = 5": the value
        elif chain.rels == ("=",) and isinstance(chain.exprs[1], Var) and not variables(chain.exprs[0]):
            expr = chain.exprs[0]  # "5 = x"
        elif chain.rels == ("=",) and (variables(chain.exprs[0]) or variables(chain.exprs[1])):
            # "34x+45y-20z+100=0": an equation, read as left - right (compared up to a factor)
            return ParsedAnswer("equation", _text_key(norm), expr=BinOp("-", chain.exprs[0], chain.exprs[1]))
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


_MAX_ANSWER_NESTING = 4
"""Deepest nesting of sets, tuples and matrices read in one answer (deeper parts are compared as text)."""
_MAX_ITEMS = 50
_JOIN = re.compile(r";|(?<=\s)(?:and|or)(?=\s)|(?<=[\d)\]}])(?:and|or)(?=[A-Za-z(\\])|\\text\s*\{\s*(?:and|or)\s*\}")
_COMMA = re.compile(",")
_EQ = re.compile(r"(?<![<>!:\\])=(?!=)")
_CUP = re.compile(r"\\cup\b|∪")
_CAP = re.compile(r"\\cap\b|∩")
_LABEL_SEP = re.compile(r"(?<![<>!:\\])=(?!=)|\\in\b")
_LABEL_FRAC = re.compile(r"\\[dt]?frac\{[A-Za-z ]+\}\{[A-Za-z ]+\}")
_LABEL_NOISE = re.compile(r"_\{[^{}]*\}|_[A-Za-z0-9]|\\(?:angle|overline|triangle|text|mathrm|operatorname)\b|\\[{}]")
_LABEL_CHARS = re.compile(r"[A-Za-z\s(),|:{}\[\]']+")
_LESS = r"<|\\leq?\b|\\leqslant\b|≤"
_CHAIN = re.compile(rf"^(?P<lo>[^<>=]+?)(?P<o1>{_LESS})(?P<mid>[^<>=]+?)(?P<o2>{_LESS})(?P<hi>[^<>=]+)$")
_PM = re.compile(r"\\pm\b|\\mp\b")
_WRAPPED_MATRIX = re.compile(r"^[(\[]\s*(\\begin\{[pbvBV]?matrix\}.*\\end\{[pbvBV]?matrix\})\s*[)\]]$", re.S)
_MATRIX = re.compile(r"^\\begin\{([pbvBV]?matrix|array)\}(?:\{[^{}]*\})?(.*)\\end\{\1\}$", re.S)


def _depths(s: str) -> list[int]:
    """Bracket depth before each character (``\\{`` and ``\\}`` count as brackets)."""
    out, depth, i = [0] * (len(s) + 1), 0, 0
    while i < len(s):
        out[i] = depth
        c = s[i]
        if c == "\\" and i + 1 < len(s) and s[i + 1] in "{}":
            depth += 1 if s[i + 1] == "{" else -1
            out[i + 1] = depth
            i += 2
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        i += 1
    out[len(s)] = depth
    return out


def _split_top(s: str, pattern: re.Pattern[str]) -> list[str]:
    """Split ``s`` where ``pattern`` matches at bracket depth 0."""
    d = _depths(s)
    parts, last = [], 0
    for m in pattern.finditer(s):
        if m.end() > m.start() and d[m.start()] == 0 and min(d[m.start() : m.end() + 1]) >= 0:
            parts.append(s[last : m.start()])
            last = m.end()
    parts.append(s[last:])
    return [p.strip() for p in parts]


def _is_label(label: str) -> bool:
    """A name before a value: ``x``, ``x_{1}``, ``(p,q)``, ``|AB|``, ``f(x)``, ``V_1:V_2``, ``\\frac{NO}{BO}``."""
    if not label or len(label) > 40:
        return False
    t = _LABEL_NOISE.sub("", _LABEL_FRAC.sub("Q", label))
    return bool(_LABEL_CHARS.fullmatch(t)) and bool(re.search(r"[A-Za-z]", t))


def _strip_label(s: str) -> str | None:
    """The value after a label (``(p,q)=(3,2)`` -> ``(3,2)``; ``x = 2 + 3 = 5`` -> ``5``), or None."""
    if "=" not in s and "\\in" not in s or len(_split_top(s, _COMMA)) > 1:
        return None  # "AB=4, CD=5" is a list of labelled values
    seps = _split_top(s, _LABEL_SEP)
    if len(seps) < 2 or not seps[-1] or not _is_label(seps[0]):
        return None
    return seps[-1]


def _interval_text(m: re.Match[str]) -> str | None:
    """``a < x < b`` -> ``(a, b)``; ``a \\le |x| \\le b`` -> ``[-b, -a] \\cup [a, b]``."""
    mid = m.group("mid").strip()
    if not _is_label(mid):
        return None
    lo, hi = m.group("lo").strip(), m.group("hi").strip()
    lb = "(" if m.group("o1").strip() == "<" else "["
    rb = ")" if m.group("o2").strip() == "<" else "]"
    if mid.startswith("|") and mid.endswith("|"):
        mirror = {"(": ")", "[": "]", ")": "(", "]": "["}
        return f"{mirror[rb]}-({hi}), -({lo}){mirror[lb]} \\cup {lb}{lo}, {hi}{rb}"
    return f"{lb}{lo}, {hi}{rb}"


def _set(norm: str, items: list[ParsedAnswer], brackets: str = "") -> ParsedAnswer:
    flat: list[ParsedAnswer] = []
    for it in items:  # "21, 16 or 11": one list of three; "\\{1 \\pm \\sqrt 2\\}": a set of two
        inline = it.kind == "set" and (it.brackets == "" and not brackets
                                       or it.brackets == "pm" and brackets in ("", "\\{\\}"))
        flat.extend(it.items if inline else (it,))
    return ParsedAnswer("set", _text_key(norm), brackets=brackets, items=tuple(flat[:_MAX_ITEMS]))


def parse_answer(s: str, _depth: int = 0) -> ParsedAnswer:
    """Read a (raw or normalized) answer string."""
    norm = normalize_answer(s, strip_label=False)
    if _depth > _MAX_ANSWER_NESTING or not norm or len(norm) > MAX_ANSWER_CHARS:
        return ParsedAnswer("text", _text_key(norm))
    sub = _depth + 1
    wrapped = _WRAPPED_MATRIX.match(norm)
    if wrapped is not None:
        norm = wrapped.group(1)
    mat = _MATRIX.match(norm)
    if mat is not None:
        return _parse_matrix(norm, mat, sub)
    if norm.startswith("{") and norm.endswith("}") and min(_depths(norm)[1:-1]) >= 1:
        norm = norm[1:-1].strip()  # LaTeX grouping: "{1, 3}"
    if norm.startswith("\\{") and norm.endswith("\\}") and min(_depths(norm)[2:-2] or [1]) >= 1:
        one = norm[2:-2].strip()
        if one and len(_split_top(one, _COMMA)) == 1:  # a set of one: "\\{3\\}", "\\{1 \\pm \\sqrt 2\\}"
            return _set(norm, [parse_answer(one, sub)], "\\{\\}")
    found = _parse_alternatives(norm, sub)
    if found is not None:
        return found
    value = _strip_label(norm)
    if value is not None:
        inner = parse_answer(value, sub)
        whole = _parse_scalar(norm) if inner.kind == "expr" else None
        equation = whole.expr if whole is not None and whole.kind == "equation" else None
        if equation is None and whole is not None and inner.expr is not None:
            label = _parse_scalar(_split_top(norm, _LABEL_SEP)[0])
            if label.kind == "expr" and isinstance(label.expr, Var):
                equation = BinOp("-", label.expr, inner.expr)  # "y = 1 - x"
        return dataclasses.replace(inner, labelled=True, equation=equation)
    ray = _ray(norm)
    if ray is not None:
        return parse_answer(ray, sub)
    seq = _sequence(norm)
    if seq is not None:
        return _parse_sequence(norm, seq, sub)
    return _parse_plain(norm, sub)


_GREATER = r">=|\\geq?\b|\\geqslant\b|≥|>"
_LESSER = r"<=|\\leq?\b|\\leqslant\b|≤|<"
_ORDER = re.compile(rf"{_GREATER}|{_LESSER}")
_ONE_LETTER = re.compile(r"[A-Za-z]")


def _ray(norm: str) -> str | None:
    """``x > 1`` / ``1 < x`` -> ``(1, \\infty)``; ``x \\le 1`` -> ``(-\\infty, 1]``: one variable against a
    constant is the interval of its solutions (None otherwise). Linear: one scan for the operators."""
    ops = list(_ORDER.finditer(norm))
    if len(ops) != 1 or "=" in norm.replace("<=", "").replace(">=", ""):
        return None
    m = ops[0]
    left, right, op = norm[: m.start()].strip(), norm[m.end() :].strip(), m.group()
    if _ONE_LETTER.fullmatch(left):
        c, reverse = right, False
    elif _ONE_LETTER.fullmatch(right):
        c, reverse = left, True  # "1 < x" is "x > 1"
    else:
        return None
    if not c or re.search(r"[A-Za-z]", re.sub(r"\\(?:frac|sqrt|pi|infty)\b", "", c)):
        return None  # not a constant
    greater = bool(re.fullmatch(_GREATER, op)) != reverse
    strict = op in ("<", ">")
    if greater:
        return ("(" if strict else "[") + c + ", \\infty)"
    return "(-\\infty, " + c + (")" if strict else "]")


def _intersection(pieces: list[ParsedAnswer]) -> list[ParsedAnswer] | None:
    """The common elements of finite sets of numbers (``\\{1,2\\} \\cap \\{2,3\\}``: ``2``), compared by exact
    value; None when a piece is not such a set."""
    if not all(p.kind == "set" and p.brackets == "\\{\\}" and all(i.value is not None for i in p.items) for p in pieces):
        return None
    common = {i.value for i in pieces[0].items}
    for p in pieces[1:]:
        common &= {i.value for i in p.items}
    return [i for i in pieces[0].items if i.value in common]


def _parse_matrix(norm: str, mat: re.Match[str], sub: int) -> ParsedAnswer:
    rows = [r for r in re.split(r"\\\\", mat.group(2)) if r.strip()]
    return ParsedAnswer("seq", _text_key(norm), brackets="matrix", items=tuple(
        ParsedAnswer("seq", "", brackets="row", items=tuple(parse_answer(c, sub) for c in r.split("&")[:_MAX_ITEMS]))
        for r in rows[:_MAX_ITEMS]))


def _parse_alternatives(norm: str, sub: int) -> ParsedAnswer | None:
    """Several values in one answer: joined (``;``, ``and``, ``or``), a union, ``a \\pm b``, or an
    interval written as ``a < x < b``; None when it is none of these."""
    parts = _split_top(norm, _JOIN)
    if len(parts) > 1 and all(parts):
        # "p=5,q=2; p=7,q=2", "x=1, y=2 and x=3, y=4": each part one solution
        return _set(norm, [_as_tuple(parse_answer(p, sub)) for p in parts])
    union = _split_top(norm, _CUP)
    if len(union) > 1 and all(union):
        pieces = [parse_answer(p, sub) for p in union]
        if all(p.kind == "set" and p.brackets == "\\{\\}" for p in pieces):  # finite sets: their union
            return _set(norm, [i for p in pieces for i in p.items], "\\{\\}")
        return _set(norm, pieces, "cup")
    cap = _split_top(norm, _CAP)
    if len(cap) > 1 and all(cap):
        meet = _intersection([parse_answer(p, sub) for p in cap])
        if meet is not None:
            return _set(norm, meet, "\\{\\}")
    pm = _split_top(norm, _PM)
    if len(pm) == 2 and pm[1]:
        a, b = pm
        options = [f"-({b})", f"{b}"] if not a else [f"{a}+({b})", f"{a}-({b})"]
        return _set(norm, [parse_answer(o, sub) for o in options], "pm")
    chain = _CHAIN.match(norm)
    if chain is not None:
        interval = _interval_text(chain)
        if interval is not None:
            return parse_answer(interval, sub)
    return None


def _parse_sequence(norm: str, seq: tuple[str, str], sub: int) -> ParsedAnswer:
    brackets, inner_s = seq
    items = _split_top(inner_s, re.compile(r",|;")) if brackets not in ("\\{\\}",) else _split_top(inner_s, re.compile(","))
    parsed = [parse_answer(_strip_thousands(p), sub) for p in items[:_MAX_ITEMS]]
    if brackets == "\\{\\}":
        return _set(norm, parsed, "\\{\\}")
    return ParsedAnswer("seq", _text_key(norm), brackets=brackets, items=tuple(parsed))


def _parse_plain(norm: str, sub: int) -> ParsedAnswer:
    """A list without brackets, or one value (with the last side of a written-out computation as its tail)."""
    stripped = _strip_thousands(norm) if not re.search(r"[(\[{]", norm) else norm
    elems = _top_level_split(stripped)
    if elems is not None and len(elems) > 1 and all(elems):
        return _set(norm, [parse_answer(p, sub) for p in elems])
    result = _parse_scalar(stripped)
    if result.kind == "text" and " " in stripped and IMPLICIT_PRODUCT.match(stripped):
        product = _parse_scalar(stripped.replace(" ", "*"))  # "2 a b", "x y": a product by juxtaposition
        if product.kind == "expr":
            result = dataclasses.replace(product, norm=result.norm)
    if "=" in stripped:
        sides = _split_top(stripped, _EQ)
        if len(sides) > 1 and sides[-1] and len(set(sides)) > 1:  # "5 = 5" states nothing: no value
            tail = parse_answer(sides[-1], sub)
            if tail.kind != "expr" or (tail.expr is not None and not variables(tail.expr)):
                result = dataclasses.replace(result, tail=tail)
    return result


def _as_tuple(p: ParsedAnswer) -> ParsedAnswer:
    """A list whose every element is labelled (``p=5, q=2``) is one tuple ``(5, 2)``."""
    if p.kind == "set" and p.brackets == "" and p.items and all(i.labelled for i in p.items):
        return ParsedAnswer("seq", p.norm, brackets="()", items=p.items)
    return p
