"""One equation changed at a site, and the changed value carried through the later steps.

A site is a verified ``expr = number`` chain of a step (not the final answer step). Edits are
character spans; propagation rewrites every later use of a changed value and recomputes the
equations that depend on it, and refuses (``_Reject``) wherever it cannot do so consistently.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from faithsieve.datasets.injection.chains import Chain, find_chains
from faithsieve.datasets.injection.numbers import _text_numbers, format_number
from faithsieve.datasets.injection.tokens import ArithError, Tok, evaluate, tokenize


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
    edits: list[tuple[int, int, str]] = []
    loose_changed = False
    for item in _in_order(text, chains):
        if isinstance(item, Chain):
            _recompute(text, item, mapping, protected, edits)
            continue
        assert item.value is not None
        if item.value in mapping:
            edits.append(_renumbered(item, mapping))
            loose_changed = True
    if loose_changed:
        # A changed value mentioned in words next to an equation this module cannot
        # recompute ("1 + 2 friends = 3 people", "145 minutes / 60 minutes/hour = 3"):
        # the sentence may derive something from it, or the mention may be another
        # quantity that happens to be equal. Either way it cannot be rewritten safely.
        eqs = sum(1 for t in tokenize(text) if t.kind == "EQ")
        if eqs > sum(1 for ch in chains if ch.is_site):
            raise _Reject("changed value next to an equation that cannot be recomputed")
    return _replace_spans(text, edits)


def _in_order(text: str, chains: Sequence[Chain]) -> list[Chain | Tok]:
    """The chains and the loose numbers (outside every chain) of ``text``, left to right, so a
    recomputed result maps later mentions in the same text."""
    in_chain = {t.start for ch in chains for seg in ch.segments for t in seg}
    items: list[tuple[int, Chain | Tok]] = [(ch.start, ch) for ch in chains]
    items += [(t.start, t) for t in tokenize(text) if t.kind == "NUM" and t.start not in in_chain]
    items.sort(key=lambda x: x[0])
    return [obj for _, obj in items]


def _renumbered(t: Tok, mapping: dict[Fraction, Fraction]) -> tuple[int, int, str]:
    """The edit writing ``mapping[t.value]`` in place of the number ``t``, in its style."""
    assert t.value is not None
    new = format_number(mapping[t.value], t.text)
    if new is None:
        raise _Reject("unrepresentable value")
    return t.start, t.end, new


def _recompute(text: str, ch: Chain, mapping: dict[Fraction, Fraction], protected: frozenset[Fraction],
               edits: list[tuple[int, int, str]]) -> None:
    """Rewrite the changed values on the left of the chain ``ch`` and recompute its result
    (extending ``mapping`` with the result's new value): the edits join ``edits``."""
    nums = [t for seg in ch.segments for t in seg if t.kind == "NUM"]
    if not any(t.value in mapping for t in nums):
        return
    if not ch.is_site:
        raise _Reject("changed value inside a chain that cannot be recomputed")
    lhs, rhs_tok = ch.segments[0], ch.result_tok
    lhs_edits = [_renumbered(t, mapping) for t in lhs if t.kind == "NUM" and t.value in mapping]
    if not lhs_edits:
        return  # the result coincides with a changed value; the equation stays true
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


def _step_numbers(steps: Sequence[str], upto: int) -> list[tuple[Fraction, str, int]]:
    """Numbers written in steps ``0..upto-1``: (value, text, 0-based step)."""
    out = []
    for k in range(upto):
        for v, txt in _text_numbers(steps[k]):
            out.append((v, txt, k))
    return out


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

