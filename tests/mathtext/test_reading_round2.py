"""Round 2 of the reading fixes for ProcessBench-style text: notations whose formulas were not read."""

from __future__ import annotations

import pytest

from faithsieve.mathtext import extract_formulas, render_chain
from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps


def chains(text: str) -> list[str]:
    return [render_chain(f.chain) for f in extract_formulas(text)]


def first(*steps: str, problem: str = "Compute the value.") -> int | None:
    return localize(proof_from_steps(problem, list(steps))).first_refutation


@pytest.mark.parametrize("cmd", [r"\cancel", r"\bcancel", r"\xcancel"])
def test_a_struck_out_factor_keeps_its_value(cmd: str) -> None:
    r"""The cancel package's strike-through (``\cancel{6}``) marks a factor that cancels; the display is
    read as if the marks were not there."""
    marked = rf"Cancelling, \[ \frac{{{cmd}{{6}} \cdot 5}}{{{cmd}{{6}}}} = 5 \]"
    assert chains(marked) == chains(r"Cancelling, \[ \frac{6 \cdot 5}{6} = 5 \]") != []


def test_a_wrong_cancellation_is_caught() -> None:
    assert first("We start from the fraction.", r"Cancelling, \[ \frac{\cancel{6} \cdot 5}{\cancel{6}} = 6 \]") == 2
    assert first("We start from the fraction.", r"Cancelling, \[ \frac{\cancel{6} \cdot 5}{\cancel{6}} = 5 \]") is None
