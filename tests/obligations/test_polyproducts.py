"""Polynomial products of the fast paths: the merge of sorted monomials gives the terms, and their
order, that forming each key through a dict and a sort gave (the derivation fast paths read the
first term, so the order is part of the result)."""

from __future__ import annotations

import random
from fractions import Fraction

from faithsieve.obligations.procedures import polynomials
from faithsieve.obligations.procedures.polynomials import (
    MAX_PRODUCTS,
    MAX_TERMS,
    _mono_mul,
    expand,
    pmul,
)

from faithsieve.mathtext.formulas import extract_formulas


def _pmul_by_sorting(a: dict, b: dict) -> dict | None:
    """The reference: each key through a dict and a sort."""
    if len(a) * len(b) > MAX_PRODUCTS:
        return None
    out: dict = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            exps = dict(ma)
            for v, k in mb:
                exps[v] = exps.get(v, 0) + k
            key = tuple(sorted(exps.items()))
            out[key] = out.get(key, 0) + ca * cb  # integer or Fraction coefficients alike
    out = {m: c for m, c in out.items() if c}
    return out if len(out) <= MAX_TERMS else None


def test_products_are_those_of_the_sorting_reference() -> None:
    rng = random.Random(16)

    def poly() -> dict:
        p: dict = {}
        for _ in range(rng.randint(0, 6)):
            names = sorted(rng.sample("abcxyz", rng.randint(0, 3)))
            p[tuple((v, rng.randint(1, 3)) for v in names)] = Fraction(rng.randint(-4, 4), rng.randint(1, 3))
        return {m: c for m, c in p.items() if c}

    for _ in range(3000):
        a, b = poly(), poly()
        fast, ref = pmul(a, b), _pmul_by_sorting(a, b)
        assert fast == ref and list(fast.items()) == list(ref.items())


def test_monomial_merge() -> None:
    assert _mono_mul((("a", 1), ("x", 2)), (("b", 1), ("x", 1), ("z", 4))) == (("a", 1), ("b", 1), ("x", 3), ("z", 4))
    assert _mono_mul((), (("x", 1),)) == (("x", 1),)


def test_expansions_are_those_of_the_sorting_reference(monkeypatch) -> None:
    texts = [r"(x+1)^2 (y - 2x)^3 = 0", r"(a + b + c)^4 - (a - b)(b - c)(c - a) = 1", r"3(x - \frac{y}{2})^5 = z^2 x"]
    for text in texts:
        a, _op, b = extract_formulas(f"${text}$")[0].chain.links()[0]
        fast = [expand(a), expand(b)]
        monkeypatch.setattr(polynomials, "pmul", _pmul_by_sorting)
        ref = [expand(a), expand(b)]
        monkeypatch.undo()
        assert fast == ref and [list(p.items()) for p in fast] == [list(p.items()) for p in ref]
