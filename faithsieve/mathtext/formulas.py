"""Find the formulas a step writes, in plain text and LaTeX, and parse them.

Pipeline (all linear in the input size):

1. ``find_segments`` splits the text into plain and LaTeX segments
   (``\\( \\)``, ``\\[ \\]``, ``$$ $$``, ``$ $``; a ``$`` before a number is a currency
   sign unless it clearly opens inline math).
2. Each segment is tokenized; formulas are maximal runs of math tokens between breaks.
3. Each run with at least one relation is parsed into a ``Chain``.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field, replace

from faithsieve.core.errors import ParseError
from faithsieve.mathtext.ast import Chain, Expr, Neg, Num, Var, variables
from faithsieve.mathtext.barelatex import bare_latex_spans
from faithsieve.mathtext.lexer import (
    BAR,
    BREAK,
    CONST,
    FUNC,
    LB,
    LP,
    LSET,
    NUM,
    OP,
    RB,
    REL,
    RP,
    RSET,
    UNIT,
    VAR,
    Token,
    plain_may_relate,
    tokenize_latex,
    tokenize_plain,
)
from faithsieve.mathtext.parser import parse_tokens

MAX_SEGMENT_SCAN = 4000
MAX_FORMULAS_PER_STEP = 200

_DERIVE_WORDS = re.compile(
    r"\b(so|thus|therefore|hence|then|gives?|giving|get|yields?|implies|means|solving|"
    r"simplif\w*|subtract\w*|divid\w*|multipl\w*|add\w*|rearrang\w*|combin\w*|collect\w*|leads? to|we have)\b|"
    r"\\implies|\\rightarrow|\\longrightarrow|=>|⇒|→|\\therefore|∴"
)
"""Derivation words and arrows, searched in the lowercased lead (so ``\\Rightarrow`` is found as ``\\rightarrow``)."""
_COND_WORDS = re.compile(r"\b(if|suppose|assume|assuming|when|whenever|let's say|case|try|test|check|whether|unless)\b")
_APPROX_CONTEXT = re.compile(r"\b(approximately|about|roughly|around|nearly|approx|estimate\w*|round\w*)\b|≈|\\approx")


@dataclass(frozen=True)
class Segment:
    start: int
    end: int
    latex: bool


@dataclass(frozen=True)
class Formula:
    """A parsed chain of relations found in a step, with where it came from."""

    chain: Chain
    start: int
    end: int
    text: str
    latex: bool
    member_spans: tuple[tuple[int, int], ...]
    multiletter: bool = False
    """Contains letter runs (e.g. units like ``cm`` in LaTeX) read as products."""
    derived: bool = False
    """Text before it (since the previous formula) says it is derived: so, thus, ⇒ ..."""
    conditional: bool = False
    """It sits under 'if'/'suppose'/'case': a hypothesis, not an established fact."""
    approx_context: bool = False
    """The sentence speaks of approximation or rounding."""
    lead: str = field(default="", compare=False)
    sentence_before: str = field(default="", compare=False)
    """The sentence before the formula, across earlier formulas in it (at most 240 characters):
    what a phrase such as "In Z_5," at the start of the sentence scopes over."""
    name: str | None = None
    """For ``Total cost = 3 × 4``: the quantity named in words before the '=' (normalised)."""
    aligned: Chain | None = field(default=None, compare=False)
    """For a row of an aligned chain (``a &= b \\\\ &= c``) that continues the row before it: the whole
    chain from the first row to this one (``chain`` holds this row's links alone)."""
    opening: str = field(default="", compare=False)
    """For such a row: the sentence that introduces the first row (``lead_sentence`` of that row; the
    row's own lead is the layout between the rows)."""

    @property
    def lead_sentence(self) -> str:
        """The part of ``lead`` (text since the previous formula) in the formula's own sentence. A display
        set on its own line ("we factor the numerator:\n\\[ ... \\]") belongs to the sentence that
        introduces it: a line break followed by nothing but a display's opening is no sentence break
        when the line before it ends without a sentence's full stop."""
        return own_sentence(self.lead)


CLOSED_PERIODS = (".\\]", ".\\)", ".$$")
"""A sentence's period written inside the math that ends it (``\\[ x = 5.\\]``): a sentence break
after the closing delimiter."""


_BEGIN_TAIL = re.compile(r"\\begin\{[a-z]{1,20}\*?\}(?:\{[^{}]{0,20}\})?\Z")


def _display_layout_start(text: str) -> int:
    """Where the white space and display openings (``\\[``, ``$$``, ``\\begin{align*}``) that end ``text``
    begin (``len(text)`` when none do), read backwards one piece at a time."""
    end = len(text)
    while end > 0:
        if text[end - 1].isspace():
            end -= 1
        elif text.endswith(("\\[", "$$"), 0, end):
            end -= 2
        elif (m := _BEGIN_TAIL.search(text, max(0, end - 50), end)) is not None:
            end = m.start()
        else:
            break
    return end


def own_sentence(text: str) -> str:
    """The sentence ``text`` ends in (``sentence_tail``), where a display set on its own line after a line
    that ends without a full stop belongs to the sentence of that line (``Formula.lead_sentence``)."""
    last_line = text[text.rfind("\n") + 1 :].strip()
    if last_line and not last_line.startswith(("\\[", "$$", "\\begin")):
        return sentence_tail(text)  # the last line holds more than layout: no line break lies in the layout
    cut = _display_layout_start(text)
    head, layout = text[:cut], text[cut:]
    if "\n" not in layout or not head.strip() or head.rstrip()[-1] in ".!?" or head.endswith(CLOSED_PERIODS):
        return sentence_tail(text)
    return sentence_tail(head) + layout


def sentence_start(text: str, lo: int = 0, hi: int | None = None) -> int:
    """Where the sentence holding ``text[hi]`` begins, searching back no further than ``lo``: just
    after the last ". ", line break, or period closing a formula's math (``.\\]``, ``.\\)``, ``.$$``)."""
    hi = len(text) if hi is None else hi
    cut = max(text.rfind(". ", lo, hi), text.rfind("\n", lo, hi)) + 1
    for p in CLOSED_PERIODS:
        k = text.rfind(p, lo, hi)
        if k >= 0:
            cut = max(cut, k + len(p))
    return max(cut, lo)


def sentence_tail(text: str) -> str:
    """What follows the last sentence break (". ", a line break, or a period closing math) in ``text``."""
    return text[sentence_start(text) :]


def _next_unescaped(text: str, needle: str, i: int, limit: int) -> int:
    while True:
        j = text.find(needle, i, limit)
        if j < 0:
            return -1
        if j > 0 and text[j - 1] == "\\":
            i = j + 1
            continue
        return j


_PROSE_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{4,}")
_CMD_OR_TEXT = re.compile(r"\\(?:text|mathrm|mbox|textbf)\{[^{}]{0,200}\}|\\[A-Za-z]+")


def _looks_like_math(content: str) -> bool:
    stripped = _CMD_OR_TEXT.sub(" ", content)
    return _PROSE_WORD.search(stripped) is None


_SEGMENT_MARK = re.compile(r"[\\$]")


def find_segments(text: str) -> list[Segment]:
    """Split text into plain and LaTeX segments, covering it in order."""
    segs: list[Segment] = []
    n = len(text)
    i = 0
    plain_start = 0

    def take(opener: int, start: int, end: int, resume: int) -> int:
        """Close the plain text before ``opener``, add the LaTeX segment [start, end), continue at ``resume``."""
        nonlocal plain_start
        if opener > plain_start:
            segs.append(Segment(plain_start, opener, False))
        segs.append(Segment(start, end, True))
        plain_start = resume
        return resume

    mark = _SEGMENT_MARK.search
    while i < n:
        m = mark(text, i)  # only a backslash or a dollar opens math: the text between is plain
        if m is None:
            break
        i = m.start()
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] in "([":
            close = "\\)" if text[i + 1] == "(" else "\\]"
            j = text.find(close, i + 2, min(n, i + 2 + MAX_SEGMENT_SCAN))
            i = take(i, i + 2, j, j + 2) if j >= 0 else i + 2
            continue
        if c == "\\" and text.startswith("\\begin{", i):
            # display environments (align, equation, ...) are LaTeX up to \end{...}
            k = text.find("}", i)
            if 0 <= k < i + 40:
                endtag = "\\end{" + text[i + 7 : k] + "}"
                j = text.find(endtag, k, min(n, k + MAX_SEGMENT_SCAN))
                if j >= 0:
                    i = take(i, k + 1, j, j + len(endtag))
                    continue
        if c == "\\":
            i += 2
            continue
        if c == "$":
            if text.startswith("$$", i):
                j = text.find("$$", i + 2, min(n, i + 2 + MAX_SEGMENT_SCAN))
                i = take(i, i + 2, j, j + 2) if j >= 0 else i + 2
                continue
            j = _inline_math_end(text, i)
            # otherwise a currency sign: it stays in plain text, where it is transparent
            i = take(i, i + 1, j, j + 1) if j >= 0 else i + 1
            continue
    if n > plain_start:
        segs.append(Segment(plain_start, n, False))
    return _split_bare_latex(text, segs)


