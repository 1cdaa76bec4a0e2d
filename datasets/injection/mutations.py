"""The mutations: one registered :class:`Mutation` each (how it edits a solution, what the
variant's mutated equation must be, how the item's reason reads), their contract, and
:func:`inject_solution`.

Each mutation changes exactly one step ``k`` and the variant's label is ``k`` (1-based),
the step where the error is first visible. Adding a mutation is one :func:`_register` call
next to its edit function; :data:`MUTATIONS` lists the registered names in registration order.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import partial
from typing import Any, Literal

from faithsieve.datasets.injection.chains import Chain, find_chains, is_eligible
from faithsieve.datasets.injection.edits import (
    _build,
    _propagatable,
    _Reject,
    _Site,
    _sites,
    _step_numbers,
    _try_edit,
)
from faithsieve.datasets.injection.numbers import _text_numbers, format_number
from faithsieve.datasets.injection.tokens import ArithError, Tok, _neighbour, evaluate

__all__ = ["MUTATIONS", "Mutation", "Variant", "get_mutation", "inject_solution"]

_Edit = tuple[list[str], _Site, dict[str, Any]]
"""What an edit function returns: the new steps, the edited site, the variant's details."""


@dataclass(frozen=True)
class Mutation:
    """One kind of injected error."""

    name: str
    about: str
    """What it does to the solution, in one sentence."""
    edit: Callable[[str, Sequence[str], random.Random], _Edit | None]
    """``(problem, steps, rng)`` -> the edit, or None when the solution has no place for it."""
    visibility: Literal["arithmetic", "formula"]
    """``arithmetic``: the mutated equation is itself false; ``formula``: it is true, with a
    wrong operation or quantity (so the error shows only against the problem or earlier steps)."""
    reason: str
    """The item's ``meta.reason``: a template over ``step``, ``equation`` (the mutated
    equation) and the variant's ``details``."""
    propagated: bool = True
    """Whether the changed value is carried through the later steps (else they stay as written)."""

    def explain(self, variant: Variant) -> str:
        return self.reason.format(step=variant.label, equation=variant.mutated_equation,
                                  **variant.details)


_REGISTRY: dict[str, Mutation] = {}


def _register(mutation: Mutation) -> None:
    if mutation.name in _REGISTRY:
        raise ValueError(f"mutation {mutation.name!r} is registered twice")
    if mutation.visibility not in ("arithmetic", "formula"):
        raise ValueError(f"mutation {mutation.name!r}: unknown visibility {mutation.visibility!r}")
    _REGISTRY[mutation.name] = mutation


