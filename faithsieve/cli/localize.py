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
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from faithsieve.cli.common import fail, non_negative_int, positive_float
from faithsieve.cli.options import add_method_options
from faithsieve.core.errors import FaithSieveError, InputError, InputTooLarge
from faithsieve.runtime.textfile import (
    decode_utf8,
    json_file_kind,
    loads_json,
    os_error_line,
)

if TYPE_CHECKING:
    from faithsieve.core.proof import Proof
    from faithsieve.core.settings import Settings
    from faithsieve.verdict import Verdict

T = TypeVar("T")

WORKER_MEMORY_MB = 4096
"""Address-space cap of the worker that checks the proof (``--worker-memory-mb``; 0: none): the cap a
scored item's worker has."""


def _read_input(path: str) -> Any:
    name = "<stdin>" if path == "-" else path
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


class LimitedWorker:
    """One killable worker under ``memory_mb``, started in the background at once (its fork server imports
    the checkers while this process reads the proof); ``run`` waits for that start, then the job."""

    def __init__(self, memory_mb: int) -> None:
        from faithsieve.runtime.lazy import OFFLINE_MODULES
        from faithsieve.runtime.workers import KillablePool

        self.memory_mb = memory_mb
        self.pool = KillablePool(1, memory_mb, preload=OFFLINE_MODULES, clean_main=True)
        self._failed: list[FaithSieveError] = []
        self._starting = threading.Thread(target=self._start, daemon=True, name="localize-worker-start")
        self._starting.start()

    def _start(self) -> None:
        try:
            self.pool.start()
        except FaithSieveError as exc:  # raised by ``run``, in the command's thread
            self._failed.append(exc)

    def run(self, job: Callable[..., T], args: tuple[Any, ...], time_s: float | None) -> T | str:
        """``job(*args)`` in the worker under ``time_s`` and the memory cap, or why it gave nothing: a sentence
        naming the limit and the option that raises it. A worker that could not start raises
        ``WorkerUnavailable``."""
        from faithsieve.runtime.workers import JobTimeout, WorkerCrashed

        self._starting.join()
        if self._failed:
            raise self._failed[0]
        try:
            result: T = self.pool.run(job, *args, time_limit=time_s)
            return result
        except JobTimeout:
            return f"the check ran past its time limit ({time_s:g} s) and was stopped; raise it with --item-time-limit"
        except MemoryError:
            return (f"the check ran out of its memory limit ({self.memory_mb} MB) and was stopped; raise it with "
                    "--worker-memory-mb (0: no limit)")
        except WorkerCrashed:
            return (f"the worker checking the proof died (memory limit {self.memory_mb or 'none'} MB, or killed); "
                    "raise the limit with --worker-memory-mb")

    def close(self) -> None:
        self._starting.join()
        self.pool.close()


def unknown_json(reason: str, settings: Settings) -> dict[str, Any]:
    """The verdict record of a proof whose check was stopped: ``unknown`` with the reason, nothing decided."""
    return {"verdict": "unknown", "first_error_step": None, "reason": f"resource_limit: {reason}",
            "mode": settings.mode, "steps": []}


def render_text(proof_steps: list[str], v: Verdict) -> str:
    """A readable report: each step, its EdgeUnits, obligations and outcomes."""
    out = []
    basis = {"checked": "checked: a literal claim refuted",
             "formalized": "formalized: a gated model-written statement refuted", "formal": "proved: a faithful formal statement refuted",
             "reviewed": "reviewed: local reviews of single units decided", "judged": "judged by the model, not proved"}
    if v.verdict == "error":
        out.append(f"VERDICT: error at step {v.first_error_step} [{basis.get(v.basis or '', v.mode)}]")
        out.append(f"  {v.reason}")
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
    c = v.coverage
    out.append(
        f"coverage: {c.steps_decided}/{c.steps} steps decided, {c.edges_decided}/{c.edges} edges, "
        f"{c.obligations_decided}/{c.obligations} obligations; {v.timings.total_ms:.1f} ms"
    )
    if v.usage is not None:
        u = v.usage
        out.append(f"llm: {u.calls} calls, {u.cache_hits} cached, {u.prompt_tokens}+{u.completion_tokens} tokens, "
                   f"${u.cost_usd:.4f}; {u.unparsed} unparsed, {u.failures} failed")
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
            line = f"      {marks[ev.status]} {ev.kind.value}: {ev.claim} — {ev.status} ({ev.method})"
            if ev.counterexample:
                line += " counterexample: " + ", ".join(f"{k}={v}" for k, v in ev.counterexample.items())
            if ev.reason and ev.status != "refuted":
                line += f"; {ev.reason}"
            out.append(line)
    return "\n".join(out)