_BARE_CUE = re.compile(r"\\[A-Za-z]|[\^_]\{")


def _split_bare_latex(text: str, segs: list[Segment]) -> list[Segment]:
    """Plain segments that hold LaTeX written without delimiters (``S = 50 \\cdot 101``) are cut
    around it, and that stretch is read as LaTeX (``faithsieve.mathtext.barelatex``)."""
    if "\\" not in text and "^{" not in text and "_{" not in text:
        return segs
    out: list[Segment] = []
    for seg in segs:
        if seg.latex or not _BARE_CUE.search(text, seg.start, seg.end):
            out.append(seg)  # no command and no ^{ } / _{ } group: nothing to read as LaTeX here
            continue
        spans = [sp for sp in bare_latex_spans(text, seg.start, seg.end) if _latex_relates(text, *sp)]
        if not spans:
            out.append(seg)
            continue
        at = seg.start
        for a, b in spans:
            if a > at:
                out.append(Segment(at, a, False))
            out.append(Segment(a, b, True))
            at = b
        if seg.end > at:
            out.append(Segment(at, seg.end, False))
    return out


def _latex_relates(text: str, a: int, b: int) -> bool:
    """Whether reading ``text[a:b]`` as LaTeX yields a relation chain; when it does not (a member
    in notation the reader lacks), the plain reading of the stretch is kept."""
    return any(_parse_run(run.toks, run.before, run.after, True, text) is not None
               for run in _runs(tokenize_latex(text[a:b], a)))


