"""Step-text helpers for the adapters (pure): step markers, numbered prefixes, grouping on ``Step k``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from faithsieve.datasets.registry import Exclude

__all__ = ["MarkedSteps", "group_marked_steps", "strip_number_prefix", "strip_step_marker"]

_STEP_MARK = re.compile(
    r"^[ \t>#_]*(?:\*\*[ \t]*)?s?tep[ \t]*(\d{1,3})[ \t]*(?:\*\*[ \t]*)?[:.)](?!\d)[ \t]*(?:\*\*)?[ \t]*",
    re.IGNORECASE,
)
_NUM_PREFIX = re.compile(r"^[ \t]*(\d{1,3})\.[ \t]+")


def strip_step_marker(text: str) -> str:
    """``"Step 3: Add."`` -> ``"Add."``; text without a leading ``Step k`` marker is kept."""
    m = _STEP_MARK.match(text)
    return text[m.end():].strip() if m else text.strip()


def strip_number_prefix(text: str, k: int) -> str:
    """``"3. Add."`` -> ``"Add."`` when the prefix is the step's own number ``k``."""
    m = _NUM_PREFIX.match(text)
    return text[m.end():].strip() if m and int(m.group(1)) == k else text.strip()


@dataclass
class MarkedSteps:
    """Steps grouped from pieces that start with ``Step k`` markers."""

    steps: list[str] = field(default_factory=list)
    """Step texts, markers removed."""
    numbers: list[int] = field(default_factory=list)
    """The marker number of each step (not always 1..n in the sources)."""
    trailer: str | None = None
    """A removed final non-step line (e.g. ``Solution: Choice_B``)."""

    def position_of(self, marker: int) -> int:
        """1-based position of the step whose marker is ``marker`` (``Exclude`` if absent or repeated)."""
        hits = [i for i, n in enumerate(self.numbers, 1) if n == marker]
        if not hits:
            raise Exclude("label names a step that is not in the solution")
        if len(hits) > 1:
            raise Exclude("label is ambiguous: the step numbering repeats")
        return hits[0]


def group_marked_steps(pieces: Sequence[str], trailer: re.Pattern[str] | None = None) -> MarkedSteps:
    """Group text pieces (lines or list entries) into steps on ``Step k`` markers.

    A piece that starts with a marker opens a step; any other non-blank piece continues the
    current one. Text before the first marker becomes its own step 1 when the first marker
    is ``Step 2`` (a dropped marker), otherwise it is prefixed to the first step. A last
    piece matching ``trailer`` (a final answer line that is not a step) is set aside.
    """
    out = MarkedSteps()
    body = [p for p in pieces if p.strip()]
    if trailer is not None and body and trailer.match(body[-1].strip()) and not _STEP_MARK.match(body[-1]):
        out.trailer = body.pop().strip()
    preamble: list[str] = []
    for piece in body:
        m = _STEP_MARK.match(piece)
        if m:
            out.numbers.append(int(m.group(1)))
            out.steps.append(piece[m.end():].strip())
        elif out.steps:
            out.steps[-1] = (out.steps[-1] + "\n" + piece.strip()).strip()
        else:
            preamble.append(piece.strip())
    if preamble:
        head = "\n".join(preamble)
        if out.numbers and out.numbers[0] == 2:
            out.steps.insert(0, head)
            out.numbers.insert(0, 1)
        elif out.steps:
            out.steps[0] = (head + "\n" + out.steps[0]).strip()
        else:
            out.steps, out.numbers = [head], [1]
    return out
