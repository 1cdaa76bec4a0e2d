"""Verdict synthesis: roll local evidence up to steps.

Pure: evidence in, verdict out. Offline, only a refutation that carries a counterexample
(confirmed exactly by the checker that produced it) can make a step erroneous. With the
language-model method, the fusion stage picks the step and ``verdict_from`` dresses it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Literal

from faithsieve.core.proof import Proof
from faithsieve.llm.types import UsageReport
from faithsieve.obligations.kinds.models import Evidence
from faithsieve.statetree.models import StateTree
from faithsieve.verdict import (
    Audit,
    Coverage,
    StepReport,
    Timings,
    Verdict,
    flag_kind_of,
)


def trusted_refutation(ev: Evidence) -> bool:
    """A refutation that stands on its own: a formula the proof writes, refuted exactly with a
    counterexample by our checkers, or a statement the model wrote (``formalized``, ``formal``) refuted
    after it passed the faithfulness gate (a score was recorded). A ``suspect`` refutation (its kind has not
    earned the right to decide: ``obligations.kinds.flagtable``) is never trusted."""
    if ev.status != "refuted" or ev.suspect:  # a kind not yet measured clean advises, never decides
        return False
    if ev.basis == "checked":
        return bool(ev.counterexample)
    return ev.basis in ("formalized", "formal") and ev.faithfulness is not None


def suspect_refutations(evidence: list[Evidence]) -> tuple[Evidence, ...]:
    """The refutations shown as ``suspect`` (their kind does not decide yet), in step order."""
    return tuple(sorted((e for e in evidence if e.status == "refuted" and e.suspect), key=lambda e: e.step))


def _step_status(evs: list[Evidence]) -> Literal["refuted", "verified", "unknown", "unchecked"]:
    if not evs:
        return "unchecked"
    if any(trusted_refutation(e) for e in evs):
        return "refuted"
    if all(e.status == "verified" for e in evs):
        return "verified"
    return "unknown"  # some claim of the step stayed undecided: never shown verified


def _report(index: int, tree: StateTree, evs: list[Evidence]) -> StepReport:
    status = _step_status(evs)
    kind = next((flag_kind_of(e) for e in evs if trusted_refutation(e)), None) if status == "refuted" else None
    return StepReport(step=index, status=status, edges=tuple(tree.edges_of_step(index)), evidence=tuple(evs),
                      flag_kind=kind)


def step_reports(proof: Proof, tree: StateTree, evidence: list[Evidence]) -> tuple[list[StepReport], Coverage]:
    """Per-step reports (EdgeUnits, evidence, roll-up status) and the coverage they amount to."""
    by_step: dict[int, list[Evidence]] = defaultdict(list)
    for ev in evidence:
        by_step[ev.step].append(ev)
    reports = [_report(step.index, tree, by_step.get(step.index, [])) for step in proof.steps]
    decided_edges = {edge for edge, ev in _edge_map(tree, evidence) if ev.status != "unknown"}
    coverage = Coverage(
        steps=len(proof.steps),
        steps_with_obligations=sum(1 for s in proof.steps if by_step.get(s.index)),
        steps_decided=sum(1 for evs in by_step.values() if any(e.status != "unknown" for e in evs)),
        edges=len(tree.edges),
        edges_decided=len(decided_edges),
        obligations=len(evidence),
        obligations_decided=sum(1 for e in evidence if e.status != "unknown"),
    )
    return reports, coverage


def synthesize(proof: Proof, tree: StateTree, evidence: list[Evidence], timings: Timings,
               backends: dict[str, str] | None = None) -> Verdict:
    """The offline verdict: the first step carrying a trusted refutation, else ``correct``."""
    reports, coverage = step_reports(proof, tree, evidence)
    first: int | None = None
    reason: str | None = None
    for rep in reports:
        if rep.status == "refuted":
            first = rep.step
            ev = next(e for e in rep.evidence if trusted_refutation(e))
            cx = ", ".join(f"{k} = {v}" for k, v in (ev.counterexample or {}).items())
            reason = f"step {rep.step}: {ev.kind.value} claim '{ev.claim}' refuted by {ev.method} ({cx})"
            break
    scope = None
    if first is not None:
        earlier = [e for rep in reports[: first - 1] for e in rep.evidence]
        scope = "first" if all(e.status == "verified" for e in earlier) else "at_or_before"
    return Verdict(
        verdict="error" if first is not None else "correct",
        first_error_step=first,
        flag_scope=scope,
        reason=reason,
        flag_kind=reports[first - 1].flag_kind if first is not None else None,
        suspect=suspect_refutations(evidence),
        steps=tuple(reports),
        coverage=coverage,
        timings=timings,
        backends=backends or {},
        basis="checked" if first is not None else None,
    )


def verdict_from(proof: Proof, tree: StateTree, evidence: list[Evidence], first: int | None,
                 basis: Literal["checked", "formalized", "formal", "reviewed", "judged"] | None, reason: str | None, *,
                 mode: Literal["offline", "llm", "judge"], timings: Timings, backends: dict[str, str], audit: Audit,
                 usage: UsageReport | None, undecided: bool = False, anchored: bool = False) -> Verdict:
    """A verdict whose answer was chosen by a fusion or judge stage.

    ``unknown`` (never ``correct``) when the stage could not answer (``undecided``), when the answer
    pointed outside the proof, or when any model call of this proof failed (``usage.failures``): an
    answer built on missing evidence is not an answer. ``anchored``: the answer rests on a whole-proof judgment
    that was read (``--mode llm``'s anchor), so a failed call whose stage fell back (the rule-based tree for the
    model's, no re-sample) took nothing the answer needs: it stands, and its reason counts the failures."""
    reports, coverage = step_reports(proof, tree, evidence)
    verdict: Literal["correct", "error", "unknown"] = "error" if first is not None else "correct"
    if first is not None and not 1 <= first <= len(proof.steps):
        first, basis, reason, verdict = None, None, f"answer pointed outside 1..{len(proof.steps)}: unknown", "unknown"
    if usage is not None and usage.failures and anchored and not undecided and verdict != "unknown":
        reason = f"{reason or ''} ({usage.failures} model call(s) failed; their stages fell back)"[:500]
    elif usage is not None and usage.failures:
        first, basis, verdict = None, None, "unknown"
        busy = any("busy (" in n for n in audit.notes)  # the client's words for 429/503 or no answer in time
        reason = f"{usage.failures} model call(s) failed (endpoint {'busy' if busy else 'unavailable'}): verdict unknown"
    elif undecided:
        first, basis, verdict = None, None, "unknown"
    kind = (reports[first - 1].flag_kind or basis) if first is not None else None
    return Verdict(verdict=verdict, first_error_step=first, reason=reason,
                   flag_kind=kind, suspect=suspect_refutations(evidence), steps=tuple(reports), coverage=coverage, timings=timings, backends=backends, mode=mode,
                   basis=basis, audit=audit, usage=usage)


def _edge_map(tree: StateTree, evidence: list[Evidence]) -> list[tuple[str, Evidence]]:
    by_span = {(e.step, e.span): e.id for e in tree.edges}
    return [(ev.edge or by_span.get((ev.step, ev.span), ""), ev) for ev in evidence]
