"""Write ``datasets/notation-probes/notation-probes.jsonl`` from the hand-written list in ``probes.py``.

    python datasets/builders/notation-probes/build.py           # write
    python datasets/builders/notation-probes/build.py --check   # exit 1 if the JSONL is stale

The list is checked for shape only (unique ids, non-empty steps, a label that is
``"correct"`` or a step number); the labels themselves are the author's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from probes import OK, PROBES  # noqa: E402

OUT = HERE.parents[1] / "notation-probes" / "notation-probes.jsonl"


def records() -> list[dict[str, Any]]:
    seen: set[str] = set()
    out = []
    for pid, domain, notation, problem, steps, label, reason in PROBES:
        if pid in seen:
            raise SystemExit(f"duplicate id {pid}")
        seen.add(pid)
        if not steps or not all(isinstance(s, str) and s.strip() for s in steps):
            raise SystemExit(f"{pid}: empty step")
        if label != OK and not (isinstance(label, int) and 1 <= label <= len(steps)):
            raise SystemExit(f"{pid}: bad label {label!r}")
        out.append({"id": pid, "problem": problem, "steps": steps, "label": label,
                    "domain": domain, "source": "notation-probes",
                    "meta": {"reason": reason, "notation": notation, "subset": domain}})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records())
    if ap.parse_args().check:
        stale = not OUT.exists() or OUT.read_text(encoding="utf-8") != text
        print("stale" if stale else "up to date")
        return int(stale)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.name}: {text.count(chr(10))} probes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
