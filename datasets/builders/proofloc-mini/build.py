"""Rebuild ``datasets/proofloc-mini/proofloc-mini.jsonl``: the hand-written items plus GSM8K-derived ones.

    python datasets/builders/proofloc-mini/build.py            # verify, rebuild, write
    python datasets/builders/proofloc-mini/build.py --check    # verify, rebuild, compare (exit 1 if stale)

The hand-written part is kept in ``handwritten.jsonl.txt`` beside this script (edit it there). Every
hand-written item is verified before anything is written:

* each written arithmetic chain ``a = b = c`` (plain text or LaTeX such as
  ``\\( \\frac{3}{4} \\cdot 20 = 15 \\)``, numeric powers like ``2^{10}`` included) is
  checked exactly with ``faithsieve.datasets.inject.evaluate`` (mathtext's exact evaluator); a link
  written with ``≈`` must agree to the precision of its right-hand number. In items
  labelled correct this covers every step, in error items the steps before the label;
* the facts listed in ``meta.checks`` (symbolic identities, divisibility, numeric
  comparisons, ``forall n in A..B: ...``) are checked with sympy, and so is
  ``meta.error_check``, a true fact that contradicts the labelled step.

The GSM8K part is regenerated from ``../shared/datasets/raw/gsm8k/train.jsonl`` by the
injector with the fixed seed below: records are drawn in a seeded order, only those
whose written equations all parse and check (3 to 8 steps) are used; the first
``N_CORRECT`` are kept unmodified (label ``correct``), and each of the ``N_ERROR`` error
slots takes the next mutation in turn and the first unused record that admits it.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

from faithsieve.datasets.inject import MUTATIONS, find_chains, gsm8k_steps, inject_items

from faithsieve.runtime.atomic import write_atomic

HERE = Path(__file__).resolve().parent
HANDWRITTEN = HERE / "handwritten.jsonl.txt"
OUTPUT = HERE.parents[1] / "proofloc-mini" / "proofloc-mini.jsonl"
DEFAULT_GSM8K = HERE.parents[3] / "shared" / "datasets" / "raw" / "gsm8k"

SEED = 20250301
SPLIT = "train"
N_CORRECT = 22
N_ERROR = 50
DOMAINS = {"word_problem", "algebra", "number_theory", "inequality", "gsm8k"}
VISIBILITY = {"formula", "verbal", "arithmetic"}


# ---------------------------------------------------------------------------
# Checking hand-written items
# ---------------------------------------------------------------------------

_FRAC = re.compile(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}")
_POW = re.compile(r"(?<![\w.)}])(\d+(?:\.\d+)?)\^(?:\{(\d{1,2})\}|(\d))(?![\d.])")


def _pow(m: re.Match[str]) -> str:
    base, exp = Fraction(m.group(1)), int(m.group(2) or m.group(3))
    value = base**exp
    if value > 10**15:
        return m.group(0)
    return str(value.numerator) if value.denominator == 1 else str(float(value))


def normalize(text: str) -> str:
    """LaTeX to the plain arithmetic the chain checker reads; other commands become ``#``."""
    t = re.sub(r"\\[()\[\]]", " ", text)
    t = re.sub(r"\\(left|right)(?![A-Za-z])", "", t)
    for _ in range(5):
        t2 = _FRAC.sub(r"((\1)/(\2))", t)
        if t2 == t:
            break
        t = t2
    t = re.sub(r"\\(cdot|times)(?![A-Za-z])", " * ", t)
    t = re.sub(r"\\div(?![A-Za-z])", " / ", t)
    t = re.sub(r"\\[,;:! ]", " ", t)
    t = _POW.sub(_pow, t)
    t = re.sub(r"\\[A-Za-z]+", "#", t)
    return t


def _places(text: str) -> int:
    m = re.search(r"\d+(?:\.(\d+))?\s*$", text)
    return len(m.group(1) or "") if m else 0


