"""Notation the text leaves open, and refutations that depend on a guess.

Some notations have more than one meaning in common use: ``log 100`` is base 10 in school
texts and base e in analysis; ``sin 30`` is degrees when the sign is dropped; ``2^3^2`` is read
either way round when typed without braces; ``[x]`` is floor (Gauss bracket) in olympiad
texts and a parenthesis elsewhere. A claim is refuted only when it is false under *every*
reading in common use (``readings``); and a claim whose refutation rests on something the
sieve had to guess without a second reading to try (a unit whose exponent may have been
read onto a number, a number cut out of a longer one) is recorded ``unknown`` with the
ambiguity as its reason (``ambiguity`` with no readings).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction

from faithsieve.obligations.extraction.conventions import (
    CONVENTION_TRIGGER,
    convention_guess,
    convention_texts,
)
from faithsieve.obligations.kinds.models import (
    Obligation,
    Outcome,
    Refuted,
    Unknown,
    Verified,
)

from faithsieve.mathtext.ast import (
    BinOp,
    Call,
    Const,
    Expr,
    Num,
    Pow,
    Rel,
    Var,
    map_nodes,
    nodes,
    variables,
    walk,
)
from faithsieve.mathtext.cues import by_identity, words_absent
from faithsieve.mathtext.formulas import Formula, extract_formulas

_TRIG = frozenset({"sin", "cos", "tan"})
_TOWER = re.compile(r"\^\s*(?:\w{1,6}|\([^()]{1,20}\))\s*\^")
_BRACKETS = re.compile(r"(?<!\\)\[|\\left\s*\[|\\lbrack")  # not "\\[" (display math)
_EVALUATION_BRACKET = re.compile(r"(?:\\left\s{0,3})?\[[^\[\]]{0,200}?(?:\\right\s{0,3})?\]\s{0,3}_")
"""``\\left[x^3\\right]_0^2``: a bracket closed right before a subscript is an antiderivative evaluated
between bounds, never a floor."""
_UNIT_POWER = re.compile(r"(?i)(?:\\(?:text|mathrm|mbox)\s*\{\s*(?:sq\.?\s*)?[a-z]{1,6}\.?\s*\}|(?<![a-z\\])(?:cm|mm|km|in|ft|yd|mi|"
                         r"units?|meters?|feet|inch(?:es)?)(?![a-z])|(?:(?<=\d)|(?<=\d[ \t]))m(?![a-z]))\s*(?:\^|²|³)")
"""A unit with an exponent (``25 m^2``, ``\\text{cm}^2``); the one letter ``m`` only right after a number:
``(m + n)^2 = m^2 + mn + n^2`` computes with a letter."""
# a list member: "..., (5-2)" before the relation (no relation there) and ", -2, ..." (a bare number, then
# another separator) after it; "2 + 3 = 5, 5 + 4 = 9, 9 + 1 = 10" is a run of computations, not a list
_LIST_BEFORE = re.compile(r"[\w)\]}][ \t]{0,2},[ \t]{0,2}\Z")
_LIST_AFTER = re.compile(r"[ \t]{0,2},[ \t]{0,2}[-−]?[ \t]{0,2}\d{1,12}(?:\.\d{1,12})?[ \t]{0,2}(?:,|\Z|\.(?!\d)|;)")
# "in binary, 1 + 1 = 10", "in base 8: 7 + 1 = 10"; after the formula: "5 + 1 + 1 = 6 in base b"
_BASE_BEFORE = re.compile(r"(?i)\bin[ \t]{1,3}(?:base[ \t-]{0,3}(?:\$|\\\()?[ \t]{0,3}(\d{1,2}|[a-z])\b|(binary|octal|ternary|hexadecimal|hex)\b)")
_BASE_WORDS = {"binary": 2, "ternary": 3, "octal": 8, "hexadecimal": 16, "hex": 16}
_BASE_AFTER = re.compile(r"(?i)(?:\$|\\\))?[ \t]{0,3}[,(]?[ \t]{0,3}in[ \t]{1,3}(?:base[ \t-]{0,3}(?:\$|\\\()?[ \t]{0,3}(?:\d{1,2}|[a-z])\b|"
                         r"(?:binary|octal|ternary|hexadecimal|hex)\b)")
MAX_DOUBLE_FACTORIAL = 400
MAX_MODULUS = 10**6
_Z = r"(?:\\mathbb\s{0,2}\{?\s{0,2}Z\s{0,2}\}?|\\Bbb\s{0,2}\{?Z\}?|ℤ|Z)"
# a computation said to take place modulo n, before the formula: "In Z_5,", "in \mathbb{Z}/7\mathbb{Z}", "Modulo 7,",
# "working mod 7:", "over GF(2)", "in \mathbb{F}_5", "in mod 12 arithmetic"
_MODULUS_BEFORE = re.compile(
    r"(?i)(?:\b(?:in|over)[ \t]{1,3}(?:the[ \t]{1,3}(?:group|ring|field)[ \t]{1,3})?(?:\$|\\\()?[ \t]{0,2}(?:"
    + _Z + r"[ \t]{0,2}(?:_[ \t]{0,2}\{?[ \t]{0,2}(\d{1,7})[ \t]{0,2}\}?|/[ \t]{0,2}(\d{1,7})[ \t]{0,2}" + _Z + r")"
    r"|GF[ \t]{0,2}\([ \t]{0,2}(\d{1,7})[ \t]{0,2}\)|\\mathbb[ \t]{0,2}\{?[ \t]{0,2}F[ \t]{0,2}\}?[ \t]{0,2}_[ \t]{0,2}\{?(\d{1,7})\}?"
    r"|mod(?:ulo)?[ \t]{1,3}(\d{1,7})[ \t]{1,3}arithmetic)"
    r"|\b(?:working[ \t]{1,3})?(?:modulo|mod)[ \t]{1,3}(\d{1,7})[ \t]{0,2}[,:])[^.;]{0,160}\Z")
_MODULUS_HINT = re.compile(r"(?i)mod|GF|Z|ℤ|\\mathbb")
MAX_READINGS = 4

# Words one of which every match contains, lower-cased: on ASCII text without any of them the pattern
# is not run (``mathtext.cues.words_absent``; why that is exact is said at ``CUE_WORDS`` there).
# ``^`` is the one ASCII way to write the exponent a unit power ends with (² and ³ make the text non-ASCII).
READING_WORDS: dict[re.Pattern[str], tuple[str, ...]] = {
    _BASE_BEFORE: ("base", "binary", "octal", "ternary", "hex"),
    _BASE_AFTER: ("base", "binary", "octal", "ternary", "hex"),
    _UNIT_POWER: ("^",),
}


_WORDS_OF = by_identity(READING_WORDS)  # looked up by id: see ``by_identity``


def _search(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """``pattern.search(text)`` (a key of ``READING_WORDS``), skipped when its words show it cannot match."""
    return None if words_absent(text, _WORDS_OF[id(pattern)]) else pattern.search(text)


def _match(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """``pattern.match(text)``, skipped likewise (a match is a search hit)."""
    return None if words_absent(text, _WORDS_OF[id(pattern)]) else pattern.match(text)
_TRIGGER = re.compile(r"log|sin|cos|tan|\^|\[|\\lbrack|!=|mod|°|circ|!!")
# glued to what precedes it: a short plain name ("f(", "S"; not a command such as \left or \boxed), "}(" / ")(",
# a power or index, a factorial, a closing brace ("\frac{1}{2}(4)"), or an operator ("36 \cdot (-1) = ...")
_GLUED_BEFORE = re.compile(r"(?:(?<![\\A-Za-z])[A-Za-z]{1,3}\(?|[0-9})]\(|[\^_!]|\}|(?:\\times|\\cdot|\\div|[×·*/+])[ \t]{0,2})\Z")
# "\binom{4}{2} (1/2)^4 = ...": the formula read starts after a command's argument groups, a factor before it
# "3 : 4 = 6 : 8" read as "4 = 6": a ratio written with spaces (not "Step 3: ...", whose colon follows the number)
_RATIO_BEFORE = re.compile(r"\d[ \t]{1,2}:[ \t]{0,2}\Z")
_RATIO_AFTER = re.compile(r"[ \t]{0,2}:[ \t]{0,2}\d")
# "2^{10} − 1 = 1023" in plain text read as "− 1 = 1023": a power or index group right before the formula
_GROUP_BEFORE = re.compile(r"[\^_]\{[^{}]{0,12}\}[ \t]{0,2}\Z")
_COMMAND_BEFORE = re.compile(r"\\(?:[dt]?binom|[dt]?frac|sqrt|overline|bar|hat|vec)(?:\{[^{}]{0,40}\}){1,2}[ \t]{0,2}\Z")
_FUNCTION_BEFORE = re.compile(r"(?<![A-Za-z])\\?(?:sin|cos|tan|cot|sec|csc|log|ln|exp|sqrt|arcsin|arccos|arctan)"
                              r"(?:_\{?[\w.]{1,6}\}?)?[ \t]{0,2}\Z")  # "log_{10} 0.01 = -2" read as "0.01 = -2"
_OPERATOR_AFTER = re.compile(r"[ \t]{0,3}(?:\\times|\\cdot|\\div|×|·|\*|/|\^|\+)")


def _rel_map(r: Rel, f: Callable[[Expr], Expr]) -> Rel:
    return Rel(map_nodes(r.lhs, f), r.op, map_nodes(r.rhs, f))


def _nodes(r: Rel) -> list[Expr]:
    return nodes(r.lhs) + nodes(r.rhs)


def _log_base(base: int) -> Callable[[Expr], Expr]:
    def f(e: Expr) -> Expr:
        if isinstance(e, Call) and e.fn == "log" and len(e.args) == 1:
            return BinOp("/", e, Call("log", (_num(base),)))
        return e
    return f


def _num(n: int) -> Num:
    return Num(Fraction(n), str(n), 0)


def _degrees(e: Expr) -> Expr:
    if isinstance(e, Call) and e.fn in _TRIG and len(e.args) == 1:
        arg = e.args[0]
        if not any(isinstance(n, Const) and n.name == "pi" or isinstance(n, Call) and n.fn == "deg" for n in walk(arg)):
            return Call(e.fn, (Call("deg", (arg,)),))
    return e


def _radians(e: Expr) -> Expr:
    if isinstance(e, Call) and e.fn == "deg" and len(e.args) == 1:
        return BinOp("*", e.args[0], BinOp("/", Const("pi"), _num(180)))
    return e


def _left_tower(e: Expr) -> Expr:
    if isinstance(e, Pow) and isinstance(e.exponent, Pow):
        return Pow(Pow(e.base, e.exponent.base), e.exponent.exponent)
    return e


def _stated_base(f: Formula) -> int | None:
    """The base the sentence before the formula says its numerals are written in (2..16, not 10)."""
    sentence = f.lead_sentence
    m = _search(_BASE_BEFORE, sentence)
    if m is None:
        return None
    word = (m.group(1) or m.group(2) or "").lower()
    base = _BASE_WORDS.get(word) or (int(word) if word.isdigit() else None)
    return base if base is not None and 2 <= base <= 16 and base != 10 else None


def _in_base(base: int) -> Callable[[Expr], Expr]:
    def f(e: Expr) -> Expr:
        if isinstance(e, Num) and e.text.isdigit():
            try:
                return Num(Fraction(int(e.text, base)), e.text, 0)
            except ValueError:  # a digit the base does not have: this reading does not apply
                raise _NotThisReading from None
        if isinstance(e, Num):
            raise _NotThisReading
        return e
    return f


class _NotThisReading(Exception):
    """A reading that does not apply to the formula (a digit the stated base lacks)."""


def _double_factorial(e: Expr) -> Expr:
    """``n!!`` read as the double factorial ``n(n-2)(n-4)...`` (a literal n up to MAX_DOUBLE_FACTORIAL)."""
    if isinstance(e, Call) and e.fn == "factorial" and isinstance(e.args[0], Call) and e.args[0].fn == "factorial":
        n = e.args[0].args[0]
        if not isinstance(n, Num) or n.value.denominator != 1 or not 0 <= n.value <= MAX_DOUBLE_FACTORIAL:
            raise _NotThisReading
        out: Expr = _num(1)
        for k in range(int(n.value), 1, -2):
            out = BinOp("*", out, _num(k))
        return out
    return e


def _stated_modulus(f: Formula) -> int | None:
    """The modulus the sentence before the formula says it computes in ("in Z_5", "modulo 7,", "over GF(2)").

    The phrase scopes over the rest of its sentence, earlier formulas included ("In Z_5, 3 + 4 = 2 and
    2 + 4 = 1"): a second reading can only keep a claim from being refuted, never refute one."""
    sentence = f.sentence_before[-200:]
    m = _MODULUS_BEFORE.search(sentence)
    if m is None:
        return None
    n = int(next(g for g in m.groups() if g))
    return n if 2 <= n <= MAX_MODULUS else None


def _trailing_mod(e: Expr) -> tuple[Expr, Expr] | None:
    """``b mod n`` ending an expression (``a + b mod n`` included): what precedes ``mod n``, and ``n``."""
    if isinstance(e, BinOp) and e.op == "mod" and isinstance(e.right, Num):
        return e.left, e.right
    if isinstance(e, BinOp) and e.op in ("+", "-"):
        inner = _trailing_mod(e.right)
        if inner is not None:
            return BinOp(e.op, e.left, inner[0]), inner[1]
    return None


def _congruence(r: Rel, f: Formula, link: int) -> Rel | None:
    """``a = b mod n`` read as the congruence ``a ≡ b (mod n)``: ``a mod n = b mod n``.

    A ``mod n`` written after the last member of a chain qualifies the whole chain
    (``2^5 = 32 = 10 mod 11``), so every link of it is re-read modulo ``n``."""
    if r.op != "=":
        return None
    tail = _trailing_mod(f.chain.exprs[-1])
    if tail is None:
        return None
    n = tail[1]
    rhs = r.rhs
    last = _trailing_mod(rhs) if link == len(f.chain.rels) - 1 else None
    if last is not None:
        rhs = last[0]
    return Rel(BinOp("mod", r.lhs, n), "=", BinOp("mod", rhs, n))


def _bracket_link(f: Formula, link: int, fn: str) -> Rel | None:
    """The formula re-read with ``[...]`` as floor (or ceiling) brackets; its ``link``-th relation."""
    text = f.text
    if f.latex:
        text = re.sub(r"\\left\s*\[|\\lbrack|(?<!\\)\[", r"\\l" + fn + " ", text)
        text = re.sub(r"\\right\s*\]|\\rbrack|(?<!\\)\]", r" \\r" + fn + " ", text)
    else:
        text = text.replace("[", f"{fn}(").replace("]", ")")
    return _reparsed_link(text, f.latex, len(f.chain.rels), link)


def notation_written(f: Formula) -> bool:
    """Some notation ``notation_readings`` re-reads may be written in or before ``f``: when not, it finds
    no reading for any relation of ``f`` (a property of the formula alone, so callers may ask once per formula)."""
    return bool(_TRIGGER.search(f.text) or _search(_BASE_BEFORE, f.lead) or _MODULUS_HINT.search(f.sentence_before)
                or CONVENTION_TRIGGER.search(f.text))


def notation_readings(r: Rel, f: Formula, link: int) -> tuple[tuple[Rel, ...], str]:
    """Other readings of ``r`` (the ``link``-th relation of ``f``) in common use, and what is ambiguous."""
    if not notation_written(f):
        return (), ""  # none of the notations below is written: nothing to re-read
    return written_readings(r, f, link)


def written_readings(r: Rel, f: Formula, link: int) -> tuple[tuple[Rel, ...], str]:
    """``notation_readings`` for a formula already known to satisfy ``notation_written`` (a caller that
    asks that once per formula need not have it asked again for every relation)."""
    nodes = _nodes(r)
    calls = [n for n in nodes if isinstance(n, Call)]  # the checks below that ask about calls look only here
    readings: list[Rel] = []
    why: list[str] = []
    _symbol_readings(r, f, link, nodes, calls, readings, why)
    _context_readings(r, f, link, calls, readings, why)
    return tuple(readings[:MAX_READINGS]), "; ".join(why)


def _symbol_readings(r: Rel, f: Formula, link: int, nodes: list[Expr], calls: list[Call],
                     readings: list[Rel], why: list[str]) -> None:
    """``written_readings`` of the symbols themselves: ``log``, angles, degrees beside pi, towers of
    powers, square brackets (appended to ``readings``, with what is ambiguous to ``why``)."""
    if any(n.fn == "log" and len(n.args) == 1 for n in calls):
        readings += [_rel_map(r, _log_base(10)), _rel_map(r, _log_base(2))]
        why.append("'log' without a base (base e, 10 or 2)")
    if any(n.fn in _TRIG for n in calls) and _rel_map(r, _degrees) != r:
        readings.append(_rel_map(r, _degrees))
        why.append("an angle without a unit (radians or degrees)")
    if (any(n.fn == "deg" for n in calls)
            and any(isinstance(n, Const) and n.name == "pi" for n in nodes)):
        readings.append(_rel_map(r, _radians))
        why.append("degrees beside a multiple of pi (a conversion to radians, or a plain number)")
    if _TOWER.search(f.text) and any(isinstance(n, Pow) and isinstance(n.exponent, Pow) for n in nodes):
        readings.append(_rel_map(r, _left_tower))
        why.append("a^b^c without braces (a^(b^c) or (a^b)^c)")
    if _BRACKETS.search(_EVALUATION_BRACKET.sub("", f.text)) and not variables(r.lhs) | variables(r.rhs):
        for fn in ("floor", "ceil"):
            alt = _bracket_link(f, link, fn)
            if alt is not None:
                readings.append(alt)
        why.append("square brackets (grouping, or the floor/ceiling function)")


def _context_readings(r: Rel, f: Formula, link: int, calls: list[Call],
                      readings: list[Rel], why: list[str]) -> None:
    """``written_readings`` that the words around the formula or its neighbouring characters call
    for: a stated base, ``n!!``, a stated modulus, ``= ... mod n``, ``!=`` after a number."""
    base = _stated_base(f) if _search(_BASE_BEFORE, f.lead) else None
    if base is not None:
        try:
            readings.append(_rel_map(r, _in_base(base)))
            why.append(f"numerals after 'in base {base}' (base ten, or base {base})")
        except _NotThisReading:
            pass  # a digit base {base} lacks, or a decimal point: base ten is the only reading
    if "!!" in f.text and any(n.fn == "factorial" and isinstance(n.args[0], Call)
                              and n.args[0].fn == "factorial" for n in calls):
        try:
            readings.append(_rel_map(r, _double_factorial))
            why.append("'n!!' (the double factorial, or the factorial of n!)")
        except _NotThisReading:
            pass
    modulus = _stated_modulus(f) if r.op == "=" and _MODULUS_HINT.search(f.sentence_before) else None
    if modulus is not None:
        n = _num(modulus)
        readings.append(Rel(BinOp("mod", r.lhs, n), "=", BinOp("mod", r.rhs, n)))
        why.append(f"a computation the text places modulo {modulus} (in the integers, or modulo {modulus})")
    congruence = _congruence(r, f, link) if "mod" in f.text else None
    if congruence is not None:
        readings.append(congruence)
        why.append("'= ... mod n' (an equation whose right side is reduced, or a congruence modulo n)")
    if r.op == "!=" and re.search(r"\d\s?!=", f.text):
        alt = _reparsed_link(f.text.replace("!=", "! ="), f.latex, len(f.chain.rels), link)
        if alt is not None:
            readings.append(alt)
            why.append("'!=' after a number (a factorial followed by '=', or 'not equal')")
    if CONVENTION_TRIGGER.search(f.text):
        _convention_readings(r, f, link, readings, why)


def _convention_readings(r: Rel, f: Formula, link: int, readings: list[Rel], why: list[str]) -> None:
    """The readings of a way of writing (``obligations.extraction.conventions``: ``6!/3!3!``, ``0.5(20)``, a word
    operator after the last value), each the formula written out that way and parsed again."""
    for text, what in convention_texts(f.text, f.latex):
        alt = _reparsed_link(text, f.latex, len(f.chain.rels), link)
        if alt is not None and alt != r:
            readings.append(alt)
            why.append(what)

def _reparsed_link(text: str, latex: bool, n_rels: int, link: int) -> Rel | None:
    fs = extract_formulas(f"${text}$" if latex else text)
    if len(fs) != 1 or len(fs[0].chain.rels) != n_rels:
        return None
    links = fs[0].chain.links()
    return Rel(*links[link]) if 0 <= link < len(links) else None


_MULTI_DIGIT = re.compile(r"(?<![\d.])\d{2,}")
_CUT_THOUSANDS_BEFORE = re.compile(r"\d(?:,\\!|\{,\}|[:,])$")
_CUT_THOUSANDS_AFTER = re.compile(r"(?:,\\!|\{,\})\d|[:]\d|,\d{3}(?!\d)")
_DIGIT_BEFORE = re.compile(r"[\d.]$")
_DIGIT_AFTER = re.compile(r"\d")
_OPEN_BEFORE = re.compile(r"\([ \t]{0,2}\Z")
_CLOSE_AFTER = re.compile(r"\s{0,2}\)")
_VALUE_AT = re.compile(r"(?i)\b(?:at|for|when|with)[ \t]{1,3}(?:\$|\\\()?[ \t]{0,3}\Z")


def _is_value(link: tuple[Expr, str, Expr]) -> bool:
    lhs, op, rhs = link
    return op == "=" and isinstance(lhs, Var) and not variables(rhs)


def guessed_reading(f: Formula, text_before: str, text_after: str) -> str:
    """What a refutation of this formula would rest on that the text does not fix ("" if nothing)."""
    base_before = _search(_BASE_BEFORE, f.lead_sentence)
    multi_digit = _MULTI_DIGIT.search(f.text) is not None  # a single digit means the same in every base
    if multi_digit and (_match(_BASE_AFTER, text_after) or base_before is not None and _stated_base(f) is None and (
            base_before.group(1) or "").isalpha()):
        return "numerals in a base the text names but does not fix (a letter base, or a base named after the formula)"
    if len(f.chain.rels) > 1 and _VALUE_AT.search(f.lead[-16:]) and _is_value(f.chain.links()[0]):
        # "the derivative is 3x^2, which at x = 2 equals 12": the 12 is the subject's value, not x's
        return "a value condition ('at x = 2') followed by what something else equals there"
    if _search(_UNIT_POWER, f.text) or _match(_UNIT_POWER, text_after.lstrip()[:20] + " "):
        return "a unit with an exponent: the power may belong to the unit, not the number"
    before, after = text_before[-4:], text_after[:4]
    if _CUT_THOUSANDS_BEFORE.search(before) or _CUT_THOUSANDS_AFTER.match(after):
        return "a number cut out of a longer one (thousands separator, time or ratio)"
    if _DIGIT_BEFORE.search(before) or _DIGIT_AFTER.match(after):
        return "a number cut out of a longer expression"
    if _RATIO_BEFORE.search(text_before) or _RATIO_AFTER.match(text_after):
        return "a number cut out of a longer one (a ratio 'a : b')"
    if _LIST_BEFORE.search(text_before) and "=" not in text_before and _LIST_AFTER.match(text_after):
        # "(3-2), (0-2), ..., (5-2) = 1, -2, 0, ...": lists on both sides pair up element by element
        return "a member of a list written on both sides of the relation (its values pair up element by element)"
    unbalanced = f.text.count(")") - f.text.count("(")
    if (_GLUED_BEFORE.search(text_before) or _GROUP_BEFORE.search(text_before) or _FUNCTION_BEFORE.search(text_before) or _COMMAND_BEFORE.search(f.lead[-60:]) or _OPERATOR_AFTER.match(text_after)
            or unbalanced > 0 and _OPEN_BEFORE.search(text_before) or unbalanced < 0 and _CLOSE_AFTER.match(text_after)):
        # "f^{-1}(0) = 3" read as "0 = 3", "\frac{1}{2}(4)(4) = 8" as "4 * 4 = 8", "7 = 2 \times 7 \times \sin\theta"
        return "a formula cut out of a longer expression (a function applied to it, or a factor or term not read)"
    return convention_guess(f.text, text_before, text_after)


def reread(ob: Obligation, out: Outcome, check: Callable[[Obligation], Outcome]) -> Outcome:
    """Apply the ambiguity of ``ob`` to a refutation ``out``: keep it only when every reading is refuted.

    ``check`` runs the checker portfolio on an obligation. A derivation with other candidate premises
    is refuted only when the claim contradicts every one of them (each tried alone)."""
    if not isinstance(out, Refuted):
        return out
    for prem in getattr(ob, "other_premises", ()):
        other = check(ob.model_copy(update={"premises": (prem,), "other_premises": ()}))
        if not isinstance(other, Refuted):
            return Unknown(out.method, f"not refuted: it may be derived from '{prem}' instead, which it does not contradict",
                           out.counterexample)
    if not ob.ambiguity:
        return out
    readings = getattr(ob, "readings", ())
    if not readings:
        return Unknown(out.method, f"not refuted: depends on {ob.ambiguity}", out.counterexample)
    for alt in readings:
        other = check(ob.model_copy(update={"claim": alt, "readings": (), "ambiguity": ""}))
        if not isinstance(other, Refuted):
            status = "verified" if isinstance(other, Verified) else "undecided"
            return Unknown(out.method, f"not refuted: {ob.ambiguity}; under the reading '{alt}' it is {status}",
                           out.counterexample)
    return Refuted(out.method, out.counterexample, f"false under every reading of {ob.ambiguity}")


__all__ = ["guessed_reading", "notation_readings", "notation_written", "reread", "written_readings"]
