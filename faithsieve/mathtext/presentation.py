"""Presentation read, not trusted: a step's formatting taken off so that the claim it shows is read.

``read_presentation`` runs on every proof that enters the pipeline (``textnorm.clean_proof``, after the
text was split into steps), so ``/localize``, ``score`` and the grader's step check read the same claim a
person sees when the text is rendered. Each rule follows a notation people and models write, and each
keeps what the rendered text shows:

* markdown: strong and emphasis markers (``**x**``, ``__x__``, ``*x*``, ``_x_`` with CommonMark's
  flanking: ``2*3*4`` and ``a_i`` are left alone), heading markers (``#`` to ``######``, except a bare
  GSM8K ``#### 18``), ``*``/``+`` list bullets (as ``-``), inline code and code fences;
* HTML: comments, the formatting tags (``<b>``, ``<strong>``, ``<span ...>``, ...), ``<br>`` (a space),
  ``<sup>``/``<sub>`` (a power, an index) and the named entities of arithmetic (``&times;``, ...);
* LaTeX: font and box commands around content with no letters of its own (``\\mathbf{12}``,
  ``\\text{170}``, ``\\mbox``, ``\\bm``, ...; ``\\text{ m}`` stays a unit), ``\\boxed{...}`` around a
  relation, colour (``\\color{c}``, ``\\textcolor{c}{x}``), ``\\phantom`` and its kin (invisible: removed
  with their argument), style switches (``\\displaystyle``), ``%`` comments that end a line inside a
  display, spacing commands and ``{}`` between two digits (``1\\!70``, ``1\\,000``), an annotated
  relation (``\\overset{!}{=}``, ``\\stackrel{(1)}{=}``; not ``?`` or a definition), ``\\underbrace``
  and ``\\overbrace`` with their labels, ``\\cdotp``;
* confusable letters between digits: Cyrillic ``х`` as the times sign, Cyrillic and Greek ``О``/``о``
  as zero; every other times sign between numbers (``✕``, ``✖``, ``⨉``, ``⨯``, ``∙``, ``∗``, ``\\ast``);
* scientific notation ``1.7e2`` as ``1.7 × 10^2``;
* idioms whose negation word asserts (litotes: "it is not hard to see that A" asserts A, as do "not
  surprisingly", "don't forget", "cannot fail", "no doubt") become their plain assertive form, and a
  doubt withdrawn at once ("Wait, let me double-check: yes, that is right.", "Oops, no, it's fine.")
  is dropped: the claim before it stands.

Every pattern is linear (bounded repeats, no nested quantifiers); brace arguments are matched by a
counting walk bounded in depth and length. Text with none of the markers is returned as it is.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable

__all__ = ["read_presentation"]

_TRIGGER = re.compile(r"\$\$|[*_#`<&\\%✕✖⨉⨯∙∗хХОоΟο]|\d[eE][+-]?\d")
_WORDS = ("not", "n't", "no ", "without", "needless", "wait", "hmm", "oops", "hold on", "let me")
"""Lower-case words that may start an idiom (``_idioms``): a text with none of them skips it."""

_MAX_ARG = 2000
"""The longest brace argument read (longer ones are left as they are)."""


class _Scan:
    """What is left of one text's scanning allowance: brace matching stops (and leaves the rest of the text
    as it is) once it has walked over ``4 × len(text) + 4000`` characters, so nested or unclosed commands
    cannot make the reading quadratic."""

    __slots__ = ("left",)

    def __init__(self, text: str) -> None:
        self.left = 4 * len(text) + 4000


def _arg_end(s: str, i: int, scan: _Scan) -> int:
    """The index just past the brace group opening at ``s[i] == "{"``; -1 when it does not close within
    ``_MAX_ARG`` characters or the text's allowance (``_Scan``) is spent."""
    depth = 0
    stop = min(len(s), i + _MAX_ARG, i + max(0, scan.left))
    for j in range(i, stop):
        c = s[j]
        if c == "{" and (j == 0 or s[j - 1] != "\\"):
            depth += 1
        elif c == "}" and (j == 0 or s[j - 1] != "\\"):
            depth -= 1
            if depth == 0:
                scan.left -= j + 1 - i
                return j + 1
    scan.left -= stop - i
    return -1


