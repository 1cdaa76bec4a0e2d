"""LaTeX written without math delimiters, inside plain text.

Solutions exported without their ``$ $`` (and many written straight into a text box) carry
formulas such as ``S = 50 \\cdot 101 = 5050`` or ``a_{10} = 2^{10} - 1 = 1023`` in the middle of a
sentence. Read as plain text, the backslash command or the brace group is a break: the formula
falls apart into pieces (``S = 50``, a "value" of S) that say something the author never wrote.

``bare_latex_spans`` finds, in a plain stretch of text, the formulas that are LaTeX: a maximal
stretch of math characters (numerals, single letters, operators, brackets, LaTeX commands with
their brace groups) that holds a LaTeX command or a ``^{``/``_{`` group. Such a stretch is then
read exactly as it would be between ``$ $``. Prose words end a stretch, and so do sentence
punctuation, a line break and ``$``/``%`` (currency and percent keep their plain-text reading).
Everything is one left-to-right pass over the text (linear time).
"""

from __future__ import annotations

import re

from faithsieve.mathtext.lexer import MAX_BRACE_SCAN, brace_group_end

_PIECE = re.compile(
    r"(?P<cmd>\\[A-Za-z]+)"
    r"|(?P<esc>\\.)"
    r"|(?P<word>[A-Za-z]+)"
    r"|(?P<num>\d+(?:\.\d+)?)"
    r"|(?P<ws>[ \t\u00a0]+)"
    r"|(?P<ch>.)",
    re.S,
)
# function names, the operator "mod", and products of letters that are math even when written as a letter run
_MATH_RUNS = {"sin", "cos", "tan", "cot", "sec", "csc", "log", "ln", "exp", "gcd", "lcm", "det", "lim", "max",
              "min", "mod", "abc", "xyz", "pqr"}
# two-letter runs that are English words rather than products of two letters
_PROSE_PAIRS = {"so", "is", "of", "to", "in", "by", "as", "at", "or", "if", "be", "we", "it", "on", "an", "no",
                "up", "do", "go", "me", "my", "he", "us", "am", "ie", "eg"}
# commands whose brace group belongs to them (read, or set aside, by the LaTeX reader)
_GROUP_CMDS = {r"\mathrm", r"\operatorname", r"\mathbb", r"\mathcal", r"\mathbf", r"\frac", r"\dfrac", r"\sqrt",
               r"\binom"}
# commands that end a formula: connectives, spacing and prose. The plain reader already breaks
# there, so a stretch is cut at them rather than read as LaTeX ('8192 = 2^12 \implies n = 13':
# '2^12' means 2^{12} in plain text, but 2^{1}2 in LaTeX)
_BREAK_CMDS = {r"\implies", r"\Rightarrow", r"\Longrightarrow", r"\iff", r"\Leftrightarrow", r"\therefore",
               r"\because", r"\quad", r"\qquad", r"\text", r"\textbf", r"\textit", r"\textrm", r"\mbox",
               r"\emph", r"\newline", r"\item", r"\section", r"\hfill"}
_STOP_CHARS = set("\n\r$%;:?\"“”")
MAX_BARE_SPAN = 2000


def _prose(word: str, prev_char: str) -> bool:
    low = word.lower()
    if len(word) == 1:
        return False
    if low in _MATH_RUNS:
        return False
    if len(word) == 2:
        return low in _PROSE_PAIRS
    # '8abc', '2xy': a letter run glued to a coefficient is a product of letters
    return not (prev_char.isdigit() and len(word) <= 4)


def bare_latex_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The stretches of ``text[start:end]`` (plain text) that are undelimited LaTeX formulas."""
    spans: list[tuple[int, int]] = []
    run_start: int | None = None
    run_end = start
    latex = False
    i = start
    unclosed_until = -1  # a brace group opened before here found no close within the scan bound
    while i < end:
        m = _PIECE.match(text, i, end)
        assert m is not None
        kind, v = m.lastgroup, m.group()
        j = m.end()
        if kind == "cmd":
            j, unclosed_until = _command_end(text, v, j, end, unclosed_until)
            math = v not in _BREAK_CMDS
            latex = latex or math
        else:
            math, opens = _piece_is_math(text, kind, v, i, j, start, end)
            latex = latex or opens
        if math:
            if run_start is None:
                run_start = i
            run_end = j
            if j - run_start <= MAX_BARE_SPAN:
                i = j
                continue
        if run_start is not None and latex:
            _add_span(text, spans, run_start, run_end)
        run_start, latex = None, False
        i = j
    if run_start is not None and latex:
        _add_span(text, spans, run_start, run_end)
    return spans


def _command_end(text: str, v: str, j: int, end: int, unclosed_until: int) -> tuple[int, int]:
    """Where the command ``v`` ending at ``j`` ends with its brace group (for the commands that
    take one), and the new ``unclosed_until``."""
    if j < end and text[j] == "{" and j >= unclosed_until and (v in _GROUP_CMDS or v in _BREAK_CMDS):
        # each failed scan covers the stretch it looked at, so the text is scanned a
        # bounded number of times however many groups are left open (linear time)
        k = brace_group_end(text, j)
        if 0 < k <= end:
            return k, unclosed_until
        return j, j + MAX_BRACE_SCAN
    return j, unclosed_until


def _piece_is_math(text: str, kind: str | None, v: str, i: int, j: int, start: int, end: int) -> tuple[bool, bool]:
    """Whether a word or character piece ``text[i:j]`` belongs to a formula, and whether it marks
    the formula as LaTeX (``^{`` or ``_{``)."""
    if kind == "word":
        return not _prose(v, text[i - 1] if i > start else ""), False
    if kind == "ch":
        if v in _STOP_CHARS or (v == "." and (j >= end or not text[j].isdigit())):
            return False, False
        return True, v in "^_" and j < end and text[j] == "{"
    return True, False


def _add_span(text: str, spans: list[tuple[int, int]], a: int, b: int) -> None:
    """Add the run ``text[a:b]`` to ``spans`` without its edge spaces and punctuation, or a bullet."""
    while a < b and text[a] in " \t\u00a0,.":
        a += 1
    while b > a and text[b - 1] in " \t\u00a0,.":
        b -= 1
    if text[a : a + 2] in ("- ", "* ") and not text[text.rfind("\n", max(0, a - 200), a) + 1 : a].strip():
        a += 2  # a bullet at the start of a line, not a minus sign
    if a < b:
        spans.append((a, b))
