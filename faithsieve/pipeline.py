"""The pipeline: ``Pipeline(settings, checkers=, llm=, kernel=, stages=).localize(proof) -> Verdict``.

A mode is a typed list of stages (``faithsieve.stages.plan.ModeStages``) that the registry builds
from the settings (``faithsieve.stages.registry.stages_for``):

- ``offline``: rule-based EdgeUnits -> literal-formula obligations -> exact/sympy/z3 -> the
  first trusted refutation. No model, no network.
- ``llm``: the method. Faithful pre-decomposition and a proof-state tree -> suspicion scan and
  audit window with local review -> typed obligations -> our checkers for pure formulas, the
  kernel behind the faithfulness gate for the rest -> evidence fusion (earliest faithful,
  reliable negative evidence; otherwise a final synthesis marked as judged). The offline
  sieve's closed computations run too and count as checked evidence.
- ``judge``: the direct-judge baseline (whole proof in, first error out).

The pipeline runs the stages it is given in order and times them; it makes no decision of its
own and has no mode switch. When a stage answered (fusion, a judge), ``verdict_from`` dresses
that answer; otherwise ``synthesize`` names the first step with a trusted refutation.
"""

from __future__ import annotations

import time
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version

from faithsieve.core.errors import BackendUnavailable
from faithsieve.core.proof import Proof
from faithsieve.core.settings import Settings
from faithsieve.lean.backend import LeanBackend
from faithsieve.lean.interface import Kernel, UnavailableKernel
from faithsieve.llm.types import LLMClient
from faithsieve.mathtext.evaluate import Limits
from faithsieve.mathtext.formulas import RecentReadings
from faithsieve.mathtext.textnorm import clean_proof
from faithsieve.obligations.checkers.memo import OutcomeMemo
from faithsieve.obligations.checkers.portfolio import CHECKERS, Checker, new_memo
from faithsieve.stages.base import RunContext
from faithsieve.stages.plan import ModeStages, Work
from faithsieve.stages.registry import LLMStages, stages_for
from faithsieve.synthesis import synthesize, verdict_from
from faithsieve.verdict import Audit, Timings, Verdict


def limits_from(settings: Settings) -> Limits:
    return Limits(max_bits=settings.max_bits, max_exponent=settings.max_exponent, max_factorial=settings.max_factorial)


def build_checkers(settings: Settings, memo: OutcomeMemo | None = None) -> list[Checker]:
    """Instantiate the configured checkers, cheapest first (the Lean checker last, when a Lean
    backend is configured and available). They share one outcome memo: ``memo``, or a new one
    (none when ``settings.procedures_off`` names ``memo``)."""
    memo = new_memo(settings) if memo is None or "memo" in settings.procedures_off else memo
    backend, _ = lean_backend(settings)
    names = list(settings.checkers)
    if backend is not None and "lean" not in names:
        names.append("lean")
    out = []
    for name in names:
        extra: dict[str, object] = {}
        if name == "lean":
            import faithsieve.lean.checker  # noqa: F401 (registers the "lean" checker)

            extra["backend"] = backend
        if name not in CHECKERS:
            raise KeyError(f"unknown checker {name!r}; known: {sorted(CHECKERS)}")
        out.append(CHECKERS[name](limits=limits_from(settings), timeout_ms=settings.obligation_time_limit_ms,
                                  settings=settings, memo=memo, **extra))
    return out


@lru_cache(maxsize=8)
def lean_backend(settings: Settings) -> tuple[LeanBackend | None, str]:
    """The configured Lean backend, built (and its availability checked) once per settings in this
    process and shared by the ``lean`` checker and the kernel; or ``None`` and why there is none.
    Fast and side-effect free when nothing is installed; REPLs start on the first check."""
    if settings.lean_backend == "none":
        return None, "no Lean backend configured (--backend lean, or FAITHSIEVE_LEAN_BACKEND=local|remote)"
    from faithsieve.lean.backend import LeanUnavailable
    from faithsieve.lean.factory import build_backend

    try:
        return build_backend(settings), ""
    except LeanUnavailable as exc:
        return None, exc.message


