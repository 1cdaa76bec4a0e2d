"""Start-up cost: heavy modules are imported on first use, and long-lived processes freeze the heap."""

from __future__ import annotations

import subprocess
import sys

from faithsieve.runtime.lazy import _LazyModule, lazy_module

HEAVY = ("sympy", "networkx", "z3", "matplotlib", "numpy", "pydantic_settings")


def _fresh(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout


def test_help_imports_no_heavy_module() -> None:
    out = _fresh(
        "import sys\nfrom faithsieve.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        f"print('LOADED', sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    assert out.strip().splitlines()[-1] == "LOADED []"


def test_reading_formulas_imports_no_solver() -> None:
    out = _fresh(
        "import sys\nfrom faithsieve.mathtext.formulas import extract_formulas\n"
        "from faithsieve.obligations.checkers import portfolio as checkers\n"
        "assert extract_formulas('so 2 + 3 = 5')\n"
        "print('LOADED', sorted(m for m in ('sympy', 'z3', 'networkx') if m in sys.modules))"
    )
    assert out.strip().splitlines()[-1] == "LOADED []"


def test_lazy_module_rebinds_the_name_on_first_use() -> None:
    name = "colorsys"
    sys.modules.pop(name, None)
    ns: dict[str, object] = {}
    ns["cs"] = lazy_module(name, ns, "cs")
    assert isinstance(ns["cs"], _LazyModule)
    assert name not in sys.modules
    assert ns["cs"].rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)  # type: ignore[attr-defined]
    assert ns["cs"] is sys.modules[name]  # no stand-in left on the hot path
    assert lazy_module(name, {}, "cs") is sys.modules[name]  # already imported: the module itself


def test_checkers_use_the_real_modules_after_a_check() -> None:
    from faithsieve.obligations.checkers import symbolic
    from faithsieve.obligations.kinds.models import IdentityObligation

    from faithsieve.mathtext.ast import Rel
    from faithsieve.mathtext.formulas import extract_formulas

    # a trigonometric identity: no exact shortcut reads it, so sympy expands it (and is really loaded;
    # the rational identity used before is now decided exactly, and the test then passed only
    # where an earlier test had loaded sympy)
    a, op, b = extract_formulas("sin(2*x) = 2*sin(x)*cos(x)")[0].chain.links()[0]
    ob = IdentityObligation(id="o0", step=1, span=(0, 1), edge="e0", source="", claim=Rel(a, op, b),
                            asserted_identity=True)
    out = symbolic.SympyChecker().check(ob, float("inf"))
    assert out is not None and out.method == "random-points"  # sympy found no number: random points decide
    assert symbolic.sympy is sys.modules["sympy"]


def test_freeze_after_import_freezes_once() -> None:
    out = _fresh(
        "import gc\nfrom faithsieve.runtime.lazy import freeze_after_import\nfrom faithsieve.warmup import OFFLINE_MODULES\n"
        "assert gc.get_freeze_count() == 0\nfreeze_after_import(OFFLINE_MODULES)\nn = gc.get_freeze_count()\n"
        "import sys\nassert {'sympy', 'z3', 'networkx', 'faithsieve.pipeline'} <= set(sys.modules)\n"
        "freeze_after_import(OFFLINE_MODULES)\nprint(n > 10000, gc.get_freeze_count() == n, gc.get_threshold() == (50000, 20, 10))"
    )
    assert out.split() == ["True", "True", "True"]  # the collector's thresholds are raised once frozen
