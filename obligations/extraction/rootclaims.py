"""Root claims against the problem's own equation: "Solve $x^2 - 3x + 2 = 0$." then "Its zeros are
$x = 1$ and $x = 3$".

The state tree derives a value from the relation before it in the proof; when a step names the roots
of an equation stated only in the problem, no premise reaches the value, and nothing checks it. A
claimed root is a claim about that equation: each value the step gives the problem's unknown must
satisfy it. The obligation is made only when

- the problem states exactly one equation in that unknown alone, not an identity (``x^2 - 5x + 6 = 0``;
  never a definition ``x = 3`` nor a relation in several letters, whose other letters the proof may fix);
- the step states the value as a root: its sentence names roots, zeros or solutions, or concludes
  (therefore, hence, thus), or gives the value as one of alternatives (``x = 0 or x = 7``);
- the value is asserted (not supposed, tested, denied or questioned), the tree found no premise for it
  (a value the tree derives from a written relation has its own obligation; a factoring, an identity,
  is no such relation), and the proof has written no equation in the unknown before it ("the squared equation has the roots x = 2 and x = 9" names
  the roots of an equation the proof derived, which need not be the problem's).
"""

from __future__ import annotations

import re
from fractions import Fraction

from faithsieve.obligations.kinds.models import CoverageObligation, SolutionObligation
from faithsieve.obligations.procedures.polynomials import poly_difference
from faithsieve.statetree.models import EdgeContext, StateTree, TransitionType

from faithsieve.core.errors import FaithSieveError
from faithsieve.core.proof import Proof
from faithsieve.mathtext.ast import Neg, Num, Rel, Var, variables
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, evaluate
from faithsieve.mathtext.formulas import RecentReadings, extract_formulas
from faithsieve.mathtext.literals import show_number

MAX_PROBLEM_CHARS = 4000
_ROOT_WORDS = re.compile(r"(?i)\b(roots?|zeros?|zeroes|solutions?|solves?|therefore|hence|thus)\b")
_ASKS = re.compile(r"(?i)\b(solve|roots?|zeros?|zeroes|solutions?|find\s+(?:all\s+)?(?:real\s+)?(?:values?\s+of\s+)?\$?[a-z]\b)")


def _identity(r: Rel) -> bool:
    """Both sides of ``r`` expand to the same polynomial (``x^3 - x = x(x - 1)(x + 1)``)."""
    if r.op != "=":
        return False
    diff = poly_difference(r.lhs, r.rhs, DEFAULT_LIMITS, quotients=False)
    return diff is not None and not any(diff[0].values())


def problem_equations(problem: str, readings: RecentReadings | None = None) -> dict[str, Rel]:
    """The problem's equation in each unknown that has exactly one (in that unknown alone, not an
    identity, not a value given as ``x = 3``), when the problem asks for its solutions (read through
    ``readings`` when given: the tree builder has usually just read the problem)."""
    text = problem[:MAX_PROBLEM_CHARS]
    if not _ASKS.search(text):
        return {}
    found: dict[str, list[Rel]] = {}
    for f in (readings.read(text) if readings is not None else extract_formulas(text)):
        if f.conditional:
            continue
        for lhs, op, rhs in f.chain.links():
            vs = variables(lhs) | variables(rhs)
            if op != "=" or len(vs) != 1:
                continue
            r = Rel(lhs, op, rhs)
            if isinstance(lhs, Var) and not variables(rhs) or isinstance(rhs, Var) and not variables(lhs):
                continue  # "x = 3": a value given, not an equation to solve ("x^3 = x" is one)
            if _identity(r):
                continue  # an identity has no roots to claim
            found.setdefault(next(iter(vs)), []).append(r)
    return {v: rs[0] for v, rs in found.items() if len(rs) == 1}


_FULL_SET = re.compile(r"(?i)\b(?:solutions?|roots?|zeros?|zeroes)\s{1,3}(?:are|is)\b|\bthe\s{1,3}only\s{1,3}(?:real\s{1,3})?"
                       r"(?:solutions?|roots?)\b|\bsolution\s{1,3}set\b|\ball\s{1,3}(?:the\s{1,3})?(?:real\s{1,3})?(?:solutions|roots)\b")
"""The step names the whole solution set ("the solutions are", "the only real root", "all solutions")."""
_PARTIAL = re.compile(r"(?i)\b(?:one|two|three|some|each|either|another)\s{1,3}(?:of\s{1,3}(?:the|its)\s{1,3})?(?:real\s{1,3})?"
                      r"(?:solutions?|roots?|zeros?|zeroes)\b|\b(?:a|another)\s{1,3}(?:real\s{1,3})?(?:solution|root|zero)\b")
"""The step names some of the solutions ("one of the roots is", "a root is", "another solution"): no whole set."""
_OTHER_DOMAIN = re.compile(r"(?i)\b(?:positive|negative|non-?negative|natural|primes?|complex|interval|digits?)\b|[<>≤≥]|\\[lg]eq?\b|\\in\b")
_INTEGER_DOMAIN = re.compile(r"(?i)\bintegers?\b|\\mathbb\s{0,2}\{?Z")


