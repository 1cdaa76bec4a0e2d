"""Linear-time tokenizers for the two notations proofs use: plain text and LaTeX.

Each tokenizer makes one left-to-right pass with a master pattern whose
alternatives have no nested quantifiers, so long model output cannot trigger
catastrophic backtracking. Anything that is not mathematics becomes a BREAK
token: formulas are the maximal runs between breaks.
"""

from __future__ import annotations

import re

from faithsieve.mathtext.first_pass import NUMBER, SPACE, WORD, master_pattern
from faithsieve.mathtext.literals import LATEX, TEXT
from faithsieve.mathtext.notations import (
    MULTI_ARG,
    arg_commas,
    bars,
    digit_groups,
    has,
    letter_products,
    number_words,
    ratios,
    repeating_decimals,
)
from faithsieve.mathtext.tokens import (
    BANG,
    BAR,
    BREAK,
    COMMA,
    CONST,
    DEG,
    EVALBAR,
    FUNC,
    INF,
    LB,
    LEVAL,
    LP,
    LSET,
    NUM,
    OP,
    PCT,
    POW,
    PRIME,
    RATIO,
    RB,
    REL,
    RP,
    RSET,
    SUB,
    TO,
    UNIT,
    VAR,
    Token,
)

# the token kinds and type are re-exported: the lexer's public names
__all__ = [
    "BANG",
    "BAR",
    "BREAK",
    "COMMA",
    "CONST",
    "DEG",
    "EVALBAR",
    "FUNC",
    "INF",
    "LB",
    "LEVAL",
    "LP",
    "LSET",
    "NUM",
    "OP",
    "PCT",
    "POW",
    "PRIME",
    "RATIO",
    "RB",
    "REL",
    "RP",
    "RSET",
    "SUB",
    "TO",
    "UNIT",
    "VAR",
    "Token",
    "MAX_BRACE_SCAN",
    "SUPERSCRIPTS",
    "brace_group_end",
    "plain_may_relate",
    "tokenize_latex",
    "tokenize_plain",
]

_UNI_OPS = {
    "×": ("OP", "*"), "·": ("OP", "*"), "⋅": ("OP", "*"), "∗": ("OP", "*"), "÷": ("OP", "/"),
    "−": ("OP", "-"), "+": ("OP", "+"), "-": ("OP", "-"), "*": ("OP", "*"), "/": ("OP", "/"),
    "=": ("REL", "="), "<": ("REL", "<"), ">": ("REL", ">"), "≤": ("REL", "<="), "≥": ("REL", ">="),
    "≠": ("REL", "!="), "≈": ("REL", "~"), "≃": ("REL", "~"), "^": ("POW", "^"),
    "(": ("LP", "("), ")": ("RP", ")"), "[": ("LP", "("), "]": ("RP", ")"),
    "!": ("BANG", "!"), "%": ("PCT", "%"), "π": ("CONST", "pi"), "√": ("FUNC", "sqrt"),
    "⩽": ("REL", "<="), "⩾": ("REL", ">="), "°": ("DEG", "deg"),
}

# Unicode superscript digits (and the superscript minus), as written in "5² + 12²" or "10⁻²"
SUPERSCRIPT_DIGITS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
SUPERSCRIPTS = str.maketrans(SUPERSCRIPT_DIGITS + "⁻", "0123456789-")
SUP = "SUP"  # a superscript run, resolved by _superscripts into ^N or a break

# The raw passes of the two notations (``faithsieve.mathtext.first_pass``): ASCII words, and in plain
# text only blanks count as space (a newline is a break); superscripts and two-character relations
# in plain text, commands in LaTeX, are extra alternatives. The lexers walk over the matches.
_PLAIN = master_pattern(
    TEXT,
    words=r"[A-Za-z]+",
    spaces=r"[ \t\u00a0]+",
    extras=(("sup", rf"⁻?[{SUPERSCRIPT_DIGITS}]+"), ("rel2", r"<=|>=|!=|==|=>")),
    ascii_numbers=False,
)

_LATEX = master_pattern(
    LATEX,
    words=r"[A-Za-z]",  # one letter: a run of letters is a product of variables (or a unit)
    spaces=r"\s+",
    extras=(("cmd", r"\\[A-Za-z]+|\\."),),
    ascii_numbers=False,
)

_OP_WORDS = {"times": "*", "plus": "+", "minus": "-"}
_PLAIN_FUNCS = {"sin", "cos", "tan", "log", "ln", "exp", "sqrt", "floor", "ceil", "abs", *MULTI_ARG}
_TRIG_WORDS = {"sin", "cos", "tan"}
_APPROX_WORDS = {"approximately", "about", "roughly", "around", "nearly", "approx", "circa"}
_TEXT_BREAK_WORDS = {
    "or", "and", "if", "so", "then", "where", "since", "for", "when", "thus", "hence", "because",
    "is", "we", "get", "gives", "which", "but", "with", "implies", "therefore", "not", "are",
    "of", "the", "to", "be", "as", "in", "all", "any", "some", "each", "every", "other",
    "otherwise", "case", "let", "no", "solution", "solutions", "undefined",
}