def _inline_math_end(text: str, i: int) -> int:
    """For a single ``$`` at ``i``: the index of the ``$`` closing inline math, or -1 when it is a
    currency sign ("$3.5 * 4000 = $14,000", "$5 and $6"; but "$5!$" and "$x = 2$" are math)."""
    n = len(text)
    limit = min(n, i + 1 + 1000)
    para = text.find("\n\n", i, limit)
    if para >= 0:
        limit = para
    j = _next_unescaped(text, "$", i + 1, limit)
    if j <= i + 1:
        return -1
    nxt = text[i + 1]
    content = text[i + 1 : j]
    after = text[j + 1] if j + 1 < n else ""
    digit_open = nxt.isdigit() or (nxt in "-." and i + 2 < n and text[i + 2].isdigit())
    ok = _looks_like_math(content) and not (
        digit_open and (after.isdigit() or "," in content and not re.search(r"\\|=|\^", content)))
    if digit_open and not re.search(r"[=<>\\^{}]|[a-zA-Z]", content):
        ok = " " not in content and "," not in content and not after.isdigit()
    return j if ok else -1

_START_KINDS = (NUM, VAR, CONST, LP, LB, FUNC, BAR, LSET, "LEVAL")
_END_KINDS = (NUM, VAR, CONST, RP, RB, BAR, "PCT", "BANG", "DEG", RSET, "PRIME")


_CLEAN_BREAKS = {".", ",", ";", ":", "?", "!", "\n", "{", "}", '"', "“", "”", "\\\\", r"\implies", r"\Rightarrow", r"\Longrightarrow", r"\iff",
                 r"\Leftrightarrow", r"\therefore", r"\because", r"\quad", r"\qquad", "=>", "\\text"}
_ELLIPSIS = re.compile(r"[ \t]{0,4}(?:\.\.\.|…|\\[lc]?dots|\\ldots|\\cdots|\\overline|\.\\(?:overline|dot|bar)(?![A-Za-z])|\.\d|\\pm|\\mp|\\pmod|\( {0,3}mod\b)")


@dataclass(frozen=True)
class _Run:
    toks: list[Token]
    before: Token | None
    after: Token | None


def _runs(toks: list[Token]) -> list[_Run]:
    runs: list[_Run] = []
    cur: list[Token] = []
    before: Token | None = None
    for t in toks:
        if t.kind == BREAK:
            if cur:
                runs.append(_Run(cur, before, t))
            cur = []
            before = t
        else:
            cur.append(t)
    if cur:
        runs.append(_Run(cur, before, None))
    return runs


def _letter_runs(used: list[Token]) -> bool:
    """The formula holds a run of letters read as a product, other than the differential ``dx`` of an
    integral or a Leibniz derivative (``\\frac{d}{dx}``, ``\\int_0^1 x^2\\,dx``)."""
    if not any("m" in t.flags for t in used):
        return False
    if not any(t.kind == FUNC and t.value in ("int", "frac") for t in used):
        return True
    n = len(used)

    def glued(a: Token, b: Token) -> bool:
        return "m" in a.flags and "m" in b.flags and a.end == b.start

    skip: set[int] = set()
    for k in range(n - 1):
        a, b = used[k], used[k + 1]
        if (a.kind == VAR and a.value == "d" and b.kind == VAR and glued(a, b)
                and (k == 0 or not glued(used[k - 1], a)) and (k + 2 >= n or not glued(b, used[k + 2]))):
            skip.update((k, k + 1))
    return any("m" in t.flags for i, t in enumerate(used) if i not in skip)


def _wordlike(b: Token | None) -> bool:
    """A break that may continue the expression (a word, an operator-like command, a quote)."""
    if b is None:
        return False
    v = b.value
    if b.kind == BREAK and v == "\\text":
        return True
    return v not in _CLEAN_BREAKS and not v.isspace()


_ARITH_WORDS = {"times", "of", "by", "per", "half", "twice", "double", "triple", "thrice", "quarter", "third",
                "divided", "multiplied", "plus", "minus", "less", "more", "than", "over", "each", "every"}


_NOUN_OF = re.compile(r"(?i)\b(?:total|sum|cost|price|value|amount|number|result|count|score|area|volume|perimeter|"
                      r"length|distance|profit|revenue|balance|weight|height)\s{1,3}$")


def _noun_of(text: str, before: Token) -> bool:
    """"a total of 400 + 60", "the sum of 3 + 4": 'of' after a noun naming the result, not an
    operator applied to the first member ("half of 2000")."""
    return before.value.lower() == "of" and bool(_NOUN_OF.search(text[max(0, before.start - 20) : before.start]))


def _ambiguous_division(run: list[Token], text: str) -> bool:
    """'1 1/2 / 1/2', '6 / 2 / 3' in plain text: whether a/b/c means (a/b)/c is a guess. The
    division sign is not: ``60 ÷ 5 ÷ 3`` is left-associative, as every operator of its rank."""
    slashes = [i for i, t in enumerate(run) if t.kind == OP and t.value == "/" and text[t.start : t.end] == "/"]
    for a, b in zip(slashes, slashes[1:], strict=False):
        if b - a == 2 and run[a + 1].kind == NUM:
            return True
    return any(t.kind == NUM and " " in t.value for t in run) and bool(slashes)


def _trim(run: list[Token]) -> tuple[list[Token], bool, bool]:
    """Strip tokens that cannot start/end a formula. Returns (tokens, cut_left, cut_right):
    a cut means an operand or operator was lost at that edge, so the edge member is incomplete."""
    a, b = 0, len(run)
    cut_left = cut_right = False
    while a < b and not (run[a].kind in _START_KINDS or (run[a].kind == OP and run[a].value == "-")):
        cut_left |= run[a].kind != REL
        a += 1
    while b > a and run[b - 1].kind not in _END_KINDS:
        cut_right |= run[b - 1].kind != REL
        b -= 1
    run = run[a:b]
    depth = 0
    for t in run:
        if t.kind in (LP, LB, LSET):
            depth += 1
        elif t.kind in (RP, RB, RSET):
            depth -= 1
    if depth > 0 and run and run[0].kind in (LP, LB, LSET):
        run, cut_left = run[1:], True
    elif depth < 0 and run and run[-1].kind in (RP, RB, RSET):
        run, cut_right = run[:-1], True
    return run, cut_left, cut_right