def _commands(s: str, pattern: re.Pattern[str], rewrite: Callable[[re.Match[str], list[str], int], str | None],
              scan: _Scan) -> str:
    """Rewrite each command ``pattern`` finds (the match ends at its first ``{``): ``rewrite(match, args,
    end)`` gets the command's brace arguments (as many as follow it directly, at most 2) and returns the
    replacement of the command and its arguments, or None to keep them."""
    out: list[str] = []
    pos = 0
    for m in pattern.finditer(s):
        if scan.left <= 0:
            break
        if m.start() < pos:
            continue
        args: list[str] = []
        end = m.end() - 1
        while len(args) < 2 and end < len(s) and s[end] == "{":
            close = _arg_end(s, end, scan)
            if close < 0:
                break
            args.append(s[end + 1 : close - 1])
            end = close
            while end < len(s) and s[end] == " " and len(args) < 2 and s[end + 1 : end + 2] == "{":
                end += 1
        if not args:
            continue
        new = rewrite(m, args, end)
        if new is None:
            continue
        if not new and m.start() > 0 and s[m.start() - 1] == "$" and s[end : end + 1] == "$":
            new = "{}"  # never join two "$" into "$$"
        out.append(s[pos : m.start()])
        out.append(new)
        pos = end
    if not out:
        return s
    out.append(s[pos:])
    return "".join(out)


# ---------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------

_HTML_COMMENT = re.compile(r"<!--[^\n]{0,400}?-->|<!--[\s\S]{0,600}?-->")
_HTML_TAG = re.compile(r"</?(?:b|strong|i|em|u|s|mark|span|font|small|big|code|tt|kbd|var|p|div|center)(?:\s[^<>\n]{0,200})?>",
                       re.IGNORECASE)
_HTML_BR = re.compile(r"<br\s{0,3}/?>|<hr\s{0,3}/?>", re.IGNORECASE)
_HTML_SUP = re.compile(r"<(sup|sub)>([^<>\n]{1,40})</\1>", re.IGNORECASE)
_ENTITIES = {"&times;": "×", "&middot;": "·", "&divide;": "÷", "&minus;": "-", "&plus;": "+", "&equals;": "=",
             "&lt;": "<", "&gt;": ">", "&le;": "≤", "&ge;": "≥", "&ne;": "≠", "&nbsp;": " ", "&#215;": "×",
             "&#x00D7;": "×", "&#xd7;": "×", "&asymp;": "≈", "&plusmn;": "±", "&sup2;": "²", "&sup3;": "³"}
_ENTITY = re.compile("|".join(re.escape(k) for k in _ENTITIES), re.IGNORECASE)


def _html(s: str) -> str:
    if "<" in s:
        s = _HTML_COMMENT.sub("", s)
        s = _HTML_SUP.sub(lambda m: ("^{" if m.group(1).lower() == "sup" else "_{") + m.group(2) + "}", s)
        s = _HTML_BR.sub(" ", s)
        s = _HTML_TAG.sub("", s)
    if "&" in s:
        s = _ENTITY.sub(lambda m: _ENTITIES.get(m.group().lower(), _ENTITIES.get(m.group(), m.group())), s)
    return s


# ---------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------