_LATEX_CMDS: dict[str, tuple[str, str]] = {
    r"\times": (OP, "*"), r"\cdot": (OP, "*"), r"\ast": (OP, "*"), r"\div": (OP, "/"),
    r"\le": (REL, "<="), r"\leq": (REL, "<="), r"\leqslant": (REL, "<="),
    r"\ge": (REL, ">="), r"\geq": (REL, ">="), r"\geqslant": (REL, ">="),
    r"\ne": (REL, "!="), r"\neq": (REL, "!="), r"\approx": (REL, "~"), r"\simeq": (REL, "~"),
    r"\lt": (REL, "<"), r"\gt": (REL, ">"),
    r"\pi": (CONST, "pi"),
    r"\frac": (FUNC, "frac"), r"\dfrac": (FUNC, "frac"), r"\tfrac": (FUNC, "frac"),
    r"\sqrt": (FUNC, "sqrt"), r"\binom": (FUNC, "binom"), r"\dbinom": (FUNC, "binom"),
    r"\tbinom": (FUNC, "binom"),
    r"\sin": (FUNC, "sin"), r"\cos": (FUNC, "cos"), r"\tan": (FUNC, "tan"),
    r"\log": (FUNC, "log"), r"\ln": (FUNC, "ln"), r"\exp": (FUNC, "exp"),
    r"\lfloor": (LP, "floor"), r"\rfloor": (RP, "floor"),
    r"\lceil": (LP, "ceil"), r"\rceil": (RP, "ceil"),
    r"\%": (PCT, "%"), r"\{": (LSET, "{"), r"\}": (RSET, "}"),
    r"\sum": (FUNC, "sum"), r"\prod": (FUNC, "prod"), r"\gcd": (FUNC, "gcd"), r"\lcm": (FUNC, "lcm"),
    r"\bmod": (OP, "mod"), r"\mod": (OP, "mod"),
    # amsmath's absolute-value delimiters, read as the plain bar
    r"\lvert": (BAR, "|"), r"\rvert": (BAR, "|"), r"\vert": (BAR, "|"),
}
_LATEX_SKIP = {
    r"\left", r"\right", r"\big", r"\Big", r"\bigg", r"\Bigg", r"\bigl", r"\bigr", r"\Bigl",
    r"\Bigr", r"\,", r"\;", r"\:", r"\!", r"\ ", r"\quad", r"\qquad", r"\displaystyle",
    r"\$", r"\boxed", r"\fbox", r"\mathbf", r"\bf", r"\mathit", r"\textstyle", r"\limits",
    r"\hspace", r"\phantom", r"\nonumber", r"\notag",
    # the cancel package's strike-through marks a factor that cancels; the struck term keeps its value
    r"\cancel", r"\bcancel", r"\xcancel",
}
_UNIT_SYMBOLS = (
    "mm|cm|dm|km|m|s|ms|min|h|hr|g|mg|kg|N|J|kJ|W|kW|V|mV|kV|A|mA|Pa|kPa|Hz|kHz|MHz|K|mol|L|mL|ml|eV|"
    "keV|MeV|C|F|T|lb|oz|ft|in|yd|mi"
)
_THIN_SPACE_UNIT = re.compile(
    r"[ \t]{0,3}(" + _UNIT_SYMBOLS + r")(?![A-Za-z0-9{(^_'])(?=[ \t]{0,3}(?:$|[.,;]|\\[\])\\]|\$|"
    r"\\(?:quad|qquad|text)(?![A-Za-z])))"
)
"""A unit symbol after ``\\,`` that ends the formula (punctuation, a closing delimiter, a line
break or the end follows): ``2\\,V = 0.4`` stays a product, as a unit there would compare a
quantity with a pure number."""
_BAR_SIZES = {r"\big", r"\Big", r"\bigg", r"\Bigg", r"\bigr", r"\Bigr"}
"""Sizes of a bar that, followed by a subscript, is an evaluation bar (``F \\Big|_{x=a}``)."""
_SIZING = {r"\left", r"\right", r"\big", r"\Big", r"\bigg", r"\Bigg", r"\bigl", r"\bigr", r"\Bigl", r"\Bigr"}
_LATEX_DROP_ARG = {r"\text", r"\mathrm", r"\textbf", r"\textit", r"\mbox", r"\textrm", r"\operatorname", r"\emph"}
_GREEK = {
    "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "theta", "lambda", "mu", "sigma",
    "phi", "varphi", "omega", "rho", "tau", "psi", "chi", "eta", "zeta", "kappa", "nu", "xi",
}

