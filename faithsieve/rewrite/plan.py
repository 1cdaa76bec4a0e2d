"""The computation graph behind a GSM8K solution, recovered from its calculator annotations.

Every number an annotation writes must come from somewhere: a number the question writes (its
value, or its value / 100 for a percent), the result of an earlier annotation, or a conversion
constant the question's words justify (``gsm8k.CONSTANTS``). A number with no source rejects the
item. A number with several possible sources is not guessed: every combination of choices (a
*reading*) is allowed, and a rewrite is accepted only when all readings compute the same value for
every annotation and for the answer at the new numbers — so the answer is right whichever reading
the solution's author meant. Readings are not enumerated: every candidate of every number must give
the same value, and the numbers that agreement depends on are held (``identity.held_inputs``).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from fractions import Fraction

from faithsieve.rewrite.arith import Lit, Node, leaves
from faithsieve.rewrite.arith import value as node_value
from faithsieve.rewrite.gsm8k import (
    CONSTANTS,
    Item,
    ItemRejected,
    cues_for,
    prose_numbers,
    unit_class,
)
from faithsieve.rewrite.identity import held_inputs
from faithsieve.rewrite.sources import (
    LITERAL_KINDS,
    PERCENT_KINDS,
    Source,
    source_value,
)


@dataclass(frozen=True)
class Plan:
    """An item's graph: candidate sources of every annotation number, the readings, the answer."""

    item: Item
    candidates: tuple[tuple[tuple[Source, ...], ...], ...]
    """Per annotation, per number (writing order): the possible sources."""
    readings: tuple[tuple[tuple[Source, ...], ...], ...]
    """The first reading (each number's first candidate): per annotation, per number, one source."""
    targets: tuple[int, ...]
    """Annotations whose result is the final answer."""
    resampled: tuple[int, ...]
    """Question literals that may be resampled: every reading uses them, they are not fixed, and no number
    with several possible sources needs them held so that its sources agree (``identity.held_inputs``)."""
    reading_count: int = 1
    """How many readings the candidates allow (only the first is stored: ``check_readings_agree``
    compares candidates number by number, which covers them all)."""
    ties: tuple[tuple[int, ...], ...] = ()
    """Groups of resampled question numbers that take one new value (``tie_groups``)."""

    def evaluate(self, reading: int, new: dict[int, Fraction]) -> list[Fraction]:
        """Every annotation's result under ``reading`` with question literals set to ``new``
        (literals not in ``new`` keep their value). Raises ``ArithError`` (e.g. division by 0)."""
        lits = self.item.literals
        results: list[Fraction] = []
        for ann, sources in zip(self.item.annotations, self.readings[reading], strict=False):
            def leaf(i: int, _lit: object, sources: tuple[Source, ...] = sources) -> Fraction:
                s = sources[i]
                if s.kind == "constant":
                    return s.value
                if s.kind == "node":
                    return results[s.ref]
                value: Fraction = source_value(s, new.get(s.ref, lits[s.ref].value))
                return value

            results.append(node_value(ann.node, leaf))
        return results


def conversion_factors(question: str, after: str | None = None) -> tuple[Fraction, ...]:
    """Unit factors (and their inverses) whose two unit words the question names (``minute+hour``: 60 and
    1/60; ``dozen``: 12): a solution may write ``4 feet`` as 48 inches without a step. With ``after`` (the
    text right after a question number) only the factors whose unit words include the number's unit."""
    out: list[Fraction] = []
    for f, groups in CONSTANTS.items():
        cue = cues_for(f, question)
        if f <= 1 or cue is None or not ("+" in cue or cue == "dozen") or all("+".join(g) != cue for g in groups):
            continue
        if after is None or any(re.match(r"[\s-]{0,2}" + re.escape(w), after.lower()) for w in cue.split("+")):
            out += [f, 1 / f]
    return tuple(out)


def _candidates(item: Item, j: int, v: Fraction) -> tuple[Source, ...]:
    out: list[Source] = []
    for lit in item.literals:
        if lit.value == v:
            out.append(Source("literal", lit.index))
        if lit.kind == "percent":
            for kind in PERCENT_KINDS:
                if source_value(Source(kind, lit.index), lit.value) == v:  # type: ignore[arg-type]
                    out.append(Source(kind, lit.index))  # type: ignore[arg-type]
        factors = conversion_factors(item.question, item.question[lit.end:lit.end + 16]) if lit.kind != "percent" else ()
        out.extend(Source("converted", lit.index, value=f, cue=cues_for(f, item.question) or "")
                   for f in factors if lit.value * f == v)
    bare = isinstance(item.annotations[j].node, Lit)  # <<90=90>>: the prose left side before it is its source
    out.extend(Source("node", k) for k in range(j) if item.annotations[k].result == v
               and (not item.annotations[k].restates or (bare and k == j - 1)))
    cue = cues_for(v, item.question)
    if cue is not None:
        out.append(Source("constant", value=v, cue=cue))
    return tuple(out)


def _in_every_reading(cands: list[tuple[tuple[Source, ...], ...]]) -> set[int]:
    """Question literals every reading uses: some number of the solution can come from nothing else.
    Only these are resampled. A literal only some readings use keeps its value, so a number that
    might play another role (``three times`` vs ``the three of them``) is never changed."""
    return {c[0].ref for row in cands for c in row
            if c[0].kind in LITERAL_KINDS and all(s.kind in LITERAL_KINDS and s.ref == c[0].ref for s in c)}


