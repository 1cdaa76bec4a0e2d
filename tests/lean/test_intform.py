"""The integer form of closed rational claims: same truth value, decided by core tactics.

The integer form is read back with our own formula reader (its text is plain ``+ - * ^`` integer
arithmetic once the ``: Int`` ascription is dropped) and both it and the original claim are
evaluated exactly: they must agree for every claim, true or false, of a seeded family."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest
from faithsieve.lean.backend import CheckResult
from faithsieve.lean.checker import LeanChecker
from faithsieve.lean.intform import integer_form
from faithsieve.obligations.kinds.models import ArithmeticObligation, Refuted, Verified

from faithsieve.core.settings import Settings
from faithsieve.mathtext import extract_formulas
from faithsieve.mathtext.ast import BinOp, Call, Expr, Neg, Num, Pow, Rel
from faithsieve.mathtext.evaluate import evaluate
from tests.lean.test_kernel import Transcript, error, valid, when

BASE: dict[str, Any] = {"id": "o0", "step": 1, "span": (0, 1), "edge": "e0", "source": ""}
_HOLDS = {"=": lambda d: d == 0, "!=": lambda d: d != 0, "<": lambda d: d < 0, ">": lambda d: d > 0,
          "<=": lambda d: d <= 0, ">=": lambda d: d >= 0}
_READ = {"≠": "!=", "≤": "<=", "≥": ">="}


def rel(text: str) -> Rel:
    a, op, b = extract_formulas(text)[0].chain.links()[0]
    return Rel(a, op, b)


def holds(r: Rel) -> bool:
    return bool(_HOLDS[r.op](evaluate(r.lhs) - evaluate(r.rhs)))


def read_back(conclusion: str) -> Rel:
    text = conclusion.replace(" : Int)", ")")
    for lean, ours in _READ.items():
        text = text.replace(lean, ours)
    return rel(text)


@pytest.mark.parametrize(("text", "conclusion"), [
    ("3/4 + 1/2 = 5/4", "((3 * 2 + 1 * 4) * 4 : Int) = 5 * (4 * 2)"),
    ("10 / 4 = 2.5", "(10 * 10 : Int) = 25 * 4"),
    ("25% of 80 = 20", "(25 * 80 : Int) = 20 * 100"),
    (r"\frac{7}{2-5} \leq -2", "(7 : Int) ≥ (-2) * (2 - 5)"),   # the divisor is negative: ≤ turns into ≥
])
def test_integer_forms_table(text: str, conclusion: str) -> None:
    st = integer_form(ArithmeticObligation(**BASE, claim=rel(text)))
    assert st is not None and st.conclusion == conclusion and st.imports == () and st.flavour == "core"


@pytest.mark.parametrize("text", ["12 * 15 = 180", "1/0 = 0", r"\frac{1}{3 - 3} = 5", r"\sqrt{4} / 2 = 1",
                                  r"\pi / 2 > 1", "x / 2 = 1"])
def test_no_integer_form_where_it_is_not_needed_or_not_exact(text: str) -> None:
    assert integer_form(ArithmeticObligation(**BASE, claim=rel(text))) is None


def _random_expr(rng: random.Random, depth: int) -> Expr:
    if depth == 0 or rng.random() < 0.3:
        v = Fraction(rng.randint(-9, 9), rng.choice((1, 1, 2, 3, 4, 10)))
        return Num(v, str(v), 0) if v >= 0 else Neg(Num(-v, str(-v), 0))
    kind = rng.choice("+-*/^%n")
    if kind == "^":
        return Pow(_random_expr(rng, depth - 1), Num(Fraction(rng.randint(0, 3)), "2", 0))
    if kind == "%":
        return Call("percent", (_random_expr(rng, depth - 1),))
    if kind == "n":
        return Neg(_random_expr(rng, depth - 1))
    return BinOp(kind, _random_expr(rng, depth - 1), _random_expr(rng, depth - 1))


def test_the_integer_form_has_the_truth_value_of_the_claim() -> None:
    rng = random.Random(20261202)
    checked = flips = 0
    for _ in range(400):
        a, b = _random_expr(rng, 3), _random_expr(rng, 3)
        op = rng.choice(list(_HOLDS))
        try:
            va = evaluate(a)
            evaluate(b)
        except Exception:  # noqa: BLE001 (a division by zero in the draw: no claim to compare)
            continue
        if rng.random() < 0.3:
            b = Num(va, str(va), 0) if va >= 0 else Neg(Num(-va, str(-va), 0))  # make some equalities true
        claim = Rel(a, op, b)
        st = integer_form(ArithmeticObligation(**BASE, claim=claim))
        if st is None:
            continue
        back = read_back(st.conclusion)
        assert holds(back) == holds(claim), (claim, st.conclusion)
        checked += 1
        flips += back.op != op and op not in ("=", "!=")
    assert checked > 150 and flips > 5  # negative denominators were met, and handled


def test_core_checker_proves_and_refutes_rational_claims_in_integer_form() -> None:
    s = Settings(lean_timeout_s=10.0, lean_mathlib=False)
    ok = ArithmeticObligation(**BASE, claim=rel("3/4 + 1/2 = 5/4"))
    backend = Transcript(elaborates=True, rules=[when("  decide\n", valid("fs_arith_o0_int"))], default=error("failed"))
    out = LeanChecker(backend=backend, settings=s).check(ok, float("inf"))
    assert isinstance(out, Verified) and out.note == "proved in Lean by decide (integer form: denominators cleared exactly)"
    assert "theorem fs_arith_o0_int : ((3 * 2 + 1 * 4) * 4 : Int) = 5 * (4 * 2)" in backend.snippets[0]
    bad = ArithmeticObligation(**BASE, claim=rel("3/4 + 1/2 = 3/2"))

    def negation_by_decide(code: str) -> CheckResult | None:
        return valid("fs_arith_o0_int_neg") if "theorem fs_arith_o0_int_neg : ¬" in code and "  decide\n" in code else None

    backend = Transcript(elaborates=True, rules=[negation_by_decide], default=error("failed"))
    out = LeanChecker(backend=backend, settings=s).check(bad, float("inf"))
    assert isinstance(out, Refuted) and "integer form" in out.counterexample["lean"]
