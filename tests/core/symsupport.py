"""Shared by the tests of the symbolic checker's exact shortcuts: claims from LaTeX, outcomes as
dicts, and the checker with every shortcut off (what sympy alone decides)."""

from __future__ import annotations

import time
from dataclasses import asdict
from fractions import Fraction
from typing import Any

from faithsieve.mathtext.ast import Num
from faithsieve.mathtext.extract import extract_formulas
from faithsieve.obligations import symbolic
from faithsieve.obligations.checkers import SympyChecker
from faithsieve.obligations.models import Obligation, Outcome, Rel

BASE: dict[str, Any] = {"id": "o0", "step": 1, "span": (0, 1), "edge": "e0", "source": ""}

SHORTCUTS = {
    "polynomial_class": lambda *a, **k: None, "numerator_has_root": lambda *a, **k: False,
    "numerator_not_constant": lambda *a, **k: False, "rational_identity": lambda *a, **k: False,
    "polynomial_variable": lambda *a, **k: False, "radical_equal": lambda *a, **k: False,
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
    return {"type": type(out).__name__, **asdict(out)}


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