def _completeness(var: str, eq: Rel, group: list[tuple[str, int, tuple[int, int], Fraction]], problem: str
                  ) -> CoverageObligation | None:
    """"The solutions are x = 0 and x = 1" of ``x^3 = x``: the values listed as the whole solution set
    must cover every solution, a case split whose cases are the values and whose domain is the
    equation's solution set (fixed by the text: every gap is one). None where the problem restricts the
    unknown further (positive, a range, primes: a gap may lie outside)."""
    if _OTHER_DOMAIN.search(problem[:MAX_PROBLEM_CHARS]):
        return None
    values = sorted({v for *_, v in group})
    step = group[0][1]
    span = (group[0][2][0], group[-1][2][1])
    conditions = tuple(Rel(Var(var), "=", Num(v, show_number(v), 0)) for v in values)
    return CoverageObligation(id="", step=step, span=span, edge="", source=f"the solution set of {eq}",
                              variable=var, cases=tuple(f"{var} = {show_number(v)}" for v in values), conditions=conditions,
                              case_sizes=tuple(1 for _ in values), parity=tuple("" for _ in values),
                              domain="integer" if _INTEGER_DOMAIN.search(problem[:MAX_PROBLEM_CHARS]) else "real",
                              domain_constraints=(eq,), domain_stated=True)


def _claimed_value(ctx: EdgeContext, text: str) -> tuple[Fraction, bool, int, int] | None:
    """The value a definition edge claims as a root, read from its sentence: (value, approx, decimals, the
    sentence's start), or None where the edge claims no root (no root word and no parallel list, a value with
    letters, an expression with no exact value)."""
    f, r = ctx.formula, ctx.rel
    assert f is not None and r is not None
    start = max(0, text.rfind(". ", 0, f.start) + 1)
    if not (ctx.parallel or _ROOT_WORDS.search(text[start : f.start])):
        return None
    value_expr = r.rhs if isinstance(r.lhs, Var) else r.lhs
    if variables(value_expr):
        return None
    try:
        value: Fraction = evaluate(value_expr)
    except FaithSieveError:
        return None
    lit = value_expr.operand if isinstance(value_expr, Neg) else value_expr
    decimals = lit.decimals if isinstance(lit, Num) else 0
    return value, f.approx_context or r.op == "~" or decimals > 0, decimals, start


def _root_edge(ctx: EdgeContext | None, eqs: dict[str, Rel], derived: set[str]) -> bool:
    """A definition edge that may claim a root of the problem's equation: of one of its unknowns, one the proof
    has written no equation in yet, asserted (not supposed, denied, hypothetical or part of a system)."""
    if ctx is None or ctx.formula is None or ctx.rel is None or ctx.definition_of not in eqs:
        return False
    if ctx.definition_of in derived:
        return False  # "the squared equation has the roots x = 2 and x = 9": the roots of an equation the proof wrote
    return not (ctx.system is not None or ctx.negated or ctx.supposed or ctx.hypothetical or ctx.reductio)


def root_obligations(tree: StateTree, proof: Proof,
                     readings: RecentReadings | None = None) -> list[SolutionObligation | CoverageObligation]:
    """A solution obligation for each value a step claims as a root of the problem's equation in the
    same unknown, where the tree found no premise for the value; where the step names the whole
    solution set, a coverage obligation: no solution is left out."""
    eqs = problem_equations(proof.problem, readings)
    if not eqs:
        return []
    steps = {s.index: s.text for s in proof.steps}
    out: list[SolutionObligation | CoverageObligation] = []
    groups: dict[tuple[int, int, str], list[tuple[str, int, tuple[int, int], Fraction]]] = {}
    derived: set[str] = set()  # unknowns the proof has written an equation in so far (edge order is text order)
    for edge in tree.edges:
        ctx = tree.contexts.get(edge.id)
        if edge.type != TransitionType.DEFINITION:
            if ctx is not None and ctx.rel is not None:
                vs = (variables(ctx.rel.lhs) | variables(ctx.rel.rhs)) & set(eqs)
                if vs - derived and not _identity(ctx.rel):
                    derived |= vs  # a factoring (an identity) has no roots of its own: the problem's equation still stands
            continue
        if not _root_edge(ctx, eqs, derived):
            continue
        assert ctx is not None and ctx.formula is not None and ctx.definition_of is not None
        text = steps.get(edge.step, "")
        claimed = _claimed_value(ctx, text)
        if claimed is None:
            continue
        value, approx, decimals, start = claimed
        var = ctx.definition_of
        # a value the tree already checks against a premise (the problem's equation included) gets no second
        # solution obligation here, but still belongs to the listed set: "x = 2 and x = 1/2" are both listed
        if not any(not _identity(p) for p in ctx.premises):
            out.append(SolutionObligation(id=f"r{len(out)}", step=edge.step, span=edge.span, edge=edge.id, source=edge.text,
                                          equations=(eqs[var],), values={var: value}, approx=approx, decimals=decimals))
        if not approx and _FULL_SET.search(text[start : min(len(text), ctx.formula.end + 200)]) \
                and not _PARTIAL.search(text[start : ctx.formula.start]):
            groups.setdefault((edge.step, start, var), []).append((edge.id, edge.step, edge.span, value))
    for (_, _, var), group in groups.items():
        cov = _completeness(var, eqs[var], group, proof.problem)
        if cov is not None:
            out.append(cov.model_copy(update={"id": f"r{len(out)}"}))
    return out


__all__ = ["problem_equations", "root_obligations"]