_STRONG = re.compile(r"\*\*\*([^*\n]{1,400}?)\*\*\*|\*\*([^\n]{1,400}?)\*\*|(?<![\w\\])__([^_\n]{1,400}?)__(?!\w)")
_EMPH_STAR = re.compile(r"(?<![\w*\\])\*(?=[^\s*])([^*\n]{1,400}?)(?<=[^\s*\\])\*(?![\w*])")
_EMPH_UNDER = re.compile(r"(?<![\w\\{}^_$])_(?=[^\s_{])([^_\n$]{1,400}?)(?<=[^\s_\\])_(?![\w_{])")
_HEADING = re.compile(r"(?m)^[ \t]{0,3}(#{1,6})[ \t]+(?=(.*))")
_BULLET = re.compile(r"(?m)^([ \t]{0,8})[*+][ \t]+(?=\S)")
_FENCE = re.compile(r"(?m)^[ \t]{0,3}(?:```|~~~)[\w+-]{0,20}[ \t]*$")
_CODE = re.compile(r"(?<!`)`([^`\n]{1,400})`(?!`)")
_BARE_ANSWER = re.compile(r"[^=<>≤≥≠\n]{0,80}$")
_ANSWER_WORDS = re.compile(r"[A-Za-z]{2,}")


def _heading(m: re.Match[str]) -> str:
    rest = m.group(2)
    if len(m.group(1)) == 4 and _BARE_ANSWER.match(rest) and not _ANSWER_WORDS.search(rest):
        return m.group()  # GSM8K's "#### 18": the answer marker, not a heading
    return ""


def _outside_displays(s: str, pattern: re.Pattern[str], repl: str) -> str:
    """``pattern.sub(repl, s)`` except inside a display (``_DISPLAY``): a row of an aligned or broken display that
    opens with ``+`` or ``*`` (``s = 1 + 2 \\\\ + 3 + 4``) continues the formula above it; it is no list item."""
    spans = [m.span() for m in _DISPLAY.finditer(s)] if ("\\[" in s or "$$" in s or "\\begin" in s) else []
    if not spans:
        return pattern.sub(repl, s)
    starts = [a for a, _ in spans]

    def keep_in_display(m: re.Match[str]) -> str:
        i = bisect_right(starts, m.start()) - 1
        return m.group() if i >= 0 and m.start() < spans[i][1] else m.expand(repl)

    return pattern.sub(keep_in_display, s)


def _markdown(s: str) -> str:
    if "**" in s or "__" in s:
        s = _STRONG.sub(lambda m: m.group(1) or m.group(2) or m.group(3) or "", s)
    if "*" in s or "+" in s:
        s = _outside_displays(s, _BULLET, r"\1- ")
    if "*" in s:
        s = _EMPH_STAR.sub(r"\1", s)
    if "_" in s:
        s = _EMPH_UNDER.sub(r"\1", s)
    if "#" in s:
        s = _HEADING.sub(_heading, s)
    if "`" in s or "~~~" in s:
        s = _FENCE.sub("", s)
        s = _CODE.sub(r"\1", s)
    return s


# ---------------------------------------------------------------------------
# LaTeX
# ---------------------------------------------------------------------------

_FONT = re.compile(r"\\(?:mathbf|mathrm|mathit|mathsf|mathtt|mathnormal|boldsymbol|bm|pmb|text|textrm|textbf|textit|"
                   r"textsf|texttt|textnormal|mbox|hbox|emph|operatorname)\s{0,3}\{")
