"""``LeanChecker``: the six parser obligations checked in Lean, registered as checker ``lean``.

Each obligation is rendered (``faithsieve.lean.render``, Mathlib or core flavour per
``lean_mathlib``) from the proof's own formulas, so the statement is faithful by construction
and no gate is needed. Then:

1. the tactic portfolio on the statement: proved -> ``Verified``; in the core flavour a closed
   rational claim is proved in its integer form (``faithsieve.lean.intform``: denominators
   cleared exactly, so ``decide``/``omega`` apply) and the evidence says so;
2. the portfolio on what refutes it (``LeanStatement.refutation()``: the negation, or for a
   derivation the contradiction with its premises; nothing for an equation not asserted as an
   identity): proved -> ``Refuted`` with ``{"lean": "negation proved by <tactic>"}``;
3. for a ``negation``-refuted statement with variables, a counterexample found by our sympy
   or z3 checker is checked in Lean by specialising the statement at its values;
4. otherwise ``Unknown`` with the reason (not renderable, no backend, timeout, search
   exhausted). Every proof is screened (no ``sorry``, only the standard axioms) by the kernel.

The backend is built lazily from ``Settings()`` through ``faithsieve.lean.factory`` (or
injected); a backend that cannot run is reported once per checker as ``Unknown``, never raised.
The ``timeout_ms`` the registry passes is the pipeline's solver limit (for z3); Lean checks use
``lean_timeout_s`` capped by the obligation's deadline instead.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from faithsieve.lean.backend import LeanBackend, LeanUnavailable
from faithsieve.lean.interface import FormalStatement
from faithsieve.lean.intform import integer_form
from faithsieve.lean.render import LeanStatement, Unrenderable, render
from faithsieve.lean.statement import Flavour
from faithsieve.obligations.checkers.portfolio import (
    SympyChecker,
    Z3Checker,
    register_checker,
)
from faithsieve.obligations.kinds.models import (
    ArithmeticObligation,
    CoverageObligation,
    DerivationObligation,
    IdentityObligation,
    Obligation,
    Outcome,
    Refuted,
    SolutionObligation,
    SubstitutionObligation,
    Unknown,
    Verified,
)

from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    from faithsieve.lean.kernel import LeanKernel

    from faithsieve.core.settings import Settings

_KINDS = (ArithmeticObligation, IdentityObligation, SubstitutionObligation, DerivationObligation,
          SolutionObligation, CoverageObligation)
MIN_CHECK_S = 1.0
"""No Lean check starts with less time than this left before the deadline."""


def _header(st: LeanStatement) -> str:
    opens = f"open {' '.join(st.opens)}\n" if st.opens else ""
    return opens + st.text()


class LeanChecker:
    """Checker ``lean``: render, then prove the statement or what refutes it."""

    name = "lean"
    escalates_unknown = True
    """Decides identities and derivations the cheaper checkers left ``unknown`` (see ``run_portfolio``)."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS, timeout_ms: int = 300, *, backend: LeanBackend | None = None,
                 settings: Settings | None = None, counterexamples: bool = True) -> None:
        self.limits = limits
        self.timeout_ms = timeout_ms
        self._settings = settings
        self._backend = backend
        self._kernel: LeanKernel | None = None
        self._failure: str | None = None
        self._lock = threading.Lock()
        self.counterexamples = counterexamples

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            from faithsieve.core.settings import Settings

            self._settings = Settings()
        return self._settings

    def kernel(self) -> LeanKernel | None:
        """The kernel over the backend (built on first use), or None with ``failure`` set."""
        with self._lock:
            if self._kernel is not None or self._failure is not None:
                return self._kernel
            backend = self._backend
            if backend is None:
                try:
                    from faithsieve.lean.factory import build_backend

                    backend = build_backend(self.settings)
                except LeanUnavailable as exc:
                    self._failure = f"no Lean backend: {exc.message}"
                    return None
                except Exception as exc:  # noqa: BLE001 (a broken backend is a reason, not a crash)
                    self._failure = f"no Lean backend: {type(exc).__name__}: {exc}"[:300]
                    return None
                if backend is None:
                    self._failure = "no Lean backend configured (lean_backend = none)"
                    return None
            from faithsieve.lean.kernel import LeanKernel

            self._kernel = LeanKernel(backend, None, self.settings)
            return self._kernel

    @property
    def failure(self) -> str | None:
        return self._failure

    def check(self, ob: Obligation, deadline: float) -> Outcome | None:
        if not isinstance(ob, _KINDS):
            return None
        flavour: Flavour = "mathlib" if self.settings.lean_mathlib else "core"
        kernel = self.kernel() if flavour == "core" else None  # core statements depend on the Lean version
        whole = integer_form(ob) if flavour == "core" else None  # Rat arithmetic as Int arithmetic: no Rat needed
        st = whole if whole is not None else render(ob, flavour, _lean_version(kernel))
        form = " (integer form: denominators cleared exactly)" if whole is not None else ""
        if isinstance(st, Unrenderable):
            return Unknown(self.name, f"no Lean statement: {st.reason}")
        kernel = kernel or self.kernel()
        if kernel is None:
            return Unknown(self.name, self._failure or "no Lean backend")
        if time.monotonic() + MIN_CHECK_S > deadline:
            return Unknown(self.name, "time budget exhausted before the Lean check")
        tactic, why = kernel.prove_by_tactics(_header(st), deadline)
        if tactic is not None:
            return Verified(self.name, f"proved in Lean by {_one_line(tactic)}{form}")
        from faithsieve.lean.kernel import NOT_ELABORATED

        if why.startswith(NOT_ELABORATED):  # a broken statement: no refutation, no counterexample either
            return Unknown(self.name, f"statement: {why}"[:500])
        reasons = [f"statement: {why}"]
        ref = st.refutation()
        if ref is None:
            notes = "; ".join(st.notes) or "nothing Lean proves refutes this obligation"
            return Unknown(self.name, f"{reasons[0]}; {notes}"[:500])
        what = "negation" if st.refute == "negation" else "contradiction with the premises"
        if time.monotonic() + MIN_CHECK_S <= deadline:
            tactic, why = kernel.prove_by_tactics(_header(ref), deadline)
            if tactic is not None:
                return Refuted(self.name, {"lean": f"{what} proved by {_one_line(tactic)}{form}"},
                               f"{what} proved in Lean{form}")
            reasons.append(f"{what}: {why}")
        if self.counterexamples and st.refute == "negation" and st.binders and time.monotonic() + MIN_CHECK_S <= deadline:
            out = self._counterexample(kernel, ob, st, deadline)
            if isinstance(out, Refuted):
                return out
            if out:
                reasons.append(out)
        return Unknown(self.name, "; ".join(reasons)[:500])

    def _counterexample(self, kernel: LeanKernel, ob: Obligation, st: LeanStatement, deadline: float) -> Refuted | str:
        """A sympy/z3 counterexample confirmed in Lean, or why not ("" when none was found)."""
        for checker in (SympyChecker(self.limits), Z3Checker(self.timeout_ms)):
            out = checker.check(ob, min(deadline, time.monotonic() + 5.0))  # z3 needs a finite deadline
            if not isinstance(out, Refuted):
                continue
            names = {n for n, _ in st.binders}
            values = {k: v for k, v in out.counterexample.items() if k in names}
            if not values:
                continue
            result = kernel.refute_with_counterexample(FormalStatement(text=_header(st), compiled=True), values)
            if result.status == "refuted":
                cx = dict(values, lean=f"counterexample checked in Lean ({result.reason})")
                return Refuted(self.name, cx, f"{out.method} counterexample confirmed in Lean")
            return f"counterexample: {result.reason}"
        return ""


def _lean_version(kernel: LeanKernel | None) -> str | None:
    if kernel is None:
        return None
    try:
        return kernel.backend.versions().get("lean")
    except Exception:  # noqa: BLE001 (no version known: core Rat statements are refused with that reason)
        return None


def _one_line(tactic: str) -> str:
    return tactic.replace("\n", "; ")


register_checker("lean", lambda limits=DEFAULT_LIMITS, timeout_ms=300, memo=None, **kw: LeanChecker(limits, timeout_ms, **kw))

__all__ = ["LeanChecker"]