def _signed_start(run: list[Token], i: int) -> bool:
    """``run[i]`` is a minus sign written against the number after it, that number the left side of a
    relation ("-16 =" in "x + 2 -16 = x")."""
    t = run[i]
    return (t.kind == OP and t.value == "-" and t.space_before and i + 2 < len(run) and run[i + 1].kind == NUM
            and not run[i + 1].space_before and run[i + 2].kind == REL)


def _spaced_operator(run: list[Token], i: int) -> bool:
    """``run[i]`` is a binary operator written with a space on each side ("x + 2")."""
    t = run[i]
    return (t.kind == OP and t.space_before and i > 0 and run[i - 1].kind in (NUM, VAR, RP) and i + 1 < len(run)
            and run[i + 1].space_before)


def _split_on_rel_gaps(run: list[Token], latex: bool) -> list[list[Token]]:
    """In plain text, '5 + 3 = 8 10 + 2 = 12' is two formulas: split where two operands
    meet across a space after the run already holds a relation.

    So is '-14 = x + 2 -16 = x' (two lines of a solution whose line break was lost): where a text writes
    its binary operators with a space on each side, a minus written against its number after a space is
    that number's sign, and a signed number followed by a relation opens the next equation."""
    if latex:
        return [run]
    out: list[list[Token]] = []
    cur: list[Token] = []
    seen_rel = False
    has_operand = False  # cur holds a token that is not a relation (kept, not recomputed: linear time)
    spaced = False  # cur holds a binary operator spaced on both sides (kept likewise)
    for i, t in enumerate(run):
        starts_equation = t.kind == NUM or (t.kind == VAR and i + 1 < len(run) and run[i + 1].kind == REL) or (
            spaced and _signed_start(run, i))
        if cur and seen_rel and t.space_before and starts_equation and cur[-1].kind in (NUM, VAR, RP, "PCT", UNIT):
            out.append(cur)
            cur, seen_rel, has_operand, spaced = [], False, False, False
        seen_rel = seen_rel or (t.kind == REL and has_operand)
        has_operand = has_operand or t.kind != REL
        spaced = spaced or _spaced_operator(run, i)
        cur.append(t)
    if cur:
        out.append(cur)
    return out


def _parse_run(toks: list[Token], before: Token | None, after: Token | None, latex: bool, text: str,
               imaginary: bool = False) -> tuple[Chain, list[tuple[int, int]], list[Token]] | None:
    units = [t for t in toks if t.kind == UNIT]
    if units:
        toks = [t for t in toks if t.kind != UNIT]
    run, cut_left, cut_right = _trim(toks)
    named = bool(toks) and toks[0].kind == REL and toks[0].value == "=" and bool(run) and run[0] is toks[1]
    if not run or not (named or any(t.kind == REL for t in run)):
        return None
    if run[0] is toks[0] and _wordlike(before) and _continues_phrase(run, before, text, latex):
        cut_left = True
    right = _right_edge(run, toks, after, text)
    if right is None:
        return None  # "48 = 100% + 20% = 120% of the actual number": every member is "of" something unread
    cut_right = cut_right or right
    if not latex and _ambiguous_division(run, text):
        return None
    try:
        chain, spans = parse_tokens(run, latex, imaginary)
    except ParseError:
        tail = _readable_tail(run, latex, imaginary) if _unread_head(run, text) else None
        if tail is None:
            return None
        run, chain, spans = tail
        cut_left = False
    trailing = _trailing_unit(run, toks, after)
    if units or trailing is not None:
        # "1/2 inch = 20 miles", "4 daps = 7 yaps", "$0.90 = 90 cents": quantities in different
        # units are a conversion or a scale, not a computation
        i = _conversion(spans, units, trailing)
        if i == 0:
            return None
        if i is not None:
            # keep the chain up to the conversion: "$9.90 - $9 = $0.90 = 90 cents"
            chain = Chain(chain.exprs[: i + 1], chain.rels[:i])
            spans = spans[: i + 1]
            cut_right = False
    exprs, rels = list(chain.exprs), list(chain.rels)
    cut = _restated_at(chain)
    if cut is not None:
        exprs, rels, spans, cut_right = exprs[: cut + 1], rels[:cut], spans[: cut + 1], False
    if cut_left:
        exprs, rels, spans = exprs[1:], rels[1:], spans[1:]
    if cut_right:
        exprs, rels, spans = exprs[:-1], rels[:-1], spans[:-1]
    if not rels and not (named and not cut_left and not cut_right and len(exprs) == 1):
        return None
    first_tok = next(t for t in run if t.start >= spans[0][0])
    last_tok = [t for t in run if t.end <= spans[-1][1]][-1]
    used = [t for t in run if first_tok.start <= t.start and t.end <= last_tok.end]
    return Chain(tuple(exprs), tuple(rels)), spans, used


_CLAIM_LEADS = frozenset({
    "have", "so", "thus", "hence", "then", "therefore", "now", "note", "that", "know", "see", "write", "conclude",
    "means",
})
"""Words that state the formula after them ("We have 91 = 7 × 13"). Verbs of a result ("we get",
"gives") are not among them: after a substitution they introduce the value tested ("plugging in 1 we
get 1 = 7"), and a lone number there may be the tail of what was computed."""
_LAST_WORD = re.compile(r"([A-Za-z]+)[\s$(\\\[]{0,4}$")
_TRIAL_WORDS = re.compile(r"(?i)\b(?:plug\w*|substitut\w*|try|trying|test\w*|check\w*|if|suppose|assum\w*|verif\w*|when)\b")


