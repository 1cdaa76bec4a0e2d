"""The three-stage pipeline: locate (decompose) -> verify (obligations) -> synthesize.

A short function over small typed stages; checkers come from the registry by
name (or are passed in), so other backends (Lean, an LLM judge) plug in
without touching this file.
"""

from __future__ import annotations

import time
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version

from faithsieve.config import Settings
from faithsieve.mathtext.evaluate import Limits
from faithsieve.models import Proof, Timings, Verdict
from faithsieve.obligations.checkers import CHECKERS, Checker, run_portfolio
from faithsieve.obligations.extract import extract_obligations
from faithsieve.obligations.models import Evidence, Obligation, Outcome, Refuted, Unknown, Verified
from faithsieve.statetree.decompose import decompose
from faithsieve.synthesis import synthesize


def limits_from(settings: Settings) -> Limits:
    return Limits(max_bits=settings.max_bits, max_exponent=settings.max_exponent, max_factorial=settings.max_factorial)


def build_checkers(settings: Settings) -> list[Checker]:
    """Instantiate the configured checkers, cheapest first."""
    out = []
    for name in settings.checkers:
        if name not in CHECKERS:
            raise KeyError(f"unknown checker {name!r}; known: {sorted(CHECKERS)}")
        out.append(CHECKERS[name](limits=limits_from(settings), timeout_ms=settings.obligation_time_limit_ms))
    return out


@lru_cache(maxsize=1)
def backend_versions() -> dict[str, str]:
    out = {}
    for dist in ("faithsieve", "sympy", "z3-solver"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "unknown"
    return out


def claim_text(ob: Obligation) -> str:
    """The obligation as checked, rendered: premises ⊢ claim."""
    kind = ob.kind.value
    if kind == "solution":
        vals = ", ".join(f"{k} = {v}" for k, v in ob.values.items())  # type: ignore[union-attr]
        return f"{vals} solves {'; '.join(str(e) for e in ob.equations)}"  # type: ignore[union-attr]
    if kind == "derivation":
        return f"{'; '.join(str(p) for p in ob.premises)} ⊢ {ob.claim}"  # type: ignore[union-attr]
    if kind == "substitution":
        vals = ", ".join(f"{k} = {v}" for k, v in ob.env.items())  # type: ignore[union-attr]
        return f"{vals} ⊢ {ob.claim}"  # type: ignore[union-attr]
    if kind == "coverage":
        return f"cases {' | '.join(ob.cases)} cover {ob.variable} ∈ {ob.domain}"  # type: ignore[union-attr]
    return str(ob.claim)  # type: ignore[union-attr]


def to_evidence(ob: Obligation, out: Outcome, ms: float) -> Evidence:
    common = dict(obligation=ob.id, kind=ob.kind, step=ob.step, span=ob.span, source=ob.source,
                  claim=claim_text(ob), method=out.method, time_ms=round(ms, 3))
    if isinstance(out, Verified):
        return Evidence(**common, status="verified", reason=out.note or None)
    if isinstance(out, Refuted):
        return Evidence(**common, status="refuted", counterexample=out.counterexample, reason=out.note or None)
    return Evidence(**common, status="unknown", reason=out.reason,
                    counterexample=None)


def check_obligations(obligations: list[Obligation], checkers: list[Checker], deadline: float) -> list[Evidence]:
    evidence = []
    for ob in obligations:
        t = time.perf_counter()
        if time.monotonic() > deadline:
            out: Outcome = Unknown("budget", "time budget for this proof exhausted")
        else:
            out = run_portfolio(ob, checkers, deadline)
        evidence.append(to_evidence(ob, out, (time.perf_counter() - t) * 1000))
    return evidence


def localize(proof: Proof, settings: Settings | None = None, checkers: list[Checker] | None = None) -> Verdict:
    """Return the verdict for one proof: ``correct`` or the first refuted step, with evidence."""
    settings = settings or Settings()
    checkers = checkers if checkers is not None else build_checkers(settings)
    t0 = time.perf_counter()
    tree = decompose(proof)
    obligations = extract_obligations(tree)
    t1 = time.perf_counter()
    evidence = check_obligations(obligations, checkers, time.monotonic() + settings.proof_time_limit_s)
    t2 = time.perf_counter()
    timings = Timings(decompose_ms=round((t1 - t0) * 1000, 3), check_ms=round((t2 - t1) * 1000, 3),
                      total_ms=round((t2 - t0) * 1000, 3))
    backends = {**backend_versions(), "checkers": ",".join(c.name for c in checkers)}
    return synthesize(proof, tree, evidence, timings, backends)
