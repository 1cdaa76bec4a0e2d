"""``extract._rounded_in`` gives what the full walk gives: the claim's literals among the rounded ones.

With no rounded literal the walk is skipped; here the answer is compared with the walk itself on
generated closed claims and rounded sets (empty, disjoint and overlapping)."""

from __future__ import annotations

import random

from faithsieve.obligations.extraction.edgeunits import _rounded_in

from faithsieve.mathtext.ast import Rel, literals
from faithsieve.mathtext.formulas import extract_formulas

NUMS = ["2", "3.5", "0.33", "1.41", "12", "7.0", "0.5", "100"]


def _walked(r: Rel, rounded: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted({n.text for n in literals(r.lhs) + literals(r.rhs)} & rounded))


def _claim(rng: random.Random) -> Rel | None:
    terms = [rng.choice(NUMS) for _ in range(rng.randint(1, 4))]
    text = f"{' + '.join(terms)} = {rng.choice(NUMS)}"
    fs = extract_formulas(text)
    if len(fs) != 1 or not fs[0].chain.rels:
        return None
    a, op, b = fs[0].chain.links()[0]
    return Rel(a, op, b)


def test_rounded_in_matches_the_walk() -> None:
    rng = random.Random(16)
    seen_nonempty = 0
    cases = 0
    while cases < 600:
        r = _claim(rng)
        if r is None:
            continue
        cases += 1
        rounded = frozenset(rng.sample(NUMS, rng.randint(0, 3)))
        got = _rounded_in(r, rounded)
        assert got == _walked(r, rounded), (r, rounded)
        seen_nonempty += bool(got)
    assert seen_nonempty > 50  # the overlapping case is exercised, not only the empty one


def test_nothing_rounded_gives_nothing() -> None:
    r = _claim(random.Random(1))
    assert r is not None
    assert _rounded_in(r, frozenset()) == ()