def warm_lean(settings: Settings) -> str:
    """A worker's start-up, before any item: build this process's Lean backend (``lean_backend``, shared by the
    ``lean`` checker and the kernel) and import the header every check begins with (``import Mathlib`` in the
    Mathlib flavour), under the backend's import limit and outside every item's limits. One line saying
    what happened and what it cost."""
    backend, why = lean_backend(settings)
    if backend is None:
        return f"no Lean backend: {why}"
    from faithsieve.lean.backend import warm_backend
    from faithsieve.lean.local import split_header
    from faithsieve.lean.snippets import preamble

    header = split_header(preamble(settings.lean_mathlib) + "#check Nat")[0]
    t0 = time.perf_counter()
    result = warm_backend(backend, header)
    took = time.perf_counter() - t0
    what = f"`{header}`" if header else "no header (core Lean)"
    if result is None:
        return f"{backend.name}: no start-up step; {what} is imported by the first check"
    if result.status != "valid":
        return f"{backend.name}: importing {what} failed in {took:.1f} s ({result.status}: {result.detail or 'see the checks'})"
    return f"{backend.name}: REPL(s) started, {what} imported in {took:.1f} s, outside the proof's limits"


def lean_status(settings: Settings) -> tuple[bool, str]:
    """Whether the configured Lean backend can run here, and why not."""
    backend, why = lean_backend(settings)
    return backend is not None, why


def build_kernel(settings: Settings, llm: LLMClient | None) -> Kernel:
    """The formal kernel the settings describe, or ``UnavailableKernel`` saying why there is none."""
    backend, why = lean_backend(settings)
    if backend is None:
        return UnavailableKernel(why)
    from faithsieve.lean.kernel import LeanKernel

    return LeanKernel(backend, llm, settings)


