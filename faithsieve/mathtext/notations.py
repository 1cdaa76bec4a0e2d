"""Token passes for notations people write in both plain text and LaTeX, run by the tokenizers after
their own pass (``faithsieve.mathtext.lexer``): each takes the token list and returns a new one.

- the commas between the arguments of ``gcd``/``lcm`` (``COMMA``, not a break);
- ratio notation ``a : b = c : d`` (``RATIO``, read ``a / b``); a lone colon glued between two
  operands (``3:4``, ``6:30``) stays a break that cuts both neighbours;
- digit groups separated by a space or a thin space (``10 000``, ``10\\,000``): one number;
- repeating decimals ``0.(3)`` and ``0.\\overline{3}``: one literal;
- in plain text: ``| -7 + 2 |`` (paired bars around an expression), number words (``twenty-four``,
  ``three hundred``) beside arithmetic, and juxtaposed letters (``2xy``) read as products of the
  one-letter variables the formula uses.
"""

from __future__ import annotations

import re

from faithsieve.mathtext.tokens import (
    BREAK,
    COMMA,
    FUNC,
    LB,
    LP,
    NUM,
    OP,
    POW,
    RATIO,
    RB,
    REL,
    RP,
    VAR,
    Token,
)

MULTI_ARG = frozenset({"gcd", "lcm"})
MAX_ARG_SCAN = 200
_OPERAND_END = (NUM, VAR, RP, RB, "CONST", "PCT", "BANG", "DEG")
_OPERAND_START = (NUM, VAR, LP, LB, FUNC, "CONST")


_GATES = {
    "commas": re.compile(r"(?i)gcd|lcm|hcf"),
    "groups": re.compile(r"\d(?: |\u00a0|\u2009|\u202f|~|\\[,;: ]|\{\\,\})\d{3}"),
    "repeating": re.compile(r"\d\.\d{0,40}(?:\(\d|\\overline)"),
    "number_words": re.compile(r"(?i)(?<![a-z])(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                               r"\w{3,5}teen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?![a-z])"),
    "letters": re.compile(r"(?<![A-Za-z])[a-z]{2,3}(?![A-Za-z])"),
}


def has(gate: str, text: str) -> bool:
    """Whether ``text`` may hold the notation a pass reads (a regular expression over the raw text,
    so that text without it costs no pass over its tokens)."""
    return _GATES[gate].search(text) is not None


def arg_commas(toks: list[Token]) -> list[Token]:
    """``gcd(12, 18)``: a comma at the top level of the parentheses after a function of several
    arguments separates them (a ``COMMA``); anywhere else a comma stays a break."""
    out = list(toks)
    n = len(out)
    for i, t in enumerate(out):
        if not (t.kind == FUNC and t.value in MULTI_ARG and i + 1 < n and out[i + 1].kind == LP):
            continue
        depth = 0
        for j in range(i + 1, min(n, i + 1 + MAX_ARG_SCAN)):
            k = out[j].kind
            if k in (LP, LB):
                depth += 1
            elif k in (RP, RB):
                depth -= 1
                if depth == 0:
                    break
            elif k == BREAK and out[j].value == "," and depth == 1:
                out[j] = Token(COMMA, ",", out[j].start, out[j].end, out[j].space_before)
            elif k == BREAK:
                break
    return out


def _colon(t: Token) -> bool:
    return t.kind == BREAK and t.value == ":"


