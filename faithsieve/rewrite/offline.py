"""``--mode offline``: numerical reparameterization of one GSM8K item, verified exactly.

For each variant: draw new values for the question numbers the solution uses (``sample``; in the
second half of the attempts for a random part of them),
recompute every annotation under every reading of the solution (``plan``), keep the draw only
when all readings agree, every constraint holds (``feasible``) and the solution's prose can be
rewritten without guessing; then write the new question, the new annotated solution and the new
answer, and confirm feasibility and the answer with z3. Draws are deterministic: variant ``k`` of
item ``id`` under seed ``s`` uses ``random.Random(f"{s}:{id}:{k}")``.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from fractions import Fraction
from typing import Any

from faithsieve.datasets.injection.tokens import ArithError
from faithsieve.rewrite.arith import decimal_text, leaves
from faithsieve.rewrite.feasible import fast_violation, order_pairs, z3_verify
from faithsieve.rewrite.gsm8k import ItemRejected, parse_item, prose_numbers
from faithsieve.rewrite.plan import Plan, build_plan, check_readings_agree
from faithsieve.rewrite.sample import draw, render, substitute, words
from faithsieve.rewrite.sources import LITERAL_KINDS, Source, source_value

MAX_ATTEMPTS = 400
"""Draws tried per variant before the variant is given up."""


def _value_map(plan: Plan, new: dict[int, Fraction], results: list[Fraction]) -> dict[Fraction, set[Fraction]]:
    """Original value -> the new values it turns into (more than one: prose using it is ambiguous)."""
    m: dict[Fraction, set[Fraction]] = {}
    lits = plan.item.literals
    for lit in lits:
        for kind in LITERAL_KINDS:
            if kind == "converted" or (kind != "literal" and lit.kind != "percent"):
                continue
            src = Source(kind, lit.index)  # type: ignore[arg-type]
            m.setdefault(source_value(src, lit.value), set()).add(source_value(src, new.get(lit.index, lit.value)))
    for row in plan.candidates:
        for cands in row:
            for s in cands:
                if s.kind == "converted":
                    old = lits[s.ref].value
                    m.setdefault(source_value(s, old), set()).add(source_value(s, new.get(s.ref, old)))
    for ann, r in zip(plan.item.annotations, results, strict=False):
        m.setdefault(ann.result, set()).add(r)
    for row in plan.candidates:
        for cands in row:
            for s in cands:
                if s.kind == "constant":
                    m.setdefault(s.value, set()).add(s.value)
    return m


def _leaf_value(plan: Plan, src: Source, new: dict[int, Fraction], results: list[Fraction]) -> Fraction:
    if src.kind == "constant":
        return src.value
    if src.kind == "node":
        return results[src.ref]
    value: Fraction = source_value(src, new.get(src.ref, plan.item.literals[src.ref].value))
    return value


_RESTATED = re.compile(r"[\d\s$.,+\-*/x×÷()=]*")


def _positional(plan: Plan, prose: list[tuple[int, int, Fraction, bool]], new: dict[int, Fraction],
                results: list[Fraction]) -> dict[int, Fraction]:
    """New values of prose numbers whose position says what they are: the number written right after an
    annotation is its result; numbers that restate an annotation's expression just before it
    (``16 - 3 - 4 = <<16-3-4=9>>``, nothing but numbers and operators between) are its leaves, in order."""
    text = plan.item.answer
    placed: dict[int, Fraction] = {}
    for ann, sources, r in zip(plan.item.annotations, plan.readings[0], results, strict=False):
        if ann.prose:
            continue
        after = [p for p in prose if ann.end <= p[0] <= ann.end + 1 and not p[3]]
        if after and after[0][2] == ann.result and text[ann.end:after[0][0]] in ("", "$"):
            placed[after[0][0]] = r
        lvs = leaves(ann.node)
        before = [p for p in prose if p[1] <= ann.start and not p[3]][-len(lvs):]
        if len(before) == len(lvs) and _RESTATED.fullmatch(text[before[0][0]:ann.start]) \
                and [p[2] for p in before] == [lf.value for lf in lvs]:
            for p, src in zip(before, sources, strict=False):
                placed[p[0]] = _leaf_value(plan, src, new, results)
    return placed


def _solution(plan: Plan, new: dict[int, Fraction], results: list[Fraction], answer: Fraction) -> tuple[str, list[dict[str, Any]]] | str:
    """The rewritten solution and its graph records, or the reason it cannot be written."""
    item = plan.item
    vmap = _value_map(plan, new, results)
    prose = prose_numbers(item.answer)
    placed = _positional(plan, prose, new, results)
    spans: list[tuple[int, int, str]] = []
    for start, end, v, word in prose:
        targets = {placed[start]} if start in placed else vmap.get(v, {v})
        if len(targets) != 1:
            return "prose_ambiguous"
        (nv,) = targets
        if nv == v:
            continue
        old = item.answer[start:end]
        text = decimal_text(nv)
        if text is None or (word and not (nv.denominator == 1 and 2 <= nv <= 99)):
            return "writable"
        if word:
            text = words(int(nv), capital=old[:1].isupper())
        elif "," in old and nv.denominator == 1:
            text = f"{int(nv):,}"
        spans.append((start, end, text))
    graph = []
    for ann, sources, r in zip(item.annotations, plan.readings[0], results, strict=False):
        repl = []
        for lit, src in zip(leaves(ann.node), sources, strict=False):
            text = decimal_text(_leaf_value(plan, src, new, results))
            if text is None:
                return "writable"
            repl.append((lit.start, lit.end, text))
        expr = substitute(ann.expr, repl)
        result = decimal_text(r)
        if result is None:
            return "writable"
        if ann.restates:
            spans.extend((ann.start + a, ann.start + b, t) for a, b, t in repl)
            expr = substitute(item.answer[ann.start:ann.start + len(ann.expr)], repl).strip()
        elif ann.prose:
            if "," in item.answer[ann.result_start:ann.end] and r.denominator == 1:
                result = f"{int(r):,}"
            spans.extend((ann.start + a, ann.start + b, t) for a, b, t in repl)
            spans.append((ann.result_start, ann.end, result))
            expr = substitute(item.answer[ann.start:ann.start + len(ann.expr)], repl).strip()
        else:
            spans.append((ann.start, ann.end, f"<<{expr}={result}>>"))
        graph.append({"annotation": ann.index, "prose": ann.prose, "expression": expr, "result": result,
                      "sources": [s.key() for s in sources]})
    head = item.answer[:item.answer.rindex("####")]
    final = decimal_text(answer) or str(answer)
    solution = substitute(head, [s for s in spans if s[1] <= len(head)]) + f"#### {final}"
    return solution, graph


def _draw(plan: Plan, rng: random.Random, some: bool = False) -> dict[int, Fraction]:
    """New values for the resampled numbers; a tied group takes its first member's value. With ``some``
    (the second half of the attempts) each number or group keeps its value with probability 1/2: when
    changing all of them together cannot keep every result whole and ordered, changing fewer may.
    Holding a number never makes readings disagree, so this is as safe as changing all."""
    first = {i: g[0] for g in plan.ties for i in g}
    new: dict[int, Fraction] = {}
    for i in plan.resampled:
        if first.get(i, i) != i:
            if first[i] in new:
                new[i] = new[first[i]]
        elif some and rng.random() < 0.5:
            continue
        elif (v := draw(plan.item.literals[i], rng)) is not None:
            new[i] = v
    return new


def _same_structure(plan: Plan, new: dict[int, Fraction], solution: str) -> bool:
    """The rewritten solution reads back as the same steps (``--check`` rereads it): a number that lost
    its thousands separator could otherwise turn prose into a prose equation."""
    try:
        again = parse_item({"question": _question(plan, new)[0], "answer": solution}, plan.item.id)
    except ItemRejected:
        return False
    return [(a.prose, a.restates) for a in again.annotations] == [(a.prose, a.restates) for a in plan.item.annotations]


def _question(plan: Plan, new: dict[int, Fraction]) -> tuple[str, list[dict[str, Any]]]:
    item = plan.item
    inputs, spans, shift = [], [], 0
    for lit in item.literals:
        if lit.index not in new:
            continue
        text = render(lit, new[lit.index])
        spans.append((lit.start, lit.end, text))
        start = lit.start + shift
        inputs.append({"literal": lit.index, "kind": lit.kind, "original": lit.text, "new": text,
                       "original_span": [lit.start, lit.end], "span": [start, start + len(text)]})
        shift += len(text) - (lit.end - lit.start)
    return substitute(item.question, spans), inputs


def rewrite_item(record: dict[str, Any], item_id: str, *, seed: int, variants: int,
                 attempts: int = MAX_ATTEMPTS) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Variants of one record, and the item's outcome ``{"id", "kept", "stage", "reason", "detail", "failures"}``."""
    outcome: dict[str, Any] = {"id": item_id, "kept": 0, "stage": None, "reason": None, "detail": "", "failures": {}}
    try:
        plan = build_plan(parse_item(record, item_id))
    except ItemRejected as exc:
        outcome.update(stage=exc.stage, reason=exc.reason, detail=exc.detail)
        return [], outcome
    pairs = order_pairs(plan)
    failures: Counter[str] = Counter()
    seen: set[tuple[tuple[int, Fraction], ...]] = set()
    rows: list[dict[str, Any]] = []
    for k in range(variants):
        rng = random.Random(f"{seed}:{item_id}:{k}")
        for attempt in range(attempts):
            new = _draw(plan, rng, some=attempt >= attempts // 2)
            key = tuple(sorted(new.items()))
            if not new or key in seen:
                failures["no_new_values" if not new else "duplicate"] += 1
                continue
            row = variant_row(plan, k, seed, new, pairs)
            if isinstance(row, str):
                failures[row] += 1
                continue
            seen.add(key)
            rows.append(row)
            break
    outcome["kept"] = len(rows)
    outcome["failures"] = dict(failures)
    if not rows:
        reason = failures.most_common(1)[0][0] if failures else "no_new_values"
        outcome.update(stage="sampling", reason=reason,
                       detail=f"no draw of {attempts} passed; " + ", ".join(f"{r} {n}" for r, n in failures.most_common(4)))
    return rows, outcome


def variant_row(plan: Plan, k: int, seed: int, new: dict[int, Fraction],
                pairs: list[tuple[int, int]]) -> dict[str, Any] | str:
    """Variant ``k``'s row for the new question numbers ``new``, or the reason they give none (the
    readings disagree, a constraint fails, the prose cannot be rewritten, z3 disagrees). Deterministic:
    ``--check`` rebuilds every row with it and compares the file's row field by field."""
    try:
        results = check_readings_agree(plan, new)
    except ArithError:
        return "division_by_zero"
    if isinstance(results, str):
        return results
    answer = results[plan.targets[-1]]
    bad = fast_violation(plan, new, results, pairs)
    if bad:
        return bad
    written = _solution(plan, new, results, answer)
    if isinstance(written, str):
        return written
    if not _same_structure(plan, new, written[0]):
        return "reread_differs"
    checks = z3_verify(plan, 0, new, answer, pairs)
    if not all(c["passed"] for c in checks):
        return "z3_" + str(checks[-1]["check"]).removeprefix("z3_")
    return _row(plan, k, seed, new, results, answer, written, checks)


def _row(plan: Plan, k: int, seed: int, new: dict[int, Fraction], results: list[Fraction], answer: Fraction,
         written: tuple[str, list[dict[str, Any]]], z3_checks: list[dict[str, Any]]) -> dict[str, Any]:
    item = plan.item
    question, inputs = _question(plan, new)
    solution, graph = written
    constants = sorted({(str(s.value), s.cue) for row in plan.readings[0] for s in row if s.kind == "constant"})
    n = len(item.annotations)
    checks = [
        {"check": "annotations_recomputed", "passed": True,
         "detail": f"{n} annotation(s) recomputed exactly from the new question numbers"},
        {"check": "readings_agree", "passed": True,
         "detail": f"all {plan.reading_count} reading(s) of the solution give the same results (every candidate "
                   "source of every number agrees)"},
        {"check": "constraints", "passed": True,
         "detail": "sign, integrality, writable decimals, magnitude and order constraints hold"},
        *z3_checks,
    ]
    return {
        "id": f"{item.id}/v{k}", "original_id": item.id, "variant": k, "mode": "offline", "seed": seed,
        "question": question, "solution": solution, "answer": decimal_text(answer) or str(answer),
        "original": {"question": item.question, "solution": item.answer, "answer": item.final_text},
        "inputs": inputs, "graph": graph, "target": plan.targets[-1],
        "constants": [{"value": v, "cue": c} for v, c in constants], "readings": plan.reading_count,
        "verification": {"checks": checks, "well_defined": True, "feasible": True, "answer_correct": True},
    }
