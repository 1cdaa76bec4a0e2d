"""Feasibility of a rewrite: what every new value must satisfy, checked exactly and then by z3.

Constraints, each derived from the original item (never from the new values):

- ``sign``: every annotation result keeps its sign (counts and prices stay positive);
- ``integral``: a result that was a whole number stays one (no fractional people);
- ``writable``: a result that was not whole still has a short terminating decimal (at most
  ``MAX_DECIMALS`` places);
- ``magnitude``: every result stays within a factor ``MAX_FACTOR`` of the original;
- ``order``: two question numbers of the same class (percent, money, other) keep their order
  (``3 of the 5 children`` cannot become ``7 of the 5 children``). Equal numbers are not tied:
  they may play different roles (``three times`` and ``the three have``), so an item whose
  solution could use either is left to the readings check, which rejects it.

``fast_violation`` checks them with ``Fraction`` inside the sampling loop. ``z3_verify`` states the
whole rewrite to z3 — the question numbers, every annotation as an equation over its sources, every
constraint — and asks two questions: is it satisfiable (feasible), and is the answer forced to the
computed value (asserting it differs must be unsatisfiable).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import z3

from faithsieve.rewrite.arith import decimal_text, leaves
from faithsieve.rewrite.arith import term as build
from faithsieve.rewrite.gsm8k import unit_class
from faithsieve.rewrite.plan import Plan
from faithsieve.rewrite.sources import Source, source_value

MAX_FACTOR = 20
"""A result may grow or shrink at most this many times."""
MAX_DECIMALS = 4
"""Most decimal places a non-whole result may need."""
Z3_TIMEOUT_MS = 2000
"""Time limit of each z3 query."""


def order_pairs(plan: Plan) -> list[tuple[int, int]]:
    """Pairs ``(a, b)`` of question literals with ``a < b`` originally that must stay ordered."""
    lits = plan.item.literals
    moving = set(plan.resampled)
    unit = [unit_class(plan.item.question, lit) for lit in lits]
    out = []
    for a in lits:
        for b in lits:
            if a.value < b.value and (a.index in moving or b.index in moving) and unit[a.index] == unit[b.index]:
                out.append((a.index, b.index))
    return out


def fast_violation(plan: Plan, new: dict[int, Fraction], results: list[Fraction],
                   pairs: list[tuple[int, int]]) -> str | None:
    """The first violated constraint's name, or ``None``."""
    for ann, r in zip(plan.item.annotations, results, strict=False):
        o = ann.result
        if (o > 0) != (r > 0) or (o < 0) != (r < 0):
            return "sign"
        if o.denominator == 1 and r.denominator != 1:
            return "integral"
        if r.denominator != 1 and decimal_text(r, MAX_DECIMALS) is None:
            return "writable"
        if o != 0 and not (Fraction(1, MAX_FACTOR) <= r / o <= MAX_FACTOR):
            return "magnitude"
    lits = plan.item.literals
    for a, b in pairs:
        if not new.get(a, lits[a].value) < new.get(b, lits[b].value):
            return "order"
    return None


def _q(x: Fraction) -> Any:
    return z3.Q(x.numerator, x.denominator)


def z3_verify(plan: Plan, reading: int, new: dict[int, Fraction], answer: Fraction,
              pairs: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """The two z3 checks as records ``{"check", "passed", "detail"}``."""
    lits = plan.item.literals
    q = {lit.index: z3.Real(f"q{lit.index}") for lit in lits}
    n = [z3.Real(f"n{j}") for j in range(len(plan.item.annotations))]
    s = z3.Solver()
    s.set("timeout", Z3_TIMEOUT_MS)
    for lit in lits:
        s.add(q[lit.index] == _q(new.get(lit.index, lit.value)))

    def term(src: Source) -> Any:
        if src.kind == "constant":
            return _q(src.value)
        if src.kind == "node":
            return n[src.ref]
        return source_value(src, q[src.ref])

    for j, (ann, sources) in enumerate(zip(plan.item.annotations, plan.readings[reading], strict=False)):
        assert len(sources) == len(leaves(ann.node))
        expr, divisors = build(ann.node, [term(x) for x in sources])
        s.add(*[d != 0 for d in divisors])
        s.add(n[j] == expr)
        o = ann.result
        s.add(n[j] > 0 if o > 0 else (n[j] < 0 if o < 0 else n[j] == 0))
        if o.denominator == 1:
            s.add(z3.IsInt(n[j]))
        if o != 0:
            lo, hi = sorted((o / MAX_FACTOR, o * MAX_FACTOR))
            s.add(n[j] >= _q(lo), n[j] <= _q(hi))
    for a, b in pairs:
        s.add(q[a] < q[b])
    sat = s.check()
    checks = [{"check": "z3_feasible", "passed": sat == z3.sat,
               "detail": f"question numbers, {len(n)} annotation equations and their constraints: {sat}"}]
    if sat != z3.sat:
        return checks
    target = n[plan.targets[-1]]
    s.add(target != _q(answer))
    other = s.check()
    checks.append({"check": "z3_answer_determined", "passed": other == z3.unsat,
                   "detail": f"answer {decimal_text(answer) or answer} is forced ({other} when negated)"})
    return checks