def ratios(toks: list[Token]) -> list[Token]:
    """``a : b = c : d`` (each side one ratio, between breaks) is the equation ``a / b = c / d``: both
    colons become ``RATIO``, when each of the four terms is one operand (a number, a letter, a bracketed
    group) and no term is a clock's minutes (``12:00``). Any other colon between two operands without a
    space on either side (``3:4 = 0.75``, ``at 6:30``) stays a break that is not clean, so the neighbouring members are
    cut instead of read as whole numbers."""
    colons = [i for i, t in enumerate(toks) if _colon(t)]
    if not colons:
        return toks
    out = list(toks)
    n = len(out)

    def between_operands(i: int) -> bool:
        return 0 < i < n - 1 and out[i - 1].kind in _OPERAND_END and (
            out[i + 1].kind in _OPERAND_START or (out[i + 1].kind == OP and out[i + 1].value == "-"))

    def clock(i: int) -> bool:  # "12:00", "9:05": hours and minutes (a ratio's term never opens with 0)
        after = out[i + 1]
        return not out[i].space_before and after.kind == NUM and len(after.value) == 2 and after.value[0] == "0"

    paired: set[int] = set()
    for a, b in zip(colons, colons[1:], strict=False):
        if a in paired or not (between_operands(a) and between_operands(b)) or clock(a) or clock(b):
            continue
        rel = next((j for j in range(a + 1, b) if out[j].kind in (REL, BREAK)), -1)
        if rel < 0 or out[rel].kind != REL or out[rel].value != "=":
            continue
        # each of the four terms is one operand: a number, a letter or a bracketed group
        first, last = _atom_start(out, a - 1), _atom_end(out, b + 1)
        if (_atom_end(out, a + 1) == rel and _atom_end(out, rel + 1) == b and first >= 0 and last >= 0
                and (first == 0 or out[first - 1].kind == BREAK) and (last == n or out[last].kind == BREAK)):
            paired.update((a, b))
    for i in colons:
        t = out[i]
        if i in paired:
            out[i] = Token(RATIO, ":", t.start, t.end, t.space_before)
        elif between_operands(i) and not t.space_before and not out[i + 1].space_before:
            out[i] = Token(BREAK, ":glued", t.start, t.end, False)
    return out


def _atom_end(toks: list[Token], i: int) -> int:
    """The index after the one operand starting at ``i`` (a signed number, a letter, a bracketed
    group), ``-1`` when none starts there."""
    n = len(toks)
    if i < n and toks[i].kind == OP and toks[i].value == "-":
        i += 1
    if i >= n:
        return -1
    if toks[i].kind in (NUM, VAR):
        j = i + 1
    elif toks[i].kind in (LP, LB):
        depth, j = 0, i
        while j < n:
            depth += toks[j].kind in (LP, LB)
            depth -= toks[j].kind in (RP, RB)
            j += 1
            if depth == 0:
                break
        if depth:
            return -1
    else:
        return -1
    return j


def _atom_start(toks: list[Token], i: int) -> int:
    """The index of the one operand ending at ``i`` (``-1`` when none ends there)."""
    if i < 0:
        return -1
    if toks[i].kind in (NUM, VAR):
        j = i
    elif toks[i].kind in (RP, RB):
        depth, j = 0, i
        while j >= 0:
            depth += toks[j].kind in (RP, RB)
            depth -= toks[j].kind in (LP, LB)
            if depth == 0:
                break
            j -= 1
        if depth:
            return -1
    else:
        return -1
    if j > 0 and toks[j - 1].kind == OP and toks[j - 1].value == "-":
        j -= 1
    return j


_THIN_SPACES = frozenset({"\u2009", "\u202f"})
_GROUP_GAPS = frozenset({" ", "\u00a0", "\u2009", "\u202f", "\\,", "\\ ", "{\\,}", "~", "\\;", "\\:"})


def digit_groups(toks: list[Token], text: str, offset: int) -> list[Token]:
    """``10 000``, ``14\\,000``, ``1 234 567``: a whole number of one to three digits followed by
    groups of exactly three digits, each after one space or thin space, is one number when it
    stands in arithmetic (an operator or relation right before or after it) and does not continue
    a list of numbers (no number right before it)."""
    out: list[Token] = []
    n = len(toks)
    i = 0
    while i < n:
        t = toks[i]
        j = i + 1
        if (t.kind == NUM and t.value.isdigit() and len(t.value) <= 3 and not t.value.startswith("0")
                and not (out and out[-1].kind == NUM)
                and text[max(0, t.start - offset - 1) : t.start - offset] not in ("_", "^")):
            # (a braceless sub- or superscript is one character: ``\log_5 125`` is the logarithm of 125)
            while j < n:
                k = j + 1 if toks[j].kind == BREAK and toks[j].value in _THIN_SPACES else j  # a thin space: a break
                if not (k < n and toks[k].kind == NUM and _three_digits(toks[k].value) and toks[j - 1].value.isdigit()
                        and text[toks[j - 1].end - offset : toks[k].start - offset] in _GROUP_GAPS):
                    break
                j = k + 1
        if j > i + 1:
            prev = out[-1] if out else None
            nxt = toks[j] if j < n else None
            if (prev is not None and prev.kind in (OP, REL)) or (nxt is not None and nxt.kind in (OP, REL)):
                value = "".join(x.value for x in toks[i:j] if x.kind == NUM)
                out.append(Token(NUM, value, t.start, toks[j - 1].end, t.space_before))
                i = j
                continue
        out.append(t)
        i += 1
    return out


