"""The adversarial corpus: hand-written cases in ``corpus.jsonl`` plus generated large ones.

Each case is a request body for ``POST /localize`` (a JSON document, or raw bytes for the
JSON-level attacks). The contract: every case is answered 2xx (the verdict, with
``unknown`` evidence where a limit was hit) or 4xx, within the request time limit, with
no worker over its memory limit. Run the corpus and print the counts with

    python tests/adversarial/corpus.py [--workers 1]
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MARKER = Path("/tmp/faithsieve-pwned")
"""File the code-execution payloads try to create; it must never appear."""

XFAIL: dict[str, str] = {}
"""Case id -> reason, for inputs the pipeline does not yet survive (reported to its owners)."""


@dataclass(frozen=True)
class Case:
    id: str
    """Unique name."""
    category: str
    """What it attacks."""
    body: bytes
    """The request body, sent as is with ``Content-Type: application/json``."""
    note: str = ""
    """Why it is here, when the id does not say."""


def _json(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


def _steps(*steps: str, problem: str = "Prove the claim.") -> bytes:
    return _json({"problem": problem, "steps": list(steps)})


def generated() -> list[Case]:
    """Large inputs, built here rather than stored."""
    out: list[Case] = []

    def add(category: str, id_: str, body: bytes, note: str = "") -> None:
        out.append(Case(id_, category, body, note))

    # 10k-deep parentheses: one just under the step limit (reaches the parser), one over it.
    add("deep_nesting", "parens-9990", _steps("(" * 9990 + "1" + ")" * 9990 + " = 1"))
    add("deep_nesting", "parens-10000", _steps("(" * 10000 + "1" + ")" * 10000 + " = 1"), "over max_step_chars")
    add("deep_nesting", "parens-10000-split", _steps("(" * 10000, "1", ")" * 10000 + " = 1"),
        "10k-deep nesting spread over steps")
    add("deep_nesting", "parens-latex-9000", _steps("\\(" + "(" * 9000 + "x" + ")" * 9000 + " = x\\)"))
    add("deep_nesting", "brackets-braces-6000", _steps("[{" * 3000 + "2" + "}]" * 3000 + " = 2"))
    add("deep_nesting", "unary-minus-19990", _steps("-" * 19990 + "1 = 1"))
    add("deep_nesting", "power-chain-6000", _steps("2" + "^2" * 6000 + " = 4"))
    add("deep_nesting", "factorial-chain-15000", _steps("3" + "!" * 15000 + " = 6"))
    add("deep_nesting", "frac-nesting-3000", _steps("\\(" + "\\frac{1}{" * 1800 + "2" + "}" * 1800 + " = 1\\)"))
    add("deep_nesting", "unbalanced-open-19999", _steps("(" * 19999))

    # Megabyte inputs: body limit (1 MiB) and proof limits.
    add("megabyte", "step-1MB", _steps("1 + " * 250_000 + "1 = 2"), "a 1 MB step: fits the body, not max_step_chars")
    add("megabyte", "step-2MB", _steps("x" * 2_000_000), "over max_body_bytes")
    add("megabyte", "proof-text-1MB", _json({"problem": "p", "proof": "\n".join(["1 + 1 = 2"] * 100_000)}))
    add("megabyte", "problem-1MB", _json({"problem": "x = 1. " * 140_000, "steps": ["1 = 1"]}))
    add("megabyte", "200-steps-of-999", _steps(*[("12345 * 6789 = 83810205; " * 40)[:999]] * 200),
        "the largest accepted proof: 200 steps, 199,800 characters, all checkable")
    add("megabyte", "201-steps", _steps(*["1 = 1"] * 201))
    add("megabyte", "10k-empty-steps", _steps(*[""] * 10_000))
    add("megabyte", "4-byte-chars-250k", _steps("𝑥" * 19_999, "𝑥" * 19_999), "multi-byte characters near the limits")

    # ReDoS shapes at the step-size limit.
    add("redos", "a-bang-19999", _steps("a" * 19_999 + "!"))
    add("redos", "step-marker-spaces-19990", _json({"problem": "p", "proof": "Step 1" + " " * 19_990 + "x"}))
    add("redos", "numbered-tabs-19990", _json({"problem": "p", "proof": "1." + " \t" * 9_995 + "\n2. x"}))
    add("redos", "x-equals-9999", _steps("x=" * 9_999 + "x"))
    add("redos", "digits-dots-19999", _steps("1." * 9_999 + "1"))
    add("redos", "blank-lines-100k", _json({"problem": "p", "proof": "1 = 1" + "\n \n" * 60_000 + "2 = 2"}))
    add("redos", "nested-words-so", _steps(" ".join(["so", "x", "="] * 6_000)))

    # Checking load: every step makes the checkers work, under the per-proof budget.
    nested = "(" * 12 + "x+1" + ")^2+1" * 12
    add("checking_load", "200-nested-square-identities",
        _steps(*[f"{nested} = x^4096 + {i}" for i in range(200)]), "sympy expansion in every step")
    add("checking_load", "200-towers", _steps(*[f"{i}^{i}^{i}^{i} = {i}" for i in range(2, 202)]))
    add("checking_load", "200-big-powers", _steps(*[f"9^{9_999 - i} = 1" for i in range(200)]))
    add("checking_load", "200-factorials", _steps(*[f"{1_000 - i}! = {i}" for i in range(200)]))
    add("checking_load", "200-z3-nonlinear", _steps(*[f"x^3 + y^3 = {i}^3, so x = {i} and y = 0" for i in range(200)]))
    return out


def load_cases() -> list[Case]:
    """Every case: ``corpus.jsonl`` then the generated ones."""
    cases: list[Case] = []
    for line in (HERE / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        body = rec["raw"].encode("utf-8") if "raw" in rec else _json(rec["body"])
        cases.append(Case(rec["id"], rec["category"], body, rec.get("note", "")))
    cases.extend(generated())
    ids = [c.id for c in cases]
    dupes = sorted(i for i, n in Counter(ids).items() if n > 1)
    if dupes:
        raise ValueError(f"duplicate case ids: {dupes}")
    return cases


@dataclass(frozen=True)
class Outcome:
    case: Case
    status: int
    seconds: float
    code: str | None
    """Error code (non-2xx) or the verdict (2xx)."""
    evidence: dict[str, int]
    """Evidence records per status (2xx)."""


def run_case(client: Any, case: Case) -> Outcome:
    """Send one case through a TestClient; time it; summarise the answer."""
    t0 = time.perf_counter()
    r = client.post("/localize", content=case.body, headers={"content-type": "application/json"})
    seconds = time.perf_counter() - t0
    evidence: Counter[str] = Counter()
    code: str | None = None
    try:
        doc = r.json()
    except ValueError:
        doc = None
    if 200 <= r.status_code < 300 and isinstance(doc, dict):
        code = doc.get("verdict")
        evidence.update(ev["status"] for st in doc.get("steps", []) for ev in st.get("evidence", []))
    elif isinstance(doc, dict) and isinstance(doc.get("error"), dict):
        code = doc["error"].get("code")
    return Outcome(case, r.status_code, seconds, code, dict(evidence))


def summarize(outcomes: list[Outcome], time_limit_s: float) -> dict[str, Any]:
    """Counts of 2xx/4xx/5xx/other and of answers over the time limit, per category and in all."""
    def bucket(status: int) -> str:
        return f"{status // 100}xx" if status // 100 in (2, 4, 5) else "other"

    total = Counter(bucket(o.status) for o in outcomes)
    per_cat: dict[str, Counter[str]] = {}
    for o in outcomes:
        per_cat.setdefault(o.case.category, Counter())[bucket(o.status)] += 1
    over = [o.case.id for o in outcomes if o.seconds > time_limit_s]
    codes = Counter(o.code or "?" for o in outcomes)
    evidence: Counter[str] = Counter()
    for o in outcomes:
        evidence.update(o.evidence)
    return {"cases": len(outcomes), "status": dict(total), "over_time_limit": len(over), "over_ids": over,
            "per_category": {k: dict(v) for k, v in sorted(per_cat.items())}, "codes": dict(codes),
            "evidence": dict(evidence), "max_seconds": round(max((o.seconds for o in outcomes), default=0.0), 3),
            "marker_created": MARKER.exists()}


def main(argv: list[str]) -> int:
    import argparse

    from faithsieve.api.app import create_app
    from faithsieve.api.settings import ServiceSettings
    from fastapi.testclient import TestClient

    ap = argparse.ArgumentParser(description="Run the adversarial corpus through the app and print the counts.")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--slowest", type=int, default=10)
    args = ap.parse_args(argv)
    settings = ServiceSettings(workers=args.workers, cache_entries=0)
    MARKER.unlink(missing_ok=True)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        outcomes = [run_case(client, c) for c in load_cases()]
    summary = summarize(outcomes, settings.request_time_limit_s)
    print(json.dumps(summary, indent=2))
    print("slowest:")
    for o in sorted(outcomes, key=lambda o: -o.seconds)[: args.slowest]:
        print(f"  {o.seconds:7.3f} s  {o.status}  {o.case.category}/{o.case.id}  {o.code}  {o.evidence}")
    bad = [o for o in outcomes if not (200 <= o.status < 300 or 400 <= o.status < 500)]
    for o in bad:
        print(f"NOT 2xx/4xx: {o.case.id}: {o.status} {o.code}")
    return 1 if bad or summary["over_time_limit"] or summary["marker_created"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