_NAMED_FUNCS = {"gcd": "gcd", "lcm": "lcm", "GCD": "gcd", "LCM": "lcm", "HCF": "gcd", "hcf": "gcd"}
_REMAINDER_WORDS = {"remainder", "rem", "r", "rem."}
_BIG_OPERATORS = {
    r"\int", r"\iint", r"\iiint", r"\oint", r"\lim", r"\limsup", r"\liminf", r"\max", r"\min", r"\sup",
    r"\inf", r"\bigcup", r"\bigcap", r"\bigoplus", r"\coprod", r"\argmax", r"\argmin",
}

_CALCULUS_OPERATORS = {r"\int": "int", r"\lim": "lim"}
"""Big operators read as calculus values (``faithsieve.mathtext.parser``): their scripts are read as
tokens, where ``\\to`` and ``\\infty`` mean what a limit or a bound says (``TO``, ``INF``)."""
_ARROWS = {r"\to", r"\rightarrow", r"\longrightarrow"}

MAX_BRACE_SCAN = 2000


def _after_scripts(text: str, i: int) -> int:
    """The index after the subscript and superscript at ``text[i:]`` (``_{x \\to 0}``, ``_0^1``,
    ``\\limits_{k}``): a braced group, a command or one character each."""
    n = len(text)
    for _ in range(3):
        j = i
        while j < n and text[j] == " ":
            j += 1
        if text.startswith("\\limits", j) or text.startswith("\\nolimits", j):
            i = j + (7 if text.startswith("\\limits", j) else 9)
            continue
        if j >= n or text[j] not in "_^":
            return i
        j += 1
        while j < n and text[j] == " ":
            j += 1
        if j < n and text[j] == "{":
            end = brace_group_end(text, j)
            i = end if end > 0 else n
        elif j < n and text[j] == "\\":
            k = j + 1
            while k < n and text[k].isalpha():
                k += 1
            i = max(k, j + 2)
        else:
            i = min(n, j + 1)
    return i


def brace_group_end(text: str, i: int) -> int:
    """Given text[i] == '{', return the index after the matching '}' (bounded scan), or -1."""
    depth = 0
    limit = min(len(text), i + MAX_BRACE_SCAN)
    j = i
    while j < limit:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return -1


_REL_WORDS = ("equals", "equal")
# built from the tables the tokenizer reads, so a relation added there is a cue here too
_RELATION_CUE = re.compile(
    "[" + re.escape("".join(k for k, (kind, _) in _UNI_OPS.items() if kind == REL) + "<>!=") + "]"
    + "|(?<![A-Za-z])(?:" + "|".join(sorted(map(re.escape, {*_REL_WORDS, *_APPROX_WORDS}), key=len, reverse=True))
    + ")(?![A-Za-z])",
    re.I,
)


def plain_may_relate(text: str) -> bool:
    """Whether ``tokenize_plain(text)`` can yield a relation token at all.

    A relation token comes only from a relation symbol (``= < > ≤ ≥ ≠ ≈ ≃ ⩽ ⩾``, which the
    two-character ones ``<= >= != ==`` contain) or from a word run ``[A-Za-z]+`` that lowercases
    to ``equal``/``equals`` or an approximation word. Without either, every run of the text lacks
    a relation and no formula can come from it, so prose needs no tokenizing."""
    return _RELATION_CUE.search(text) is not None


def tokenize_plain(text: str, offset: int = 0, line_start: bool = True) -> list[Token]:
    """Tokens of plain text. ``line_start``: the text begins a line (a leading '-' may be a bullet)."""
    toks: list[Token] = []
    space = False
    pending_currency = False
    currency: set[int] = set()  # start offsets of numbers written after a currency mark
    for m in _PLAIN.finditer(text):
        kind = m.lastgroup
        s, e = m.start() + offset, m.end() + offset
        v = m.group()
        if kind == SPACE:
            space = True
            continue
        if v != "$" and kind != NUMBER:
            pending_currency = False
        if kind == NUMBER:
            toks.append(Token(NUM, v, s, e, space))
            if pending_currency:
                currency.add(s)
                pending_currency = False
        elif kind == WORD:
            toks.append(Token("WORD", v, s, e, space))
        elif kind == "sup":
            toks.append(Token(SUP, v, s, e, space))
        elif kind == "rel2":
            val = {"==": "=", "=>": "=>"}.get(v, v)
            toks.append(Token(REL if val != "=>" else BREAK, val, s, e, space))
        else:
            if v in ("$", "€", "£", "¥"):
                # a currency mark is the unit of the number after it (kept aside, like units)
                pending_currency = True
                continue
            if v == "\\" and text[e - offset : e - offset + 1] == "*":
                continue  # "5 \\* 6": an asterisk escaped (as Markdown writes it) is still a times sign
            if v in _UNI_OPS:
                k, val = _UNI_OPS[v]
                toks.append(Token(k, val, s, e, space))
            else:
                toks.append(Token(BREAK, v, s, e, space))
        space = False
    toks = _plain_passes(_bullets(text, offset, toks, line_start), text, offset)
    if not currency:
        return toks
    out: list[Token] = []
    for t in toks:
        out.append(t)
        if t.kind == NUM and t.start in currency:
            out.append(Token(UNIT, "$", t.end, t.end, False))
    return out


