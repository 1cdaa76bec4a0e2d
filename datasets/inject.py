"""Deterministic error injection into GSM8K reference solutions.

A GSM8K ``answer`` is one step per line, with calculator annotations
``<<expr=result>>`` and a final ``#### N`` line. :func:`gsm8k_steps` strips the
annotations and turns the ``####`` line into a final step ``The answer is N.``.

Every written arithmetic chain ``e0 = e1 = ... = en`` in the steps is found by a
small span-keeping tokenizer (mutations edit the text by character spans) and
checked exactly with :class:`fractions.Fraction` by ``faithsieve.mathtext``'s bounded
parser and evaluator (``+ - * /``, unary signs, ``%``, parentheses; nothing is ever
``eval``-ed). A solution is only used when none of its chains is false, and
only chains of the form ``expr = number`` whose value checks are mutated.

Mutations (see :data:`MUTATIONS`); each one changes exactly one step ``k`` and the
item's label is ``k`` (1-based), the step where the error is first visible:

``result_changed``
    ``a op b = c`` becomes ``a op b = c'`` (a plausible wrong ``c'``); later steps are
    left exactly as they were (they keep using the right ``c``).
``result_changed_propagated``
    same wrong ``c'``, but every later use of ``c`` is replaced by ``c'`` and every
    later equation that depends on it is recomputed, so the rest is consistent with
    the wrong value.
``sign_flip``
    one ``+`` becomes ``-`` (or the reverse) and the result is recomputed, so the
    written equation is true and the error is the choice of operation; propagated.
``sign_flip_result``
    the expression is kept but the result is the value the expression would have
    with one sign flipped (a sign slip in the computation); propagated.
``swapped_operand``
    one operand is replaced by a different number taken from the problem or an
    earlier step; the result is recomputed and propagated.
``wrong_substitution``
    an operand that is a value established by an earlier step (the result of an
    earlier equation) is re-used with a different value; recomputed, propagated.
``dropped_term``
    one term of a sum of three or more terms is left out; recomputed, propagated.

Everything is pure and deterministic: each source item gets its own
``random.Random`` seeded from ``(seed, split, index)``, so the variants of an item
do not depend on ``--limit`` or on the other items.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from faithsieve.errors import FaithSieveError
from faithsieve.mathtext import evaluate as mt_evaluate
from faithsieve.mathtext import lexer as mt
from faithsieve.mathtext.parser import parse_tokens

__all__ = [
    "ArithError",
    "Chain",
    "MUTATIONS",
    "Tok",
    "Variant",
    "chain_status_of_step",
    "evaluate",
    "evaluate_tokens",
    "find_chains",
    "format_number",
    "gsm8k_steps",
    "inject_items",
    "inject_solution",
    "is_eligible",
    "tokenize",
]

MUTATIONS: tuple[str, ...] = (
    "result_changed",
    "result_changed_propagated",
    "sign_flip",
    "sign_flip_result",
    "swapped_operand",
    "wrong_substitution",
    "dropped_term",
)
"""Every mutation name, in a fixed order."""

# Mutations whose mutated equation is arithmetically false; the others write a
# true equation with a wrong operation or quantity.
_FALSE_EQUATION = {"result_changed", "result_changed_propagated", "sign_flip_result"}
_PROPAGATED = set(MUTATIONS) - {"result_changed"}


class ArithError(ValueError):
    """A text is not an arithmetic expression this module can evaluate."""


# ---------------------------------------------------------------------------
# Tokenizer
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Tok:
    """One token of a step text with its character span."""

    kind: str
    """NUM, OP, LP, RP, EQ, CUR, PCT, SP, WORD or OTHER."""
    text: str
    start: int
    end: int
    op: str = ""
    """For OP tokens: the ASCII operator ``+ - * /``."""
    value: Fraction | None = None
    """For NUM tokens: the exact value."""


_NUM_RE = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)|\d+(?:\.\d+)?|\.\d+")
_WORD_RE = re.compile(r"[^\W\d_]+")
_OPS = {"+": "+", "-": "-", "\u2212": "-", "\u2013": "-", "*": "*", "\u00d7": "*", "\u00b7": "*", "\u22c5": "*",
        "/": "/", "\u00f7": "/"}
_SINGLE = {"(": "LP", ")": "RP", "=": "EQ", "$": "CUR", "%": "PCT"}
_MAX_TEXT = 20_000


def _num_value(text: str) -> Fraction:
    return Fraction(text.replace(",", ""))


def tokenize(text: str) -> list[Tok]:
    """Split ``text`` into tokens. A lone ``x``/``X`` between numbers is multiplication."""
    if len(text) > _MAX_TEXT:
        raise ArithError(f"text too long ({len(text)} characters)")
    toks: list[Tok] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            j = i + 1
            while j < n and text[j].isspace():
                j += 1
            toks.append(Tok("SP", text[i:j], i, j))
            i = j
            continue
        m = _NUM_RE.match(text, i) if (ch.isdigit() or ch == ".") else None
        if m and ch.isascii():
            toks.append(Tok("NUM", m.group(), i, m.end(), value=_num_value(m.group())))
            i = m.end()
            continue
        if ch in _OPS:
            toks.append(Tok("OP", ch, i, i + 1, op=_OPS[ch]))
            i += 1
            continue
        if ch in _SINGLE:
            toks.append(Tok(_SINGLE[ch], ch, i, i + 1))
            i += 1
            continue
        m = _WORD_RE.match(text, i)
        if m:
            toks.append(Tok("WORD", m.group(), i, m.end()))
            i = m.end()
            continue
        toks.append(Tok("OTHER", ch, i, i + 1))
        i += 1
    # A lone "x" before a number is a multiplication sign when it follows a number
    # ("3 x 4", "3x4") or stands apart as a word ("12 marigolds x $3").
    for idx, t in enumerate(toks):
        if t.kind == "WORD" and t.text in ("x", "X"):
            prev = _neighbour(toks, idx, -1)
            nxt = _neighbour(toks, idx, +1)
            if nxt is None or nxt.kind not in ("NUM", "LP", "CUR") or prev is None:
                continue
            apart = idx > 0 and toks[idx - 1].kind == "SP" and toks[idx + 1].kind == "SP"
            if prev.kind in ("NUM", "RP", "PCT") or apart:
                toks[idx] = Tok("OP", t.text, t.start, t.end, op="*")
    return toks


def _neighbour(toks: Sequence[Tok], idx: int, step: int) -> Tok | None:
    j = idx + step
    while 0 <= j < len(toks):
        if toks[j].kind != "SP":
            return toks[j]
        j += step
    return None


# ---------------------------------------------------------------------------
# Evaluation: faithsieve.mathtext's grammar and exact evaluator (no eval)
# ---------------------------------------------------------------------------

_TO_MATHTEXT = {"NUM": mt.NUM, "OP": mt.OP, "LP": mt.LP, "RP": mt.RP, "PCT": mt.PCT}
"""Token kinds of this module that an arithmetic expression may contain, as mathtext's kinds."""


