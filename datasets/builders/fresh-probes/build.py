"""Build ``datasets/fresh-probes/fresh-probes.jsonl`` from the hand-written probes in this folder.

    python datasets/builders/fresh-probes/build.py           # verify every fact, write the file
    python datasets/builders/fresh-probes/build.py --check   # verify, exit 1 if the file is stale

The probes live in ``probes_correct_a.py``, ``probes_correct_b.py`` and
``probes_flawed.py`` (plain data). Before anything is written, every fact an item lists
is verified with sympy: ``checks`` (the arithmetic and identities a correct solution, or
the steps before the label of a flawed one, rely on) must hold, and so must a flawed
item's ``error_check`` (a true fact its labelled step contradicts). The facts are the
author's own expressions, evaluated with a namespace of sympy functions and no Python
builtins beyond a few pure ones; no solution text is ever evaluated.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import sympy

from faithsieve.runtime.atomic import write_atomic

HERE = Path(__file__).resolve().parent
OUTPUT = HERE.parents[1] / "fresh-probes" / "fresh-probes.jsonl"
SOURCE = "fresh-probes/handwritten"

_SAFE_BUILTINS = {"abs": abs, "all": all, "any": any, "len": len, "range": range, "sum": sum}
_SYMPY_NAMES = [
    "I", "Matrix", "Mod", "Rational", "atan", "binomial", "ceiling", "cos", "diff", "divisor_count",
    "exp", "expand", "factorial", "fibonacci", "floor", "gcd", "integrate", "isprime", "lcm", "limit",
    "oo", "pi", "simplify", "sin", "sqrt", "tan", "totient",
]


def _namespace() -> dict[str, Any]:
    names: dict[str, Any] = {name: getattr(sympy, name) for name in _SYMPY_NAMES}
    names.update({s: sympy.Symbol(s) for s in ("a", "b", "c", "k", "m", "n", "x", "y")})
    names["__builtins__"] = _SAFE_BUILTINS
    return names


def holds(fact: str) -> bool:
    """Whether an author-written fact is true (a sympy relation or a Python comparison)."""
    return bool(eval(fact, _namespace()))  # author-written facts only, never input text


def _load() -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    sys.path.insert(0, str(HERE))
    try:
        from probes_correct_a import CORRECT_A
        from probes_correct_b import CORRECT_B
        from probes_flawed import FLAWED
    finally:
        sys.path.pop(0)
    return CORRECT_A + CORRECT_B, FLAWED


def build_items() -> list[dict[str, Any]]:
    """Verify every probe and return the records in file order (correct first)."""
    correct, flawed = _load()
    items: list[dict[str, Any]] = []
    problems: list[str] = []
    for pid, domain, style, problem, steps, checks in correct:
        problems += [f"{pid}: fact fails: {f}" for f in checks if not holds(f)]
        items.append(_record(pid, domain, style, problem, steps, "correct", checks, None))
    for pid, domain, style, problem, steps, label, checks, error_check in flawed:
        problems += [f"{pid}: fact fails: {f}" for f in [*checks, error_check] if not holds(f)]
        if not 1 <= label <= len(steps):
            problems.append(f"{pid}: label {label} out of range")
        items.append(_record(pid, domain, style, problem, steps, label, checks, error_check))
    ids = [item["id"] for item in items]
    if len(set(ids)) != len(ids):
        problems.append("duplicate ids")
    if problems:
        raise SystemExit("fresh-probes: refusing to write:\n" + "\n".join(problems))
    return items


def _record(pid: str, domain: str, style: str, problem: str, steps: Iterable[str], label: int | str,
            checks: Iterable[str], error_check: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"subset": "handwritten", "style": style, "checks": list(checks)}
    if error_check is not None:
        meta["error_check"] = error_check
    return {"id": pid, "problem": problem, "steps": list(steps), "label": label,
            "domain": domain, "source": SOURCE, "meta": meta}


def render(items: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    items = build_items()
    text = render(items)
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print("fresh-probes.jsonl is stale: run datasets/builders/fresh-probes/build.py", file=sys.stderr)
            return 1
        return 0
    write_atomic(OUTPUT, text, mode=0o600)  # the mode the file always had (it was written through mkstemp)
    n_correct = sum(item["label"] == "correct" for item in items)
    print(f"wrote {OUTPUT.name}: {n_correct} correct, {len(items) - n_correct} flawed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