def cmd_localize(args: argparse.Namespace) -> int:
    # the pipeline (pydantic models, solvers) is imported in the worker, not here: `--help` stays cheap
    worker = LimitedWorker(WORKER_MEMORY_MB if args.worker_memory_mb is None else args.worker_memory_mb)
    try:
        return _localize(args, worker)
    finally:
        worker.close()


def _localize(args: argparse.Namespace, worker: LimitedWorker) -> int:
    from faithsieve.cli.options import settings_from_args, warn_if_lean_missing
    from faithsieve.scoring.chunks import item_time_limit
    from faithsieve.split import proof_from_input

    try:
        settings = settings_from_args(args)
        try:
            proof = proof_from_input(_read_input(args.file), settings)
        except FaithSieveError as exc:
            raise InputError(content_error(args.file, exc)) from None
        warning = warn_if_lean_missing(settings)
        if warning:
            print(warning, file=sys.stderr)
        if settings.mode != "offline":  # one call before any work: unreachable / bad key / missing model -> exit 2
            from faithsieve.pipeline import probe_settings

            probe_settings(settings)
        time_s = args.item_time_limit if args.item_time_limit is not None else item_time_limit(settings)
        # a configuration error (no endpoint, no model) comes back from the worker as one line
        v = worker.run(check_in_worker, (proof, settings), time_s)
    except OSError as exc:
        return fail(os_error_line(exc))
    except (FaithSieveError, ValueError) as exc:
        return fail(str(getattr(exc, "message", exc)))
    from faithsieve.verdict import verdict_json

    if isinstance(v, str):  # an answer that is not a pass: the record on stdout, the reason on stderr, exit 1
        if args.format == "text":
            print(f"VERDICT: unknown (resource_limit: {v})")
        else:
            print(json.dumps(unknown_json(v, settings), indent=2, ensure_ascii=False))
        print(f"error: {args.file}: verdict unknown: {v}", file=sys.stderr)
        return 1
    logging.getLogger("faithsieve.cli").info("%s: %d steps, verdict %s in %.1f ms", args.file, len(proof.steps),
                                             v.verdict, v.timings.total_ms)
    if args.format == "text":
        print(render_text([s.text for s in proof.steps], v))
    else:
        print(json.dumps(verdict_json(v), indent=2, ensure_ascii=False))
    if v.verdict == "unknown":
        print(f"error: verdict unknown: {v.reason}", file=sys.stderr)
        return 1
    return 0


def register(sub: Any) -> None:
    loc = sub.add_parser("localize", help="localize the first error of one proof (JSON file or - for stdin)")
    loc.add_argument("file", help='JSON file with {"problem", "steps": [...]} or {"problem", "proof": "..."}; - for stdin')
    loc.add_argument("--format", choices=("json", "text"), default="json",
                     help="json (default): the verdict with every step's checks, machine-readable; "
                          "text: a readable report, one block per step")
    lim = loc.add_argument_group("limits", "the hard limits of the worker that checks the proof")
    lim.add_argument("--item-time-limit", type=positive_float, metavar="S",
                     help="hard seconds for the check (default: max(60, 4 x the proof budget) offline, none with a "
                          "model): past it the worker is killed and the verdict is unknown")
    lim.add_argument("--worker-memory-mb", type=non_negative_int, metavar="MB",
                     help=f"address-space cap of the worker (default {WORKER_MEMORY_MB}; 0: none): past it the "
                          "verdict is unknown")
    add_method_options(loc)
    loc.set_defaults(func=cmd_localize)