def evaluate_tokens(toks: Sequence[Tok]) -> Fraction:
    """Exact value of an arithmetic token sequence (spaces and ``$`` ignored), parsed by
    ``faithsieve.mathtext.parser`` and evaluated by ``faithsieve.mathtext.evaluate``:
    ``+ - * /``, unary signs, parentheses and postfix ``%``. Every token is marked as spaced,
    so mathtext reads no juxtaposition as a product (``3 4`` and ``2(3)`` are refused, as a
    written equation's operands must be joined by an operator)."""
    seq: list[mt.Token] = []
    for t in toks:
        if t.kind in ("SP", "CUR"):
            continue
        kind = _TO_MATHTEXT.get(t.kind)
        if kind is None:
            raise ArithError(f"unexpected {t.text!r}")
        seq.append(mt.Token(kind, t.op if kind == mt.OP else t.text, t.start, t.end, space_before=True))
    if not seq:
        raise ArithError("empty expression")
    try:
        chain, _ = parse_tokens(seq, latex=False)
        return mt_evaluate(chain.exprs[0])
    except FaithSieveError as exc:
        raise ArithError(exc.message) from None


def evaluate(text: str) -> Fraction:
    """Exact value of an arithmetic expression such as ``"16 - 3 - 4"`` or ``"$3 x 5"``.

    Raises :class:`ArithError` for anything else (words, unbalanced parentheses,
    division by zero).
    """
    return evaluate_tokens(tokenize(text))


# ---------------------------------------------------------------------------
# Written equation chains
# ---------------------------------------------------------------------------

_REGION_KINDS = {"NUM", "OP", "LP", "RP", "EQ", "CUR", "PCT", "SP"}
_GLUE = set("^_{}#\\\u221a")  # characters that bind a number into a larger (unread) term
_EDGE_JUNK = {"SP", "CUR"}  # ignored around a lone result number


@dataclass
class Chain:
    """A written chain ``e0 = e1 = ... = en`` found in a text."""

    segments: list[list[Tok]]
    """Tokens of each side, without surrounding spaces."""
    status: str
    """``verified`` (all sides equal), ``false`` (two sides differ) or ``unparsed``."""
    values: list[Fraction] = field(default_factory=list)
    """Value of each side when every side parsed."""

    @property
    def start(self) -> int:
        return self.segments[0][0].start

    @property
    def end(self) -> int:
        return self.segments[-1][-1].end

    def text(self, source: str) -> str:
        return source[self.start:self.end]

    @property
    def is_site(self) -> bool:
        """A verified ``expr = number`` with an operator on the left: mutable."""
        if self.status != "verified" or len(self.segments) != 2:
            return False
        lhs, rhs = self.segments
        rhs_core = [t for t in rhs if t.kind not in _EDGE_JUNK]
        return (
            len(rhs_core) == 1
            and rhs_core[0].kind == "NUM"
            and any(t.kind == "OP" for t in lhs)
            and sum(1 for t in lhs if t.kind == "NUM") >= 2
        )

    @property
    def result_tok(self) -> Tok:
        return next(t for t in self.segments[-1] if t.kind == "NUM")


