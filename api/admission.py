"""Which lane a proof runs in: a cost estimate made before dispatch, from the text alone.

Heavy proofs (long, or with formulas whose checking can use the whole budget: functions the
evaluator must bound, large exponents or factorials, long runs of operators) run in the
*heavy lane*, which may hold at most ``heavy_workers`` workers at once and ``heavy_max_pending``
admissions. The other workers stay free for light proofs, so a storm of heavy ones slows only
itself. The estimate is deliberately cheap and conservative: a light proof misread as heavy only
waits in the heavy lane; a heavy one misread as light is still bounded by the checking budget.
"""

from __future__ import annotations

import re
from typing import Any, Literal

Lane = Literal["light", "heavy"]

_EXPENSIVE = re.compile(
    r"\\(?:exp|sin|cos|tan|ln|log|binom|dbinom|tbinom)\b|\b(?:exp|sin|cos|tan|ln|log)\s*\("
    r"|\^\s*\{?\s*-?\d{3,}|(?<!\d)\d{3,}\s*!|[=<>+*/^-]{16,}"
)
"""Transcendental functions, binomials, exponents and factorials of 3+ digits, runs of 16+ operators."""


def lane_of(data: dict[str, Any], heavy_chars: int) -> Lane:
    """``heavy`` for a proof with more than ``heavy_chars`` characters or an expensive-looking formula."""
    steps = data.get("steps")
    parts = [str(data.get("problem") or "")]
    parts += [str(s) for s in steps] if isinstance(steps, list) else [str(data.get("proof") or "")]
    if sum(len(p) for p in parts) > heavy_chars:
        return "heavy"
    return "heavy" if any(_EXPENSIVE.search(p) for p in parts[1:]) else "light"
