"""Shared material of the workbench tests: a proof with a known slip, a toy dataset with every
outcome, settings, and a port in the range the project's live servers may use."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from faithsieve.api.settings import ServiceSettings

SLIP = {"problem": "Solve 2x + 3 = 11.",
        "proof": "Step 1: The equation to solve is 2x + 3 = 11.\nStep 2: Solving, we get x = 5.\nStep 3: So the answer is 5."}
"""A proof with a known slip: x = 5 does not solve 2x + 3 = 11 (13 ≠ 11); step 2 is refuted exactly."""

_WRONG = ["Compute 7 + 8 = 16.", "Then 16 + 1 = 17."]   # step 1 is wrong
_RIGHT = ["Compute 7 + 8 = 15.", "Then 15 + 1 = 16."]
ITEMS = [
    # id, steps, label -> outcome (offline predicts step 1 for _WRONG, correct for _RIGHT)
    ("exact-1", _WRONG, 1),            # exact
    ("early-1", _WRONG, 2),            # flag before the label: early
    ("early-2", _WRONG, "correct"),    # flag on a correct proof: early
    ("missed-1", _RIGHT, 2),           # missed
    ("correct-1", _RIGHT, "correct"),  # correct
    ("late-1", ["Compute 7 + 8 = 15.", "Note that 15 is odd.", "Then 15 + 1 = 17."], 2),  # flag at 3: late
]


def write_dataset(path: Path) -> Path:
    rows = [{"id": i, "problem": "Compute 7 + 8 + 1.", "steps": steps, "label": label, "source": "web-test",
             "meta": {"subset": "toy" if i.startswith("e") else "other"}} for i, steps, label in ITEMS]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def web_settings(**overrides: Any) -> ServiceSettings:
    return ServiceSettings(**{"workers": 1, "max_pending": 8, "batch_max_items": 8, **overrides})


def workbench_port() -> int:
    """A free port among those this project's tests may use (8150-8159)."""
    for port in range(8150, 8160):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    pytest.skip("no free port in 8150-8159 for a live server")
