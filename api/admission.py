"""Which lane a proof runs in: the cost model's estimate (``faithsieve.mathtext.cost``, profile
``SERVICE``) made before dispatch, from the text alone.

Heavy proofs (long, or with formulas whose checking can use the whole budget: functions the
evaluator must bound, large exponents or factorials, powers of roots, absolute values or sums
with two-digit exponents, long runs of operators) run in the *heavy lane*, which may hold at most
``heavy_workers`` workers at once and ``heavy_max_pending`` admissions. The other workers stay
free for light proofs, so a storm of heavy ones slows only itself. The estimate is deliberately
cheap and conservative: a light proof misread as heavy only waits in the heavy lane; a heavy one
misread as light is still bounded by the checking budget.
"""

from __future__ import annotations

from typing import Any, Literal

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.cost import SERVICE, CostProfile, text_cost

Lane = Literal["light", "heavy"]


def lane_of(data: dict[str, Any], heavy_chars: int, profile: CostProfile = SERVICE) -> Lane:
    """``heavy`` for a proof with more than ``heavy_chars`` characters or a step the cost model
    (``text_cost`` under ``profile``) finds costly."""
    steps = data.get("steps")
    parts = [str(data.get("problem") or "")]
    parts += [str(s) for s in steps] if isinstance(steps, list) else [str(data.get("proof") or "")]
    if sum(len(p) for p in parts) > heavy_chars:
        return "heavy"
    try:
        return "heavy" if any(text_cost(p, profile) is not None for p in parts[1:]) else "light"
    except (FaithSieveError, RecursionError, ValueError):
        return "heavy"  # text the reader could not read: the conservative lane
