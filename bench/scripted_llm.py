"""The scripted-model harness: ``--mode judge`` and ``--mode llm`` (and its ablations) against an
OpenAI-compatible test server whose answers a persona writes from each item's label
(``tests/llm/persona.py``): perfect, noisy with a per-call accuracy that falls with the length of
the text judged, and a saboteur. Every stage runs for real over HTTP; only the model is scripted.

    .venv/bin/python bench/scripted_llm.py ../shared/datasets/raw/proofloc-university \
        --personas perfect,noisy,saboteur --modes judge,llm --ablations no_local_edges,no_gate,nl_only
    .venv/bin/python bench/scripted_llm.py ../shared/datasets/raw/processbench/math.json --sample 300

Prints one table row per (persona, mode): exact and binary accuracy, verdicts ``unknown``, calls and
tokens per item, the verdict basis counts, and for the saboteur the number of ``checked`` evidence
records whose statement is not written in the proof (must be 0). ``--json`` writes all figures,
including calls and tokens per item by prompt.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from faithsieve.core.settings import Settings
from faithsieve.pipeline import Pipeline
from faithsieve.split import proof_from_steps
from tests.llm.fakeserver import FakeOpenAI
from tests.llm.persona import Item, Persona, load_items


def _flat(text: str) -> str:
    return re.sub(r"\s+|\$", "", text.replace("\\times", "*").replace("\\cdot", "*"))


EXTRA: dict[str, Any] = {}
"""Extra ``Settings`` fields for every run (for a script that imports this module, e.g. ``max_audit_units``)."""


def calibrate_row(items: list[Item], persona: str, out: Path, seed: int = 0) -> dict[str, Any]:
    """``faithsieve calibrate``'s measurement of the persona on ``items`` (written to ``out``)."""
    from faithsieve.scoring.calibrate import measure

    p = Persona(items, kind=persona, seed=seed)  # type: ignore[arg-type]
    with FakeOpenAI() as server:
        server.respond_with(p.reply)
        settings = Settings(mode="llm", llm_base_url=server.base_url, llm_model=server.model, llm_cache=False,
                            llm_structured="json_schema", llm_timeout_s=30, llm_backoff_s=0.0, **EXTRA)
        pipe = Pipeline.from_settings(settings)
        records = [(it.label, pipe.localize(proof_from_steps(it.problem, list(it.steps), settings))) for it in items]
    cal = measure(records, model=f"persona:{persona}", dataset="scripted")
    out.write_text(cal.model_dump_json(indent=1))
    return {"persona": persona, **cal.model_dump(exclude={"version", "model", "dataset"})}


def run(items: list[Item], persona: str, mode: str, ablations: tuple[str, ...] = (), seed: int = 0,
        calibration: str | None = None) -> dict[str, Any]:
    """Localize every item with the persona behind the test server; the figures of the run."""
    p = Persona(items, kind=persona, seed=seed)  # type: ignore[arg-type]
    with FakeOpenAI() as server:
        server.respond_with(p.reply)
        settings = Settings(mode=mode, llm_base_url=server.base_url, llm_model=server.model, llm_cache=False,
                            llm_structured="json_schema", llm_timeout_s=30, **EXTRA, llm_backoff_s=0.0, ablations=ablations,
                            llm_calibration=calibration)
        pipe = Pipeline.from_settings(settings)
        exact = binary = unknown = model_checked = 0
        basis: Counter[str] = Counter()
        preds: list[tuple[int | None, int | None, str | None]] = []
        t0 = time.perf_counter()
        for it in items:
            v = pipe.localize(proof_from_steps(it.problem, list(it.steps), settings))
            pred = v.first_error_step if v.verdict == "error" else (None if v.verdict == "correct" else -1)
            exact += pred == it.label
            binary += pred != -1 and (pred is None) == (it.label is None)
            unknown += v.verdict == "unknown"
            preds.append((it.label, pred, v.basis))
            basis[str(v.basis)] += 1
            for rep in v.steps:  # a checked record whose statement the proof does not write
                text = _flat(it.steps[rep.step - 1])
                model_checked += sum(1 for e in rep.evidence if e.basis == "checked" and e.statement
                                     and _flat(e.statement.rstrip(".")) not in text)
        n = len(items)
        stages = {k: {"calls": round(c / n, 2), "prompt_tokens": round(pt / n, 1), "completion_tokens": round(ct / n, 1)}
                  for k, (c, pt, ct) in sorted(p.by_prompt.items())}
        tokens = sum(pt + ct for _, pt, ct in p.by_prompt.values())
        return {"persona": persona, "mode": mode + ("+cal" if calibration else ""), "ablations": list(ablations), "n": n,
                "exact": round(exact / n, 4), "binary": round(binary / n, 4), "unknown": unknown,
                "calls_per_item": round(p.calls / n, 2), "tokens_per_item": round(tokens / n, 1),
                "basis": dict(basis), "checked_from_model_statements": model_checked, "by_prompt": stages,
                "predictions": preds,
                "wall_s": round(time.perf_counter() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path")
    ap.add_argument("--personas", default="perfect,noisy,saboteur")
    ap.add_argument("--modes", default="judge,llm")
    ap.add_argument("--ablations", default="", help="comma-separated; each is run in llm mode under --ablation-persona")
    ap.add_argument("--ablation-persona", default="noisy")
    ap.add_argument("--limit", type=int, default=0, help="the first N items")
    ap.add_argument("--sample", type=int, default=0, help="N items evenly spaced over the set (after --limit)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write every figure here")
    ap.add_argument("--calibrate", type=int, default=0, metavar="N",
                    help="per persona: calibrate on N items outside the evaluated sample, then run llm with it")
    args = ap.parse_args(argv)
    everything = items = load_items(args.path)
    if args.limit:
        items = items[: args.limit]
    if args.sample and args.sample < len(items):
        items = [items[i * len(items) // args.sample] for i in range(args.sample)]
    personas = [p for p in args.personas.split(",") if p]
    rows = [run(items, persona, mode, seed=args.seed) for persona in personas
            for mode in args.modes.split(",") if mode]
    cals: list[dict[str, Any]] = []
    if args.calibrate:
        held = [it for it in everything if it not in items]  # calibrated on items the table does not score
        held = [held[i * len(held) // args.calibrate] for i in range(min(args.calibrate, len(held)))]
        for persona in personas:
            path = Path(f"/tmp/faithsieve-cal-{persona}.json")
            cals.append(calibrate_row(held, persona, path, args.seed))
            rows.append(run(items, persona, "llm", seed=args.seed, calibration=str(path)))
    rows += [run(items, args.ablation_persona, "llm", (ab,), seed=args.seed) for ab in args.ablations.split(",") if ab]
    print("| persona | mode | ablation | exact | binary | unknown | calls/item | tokens/item | basis | checked from model text |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['persona']} | {r['mode']} | {','.join(r['ablations']) or '-'} | {r['exact']:.3f} | {r['binary']:.3f} | "
              f"{r['unknown']} | {r['calls_per_item']} | {r['tokens_per_item']:.0f} | "
              f"{', '.join(f'{k} {v}' for k, v in sorted(r['basis'].items()))} | {r['checked_from_model_statements']} |")
    if cals:
        keys = ["items", "judge_exact", "judge_binary", "sound_units", "false_alarm", "wrong_steps", "sensitivity",
                "resample_pairs", "resample_agreement", "rho"]
        print("\n| persona | " + " | ".join(keys) + " |\n|---|" + "---|" * len(keys))
        for c in cals:
            print(f"| {c['persona']} | " + " | ".join(str(c[k]) for k in keys) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "calibrations": cals} if cals else rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
