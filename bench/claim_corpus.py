"""The offline localizer on the project's own claim corpus (``tests/claims/*.jsonl``), per family.

For each family it prints: true cases flagged (any flag on a case with ``first_error == -1``) and true
cases with a ``suspect`` refutation only, false cases caught by a deciding kind (the flag exactly at the
labelled step), caught only as ``suspect`` (a refutation at the labelled step whose kind does not decide
yet, issue 35), early flags (a flag before the labelled step), and missed false cases (none of these). ``--show`` lists the cases that
went wrong, with the verdict's reason; ``--out`` writes the figures and the per-case flags as JSON.

    python bench/claim_corpus.py [--family identity] [--show] [--out claims.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "claims"


def load(corpus: Path, families: list[str] | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted(corpus.glob("*.jsonl")):
        if families and path.stem not in families:
            continue
        out += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return out


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    from faithsieve.core.proof import Proof, Step
    from faithsieve.pipeline import localize

    proof = Proof(problem=case["problem"], steps=tuple(Step(index=i, text=t) for i, t in enumerate(case["steps"], 1)))
    v = localize(proof)
    flag = None if v.first_error_step is None else v.first_error_step - 1  # 0-based, as the corpus writes
    read = getattr(v, "first_refutation", v.first_error_step)  # deciding or suspect (issue 35)
    seen = None if read is None else read - 1
    want = case["first_error"]
    if want == -1:
        outcome = "true_ok" if flag is None else "true_flagged"
    elif flag == want:
        outcome = "caught"
    elif flag is not None and flag < want:
        outcome = "early"
    else:
        outcome = "suspect" if seen == want else "missed"
    suspect_true = want == -1 and flag is None and seen is not None
    return {"id": case["id"], "family": case["family"], "first_error": want, "flag": flag, "outcome": outcome,
            "suspect_on_true": suspect_true, "reason": v.reason}


def tally(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    fams: dict[str, dict[str, int]] = {}
    for r in rows:
        f = fams.setdefault(r["family"], {"true": 0, "true_flagged": 0, "true_suspect": 0, "false": 0, "caught": 0,
                                          "suspect": 0, "early": 0, "missed": 0})
        if r["first_error"] == -1:
            f["true"] += 1
            f["true_flagged"] += r["outcome"] == "true_flagged"
            f["true_suspect"] += bool(r.get("suspect_on_true"))
        else:
            f["false"] += 1
            f[r["outcome"]] += 1
    total = {k: sum(f[k] for f in fams.values()) for k in ("true", "true_flagged", "true_suspect", "false", "caught",
                                                            "suspect", "early", "missed")}
    return {**dict(sorted(fams.items())), "ALL": total}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=CORPUS, help="folder of <family>.jsonl files")
    ap.add_argument("--family", action="append", help="only this family (repeatable)")
    ap.add_argument("--show", action="store_true", help="list the cases flagged wrongly or missed")
    ap.add_argument("--out", type=Path, help="write the figures and per-case flags as JSON")
    args = ap.parse_args(argv)
    cases = load(args.corpus, args.family)
    if not cases:
        print(f"no cases under {args.corpus}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    rows = [run_case(c) for c in cases]
    secs = time.perf_counter() - t0
    figures = tally(rows)
    print(f"{'family':<22}{'true':>6}{'flagged':>9}{'suspect':>9}{'false':>7}{'caught':>8}{'suspect':>9}{'early':>7}"
          f"{'missed':>8}")
    for fam, f in figures.items():
        print(f"{fam:<22}{f['true']:>6}{f['true_flagged']:>9}{f['true_suspect']:>9}{f['false']:>7}{f['caught']:>8}"
              f"{f['suspect']:>9}{f['early']:>7}{f['missed']:>8}")
    print(f"{len(rows)} cases in {secs:.1f} s")
    if args.show:
        for r in rows:
            if r["outcome"] not in ("true_ok", "caught"):
                print(f"  {r['outcome']:<13}{r['id']:<20} flag={r['flag']} want={r['first_error']}  {r['reason']}")
    if args.out:
        args.out.write_text(json.dumps({"figures": figures, "cases": rows, "seconds": round(secs, 2)}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