def tie_groups(item: Item, cands: list[tuple[tuple[Source, ...], ...]]) -> tuple[tuple[int, ...], ...]:
    """Groups of equal question numbers that one solution number may come from (``2 + 2`` where the
    question says ``2 times`` twice): written alike (same kind, decimals and money/percent class),
    none fixed. They are drawn as one value, so every candidate stays equal by construction and the new
    question keeps the equality the original had."""
    parent: dict[int, int] = {}

    def find(i: int) -> int:
        while parent.setdefault(i, i) != i:
            i = parent[i]
        return i

    lits = item.literals
    for row in cands:
        for c in row:
            if len(c) < 2 or any(s.kind != "literal" for s in c):
                continue
            refs = [s.ref for s in c]
            look = {(lits[r].kind, lits[r].decimals, unit_class(item.question, lits[r])) for r in refs}
            if len(look) != 1 or lits[refs[0]].kind == "fixed":
                continue
            for r in refs[1:]:
                parent[find(r)] = find(refs[0])
    groups: dict[int, list[int]] = {}
    for i in parent:
        groups.setdefault(find(i), []).append(i)
    return tuple(tuple(sorted(g)) for g in groups.values() if len(g) > 1)


def unit_numerators(expr: str, node: Node) -> dict[int, Fraction]:
    """Leaves (writing-order index) written as the ``1`` of a unit fraction ``1/d`` -> ``d``: a 1 followed by
    ``/ d`` and not itself a divisor (``20*1/2`` and ``1/2*20`` are 20 halves; in ``6/1/2`` the 1 is no numerator)."""
    out: dict[int, Fraction] = {}
    lvs = leaves(node)
    for k, (lf, nxt) in enumerate(itertools.pairwise(lvs)):
        before = expr[:lf.start].rstrip()
        if lf.value == 1 and nxt.value > 1 and expr[lf.end:nxt.start].strip() == "/" and not before.endswith("/"):
            out[k] = nxt.value
    return out


def build_plan(item: Item) -> Plan:
    """The plan of ``item``; raises ``ItemRejected`` (stage ``mapping``) when a number has no source,
    nothing can be resampled, or the solution's prose writes a number
    this graph cannot explain."""
    cands: list[tuple[tuple[Source, ...], ...]] = []
    count = 1
    for j, ann in enumerate(item.annotations):
        row = []
        numerators = unit_numerators(ann.expr, ann.node)
        for k, lit in enumerate(leaves(ann.node)):
            c = _candidates(item, j, lit.value)
            if k in numerators and cues_for(1 / numerators[k], item.question):
                # the 1 of "1/2*20" when the question writes half: the fraction's numerator, not a quantity
                c = (*c, Source("constant", value=Fraction(1), cue=f"numerator of 1/{numerators[k]}"))
            if not c:
                raise ItemRejected("mapping", "no_literal_source",
                                   f"{ann.expr}: {lit.value} is not a question number, an earlier result "
                                   "or a justified constant")
            row.append(c)
            count *= len(c)
        cands.append(tuple(row))
    targets = tuple(j for j, a in enumerate(item.annotations) if a.result == item.final and not a.restates)
    if not targets:
        raise ItemRejected("mapping", "answer_not_annotated",
                           f"the final answer {item.final_text} is no annotation's result")
    first = tuple(tuple(c[0] for c in row) for row in cands)
    groups = tie_groups(item, cands)
    tie = {i: g[0] for g in groups for i in g}
    free = {i for i in _in_every_reading(cands) | set(tie) if item.literals[i].kind != "fixed"}
    resampled = tuple(sorted(free - held_inputs(item, cands, free, tie)))
    groups = tuple(g for g in groups if set(g) <= set(resampled))
    if not resampled:
        raise ItemRejected("mapping", "nothing_to_resample",
                           "every number the solution uses is fixed, a constant or behind an ambiguous source")
    plan = Plan(item, tuple(cands), (first,), targets, resampled, count, groups)
    _check_prose(plan)
    return plan


def known_values(plan: Plan) -> set[Fraction]:
    """Values the solution's prose may write: question numbers (and percents / 100), results, constants."""
    item = plan.item
    vals = {lit.value for lit in item.literals}
    vals |= {source_value(Source(k, lit.index), lit.value) for lit in item.literals if lit.kind == "percent"  # type: ignore[arg-type]
             for k in LITERAL_KINDS}
    vals |= {a.result for a in item.annotations}
    vals |= {s.value for row in plan.candidates for c in row for s in c if s.kind == "constant"}
    vals |= {source_value(s, item.literals[s.ref].value) for row in plan.candidates for c in row for s in c
             if s.kind == "converted"}
    return vals


def _check_prose(plan: Plan) -> None:
    vals = known_values(plan)
    for start, end, v, _word in prose_numbers(plan.item.answer):
        if v not in vals:
            raise ItemRejected("mapping", "prose_unexplained",
                               f"the solution writes {plan.item.answer[start:end]} outside any annotation")


def check_readings_agree(plan: Plan, new: dict[int, Fraction]) -> list[Fraction] | str:
    """The results when every reading agrees at ``new``; else the reason. Every candidate source of
    every number must give the same value (earlier results taken from the first reading): then, annotation
    by annotation, every reading computes the same results, without enumerating the readings."""
    first = plan.evaluate(0, new)
    lits = plan.item.literals
    for row in plan.candidates:
        for cands in row:
            if len(cands) < 2:
                continue
            values = set()
            for s in cands:
                if s.kind == "constant":
                    values.add(s.value)
                elif s.kind == "node":
                    values.add(first[s.ref])
                else:
                    try:
                        values.add(source_value(s, new.get(s.ref, lits[s.ref].value)))
                    except ZeroDivisionError:
                        return "readings_disagree"
            if len(values) > 1:
                return "readings_disagree"
    if len({first[t] for t in plan.targets}) != 1:
        return "answer_target_ambiguous"
    return first