def _strip(seg: list[Tok]) -> list[Tok]:
    """Drop surrounding spaces, and a trailing ``$`` (a leading one belongs to a number)."""
    a, b = 0, len(seg)
    while a < b and seg[a].kind == "SP":
        a += 1
    while b > a and seg[b - 1].kind in _EDGE_JUNK:
        b -= 1
    return seg[a:b]


def _balance(seg: Sequence[Tok]) -> int:
    return sum(1 for t in seg if t.kind == "LP") - sum(1 for t in seg if t.kind == "RP")


def find_chains(text: str) -> list[Chain]:
    """Every written equality chain in ``text`` that has at least two sides.

    A region is a maximal run of number/operator/parenthesis/``=``/``$``/``%``/space
    tokens containing ``=``. ``word = 5`` has no left side and is not a chain; a
    left side starting with a binary operator (``3x + 4 = 10``) or a number glued to a
    following word (``= 10x``) is symbolic and reported as ``unparsed``.
    """
    toks = tokenize(text)
    chains: list[Chain] = []
    i = 0
    while i < len(toks):
        if toks[i].kind not in _REGION_KINDS:
            i += 1
            continue
        j = i
        while j < len(toks) and toks[j].kind in _REGION_KINDS:
            j += 1
        run = toks[i:j]
        i_run = i
        after = toks[j] if j < len(toks) else None
        i = j
        if not any(t.kind == "EQ" for t in run):
            continue
        segs: list[list[Tok]] = [[]]
        for t in run:
            if t.kind == "EQ":
                segs.append([])
            else:
                segs[-1].append(t)
        segs = [_strip(s) for s in segs]
        symbolic = False
        first = segs[0]
        # leading "(" of an enclosing parenthesis: "(so 3+4=7)"
        while first and first[0].kind == "LP" and _balance(first) > 0:
            first = _strip(first[1:])
        lead = next((t for t in first if t.kind != "CUR"), None)
        if lead is not None and lead.kind == "OP":
            # "3x + 4 = 10" or "x - 3 = 4": binary operator after a word
            pos = first.index(lead)
            glued = run[0] is lead and i_run > 0 and toks[i_run - 1].kind == "WORD"
            spaced = pos + 1 < len(first) and first[pos + 1].kind == "SP"
            if lead.op != "-" or glued or spaced:
                symbolic = True  # "9x-21 = 339" too
        segs[0] = first
        if not segs[0]:
            segs = segs[1:]
        last = segs[-1] if segs else []
        while last and last[-1].kind == "RP" and _balance(last) < 0:
            last = last[:-1]
        if segs:
            segs[-1] = last
        if after is not None and run[-1].kind != "SP" and (
                after.kind == "WORD" or (after.kind == "OTHER" and after.text in _GLUE)):
            symbolic = True  # "= 10x", "= 2^5": the last number is part of something larger
        if i_run > 0 and run[0].kind != "SP":
            before = toks[i_run - 1]
            if before.kind == "OTHER" and before.text in _GLUE:
                symbolic = True  # "2^5 = 32": the first number is an exponent
        if len(segs) < 2:
            continue
        if any(not s for s in segs):
            # "3 + 4 = = 7" or a dangling "=": not an equation we can read
            segs = [s for s in segs if s]
            if len(segs) < 2:
                continue
            chains.append(Chain(segs, "unparsed"))
            continue
        if symbolic:
            chains.append(Chain(segs, "unparsed"))
            continue
        try:
            values = [evaluate_tokens(s) for s in segs]
        except ArithError:
            chains.append(Chain(segs, "unparsed"))
            continue
        status = "verified" if all(v == values[0] for v in values) else "false"
        if status == "false" and segs[-1][-1].kind == "PCT" and len(segs) >= 2:
            # "18 / 450 x 100 = 4%": a percentage written as its number of percent
            head = values[:-1]
            if all(v == head[0] for v in head) and head[0] == values[-1] * 100:
                status = "verified"
        chains.append(Chain(segs, status, values))
    return chains


def chain_status_of_step(text: str) -> list[tuple[str, str]]:
    """``(chain text, status)`` for every chain in a step (for reports and tests)."""
    return [(c.text(text), c.status) for c in find_chains(text)]


# ---------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------


def _decimal_places(value: Fraction, limit: int = 6) -> int | None:
    for places in range(limit + 1):
        if (value * 10**places).denominator == 1:
            return places
    return None


def format_number(value: Fraction, like: str = "", max_places: int = 4) -> str | None:
    """Write ``value`` as a plain decimal in the style of ``like`` (thousands commas,
    decimal places); ``None`` when it has no short terminating decimal form."""
    places = _decimal_places(value, max_places)
    if places is None:
        return None
    like_places = len(like.split(".", 1)[1]) if "." in like else 0
    if like_places > places:
        places = like_places  # "$18.00" stays in cents
    negative = value < 0
    scaled = abs(value) * 10**places
    assert scaled.denominator == 1
    digits = str(scaled.numerator).rjust(places + 1, "0")
    int_part, frac_part = (digits[:-places], digits[-places:]) if places else (digits, "")
    if "," in like and len(int_part) > 3:
        int_part = f"{int(int_part):,}"
    out = int_part + ("." + frac_part if frac_part else "")
    return ("-" if negative else "") + out


