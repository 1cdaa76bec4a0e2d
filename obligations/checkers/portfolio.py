"""The cheap checkers, cheapest first: exact rationals, sympy, z3.

A checker returns ``None`` when an obligation is not its kind, otherwise an
``Outcome`` value: ``Verified``, ``Refuted`` (counterexample confirmed exactly)
or ``Unknown``. Checkers never raise for a bad formula: size limits and
unsupported nodes become ``Unknown`` with the reason.

Rounding is the main source of false alarms, so a numeric mismatch is refuted
only when no reading of the precision shown explains it: rounding or
truncation to the digits written, values rounded earlier in the proof,
running-total chains (``3 × 4 = 12 + 5 = 17``), and percent-of-base notation.

The checkers live in ``exact``, ``symbolic`` and ``smt``; the decision procedures they run are named in
``procedures``. This module holds the checkers' registry and the portfolio that runs them, and
re-exports them. An outcome memo (``memo``) is owned by the checkers it is given to: a checker with a
``memo`` keeps its outcomes for the obligation classes it lists in ``memo_kinds``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from faithsieve.obligations.checkers.exact import (
    Checker,
    ExactChecker,
    compare_values,
    fmt,
)
from faithsieve.obligations.checkers.memo import OutcomeMemo
from faithsieve.obligations.checkers.smt import MAX_GAP_CANDIDATES, Z3Checker
from faithsieve.obligations.checkers.symbolic import MAX_SYMPY_NODES, SympyChecker
from faithsieve.obligations.kinds.models import Obligation, Outcome, Unknown
from faithsieve.obligations.procedures.registry import PROCEDURES, check_off

from faithsieve.core.settings import Settings
from faithsieve.mathtext.cost import budget
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits

__all__ = [
    "CHECKERS", "ESCALATED_KINDS", "MAX_GAP_CANDIDATES", "MAX_SYMPY_NODES", "PROCEDURES", "Checker", "CheckerFactory",
    "ExactChecker", "SympyChecker", "Z3Checker", "compare_values", "fmt", "new_memo", "procedures_off",
    "register_checker", "run_portfolio",
]


# ---------------------------------------------------------------------------
# Registry and portfolio
# ---------------------------------------------------------------------------

CheckerFactory = Callable[..., Checker]
CHECKERS: dict[str, CheckerFactory] = {}


def register_checker(name: str, factory: CheckerFactory) -> None:
    """Register a checker factory under ``name`` (e.g. the Lean backend registers ``lean``). The
    pipeline calls it with ``limits``, ``timeout_ms``, ``settings`` and ``memo`` (the outcome memo the
    built checkers share, or None) as keywords; a factory takes what it needs."""
    CHECKERS[name] = factory


def procedures_off(settings: Settings | None) -> frozenset[str]:
    """The procedures the settings switch off (``Settings.procedures_off``), checked against the registry."""
    return check_off(settings.procedures_off) if settings is not None else frozenset()


def _exact(limits: Limits = DEFAULT_LIMITS, **_: object) -> Checker:
    return ExactChecker(limits)


def _sympy(limits: Limits = DEFAULT_LIMITS, settings: Settings | None = None, memo: OutcomeMemo | None = None,
           **_: object) -> Checker:
    return SympyChecker(limits, off=procedures_off(settings), memo=memo)


def _z3(timeout_ms: int = 300, settings: Settings | None = None, memo: OutcomeMemo | None = None,
        **_: object) -> Checker:
    return Z3Checker(timeout_ms, off=procedures_off(settings), memo=memo)


register_checker("exact", _exact)
register_checker("sympy", _sympy)
register_checker("z3", _z3)


def new_memo(settings: Settings | None) -> OutcomeMemo | None:
    """A fresh outcome memo for one set of checkers; None when the settings switch ``memo`` off."""
    return None if "memo" in procedures_off(settings) else OutcomeMemo()


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
            memo: OutcomeMemo | None = getattr(ch, "memo", None)
            if memo is not None and isinstance(ob, getattr(ch, "memo_kinds", ())):
                out = memo.check(ch, ob, deadline, lambda: ch.check(ob, deadline))  # noqa: B023 (called at once)
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