def _plain_passes(toks: list[Token], text: str, offset: int) -> list[Token]:
    """The passes of plain text after the raw one: words read as numbers or products, then resolved;
    dashes, superscripts, mixed numbers, units, bars; then the notations shared with LaTeX."""
    if has("number_words", text):
        toks = number_words(toks)
    if has("letters", text):
        toks = letter_products(toks)
    toks = _plain_units(_mixed_numbers(_superscripts(_plain_words(_dashes(toks)))))
    if "|" in text:
        toks = bars(toks)
    return _shared_passes(toks, text, offset)


def _shared_passes(toks: list[Token], text: str, offset: int) -> list[Token]:
    """The notations both tokenizers read the same way (``faithsieve.mathtext.notations``), each
    only where the text may hold it."""
    if has("groups", text):
        toks = digit_groups(toks, text, offset)
    if "." in text and has("repeating", text):  # (every repeating decimal has its point)
        toks = repeating_decimals(toks)
    if has("commas", text):
        toks = arg_commas(toks)
    if ":" in text:
        toks = ratios(toks)
    return toks


_NOT_UNITS = {
    "dozen", "dozens", "hundred", "hundreds", "thousand", "thousands", "million", "millions", "billion", "score",
    "half", "halves", "quarter", "quarters", "third", "thirds", "fourth", "fifth", "times", "percent", "more",
    "less", "fewer", "than", "of", "and", "or", "is", "are", "was", "were", "to", "the", "in", "on", "at", "for",
    "by", "per", "each", "every", "so", "then", "which", "that", "gives", "makes", "equals", "plus", "minus",
    "st", "nd", "rd", "th", "am", "pm", "if", "as", "from", "with", "into", "total", "left", "remaining",
    # verbs and connectives that follow a number ("x = 3 yields -6 = 9"): never the number's unit
    "yields", "yield", "give", "get", "gets", "becomes", "become", "means", "implies", "leaves",
    "leave", "holds", "hold", "satisfies", "simplifies", "reduces", "has", "have", "does", "not", "but",
    "while", "since", "because", "hence", "thus", "therefore", "remainder", "rem",
}
_UNIT_FOLLOW = (OP, REL, "PCT")


def _is_unit_word(t: Token) -> bool:
    return t.kind == BREAK and t.value.isalpha() and t.value.isascii() and len(t.value) >= 2 and (
        t.value.lower() not in _NOT_UNITS)


def _plain_units(toks: list[Token]) -> list[Token]:
    """'12 shoes * $60/shoe = $720': a word right after a number, followed by an operator or a
    relation (or ending the formula), names a unit; it is set aside like ``\\text{...}`` units in
    LaTeX, so that the numbers form one formula and different units on two sides can be told."""
    out = list(toks)
    n = len(out)
    i = 0
    while i < n:
        t = out[i]
        if t.kind == NUM and i + 1 < n:
            j = i + 1
            # "60/shoe": a per-unit glued to the number
            if (j + 1 < n and out[j].kind == OP and out[j].value == "/" and not out[j].space_before
                    and _is_unit_word(out[j + 1]) and not out[j + 1].space_before):
                end = j + 2
                nxt = out[end] if end < n else None
                if nxt is None or nxt.kind in _UNIT_FOLLOW or (nxt.kind == BREAK and nxt.value in ".,;:!?\n"):
                    unit = "/" + out[j + 1].value.lower().rstrip("s")
                    out[j] = Token(UNIT, unit, out[j].start, out[j + 1].end, False)
                    del out[j + 1]
                    n -= 1
            elif _is_unit_word(out[j]) and out[j].space_before:
                end = j + 1
                word = out[j].value.lower().rstrip("s")
                words = [{"dollar": "$", "usd": "$", "buck": "$"}.get(word, word)]
                if end + 1 < n and out[end].kind == OP and out[end].value == "/" and _is_unit_word(out[end + 1]):
                    words.append("/" + out[end + 1].value.lower().rstrip("s"))
                    end += 2
                nxt = out[end] if end < n else None
                if nxt is None or nxt.kind in _UNIT_FOLLOW or (nxt.kind == BREAK and nxt.value in ".,;:!?\n"):
                    out[j : end] = [Token(UNIT, "".join(words), out[j].start, out[end - 1].end, True)]
                    n = len(out)
        i += 1
    return out


