"""The computation graph behind a GSM8K solution, recovered from its calculator annotations.

Every number an annotation writes must come from somewhere: a number the question writes (its
value, or its value / 100 for a percent), the result of an earlier annotation, or a conversion
constant the question's words justify (``gsm8k.CONSTANTS``). A number with no source rejects the
item. A number with several possible sources is not guessed: every combination of choices (a
*reading*) is kept, and a rewrite is accepted only when all readings compute the same value for
every annotation and for the answer at the new numbers — so the answer is right whichever reading
the solution's author meant.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Any
from typing import Literal as TLiteral

from faithsieve.rewrite.arith import leaves
from faithsieve.rewrite.arith import value as node_value
from faithsieve.rewrite.gsm8k import Item, ItemRejected, cues_for, prose_numbers

_PREFIX = {"literal": "q", "percent_of": "p", "percent_more": "m", "percent_less": "l", "percent_inverse": "r",
           "percent_complement": "k", "node": "n"}
PERCENT_KINDS = ("percent_of", "percent_more", "percent_less", "percent_inverse", "percent_complement")
"""What a percent ``p`` may turn into: p/100, 1 + p/100, 1 - p/100, 100/p (25 % -> divide by 4), 100 - p."""
LITERAL_KINDS = ("literal", *PERCENT_KINDS)
KIND_OF_PREFIX = {v: k for k, v in _PREFIX.items()}
MAX_READINGS = 256
"""Most readings kept for one item; more rejects it (``too_many_readings``)."""


@dataclass(frozen=True)
class Source:
    """Where one annotation number comes from."""

    kind: TLiteral["literal", "percent_of", "percent_more", "percent_less", "percent_inverse", "percent_complement",
                   "node", "constant"]
    ref: int = -1
    """Question literal index (``literal``, ``percent_of``) or annotation index (``node``)."""
    value: Fraction = Fraction(0)
    """The constant's value (``constant``)."""
    cue: str = ""
    """The question word that justifies a constant."""

    def key(self) -> str:
        """Compact stable name: ``q3`` (literal 3), ``p3`` (literal 3 / 100), ``m3`` (1 + literal 3 / 100),
        ``l3`` (1 - literal 3 / 100), ``r3`` (100 / literal 3), ``k3`` (100 - literal 3), ``n1`` (annotation 1),
        ``c60`` (a constant)."""
        if self.kind == "constant":
            return f"c{self.value}"
        return _PREFIX[self.kind] + str(self.ref)


@dataclass(frozen=True)
class Plan:
    """An item's graph: candidate sources of every annotation number, the readings, the answer."""

    item: Item
    candidates: tuple[tuple[tuple[Source, ...], ...], ...]
    """Per annotation, per number (writing order): the possible sources."""
    readings: tuple[tuple[tuple[Source, ...], ...], ...]
    """Every combination of choices: per annotation, per number, one source."""
    targets: tuple[int, ...]
    """Annotations whose result is the final answer."""
    resampled: tuple[int, ...]
    """Question literals that may be resampled: every reading uses them, they are not fixed, and no number
    with several possible sources depends on them (``_ambiguity_inputs``)."""

    def evaluate(self, reading: int, new: dict[int, Fraction]) -> list[Fraction]:
        """Every annotation's result under ``reading`` with question literals set to ``new``
        (literals not in ``new`` keep their value). Raises ``ArithError`` (e.g. division by 0)."""
        lits = self.item.literals
        results: list[Fraction] = []
        for ann, sources in zip(self.item.annotations, self.readings[reading]):
            def leaf(i: int, _lit: object, sources: tuple[Source, ...] = sources) -> Fraction:
                s = sources[i]
                if s.kind == "constant":
                    return s.value
                if s.kind == "node":
                    return results[s.ref]
                return source_value(s, new.get(s.ref, lits[s.ref].value))

            results.append(node_value(ann.node, leaf))
        return results