def get_mutation(name: str) -> Mutation:
    """The registered mutation called ``name`` (ValueError naming the known ones otherwise)."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown mutation {name!r}; known: {', '.join(_REGISTRY)}") from None


@dataclass
class Variant:
    """One injected error."""

    mutation: str
    steps: list[str]
    label: int
    """1-based step where the error is first visible."""
    original_equation: str
    mutated_equation: str
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def propagated(self) -> bool:
        return get_mutation(self.mutation).propagated


def _fmt(v: Fraction) -> str:
    s = format_number(v)
    return s if s is not None else str(v)


def _wrong_values(c: Fraction, rng: random.Random) -> list[Fraction]:
    """Plausible wrong results for ``c``, shuffled deterministically."""
    cands: set[Fraction] = set()
    if c.denominator == 1:
        n = int(c)
        cands.update(Fraction(x) for x in (n + 1, n - 1, n + 2, n - 2, n + 10, n - 10, n * 10, n * 2))
        if n % 10 == 0 and n:
            cands.add(Fraction(n // 10))
        s = str(abs(n))
        if len(s) >= 2 and s[-1] != s[-2]:
            swapped = int(s[:-2] + s[-1] + s[-2]) * (1 if n >= 0 else -1)
            cands.add(Fraction(swapped))
    else:
        cands.update({c + 1, c - 1, c * 10, c / 10, c + Fraction(1, 2), c - Fraction(1, 2)})
    good = sorted(v for v in cands if v != c and (v >= 0 or c < 0) and v != 0
                  and format_number(v) is not None)
    rng.shuffle(good)
    return good


def _binary_addops(lhs: Sequence[Tok]) -> list[int]:
    """Indexes of binary + and - operators in ``lhs``."""
    out = []
    for i, t in enumerate(lhs):
        if t.kind == "OP" and t.op in "+-":
            prev = _neighbour(lhs, i, -1)
            if prev is not None and prev.kind in ("NUM", "RP", "PCT"):
                out.append(i)
    return out


def _m_result_changed(problem: str, steps: Sequence[str], rng: random.Random, propagate: bool) -> _Edit | None:
    sites = _sites(steps)
    if propagate:
        sites = [s for s in sites if _propagatable(steps, problem, s)]
    rng.shuffle(sites)
    for site in sites:
        for wrong in _wrong_values(site.c, rng):
            try:
                new_steps = _build(problem, steps, site, [], wrong, propagate)
            except _Reject:
                continue
            return new_steps, site, {"correct_value": _fmt(site.c), "written_value": _fmt(wrong)}
    return None


_register(Mutation(
    "result_changed",
    about="a op b = c becomes a op b = c' (a plausible wrong c'); the later steps stay as "
          "written and keep using the right c",
    edit=partial(_m_result_changed, propagate=False),
    visibility="arithmetic",
    reason="Step {step}: {equation} is false (the result is {correct_value}).",
    propagated=False,
))
_register(Mutation(
    "result_changed_propagated",
    about="the same wrong c', and every later use of c becomes c' with every equation that "
          "depends on it recomputed, so the rest is consistent with the wrong value",
    edit=partial(_m_result_changed, propagate=True),
    visibility="arithmetic",
    reason="Step {step}: {equation} is false (the result is {correct_value}).",
))


def _m_sign_flip(problem: str, steps: Sequence[str], rng: random.Random, result_only: bool) -> _Edit | None:
    sites = [s for s in _sites(steps) if _binary_addops(s.lhs) and _propagatable(steps, problem, s)]
    rng.shuffle(sites)
    for site in sites:
        ops = _binary_addops(site.lhs)
        rng.shuffle(ops)
        for i in ops:
            t = site.lhs[i]
            flipped = "-" if t.op == "+" else "+"
            edit = [(t.start, t.end, flipped)]
            done = _try_edit(problem, steps, site, edit, [] if result_only else None)
            if done is None:
                continue
            new_steps, value = done
            return new_steps, site, {
                "operator_position": i,
                "operator": t.op,
                "flipped_to": flipped,
                "correct_value": _fmt(site.c),
                "written_value": _fmt(value),
            }
    return None


_register(Mutation(
    "sign_flip",
    about="one + becomes - (or the reverse) and the result is recomputed: a true equation "
          "with the wrong operation",
    edit=partial(_m_sign_flip, result_only=False),
    visibility="formula",
    reason="Step {step}: {equation} uses {flipped_to} where the solution needs {operator} "
           "(correct result {correct_value}).",
))
_register(Mutation(
    "sign_flip_result",
    about="the expression is kept but the result is what it gives with one sign flipped "
          "(a sign slip in the computation)",
    edit=partial(_m_sign_flip, result_only=True),
    visibility="arithmetic",
    reason="Step {step}: {equation} is false; {written_value} is what the expression gives "
           "with {operator} read as {flipped_to} (sign slip, correct {correct_value}).",
))


def _m_swapped_operand(problem: str, steps: Sequence[str], rng: random.Random) -> _Edit | None:
    sites = [s for s in _sites(steps) if _propagatable(steps, problem, s)]
    rng.shuffle(sites)
    for site in sites:
        pool = [(v, "problem") for v, _ in _text_numbers(problem)]
        pool += [(v, f"step {k + 1}") for v, _, k in _step_numbers(steps, site.k)]
        operands = [t for t in site.lhs if t.kind == "NUM"]
        rng.shuffle(operands)
        for op_tok in operands:
            assert op_tok.value is not None
            choices = sorted({(v, src) for v, src in pool if v != op_tok.value and v > 0},
                             key=lambda p: (p[0], p[1]))
            rng.shuffle(choices)
            for v, src in choices:
                new_txt = format_number(v, "," if "," in op_tok.text else "")
                if new_txt is None:
                    continue
                done = _try_edit(problem, steps, site, [(op_tok.start, op_tok.end, new_txt)])
                if done is None:
                    continue
                new_steps, value = done
                return new_steps, site, {
                    "operand": op_tok.text,
                    "replacement": new_txt,
                    "replacement_from": src,
                    "correct_value": _fmt(site.c),
                    "written_value": _fmt(value),
                }
    return None


_register(Mutation(
    "swapped_operand",
    about="one operand is replaced by a different number from the problem or an earlier "
          "step, and the result recomputed",
    edit=_m_swapped_operand,
    visibility="formula",
    reason="Step {step}: {equation} uses {replacement} (from the {replacement_from}) "
           "where {operand} belongs (correct result {correct_value}).",
))


def _m_wrong_substitution(problem: str, steps: Sequence[str], rng: random.Random) -> _Edit | None:
    problem_values = {v for v, _ in _text_numbers(problem)}
    sites = [s for s in _sites(steps) if _propagatable(steps, problem, s)]
    rng.shuffle(sites)
    for site in sites:
        established: dict[Fraction, int] = {}
        for j in range(site.k):
            for ch in find_chains(steps[j]):
                if ch.status == "verified":
                    established.setdefault(ch.values[-1], j)
        operands = [t for t in site.lhs if t.kind == "NUM" and t.value in established
                    and t.value not in problem_values]
        rng.shuffle(operands)
        for op_tok in operands:
            assert op_tok.value is not None
            for wrong in _wrong_values(op_tok.value, rng):
                new_txt = format_number(wrong, op_tok.text)
                if new_txt is None:
                    continue
                done = _try_edit(problem, steps, site, [(op_tok.start, op_tok.end, new_txt)])
                if done is None:
                    continue
                new_steps, value = done
                return new_steps, site, {
                    "established_step": established[op_tok.value] + 1,
                    "established_value": op_tok.text,
                    "substituted_value": new_txt,
                    "correct_value": _fmt(site.c),
                    "written_value": _fmt(value),
                }
    return None


_register(Mutation(
    "wrong_substitution",
    about="an operand that an earlier step established (not a number of the problem) is "
          "re-used with a different value, and the result recomputed",
    edit=_m_wrong_substitution,
    visibility="formula",
    reason="Step {step}: {equation} re-uses the value {established_value} from step "
           "{established_step} as {substituted_value} (correct result {correct_value}).",
))


def _top_level_terms(lhs: Sequence[Tok]) -> list[tuple[int, int]]:
    """(first, last) token index of each depth-0 additive term of ``lhs``."""
    terms: list[tuple[int, int]] = []
    depth, start = 0, 0
    addops = set(_binary_addops(lhs))
    for i, t in enumerate(lhs):
        if t.kind == "LP":
            depth += 1
        elif t.kind == "RP":
            depth -= 1
        elif depth == 0 and i in addops:
            terms.append((start, i - 1))
            start = i
    terms.append((start, len(lhs) - 1))
    trimmed = []
    for a, b in terms:
        while b > a and lhs[b].kind == "SP":
            b -= 1
        trimmed.append((a, b))
    return trimmed


def _m_dropped_term(problem: str, steps: Sequence[str], rng: random.Random) -> _Edit | None:
    sites = [s for s in _sites(steps) if _propagatable(steps, problem, s)]
    sites = [s for s in sites if len(_top_level_terms(s.lhs)) >= 3]
    rng.shuffle(sites)
    for site in sites:
        text = steps[site.k]
        terms = _top_level_terms(site.lhs)
        idxs = list(range(1, len(terms)))
        rng.shuffle(idxs)
        for ti in idxs:
            first, last = terms[ti]
            prev_last = terms[ti - 1][1]
            a, b = site.lhs[prev_last].end, site.lhs[last].end
            dropped = text[site.lhs[first].end:b].strip()
            try:
                term_value = evaluate(text[site.lhs[first].start + 1:b])
            except ArithError:
                continue
            if term_value == 0:
                continue
            done = _try_edit(problem, steps, site, [(a, b, "")])
            if done is None:
                continue
            new_steps, value = done
            return new_steps, site, {
                "dropped": dropped,
                "correct_value": _fmt(site.c),
                "written_value": _fmt(value),
            }
    return None


_register(Mutation(
    "dropped_term",
    about="one term of a sum of three or more terms is left out, and the result recomputed",
    edit=_m_dropped_term,
    visibility="formula",
    reason="Step {step}: {equation} leaves out the term {dropped} of the sum "
           "(correct result {correct_value}).",
))

MUTATIONS: tuple[str, ...] = tuple(_REGISTRY)
"""Every mutation name, in registration order."""


def _mutated_chain(text: str, near: int) -> Chain | None:
    chains = find_chains(text)
    best = [c for c in chains if c.start <= near + 2 and len(c.segments) == 2]
    return best[-1] if best else (chains[0] if chains else None)


def _validate(mutation: Mutation, original: Sequence[str], new: Sequence[str], site: _Site) -> Chain | None:
    """Check the variant's contract; the mutated chain, or None when it does not hold."""
    k = site.k
    if len(new) != len(original) or list(new[:k]) != list(original[:k]) or new[k] == original[k]:
        return None
    chain = _mutated_chain(new[k], site.chain.start)
    if chain is None:
        return None
    if mutation.visibility == "arithmetic":
        if chain.status != "false":
            return None
    elif chain.status != "verified" or chain.values[-1] == site.c:
        return None
    if not mutation.propagated:
        if list(new[k + 1:]) != list(original[k + 1:]):
            return None
    else:
        # consistent after the error: no false chain from step k+1 on, nor in step k
        # outside the mutated chain
        for s in new[k + 1:]:
            if not is_eligible([s]):
                return None
        others = [c for c in find_chains(new[k]) if c.start != chain.start]
        if any(c.status == "false" for c in others):
            return None
    return chain


def inject_solution(
    problem: str,
    steps: Sequence[str],
    mutation: str,
    rng: random.Random,
) -> Variant | None:
    """Inject one ``mutation`` into ``steps`` (already split, final answer step last).

    Returns ``None`` when the solution has no place for this mutation (or has a false
    written equation already).
    """
    spec = get_mutation(mutation)
    if len(steps) < 2 or not is_eligible(steps):
        return None
    res = spec.edit(problem, steps, rng)
    if res is None:
        return None
    new_steps, site, details = res
    chain = _validate(spec, steps, new_steps, site)
    if chain is None:
        return None
    return Variant(
        mutation=mutation,
        steps=list(new_steps),
        label=site.k + 1,
        original_equation=site.chain.text(steps[site.k]),
        mutated_equation=chain.text(new_steps[site.k]),
        details=details,
    )