_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
    "dozen": 12, "half": Fraction(1, 2), "twice": 2, "double": 2, "triple": 3,
    "quarter": Fraction(1, 4), "third": Fraction(1, 3),
}


def _text_numbers(text: str) -> list[tuple[Fraction, str]]:
    """Numbers written in ``text`` (digits, and common number words), in order."""
    out: list[tuple[Fraction, str]] = []
    for t in tokenize(text):
        if t.kind == "NUM":
            assert t.value is not None
            out.append((t.value, t.text))
        elif t.kind == "WORD" and t.text.lower() in _NUMBER_WORDS:
            out.append((Fraction(_NUMBER_WORDS[t.text.lower()]), ""))
    return out


# ---------------------------------------------------------------------------
# GSM8K solutions
# ---------------------------------------------------------------------------

_ANNOTATION = re.compile(r"<<[^<>]*>>")


def gsm8k_steps(answer: str) -> list[str]:
    """Steps of a GSM8K ``answer``: annotations removed, ``#### N`` as ``The answer is N.``."""
    lines = [ln.strip() for ln in answer.split("\n")]
    steps: list[str] = []
    final: str | None = None
    for ln in lines:
        if not ln:
            continue
        if final is not None:
            raise ValueError("text after the '####' line")
        if ln.startswith("####"):
            final = ln[4:].strip()
            if not final:
                raise ValueError("empty '####' answer")
            continue
        stripped = re.sub(r"[ \t]{2,}", " ", _ANNOTATION.sub("", ln)).strip()
        if stripped:
            steps.append(stripped)
    if final is None:
        raise ValueError("no '#### answer' line")
    if not steps:
        raise ValueError("no solution steps before the '####' line")
    steps.append(f"The answer is {final}.")
    return steps


def is_eligible(steps: Sequence[str]) -> bool:
    """True when no written chain in any step is false."""
    return all(c.status != "false" for s in steps for c in find_chains(s))


# ---------------------------------------------------------------------------
# Mutations
# ---------------------------------------------------------------------------


@dataclass
class Variant:
    """One injected error."""

    mutation: str
    steps: list[str]
    label: int
    """1-based step where the error is first visible."""
    original_equation: str
    mutated_equation: str
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def propagated(self) -> bool:
        return self.mutation in _PROPAGATED


class _Reject(Exception):
    pass


@dataclass
class _Site:
    k: int  # 0-based step index
    chain: Chain

    @property
    def lhs(self) -> list[Tok]:
        return self.chain.segments[0]

    @property
    def c(self) -> Fraction:
        return self.chain.values[-1]


def _sites(steps: Sequence[str]) -> list[_Site]:
    out = []
    for k, s in enumerate(steps[:-1]):  # the final "The answer is N." is never mutated
        for ch in find_chains(s):
            if ch.is_site:
                out.append(_Site(k, ch))
    return out