def _superscripts(toks: list[Token]) -> list[Token]:
    """'5²', 'x²', '(r + s)²', '10⁻²': a superscript run glued to an operand is its exponent, read
    exactly as '^N' (or '^-N'); anywhere else ('cm²' after a word that is not a letter, a superscript
    after a space) it stays a break. Its size is bounded where every exponent is (``max_exponent``)."""
    out: list[Token] = []
    for t in toks:
        if t.kind != SUP:
            out.append(t)
            continue
        prev = out[-1] if out else None
        if prev is None or t.space_before or prev.kind not in (NUM, VAR, CONST, RP, BANG):
            out.append(Token(BREAK, t.value, t.start, t.end, t.space_before))
            continue
        out.append(Token(POW, "^", t.start, t.start, False))
        digits = t.value.translate(SUPERSCRIPTS)
        if digits.startswith("-"):
            out.append(Token(OP, "-", t.start, t.start + 1, False))
            digits = digits[1:]
        out.append(Token(NUM, digits, t.end - len(digits), t.end, False))
    return out


def _bullets(text: str, offset: int, toks: list[Token], line_start: bool = True) -> list[Token]:
    """A '-', '*' or '+' opening a line and followed by a space is a list bullet, not an operator."""
    out = []
    for t in toks:
        if t.kind == OP and t.value in "-*+" and t.end - offset < len(text) and text[t.end - offset : t.end - offset + 1] == " ":
            nl = text.rfind("\n", 0, t.start - offset)
            if (nl >= 0 or line_start) and not text[nl + 1 : t.start - offset].strip():
                out.append(Token(BREAK, "\n", t.start, t.end, t.space_before))
                continue
        out.append(t)
    return out


def _dashes(toks: list[Token]) -> list[Token]:
    """'120 – 80' (spaced en/em dash between numbers) is a minus; '5–10' stays a range (a break)."""
    out = list(toks)
    for i in range(1, len(out) - 1):
        t = out[i]
        if t.kind == BREAK and t.value in ("–", "—") and t.space_before and out[i + 1].space_before and (
            out[i - 1].kind in (NUM, RP, PCT) and out[i + 1].kind in (NUM, LP)
        ):
            out[i] = Token(OP, "-", t.start, t.end, True)
    return out


def _mixed_numbers(toks: list[Token]) -> list[Token]:
    """``2 1/2`` (integer, space, simple fraction) is the mixed number 5/2."""
    out: list[Token] = []
    i = 0
    n = len(toks)
    while i < n:
        t = toks[i]
        if (
            t.kind == NUM and t.value.isdigit() and i + 3 < n
            and toks[i + 1].kind == NUM and toks[i + 1].space_before and toks[i + 1].value.isdigit()
            and toks[i + 2].kind == OP and toks[i + 2].value == "/" and not toks[i + 2].space_before
            and toks[i + 3].kind == NUM and toks[i + 3].value.isdigit() and not toks[i + 3].space_before
            and int(toks[i + 1].value) < int(toks[i + 3].value)
        ):
            out.append(Token(NUM, f"{t.value} {toks[i + 1].value}/{toks[i + 3].value}", t.start, toks[i + 3].end, t.space_before))
            i += 4
            continue
        out.append(t)
        i += 1
    return out


def _is_operand_end(t: Token | None) -> bool:
    return t is not None and t.kind in (NUM, VAR, CONST, RP, PCT, BANG)


def _approx_word(out: list[Token], t: Token, prev: Token | None, nxt: Token | None) -> None:
    """'= approximately 3', '2 about 3', 'is roughly 5': an approximation word joins the relation
    before it (or is one between an operand and a number); anywhere else it is a break."""
    if prev is not None and prev.kind == REL and prev.value == "=":
        out[-1] = Token(REL, "~", prev.start, t.end, prev.space_before)
    elif prev is not None and prev.kind == REL:
        out.append(Token(BREAK, t.value, t.start, t.end, t.space_before))
    elif nxt is not None and nxt.kind == NUM and _is_operand_end(prev):
        out.append(Token(REL, "~", t.start, t.end, True))
    elif prev is not None and prev.kind == "WORD_IS" and nxt is not None and nxt.kind == NUM:
        out[-1] = Token(REL, "~", prev.start, t.end, True)
    else:
        out.append(Token(BREAK, t.value, t.start, t.end, t.space_before))


def _plain_function(lw: str, nxt: Token | None) -> bool:
    """A function name applied in plain text: ``cos(0)``, ``gcd(12, 18)``, and ``sin 30°``, ``sin π``,
    ``cos x`` (a trigonometric function before a number, π or a letter is applied to it)."""
    if nxt is None:
        return False
    if lw in _PLAIN_FUNCS and nxt.kind == LP and not nxt.space_before:
        return True
    return lw in _TRIG_WORDS and nxt.space_before and (
        nxt.kind in (NUM, CONST) or (nxt.kind == "WORD" and len(nxt.value) == 1))


