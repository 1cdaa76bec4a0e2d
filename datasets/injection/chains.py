"""Written equation chains ``e0 = e1 = ... = en`` in a step text, each checked exactly."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from faithsieve.datasets.injection.tokens import (
    ArithError,
    Tok,
    evaluate_tokens,
    tokenize,
)

__all__ = ["Chain", "chain_status_of_step", "find_chains", "is_eligible"]

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
    for i_run, j in _regions(toks):
        chain = _read_region(toks, i_run, j)
        if chain is not None:
            chains.append(chain)
    return chains


def _regions(toks: Sequence[Tok]) -> Iterator[tuple[int, int]]:
    """``(start, end)`` token indices of every maximal run of region tokens."""
    i, n = 0, len(toks)
    while i < n:
        if toks[i].kind not in _REGION_KINDS:
            i += 1
            continue
        j = i
        while j < n and toks[j].kind in _REGION_KINDS:
            j += 1
        yield i, j
        i = j


def _read_region(toks: Sequence[Tok], i_run: int, j: int) -> Chain | None:
    """The chain written in the region ``toks[i_run:j]``, or ``None`` when it is not one."""
    run = list(toks[i_run:j])
    if not any(t.kind == "EQ" for t in run):
        return None
    segs: list[list[Tok]] = [[]]
    for t in run:
        if t.kind == "EQ":
            segs.append([])
        else:
            segs[-1].append(t)
    segs = [_strip(s) for s in segs]
    segs[0], symbolic = _first_side(segs[0], run, toks, i_run)
    if not segs[0]:
        segs = segs[1:]
    if segs:
        last = segs[-1]
        while last and last[-1].kind == "RP" and _balance(last) < 0:
            last = last[:-1]
        segs[-1] = last
    after = toks[j] if j < len(toks) else None
    symbolic = _glued(toks, i_run, run, after) or symbolic
    if len(segs) < 2:
        return None
    if any(not s for s in segs):
        # "3 + 4 = = 7" or a dangling "=": not an equation we can read
        segs = [s for s in segs if s]
        return Chain(segs, "unparsed") if len(segs) >= 2 else None
    if symbolic:
        return Chain(segs, "unparsed")
    return _judged(segs)


def _first_side(first: list[Tok], run: Sequence[Tok], toks: Sequence[Tok], i_run: int) -> tuple[list[Tok], bool]:
    """The first side without the ``(`` of an enclosing parenthesis, and whether it is symbolic
    (it starts with a binary operator)."""
    # leading "(" of an enclosing parenthesis: "(so 3+4=7)"
    while first and first[0].kind == "LP" and _balance(first) > 0:
        first = _strip(first[1:])
    lead = next((t for t in first if t.kind != "CUR"), None)
    if lead is None or lead.kind != "OP":
        return first, False
    # "3x + 4 = 10" or "x - 3 = 4": binary operator after a word
    pos = first.index(lead)
    glued = run[0] is lead and i_run > 0 and toks[i_run - 1].kind == "WORD"
    spaced = pos + 1 < len(first) and first[pos + 1].kind == "SP"
    return first, lead.op != "-" or glued or spaced  # "9x-21 = 339" too


def _glued(toks: Sequence[Tok], i_run: int, run: Sequence[Tok], after: Tok | None) -> bool:
    """Whether the first or last number of the region is part of something larger."""
    if after is not None and run[-1].kind != "SP" and (
            after.kind == "WORD" or (after.kind == "OTHER" and after.text in _GLUE)):
        return True  # "= 10x", "= 2^5": the last number is part of something larger
    if i_run > 0 and run[0].kind != "SP":
        before = toks[i_run - 1]
        if before.kind == "OTHER" and before.text in _GLUE:
            return True  # "2^5 = 32": the first number is an exponent
    return False


def _judged(segs: list[list[Tok]]) -> Chain:
    """The chain of ``segs`` with its status: every side evaluated exactly."""
    try:
        values = [evaluate_tokens(s) for s in segs]
    except ArithError:
        return Chain(segs, "unparsed")
    status = "verified" if all(v == values[0] for v in values) else "false"
    if status == "false" and segs[-1][-1].kind == "PCT" and len(segs) >= 2:
        # "18 / 450 x 100 = 4%": a percentage written as its number of percent
        head = values[:-1]
        if all(v == head[0] for v in head) and head[0] == values[-1] * 100:
            status = "verified"
    return Chain(segs, status, values)


def chain_status_of_step(text: str) -> list[tuple[str, str]]:
    """``(chain text, status)`` for every chain in a step (for reports and tests)."""
    return [(c.text(text), c.status) for c in find_chains(text)]


def is_eligible(steps: Sequence[str]) -> bool:
    """True when no written chain in any step is false."""
    return all(c.status != "false" for s in steps for c in find_chains(s))
