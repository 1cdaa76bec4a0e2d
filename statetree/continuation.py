"""Displays that continue a chain of rewrites: ``\\[ = (t^2 - t - 2) - (t^2 + t - 6) \\]``.

A display that opens with ``=`` and nothing before it continues the expression the display
above it ended with (or, at the start of a step, the one the previous step ended with). The
pair is a claim that two expressions are equal. It is an identity (a rewrite of the
expression) when the two sides are in the same letters, none of them has a known value, and no
equation in only those letters has been stated (``x^2 = x + 1`` lets ``x(x+1) = 2x + 1`` hold
without being an identity); otherwise it is left as an equation that may hold in context.
"""

from __future__ import annotations

import random
import re
from fractions import Fraction

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import Expr, Rel, variables
from faithsieve.mathtext.evaluate import evaluate
from faithsieve.mathtext.formulas import Formula

# the lead of a formula that continues the previous display: "\] \[ =", "$$ $$ =" (after nothing but a
# comma or full stop ending the line above), or at the start of a step, a display opened with "="
_CONTINUES_DISPLAY = re.compile(r"[\s,.;]{0,6}(?:\\\]|\$\$)\s{0,6}(?:\\\[|\$\$)\s{0,6}=\s{0,3}")
_OPENS_WITH_EQ = re.compile(r"(?:\\\[|\$\$)\s{0,6}=\s{0,3}\Z")
_MATH_OPENER = re.compile(r"\\\[|\\\(|\$\$?|\\begin\{")
_POINTS = 3


def continues(f: Formula, first_in_step: bool, before: str) -> bool:
    """``f`` is a bare expression opened by ``=`` that continues the display above it. ``before`` is
    the step's text before ``f``: at the start of a step, no other formula may come first (an
    expression the extractor did not read would then be what ``f`` continues)."""
    if f.chain.rels or len(f.chain.exprs) != 1:
        return False
    lead = re.sub(r"\\left\s*\Z", "", f.lead)  # "= \left(2x + ...": the parser starts after \left
    if _CONTINUES_DISPLAY.fullmatch(lead):
        return True
    return first_in_step and _OPENS_WITH_EQ.search(lead) is not None and len(_MATH_OPENER.findall(before)) == 1


def constrains(r: Rel, letters: frozenset[str]) -> bool:
    """``r`` is an equation in only ``letters`` (some of them) that is not an identity: it may let a
    rewrite in those letters hold without being an identity. Tried at a few seeded rational points;
    a relation that cannot be evaluated counts as a constraint."""
    vs = variables(r.lhs) | variables(r.rhs)
    if r.op != "=" or not vs or not vs <= letters:
        return False
    rng = random.Random(0)
    for _ in range(_POINTS):
        env = {v: Fraction(rng.randint(-9, 9), rng.randint(1, 5)) for v in sorted(vs)}
        try:
            if evaluate(r.lhs, env) != evaluate(r.rhs, env):
                return True
        except (FaithSieveError, ArithmeticError, ValueError):
            return True
    return False


def rewrite_claim(prev: Expr, f: Formula) -> Rel:
    return Rel(prev, "=", f.chain.exprs[0])


__all__ = ["constrains", "continues", "rewrite_claim"]
