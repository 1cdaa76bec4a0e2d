"""``faithsieve localize``: one proof's verdict, as JSON or as a readable report.

The proof is checked in one killable worker process (``faithsieve.runtime.workers``) under the limits a
scored item runs under: a hard time limit (``--item-time-limit``; offline ``max(60, 4 x the proof
budget)`` s) and an address-space cap (``--worker-memory-mb``, 4096 MB). A proof past either ends with
verdict ``unknown`` and the reason (exit 1, the reason on stderr), never minutes of work or gigabytes.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from concurrent.futures import Future, wait
from typing import TYPE_CHECKING, Any

from faithsieve.cli.common import error_line, fail
from faithsieve.cli.options import add_limit_options, add_method_options
from faithsieve.core.errors import FaithSieveError, InputError, InputTooLarge
from faithsieve.runtime.textfile import (
    decode_utf8,
    json_file_kind,
    loads_json,
)

if TYPE_CHECKING:
    from faithsieve.core.proof import Proof
    from faithsieve.core.settings import Settings
    from faithsieve.runtime.workers import KillablePool
    from faithsieve.verdict import Verdict


def shown_name(path: str) -> str:
    """How messages name the input: the file, or ``<stdin>`` for ``-``."""
    return "<stdin>" if path == "-" else path


EXIT_ERROR = 1
"""``--exit-code``: the verdict is ``error`` (a step refuted)."""
EXIT_UNKNOWN = 3
"""``--exit-code``: the verdict is ``unknown`` (no answer; without ``--exit-code`` it exits 1)."""


def _read_input(path: str) -> Any:
    name = shown_name(path)
    if path == "-":
        raw = decode_utf8(sys.stdin.buffer.read(), name) if hasattr(sys.stdin, "buffer") else sys.stdin.read()
    else:
        with open(path, "rb") as fh:
            raw = decode_utf8(fh.read(), path)
    try:
        data = loads_json(raw, name)
    except json.JSONDecodeError as exc:
        kind = json_file_kind(raw)
        raise InputError(f"{name}: {kind}" if kind.startswith("not JSON") else
                         f"{name}: not valid JSON ({exc.msg} at line {exc.lineno}); it is {kind}") from None
    if not isinstance(data, dict):
        raise InputError(f"{name}: {json_file_kind(raw)}; localize reads one JSON object "
                         '{"problem", "steps": [...]} or {"problem", "proof": "..."}')
    if "steps" in data and "proof" in data:
        raise InputError(f"{name}: has both 'steps' and 'proof'; give one (steps: a list of strings, or proof: "
                         "one text that is split into steps)")
    return data


_RAISE_WITH = {"steps": "FAITHSIEVE_MAX_STEPS", "proof": "FAITHSIEVE_MAX_PROOF_CHARS"}
"""The setting that raises a size limit, by the field the ``InputTooLarge`` names (a step: ``steps[i]``)."""


def content_error(name: str, exc: FaithSieveError) -> str:
    """A refused proof as one line naming the file; a size limit says which setting raises it."""
    msg = exc.message if exc.message.startswith(name) else f"{name}: {exc.message}"
    if isinstance(exc, InputTooLarge):
        field = str((exc.detail or {}).get("field", "")) if isinstance(exc.detail, dict) else ""
        setting = "FAITHSIEVE_MAX_STEP_CHARS" if field.startswith("steps[") else _RAISE_WITH.get(field)
        if setting:
            msg += f" (raise it with {setting}=N)"
    return msg


def check_in_worker(proof: Proof, settings: Settings) -> Verdict:
    """The job the worker runs: the pipeline the settings describe, on one proof."""
    from faithsieve.pipeline import Pipeline

    return Pipeline.from_settings(settings).localize(proof)


_PLACEHOLDERS = frozenset({"", "n/a", "na", "none", "null", "-", "tbd", "todo"})
"""What a small model writes where it has nothing to say (after dots and ellipses are stripped)."""


def thin(text: str | None) -> bool:
    """Whether a model-written claim or reason says nothing: empty, ``...``, ``…`` or a placeholder."""
    return " ".join((text or "").split()).strip(" .…").lower() in _PLACEHOLDERS


def said(text: str | None, what: str) -> str:
    """A model-written text as printed: ``(model gave no claim)`` where it said nothing, else the text."""
    return f"(model gave no {what})" if thin(text) else str(text)


def suspect_lines(v: Verdict) -> list[str]:
    """The verdict's suspect refutations (kinds not yet measured clean), one line each (ten at most)."""
    if not v.suspect:
        return []
    head = f"suspect: {len(v.suspect)} refutation(s) of kinds not yet measured clean (shown, not deciding):"
    return [head, *(f"  step {ev.step}: {ev.claim} ({ev.method}) — {ev.suspect}" for ev in v.suspect[:10])]