_RESULT_LEADS = frozenset({"get", "find", "obtain", "gives", "give", "yields", "yield", "is"})
r"""Verbs of a result that state the formula after them when a math delimiter opens it ("We find
$2047 = 23 \cdot 87$"): the delimiter marks where the formula begins, so its first member is not the
tail of what was computed (a sentence that tests still asserts nothing)."""


_SUBJECT_VERB = re.compile(r"(?:^|[.;:!?\n]\s{0,3}|,\s{0,3})(?:[Ww]e|[Tt]his|[Ww]hich|[Tt]hat|[Ii]t)\s{1,3}(?:then\s{1,3})?\Z")


def _claim_lead(text: str, before: Token | None, latex: bool = False) -> bool:
    r"""The word before a formula is a verb or connective that states it ("We have 91 = 7 × 13",
    "then $5 = 2 + 3$", "we find $2047 = 23 \cdot 87$"), in a sentence that tests nothing: the first
    member is the formula's own, not the tail of a phrase."""
    if before is None:
        return False
    m = _LAST_WORD.search(text, max(0, before.end - 24), before.end)
    if m is None:
        return False
    lead = m.group(1).lower()
    delimited = latex and before.value == _LEAD_IN and bool(re.search(r"(?:\$|\\\(|\\\[)\s{0,2}\Z", text[max(0, before.end - 4) : before.end]))
    # in plain text a result verb states the formula when its subject stands right before it ("We find
    # 221 = 13 × 17", "This gives 135 = 9 × 15"), at the start of a clause: nothing computed precedes it
    stated = lead in _RESULT_LEADS and lead != "is" and _SUBJECT_VERB.search(text, max(0, m.start() - 40), m.start()) is not None
    if lead not in _CLAIM_LEADS and not ((delimited or stated) and lead in _RESULT_LEADS):
        return False
    return _TRIAL_WORDS.search(sentence_tail(text[max(0, before.end - 160) : before.end])) is None


def _restated_at(chain: Chain) -> int | None:
    """``90/123 < k < 180/123 ≈ 0.732 < k < 1.463``: a chain that names the same unknown again after
    an ``≈`` restates itself in decimals; the ``≈`` joins two statements, not two members. The
    member index where the first statement ends, or None (one pass over the members)."""
    if "~" not in chain.rels:
        return None
    exprs = chain.exprs
    last: dict[Expr, int] = {}
    for k, e in enumerate(exprs):
        if not isinstance(e, Num) and variables(e):
            last[e] = k
    reach = -1  # the last index at which a member seen so far occurs again
    for j, r in enumerate(chain.rels):
        e = exprs[j]
        if e in last:
            reach = max(reach, last[e])
        if r == "~" and reach >= j + 2:
            return j
    return None


_DOT_PRODUCT = re.compile(r"\([^()]{1,60}\)\s{0,3}(?:\\cdot|·|⋅|\\bullet)\s{0,3}\([^()]{0,60},\s{0,3}$")


def _unread_head(run: list[Token], text: str) -> bool:
    """The run's first member is notation with a known meaning that the reader does not write out: a
    sum or product with symbolic bounds, or the last component of a dot product of tuples
    (``(1,2,3)\\cdot(4,5,6) = 4 + 10 + 18``, whose commas break the run)."""
    head = next((i for i, t in enumerate(run) if t.kind == REL), len(run))
    if any(t.kind == FUNC and t.value in ("sum", "prod", "int", "lim") for t in run[:head]):
        return True
    return bool(run) and _DOT_PRODUCT.search(text, max(0, run[0].start - 140), run[0].start) is not None


def _readable_tail(run: list[Token], latex: bool, imaginary: bool
                   ) -> tuple[list[Token], Chain, list[tuple[int, int]]] | None:
    """When the first member of ``A = B rel C ...`` is notation the reader lacks (a sum with symbolic
    bounds, the tail of a tuple ``(4,5,6)``), the rest of the chain is still what the text claims:
    the run after the first relation outside brackets, parsed alone (None when it has no relation
    or does not parse)."""
    depth = 0
    for i, t in enumerate(run):
        if t.kind in (LP, LB, LSET):
            depth += 1
        elif t.kind in (RP, RB, RSET):
            depth -= 1
        elif t.kind == REL and depth <= 0:
            rest = run[i + 1 :]
            if t.value != "=" or not any(x.kind == REL for x in rest):
                return None
            try:
                chain, spans = parse_tokens(rest, latex, imaginary)
            except ParseError:
                return None
            return rest, chain, spans
    return None


def _continues_phrase(run: list[Token], before: Token | None, text: str, latex: bool = False) -> bool:
    r"""Whether the first member continues the verbal phrase or unread operator ``before`` it
    ("1st - 5 = 6th", "half of 2000 = 1000", "\sec \frac{\pi}{3} = 2")."""
    first_rel = next(i for i, t in enumerate(run) if t.kind == REL)
    lone_number = run[0].kind == NUM and (first_rel == 1 or (first_rel == 2 and run[1].kind == "PCT"))
    if run[0].kind == OP or (lone_number and not _claim_lead(text, before, latex)):
        return True
    if before is None:
        return False
    synthetic = before.value == _LEAD_IN
    symbol = not synthetic and not before.value[:1].isalnum() and before.value != "\\text"
    glued = not synthetic and not run[0].space_before and before.end == run[0].start
    return symbol or glued or before.value.startswith("\\") or (
        before.value.lower() in _ARITH_WORDS and not _noun_of(text, before))