@lru_cache(maxsize=1)
def backend_versions() -> dict[str, str]:
    out = {}
    for dist in ("faithsieve", "sympy", "z3-solver"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "unknown"
    return out


def build_llm(settings: Settings) -> LLMClient:
    """The OpenAI-compatible client the settings describe (with the response cache unless disabled)."""
    from faithsieve.llm.client import OpenAIClient

    return OpenAIClient.from_settings(settings)


class Pipeline:
    """One configured localizer. Build it once per process and call ``localize`` per proof.

    ``stages`` is the mode's list of stages (``stages_for(settings)`` unless given; an ``LLMStages``
    is taken as ``--mode llm``'s model stages). ``localize`` runs them in order and dresses the result.
    """

    def __init__(self, settings: Settings | None = None, *, checkers: list[Checker] | None = None,
                 llm: LLMClient | None = None, kernel: Kernel | None = None,
                 stages: ModeStages | LLMStages | None = None) -> None:
        self.settings = settings or Settings()
        self.checkers = checkers if checkers is not None else build_checkers(self.settings)
        self.llm = llm
        self.kernel = kernel or UnavailableKernel()
        self.readings = RecentReadings()
        """The last few texts this pipeline read (a proof's problem is read by the tree builder and again by
        the root-claim obligations; a pipeline kept for many proofs of one problem reads it once)."""
        if isinstance(stages, LLMStages):
            stages = stages.mode_stages(self.settings)
        self.stages: ModeStages = stages if stages is not None else stages_for(self.settings)
        if self.stages.needs_llm and self.llm is None:
            raise BackendUnavailable(f"--mode {self.settings.mode} needs a language model: set an endpoint "
                                     "(FAITHSIEVE_LLM_BASE_URL and FAITHSIEVE_LLM_MODEL, or --base-url/--model)")

    @classmethod
    def from_settings(cls, settings: Settings) -> Pipeline:
        """The pipeline the settings describe (builds the LLM client for ``llm``/``judge`` modes, and
        the Lean kernel for ``llm`` mode when a Lean backend is configured)."""
        stages = stages_for(settings)
        llm = build_llm(settings) if stages.needs_llm else None
        kernel = build_kernel(settings, llm) if stages.needs_kernel else None
        return cls(settings, llm=llm, kernel=kernel, stages=stages)

    def backends(self) -> dict[str, str]:
        out = {**backend_versions(), "checkers": ",".join(c.name for c in self.checkers)}
        if self.stages.needs_llm and self.llm is not None:
            out["llm"] = self.llm.model
        if self.stages.needs_kernel:
            ok, why = self.kernel.available()
            out["kernel"] = self.kernel.name if ok else f"{self.kernel.name} ({why})"
        versions = getattr(self.kernel, "versions", None)
        if callable(versions):
            out.update({f"lean.{k}": str(v) for k, v in versions().items()})
        return out

    def localize(self, proof: Proof) -> Verdict:
        """Return the verdict for one proof: ``correct`` or the first erroneous step, with evidence."""
        proof = clean_proof(proof)  # read what a person sees: no invisible characters, compatibility forms folded
        plan = self.stages
        before = self.llm.usage.snapshot() if plan.needs_llm and self.llm is not None else None
        ctx = RunContext(proof=proof, settings=self.settings, llm=self.llm, kernel=self.kernel,
                         checkers=self.checkers, deadline=time.monotonic() + plan.time_limit_s, usage_start=before,
                         readings=self.readings)
        work = Work()
        t0 = time.perf_counter()
        for s in plan.decompose:
            s.run(ctx, work)
        t1 = time.perf_counter()
        for s in plan.check:
            s.run(ctx, work)
        t2 = time.perf_counter()
        timings = Timings(decompose_ms=round((t1 - t0) * 1000, 3), check_ms=round((t2 - t1) * 1000, 3),
                          total_ms=round((t2 - t0) * 1000, 3), llm_ms=round(ctx.llm_ms, 3))
        decomposition = work.decomposed()
        if work.fused is None:  # no stage answered: the first trusted refutation among the checks
            return synthesize(proof, decomposition.tree, work.evidence, timings, self.backends())
        fused, scan = work.fused, work.scan
        audit = Audit(substeps=decomposition.substeps, decomposition=decomposition.kind, overall=scan.overall,
                      scan=scan.candidates, window=scan.window, notes=tuple(ctx.notes), reviews=fused.reviews,
                      judge=fused.judge, calibration=fused.calibration)
        usage = self.llm.usage.since(before) if self.llm is not None and before is not None else None
        return verdict_from(proof, decomposition.tree, [*work.evidence, *fused.evidence], fused.first_error_step,
                            fused.basis, fused.reason, mode=plan.mode, timings=timings, backends=self.backends(),
                            audit=audit, usage=usage, undecided=fused.undecided, anchored=fused.judge is not None)


def probe_endpoint(llm: LLMClient | None) -> None:
    """The one probe call before any work: raises ``LLMError`` (one line) when the model endpoint is
    unreachable, refuses the key or does not serve the model. A client without ``probe`` is trusted."""
    probe = getattr(llm, "probe", None)
    if callable(probe):
        probe()


def probe_settings(settings: Settings) -> None:
    """``probe_endpoint`` for the client ``settings`` describe (nothing to probe offline)."""
    if not stages_for(settings).needs_llm:
        return
    from faithsieve.llm.client import OpenAIClient

    client = OpenAIClient.from_settings(settings.model_copy(update={"llm_cache": False}))
    try:
        client.probe()
    finally:
        client.close()


@lru_cache(maxsize=4)
def checkers_for(settings: Settings) -> list[Checker]:
    """One set of checkers per settings in this process: their outcome memo and conversion cache serve
    every proof the process checks offline (a scoring run, a grader's worker, the service's workers)."""
    return build_checkers(settings)


@lru_cache(maxsize=4)
def pipeline_for(settings: Settings) -> Pipeline:
    """One pipeline per settings in this process (the LLM client and its cache are reused)."""
    return Pipeline.from_settings(settings)


def localize(proof: Proof, settings: Settings | None = None, checkers: list[Checker] | None = None) -> Verdict:
    """Return the verdict for one proof under ``settings`` (offline unless ``settings.mode`` says otherwise)."""
    settings = settings or Settings()
    stages = stages_for(settings)
    if not stages.needs_llm:  # offline: the process's checkers (their memo serves every proof), a fresh pipeline
        return Pipeline(settings, checkers=checkers if checkers is not None else checkers_for(settings),
                        stages=stages).localize(proof)
    shared = pipeline_for(settings)
    if checkers is None:
        return shared.localize(proof)
    return Pipeline(settings, checkers=checkers, llm=shared.llm, kernel=shared.kernel, stages=shared.stages).localize(proof)
