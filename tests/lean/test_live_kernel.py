"""The kernel's Lean-facing choices, against a real Lean (marker ``lean``; ``pytest -m lean tests/lean``).

Each test checks one fact the offline suite can only assume from Lean's and Mathlib's sources:
that Mathlib really proves the junk values the renderer refuses, that a heartbeat limit leaves the
REPL alive, that core ``Rat``, ``decide +kernel`` and ``grind`` exist where ``faithsieve.lean.versions``
says, that the core search program compiles behind ``import Lean``, that the bound lemmas the
portfolio names exist, that ``autoImplicit false`` rejects an undeclared variable, and that integer
forms are decided by core tactics. The backends come from ``test_live_lean``'s fixture and skip
with the reason detection gives when no toolchain or server is configured.
"""

from __future__ import annotations

import pytest
from faithsieve.lean.backend import LeanBackend
from faithsieve.lean.kernel import LeanKernel
from faithsieve.lean.snippets import with_options
from faithsieve.lean.tools import ToolLimits, ToolRunner
from faithsieve.lean.versions import CORE_RAT, DECIDE_KERNEL, GRIND, at_least

from faithsieve.core.settings import Settings
from faithsieve.llm.types import ToolCall
from tests.lean.test_live_lean import _has_mathlib, backend  # noqa: F401 (the fixture)

pytestmark = pytest.mark.lean


def _mathlib(b: LeanBackend) -> None:
    if not _has_mathlib(b):
        pytest.skip("the Lean project has no Mathlib")


def test_mathlib_proves_the_junk_values_the_renderer_refuses(backend: LeanBackend) -> None:  # noqa: F811
    _mathlib(backend)
    for claim, tactic in (("Real.sqrt (-4) = 0", "norm_num"), ("Real.log 0 = 0", "simp"),
                          ("Real.log (-1) = 0", "simp"), ("Real.tan (Real.pi / 2) = 0", "simp [Real.tan_eq_sin_div_cos]")):
        res = backend.check(f"import Mathlib\n\ntheorem t : {claim} := by {tactic}")
        assert res.status == "valid", (claim, res)


def test_a_heartbeat_limit_is_an_error_in_a_repl_that_lives_on(backend: LeanBackend) -> None:  # noqa: F811
    slow = backend.check(with_options("theorem t : (List.range 3000).length = 3000 := by decide", heartbeats=1))
    assert slow.status == "timeout" and "heartbeat" in slow.detail, slow
    started = getattr(backend, "counters", {}).get("started")
    assert backend.check("theorem u : 1 + 1 = 2 := by decide").status == "valid"
    assert getattr(backend, "counters", {}).get("started") == started  # no restart


def test_core_rat_decide_kernel_and_grind_are_where_the_versions_say(backend: LeanBackend) -> None:  # noqa: F811
    version = backend.versions()["lean"]
    rat = backend.check("example : (1 / 2 : Rat) + 1 / 2 = 1 := by decide +kernel")
    if at_least(version, CORE_RAT):
        assert rat.status == "valid", rat
    else:
        assert rat.status == "lean_error", rat
    kernel = backend.check("example : (12 * 15 : Int) = 180 := by decide +kernel")
    assert (kernel.status == "valid") == at_least(version, DECIDE_KERNEL), kernel
    grind = backend.check("example (a b : Int) (h : a = b) : b = a := by grind")
    assert (grind.status == "valid") == at_least(version, GRIND), grind


def test_the_core_search_program_compiles_behind_import_lean(backend: LeanBackend) -> None:  # noqa: F811
    runner = ToolRunner(backend, ToolLimits(timeout_s=120.0), mathlib=False)
    out = runner.run(ToolCall(id="c1", name="lean_search", arguments='{"fragment": "add_comm"}'))
    assert "Nat.add_comm" in out, out


def test_the_bound_lemmas_of_the_portfolio_exist(backend: LeanBackend) -> None:  # noqa: F811
    _mathlib(backend)

    def exists(name: str) -> bool:
        return backend.check(f"import Mathlib\n\n#check @{name}").status == "valid"

    assert exists("Real.pi_gt_three") and exists("Real.exp_one_gt_d9") and exists("Real.exp_one_lt_d9")
    assert (exists("Real.pi_gt_d2") and exists("Real.pi_lt_d2")) or (exists("Real.pi_gt_314") and exists("Real.pi_lt_315"))
    kernel = LeanKernel(backend, None, Settings(lean_timeout_s=120.0))
    tactic, why = kernel.prove_by_tactics("theorem t : Real.pi > 3.1")
    assert tactic is not None and "Real.pi" in tactic, why


def test_auto_implicit_off_rejects_an_undeclared_variable(backend: LeanBackend) -> None:  # noqa: F811
    assert backend.check(with_options("theorem t : x = x := rfl")).status == "lean_error"


def test_integer_forms_are_decided_by_core_tactics(backend: LeanBackend) -> None:  # noqa: F811
    for tactic in ("decide", "omega"):
        res = backend.check(f"theorem t : ((3 * 2 + 1 * 4) * 4 : Int) = 5 * (4 * 2) := by {tactic}")
        assert res.status == "valid", (tactic, res)


def test_nested_bars_and_small_witnesses_elaborate_in_mathlib(backend: LeanBackend) -> None:  # noqa: F811
    _mathlib(backend)
    bars = backend.check("import Mathlib\n\nexample (x : ℝ) : |(|x| - 1)| ≥ 0 := abs_nonneg _")
    assert bars.status == "valid", bars
    kernel = LeanKernel(backend, None, Settings(lean_timeout_s=120.0))
    tactic, why = kernel.prove_by_tactics("theorem t : ∃ (x : ℚ), x ^ 2 = 4 ∧ ¬ (x = -2)")
    assert tactic is not None, why