def arithmetic_problems(text: str) -> list[str]:
    """Written arithmetic links in ``text`` that do not hold (``≈`` to the written precision)."""
    norm = normalize(text)
    plain = norm.replace("\u2248", "=")
    out = []
    for ch in find_chains(plain):
        if ch.status == "unparsed" or not ch.values:
            continue
        segs, vals = ch.segments, ch.values
        for i in range(len(segs) - 1):
            gap = norm[segs[i][-1].end:segs[i + 1][0].start]
            right = plain[segs[i + 1][0].start:segs[i + 1][-1].end]
            left = plain[segs[i][0].start:segs[i][-1].end]
            if "\u2248" in gap:
                tol = Fraction(1, 2) / 10 ** _places(right)
                if abs(vals[i] - vals[i + 1]) > tol:
                    out.append(f"{left} \u2248 {right} is off by {float(vals[i] - vals[i + 1]):.6g}")
            elif vals[i] != vals[i + 1]:
                if ch.status == "verified":  # a "= 4%" percentage link
                    continue
                out.append(f"{left} = {right} is false ({float(vals[i]):.6g} vs {float(vals[i + 1]):.6g})")
    return out


_REL = re.compile(r" (==|!=|<=|>=|<|>) ")


def check_fact(fact: str) -> bool:
    """Evaluate one fact with sympy: ``A == B`` (identity), ``A != B``, numeric ``<``,
    ``<=``, ``>``, ``>=``, or ``forall n in A..B: FACT`` over the integers A..B."""
    import sympy

    m = re.fullmatch(r"forall (\w+) in (-?\d+)\.\.(-?\d+): (.+)", fact.strip())
    if m:
        var, lo, hi, body = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
        return all(check_fact(re.sub(rf"\b{var}\b", f"({v})", body)) for v in range(lo, hi + 1))
    parts = _REL.split(fact.strip())
    if len(parts) != 3:
        raise ValueError(f"not a fact: {fact!r}")
    lhs, op, rhs = sympy.sympify(parts[0]), parts[1], sympy.sympify(parts[2])
    if op in ("==", "!="):
        zero = sympy.simplify(sympy.expand(lhs - rhs)) == 0
        return zero if op == "==" else not zero
    if lhs.free_symbols or rhs.free_symbols:
        raise ValueError(f"comparison with free symbols: {fact!r}")
    return bool({"<": lhs < rhs, "<=": lhs <= rhs, ">": lhs > rhs, ">=": lhs >= rhs}[op])


def _shape_problems(item: dict[str, Any]) -> list[str]:
    """Missing keys, malformed steps or an out-of-range label (the item cannot be read further)."""
    out = [f"missing {key}" for key in ("id", "problem", "steps", "label", "domain", "source", "meta")
           if key not in item]
    if out:
        return out
    steps, label = item["steps"], item["label"]
    if not isinstance(steps, list) or not steps or not all(isinstance(s, str) and s for s in steps):
        return ["steps must be a non-empty list of strings"]
    if label != "correct" and not (type(label) is int and 1 <= label <= len(steps)):
        return [f"label {label!r} out of range"]
    return []


def _content_problems(item: dict[str, Any]) -> list[str]:
    """The domain, the reason, the arithmetic of the steps before the error, the visibility."""
    steps, label, meta = item["steps"], item["label"], item["meta"]
    out = []
    if item["domain"] not in DOMAINS:
        out.append(f"unknown domain {item['domain']!r}")
    if not isinstance(meta.get("reason"), str) or not meta["reason"].strip() or "\n" in meta["reason"]:
        out.append("meta.reason must be one non-empty line")
    checked = steps if label == "correct" else steps[: label - 1]
    for k, step in enumerate(checked, start=1):
        for p in arithmetic_problems(step):
            out.append(f"step {k}: {p}")
    if label != "correct" and meta.get("visibility") not in VISIBILITY:
        out.append("error items need meta.visibility (formula, verbal or arithmetic)")
    return out


def _fact_problems(meta: dict[str, Any]) -> list[str]:
    """The author's facts must hold: each of ``checks``, and the ``error_check`` (true, and contradicting the step)."""
    out = []
    for fact in meta.get("checks", []):
        try:
            if not check_fact(fact):
                out.append(f"check fails: {fact}")
        except Exception as exc:  # noqa: BLE001 - reported, never hidden
            out.append(f"check unreadable: {fact} ({exc})")
    if "error_check" in meta:
        try:
            if not check_fact(meta["error_check"]):
                out.append(f"error_check fails: {meta['error_check']}")
        except Exception as exc:  # noqa: BLE001
            out.append(f"error_check unreadable: {meta['error_check']} ({exc})")
    return out


def item_problems(item: dict[str, Any]) -> list[str]:
    """Everything wrong with one hand-written item (empty when it is fine)."""
    out = _shape_problems(item)
    if out:
        return out
    return _content_problems(item) + _fact_problems(item["meta"])


