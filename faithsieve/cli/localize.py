"""``faithsieve localize``: one proof's verdict, as JSON or as a readable report."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import TYPE_CHECKING, Any

from faithsieve.cli.common import fail
from faithsieve.cli.options import add_method_options
from faithsieve.core.errors import FaithSieveError
from faithsieve.runtime.textfile import decode_utf8, os_error_line

if TYPE_CHECKING:
    from faithsieve.verdict import Verdict


def _read_input(path: str) -> Any:
    if path == "-":
        raw = decode_utf8(sys.stdin.buffer.read(), "<stdin>") if hasattr(sys.stdin, "buffer") else sys.stdin.read()
    else:
        with open(path, "rb") as fh:
            raw = decode_utf8(fh.read(), path)
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise FaithSieveError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None


def render_text(proof_steps: list[str], v: Verdict) -> str:
    """A readable report: each step, its EdgeUnits, obligations and outcomes."""
    out = []
    basis = {"checked": "checked: a literal claim refuted",
             "formalized": "formalized: a gated model-written statement refuted", "formal": "proved: a faithful formal statement refuted",
             "reviewed": "reviewed: local reviews of single units decided", "judged": "judged by the model, not proved"}
    if v.verdict == "error":
        out.append(f"VERDICT: error at step {v.first_error_step} [{basis.get(v.basis or '', v.mode)}]")
        out.append(f"  {v.reason}")
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
    # the pipeline (pydantic models, solvers) is imported here, not at start-up: `--help` stays cheap
    from faithsieve.cli.options import settings_from_args, warn_if_lean_missing
    from faithsieve.pipeline import Pipeline, probe_endpoint
    from faithsieve.split import proof_from_input

    try:
        settings = settings_from_args(args)
        data = _read_input(args.file)
        proof = proof_from_input(data, settings)
        warning = warn_if_lean_missing(settings)
        if warning:
            print(warning, file=sys.stderr)
        pipeline = Pipeline.from_settings(settings)
        probe_endpoint(pipeline.llm if pipeline.stages.needs_llm else None)  # one call, before any work
    except OSError as exc:
        return fail(os_error_line(exc))
    except (FaithSieveError, ValueError) as exc:
        return fail(str(getattr(exc, "message", exc)))
    from faithsieve.verdict import verdict_json

    v = pipeline.localize(proof)
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
    add_method_options(loc)
    loc.set_defaults(func=cmd_localize)