def _three_digits(v: str) -> bool:
    head = v.split(".", 1)[0]
    return len(head) == 3 and head.isdigit() and (v == head or v[4:].isdigit())


def repeating_decimals(toks: list[Token]) -> list[Token]:
    """``0.(3)``, ``1.2(45)``, ``0.\\overline{3}``: a decimal glued to a parenthesised or
    overlined period of digits is the repeating decimal (one literal, read exactly)."""
    out: list[Token] = []
    n = len(toks)
    i = 0
    while i < n:
        t = toks[i]
        if t.kind == NUM and t.value.replace(".", "", 1).isdigit():
            j = i + 1
            head = t.value
            if "." not in head and j < n and toks[j].kind == BREAK and toks[j].value == "." and toks[j].start == t.end:
                head += "."
                j += 1
            if "." in head:
                period = _period(toks, j, toks[j - 1].end)
                if period is not None:
                    digits, stop = period
                    out.append(Token(NUM, f"{head}({digits})", t.start, toks[stop - 1].end, t.space_before))
                    i = stop
                    continue
        out.append(t)
        i += 1
    return out


def _period(toks: list[Token], j: int, end: int) -> tuple[str, int] | None:
    """The period at ``toks[j:]`` glued to ``end``: ``( d )`` or ``\\overline { d }``, with the index
    after it."""
    n = len(toks)
    if j < n and toks[j].kind == BREAK and toks[j].value == "\\overline" and toks[j].start == end:
        j, end = j + 1, toks[j].end
        opening, closing = LB, RB
    else:
        opening, closing = LP, RP
    if j + 2 < n:
        a, d, b = toks[j], toks[j + 1], toks[j + 2]
        if (a.kind == opening and a.value in "({" and a.start == end and d.kind == NUM and d.value.isdigit()
                and len(d.value) <= 12 and d.start == a.end and b.kind == closing and b.start == d.end):
            return d.value, j + 3
    return None


def bars(toks: list[Token]) -> list[Token]:
    """Plain text ``| -7 + 2 | = 9``: two bars around an expression of numbers, letters and
    operators (nothing else between them) are an absolute value; a lone bar stays a break."""
    out = list(toks)
    n = len(out)
    i = 0
    while i < n:
        if out[i].kind == BREAK and out[i].value == "|":
            j = i + 1
            while j < n and out[j].kind in (NUM, VAR, OP, LP, RP, POW, "CONST"):
                j += 1
            if j < n and j > i + 1 and out[j].kind == BREAK and out[j].value == "|" and any(
                    t.kind in (NUM, VAR) for t in out[i + 1 : j]):
                out[i] = out[i]._replace(kind="BAR")
                out[j] = out[j]._replace(kind="BAR")
                i = j + 1
                continue
        i += 1
    return out


_UNITS_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_TENS_WORDS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
               "ninety": 90}
_SCALE_WORDS = {"hundred": 100, "thousand": 1000, "million": 10**6}
_ARITH_WORDS = {"plus", "minus", "times", "equals", "equal", "divided", "multiplied"}
WORD = "WORD"


def _number_word(t: Token) -> bool:
    w = t.value.lower()
    return t.kind == WORD and (w in _UNITS_WORDS or w in _TENS_WORDS or w in _SCALE_WORDS)


def number_words(toks: list[Token]) -> list[Token]:
    """Plain text (before its words are resolved): a run of number words ("twenty-four", "three
    hundred and five", "one thousand two hundred") right beside an operator, a relation or an
    arithmetic word ("plus", "equals") is the number it names."""
    out: list[Token] = []
    n = len(toks)
    i = 0
    while i < n:
        if not _number_word(toks[i]):
            out.append(toks[i])
            i += 1
            continue
        j, value = _read_number_words(toks, i)
        prev = out[-1] if out else None
        nxt = toks[j] if j < n else None
        if value is not None and (_arith_neighbour(prev) or _arith_neighbour(nxt)):
            out.append(Token(NUM, str(value), toks[i].start, toks[j - 1].end, toks[i].space_before))
        else:
            out.extend(toks[i:j])
        i = j
    return out