def _plain_words(toks: list[Token]) -> list[Token]:
    """Resolve words in plain text: variables, 'x' as times, 'of', 'equals', 'approximately'."""
    out: list[Token] = []
    n = len(toks)
    for i, t in enumerate(toks):
        if t.kind != "WORD":
            out.append(t)
            continue
        w = t.value
        lw = w.lower()
        prev = out[-1] if out else None
        nxt = toks[i + 1] if i + 1 < n else None
        nxt2 = toks[i + 2] if i + 2 < n else None
        if _plain_function(lw, nxt):
            out.append(Token(FUNC, lw, t.start, t.end, t.space_before))
        elif lw == "x" and prev is not None and prev.kind == NUM and nxt is not None and nxt.kind == NUM and t.space_before:
            out.append(Token(OP, "*", t.start, t.end, True))
        elif lw in _OP_WORDS and _is_operand_end(prev) and nxt is not None and nxt.kind in (NUM, LP):
            # "8 times 3", "12 plus 5", "10 minus 4"
            out.append(Token(OP, _OP_WORDS[lw], t.start, t.end, True))
        elif (lw in ("divided", "multiplied") and _is_operand_end(prev) and nxt is not None and nxt.kind == "WORD"
              and nxt.value.lower() == "by" and nxt2 is not None and nxt2.kind in (NUM, LP)):
            out.append(Token(OP, "/" if lw == "divided" else "*", t.start, nxt.end, True))
        elif lw == "by" and out and out[-1].kind == OP and out[-1].end == t.end:
            continue  # the "by" of "divided by", already folded into the operator
        elif lw == "of" and prev is not None and prev.kind in (PCT, RP, NUM) and nxt is not None and nxt.kind == NUM:
            # "25% of 80", "1/3 of 18": multiplication
            out.append(Token(OP, "*", t.start, t.end, True))
        elif lw in ("mod", "modulo") and _is_operand_end(prev) and nxt is not None and nxt.kind == NUM:
            out.append(Token(OP, "mod", t.start, t.end, True))
        elif lw in _REL_WORDS and _is_operand_end(prev):
            out.append(Token(REL, "=", t.start, t.end, True))
        elif lw in _APPROX_WORDS:
            _approx_word(out, t, prev, nxt)
        elif lw == "is" and _is_operand_end(prev):
            # kept provisionally: becomes "~" before "approximately", else a break
            out.append(Token("WORD_IS", w, t.start, t.end, t.space_before))
        elif len(w) == 1 and w not in "aAI":
            out.append(Token(VAR, w, t.start, t.end, t.space_before))
        elif len(w) == 1:
            # article/pronoun unless it sits between operators
            adj_op = (prev is not None and prev.kind in (OP, REL, POW, LP)) or (
                nxt is not None and nxt.kind in (OP, REL, POW)
            )
            out.append(Token(VAR if adj_op else BREAK, w, t.start, t.end, t.space_before))
        else:
            out.append(Token(BREAK, w, t.start, t.end, t.space_before))
    return [Token(BREAK, t.value, t.start, t.end, t.space_before) if t.kind == "WORD_IS" else t for t in out]


def tokenize_latex(text: str, offset: int = 0) -> list[Token]:
    """Tokens of LaTeX text (spans shifted by ``offset``)."""
    return _LatexReader(text, offset).run()


_LATEX_SYMBOLS: dict[str, tuple[str, str]] = {
    **_UNI_OPS,
    "}": (RB, "}"), "_": (SUB, "_"), "|": (BAR, "|"), "[": (LP, "["), "]": (RP, "]"),
}
"""What a one-character symbol is in LaTeX (``{``, ``&`` and ``$`` are read by
:meth:`_LatexReader._group_or_gap`); anything else is a break."""


_BASE_SUBSCRIPT = re.compile(r"_(?:\{\s{0,2}(\d{1,2})\s{0,2}\}|(\d)(?!\d))")
"""A base written as a subscript right after a numeral (``_7``, ``_{10}``)."""


def based_numeral(digits: str, base: int) -> bool:
    """``digits`` (plain digits, at most one point) is a numeral in ``base`` (2 to 10): each digit below the base."""
    body = digits.replace(".", "", 1)
    return 2 <= base <= 10 and body.isdigit() and all(int(c) < base for c in body)


