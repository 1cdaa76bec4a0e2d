"""Evidence names the procedure that decided; every switchable procedure is switched by settings."""

from __future__ import annotations

import time
from typing import Any

import pytest
from faithsieve.obligations.checkers.portfolio import (
    SympyChecker,
    Z3Checker,
    new_memo,
    procedures_off,
    run_portfolio,
)
from faithsieve.obligations.kinds.models import (
    DerivationObligation,
    IdentityObligation,
    Outcome,
    Verified,
)
from faithsieve.obligations.procedures.registry import (
    PROCEDURES,
    check_off,
    procedures_for,
    switchable,
)

from faithsieve.core.settings import Settings
from faithsieve.pipeline import build_checkers
from tests.obligations.test_fastpaths import BASE, rel, view


def soon() -> float:
    return time.monotonic() + 60


def _derivation(premise: str, claim: str, **kw: Any) -> DerivationObligation:
    return DerivationObligation(**BASE, premises=(rel(premise),), claim=rel(claim), **kw)


def _identity(claim: str, asserted: bool = False) -> IdentityObligation:
    return IdentityObligation(**BASE, claim=rel(claim), asserted_identity=asserted)


DECIDED_BY = [
    (_derivation("2x + 4 = 10", "x + 2 = 5"), "linear"),
    (_derivation(r"x \cdot y = 24", "x = 24/y"), "cleared"),
    (_derivation("x^2 + 2 + 1/x^2 = 49", "x^2 + 1/x^2 = 49 - 2"), "quotients"),
    (_derivation("a < b", "abs(a - b) = b - a"), "piecewise"),
    (_derivation("x - 5 > 0", "1/(x - 5) > 0"), "sections"),
    (_derivation("x^2 - 3x = 1", "x > 0"), "sections"),
    (_derivation("k < 30/7", "k <= 4"), "witness"),
    (_identity("(x+1)^2 = x^2 + 2x + 1"), "polynomial"),
    (_identity("x/2 + 1/3 = (3x + 2)/6"), "polynomial"),
]


@pytest.mark.parametrize(("ob", "method"), DECIDED_BY)
def test_the_method_is_the_procedure_that_decided(ob: Any, method: str) -> None:
    checkers = [SympyChecker(), Z3Checker()]
    out = run_portfolio(ob, checkers, soon())
    assert out.method == method
    assert method in PROCEDURES and ob.kind.value in PROCEDURES[method].kinds


@pytest.mark.parametrize(("ob", "method"), [d for d in DECIDED_BY if PROCEDURES[d[1]].switchable])
def test_switching_a_procedure_off_keeps_the_decision(ob: Any, method: str) -> None:
    """Off, the procedure leaves the obligation to the later ones: the same outcome under another name."""
    on = run_portfolio(ob, [SympyChecker(), Z3Checker()], soon())
    off = frozenset({method})
    without: Outcome = run_portfolio(ob, [SympyChecker(off=off), Z3Checker(off=off)], soon())
    assert view(without) == view(on) and without.method != method


def test_settings_switch_the_checkers_built() -> None:
    built = build_checkers(Settings(procedures_off=("witness", "cleared", "ratfunc", "memo")))
    sym = next(c for c in built if isinstance(c, SympyChecker))
    smt = next(c for c in built if isinstance(c, Z3Checker))
    assert not smt.witness_points and not smt.cleared and smt.piecewise and smt.real_sections
    assert not sym.ratfunc and sym.radicals
    assert sym.memo is None and smt.memo is None  # memo off
    shared = build_checkers(Settings())
    memos = {id(c.memo) for c in shared if hasattr(c, "memo")}
    assert len(memos) == 1 and None not in {c.memo for c in shared if hasattr(c, "memo")}  # one memo, shared
    assert build_checkers(Settings())[1].memo is not shared[1].memo  # each set owns its own


def test_unknown_procedure_names_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown or unswitchable"):
        procedures_off(Settings(procedures_off=("no-such-procedure",)))
    with pytest.raises(ValueError):
        check_off(("z3",))  # the solver itself is not a shortcut: drop the checker instead
    assert new_memo(Settings(procedures_off=("memo",))) is None
    assert set(switchable()) >= {"witness", "quotients", "cleared", "sections", "piecewise", "memo"}


def test_every_kind_has_its_procedures() -> None:
    for kind in ("arithmetic", "substitution", "solution", "identity", "derivation", "coverage"):
        assert procedures_for(kind), kind
    for name, p in PROCEDURES.items():
        assert p.name == name


def test_the_z3_checker_runs_the_registry_in_its_order() -> None:
    """The registry dispatches the z3 checker's derivations: one method per registered procedure, in the
    registry's order, z3 last (it always answers)."""
    registered = [p.name for p in procedures_for("derivation") if p.checker == "z3"]
    assert [step.__name__.lstrip("_") for step in Z3Checker.DERIVATION] == registered
    assert registered[-1] == "z3" and len(registered) == 7


def test_a_reordered_table_reorders_the_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The order is the table's: put z3 first and the solver answers what ``linear`` answered before."""
    ob = _derivation("2*x = 6", "x = 3")
    assert Z3Checker().check(ob, soon()).method == "linear"
    steps = Z3Checker.DERIVATION
    monkeypatch.setattr(Z3Checker, "DERIVATION", (steps[-1], *steps[:-1]))
    out = Z3Checker().check(ob, soon())
    assert isinstance(out, Verified) and out.method == "z3"
