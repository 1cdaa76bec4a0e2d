"""A rewriting asked for by the problem: "Factor $x^2 - 7x + 10$." then "Thus $x^2 - 7x + 10 = (x - 2)(x + 5)$."

The formula reader decides whether a step claims an identity from the step's own words (expanding,
factoring, "for all x"). When the problem asks to factor, expand or simplify one expression, a step that
sets exactly that expression equal to a rewriting of it (a product of sums against a sum, or a quotient
against another form: ``_rewrite_shape``) answers the problem: it claims the two are the same expression,
for every value of the letters. Such an identity obligation is marked asserted (``asserted_by =
"rewriting"``), so a non-identity is refuted instead of read as an equation in its unknowns.
"""

from __future__ import annotations

import re

from faithsieve.obligations.extraction.edgeunits import rewrite_shape
from faithsieve.obligations.kinds.models import IdentityObligation, Obligation

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import Expr, variables
from faithsieve.mathtext.formulas import find_segments
from faithsieve.mathtext.lexer import tokenize_latex
from faithsieve.mathtext.parser import parse_tokens

MAX_PROBLEM_CHARS = 2000
MAX_TARGET_CHARS = 200
_ASK = re.compile(r"(?i)\b(?:factor(?:i[sz]e)?|expand|simplify|multiply\s{1,3}out)\b(?:\s{1,3}(?:completely|fully|the\s{1,3}expression|the\s{1,3}polynomial))?\s{0,3}:?\s{0,3}\Z")


def rewrite_targets(problem: str) -> list[Expr]:
    """The expressions the problem asks to factor, expand or simplify (a LaTeX segment right after the verb)."""
    text = problem[:MAX_PROBLEM_CHARS]
    out: list[Expr] = []
    for seg in find_segments(text):
        if not seg.latex or seg.end - seg.start > MAX_TARGET_CHARS:
            continue
        head = text[max(0, seg.start - 60) : seg.start].rstrip("$([\\ ")
        if not _ASK.search(head):
            continue
        try:
            chain, _ = parse_tokens(tokenize_latex(text[seg.start : seg.end], seg.start), True)
        except FaithSieveError:
            continue
        if len(chain.exprs) == 1 and variables(chain.exprs[0]):
            out.append(chain.exprs[0])
    return out


def asked_rewritings(obligations: list[Obligation], problem: str) -> list[Obligation]:
    """``obligations`` with each identity that rewrites an expression the problem asks to rewrite marked
    as asserted (the rest unchanged, in order)."""
    if not any(isinstance(ob, IdentityObligation) and not ob.asserted_identity for ob in obligations):
        return obligations
    targets = rewrite_targets(problem)
    if not targets:
        return obligations
    out: list[Obligation] = []
    for ob in obligations:
        if isinstance(ob, IdentityObligation) and not ob.asserted_identity:
            r = ob.claim
            if (r.op == "=" and (r.lhs in targets or r.rhs in targets) and variables(r.lhs) == variables(r.rhs)
                    and rewrite_shape(r)):
                ob = ob.model_copy(update={"asserted_identity": True, "asserted_by": "rewriting"})
        out.append(ob)
    return out


__all__ = ["asked_rewritings", "rewrite_targets"]
