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
    from faithsieve.rewrite.sources import source_value

    tie = tie or {}
    held: set[int] = set()
    deps: list[set[int]] = []

    def hold(refs: set[int]) -> None:
        reps = {tie.get(r, r) for r in refs}
        held.update(i for i in free if tie.get(i, i) in reps)

    def literal_term(ref: int) -> Any:
        lit = item.literals[ref]
        if ref in free and ref not in held:
            return sympy.Symbol(f"q{tie.get(ref, ref)}")
        return sympy.Rational(lit.value.numerator, lit.value.denominator)

    def term(s: Any, nodes: list[Any]) -> Any:
        if s.kind == "constant":
            v: Fraction = s.value
            return sympy.Rational(v.numerator, v.denominator)
        if s.kind == "node":
            return nodes[s.ref]
        return source_value(s, literal_term(s.ref))

    def node_terms(upto: int) -> list[Any]:
        nodes: list[Any] = []
        for k in range(upto):
            nodes.append(build(item.annotations[k].node, [term(c[0], nodes) for c in cands[k]])[0])
        return nodes

    def dep(s: Any) -> set[int]:
        if s.kind == "constant":
            return set()
        return deps[s.ref] if s.kind == "node" else {s.ref}

    for j, row in enumerate(cands):
        node_deps: set[int] = set()
        nodes: list[Any] | None = None
        for c in row:
            leaf_deps = set().union(*(dep(s) for s in c))
            node_deps |= leaf_deps
            if len(c) > 1 and leaf_deps & (free - held):
                if nodes is None:
                    nodes = node_terms(j)
                try:
                    same = _same([term(s, nodes) for s in c])
                except (ZeroDivisionError, TypeError, ValueError):
                    same = False
                if not same:
                    hold(leaf_deps & free)
                    nodes = None
        deps.append(node_deps)
        if j and item.annotations[j - 1].restates and (deps[j - 1] | node_deps) & (free - held):
            # a prose left side and the annotation it is written before must stay equal
            try:
                same = _same(node_terms(j + 1)[j - 1:])
            except (ZeroDivisionError, TypeError, ValueError):
                same = False
            if not same:
                hold((deps[j - 1] | node_deps) & free)
    return held
