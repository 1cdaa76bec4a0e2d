"""An answer's canonical surface form (``normalize_answer``): math delimiters, ``\\text{}`` units, spacing
commands, currency and degree signs, LaTeX thousands separators, over-escaped backslashes, ``\\sec``-style
functions rewritten through ``\\cos``/``\\sin``/``\\tan``, trailing unit words."""

from __future__ import annotations

import re

from faithsieve.grading.stated_answer import MAX_ANSWER_CHARS
from faithsieve.mathtext.cost import GRADER
from faithsieve.mathtext.lexer import brace_group_end

LIMITS = GRADER.limits
"""Evaluation guards for answers (the cost model's grader profile): tighter than the pipeline's, answers are short."""

# ---------------------------------------------------------------------------
# Normalization
# ---------------------------------------------------------------------------

_TEXT_CMD = re.compile(r"\\(?:text|textbf|textit|textrm|mathrm|mathbf|mbox|operatorname)\s*\{")
_WRAPPERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
_SPACING = re.compile(r"\\[,;:! ]|\\q?quad|\\displaystyle\b|\\left\b|\\right\b|\\big[lr]?\b|\\Big[lr]?\b")
_DEGREE = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree\b")
_THOUSANDS = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d,])(?:\.\d+)?")
_UNIT_TAIL = re.compile(
    r"^(?P<val>[-+−]?\s*(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:\s*/\s*\d+)?\s*%?)\s*"
    r"(?P<unit>(?:[A-Za-z][A-Za-z'.]*\.?(?:\^\{?\d\}?)?)(?:[\s/-]+[A-Za-z][A-Za-z'.]*(?:\^\{?\d\}?)?){0,5})\s*\.?$"
)
_WORDS_TAIL = re.compile(r"^(?P<val>.*?[\d})])\s+(?P<unit>[A-Za-z]{2,}(?:[\s/-]+[A-Za-z]{2,}){0,4})$")
_CURRENCY = re.compile(r"\\\$|\$|€|£|¥|\\euro\b|\bUSD\b|\bdollars?\b(?=\s*$)")
_VAR_PREFIX = re.compile(r"^\s*[A-Za-z](?:_\{?\w{1,3}\}?)?\s*=\s*(?=[^=]+$)")
_OPEN_BOXED = re.compile(r"^\\(?:boxed|fbox)\s*\{")
_MULTI_CHOICE = re.compile(r"^\(?\s*([A-Ea-e])\s*\)?$")
_LATEX_THOUSANDS = re.compile(r"(?<=\d)(?:,\\!\s*|\{,\}|\\,)(?=\d{3}(?!\d))")
_OVER_ESCAPED = re.compile(r"\\\\(?=[A-Za-z])")
_FACTOR = r"(?:[a-z]|\\(?:alpha|beta|gamma|delta|theta|lambda|mu|pi|sigma|tau|phi|omega)(?![A-Za-z]))"
IMPLICIT_PRODUCT = re.compile(rf"^(?:\d+(?:\.\d+)? )?{_FACTOR}(?: {_FACTOR}){{0,7}}$|^\d+(?:\.\d+)?(?: {_FACTOR}){{1,8}}$")
"""Factors side by side with single spaces: lower-case letters (each a variable) or Greek letters, after
at most one number (``2 a b``, ``x y``, ``\\pi r``). A juxtaposition of several capitals or of words is
left alone (choices, names)."""
_TRIG_POWER = re.compile(r"\\(sec|csc|cot|sin|cos|tan)\s*(?:\^\s*\{?\s*(\d)\s*\}?)?\s*(\([^()]{1,60}\)|\{[^{}]{1,60}\}|[A-Za-z0-9])")
_RECIPROCAL_OF = {"sec": "cos", "csc": "sin", "cot": "tan"}
_TRIG_HINT = re.compile(r"\\(?:sec|csc|cot)\b|\\(?:sin|cos|tan)\s*\^")


def _trig_power(m: re.Match[str]) -> str:
    """``\\sec^2(y)`` -> ``(\\frac{1}{\\cos(y)})^{2}``, ``\\tan^2 y`` -> ``(\\tan(y))^{2}`` (the lexer
    knows sin, cos and tan, and reads a power after the function name poorly)."""
    fn, power, arg = m.group(1), m.group(2), m.group(3)
    if arg.startswith("{"):
        arg = "(" + arg[1:-1] + ")"
    elif not arg.startswith("("):
        arg = "(" + arg + ")"
    if fn in _RECIPROCAL_OF:
        out = "(\\frac{1}{\\" + _RECIPROCAL_OF[fn] + arg + "})"
    elif power:
        out = "(\\" + fn + arg + ")"
    else:
        return m.group(0)
    return out + ("^{" + power + "}" if power else "")


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