_COMMAND = re.compile(r"\\[A-Za-z]+")
_LETTER = re.compile(r"[^\W\d_]")
_BOXED = re.compile(r"\\(?:boxed|fbox)\s{0,3}\{")
_RELATION = re.compile(r"=|<|>|≤|≥|≠|\\(?:le|ge|leq|geq|neq|ne|lt|gt)(?![A-Za-z])")
_COLOR = re.compile(r"\\(?:color|textcolor|colorbox)\s{0,3}\{")
_PHANTOM = re.compile(r"\\(?:phantom|hphantom|vphantom)\s{0,3}\{")
_STYLE = re.compile(r"\\(?:displaystyle|textstyle|scriptstyle|scriptscriptstyle)(?![A-Za-z])\s{0,3}")
_ANNOTATED = re.compile(r"\\(?:overset|stackrel)\s{0,3}\{")
_BRACE = re.compile(r"\\(?:underbrace|overbrace)\s{0,3}\{")
_ANNOTATED_REL = re.compile(r"\s{0,3}(?:=|<|>|\\le|\\ge|\\leq|\\geq|\\neq|\\lt|\\gt)\s{0,3}")
_NOT_ASSERTED = re.compile(r"\?|def|:|\\triangle|\\Delta|\\text\s{0,3}\{\s{0,3}set")
_LABEL = re.compile(r"\s{0,3}[_^]\s{0,3}")
_DIGIT_GAP = re.compile(r"(?<=\d)(?:\\[!,;: ]|\\(?:thin|neg|med|thick)\w{0,12}space(?![A-Za-z])|\{\}|\s(?=\\[!,]))+(?=\d)")
_GAPS = ("\\!", "\\,", "\\;", "\\:", "\\ ", "{}", "space")
_DISPLAY = re.compile(r"\$\$[\s\S]{1,1500}?\$\$|\\\[[\s\S]{1,1500}?\\\]|\\begin\{(align|equation|gather|multline|eqnarray)(\*?)\}"
                      r"[\s\S]{1,1500}?\\end\{\1\2\}")
_COMMENT = re.compile(r"(?<!\\)%[^\n]{0,200}?[A-Za-z][^\n]{0,200}(?=\n)")
_DISPLAY_RELATION_BREAK = re.compile(r"(?<!\\\\)[ \t]{0,20}\n[ \t]{0,20}(?=(?:=|<|>|≤|≥|≠|\\(?:le|ge|leq|geq|neq|approx|lt|gt)(?![A-Za-z]))"
                                     r"(?!\n))|(?<==)[ \t]{0,20}\n[ \t]{0,20}(?=[^\s$\\])")
_ESCAPED_DOLLAR = re.compile(r"\\\$(?=\d)")
_CDOTP = re.compile(r"\\cdotp(?![A-Za-z])")


def _font(m: re.Match[str], args: list[str], end: int) -> str | None:
    body = args[0]
    if _LETTER.search(_COMMAND.sub("", body)) is not None:
        return None  # words or a unit: the reader reads those itself
    return body if len(args) == 1 else None


def _boxed(m: re.Match[str], args: list[str], end: int) -> str | None:
    return args[0] if len(args) == 1 and _RELATION.search(args[0]) else None


def _color(m: re.Match[str], args: list[str], end: int) -> str | None:
    if m.group().startswith("\\color") and len(args) >= 1:
        return "".join("{" + a + "}" for a in args[1:])  # a switch: the colour goes, the content stays
    return "{" + args[1] + "}" if len(args) == 2 else None


def _annotated(m: re.Match[str], args: list[str], end: int) -> str | None:
    if len(args) != 2 or _NOT_ASSERTED.search(args[0]) or not _ANNOTATED_REL.fullmatch(args[1]):
        return None
    return " " + args[1].strip() + " "


def _display(m: re.Match[str]) -> str:
    """A display: its ``%`` comments go; a line break next to a relation is a space (a display renders its
    lines as one unless ``\\\\`` breaks them)."""
    d = _COMMENT.sub("", m.group()) if "%" in m.group() else m.group()
    return _DISPLAY_RELATION_BREAK.sub(" ", d) if "\n" in d else d


