"""The integer form of a closed rational claim: denominators cleared exactly (pure, bounded).

Core Lean's ``Rat`` arithmetic is irreducible to ``decide`` and ``rfl``, core ``simp`` has no ``Rat``
simprocs and ``omega`` is integer-only, so a true claim such as ``3 / 4 + 1 / 2 = 5 / 4`` over
``Rat`` is hard to prove without Mathlib. Over ``Int`` the same claim is literal arithmetic that
``decide``/``omega`` settle. ``integer_form(ob)`` writes a closed arithmetic claim ``L op R`` as
``N(L) * D(R) op' N(R) * D(L)``, where ``N(x) / D(x)`` is ``x`` as a quotient of integer
expressions built node by node (``a / b`` is ``N(a) D(b) / (D(a) N(b))``, ``p%`` is ``p / 100``,
``2.5`` is ``25 / 10``), and ``op'`` is ``op`` reversed when ``D(L) D(R) < 0``. Every sign is
decided by exact evaluation of the sub-expression (``faithsieve.mathtext.evaluate``, under its
limits); a zero divisor, an operation outside ``+ - * / ^n %`` and negation, or a value past the
limits gives ``None``. The two statements are then equivalent by field arithmetic, so a proof of
either decides the claim; the evidence says which form was proved.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from faithsieve.lean.statement import LeanStatement
from faithsieve.obligations.kinds.models import ArithmeticObligation, Obligation

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import BinOp, Call, Expr, Neg, Num, Pow, Rel, variables
from faithsieve.mathtext.evaluate import evaluate

__all__ = ["MAX_TEXT", "integer_form"]

MAX_TEXT = 4000
"""Longest integer form written (each ``+`` and ``/`` multiplies out denominators)."""
_FLIP = {"=": "=", "!=": "≠", "<": ">", ">": "<", "<=": "≥", ">=": "≤"}
_OPS = {"=": "=", "!=": "≠", "<": "<", ">": ">", "<=": "≤", ">=": "≥"}


class _No(Exception):
    pass


@dataclass(frozen=True)
class _Term:
    """An integer expression: its text, its precedence, the sign of its value."""

    text: str
    prec: int
    sign: int


def _paren(t: _Term, need: int) -> str:
    return t.text if t.prec >= need else f"({t.text})"


def _mul(a: _Term | None, b: _Term | None) -> _Term | None:
    """``a * b`` where None is 1."""
    if a is None or b is None:
        return a if b is None else b
    return _times(a, b)


def _times(a: _Term, b: _Term | None) -> _Term:
    """``a * b`` where ``b`` None is 1."""
    return a if b is None else _Term(f"{_paren(a, 70)} * {_paren(b, 71)}", 70, a.sign * b.sign)


def _power(t: _Term, k: int) -> _Term:
    return _Term(f"{_paren(t, 76)} ^ {k}", 75, t.sign ** k if k else 1)


def _int(v: int) -> _Term:
    return _Term(str(v), 1024, 1 if v > 0 else 0) if v >= 0 else _Term(f"-{-v}", 60, -1)


def _sign(e: Expr) -> int:
    try:
        v = evaluate(e)
    except FaithSieveError:
        raise _No from None
    return (v > 0) - (v < 0)


def _frac(e: Expr) -> tuple[_Term, _Term | None]:
    """``(N, D)`` with ``e = N / D`` (``D`` None for 1)."""
    if isinstance(e, Num):
        v: Fraction = e.value
        if e.decimals and (v * 10**e.decimals).denominator == 1:
            return _int(int(v * 10**e.decimals)), _int(10**e.decimals)
        return _int(v.numerator), (None if v.denominator == 1 else _int(v.denominator))
    if isinstance(e, Neg):
        n, d = _frac(e.operand)
        return _Term(f"-{_paren(n, 1024)}", 60, -n.sign), d
    if isinstance(e, Call) and e.fn == "percent":
        n, d = _frac(e.args[0])
        return n, _mul(d, _int(100))
    if isinstance(e, Pow):
        k = evaluate(e.exponent) if not variables(e.exponent) else None
        if k is None or k.denominator != 1 or not 0 <= k <= 64:
            raise _No
        n, d = _frac(e.base)
        return _power(n, int(k)), (None if d is None else _power(d, int(k)))
    if isinstance(e, BinOp) and e.op in ("+", "-", "*", "/"):
        (na, da), (nb, db) = _frac(e.left), _frac(e.right)
        if e.op == "*":
            return _times(na, nb), _mul(da, db)
        if e.op == "/":
            if _sign(e.right) == 0:
                raise _No
            return _times(na, db), _times(nb, da)
        left, right, den = _times(na, db), _times(nb, da), _mul(da, db)
        text = f"{_paren(left, 65)} {e.op} {_paren(right, 66)}"
        return _Term(text, 65, _sign(e) * (1 if den is None else den.sign)), den
    raise _No


def integer_form(ob: Obligation) -> LeanStatement | None:
    """The integer form of a closed arithmetic claim with a division or a non-integer literal, or None."""
    if not isinstance(ob, ArithmeticObligation) or ob.approx or ob.rounded:
        return None
    r: Rel = ob.claim
    if r.op not in _OPS or variables(r.lhs) or variables(r.rhs):
        return None
    try:
        (nl, dl), (nr, dr) = _frac(r.lhs), _frac(r.rhs)
    except (_No, FaithSieveError, RecursionError):
        return None
    if dl is None and dr is None:
        return None  # already integer arithmetic
    s = (1 if dl is None else dl.sign) * (1 if dr is None else dr.sign)
    if s == 0:
        return None
    lhs, rhs = _times(nl, dr), _times(nr, dl)
    op = _OPS[r.op] if s > 0 else _FLIP[r.op]
    conclusion = f"({lhs.text} : Int) {op} {rhs.text}"
    if len(conclusion) > MAX_TEXT:
        return None
    return LeanStatement(name=f"fs_arith_{ob.id}_int", conclusion=conclusion, imports=(), flavour="core",
                         refute="negation", notes=("integer form: denominators cleared exactly",))
