"""The hand-written notation probes (datasets/notation-probes): no correct probe is flagged, and
the flawed probes of the kinds the sieve refutes are caught at their labelled step.

The labels are the author's (hand-checked) truths, not the sieve's output: a failure here is a
false alarm on a notation users write, or a refutation given back."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from faithsieve.datasets.formats import load_proofloc

from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps

ROOT = Path(__file__).resolve().parents[2] / "datasets" / "notation-probes"
ITEMS, BAD = load_proofloc(ROOT / "notation-probes.jsonl")

# flawed probes whose false formula is of a kind the sieve refutes (closed arithmetic in the
# notations it reads): each must be flagged at its labelled step
CAUGHT = {
    "np-bad-mod-01", "np-bad-mod-03", "np-bad-floor-01", "np-bad-binom-01", "np-bad-fact-01", "np-bad-fact-02",
    "np-bad-seq-01", "np-bad-fun-01", "np-bad-der-01", "np-bad-int-01", "np-bad-set-01", "np-bad-ang-01",
    "np-bad-pct-01", "np-bad-mix-01", "np-bad-thou-01", "np-bad-mat-01", "np-bad-div-02", "np-bad-set-02",
    "np-bad-llm-01", "np-bad-given-01", "np-bad-time-01", "np-bad-oly-01", "np-bad-oly-02", "np-bad-oly-04",
    "np-bad-oly-08", "np-bad-llm-02", "np-bad-poly-01", "np-bad-nt-01", "np-bad-comb-01", "np-bad-stat-01",
}


def _first(item) -> int | None:  # type: ignore[no-untyped-def]
    return localize(proof_from_steps(item.problem, list(item.steps))).first_refutation


def test_the_set_is_whole_and_built() -> None:
    assert not BAD
    correct = [i for i in ITEMS if i.label == "correct"]
    assert len(correct) >= 80 and len(ITEMS) - len(correct) >= 25
    assert {i.id for i in ITEMS if i.label != "correct"} >= CAUGHT
    build = subprocess.run([sys.executable, str(ROOT.parent / "builders" / "notation-probes" / "build.py"), "--check"], capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr


def test_no_correct_probe_is_flagged() -> None:
    flagged = {i.id: _first(i) for i in ITEMS if i.label == "correct"}
    assert {k: v for k, v in flagged.items() if v is not None} == {}


@pytest.mark.parametrize("item", [i for i in ITEMS if i.id in CAUGHT], ids=lambda i: i.id)
def test_flawed_probe_caught_at_its_label(item) -> None:  # type: ignore[no-untyped-def]
    assert _first(item) == item.label