def source_value(s: Source, literal_value: Any) -> Any:
    """The value a literal-based source gives when its question literal has ``literal_value``
    (a ``Fraction``, or a z3 term: the same arithmetic)."""
    if s.kind == "percent_of":
        return literal_value / 100
    if s.kind == "percent_more":
        return 1 + literal_value / 100
    if s.kind == "percent_less":
        return 1 - literal_value / 100
    if s.kind == "percent_inverse":
        return 100 / literal_value
    if s.kind == "percent_complement":
        return 100 - literal_value
    return literal_value


def _candidates(item: Item, j: int, v: Fraction) -> tuple[Source, ...]:
    out: list[Source] = []
    for lit in item.literals:
        if lit.value == v:
            out.append(Source("literal", lit.index))
        if lit.kind == "percent":
            for kind in PERCENT_KINDS:
                if source_value(Source(kind, lit.index), lit.value) == v:  # type: ignore[arg-type]
                    out.append(Source(kind, lit.index))  # type: ignore[arg-type]
    out.extend(Source("node", k) for k in range(j) if item.annotations[k].result == v)
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


def _ambiguity_inputs(cands: list[tuple[tuple[Source, ...], ...]]) -> set[int]:
    """Question literals that any number with more than one candidate source depends on (through
    earlier results, under any reading). Holding them at their values makes every candidate of such a
    number equal to the value the solution writes, so all readings agree by construction — never by
    a draw that happens to make different readings coincide."""
    deps: list[set[int]] = []
    frozen: set[int] = set()

    def of(s: Source) -> set[int]:
        if s.kind == "constant":
            return set()
        return deps[s.ref] if s.kind == "node" else {s.ref}

    for row in cands:
        node_deps: set[int] = set()
        for c in row:
            leaf = set().union(*(of(s) for s in c))
            node_deps |= leaf
            if len(c) > 1:
                frozen |= leaf
        deps.append(node_deps)
    return frozen


def build_plan(item: Item) -> Plan:
    """The plan of ``item``; raises ``ItemRejected`` (stage ``mapping``) when a number has no source,
    the readings are too many, nothing can be resampled, or the solution's prose writes a number
    this graph cannot explain."""
    cands: list[tuple[tuple[Source, ...], ...]] = []
    count = 1
    for j, ann in enumerate(item.annotations):
        row = []
        for lit in leaves(ann.node):
            c = _candidates(item, j, lit.value)
            if not c:
                raise ItemRejected("mapping", "no_literal_source",
                                   f"{ann.expr}: {lit.value} is not a question number, an earlier result "
                                   "or a justified constant")
            row.append(c)
            count *= len(c)
            if count > MAX_READINGS:
                raise ItemRejected("mapping", "too_many_readings", f"more than {MAX_READINGS} ways to read the solution")
        cands.append(tuple(row))
    targets = tuple(j for j, a in enumerate(item.annotations) if a.result == item.final)
    if not targets:
        raise ItemRejected("mapping", "answer_not_annotated",
                           f"the final answer {item.final_text} is no annotation's result")
    per_ann = [list(itertools.product(*row)) for row in cands]
    readings = tuple(tuple(r) for r in itertools.product(*per_ann))
    frozen = _ambiguity_inputs(cands)
    resampled = tuple(i for i in sorted(_in_every_reading(cands) - frozen) if item.literals[i].kind != "fixed")
    if not resampled:
        raise ItemRejected("mapping", "nothing_to_resample",
                           "every number the solution uses is fixed, a constant or behind an ambiguous source")
    plan = Plan(item, tuple(cands), readings, targets, resampled)
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
    return vals


def _check_prose(plan: Plan) -> None:
    vals = known_values(plan)
    for start, end, v, _word in prose_numbers(plan.item.answer):
        if v not in vals:
            raise ItemRejected("mapping", "prose_unexplained",
                               f"the solution writes {plan.item.answer[start:end]} outside any annotation")


def check_readings_agree(plan: Plan, new: dict[int, Fraction]) -> list[Fraction] | str:
    """The results under the first reading when every reading agrees at ``new``; else the reason."""
    first = plan.evaluate(0, new)
    for r in range(1, len(plan.readings)):
        if plan.evaluate(r, new) != first:
            return "readings_disagree"
    if len({first[t] for t in plan.targets}) != 1:
        return "answer_target_ambiguous"
    return first
