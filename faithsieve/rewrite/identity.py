"""Which question numbers a rewrite must hold still so that every reading of the solution agrees
by construction.

A number of the solution with several candidate sources (``21`` = the question's 21 pears or
``7*3``) is read every way. A rewrite is accepted only when all readings give the same results
*as functions of the numbers that change* — then no draw can make them differ, and none has to be
lucky for them to coincide (a draw that merely made ``13 + 20 - 1`` equal to a question's ``24``
would leave that 24 contradicting the new numbers). Candidate sources are compared as exact
rational functions (sympy ``cancel``) of the numbers allowed to change: ``x/4`` and
``(x - x/4)/3`` are the same function, so a 1000-piece puzzle may still become 800 pieces. When the
candidates differ, every question number any of them depends on is held at its value (making all
of them the constant the solution writes), and the next ambiguous number is examined under that.
Expressions past ``MAX_OPS`` operations are not compared: their inputs are held.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import sympy

from faithsieve.rewrite.arith import term as build
from faithsieve.rewrite.gsm8k import Item

MAX_OPS = 300
"""Largest expression (sympy ``count_ops``) compared symbolically; larger ones hold their inputs."""


def _same(terms: list[Any]) -> bool:
    first = terms[0]
    for t in terms[1:]:
        diff = t - first
        if sympy.count_ops(diff) > MAX_OPS:
            return False
        if sympy.cancel(diff) != 0:
            return False
    return True


def held_inputs(item: Item, cands: list[tuple[tuple[Any, ...], ...]], free: set[int],
                tie: dict[int, int] | None = None) -> set[int]:
    """The question literals among ``free`` to hold at their values so that every number with several
    candidate sources gets the same function from each (``cands``: per annotation, per number, the
    ``plan.Source`` candidates). ``tie`` maps a literal to the first of its group of literals that always
    take one value (``plan.tie_groups``); a group is held or changes as a whole."""
    holding = _Holding(item, cands, free, tie or {})
    for j, row in enumerate(cands):
        node_deps = holding.compare_candidates(j, row)
        holding.deps.append(node_deps)
        holding.compare_restated(j, node_deps)
    return holding.held


def _same_or_differ(make: Callable[[], list[Any]]) -> bool:
    """``_same`` of the terms ``make`` builds; terms that cannot be built differ."""
    try:
        return _same(make())
    except (ZeroDivisionError, TypeError, ValueError):
        return False


class _Holding:
    """The literals held so far, and what each annotation's number depends on."""

    def __init__(self, item: Item, cands: list[tuple[tuple[Any, ...], ...]], free: set[int],
                 tie: dict[int, int]) -> None:
        from faithsieve.rewrite.sources import source_value

        self.source_value = source_value
        self.item, self.cands, self.free, self.tie = item, cands, free, tie
        self.held: set[int] = set()
        self.deps: list[set[int]] = []
        """Per annotation already examined: the question literals its number depends on."""

    def hold(self, refs: set[int]) -> None:
        reps = {self.tie.get(r, r) for r in refs}
        self.held.update(i for i in self.free if self.tie.get(i, i) in reps)

    def literal_term(self, ref: int) -> Any:
        lit = self.item.literals[ref]
        if ref in self.free and ref not in self.held:
            return sympy.Symbol(f"q{self.tie.get(ref, ref)}")
        return sympy.Rational(lit.value.numerator, lit.value.denominator)

    def term(self, s: Any, nodes: list[Any]) -> Any:
        if s.kind == "constant":
            v: Fraction = s.value
            return sympy.Rational(v.numerator, v.denominator)
        if s.kind == "node":
            return nodes[s.ref]
        return self.source_value(s, self.literal_term(s.ref))

    def node_terms(self, upto: int) -> list[Any]:
        nodes: list[Any] = []
        for k in range(upto):
            nodes.append(build(self.item.annotations[k].node, [self.term(c[0], nodes) for c in self.cands[k]])[0])
        return nodes

    def dep(self, s: Any) -> set[int]:
        if s.kind == "constant":
            return set()
        return self.deps[s.ref] if s.kind == "node" else {s.ref}

    def compare_candidates(self, j: int, row: tuple[tuple[Any, ...], ...]) -> set[int]:
        """Hold what the candidate sources of annotation ``j``'s numbers depend on where they
        differ; the literals its numbers depend on."""
        node_deps: set[int] = set()
        nodes: list[Any] | None = None
        for c in row:
            leaf_deps: set[int] = set().union(*(self.dep(s) for s in c))
            node_deps |= leaf_deps
            if len(c) > 1 and leaf_deps & (self.free - self.held):
                if nodes is None:
                    nodes = self.node_terms(j)
                built = nodes
                if not _same_or_differ(lambda: [self.term(s, built) for s in c]):  # noqa: B023 (called at once)
                    self.hold(leaf_deps & self.free)
                    nodes = None
        return node_deps

    def compare_restated(self, j: int, node_deps: set[int]) -> None:
        """A prose left side and the annotation it is written before must stay equal."""
        if not j or not self.item.annotations[j - 1].restates:
            return
        both = self.deps[j - 1] | node_deps
        if both & (self.free - self.held) and not _same_or_differ(lambda: self.node_terms(j + 1)[j - 1 :]):
            self.hold(both & self.free)
