"""LeanChecker: parser obligations rendered, then proved or refuted in Lean (recorded transcripts)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from faithsieve.lean.checker import LeanChecker
from faithsieve.lean.kernel import MATHLIB_TACTICS
from faithsieve.obligations.checkers.portfolio import CHECKERS, run_portfolio
from faithsieve.obligations.kinds.models import (
    ArithmeticObligation,
    CoverageObligation,
    DerivationObligation,
    IdentityObligation,
    Refuted,
    Unknown,
    Verified,
)

from faithsieve.core.settings import Settings
from faithsieve.mathtext import extract_formulas
from faithsieve.mathtext.ast import Rel
from tests.lean.test_kernel import Transcript, error, sorry, timeout, valid, when

BASE: dict[str, Any] = {"id": "o0", "step": 1, "span": (0, 1), "edge": "e0", "source": ""}
LATER = float("inf")


def rel(text: str) -> Rel:
    a, op, b = extract_formulas(text)[0].chain.links()[0]
    return Rel(a, op, b)


def checker(backend: Transcript, **kw: Any) -> LeanChecker:
    return LeanChecker(backend=backend, settings=Settings(lean_timeout_s=10.0, **kw))


def test_registered_under_lean_with_the_registry_signature() -> None:
    assert "lean" in CHECKERS
    made = CHECKERS["lean"](limits=None, timeout_ms=300)
    assert isinstance(made, LeanChecker) and made.name == "lean"
    s = Settings(lean_mathlib=False)
    assert CHECKERS["lean"](limits=None, timeout_ms=300, settings=s).settings is s  # as pipeline.build_checkers calls it


def test_identity_verified_by_the_portfolio() -> None:
    ob = IdentityObligation(**BASE, claim=rel("(x+1)^2 = x^2 + 2x + 1"), asserted_identity=True)
    backend = Transcript(elaborates=True, rules=[when("  ring_nf\n", valid("fs_ident_o0"))], default=error("failed"))
    out = checker(backend).check(ob, LATER)
    assert out == Verified("lean", "proved in Lean by ring_nf")
    assert backend.snippets[0] == ("import Mathlib\n\nset_option autoImplicit false in\n"
                                   "theorem fs_ident_o0 (x : ℚ) : (x + 1) ^ 2 = x ^ 2 + 2 * x + 1 := by sorry")
    assert len(backend.snippets) == 1 + MATHLIB_TACTICS.index("ring_nf") + 1  # the elaboration check, then tactics


def test_arithmetic_refuted_by_proving_the_negation() -> None:
    ob = ArithmeticObligation(**BASE, claim=rel("3 * 4 = 13"))
    backend = Transcript(elaborates=True, rules=[when("fs_arith_o0_neg : ¬ ((3 * 4 : ℤ) = 13) := by\n  decide", valid("fs_arith_o0_neg"))],
                         default=error("decide failed"))
    out = checker(backend).check(ob, LATER)
    assert isinstance(out, Refuted) and out.counterexample == {"lean": "negation proved by decide"}


def test_derivation_refuted_by_contradiction_with_its_premises() -> None:
    ob = DerivationObligation(**BASE, premises=(rel("2x + 1 = 7"),), claim=rel("x = 4"))
    proved = valid("fs_deriv_o0_contra")
    backend = Transcript(elaborates=True, rules=[lambda code: proved if "_contra" in code and "  linarith\n" in code else None],
                         default=error("failed"))
    out = checker(backend).check(ob, LATER)
    assert isinstance(out, Refuted)
    assert out.counterexample == {"lean": "contradiction with the premises proved by linarith"}


def test_core_flavour_renders_without_mathlib() -> None:
    ob = ArithmeticObligation(**BASE, claim=rel("3 * 4 = 12"))
    backend = Transcript(elaborates=True, rules=[when("  decide\n", valid("fs_arith_o0"))], default=error("failed"))
    out = checker(backend, lean_mathlib=False).check(ob, LATER)
    assert isinstance(out, Verified) and "import" not in backend.snippets[0]


def test_counterexample_from_sympy_confirmed_in_lean() -> None:
    ob = IdentityObligation(**BASE, claim=rel("(x+1)^2 = x^2 + 1"), asserted_identity=True)
    backend = Transcript(elaborates=True, rules=[when("norm_num at hcx", valid("fs_ident_o0_cx"))], default=error("failed"))
    out = checker(backend).check(ob, LATER)
    assert isinstance(out, Refuted) and "x" in out.counterexample and "checked in Lean" in out.counterexample["lean"]
    assert any("have hcx := @hall" in s for s in backend.snippets)
    plain = checker(Transcript(elaborates=True, default=error("failed")))
    plain.counterexamples = False
    assert isinstance(plain.check(ob, LATER), Unknown)


def test_an_unasserted_identity_is_never_refuted() -> None:
    ob = IdentityObligation(**BASE, claim=rel("(x+1)^2 = x^2 + 1"), asserted_identity=False)
    backend = Transcript(elaborates=True, default=error("failed"))
    out = checker(backend).check(ob, LATER)
    assert isinstance(out, Unknown) and "not asserted as an identity" in out.reason
    assert len(backend.snippets) == 1 + len(MATHLIB_TACTICS)  # the statement only, never its negation


def test_unrenderable_no_backend_timeout_and_deadline_are_unknown() -> None:
    approx = ArithmeticObligation(**BASE, claim=rel("3 * 4 ≈ 12.1"), approx=True)
    out = checker(Transcript()).check(approx, LATER)
    assert isinstance(out, Unknown) and out.reason.startswith("no Lean statement") and "approximate" in out.reason

    ob = CoverageObligation(**BASE, variable="n", cases=("even", "odd"), parity=("even", "odd"), case_sizes=(0, 0),
                            domain="integer")
    none = LeanChecker(settings=Settings(lean_backend="none"))
    out = none.check(ob, LATER)
    assert isinstance(out, Unknown) and "lean_backend = none" in out.reason and none.failure

    slow = Transcript(default=timeout())
    out = checker(slow).check(ob, LATER)
    assert isinstance(out, Unknown) and "timeout" in out.reason

    out = checker(Transcript()).check(ob, time.monotonic())
    assert isinstance(out, Unknown) and "time budget" in out.reason


def test_screening_applies_to_portfolio_proofs() -> None:
    ob = ArithmeticObligation(**BASE, claim=rel("2 + 2 = 4"))
    backend = Transcript(elaborates=True, rules=[when("decide", valid("fs_arith_o0", "propext, Lean.ofReduceBool"))],
                         default=error("failed"))
    out = checker(backend).check(ob, LATER)
    assert isinstance(out, Unknown) and "screening" in out.reason


def test_not_one_of_the_six_kinds_is_not_applicable() -> None:
    assert checker(Transcript()).check(object(), LATER) is None  # type: ignore[arg-type]


def test_a_missing_toolchain_reports_once_and_the_portfolio_continues(monkeypatch: pytest.MonkeyPatch) -> None:
    from faithsieve.lean import factory
    from faithsieve.lean.backend import LeanUnavailable

    calls = []

    def build(settings: Settings) -> None:
        calls.append(1)
        raise LeanUnavailable("Lean backend 'local' unavailable: no lean toolchain found")

    monkeypatch.setattr(factory, "build_backend", build)
    lean = LeanChecker(settings=Settings())
    ob = ArithmeticObligation(**BASE, claim=rel("2 + 2 = 4"))
    for _ in range(3):
        out = run_portfolio(ob, [lean], LATER)
        assert isinstance(out, Unknown) and "no lean toolchain found" in out.reason
    assert calls == [1]


def test_a_sorry_result_never_counts() -> None:
    ob = ArithmeticObligation(**BASE, claim=rel("2 + 2 = 4"))
    out = checker(Transcript(default=sorry("⊢ 2 + 2 = 4"))).check(ob, LATER)
    assert isinstance(out, Unknown)
