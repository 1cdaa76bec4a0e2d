"""Deterministic error injection into GSM8K reference solutions.

A GSM8K ``answer`` is one step per line, with calculator annotations
``<<expr=result>>`` and a final ``#### N`` line. :func:`gsm8k_steps` strips the
annotations and turns the ``####`` line into a final step ``The answer is N.``.

Every written arithmetic chain ``e0 = e1 = ... = en`` in the steps is found by a
small span-keeping tokenizer (mutations edit the text by character spans) and
checked exactly with :class:`fractions.Fraction` by ``faithsieve.mathtext``'s bounded
parser and evaluator (``+ - * /``, unary signs, ``%``, parentheses; nothing is ever
``eval``-ed). A solution is only used when none of its chains is false, and
only chains of the form ``expr = number`` whose value checks are mutated.

The parts live in ``faithsieve.datasets.injection``: ``tokens`` (tokenizer and exact
evaluation), ``chains`` (written chains), ``numbers``, ``edits`` (a changed value carried
through the later steps) and ``mutations``. This module reads GSM8K records and makes the
labelled items; it re-exports the parts' public names.

Mutations (:data:`MUTATIONS`; :func:`get_mutation` gives one by name): each is one
:class:`Mutation` registered in ``injection.mutations`` with its edit, what it does (``about``), its ``visibility`` (``arithmetic``: the mutated equation is false;
``formula``: it is true with a wrong operation or quantity) and its reason text. Each one
changes exactly one step ``k`` and the item's label is ``k`` (1-based), the step where the
error is first visible; all but ``result_changed`` carry the changed value through the later
steps, recomputing every equation that depends on it.

Everything is pure and deterministic: each source item gets its own
``random.Random`` seeded from ``(seed, split, index)``, so the variants of an item
do not depend on ``--limit`` or on the other items.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from typing import Any

from faithsieve.datasets.injection.chains import (
    Chain,
    chain_status_of_step,
    find_chains,
    is_eligible,
)
from faithsieve.datasets.injection.mutations import (
    MUTATIONS,
    Mutation,
    Variant,
    get_mutation,
    inject_solution,
)
from faithsieve.datasets.injection.numbers import format_number
from faithsieve.datasets.injection.tokens import (
    ArithError,
    Tok,
    evaluate,
    evaluate_tokens,
    tokenize,
)

__all__ = [
    "ArithError",
    "Chain",
    "MUTATIONS",
    "Mutation",
    "Tok",
    "Variant",
    "chain_status_of_step",
    "evaluate",
    "evaluate_tokens",
    "find_chains",
    "format_number",
    "get_mutation",
    "gsm8k_steps",
    "inject_items",
    "inject_solution",
    "is_eligible",
    "tokenize",
]

_ANNOTATION = re.compile(r"<<[^<>]*>>")


def gsm8k_steps(answer: str) -> list[str]:
    """Steps of a GSM8K ``answer``: annotations removed, ``#### N`` as ``The answer is N.``."""
    lines = [ln.strip() for ln in answer.split("\n")]
    steps: list[str] = []
    final: str | None = None
    for ln in lines:
        if not ln:
            continue
        if final is not None:
            raise ValueError("text after the '####' line")
        if ln.startswith("####"):
            final = ln[4:].strip()
            if not final:
                raise ValueError("empty '####' answer")
            continue
        stripped = re.sub(r"[ \t]{2,}", " ", _ANNOTATION.sub("", ln)).strip()
        if stripped:
            steps.append(stripped)
    if final is None:
        raise ValueError("no '#### answer' line")
    if not steps:
        raise ValueError("no solution steps before the '####' line")
    steps.append(f"The answer is {final}.")
    return steps


def _item_rng(seed: int, split: str, index: int) -> random.Random:
    return random.Random(f"faithsieve-inject:{seed}:{split}:{index}")


def inject_items(
    items: Iterable[dict[str, Any]],
    mutations: Sequence[str] | None = None,
    seed: int = 0,
    per_item: int = 1,
    *,
    include_correct: bool = False,
    split: str | None = None,
) -> list[dict[str, Any]]:
    """Labelled ProofLoc items with injected errors, from GSM8K records.

    ``items`` are GSM8K records (``question``, ``answer``); ``gsm8k_index`` and
    ``split`` keys, when present, name the source (else the position in ``items`` and
    the ``split`` argument, default ``"unknown"``). For every record whose written
    equations all check, up to ``per_item`` variants are made, each with a different
    mutation drawn from ``mutations`` (all of :data:`MUTATIONS` by default) in an order
    fixed by ``seed``; ``include_correct`` also emits the unmodified solution with label
    ``"correct"``. Records with a false written equation are skipped.
    """
    names = list(MUTATIONS if mutations is None else mutations)
    specs = {m: get_mutation(m) for m in names}
    if per_item < 0:
        raise ValueError("per_item must be >= 0")
    out: list[dict[str, Any]] = []
    for pos, rec in enumerate(items):
        index = int(rec.get("gsm8k_index", pos))
        sp = str(rec.get("split", split or "unknown"))
        problem = str(rec["question"]).strip()
        try:
            steps = gsm8k_steps(str(rec["answer"]))
        except ValueError:
            continue
        if not is_eligible(steps):
            continue
        base = f"gsm8k-{sp}-{index}"
        if include_correct:
            out.append({
                "id": base,
                "problem": problem,
                "steps": steps,
                "label": "correct",
                "domain": "gsm8k",
                "source": base,
                "meta": {
                    "mutation": None,
                    "gsm8k_index": index,
                    "split": sp,
                    "seed": seed,
                    "reason": "Unmodified GSM8K reference solution; every written equation checks.",
                },
            })
        rng = _item_rng(seed, sp, index)
        order = list(names)
        rng.shuffle(order)
        made = 0
        for m in order:
            if made >= per_item:
                break
            v = inject_solution(problem, steps, m, rng)
            if v is None:
                continue
            made += 1
            src = f"{base}-inject-{m}"
            meta: dict[str, Any] = {
                "mutation": m,
                "step": v.label,
                "original": steps[v.label - 1],
                "mutated": v.steps[v.label - 1],
                "original_equation": v.original_equation,
                "mutated_equation": v.mutated_equation,
                "propagated": v.propagated,
                "visibility": specs[m].visibility,
                "gsm8k_index": index,
                "split": sp,
                "seed": seed,
                **v.details,
            }
            meta["reason"] = specs[m].explain(v)
            out.append({
                "id": src,
                "problem": problem,
                "steps": v.steps,
                "label": v.label,
                "domain": "gsm8k",
                "source": src,
                "meta": meta,
            })
    return out