def _latex(s: str) -> str:
    if "\\" not in s and "$$" not in s:
        return s
    if "$$" in s or "\\[" in s or "\\begin" in s:
        s = _DISPLAY.sub(_display, s)
    if "\\" not in s:
        return s
    if "\\$" in s:
        s = _ESCAPED_DOLLAR.sub("$", s)
    scan = _Scan(s)
    if "phantom" in s:
        s = _commands(s, _PHANTOM, lambda m, a, e: "", scan)
    if any(g in s for g in _GAPS):
        s = _DIGIT_GAP.sub("", s)
    if "style" in s:
        s = _STYLE.sub("", s)
    if "cdotp" in s:
        s = _CDOTP.sub(r"\\cdot", s)
    if "color" in s:
        s = _commands(s, _COLOR, _color, scan)
    if "overset" in s or "stackrel" in s:
        s = _commands(s, _ANNOTATED, _annotated, scan)
    if "brace" in s:
        s = _braces(s, scan)
    if "box" in s:
        s = _commands(s, _BOXED, _boxed, scan)
    for _ in range(3):  # nested fonts (\mathbf{\text{12}})
        new = _commands(s, _FONT, _font, scan)
        if new == s:
            break
        s = new
    return s


def _braces(s: str, scan: _Scan) -> str:
    r"""``\underbrace{X}_{label}`` and ``\overbrace{X}^{label}`` read as ``X``."""
    out: list[str] = []
    pos = 0
    for m in _BRACE.finditer(s):
        if scan.left <= 0:
            break
        if m.start() < pos:
            continue
        close = _arg_end(s, m.end() - 1, scan)
        if close < 0:
            continue
        body = s[m.end() : close - 1]
        end = close
        lab = _LABEL.match(s, end)
        if lab is not None:
            end = lab.end()
            if end < len(s) and s[end] == "{":
                end = _arg_end(s, end, scan)
                if end < 0:
                    continue
            elif end < len(s):
                cmd = _COMMAND.match(s, end)
                end = cmd.end() if cmd is not None else end + 1
        out.append(s[pos : m.start()])
        out.append("{" + body + "}")
        pos = end
    if not out:
        return s
    out.append(s[pos:])
    return "".join(out)


# ---------------------------------------------------------------------------
# Confusable letters and signs
# ---------------------------------------------------------------------------

_CYR_TIMES = re.compile(r"(?<=[\d)])([ \t]{0,3})[хХ]([ \t]{0,3})(?=[\d(])")
_ZERO_AFTER = re.compile(r"(?<=\d)([ОоΟο]{1,20})(?![^\W\d_])")
_ZERO_BEFORE = re.compile(r"(?<![^\W\d_])([ОоΟο]{1,20})(?=\d)")
_TIMES = re.compile(r"(?<=[\d)}])([ \t]{0,3})(?:[✕✖⨉⨯∙∗]|\\ast(?![A-Za-z]))([ \t]{0,3})(?=[\d({\\])")
_SCIENTIFIC = re.compile(r"(?<![\w.])(\d{1,20}(?:\.\d{1,20})?)[eE]([+-]?\d{1,3})(?!\w|\.\d)")


_SCIENTIFIC_HINT = re.compile(r"\d[eE][+-]?\d")


def _signs(s: str) -> str:
    if not s.isascii():
        s = _CYR_TIMES.sub(r"\1×\2", s)
        s = _ZERO_AFTER.sub(lambda m: "0" * len(m.group(1)), s)
        s = _ZERO_BEFORE.sub(lambda m: "0" * len(m.group(1)), s)
    if not s.isascii() or "\\ast" in s:
        s = _TIMES.sub(r"\1×\2", s)
    if _SCIENTIFIC_HINT.search(s) is not None:
        s = _SCIENTIFIC.sub(lambda m: f"{m.group(1)} × 10^{{{m.group(2)}}}", s)
    return s


# ---------------------------------------------------------------------------
# Idioms: a negation that asserts, a doubt withdrawn at once
# ---------------------------------------------------------------------------

