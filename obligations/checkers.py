"""The cheap checkers, cheapest first: exact rationals, sympy, z3.

A checker returns ``None`` when an obligation is not its kind, otherwise an
``Outcome`` value: ``Verified``, ``Refuted`` (counterexample confirmed exactly)
or ``Unknown``. Checkers never raise for a bad formula: size limits and
unsupported nodes become ``Unknown`` with the reason.

Rounding is the main source of false alarms, so a numeric mismatch is refuted
only when no reading of the precision shown explains it: rounding or
truncation to the digits written, values rounded earlier in the proof,
running-total chains (``3 × 4 = 12 + 5 = 17``), and percent-of-base notation.

The checkers live in ``exact``, ``symbolic`` and ``smt``; this module holds their registry and the
portfolio that runs them, and re-exports them.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from faithsieve.mathtext.cost import budget
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS
from faithsieve.obligations.exact import Checker, ExactChecker, compare_values, fmt
from faithsieve.obligations.memo import MEMO
from faithsieve.obligations.models import (
    ArithmeticObligation, CoverageObligation, DerivationObligation, IdentityObligation, Obligation, Outcome,
    SubstitutionObligation, Unknown,
)
from faithsieve.obligations.smt import MAX_GAP_CANDIDATES, Z3Checker
from faithsieve.obligations.symbolic import MAX_SYMPY_NODES, SympyChecker

__all__ = [
    "CHECKERS", "ESCALATED_KINDS", "MAX_GAP_CANDIDATES", "MAX_SYMPY_NODES", "Checker", "CheckerFactory",
    "ExactChecker", "SympyChecker", "Z3Checker", "compare_values", "fmt", "register_checker", "run_portfolio",
]




# ---------------------------------------------------------------------------
# Registry and portfolio
# ---------------------------------------------------------------------------

CheckerFactory = Callable[..., Checker]
CHECKERS: dict[str, CheckerFactory] = {}


def register_checker(name: str, factory: CheckerFactory) -> None:
    """Register a checker factory under ``name`` (e.g. the Lean backend registers ``lean``)."""
    CHECKERS[name] = factory


register_checker("exact", lambda limits=DEFAULT_LIMITS, **_: ExactChecker(limits))
register_checker("sympy", lambda limits=DEFAULT_LIMITS, **_: SympyChecker(limits))
register_checker("z3", lambda timeout_ms=300, **_: Z3Checker(timeout_ms))


MEMO_CHECKERS: dict[type, tuple[type, ...]] = {
    SympyChecker: (ArithmeticObligation, SubstitutionObligation, IdentityObligation),
    Z3Checker: (DerivationObligation, CoverageObligation),
}
"""Checkers whose outcome is a function of the obligation and their settings alone, with the
obligations they decide: those outcomes are kept in the process's memo (``obligations.memo``)."""


ESCALATED_KINDS = frozenset({"identity", "derivation"})
"""Symbolic obligations (no rounding rule applies to them) that a checker marked
``escalates_unknown`` (Lean) may still decide after a cheaper checker said ``unknown``."""


def run_portfolio(ob: Obligation, checkers: list[Checker], deadline: float) -> Outcome:
    """Cheapest first. A checker answers ``None`` when the obligation is outside what it can
    read (e.g. an irrational value for the exact checker); the first answer wins, so a
    rounding rule that made one checker say ``unknown`` is never overridden by a later one.

    One exception: for an identity or a derivation (symbolic claims, no rounding), an ``unknown``
    is passed on to the later checkers that declare ``escalates_unknown`` (the Lean checker); the
    first of them that decides wins, otherwise the first ``unknown`` stands."""
    first: Outcome | None = None
    for ch in checkers:
        if first is not None and not getattr(ch, "escalates_unknown", False):
            continue
        if time.monotonic() > deadline:
            return first or Unknown("budget", "time budget exhausted")
        with budget(deadline):  # evaluation inside the checker stops at the deadline
            if isinstance(ob, MEMO_CHECKERS.get(type(ch), ())):
                out = MEMO.check(ch, ob, deadline, lambda: ch.check(ob, deadline))  # noqa: B023 (called at once)
            else:
                out = ch.check(ob, deadline)
        if out is None:
            continue
        if first is not None and isinstance(out, Unknown):
            continue
        if first is None and isinstance(out, Unknown) and ob.kind.value in ESCALATED_KINDS:
            first = out
            continue
        return out
    return first or Unknown("none", "no checker applies to this obligation")

