"""A letter given a second value in place: ``x = 4`` … then "each increased by 2: x = 4 + 2 = 6".

Solutions often update a quantity under its old name instead of naming the new one. When the
letter already holds a value in the context, and the relation a new value would be checked
against is a fact *about the old value* (it holds there), the new value does not solve that
relation — it is the letter reused. Checking it against the old relation would refute a
rebinding, not a mistake, so the relation is not made its premise.
"""

from __future__ import annotations

from fractions import Fraction

from faithsieve.errors import FaithSieveError
from faithsieve.mathtext.evaluate import evaluate
from faithsieve.obligations.models import Rel


def reused_letter(var: str, new_value: Fraction | None, premise: Rel, env: dict[str, Fraction]) -> bool:
    """``var`` already holds a different value in ``env`` and ``premise`` holds at that old value."""
    old = env.get(var)
    if old is None or new_value is None or old == new_value or premise.op != "=":
        return False
    try:
        return evaluate(premise.lhs, {var: old}) == evaluate(premise.rhs, {var: old})
    except (FaithSieveError, ArithmeticError, ValueError):
        return False


__all__ = ["reused_letter"]