_LITOTES: list[tuple[tuple[str, ...], re.Pattern[str], str]] = [
    (("hard", "difficult"), re.compile(r"(?i)\bit\s{1,3}is\s{1,3}not\s{1,3}(?:hard|difficult)\s{1,3}to\b"), "it is easy to"),
    (("hard", "difficult"), re.compile(r"(?i)\bit\s{1,3}isn'?t\s{1,3}(?:hard|difficult)\s{1,3}to\b"), "it is easy to"),
    (("surprisingly",), re.compile(r"(?i)\bnot\s{1,3}surprisingly\b"), "unsurprisingly"),
    (("forget",), re.compile(r"(?i)\b(?:don'?t|do\s{1,3}not)\s{1,3}forget\b"), "remember"),
    (("forget",), re.compile(r"(?i)\b(?:and\s{1,3})?not\s{1,3}to\s{1,3}forget\b"), "remembering"),
    (("fail",), re.compile(r"(?i)\b(?:cannot|can'?t|can\s{1,3}not)\s{1,3}fail\b"), "always holds"),
    (("deny",), re.compile(r"(?i)\b(?:cannot|can'?t|can\s{1,3}not)\s{1,3}deny\b"), "accept"),
    (("doubt",), re.compile(r"(?i)\bno\s{1,3}doubt\b,?"), "surely"),
    (("doubt",), re.compile(r"(?i)\bwithout\s{1,3}(?:a\s{1,3})?doubt\b,?"), "surely"),
    (("needless",), re.compile(r"(?i)\bneedless\s{1,3}to\s{1,3}say\b"), "clearly"),
    (("accident", "coincidence", "surprise"), re.compile(r"(?i)\bit\s{1,3}is\s{1,3}no\s{1,3}(?:accident|coincidence|surprise)\b"),
     "it is expected"),
    (("only",), re.compile(r"(?i)\bnot\s{1,3}only\s{1,3}(?:that|this)\b"), "moreover"),
]
"""Each idiom: words it needs (lower case; the pattern runs only when one is in the text), the pattern,
its plain assertive form."""
_CONFIRMS = ("fine", "hold", "right", "correct", "yes", "checks out")
_WITHDRAWN = re.compile(
    r"(?i)(?<![\w-])(?:wait|hmm+|oops|hold\s{1,3}on|let\s{1,3}me\s{1,3}(?:re)?(?:check|consider|verify|double-check|think))"
    r"(?:(?![\d$=\\]|\b(?:not|wrong|incorrect|mistake|error|actually|but|instead|should)\b)[^.\n]){0,60}"
    r"[.:,!…]{0,3}(?:\s{0,3}\.{2,3})?\s{0,3}"
    r"(?:(?:no|nope|yes|yeah|ok|okay)\s{0,2}[,.!]?\s{0,3}){0,2}"
    r"(?:it'?s\s{1,3}fine|it\s{1,3}(?:holds|is\s{1,3}fine|is\s{1,3}right|is\s{1,3}correct|checks\s{1,3}out)|"
    r"that'?s\s{1,3}(?:right|correct|fine)|that\s{1,3}is\s{1,3}(?:right|correct|fine)|correct|right|fine|yes)"
    r"\s{0,3}[.!]"
)


def _idioms(s: str) -> str:
    low = s.lower()
    for words, pattern, plain in _LITOTES:
        if any(w in low for w in words):
            s = pattern.sub(lambda m, p=plain: p[0].upper() + p[1:] if m.group()[0].isupper() else p, s)  # type: ignore[misc]
    if any(w in low for w in ("wait", "hmm", "oops", "hold on", "let me")) and any(w in low for w in _CONFIRMS):
        s = _WITHDRAWN.sub("", s)
    return s


def read_presentation(text: str) -> str:
    """``text`` with its presentation read (see the module docstring). Idempotent on what it produces."""
    marked = _TRIGGER.search(text) is not None
    low = text.lower()
    worded = any(w in low for w in _WORDS)
    if not (marked or worded):
        return text
    s = text
    if marked:
        s = _html(s)
        s = _markdown(s)
        s = _latex(s)
        s = _signs(s)
    return _idioms(s) if worded else s