def render_text(proof_steps: list[str], v: Verdict) -> str:
    """A readable report: each step, its EdgeUnits, obligations and outcomes."""
    out = []
    basis = {"checked": "checked: a literal claim refuted",
             "formalized": "formalized: a gated model-written statement refuted", "formal": "proved: a faithful formal statement refuted",
             "reviewed": "reviewed: local reviews of single units decided", "judged": "judged by the model, not proved"}
    if v.verdict == "error":
        out.append(f"VERDICT: error at step {v.first_error_step} [{basis.get(v.basis or '', v.mode)}]")
        out.append(f"  {said(v.reason, 'reason')}")
        if v.flag_kind:
            out.append(f"  flag kind: {v.flag_kind}")
    elif v.verdict == "unknown":
        out.append(f"VERDICT: unknown (no answer could be had; this is not a pass)\n  {v.reason}")
    elif v.mode == "offline":
        out.append("VERDICT: correct (no refuted obligation)")
    else:
        out.append(f"VERDICT: correct [{basis.get(v.basis or '', 'no reliable negative evidence')}]")
        if v.reason:
            out.append(f"  {v.reason}")
    out += suspect_lines(v)
    c = v.coverage
    out.append(
        f"coverage: {c.steps_decided}/{c.steps} steps decided, {c.edges_decided}/{c.edges} edges, "
        f"{c.obligations_decided}/{c.obligations} obligations; {v.timings.total_ms:.1f} ms"
    )
    if v.usage is not None:
        from faithsieve.scoring.run import unusable_notes

        u = v.usage
        unusable = unusable_notes(v.audit.notes if v.audit else ()) + sum(
            1 for rep in v.steps for e in rep.evidence if e.basis != "checked" and thin(e.claim))
        out.append(f"llm: {u.calls} calls, {u.cache_hits} cached, {u.prompt_tokens}+{u.completion_tokens} tokens, "
                   f"${u.cost_usd:.4f}; {u.unparsed} unparsed, {unusable} read but unusable, {u.failures} failed")
    if v.audit is not None:
        a = v.audit
        out.append(f"audit: {a.decomposition} decomposition, {a.substeps} sub-steps; scan overall {a.overall}; "
                   f"window {', '.join(a.window) or '-'}")
        for n in a.notes[:10]:
            out.append(f"  note: {n}")
    marks = {"refuted": "✗", "verified": "✓", "unknown": "?", "unchecked": "·"}
    for rep, text in zip(v.steps, proof_steps, strict=False):
        out.append("")
        out.append(f"[{marks[rep.status]}] Step {rep.step} ({rep.status})")
        snippet = " ".join(text.split())
        out.append(f"    {snippet[:160]}{'…' if len(snippet) > 160 else ''}")
        for e in rep.edges:
            out.append(f"    edge {e.id} [{e.type.value}] {' '.join(e.text.split())[:90]}")
        for ev in rep.evidence:
            status = "suspect refutation" if ev.suspect else ev.status
            line = (f"      {'!' if ev.suspect else marks[ev.status]} {ev.kind.value}: {said(ev.claim, 'claim')}"
                    f" — {status} ({ev.method})")
            if ev.counterexample:
                line += " counterexample: " + ", ".join(f"{k}={v}" for k, v in ev.counterexample.items())
            if ev.status != "refuted" and (ev.reason or ev.basis != "checked"):
                line += f"; {said(ev.reason, 'reason') if ev.basis != 'checked' else ev.reason}"
            out.append(line)
    return "\n".join(out)


ONE_PROOF_MODULES = ("faithsieve.pipeline", "faithsieve.split", "faithsieve.statetree.decompose", "faithsieve.stages.rule",
                     "faithsieve.cli.localize")
"""What the worker of one ``localize`` imports before its proof arrives: the pipeline, not the solvers (sympy,
z3, networkx load on first use, so a proof whose checks need none of them never pays for them)."""


def cmd_localize(args: argparse.Namespace) -> int:
    # the pipeline (pydantic models, solvers) is imported in the worker, not here: `--help` stays cheap
    from faithsieve.runtime.limits import WORKER_MEMORY_MB, ItemLimits

    memory_mb = WORKER_MEMORY_MB if args.worker_memory_mb is None else args.worker_memory_mb
    # one worker, started at once: its fork server imports the pipeline while this process reads the proof
    pool = ItemLimits(None, memory_mb).pool(1, preload=ONE_PROOF_MODULES)
    starting = pool.start_soon()
    try:
        return _localize(args, pool, starting, memory_mb)
    finally:
        wait([starting])
        pool.close()