_APPROX = re.compile(r"\\approx\b|≈|\\simeq\b")
_E_NOTATION = re.compile(r"(?<![\w\\.])(\d+(?:\.\d+)?|\.\d+)[eE]([+-]?\d{1,4})(?![\w.])")
_PLAIN_TRIG = re.compile(r"(?<![\\A-Za-z])(sin|cos|tan|sec|csc|cot|arcsin|arccos|arctan)(?=\s*\()")
_FN_POWER = re.compile(r"\\(sin|cos|tan)\s*(\([^()]{1,80}\))\s*(?=\^)")
_INVERSE_TRIG = re.compile(r"\\(sin|cos|tan)\s*\^\s*\{\s*-\s*1\s*\}|\\(sin|cos|tan)\s*\^\s*-\s*1(?!\d)")
_ARC_ARG = re.compile(r"\\arc(sin|cos|tan)\s*(?:\{([^{}]{1,40})\}|\(([^()]{1,40})\)|(-?[A-Za-z0-9]))")
_ARC_VALUES = {
    # exact values of the inverse trigonometric functions at the arguments answers use
    ("sin", "0"): "0", ("sin", "1"): "\\frac{\\pi}{2}", ("sin", "-1"): "-\\frac{\\pi}{2}",
    ("sin", "1/2"): "\\frac{\\pi}{6}", ("sin", "-1/2"): "-\\frac{\\pi}{6}",
    ("cos", "1"): "0", ("cos", "0"): "\\frac{\\pi}{2}", ("cos", "-1"): "\\pi",
    ("cos", "1/2"): "\\frac{\\pi}{3}", ("cos", "-1/2"): "\\frac{2\\pi}{3}",
    ("tan", "0"): "0", ("tan", "1"): "\\frac{\\pi}{4}", ("tan", "-1"): "-\\frac{\\pi}{4}",
}
_HAS_TRIG = re.compile(r"\\(?:sin|cos|tan|sec|csc|cot)\b")


_EULER_POWER = re.compile(r"(?<![A-Za-z\\])e\s*\^\s*(\{[^{}]{1,80}\}|-?\d+|[A-Za-z])")


def _euler(m: re.Match[str]) -> str:
    """``e^{x}`` -> ``\\exp(x)``: a lone ``e`` raised to a power is Euler's number."""
    arg = m.group(1)
    return "\\exp(" + (arg[1:-1] if arg.startswith("{") else arg) + ")"


def _arc(m: re.Match[str]) -> str:
    """``\\arccos{-1}`` -> ``\\pi`` (a tabled exact value), else ``\\arccos(-1)``: one spelling."""
    fn = m.group(1)
    arg = next(g for g in m.groups()[1:] if g is not None).strip()
    key = re.sub(r"\\[dt]?frac\{(-?\d)\}\{(\d)\}", r"\1/\2", arg).replace(" ", "")
    return _ARC_VALUES.get((fn, key), f"\\arc{fn}({arg})")


def _notation(s: str) -> str:
    """Notations read as what they mean before the reader sees them: E-notation (``2.5E2`` ->
    ``(2.5*10^{2})``), function names written without a backslash (``sec(4z)``), a power after a
    function's parenthesized argument (``\\cos(x)^2`` is ``(\\cos(x))^2``), inverse trigonometric
    notations (``\\sin^{-1} a`` = ``\\arcsin(a)``, ``\\arccos{-1}`` = ``\\pi``), a trailing
    ``\\approx 0.577`` (the exact value before it is the answer), a lone ``e`` raised to a power
    (``e^{x}`` = ``\\exp(x)``)."""
    parts = _APPROX.split(s, maxsplit=1)
    if len(parts) == 2 and parts[0].strip():
        s = parts[0].strip()
    if "e" in s or "E" in s:
        s = _E_NOTATION.sub(r"(\1*10^{\2})", s)
    s = _PLAIN_TRIG.sub(r"\\\1", s)
    if "e" in s and "^" in s:
        s = _EULER_POWER.sub(_euler, s)
    if "^" in s and "-" in s:
        s = _INVERSE_TRIG.sub(lambda m: "\\arc" + (m.group(1) or m.group(2)), s)
    if "\\arc" in s:
        s = _ARC_ARG.sub(_arc, s)
    if "^" in s:
        s = _FN_POWER.sub(lambda m: "(\\" + m.group(1) + m.group(2) + ")", s)
    return s


def normalize_answer(s: str, strip_label: bool = True) -> str:
    """Canonical surface form of an answer (used before parsing and for string fallback). With
    ``strip_label``, a one-letter label is removed (``x = 18`` -> ``18``); ``parse_answer`` reads labels itself."""
    s = s.strip()
    if len(s) > MAX_ANSWER_CHARS * 4:
        s = s[: MAX_ANSWER_CHARS * 4]
    s = s.replace("**", "").replace("`", "").strip()
    if "&" not in s:  # "\\frac" from doubly escaped JSON; a matrix row break "\\" stays
        s = _OVER_ESCAPED.sub(r"\\", s)
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
    if _OPEN_BOXED.match(s) and brace_group_end(s, s.index("{")) < 0:
        s = s[s.index("{") + 1 :]  # a box the model never closed
    s = _LATEX_THOUSANDS.sub("", s)  # "11,\\! 111,\\! 100", "14{,}916"
    s = re.sub(r"\\[dtc]frac\b", r"\\frac", s)
    s = _notation(s)
    if _TRIG_HINT.search(s):
        s = _TRIG_POWER.sub(_trig_power, s)
    s = re.sub(r"\\[dt]binom\b", r"\\binom", s)
    s = _SPACING.sub(" ", s)
    # a degree sign on a bare value is dropped (90° = 90); inside trigonometry the reader converts it
    s = _DEGREE.sub(lambda _m: "^{\\circ}", s) if _HAS_TRIG.search(s) else _DEGREE.sub("", s)
    s = _CURRENCY.sub("", s)
    s = re.sub(r"\\(?=\d)", "", s)  # "\\15" (a broken "\\$15")
    s = s.replace("\\%", "%").replace("−", "-").replace("±", "\\pm ").replace("\\cdot", "*").replace("\\times", "*")
    s = s.replace("{,}", ",")
    if strip_label:
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
