"""The exact comparison formats its evidence only when an answer shows it (``exact._printable``):
every outcome, and every error, is what formatting both sides first gave."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from faithsieve.obligations.checkers import exact
from faithsieve.obligations.checkers.exact import PRINTABLE_BITS, compare_values, fmt

from faithsieve.mathtext.ast import BinOp, Call, Expr, Neg, Num


def _num(v: Fraction, decimals: int = 0) -> Num:
    text = f"{float(v):.{decimals}f}" if decimals else str(v)
    return Num(v, text, decimals)


def _side(rng: random.Random, depth: int) -> Expr:
    if depth <= 0 or rng.random() < 0.3:
        k = rng.random()
        if k < 0.1:  # past the bound: formatting may overflow a float (decimal denominators)
            return _num(Fraction(2 ** rng.randint(990, 1100) + rng.randint(0, 9), rng.choice((1, 2, 5, 8, 3))))
        if k < 0.4:
            d = rng.randint(1, 3)
            return _num(Fraction(rng.randint(-999, 9999), 10**d), d)
        return _num(Fraction(rng.randint(-30, 200)))
    k = rng.random()
    if k < 0.15:
        return Call("percent", (_side(rng, depth - 1),))
    if k < 0.2:
        return Neg(_side(rng, depth - 1))
    return BinOp(rng.choice("+-*/"), _side(rng, depth - 1), _side(rng, depth - 1))


def _answer(lhs: Expr, op: str, rhs: Expr, **kw: object) -> object:
    try:
        return compare_values(lhs, op, rhs, **kw)
    except Exception as exc:  # noqa: BLE001 (the error itself is the answer compared)
        return type(exc).__name__


def test_outcomes_equal_formatting_first(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(16)
    kinds: dict[str, int] = {}
    for _ in range(3000):
        lhs, rhs = _side(rng, rng.randint(0, 3)), _side(rng, rng.randint(0, 2))
        if rng.random() < 0.3:  # the right side equal to the left, or a running total after it
            rhs = lhs if rng.random() < 0.5 else BinOp("+", lhs, _side(rng, 0))
        op = rng.choice(("=", "=", "=", "~", "<", "<=", ">=", "!="))
        kw = {"approx": rng.random() < 0.3, "ceiling": rng.random() < 0.5,
              "rounded": [n.text for n in (lhs, rhs) if isinstance(n, Num) and rng.random() < 0.5]}
        now = _answer(lhs, op, rhs, **kw)
        with monkeypatch.context() as m:  # the former order: both sides formatted before anything else
            m.setattr(exact, "_printable", lambda x: False)
            before = _answer(lhs, op, rhs, **kw)
        assert now == before, (lhs, op, rhs, kw)
        name = now if isinstance(now, str) else type(now).__name__
        kinds[name] = kinds.get(name, 0) + 1
    assert set(kinds) == {"Verified", "Refuted", "Unknown", "OverflowError"}, kinds
    assert min(kinds.values()) > 30, kinds


def test_the_printable_bound() -> None:
    """Formatting a decimal value overflows a float from 2^1024 on; ``_printable`` stops below it."""
    at_bound = Fraction(2**PRINTABLE_BITS - 1, 2)
    assert exact._printable(at_bound)
    assert fmt(at_bound)  # no error
    past = Fraction(2**1025 - 1, 2)  # the smallest numerator (1025 bits) whose decimal value overflows
    assert not exact._printable(past)
    with pytest.raises(OverflowError):
        fmt(past)
    with pytest.raises(OverflowError):  # raised, as before, even though the sides are equal
        compare_values(_num(past), "=", _num(past), approx=False)