class _LatexReader:
    """One walk over the LaTeX raw pass. The loop reads the common tokens (letters, numbers,
    operator commands, symbols); each command family and the brace/alignment symbols have a
    method, which returns where to go on and whether a space stands before the next token."""

    __slots__ = ("letters", "n", "offset", "pending_currency", "scripts_end", "text", "toks")

    def __init__(self, text: str, offset: int) -> None:
        self.text = text
        self.n = len(text)
        self.offset = offset
        self.toks: list[Token] = []
        self.letters: list[Token] = []
        """Letters read since the last other token: a run of several is a word (flag "m")."""
        self.pending_currency = False
        self.scripts_end = -1
        """The end of the scripts of the last ``\\lim`` or ``\\int`` read: an arrow or ``\\infty`` before it is theirs."""

    def run(self) -> list[Token]:
        text, n, offset, toks, letters = self.text, self.n, self.offset, self.toks, self.letters
        match = _LATEX.match
        space = False
        i = 0
        while i < n:
            m = match(text, i)
            assert m is not None
            kind = m.lastgroup
            v = m.group()
            s, e = m.start() + offset, m.end() + offset
            i = m.end()
            if kind == WORD:
                if letters and space:
                    self.flush_letters()
                if i < n and text[i] == "'":
                    v, i = _primed(text, i, v)  # n' (a primed name) is its own variable
                    e = i + offset
                letters.append(Token(VAR, v, s, e, space))
                space = False
                continue
            if letters:
                self.flush_letters()
            if kind == SPACE:
                space = True
                continue
            if kind == NUMBER:
                based = _BASE_SUBSCRIPT.match(text, i)
                base = int(based.group(1) or based.group(2)) if based is not None else 0
                if based is not None and based_numeral(v, base):
                    v, i = f"{v}_{base}", based.end()
                    e = i + offset  # "1202_7", "441_{10}": a numeral with its base written under it
                toks.append(Token(NUM, v.replace("{,}", ","), s, e, space))
                if self.pending_currency:
                    toks.append(Token(UNIT, "$", e, e, False))
                    self.pending_currency = False
            elif kind == "cmd":
                hit = _LATEX_CMDS.get(v)
                if hit is None:
                    i, space = self._command(v, s, e, i, space)
                    continue
                toks.append(Token(hit[0], hit[1], s, e, space))
            elif v in "{&$":
                i, space = self._group_or_gap(v, s, e, i, space)
                continue
            elif v == "'" and not space and toks and toks[-1].kind == RP and toks[-1].value != "floor" and (
                    toks[-1].value != "ceil"):
                toks.append(Token(PRIME, "'", s, e, False))  # (x^5)': the derivative of the bracket
            else:
                k, val = _LATEX_SYMBOLS.get(v) or (BREAK, v)
                toks.append(Token(k, val, s, e, space))
            space = False
        if letters:
            self.flush_letters()
        return _shared_passes(toks, text, offset)

    def flush_letters(self) -> None:
        letters = self.letters
        if len(letters) > 1:
            self.toks.extend(Token(VAR, t.value, t.start, t.end, t.space_before, "m") for t in letters)
        else:
            self.toks.extend(letters)
        letters.clear()

    def _command(self, v: str, s: int, e: int, i: int, space: bool) -> tuple[int, bool]:
        """A command that is not an operator, relation, function or bracket of ``_LATEX_CMDS``."""
        if v in _LATEX_SKIP:
            return self._skipped(v, i, space)
        if v in _LATEX_DROP_ARG:
            return self._text_argument(v, s, e, i, space)
        toks = self.toks
        if v in _CALCULUS_OPERATORS:
            # \int_0^1 f(x)\,dx, \lim_{x \to 0} f(x): a calculus value, its scripts read by the parser
            self.scripts_end = _after_scripts(self.text, i)
            toks.append(Token(FUNC, _CALCULUS_OPERATORS[v], s, e, space))
            return i, False
        if i <= self.scripts_end and (v in _ARROWS or v == r"\infty"):
            toks.append(Token(TO if v in _ARROWS else INF, v, s, e, space))
            return i, False
        if v in _BIG_OPERATORS:
            # \int_0^1, \lim_{x \to 0}, \max_{i}: the limits name a bound variable's range, never a fact
            stop = _after_scripts(self.text, i)
            toks.append(Token(BREAK, v, s, stop + self.offset, space))
            return stop, True
        if v[1:] in _GREEK:
            toks.append(Token(VAR, v[1:], s, e, space))
        elif v == r"\circ" and toks and toks[-1].kind == POW:
            # degrees: x^\circ is a postfix degree mark
            toks[-1] = Token(DEG, "deg", s, e, False)
            return i, space
        else:
            toks.append(Token(BREAK, v, s, e, space))
        return i, False

    def _skipped(self, v: str, i: int, space: bool) -> tuple[int, bool]:
        r"""Spacing, sizing and style commands: no token (``\hspace{..}``, ``\phantom{..}`` drop
        their argument; ``\$`` before a number is its currency)."""
        text, n = self.text, self.n
        if v == r"\left" and i < n and text[i] == ".":
            self.toks.append(Token(LEVAL, ".", i - 5 + self.offset, i + 1 + self.offset, space))
            return i + 1, False  # \left. F \right|_{x=a}: an evaluation bracket
        if v == r"\right" and i < n and text[i] == "|" and text[i + 1 : i + 4].lstrip().startswith("_") and any(
                t.kind == LEVAL for t in self.toks):
            self.toks.append(Token(EVALBAR, "|", i - 6 + self.offset, i + 1 + self.offset, space))
            return i + 1, False
        if v in _BAR_SIZES and i < n and text[i] == "|" and text[i + 1 : i + 4].lstrip().startswith("_") and sum(
                t.kind == BAR for t in self.toks) % 2 == 0:
            # F \Big|_{x=a}, F \bigg|_0^1: an evaluation bar (a sized bar that closes no |...| pair)
            self.toks.append(Token(EVALBAR, "|", i - len(v) + self.offset, i + 1 + self.offset, space))
            return i + 1, False
        if v in (r"\hspace", r"\phantom") and i < n and text[i] == "{":
            end = brace_group_end(text, i)
            i = end if end > 0 else n
        if v == r"\$" and i < n and (text[i].isdigit() or text[i] == "."):
            self.pending_currency = True
        if v == r"\," and self.toks and self.toks[-1].kind == NUM:
            m = _THIN_SPACE_UNIT.match(text, i)
            if m is not None:
                # "0.2 \, V", "5\,cm": a thin space between a number and a unit symbol that ends
                # the member is how a quantity is typeset (the SI convention); the unit is kept
                # aside, never a factor
                u = m.group(1)
                self.toks.append(Token(UNIT, u if len(u) == 1 else u.lower(), m.start(1) + self.offset,
                                       m.end(1) + self.offset, True))
                return m.end(1), True
        # sizing commands (\left, \big) keep "f\left(x\right)" a function call
        return i, space or v not in _SIZING

    def _text_argument(self, v: str, s: int, e: int, i: int, space: bool) -> tuple[int, bool]:
        r"""``\text{...}`` and its kin: "of" and "mod" are operators, a word after a number is its
        unit, anything else ends the formula."""
        text, n, toks = self.text, self.n, self.toks
        if not (i < n and text[i] == "{"):
            toks.append(Token(BREAK, v, s, e, space))
            return i, False
        end = brace_group_end(text, i)
        if end < 0:
            toks.append(Token(BREAK, v, s, e, space))
            return n, space
        inner = text[i + 1 : end - 1]
        word = inner.strip()
        prev = toks[-1] if toks else None
        stop = end + self.offset
        if word.lower() == "of" and prev is not None and prev.kind in (NUM, PCT, RP, RB):
            toks.append(Token(OP, "*", s, stop, True))
        elif word.lower() in MULTI_ARG or word in _NAMED_FUNCS:
            toks.append(Token(FUNC, _NAMED_FUNCS.get(word, word.lower()), s, stop, space))  # \operatorname{lcm}
            return end, False
        elif word == "d" and v in (r"\mathrm", r"\text", r"\operatorname"):
            toks.append(Token(VAR, "d", s, stop, space))  # \mathrm{d}x: the differential's d
            return end, False
        elif word.lower() in _REMAINDER_WORDS:
            # "13 = 4 \text{ remainder } 1": the member before it is a quotient, not a value
            toks.append(Token(BREAK, "remainder", s, stop, space))
        elif word.lower() in ("mod", "modulo"):
            toks.append(Token(OP, "mod", s, stop, True))
        elif not word or word in ("s", "."):
            pass
        else:
            after_number = prev is not None and prev.kind in (NUM, RP, PCT, RB) and not self.letters
            words = {w.lower() for w in re.findall(r"[A-Za-z]+", inner[:200])}
            if not after_number or words & _TEXT_BREAK_WORDS or any(c in inner for c in ",;:'"):
                # a quantity named in words, or prose: the formula stops here
                toks.append(Token(BREAK, "\\text", s, stop, space))
            else:
                # a unit after a number (``5 \text{ cm}``): kept aside, not part of the value
                toks.append(Token(UNIT, word.lower().rstrip("s"), s, stop, space))
        return end, True

    def _group_or_gap(self, v: str, s: int, e: int, i: int, space: bool) -> tuple[int, bool]:
        r"""``{`` (a group, or the degree mark of ``^{\circ}``), or an alignment ``&`` / math ``$``
        (a space)."""
        if v != "{":
            return i, True
        toks = self.toks
        if toks and toks[-1].kind == POW and self.text.startswith("\\circ}", i):
            toks[-1] = Token(DEG, "deg", s, e + len("\\circ}"), False)
            return i + len("\\circ}"), space
        toks.append(Token(LB, "{", s, e, space))
        return i, False


def _primed(text: str, i: int, v: str) -> tuple[str, int]:
    """The letter ``v`` with the primes from ``text[i]`` on (``n''``), and the index after them."""
    n = len(text)
    while i < n and text[i] == "'":
        v += "'"
        i += 1
    return v, i
