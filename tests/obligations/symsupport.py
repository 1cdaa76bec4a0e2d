"""Shared by the tests of the symbolic checker's exact shortcuts: claims from LaTeX, outcomes as
dicts, and the checker with every shortcut off (what sympy alone decides)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import asdict
from fractions import Fraction
from typing import Any

from faithsieve.obligations.checkers import symbolic
from faithsieve.obligations.checkers.portfolio import SympyChecker
from faithsieve.obligations.kinds.models import Obligation, Outcome

from faithsieve.mathtext.ast import BinOp, Expr, Neg, Num, Pow, Rel
from faithsieve.mathtext.formulas import extract_formulas

BASE: dict[str, Any] = {"id": "o0", "step": 1, "span": (0, 1), "edge": "e0", "source": ""}

SHORTCUTS = {
    "polynomial_class": lambda *a, **k: None, "numerator_has_root": lambda *a, **k: False,
    "numerator_not_constant": lambda *a, **k: False, "rational_identity": lambda *a, **k: False,
    "polynomial_variable": lambda *a, **k: False, "radical_equal": lambda *a, **k: False,
    "varying_difference": lambda *a, **k: False,
}
"""The exact shortcuts the symbolic checker takes before sympy, each replaced by "undecided"."""


def rel(text: str) -> Rel:
    """The first relation of the LaTeX formula ``text``."""
    a, op, b = extract_formulas(f"${text}$")[0].chain.links()[0]
    return Rel(a, op, b)


def plain_rel(text: str) -> Rel:
    """The first relation of the plain-text formula ``text``."""
    a, op, b = extract_formulas(text)[0].chain.links()[0]
    return Rel(a, op, b)


def view(out: Any) -> dict[str, Any]:
    """What an outcome decides: its type and fields, except ``method``, which names the procedure that
    decided (a shortcut and the solver it stands in for give the same outcome under their own names)."""
    return {"type": type(out).__name__, **{k: v for k, v in asdict(out).items() if k != "method"}}


def num(v: Fraction | int) -> Num:
    v = Fraction(v)
    return Num(v, str(v), 0)


def check(ob: Obligation) -> Outcome | None:
    return SympyChecker().check(ob, time.monotonic() + 60)


def sympy_alone(ob: Obligation, monkeypatch, keep: tuple[str, ...] = ()) -> Outcome | None:
    """The outcome with every shortcut off except those named in ``keep``."""
    with monkeypatch.context() as m:
        for name, off in SHORTCUTS.items():
            if name not in keep:
                m.setattr(symbolic, name, off)
        return check(ob)


def rewrite(rng: random.Random, e: Expr, leaf: Callable[[random.Random, Expr], Expr | None] | None = None) -> Expr:
    """A value-preserving rewrite (where both are defined): swaps, distribution, quotients as
    powers, differences as sums; ``leaf`` may rewrite a node these rules leave (None keeps it)."""
    if isinstance(e, BinOp):
        a, b = rewrite(rng, e.left, leaf), rewrite(rng, e.right, leaf)
        r = rng.random()
        if e.op in "+*" and r < 0.4:
            return BinOp(e.op, b, a)
        if e.op == "*" and isinstance(b, BinOp) and b.op in "+-" and r < 0.7:
            return BinOp(b.op, BinOp("*", a, b.left), BinOp("*", a, b.right))
        if e.op == "/" and r < 0.6:
            return BinOp("*", a, Pow(b, Neg(num(1))))
        if e.op == "-" and r < 0.8:
            return BinOp("+", a, Neg(b))
        return BinOp(e.op, a, b)
    if isinstance(e, Neg):
        return BinOp("*", num(-1), rewrite(rng, e.operand, leaf))
    if isinstance(e, Pow):
        return Pow(rewrite(rng, e.base, leaf), e.exponent)
    out = leaf(rng, e) if leaf is not None else None
    return e if out is None else out