def _arith_neighbour(t: Token | None) -> bool:
    return t is not None and (t.kind in (OP, REL) or (t.kind == WORD and t.value.lower() in _ARITH_WORDS))


def _read_number_words(toks: list[Token], i: int) -> tuple[int, int | None]:
    """The index after the number words from ``i`` and the value they name (None: not a number)."""
    total = current = 0
    last = ""  # the kind of the last word: "unit", "ten", "scale"
    j = i
    n = len(toks)
    while j < n:
        t = toks[j]
        if t.kind == OP and t.value == "-" and not t.space_before and last == "ten" and j + 1 < n and (
                toks[j + 1].kind == WORD and toks[j + 1].value.lower() in _UNITS_WORDS and toks[j + 1].start == t.end):
            j += 1  # the hyphen of "twenty-four"
            continue
        if t.kind == WORD and t.value.lower() == "and" and last == "scale" and j + 1 < n and _number_word(toks[j + 1]):
            j += 1  # "three hundred and five"
            continue
        if not _number_word(t):
            break
        w = t.value.lower()
        if w in _UNITS_WORDS:
            if last in ("unit", "ten") and not (last == "ten" and _UNITS_WORDS[w] < 10):
                break
            current += _UNITS_WORDS[w]
            last = "unit"
        elif w in _TENS_WORDS:
            if last in ("unit", "ten"):
                break
            current += _TENS_WORDS[w]
            last = "ten"
        else:
            scale = _SCALE_WORDS[w]
            if last == "" or last == "scale" and scale != 100 and current == 0:
                return j + 1, None
            if scale == 100:
                current *= 100
            else:
                total += current * scale
                current = 0
            last = "scale"
        j += 1
    return j, total + current


_NOT_PRODUCTS = frozenset({
    "an", "as", "at", "be", "by", "do", "go", "he", "if", "in", "is", "it", "me", "my", "no", "of", "on", "or",
    "so", "to", "up", "us", "we", "and", "are", "but", "can", "for", "get", "had", "has", "her", "him", "his",
    "how", "its", "let", "may", "not", "now", "off", "one", "our", "out", "per", "see", "she", "the", "two",
    "use", "was", "way", "who", "why", "yet", "you", "all", "any", "few", "new", "old", "set", "sum", "lcm",
    "gcd", "max", "min", "mod", "sin", "cos", "tan", "log", "exp", "abs", "ln", "cm", "mm", "km", "kg", "mg",
    "ml", "hr", "ft", "yd", "mi", "lb", "oz", "pm", "am", "th", "st", "nd", "rd", "sec", "deg", "rad",
})


def letter_products(toks: list[Token]) -> list[Token]:
    """Plain text (before its words are resolved): a word of two or three letters standing among
    operators (``x^2 − 2xy − y^2``, ``3ab^2``) is the product of its letters, when each of them is
    also written alone in the text as a variable; anything else stays a word."""
    singles = {t.value for t in toks if t.kind == WORD and len(t.value) == 1}
    if len(singles) < 1:
        return toks
    out: list[Token] = []
    for i, t in enumerate(toks):
        w = t.value
        if (t.kind == WORD and 2 <= len(w) <= 3 and w.islower() and w not in _NOT_PRODUCTS
                and all(c in singles for c in w) and _among_operators(toks, i, out[-1] if out else None)):
            for k, c in enumerate(w):
                out.append(Token(VAR, c, t.start + k, t.start + k + 1, t.space_before if k == 0 else False))
            continue
        out.append(t)
    return out


def _among_operators(toks: list[Token], i: int, prev: Token | None) -> bool:
    t = toks[i]
    nxt = toks[i + 1] if i + 1 < len(toks) else None
    before = prev is not None and (prev.kind in (OP, REL, LP, POW) or (prev.kind == NUM and prev.end == t.start))
    after = nxt is not None and (nxt.kind in (OP, REL, POW, RP, "SUP") or (nxt.kind == LP and nxt.start == t.end))
    return before and after