def _right_edge(run: list[Token], toks: list[Token], after: Token | None, text: str) -> bool | None:
    """Whether the last member is cut at the right edge of the run (``None``: the run is no formula)."""
    if run[-1] is not toks[-1] or after is None:
        return False
    if after.value.lower() in ("of", "times", "per"):
        return None
    if after.value == "remainder" or after.value.lower() in ("remainder", "rem", "r"):
        return True  # "17 ÷ 5 = 3 remainder 2": the last member is a quotient, its remainder follows
    if _ELLIPSIS.match(text, run[-1].end):
        # "x = -3 \pm 11", "0.333...", "0.\overline{3}" (a period before a closing delimiter,
        # "= 5.\]", ends the sentence and cuts nothing)
        return True
    if after.value == "\\\\" and _row_continues(text, after.end):
        return True  # "= 1 + 2 \\ + 3 + 4": a long expression broken over display lines
    # "= 6th", "= 5cm": a word glued to the last member is part of it
    return after.start == run[-1].end and after.value not in _CLEAN_BREAKS


_ROW_END = re.compile(r"\\\\|\\end\b|\\\]|\\\)|\$")
_ROW_LAYOUT = re.compile(r"(?:\s|&|\\q?quad\b|\\[,;:! ])*")
_ROW_OPERATOR = re.compile(r"[+*×·/]|\\(?:cdot|times|div|pm|mp)\b")
_ROW_RELATION = re.compile(r"[=<>≤≥≠≈≡∼]|\\(?:le|ge|leq|geq|ne|neq|approx|equiv|lt|gt|sim|cong|simeq)\b")


def _row_continues(text: str, i: int) -> bool:
    r"""Whether the display row that starts at ``i`` (after a ``\\`` line break) continues the last
    member of the row before it: it opens with a binary operator other than minus (``\\ + 3 + 4``), or
    it opens with a number or a minus and has no relation of its own (``= 010\\ 101\\ 001``: digits
    grouped over lines; ``\\ - 3x``). A row with a relation (``\\ &= 7``, ``\\ -3x + 1 = 0``) is a row of
    its own."""
    row = text[i : i + 200]
    end = _ROW_END.search(row)
    row = row[: end.start()] if end else row
    layout = _ROW_LAYOUT.match(row)
    row = row[layout.end() :] if layout else row
    if not row:
        return False
    if _ROW_OPERATOR.match(row):
        return True
    return (row[0].isdigit() or row[0] in "-−") and not _ROW_RELATION.search(row)


def _trailing_unit(run: list[Token], toks: list[Token], after: Token | None) -> str | None:
    """The unit a word right after the run names ("= 20 miles"), or ``None``."""
    if (after is not None and run[-1] is toks[-1] and after.value.isalpha() and after.value.isascii()
            and len(after.value) > 1):
        word = after.value.lower().rstrip("s")
        return {"dollar": "$", "usd": "$", "buck": "$"}.get(word, word)
    return None


def _conversion(spans: list[tuple[int, int]], units: list[Token], trailing: str | None) -> int | None:
    """The first member ``i`` whose units and member ``i + 1``'s are both known and disjoint."""
    member_units: list[set[str]] = [set() for _ in spans]
    if trailing is not None:
        member_units[-1].add(trailing)
    for u in units:
        owner = max((i for i, (a, _) in enumerate(spans) if a <= u.start), default=None)
        if owner is not None:
            member_units[owner].add(u.value)
    for i in range(len(spans) - 1):
        if member_units[i] and member_units[i + 1] and not member_units[i] & member_units[i + 1]:
            return i
    return None


_NAME_CUT = re.compile(r"(?:\.\s|:|;|,|\n|\\\[|\\\(|\$|\\\]|\\\)|\bis\b|\bso\b|\bthen\b)")
_NAME_OK = re.compile(r"^[a-z][a-z' ]{0,60}$")
_NAME_STOP = {"the", "a", "an", "of", "total", "so", "then", "thus", "and"}


def quantity_name(text: str, eq_pos: int) -> str | None:
    """The words naming a quantity just before an '=' (``Daily earnings = ...``), normalised."""
    window = text[max(0, eq_pos - 80) : eq_pos]
    cuts = list(_NAME_CUT.finditer(window))
    if cuts:
        window = window[cuts[-1].end() :]
    raw = re.sub(r"\\(?:text|mathrm|textbf|mbox)\{|[{}\\*_]", " ", window).lower()
    raw = " ".join(raw.replace("’", "'").split())
    if not raw or not _NAME_OK.match(raw):
        return None
    words = [w for w in raw.split() if w not in _NAME_STOP]
    if not words or len(words) > 8:
        return None
    return " ".join(words)


_CONTINUATION_GAP = re.compile(r"(?:\s|&|\\\\|\\\]|\\\[|\$|\\\)|\\\(|\\q?quad|\\[,;!])*")


def _continues(text: str, prev: Formula, eq: Token) -> bool:
    """Only layout (spaces, '&', line breaks, display delimiters) lies between the previous
    formula and a relation that opens this one."""
    gap = text[prev.end : eq.start]
    return bool(prev.chain.rels) and len(gap) <= 40 and _CONTINUATION_GAP.fullmatch(gap) is not None


