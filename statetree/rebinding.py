"""A letter given a second value in place: ``x = 4`` … then "each increased by 2: x = 4 + 2 = 6".

Solutions often update a quantity under its old name instead of naming the new one, and write
the update as an operation on the old value (``x = 4 + 2``, like ``n ← n + 1``). When the letter
already holds a value in the context, the new value is written as an operation on that old value,
and the relation it would be checked against is a fact *about the old value* (it holds there),
the new value does not solve that relation — it is the letter reused, and the relation is not
made its premise. A bare new value (``y = 40`` after ``4y = 260`` gave ``y = 65``) is not an
update: it is still checked against the relation.
"""

from __future__ import annotations

import re
from fractions import Fraction

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import BinOp, Expr, Num, Rel, walk
from faithsieve.mathtext.evaluate import evaluate


def reused_letter(var: str, update: Expr, new_value: Fraction | None, premise: Rel, env: dict[str, Fraction]) -> bool:
    """``var`` already holds a different value in ``env``, ``update`` (the expression the new value is
    written as) is an operation on that old value, and ``premise`` holds at the old value."""
    old = env.get(var)
    if old is None or new_value is None or old == new_value or premise.op != "=":
        return False
    if not isinstance(update, BinOp) or not any(isinstance(n, Num) and n.value == old for n in walk(update)):
        return False
    try:
        return evaluate(premise.lhs, {var: old}) == evaluate(premise.rhs, {var: old})
    except (FaithSieveError, ArithmeticError, ValueError):
        return False


# "3x = 9 gives x = 3", ", so x = 3", "⇒ x = 3": the relation is solved for its letter right after it
_SOLVED_AFTER = re.compile(r"(?i)[ \t]{0,3}[,;]?[ \t]{0,3}(?:gives|giving|yields|so|hence|thus|then|implies|i\.e\.|that is|"
                           r"⇒|=>|\\implies|\\Rightarrow)[ \t]{1,3}(?:that[ \t]{1,3})?(?:\$|\\\()?[ \t]{0,3}([a-zA-Z])[ \t]{0,3}=[ \t]{0,3}"
                           r"(-?[ \t]{0,2}\d{1,12}(?:\.\d{1,12})?(?:[ \t]{0,2}/[ \t]{0,2}\d{1,12})?)(?!\d|\.\d)")


def solved_again(after: str, variables: frozenset[str], env: dict[str, Fraction]) -> bool:
    """The text right after a relation solves it for one of its letters and gets a value other than
    the one that letter holds: the relation is a new equation in that letter, not a use of the old value."""
    m = _SOLVED_AFTER.match(after[:80])
    if m is None or m.group(1) not in variables or m.group(1) not in env:
        return False
    try:
        value = Fraction(m.group(2).replace(" ", "").replace("\t", ""))
    except (ValueError, ZeroDivisionError):
        return False
    return value != env[m.group(1)]


__all__ = ["reused_letter", "solved_again"]
