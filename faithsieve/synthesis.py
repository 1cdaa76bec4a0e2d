"""Verdict synthesis: roll local evidence up to steps and pick the first refuted step.

Pure: evidence in, verdict out. Only a refutation that carries a counterexample
(confirmed exactly by the checker that produced it) can make a step erroneous.
"""

from __future__ import annotations

from collections import defaultdict

from faithsieve.models import Coverage, Proof, StepReport, Timings, Verdict
from faithsieve.obligations.models import Evidence
from faithsieve.statetree.decompose import StateTree


def trusted_refutation(ev: Evidence) -> bool:
    return ev.status == "refuted" and bool(ev.counterexample)


def _step_status(evs: list[Evidence]) -> str:
    if not evs:
        return "unchecked"
    if any(trusted_refutation(e) for e in evs):
        return "refuted"
    if any(e.status == "verified" for e in evs):
        return "verified"
    return "unknown"


def synthesize(proof: Proof, tree: StateTree, evidence: list[Evidence], timings: Timings,
               backends: dict[str, str] | None = None) -> Verdict:
    by_step: dict[int, list[Evidence]] = defaultdict(list)
    for ev in evidence:
        by_step[ev.step].append(ev)
    decided_edges = {ev_edge for ev_edge, ev in _edge_map(tree, evidence) if ev.status != "unknown"}
    reports = []
    first: int | None = None
    reason: str | None = None
    for step in proof.steps:
        evs = by_step.get(step.index, [])
        status = _step_status(evs)
        if status == "refuted" and first is None:
            first = step.index
            ev = next(e for e in evs if trusted_refutation(e))
            cx = ", ".join(f"{k} = {v}" for k, v in (ev.counterexample or {}).items())
            reason = f"step {step.index}: {ev.kind.value} claim '{ev.claim}' refuted by {ev.method} ({cx})"
        reports.append(StepReport(step=step.index, status=status, edges=tuple(tree.edges_of_step(step.index)),  # type: ignore[arg-type]
                                  evidence=tuple(evs)))
    coverage = Coverage(
        steps=len(proof.steps),
        steps_with_obligations=sum(1 for s in proof.steps if by_step.get(s.index)),
        steps_decided=sum(1 for r in reports if r.status in ("refuted", "verified")),
        edges=len(tree.edges),
        edges_decided=len(decided_edges),
        obligations=len(evidence),
        obligations_decided=sum(1 for e in evidence if e.status != "unknown"),
    )
    return Verdict(
        verdict="error" if first is not None else "correct",
        first_error_step=first,
        reason=reason,
        steps=tuple(reports),
        coverage=coverage,
        timings=timings,
        backends=backends or {},
    )


def _edge_map(tree: StateTree, evidence: list[Evidence]) -> list[tuple[str, Evidence]]:
    by_span = {(e.step, e.span): e.id for e in tree.edges}
    return [(by_span.get((ev.step, ev.span), ""), ev) for ev in evidence]