def _joined(prev: Formula, exprs: tuple[Expr, ...], rels: tuple[str, ...],
            spans: list[tuple[int, int]]) -> tuple[Chain, Chain, list[tuple[int, int]], int, str]:
    """A row that continues ``prev`` with the members ``exprs`` (linked by ``rels``, the first link from
    ``prev``'s last member): its own chain, the whole aligned chain, its member spans, its start, and the
    sentence that opened the first row."""
    whole = prev.aligned or prev.chain
    return (Chain((prev.chain.exprs[-1], *exprs), rels), Chain((*whole.exprs, *exprs), (*whole.rels, *rels)),
            [prev.member_spans[-1], *spans], prev.member_spans[-1][0],
            prev.opening if prev.aligned is not None else prev.lead_sentence)


def _restated_value(text: str, prev: Formula, chain: Chain, start: int) -> bool:
    """``\\[ R = 2310 \\bmod 42 \\] \\[ R = 18 \\]``: a formula ``v = N`` (a letter, a number as written)
    right after a chain of equalities ``v = ... = e`` (``e`` computed from numbers, not a number as
    written), with only layout between them, names the value of ``e``: the rows are one chain
    ``v = ... = e = N``. After a number (``x = 3 \\] \\[ x = -2``) the rows list values; words between
    the rows ("or", "and") may list cases; a value worked out from an expression (``x = \\frac{5+1}{2}``,
    then ``x = \\frac{5-1}{2}``) may be another root; none of these is read so."""
    if len(chain.exprs) != 2 or chain.rels != ("=",) or not isinstance(chain.exprs[0], Var):
        return False
    value = chain.exprs[1]
    if not (isinstance(value, Num) or isinstance(value, Neg) and isinstance(value.operand, Num)):
        return False
    whole = prev.aligned or prev.chain
    first, last = whole.exprs[0], whole.exprs[-1]
    if first != chain.exprs[0] or any(op != "=" for op in whole.rels) or variables(last):
        return False
    if isinstance(last, Num) or isinstance(last, Neg) and isinstance(last.operand, Num):
        return False
    gap = text[prev.end : start]
    return len(gap) <= 40 and _CONTINUATION_GAP.fullmatch(gap) is not None


_DELIMS = ("\\(", "\\[", "$$", "$")
_GLUED = "<glued>"
_MATH_OPENING = re.compile(r"\s{0,3}(?:[A-Za-z0-9(]|\\(?:[dt]?frac|sqrt|pi|cdot|times|left|alpha|beta|"
                           r"gamma|theta|lambda|mu|sigma|omega|phi|varphi)(?![A-Za-z]))")


def _glued_math(text: str, nxt: Segment, toks: list[Token]) -> bool:
    """A plain segment ending in an operand is joined to the math right after it ("70 ≤ 24\\( K \\)":
    the product 24K): only a delimiter (and at most one space) lies between them, and the math opens
    with an operand."""
    if not nxt.latex or not toks or toks[-1].kind not in _END_KINDS:
        return False
    gap = text[toks[-1].end : nxt.start]
    return (len(gap) <= 4 and gap.lstrip(" ") in _DELIMS
            and _MATH_OPENING.match(text, nxt.start, nxt.end) is not None)
_LEAD_IN = "<lead-in>"


def _segment_lead_in(text: str, seg: Segment) -> Token | None:
    """What stands just before a segment, as a break token for the segment's first run: None at
    the start of a line or after punctuation, else a word-like break ("angle $M$ - 10 = ...":
    the plain segment continues an expression the LaTeX segment began)."""
    head = text[max(0, seg.start - 80) : seg.start]
    if seg.latex:
        for d in _DELIMS:
            if head.endswith(d):
                head = head[: -len(d)]
                break
    stripped = head.rstrip(" \t")
    if not stripped or stripped[-1] in "\n.,;:!?({[":
        return None
    return Token(BREAK, _LEAD_IN, seg.start, seg.start, True)


_PLUS_MINUS = re.compile(r"\\(?:pm|mp)(?![A-Za-z])|[±∓]")


def _sign_reading(text: str, upper: bool) -> str:
    """``text`` with every ``±`` read as its upper sign (``+``, and ``∓`` as ``-``) or its lower
    one, padded with spaces so that every position is unchanged."""
    def sign(m: re.Match[str]) -> str:
        plus = (m.group() in ("\\pm", "±")) == upper
        return ("+" if plus else "-").ljust(len(m.group()))
    return _PLUS_MINUS.sub(sign, text)


def _plus_minus_formulas(text: str, imaginary: bool) -> list[Formula]:
    """``\\frac{1 \\pm \\sqrt{7753}}{6} = \\frac{1 \\pm 88}{6}``: a relation whose two sides both write
    ``±`` claims it for the upper signs and for the lower signs alike (the convention of ``±`` and
    ``∓``). Each closed link of that kind is read twice, once per sign; a side without ``±``
    (``x = 3 ± 2``) names two values, and stays unread."""
    marks = [m.start() for m in _PLUS_MINUS.finditer(text)]
    out: list[Formula] = []
    if len(marks) < 2:
        return out  # a link read twice has a sign on each of its two sides
    for upper in (True, False):
        for f in extract_formulas(_sign_reading(text, upper), imaginary, signs=False):
            spans = f.member_spans
            # one sign per side: "\\frac{\\pm 1}{\\pm 2}" lists candidates whose signs vary apart
            signed = [sum(a <= k < b for k in marks) == 1 for a, b in spans]
            keep = [signed[i] and signed[i + 1] and not variables(f.chain.exprs[i])
                    and not variables(f.chain.exprs[i + 1]) for i in range(len(f.chain.rels))]
            i = 0
            while i < len(keep):
                if not keep[i]:
                    i += 1
                    continue
                j = i
                while j < len(keep) and keep[j]:
                    j += 1
                start, end = spans[i][0], spans[j][1]
                out.append(replace(f, chain=Chain(f.chain.exprs[i : j + 1], f.chain.rels[i:j]), start=start,
                                   end=end, text=text[start:end], member_spans=spans[i : j + 1]))
                i = j
    return out