def load_handwritten(path: Path = HANDWRITTEN) -> list[dict[str, Any]]:
    items = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise SystemExit(f"{path}:{lineno}: not JSON ({exc.msg})") from None
    return items


def verify_handwritten(items: list[dict[str, Any]]) -> list[str]:
    problems = []
    seen: set[str] = set()
    for it in items:
        iid = it.get("id", "?")
        if iid in seen:
            problems.append(f"{iid}: duplicate id")
        seen.add(iid)
        problems.extend(f"{iid}: {p}" for p in item_problems(it))
    return problems


# ---------------------------------------------------------------------------
# GSM8K-derived part
# ---------------------------------------------------------------------------


def _fully_checked(answer: str) -> bool:
    """Every written chain parses and checks, and there are at least two of them."""
    try:
        steps = gsm8k_steps(answer)
    except ValueError:
        return False
    chains = [c for s in steps for c in find_chains(s)]
    return len(chains) >= 2 and all(c.status == "verified" for c in chains) and 3 <= len(steps) <= 8


def injected_items(gsm8k_dir: Path) -> list[dict[str, Any]]:
    """The GSM8K-derived items: ``N_CORRECT`` unmodified, then ``N_ERROR`` injected, the
    mutations taken in turn (error slot ``i`` gets ``MUTATIONS[i % 7]`` and the first
    unused record, in the seeded order, that admits it)."""
    lines = (gsm8k_dir / f"{SPLIT}.jsonl").read_text(encoding="utf-8").splitlines()
    order = list(range(len(lines)))
    random.Random(SEED).shuffle(order)

    def usable() -> Iterator[dict[str, Any]]:
        for idx in order:
            rec = json.loads(lines[idx])
            if _fully_checked(rec["answer"]):
                yield dict(rec, gsm8k_index=idx, split=SPLIT)

    stream = usable()
    out: list[dict[str, Any]] = []
    for _ in range(N_CORRECT):
        out += inject_items([next(stream)], [], seed=SEED, per_item=0, include_correct=True)
    pool: list[dict[str, Any]] = []
    used: set[int] = set()
    for slot in range(N_ERROR):
        mutation = MUTATIONS[slot % len(MUTATIONS)]
        made: list[dict[str, Any]] = []
        pos = 0
        while not made:
            if pos == len(pool):
                pool.append(next(stream))
            rec = pool[pos]
            pos += 1
            if rec["gsm8k_index"] in used:
                continue
            made = inject_items([rec], [mutation], seed=SEED, per_item=1)
            if made:
                used.add(rec["gsm8k_index"])
        out += made
    for it in out:
        it["meta"]["subset"] = "injected"
    return out


def build(gsm8k_dir: Path) -> list[dict[str, Any]]:
    hand = load_handwritten()
    problems = verify_handwritten(hand)
    if problems:
        raise SystemExit("hand-written items fail verification:\n  " + "\n  ".join(problems))
    for it in hand:
        it["meta"].setdefault("subset", "handwritten")
    return hand + injected_items(gsm8k_dir)


def render(items: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(it, ensure_ascii=False) + "\n" for it in items)




def summary(items: list[dict[str, Any]]) -> str:
    by = Counter((it["domain"], "correct" if it["label"] == "correct" else "error") for it in items)
    lines = [f"{len(items)} items, {sum(it['label'] == 'correct' for it in items)} correct"]
    for dom in sorted({d for d, _ in by}):
        lines.append(f"  {dom:14s} correct {by[(dom, 'correct')]:3d}  error {by[(dom, 'error')]:3d}")
    muts = Counter(it["meta"].get("mutation") for it in items if it["meta"].get("subset") == "injected"
                   and it["label"] != "correct")
    lines.append("  mutations: " + ", ".join(f"{k} {v}" for k, v in sorted(muts.items())))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gsm8k", type=Path, default=DEFAULT_GSM8K, help="folder with train.jsonl")
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 if the file is stale")
    args = ap.parse_args(argv)
    if not (args.gsm8k / f"{SPLIT}.jsonl").is_file():
        print(f"no {SPLIT}.jsonl under {args.gsm8k}", file=sys.stderr)
        return 2
    text = render(build(args.gsm8k))
    items = [json.loads(line) for line in text.splitlines()]
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT} is stale; run build.py", file=sys.stderr)
            return 1
        print(summary(items))
        return 0
    write_atomic(OUTPUT, text, mode=0o644)
    print(f"wrote {OUTPUT}\n{summary(items)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