def _localize(args: argparse.Namespace, pool: KillablePool, starting: Future[KillablePool], memory_mb: int) -> int:
    from faithsieve.cli.options import settings_from_args, warn_if_lean_missing
    from faithsieve.runtime.limits import ItemLimits, Stopped
    from faithsieve.split import proof_from_input

    t0 = time.perf_counter()
    try:
        settings = settings_from_args(args)
        try:
            proof = proof_from_input(_read_input(args.file), settings)
        except FaithSieveError as exc:
            raise InputError(content_error(shown_name(args.file), exc)) from None
        warning = warn_if_lean_missing(settings)
        if warning:
            print(warning, file=sys.stderr)
        if settings.mode != "offline":  # one call before any work: unreachable / bad key / missing model -> exit 2
            from faithsieve.pipeline import probe_settings

            probe_settings(settings)
        limits = ItemLimits.for_run(settings, args.item_time_limit, memory_mb)
        import faithsieve.verdict  # noqa: F401 - what the answer unpickles into, imported while the worker starts
        starting.result()  # a worker that could not start: WorkerUnavailable, one line
        if settings.lean_backend != "none" and not warning:
            settings = _warm_lean(pool, settings)
        # a configuration error (no endpoint, no model) comes back from the worker as one line
        v = limits.run(pool, check_in_worker, proof, settings)
    except (OSError, FaithSieveError, ValueError) as exc:
        return fail(error_line(exc))
    from faithsieve.verdict import Verdict, verdict_json

    if isinstance(v, Stopped):  # an answer that is not a pass: the verdict on stdout, the reason on stderr, exit 1
        v = Verdict.stopped(v.record, len(proof.steps), settings.mode, (time.perf_counter() - t0) * 1000)
    else:
        logging.getLogger("faithsieve.cli").info("%s: %d steps, verdict %s in %.1f ms", args.file, len(proof.steps),
                                                 v.verdict, v.timings.total_ms)
    if args.format == "text":
        print(render_text([s.text for s in proof.steps], v))
    else:
        print(json.dumps(verdict_json(v), indent=2, ensure_ascii=False))
    if v.verdict == "unknown":
        print(f"error: {shown_name(args.file)}: verdict unknown: {v.reason}", file=sys.stderr)
        return EXIT_UNKNOWN if args.exit_code else 1
    return EXIT_ERROR if args.exit_code and v.verdict == "error" else 0


WARM_MARGIN_S = 60.0
"""Seconds the start-up import job gets beyond the backend's import limit (``IMPORT_TIMEOUT_S``)."""


def _warm_lean(pool: KillablePool, settings: Settings) -> Settings:
    """Import the Lean header in the worker before the proof is checked, outside its limits (this process's REPL
    is new: the cost is said before it is paid). A start-up that does not finish leaves Lean out of this run."""
    from faithsieve.lean.local import IMPORT_TIMEOUT_S
    from faithsieve.pipeline import warm_lean
    from faithsieve.runtime.workers import JobTimeout, WorkerCrashed

    header = "`import Mathlib`" if settings.lean_mathlib else "no header (core Lean)"
    print(f"lean: this `faithsieve localize` starts its own Lean REPL(s) and imports {header} before the proof is "
          "checked, outside the proof's limits: from seconds (warm disk cache) to minutes (cold). `faithsieve serve`, "
          "`faithsieve score` or a Kimina server (--backend kimina) pays it once for many proofs.", file=sys.stderr)
    limit = IMPORT_TIMEOUT_S + WARM_MARGIN_S
    try:
        line = pool.run(warm_lean, settings, time_limit=limit)
    except (JobTimeout, WorkerCrashed) as exc:
        print(f"lean: the start-up import did not finish ({type(exc).__name__}, limit {limit:g} s); the proof is "
              "checked without Lean", file=sys.stderr)
        return settings.model_copy(update={"lean_backend": "none"})
    print(f"lean: {line}", file=sys.stderr)
    return settings


def register(sub: Any) -> None:
    loc = sub.add_parser("localize", help="localize the first error of one proof (JSON file or - for stdin)")
    loc.add_argument("file", help='JSON file with {"problem", "steps": [...]} or {"problem", "proof": "..."}; - for stdin')
    loc.add_argument("--format", choices=("json", "text"), default="json",
                     help="json (default): the verdict with every step's checks, machine-readable; "
                          "text: a readable report, one block per step")
    loc.add_argument("--exit-code", action="store_true",
                     help="exit like a linter: 0 correct, 1 error (a step refuted), 3 unknown; 2 stays a usage or "
                          "input error (without it: 0 for correct and error, 1 for unknown)")
    add_limit_options(loc, "the proof")
    add_method_options(loc)
    loc.set_defaults(func=cmd_localize)