def extract_formulas(text: str, imaginary: bool = False, signs: bool = True) -> list[Formula]:
    """All parseable relation chains in ``text``, in order of appearance. With ``imaginary``,
    ``i`` is the imaginary unit (the text works with complex numbers); with ``signs``, the links
    written with ``±`` on both sides are read once per sign (``_plus_minus_formulas``). Read anew
    on each call; ``RecentReadings`` keeps the last few."""
    return _extract_formulas(text, imaginary, signs)


class RecentReadings:
    """The readings of the last few texts read, owned by a pipeline (``RunContext.readings``): a proof's
    problem is read by the tree builder and again by the obligations that look at it
    (``rootclaims.problem_equations``), and a grader reads one problem for each of its completions. A
    reading depends on its arguments alone, and a handful of entries never carries one proof's texts
    into another pass over a dataset. Safe to share between threads (the service reads on several)."""

    SIZE = 4

    def __init__(self) -> None:
        self._recent: dict[tuple[str, bool, bool], tuple[Formula, ...]] = {}
        self._lock = threading.Lock()

    def read(self, text: str, imaginary: bool = False, signs: bool = True) -> list[Formula]:
        """``extract_formulas(text, imaginary, signs)``, not read again when it is among the last few."""
        key = (text, imaginary, signs)
        hit = self._recent.get(key)
        if hit is None:
            hit = tuple(_extract_formulas(text, imaginary, signs))
            with self._lock:  # the oldest entry leaves under the lock
                while len(self._recent) >= self.SIZE:
                    del self._recent[next(iter(self._recent))]
                self._recent[key] = hit
        return list(hit)


def _extract_formulas(text: str, imaginary: bool, signs: bool) -> list[Formula]:
    """What ``extract_formulas`` answers, read now."""
    if signs and _PLUS_MINUS.search(text):
        both = extract_formulas(text, imaginary, signs=False) + _plus_minus_formulas(text, imaginary)
        both.sort(key=lambda f: f.start)
        return both[:MAX_FORMULAS_PER_STEP]
    out: list[Formula] = []
    prev_end = 0
    segs = find_segments(text)
    for si, seg in enumerate(segs):
        body = text[seg.start : seg.end]
        if not seg.latex and not plain_may_relate(body):
            continue  # prose: no relation, so no formula (see ``plain_may_relate``)
        lead_in = _segment_lead_in(text, seg)
        toks = (tokenize_latex(body, seg.start) if seg.latex
                else tokenize_plain(body, seg.start, line_start=lead_in is None))
        glued = not seg.latex and si + 1 < len(segs) and _glued_math(text, segs[si + 1], toks)
        runs = _runs(toks)
        for ri, r in enumerate(runs):
            pieces = _split_on_rel_gaps(r.toks, seg.latex)
            for k, run in enumerate(pieces):
                before = r.before if k == 0 else None
                if before is None and ri == 0 and k == 0:
                    before = lead_in
                after = r.after if k == len(pieces) - 1 else None
                if glued and after is None and ri == len(runs) - 1 and run:
                    after = Token(BREAK, _GLUED, run[-1].end, run[-1].end)  # "24\( K \)": 24K, not 24
                parsed = _parse_run(run, before, after, seg.latex, text, imaginary)
                if parsed is None:
                    continue
                chain, spans, used = parsed
                start, end = used[0].start, used[-1].end
                eq = next((t for t in run if t.kind != UNIT), None)
                name = None
                lead = text[max(prev_end, start - 240) : start]
                opens_with_rel = (eq is not None and eq.kind == REL and len(run) > 1
                                  and [t for t in run if t.kind != UNIT][1] is used[0])
                if out and _restated_value(text, out[-1], chain, start):
                    # "\\[ R = 2310 \\bmod 42 \\] \\[ R = 18 \\]": the row names the same letter's value
                    chain, aligned, spans, start, opening = _joined(out[-1], chain.exprs[1:2], ("=",), spans[1:2])
                elif opens_with_rel and eq is not None and out and _continues(text, out[-1], eq):
                    # "a &= b \\ &= c": the next line of an aligned chain continues the previous one
                    chain, aligned, spans, start, opening = _joined(out[-1], chain.exprs, (eq.value, *chain.rels), spans)
                else:
                    aligned, opening = None, ""
                    if opens_with_rel and eq is not None and eq.value == "=":
                        name = quantity_name(text, eq.start)
                sentence = sentence_tail(lead)
                low = sentence.lower()
                sentence_before = own_sentence(text[max(0, start - 240) : start])
                out.append(
                    Formula(
                        chain=chain,
                        start=start,
                        end=end,
                        text=text[start:end],
                        latex=seg.latex,
                        member_spans=tuple(spans),
                        multiletter=_letter_runs(used),
                        derived=bool(_DERIVE_WORDS.search(lead.lower())),
                        conditional=bool(_COND_WORDS.search(low)),
                        approx_context=bool(_APPROX_CONTEXT.search(low)) or "~" in chain.rels,
                        lead=lead,
                        sentence_before=sentence_before,
                        name=name,
                        aligned=aligned,
                        opening=opening,
                    )
                )
                prev_end = end
                if len(out) >= MAX_FORMULAS_PER_STEP:
                    return out
    return out

