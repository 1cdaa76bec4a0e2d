"""Order relations with a non-real side: ``x > \\sqrt{-7}``, ``x < -i\\sqrt{7}``.

The complex numbers carry no order compatible with their arithmetic, and ``\\sqrt{-7}`` has no real value,
so a relation ``<``, ``>``, ``≤`` or ``≥`` one of whose sides is a closed expression with a non-real value
is false under every reading (real: the side is undefined; complex: the relation is). Such a claim is
refuted whatever it was derived from."""

from __future__ import annotations

from faithsieve.obligations.kinds.models import Outcome, Refuted

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import Call, Const, Expr, Rel, render, variables, walk
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits, to_sympy

METHOD = "nonreal-order"
_ORDER = frozenset(["<", ">", "<=", ">="])


def _may_be_nonreal(e: Expr) -> bool:
    """A closed side that writes the imaginary unit or a root: the only ways a written number is not real."""
    return not variables(e) and any(isinstance(n, Const) and n.name == "i" or isinstance(n, Call) and n.fn in ("sqrt", "root")
                                    for n in walk(e))


def nonreal_order(claim: Rel, lim: Limits = DEFAULT_LIMITS) -> Outcome | None:
    """A refutation of ``claim`` when it orders a closed non-real value; None otherwise."""
    if claim.op not in _ORDER:
        return None
    for side in (claim.lhs, claim.rhs):
        if not _may_be_nonreal(side):
            continue
        try:
            v = to_sympy(side, lim)
        except (FaithSieveError, ValueError, TypeError, ArithmeticError):
            continue
        if getattr(v, "is_number", False) and v.is_real is False:
            return Refuted(METHOD, {"side": render(side), "value": str(v)},
                           "an order relation with a non-real side: false under every reading")
    return None
