"""The offline stages: the rule-based decomposer and the literal-formula sieve.

No model is involved. Obligations come from the parser reading the step's own formulas,
so they carry their alignment by construction (each keeps its exact source span).
"""

from __future__ import annotations

import time
from collections.abc import Collection

from faithsieve.obligations.checkers.portfolio import Checker, run_portfolio
from faithsieve.obligations.extraction.divisibility import divisibility_obligations
from faithsieve.obligations.extraction.edgeunits import extract_obligations
from faithsieve.obligations.extraction.problemrewrite import asked_rewritings
from faithsieve.obligations.extraction.readings import reread
from faithsieve.obligations.extraction.remainders import remainder_obligations
from faithsieve.obligations.extraction.rootclaims import root_obligations
from faithsieve.obligations.kinds.flagtable import mark_suspects
from faithsieve.obligations.kinds.models import Evidence, Obligation, Outcome, Unknown
from faithsieve.stages.base import Decomposition, RunContext
from faithsieve.statetree.decompose import decompose


class RuleDecomposer:
    """EdgeUnits read from each step's formulas and cue words (``statetree.decompose``)."""

    name = "rule"

    def decompose(self, ctx: RunContext) -> Decomposition:
        return Decomposition(tree=decompose(ctx.proof, ctx.readings), kind="rule")


def check_obligations(obligations: list[Obligation], checkers: list[Checker], deadline: float) -> list[Evidence]:
    """Run the checker portfolio on each obligation until ``deadline`` (later ones are ``unknown``)."""
    evidence = []
    for ob in obligations:
        t = time.perf_counter()
        if time.monotonic() > deadline:
            out: Outcome = Unknown("budget", "time budget for this proof exhausted")
        else:
            out = reread(ob, run_portfolio(ob, checkers, deadline), lambda o: run_portfolio(o, checkers, deadline))
        evidence.append(ob.evidence(out, (time.perf_counter() - t) * 1000))
    return evidence


def literal_evidence(ctx: RunContext, decomposition: Decomposition,
                     kinds: Collection[str] | None = None) -> list[Evidence]:
    """Evidence of the literal-formula obligations of a rule-based tree (only those of ``kinds``,
    when given: the others are not checked at all)."""
    # division with remainder, congruences, divisibility and orders, read from the step text (the formula
    # reader sees no such claim)
    obligations: list[Obligation] = sorted([*extract_obligations(decomposition.tree), *remainder_obligations(ctx.proof),
                                            *divisibility_obligations(ctx.proof),
                                            # values claimed as roots of the problem's own equation
                                            *root_obligations(decomposition.tree, ctx.proof, ctx.readings)], key=lambda ob: ob.step)
    # a step that rewrites the expression the problem asks to factor, expand or simplify claims an identity
    obligations = asked_rewritings(obligations, ctx.proof.problem)
    if kinds is not None:
        obligations = [ob for ob in obligations if ob.kind.value in kinds]
    # a refutation of a kind not yet measured clean on the reference bench is shown as suspect, never decides
    evidence = check_obligations(obligations, ctx.checkers, ctx.deadline)
    return mark_suspects(evidence, {s.index: s.text for s in ctx.proof.steps})


class LiteralSieve:
    """The literal-formula obligations of a rule-based tree, checked by our checkers (``literal_evidence``);
    only those of ``kinds`` when given (``--mode llm`` keeps ``settings.llm_rule_kinds``)."""

    name = "literal"

    def __init__(self, kinds: Collection[str] | None = None) -> None:
        self.kinds = kinds

    def sift(self, ctx: RunContext, decomposition: Decomposition) -> list[Evidence]:
        return literal_evidence(ctx, decomposition, self.kinds)
