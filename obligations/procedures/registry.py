"""The decision procedures, each under its own name, per obligation kind.

A checker (``exact``, ``sympy``, ``z3``, ``lean``) runs the procedures registered for the kind of
obligation it is given, cheapest first; the procedure that decides names the evidence: its name is
the outcome's ``method``. The table dispatches the z3 checker's derivations: ``Z3Checker.DERIVATION``
is its procedures for the ``derivation`` kind, in this table's order, one method each (a procedure
added here without its method stops the import). The sympy checker's procedures are guards inside
one computation (they share its sympy conversions and the polynomial class), so it reads the table
for its switches and its method names only. A method name with a suffix (``exact-rounding``, ``sympy-numeric``) is the
procedure's reading of the precision shown, listed here with it.

Every procedure marked ``switchable`` may be turned off by ``Settings.procedures_off`` (the checker
then goes on as if it had not answered): a shortcut turned off leaves the verdict to the later,
more general procedures (z3, sympy), which decide the same way, only slower.  ``memo`` (the outcome
memo) is switched the same way, although it decides nothing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Procedure:
    """One decision procedure: its name (the evidence's ``method``), the checker that runs it, the
    obligation kinds it decides, and whether settings may switch it off."""

    name: str
    checker: str
    kinds: tuple[str, ...]
    doc: str
    switchable: bool = False
    methods: tuple[str, ...] = ()
    """Further method names this procedure records (its readings of the precision shown)."""


_NUMERIC = ("arithmetic", "substitution", "solution")

PROCEDURES: dict[str, Procedure] = {p.name: p for p in (
    Procedure("exact", "exact", _NUMERIC, "exact rational arithmetic, rounding to the digits shown",
              methods=("exact-rounding",)),
    Procedure("radicals", "sympy", ("arithmetic", "substitution"),
              "closed values with square roots and pi, exactly (``radicals``)", switchable=True),
    Procedure("sympy", "sympy", ("arithmetic", "substitution", "identity"),
              "sympy: expansion of the difference, numeric evaluation to 50 digits",
              methods=("sympy-numeric", "sympy-rounding")),
    Procedure("sympy-calculus", "sympy", ("arithmetic", "substitution", "identity"),
              "derivatives, definite integrals and limits computed with sympy within bounds (``calculus``)"),
    Procedure("polynomial", "sympy", ("identity",),
              "exact polynomial expansion of both sides (``fastpaths.polynomial_class``)"),
    Procedure("ratfunc", "sympy", ("identity",),
              "rational-function identity, exactly (``ratfunc.rational_identity``)", switchable=True),
    Procedure("freevar", "sympy", ("identity",),
              "not an identity: a variable enters the difference polynomially (``freevar``)", switchable=True),
    Procedure("varying", "sympy", ("identity",),
              "not an identity: the difference takes two values (``varying``)", switchable=True),
    Procedure("sympy-poly", "sympy", ("identity", "derivation"),
              "sympy: numerator of the difference over a common denominator; a constant gap"),
    Procedure("random-points", "sympy", ("identity",), "a claimed identity evaluated at exact random points"),
    Procedure("linear", "z3", ("derivation",),
              "one linear equation a multiple of the other (``fastpaths.linear_derivation``)"),
    Procedure("quotients", "z3", ("derivation",),
              "quotients read as opaque quantities (``fastpaths.quotient_derivation``)", switchable=True),
    Procedure("cleared", "z3", ("derivation",),
              "the premise divided through, denominators cleared (``cleared``)", switchable=True),
    Procedure("witness", "z3", ("derivation",),
              "exact points showing \"does not follow\" (``witness``)", switchable=True),
    Procedure("piecewise", "z3", ("derivation",),
              "\"follows\" through ``abs`` and quotients, by elimination (``piecewise``)", switchable=True),
    Procedure("sections", "z3", ("derivation",),
              "one-variable derivations decided exactly along lines (``sections``, ``realroots``)",
              switchable=True),
    Procedure("z3", "z3", ("derivation", "coverage"), "SMT over the reals (integers where known)"),
    Procedure("memo", "", (), "the outcome memo (decides nothing: a repeat gets the outcome found before)",
              switchable=True),
)}
"""Every procedure by name."""


def procedures_for(kind: str) -> list[Procedure]:
    """The procedures registered for an obligation kind (``ArithmeticObligation.kind.value``, …)."""
    return [p for p in PROCEDURES.values() if kind in p.kinds]


def switchable() -> tuple[str, ...]:
    """The names ``Settings.procedures_off`` accepts."""
    return tuple(p.name for p in PROCEDURES.values() if p.switchable)


def check_off(names: tuple[str, ...] | frozenset[str]) -> frozenset[str]:
    """``names`` as a set, refusing a name that is not a switchable procedure."""
    bad = sorted(set(names) - set(switchable()))
    if bad:
        raise ValueError(f"unknown or unswitchable procedures {bad}; switchable: {list(switchable())}")
    return frozenset(names)
