"""What reading presentation (``faithsieve.mathtext.presentation.read_presentation``) changes on real
proofs: every item of the visible sources whose problem or steps it rewrites is localized twice, offline,
with the rewrite and without it, and the two verdicts are compared with the item's label.

Per source: items read, items rewritten, then among those the flags gained and lost, and for each
whether it lands on the labelled first error (``right``), elsewhere (``wrong``) or on a correct proof
(``on correct``). Precision is what must not fall: a gained flag that is not ``right`` is a new false flag.

    python bench/presentation_effect.py [--raw ../shared/datasets/raw] [--per-source 400] [--only processbench,...]
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any


def _outcome(pred: int | None, label: Any) -> str:
    if pred is None:
        return "none"
    if label == "correct":
        return "on correct"
    return "right" if pred == label else "wrong"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--raw", default="../shared/datasets/raw")
    ap.add_argument("--per-source", type=int, default=400)
    ap.add_argument("--only", default="")
    ap.add_argument("--json")
    args = ap.parse_args()

    from faithsieve.datasets.adapters import load_dataset

    from faithsieve.core.proof import Proof, Step
    from faithsieve.core.settings import Settings
    from faithsieve.mathtext import textnorm
    from faithsieve.mathtext.presentation import read_presentation
    from faithsieve.pipeline import checkers_for, localize

    settings = Settings(mode="offline")
    checkers = checkers_for(settings)
    real = textnorm.read_presentation
    report: dict[str, Any] = {}
    only = {s for s in args.only.split(",") if s}
    for src in sorted(p for p in Path(args.raw).iterdir() if p.is_dir()):
        if only and src.name not in only:
            continue
        try:
            items = load_dataset(src).items
        except Exception as exc:  # noqa: BLE001 - a source no adapter reads
            report[src.name] = {"error": str(exc)[:200]}
            continue
        changed = [it for it in items if any(read_presentation(textnorm.clean_text(t)) != textnorm.clean_text(t)
                                             for t in (it.problem, *it.steps))]
        random.Random(0).shuffle(changed)
        counts: Counter[str] = Counter()
        for it in changed[: args.per_source]:
            proof = Proof(problem=it.problem, steps=tuple(Step(index=i + 1, text=t) for i, t in enumerate(it.steps)))
            try:
                textnorm.read_presentation = lambda s: s  # type: ignore[assignment]
                before = localize(proof, settings, checkers).first_error_step
            finally:
                textnorm.read_presentation = real  # type: ignore[assignment]
            after = localize(proof, settings, checkers).first_error_step
            if before == after:
                counts["same"] += 1
                continue
            if before is not None:
                counts[f"lost {_outcome(before, it.label)}"] += 1
            if after is not None:
                counts[f"gained {_outcome(after, it.label)}"] += 1
        report[src.name] = {"items": len(items), "rewritten": len(changed), "compared": min(len(changed), args.per_source),
                            **dict(counts)}
        print(src.name, json.dumps(report[src.name]), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