def _replace_spans(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    out = text
    for a, b, new in sorted(edits, key=lambda e: e[0], reverse=True):
        out = out[:a] + new + out[b:]
    return out


def _propagate(text: str, mapping: dict[Fraction, Fraction],
               protected: frozenset[Fraction] = frozenset()) -> str:
    """Rewrite ``text`` so that it uses ``mapping[v]`` wherever it used the value ``v``;
    equations depending on a changed value are recomputed (and extend ``mapping``).

    Raises :class:`_Reject` when the text uses a changed value where it cannot be
    rewritten consistently (inside an unparsed or multi-sided chain).
    """
    if not mapping:
        return text
    chains = find_chains(text)
    in_chain: set[int] = set()
    edits: list[tuple[int, int, str]] = []
    for ch in chains:
        for seg in ch.segments:
            for t in seg:
                in_chain.add(t.start)
    # process chains and loose numbers left to right, so a recomputed result maps
    # later mentions in the same text
    items: list[tuple[int, str, Any]] = []
    for ch in chains:
        items.append((ch.start, "chain", ch))
    for t in tokenize(text):
        if t.kind == "NUM" and t.start not in in_chain:
            items.append((t.start, "num", t))
    items.sort(key=lambda x: x[0])
    loose_changed = False
    for _, kind, obj in items:
        if kind == "num":
            t: Tok = obj
            assert t.value is not None
            if t.value in mapping:
                new = format_number(mapping[t.value], t.text)
                if new is None:
                    raise _Reject("unrepresentable value")
                edits.append((t.start, t.end, new))
                loose_changed = True
            continue
        ch: Chain = obj
        nums = [t for seg in ch.segments for t in seg if t.kind == "NUM"]
        if not any(t.value in mapping for t in nums):
            continue
        if not ch.is_site:
            raise _Reject("changed value inside a chain that cannot be recomputed")
        lhs, rhs_tok = ch.segments[0], ch.result_tok
        lhs_edits = []
        for t in lhs:
            if t.kind == "NUM" and t.value in mapping:
                new = format_number(mapping[t.value], t.text)
                if new is None:
                    raise _Reject("unrepresentable value")
                lhs_edits.append((t.start, t.end, new))
        if not lhs_edits:
            continue  # the result coincides with a changed value; the equation stays true
        try:
            value = _eval_replaced(text, lhs, lhs_edits)
        except ArithError as exc:
            raise _Reject(str(exc)) from exc
        old = ch.values[-1]
        if value < 0 <= old:
            raise _Reject("negative value after propagation")
        if old.denominator == 1 and value.denominator != 1:
            raise _Reject("a whole number would become a fraction")
        new_rhs = format_number(value, rhs_tok.text)
        if new_rhs is None:
            raise _Reject("unrepresentable value")
        edits.extend(lhs_edits)
        if value != old:
            if old in mapping and mapping[old] != value:
                raise _Reject("conflicting values")
            if old in protected:
                raise _Reject("recomputed value also occurs in the problem or earlier steps")
            mapping[old] = value
            edits.append((rhs_tok.start, rhs_tok.end, new_rhs))
    if loose_changed:
        # A changed value mentioned in words next to an equation this module cannot
        # recompute ("1 + 2 friends = 3 people", "145 minutes / 60 minutes/hour = 3"):
        # the sentence may derive something from it, or the mention may be another
        # quantity that happens to be equal. Either way it cannot be rewritten safely.
        eqs = sum(1 for t in tokenize(text) if t.kind == "EQ")
        if eqs > sum(1 for ch in chains if ch.is_site):
            raise _Reject("changed value next to an equation that cannot be recomputed")
    return _replace_spans(text, edits)


def _step_numbers(steps: Sequence[str], upto: int) -> list[tuple[Fraction, str, int]]:
    """Numbers written in steps ``0..upto-1``: (value, text, 0-based step)."""
    out = []
    for k in range(upto):
        for v, txt in _text_numbers(steps[k]):
            out.append((v, txt, k))
    return out


def _wrong_values(c: Fraction, rng: random.Random) -> list[Fraction]:
    """Plausible wrong results for ``c``, shuffled deterministically."""
    cands: set[Fraction] = set()
    if c.denominator == 1:
        n = int(c)
        cands.update(Fraction(x) for x in (n + 1, n - 1, n + 2, n - 2, n + 10, n - 10, n * 10, n * 2))
        if n % 10 == 0 and n:
            cands.add(Fraction(n // 10))
        s = str(abs(n))
        if len(s) >= 2 and s[-1] != s[-2]:
            swapped = int(s[:-2] + s[-1] + s[-2]) * (1 if n >= 0 else -1)
            cands.add(Fraction(swapped))
    else:
        cands.update({c + 1, c - 1, c * 10, c / 10, c + Fraction(1, 2), c - Fraction(1, 2)})
    good = sorted(v for v in cands if v != c and (v >= 0 or c < 0) and v != 0
                  and format_number(v) is not None)
    rng.shuffle(good)
    return good


def _build(
    problem: str,
    steps: Sequence[str],
    site: _Site,
    lhs_edits: list[tuple[int, int, str]],
    new_c: Fraction,
    propagate: bool,
) -> list[str]:
    """Apply edits to the site's chain in step ``k`` and (optionally) propagate."""
    text = steps[site.k]
    rhs = site.chain.result_tok
    new_rhs = format_number(new_c, rhs.text)
    if new_rhs is None:
        raise _Reject("unrepresentable value")
    prefix_end = site.chain.end
    head = _replace_spans(text[:prefix_end], [*lhs_edits, (rhs.start, rhs.end, new_rhs)])
    tail = text[prefix_end:]
    out = list(steps[: site.k])
    if propagate and new_c != site.c:
        mapping = {site.c: new_c}
        protected = frozenset(_known_values(problem, steps, site))
        tail = _propagate(tail, mapping, protected)
        out.append(head + tail)
        for later in steps[site.k + 1:]:
            out.append(_propagate(later, mapping, protected))
    else:
        out.append(head + tail)
        out.extend(steps[site.k + 1:])
    return out


def _known_values(problem: str, steps: Sequence[str], site: _Site) -> set[Fraction]:
    """Values written in the problem, in earlier steps, and in the site's step up to
    and including the site's left side."""
    seen = {v for v, _ in _text_numbers(problem)}
    seen.update(v for v, _, _ in _step_numbers(steps, site.k))
    seen.update(v for v, _ in _text_numbers(steps[site.k][: site.chain.start]))
    seen.update(t.value for t in site.lhs if t.kind == "NUM" and t.value is not None)
    return seen


def _propagatable(steps: Sequence[str], problem: str, site: _Site) -> bool:
    """The result's value is new at this point (not in the problem nor written before),
    so replacing it downstream only touches uses of this result. Values recomputed
    further on must be new in the same sense (checked while propagating)."""
    return site.c not in _known_values(problem, steps, site)


def _binary_addops(lhs: Sequence[Tok]) -> list[int]:
    """Indexes of binary + and - operators in ``lhs``."""
    out = []
    for i, t in enumerate(lhs):
        if t.kind == "OP" and t.op in "+-":
            prev = _neighbour(lhs, i, -1)
            if prev is not None and prev.kind in ("NUM", "RP", "PCT"):
                out.append(i)
    return out


def _eval_replaced(text: str, lhs: Sequence[Tok], edits: list[tuple[int, int, str]]) -> Fraction:
    a, b = lhs[0].start, lhs[-1].end
    local = [(x - a, y - a, s) for x, y, s in edits]
    return evaluate(_replace_spans(text[a:b], local))


def _try_edit(problem: str, steps: Sequence[str], site: _Site, edit: list[tuple[int, int, str]],
              written: list[tuple[int, int, str]] | None = None) -> tuple[list[str], Fraction] | None:
    """Evaluate the site's expression with ``edit`` applied; when the new value is a usable wrong
    one, build the variant (writing ``written`` into the text, default ``edit``). None when not."""
    try:
        value = _eval_replaced(steps[site.k], site.lhs, edit)
    except ArithError:
        return None
    if not _ok_value(value, site.c):
        return None
    try:
        return _build(problem, steps, site, edit if written is None else written, value, True), value
    except _Reject:
        return None


def _ok_value(new: Fraction, old: Fraction) -> bool:
    """A usable wrong value: different, positive when the right one is, short decimal,
    and whole when the right one is whole."""
    return (
        new != old
        and (new > 0 or old <= 0)
        and (new.denominator == 1 or old.denominator != 1)
        and format_number(new) is not None
    )


def _m_result_changed(problem, steps, rng, propagate):
    sites = _sites(steps)
    if propagate:
        sites = [s for s in sites if _propagatable(steps, problem, s)]
    rng.shuffle(sites)
    for site in sites:
        for wrong in _wrong_values(site.c, rng):
            try:
                new_steps = _build(problem, steps, site, [], wrong, propagate)
            except _Reject:
                continue
            return new_steps, site, {"correct_value": _fmt(site.c), "written_value": _fmt(wrong)}
    return None


def _m_sign_flip(problem, steps, rng, result_only):
    sites = [s for s in _sites(steps) if _binary_addops(s.lhs) and _propagatable(steps, problem, s)]
    rng.shuffle(sites)
    for site in sites:
        ops = _binary_addops(site.lhs)
        rng.shuffle(ops)
        for i in ops:
            t = site.lhs[i]
            flipped = "-" if t.op == "+" else "+"
            edit = [(t.start, t.end, flipped)]
            done = _try_edit(problem, steps, site, edit, [] if result_only else None)
            if done is None:
                continue
            new_steps, value = done
            return new_steps, site, {
                "operator_position": i,
                "operator": t.op,
                "flipped_to": flipped,
                "correct_value": _fmt(site.c),
                "written_value": _fmt(value),
            }
    return None


def _m_swapped_operand(problem, steps, rng):
    sites = [s for s in _sites(steps) if _propagatable(steps, problem, s)]
    rng.shuffle(sites)
    for site in sites:
        pool = [(v, "problem") for v, _ in _text_numbers(problem)]
        pool += [(v, f"step {k + 1}") for v, _, k in _step_numbers(steps, site.k)]
        operands = [t for t in site.lhs if t.kind == "NUM"]
        rng.shuffle(operands)
        for op_tok in operands:
            assert op_tok.value is not None
            choices = sorted({(v, src) for v, src in pool if v != op_tok.value and v > 0},
                             key=lambda p: (p[0], p[1]))
            rng.shuffle(choices)
            for v, src in choices:
                new_txt = format_number(v, "," if "," in op_tok.text else "")
                if new_txt is None:
                    continue
                done = _try_edit(problem, steps, site, [(op_tok.start, op_tok.end, new_txt)])
                if done is None:
                    continue
                new_steps, value = done
                return new_steps, site, {
                    "operand": op_tok.text,
                    "replacement": new_txt,
                    "replacement_from": src,
                    "correct_value": _fmt(site.c),
                    "written_value": _fmt(value),
                }
    return None


def _m_wrong_substitution(problem, steps, rng):
    problem_values = {v for v, _ in _text_numbers(problem)}
    sites = [s for s in _sites(steps) if _propagatable(steps, problem, s)]
    rng.shuffle(sites)
    for site in sites:
        established: dict[Fraction, int] = {}
        for j in range(site.k):
            for ch in find_chains(steps[j]):
                if ch.status == "verified":
                    established.setdefault(ch.values[-1], j)
        operands = [t for t in site.lhs if t.kind == "NUM" and t.value in established
                    and t.value not in problem_values]
        rng.shuffle(operands)
        for op_tok in operands:
            assert op_tok.value is not None
            for wrong in _wrong_values(op_tok.value, rng):
                new_txt = format_number(wrong, op_tok.text)
                if new_txt is None:
                    continue
                done = _try_edit(problem, steps, site, [(op_tok.start, op_tok.end, new_txt)])
                if done is None:
                    continue
                new_steps, value = done
                return new_steps, site, {
                    "established_step": established[op_tok.value] + 1,
                    "established_value": op_tok.text,
                    "substituted_value": new_txt,
                    "correct_value": _fmt(site.c),
                    "written_value": _fmt(value),
                }
    return None


def _top_level_terms(lhs: Sequence[Tok]) -> list[tuple[int, int]]:
    """(first, last) token index of each depth-0 additive term of ``lhs``."""
    terms: list[tuple[int, int]] = []
    depth, start = 0, 0
    addops = set(_binary_addops(lhs))
    for i, t in enumerate(lhs):
        if t.kind == "LP":
            depth += 1
        elif t.kind == "RP":
            depth -= 1
        elif depth == 0 and i in addops:
            terms.append((start, i - 1))
            start = i
    terms.append((start, len(lhs) - 1))
    trimmed = []
    for a, b in terms:
        while b > a and lhs[b].kind == "SP":
            b -= 1
        trimmed.append((a, b))
    return trimmed


def _m_dropped_term(problem, steps, rng):
    sites = [s for s in _sites(steps) if _propagatable(steps, problem, s)]
    sites = [s for s in sites if len(_top_level_terms(s.lhs)) >= 3]
    rng.shuffle(sites)
    for site in sites:
        text = steps[site.k]
        terms = _top_level_terms(site.lhs)
        idxs = list(range(1, len(terms)))
        rng.shuffle(idxs)
        for ti in idxs:
            first, last = terms[ti]
            prev_last = terms[ti - 1][1]
            a, b = site.lhs[prev_last].end, site.lhs[last].end
            dropped = text[site.lhs[first].end:b].strip()
            try:
                term_value = evaluate(text[site.lhs[first].start + 1:b])
            except ArithError:
                continue
            if term_value == 0:
                continue
            done = _try_edit(problem, steps, site, [(a, b, "")])
            if done is None:
                continue
            new_steps, value = done
            return new_steps, site, {
                "dropped": dropped,
                "correct_value": _fmt(site.c),
                "written_value": _fmt(value),
            }
    return None


def _fmt(v: Fraction) -> str:
    s = format_number(v)
    return s if s is not None else str(v)


def _mutate(name: str, problem: str, steps: Sequence[str], rng: random.Random):
    if name == "result_changed":
        return _m_result_changed(problem, steps, rng, propagate=False)
    if name == "result_changed_propagated":
        return _m_result_changed(problem, steps, rng, propagate=True)
    if name == "sign_flip":
        return _m_sign_flip(problem, steps, rng, result_only=False)
    if name == "sign_flip_result":
        return _m_sign_flip(problem, steps, rng, result_only=True)
    if name == "swapped_operand":
        return _m_swapped_operand(problem, steps, rng)
    if name == "wrong_substitution":
        return _m_wrong_substitution(problem, steps, rng)
    if name == "dropped_term":
        return _m_dropped_term(problem, steps, rng)
    raise ValueError(f"unknown mutation {name!r}; known: {', '.join(MUTATIONS)}")


def _mutated_chain(text: str, near: int) -> Chain | None:
    chains = find_chains(text)
    best = [c for c in chains if c.start <= near + 2 and len(c.segments) == 2]
    return best[-1] if best else (chains[0] if chains else None)


def _validate(name: str, original: Sequence[str], new: Sequence[str], site: _Site) -> Chain | None:
    """Check the variant's contract; the mutated chain, or None when it does not hold."""
    k = site.k
    if len(new) != len(original) or list(new[:k]) != list(original[:k]) or new[k] == original[k]:
        return None
    chain = _mutated_chain(new[k], site.chain.start)
    if chain is None:
        return None
    if name in _FALSE_EQUATION:
        if chain.status != "false":
            return None
    elif chain.status != "verified" or chain.values[-1] == site.c:
        return None
    if name == "result_changed":
        if list(new[k + 1:]) != list(original[k + 1:]):
            return None
    else:
        # consistent after the error: no false chain from step k+1 on, nor in step k
        # outside the mutated chain
        for s in new[k + 1:]:
            if not is_eligible([s]):
                return None
        others = [c for c in find_chains(new[k]) if c.start != chain.start]
        if any(c.status == "false" for c in others):
            return None
    return chain


def inject_solution(
    problem: str,
    steps: Sequence[str],
    mutation: str,
    rng: random.Random,
) -> Variant | None:
    """Inject one ``mutation`` into ``steps`` (already split, final answer step last).

    Returns ``None`` when the solution has no place for this mutation (or has a false
    written equation already).
    """
    if mutation not in MUTATIONS:
        raise ValueError(f"unknown mutation {mutation!r}; known: {', '.join(MUTATIONS)}")
    if len(steps) < 2 or not is_eligible(steps):
        return None
    res = _mutate(mutation, problem, steps, rng)
    if res is None:
        return None
    new_steps, site, details = res
    chain = _validate(mutation, steps, new_steps, site)
    if chain is None:
        return None
    return Variant(
        mutation=mutation,
        steps=list(new_steps),
        label=site.k + 1,
        original_equation=site.chain.text(steps[site.k]),
        mutated_equation=chain.text(new_steps[site.k]),
        details=details,
    )


_VISIBILITY = {m: ("arithmetic" if m in _FALSE_EQUATION else "formula") for m in MUTATIONS}


def _reason(v: Variant) -> str:
    d = v.details
    k = v.label
    eq = v.mutated_equation
    if v.mutation in ("result_changed", "result_changed_propagated"):
        return f"Step {k}: {eq} is false (the result is {d['correct_value']})."
    if v.mutation == "sign_flip_result":
        return (f"Step {k}: {eq} is false; {d['written_value']} is what the expression gives "
                f"with {d['operator']} read as {d['flipped_to']} (sign slip, correct {d['correct_value']}).")
    if v.mutation == "sign_flip":
        return (f"Step {k}: {eq} uses {d['flipped_to']} where the solution needs {d['operator']} "
                f"(correct result {d['correct_value']}).")
    if v.mutation == "swapped_operand":
        return (f"Step {k}: {eq} uses {d['replacement']} (from the {d['replacement_from']}) "
                f"where {d['operand']} belongs (correct result {d['correct_value']}).")
    if v.mutation == "wrong_substitution":
        return (f"Step {k}: {eq} re-uses the value {d['established_value']} from step "
                f"{d['established_step']} as {d['substituted_value']} (correct result {d['correct_value']}).")
    if v.mutation == "dropped_term":
        return (f"Step {k}: {eq} leaves out the term {d['dropped']} of the sum "
                f"(correct result {d['correct_value']}).")
    return f"Step {k}: injected {v.mutation}."


def _item_rng(seed: int, split: str, index: int) -> random.Random:
    return random.Random(f"faithsieve-inject:{seed}:{split}:{index}")


def inject_items(
    items: Iterable[dict[str, Any]],
    mutations: Sequence[str] | None = None,
    seed: int = 0,
    per_item: int = 1,
    *,
    include_correct: bool = False,
    split: str | None = None,
) -> list[dict[str, Any]]:
    """Labelled ProofLoc items with injected errors, from GSM8K records.

    ``items`` are GSM8K records (``question``, ``answer``); ``gsm8k_index`` and
    ``split`` keys, when present, name the source (else the position in ``items`` and
    the ``split`` argument, default ``"unknown"``). For every record whose written
    equations all check, up to ``per_item`` variants are made, each with a different
    mutation drawn from ``mutations`` (all of :data:`MUTATIONS` by default) in an order
    fixed by ``seed``; ``include_correct`` also emits the unmodified solution with label
    ``"correct"``. Records with a false written equation are skipped.
    """
    names = list(MUTATIONS if mutations is None else mutations)
    for m in names:
        if m not in MUTATIONS:
            raise ValueError(f"unknown mutation {m!r}; known: {', '.join(MUTATIONS)}")
    if per_item < 0:
        raise ValueError("per_item must be >= 0")
    out: list[dict[str, Any]] = []
    for pos, rec in enumerate(items):
        index = int(rec.get("gsm8k_index", pos))
        sp = str(rec.get("split", split or "unknown"))
        problem = str(rec["question"]).strip()
        try:
            steps = gsm8k_steps(str(rec["answer"]))
        except ValueError:
            continue
        if not is_eligible(steps):
            continue
        base = f"gsm8k-{sp}-{index}"
        if include_correct:
            out.append({
                "id": base,
                "problem": problem,
                "steps": steps,
                "label": "correct",
                "domain": "gsm8k",
                "source": base,
                "meta": {
                    "mutation": None,
                    "gsm8k_index": index,
                    "split": sp,
                    "seed": seed,
                    "reason": "Unmodified GSM8K reference solution; every written equation checks.",
                },
            })
        rng = _item_rng(seed, sp, index)
        order = list(names)
        rng.shuffle(order)
        made = 0
        for m in order:
            if made >= per_item:
                break
            v = inject_solution(problem, steps, m, rng)
            if v is None:
                continue
            made += 1
            src = f"{base}-inject-{m}"
            meta: dict[str, Any] = {
                "mutation": m,
                "step": v.label,
                "original": steps[v.label - 1],
                "mutated": v.steps[v.label - 1],
                "original_equation": v.original_equation,
                "mutated_equation": v.mutated_equation,
                "propagated": v.propagated,
                "visibility": _VISIBILITY[m],
                "gsm8k_index": index,
                "split": sp,
                "seed": seed,
                **v.details,
            }
            meta["reason"] = _reason(v)
            out.append({
                "id": src,
                "problem": problem,
                "steps": v.steps,
                "label": v.label,
                "domain": "gsm8k",
                "source": src,
                "meta": meta,
            })
    return out
