"""Rebuild ``datasets/heldout-probes/heldout-probes.jsonl`` from the hand-written sources in this
folder (``*.txt``).

    python datasets/builders/heldout-probes/build.py            # parse, check the layout, write
    python datasets/builders/heldout-probes/build.py --check    # parse, compare (exit 1 if stale)

Source layout (one block per item, blocks separated by blank lines)::

    === ID | correct | DOMAIN
    === ID | K | DOMAIN | why step K is wrong
    Q: the problem
    - step one
    - step two, which may go on over
      indented continuation lines (aligned displays)

Only the layout is checked here (unique ids, a label within the steps, a reason for every
flawed item); the mathematics was checked by hand when the items were written.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE.parents[1] / "heldout-probes" / "heldout-probes.jsonl"
SOURCE = "heldout-probes"


def _item(header: str, body: list[str], where: str) -> dict[str, Any]:
    parts = [p.strip() for p in header[3:].split("|")]
    if len(parts) not in (3, 4):
        raise ValueError(f"{where}: header needs 'ID | LABEL | DOMAIN [| REASON]'")
    ident, label, domain = parts[:3]
    if not body or not body[0].startswith("Q: "):
        raise ValueError(f"{where}: {ident}: the problem line 'Q: ...' must follow the header")
    problem, steps = body[0][3:].strip(), []
    for line in body[1:]:
        if line.startswith("- "):
            steps.append(line[2:].strip())
        elif line.startswith("  ") and steps:
            steps[-1] += "\n" + line.strip()
        else:
            raise ValueError(f"{where}: {ident}: unexpected line {line!r}")
    if not steps:
        raise ValueError(f"{where}: {ident}: no steps")
    meta = {"subset": "handwritten", "held_out": True, "family": domain}
    if label == "correct":
        meta["reason"] = "hand-checked correct solution"
        value: str | int = "correct"
    else:
        value = int(label)
        if not 1 <= value <= len(steps):
            raise ValueError(f"{where}: {ident}: label {value} outside 1..{len(steps)}")
        if len(parts) != 4 or not parts[3]:
            raise ValueError(f"{where}: {ident}: a flawed item needs a reason")
        meta["reason"] = parts[3]
    return {"id": ident, "problem": problem, "steps": steps, "label": value,
            "domain": domain, "source": SOURCE, "meta": meta}


def build() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for path in sorted(HERE.glob("*.txt")):
        header: str | None = None
        body: list[str] = []
        lines = path.read_text(encoding="utf-8").splitlines() + [""]
        for number, line in enumerate(lines, 1):
            if line.startswith("=== "):
                header, body, start = line, [], number
            elif not line.strip():
                if header is not None:
                    items.append(_item(header, body, f"{path.name}:{start}"))
                header = None
            elif header is not None:
                body.append(line)
    ids = [item["id"] for item in items]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ValueError(f"duplicate ids: {duplicated}")
    return items


def render(items: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    text = render(build())
    if args.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print("heldout-probes.jsonl is stale: run build.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
