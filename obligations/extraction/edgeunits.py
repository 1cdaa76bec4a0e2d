"""Obligation extraction: EdgeUnits (with their context) -> typed obligations.

Pure: takes the state tree, returns obligations. The rules are conservative by
design: an edge whose sentence denies or questions its relation produces no
obligation, hypotheses ("if x = 3") are never used as facts, and identity claims
over unknowns are only refuted where the text says an identity is meant.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction

from faithsieve.obligations.extraction.conventions import unit_restatement
from faithsieve.obligations.extraction.readings import (
    guessed_reading,
    notation_written,
    written_readings,
)
from faithsieve.obligations.kinds.models import (
    ArithmeticObligation,
    CoverageObligation,
    DerivationObligation,
    IdentityObligation,
    Obligation,
    SolutionObligation,
    SubstitutionObligation,
)
from faithsieve.obligations.procedures.calculus import (
    definitions,
    has_calculus,
    with_definitions,
)
from faithsieve.obligations.procedures.polynomials import expand, poly_difference
from faithsieve.statetree.models import (
    CaseSplit,
    EdgeContext,
    EdgeUnit,
    StateTree,
    TransitionType,
)
from faithsieve.statetree.rebinding import solved_again

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import (
    BinOp,
    Expr,
    Neg,
    Num,
    Pow,
    Rel,
    Var,
    literals,
    variables,
)
from faithsieve.mathtext.cues import compiled
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, evaluate
from faithsieve.mathtext.formulas import Formula

MAX_VARS = 4


def _rel_vars(r: Rel) -> frozenset[str]:
    return variables(r.lhs) | variables(r.rhs)


def extract_obligations(tree: StateTree) -> list[Obligation]:
    """All obligations of a proof, in step order."""
    out: list[Obligation] = []
    notes = _FormulaNotes()
    for edge in tree.edges:
        ctx = tree.contexts[edge.id]
        if ctx.rel is not None and ctx.formula is not None and any(m in ctx.formula.text for m in _CALCULUS_MARKS):
            ctx = _defined_functions(tree, edge, ctx)
        ob = _from_edge(edge, ctx, f"o{len(out)}", notes)
        if ob is not None:
            out.append(ob)
    return out


_CALCULUS_MARKS = ("'", "frac{d", "\\int", "\\lim", "frac{\\mathrm{d}")
"""What a formula that may use a defined function's derivative writes (``f'(2)``, ``\\frac{d}{dx} f(x)``)."""


def _defined_functions(tree: StateTree, edge: EdgeUnit, ctx: EdgeContext) -> EdgeContext:
    """``ctx`` with the relation's derivatives of functions defined before it written out
    (``calculus.with_definitions``), or ``ctx`` itself."""
    assert ctx.rel is not None
    r = with_definitions(ctx.rel, definitions(tree.facts_at(edge.parent) + _definitions_above(tree, edge)))
    if r is None:
        return ctx
    return replace(ctx, rel=r, rel_vars=variables(r.lhs) | variables(r.rhs))


_DEFINITION_HOPS = 64
"""How far up the path to the root a definition ``y = <expression in x>`` is looked for."""


def _definitions_above(tree: StateTree, edge: EdgeUnit) -> tuple[Rel, ...]:
    """The equations asserted by the edges on the path from the root to ``edge`` (``y = x^3 + 2x``,
    earlier in the same step or in an earlier one), oldest first: the facts recorded at a state hold
    only what was known when it was created (``definitions`` keeps those that define)."""
    into = {e.child: e for e in tree.edges}
    out: list[Rel] = []
    node = edge.parent
    for _ in range(_DEFINITION_HOPS):
        above = into.get(node)
        if above is None:
            break
        c = tree.contexts.get(above.id)
        if c is not None and c.rel is not None and c.rel.op == "=" and not (c.negated or c.hypothetical or c.supposed):
            out.append(c.rel)
        node = above.parent
    return tuple(reversed(out))


class _FormulaNotes:
    """What the readings module says of a formula as a whole, asked once per formula of one tree
    (several edges share a formula: one per link of a chain). Both answers depend only on the formula
    and the text around it, so keeping them for the tree's lifetime changes nothing."""

    def __init__(self) -> None:
        self._written: dict[int, bool] = {}
        self._guessed: dict[tuple[int, tuple[str, str]], str] = {}  # the formulas outlive this object: ids stay unique

    def written(self, f: Formula) -> bool:
        key = id(f)
        if key not in self._written:
            self._written[key] = notation_written(f)
        return self._written[key]

    def guessed(self, f: Formula, around: tuple[str, str]) -> str:
        key = (id(f), around)
        if key not in self._guessed:
            self._guessed[key] = guessed_reading(f, *around)
        return self._guessed[key]


def _from_edge(edge: EdgeUnit, ctx: EdgeContext, oid: str, notes: _FormulaNotes | None = None) -> Obligation | None:
    notes = notes or _FormulaNotes()
    base = dict(id=oid, step=edge.step, span=edge.span, edge=edge.id, source=edge.text)
    if ctx.coverage is not None:
        return _coverage(ctx.coverage, base)
    r = ctx.rel
    if r is None or ctx.negated or ctx.formula is None or ctx.supposed:
        return None
    f = ctx.formula
    vs = ctx.rel_vars if ctx.rel_vars is not None else _rel_vars(r)
    approx = f.approx_context or r.op == "~" or bool(_ROUNDING_AFTER.match(ctx.around[1]))
    if ctx.reductio and not vs and _bare(r.lhs) and _bare(r.rhs):
        return None  # inside a supposition being refuted, "4 = 5" is the contradiction sought
    # the readings are asked only for an edge that gets an obligation (an edge that gets none
    # needs neither answer; both depend only on the formula and the text around it)

    def read() -> dict[str, object]:
        guessed = notes.guessed(f, ctx.around)
        if guessed:  # no reading to try: a refutation would rest on the guess
            return dict(base, readings=(), ambiguity=guessed)
        readings, ambiguity = written_readings(r, f, ctx.link) if notes.written(f) else ((), "")
        return dict(base, readings=readings, ambiguity=ambiguity)

    if not vs:
        return ArithmeticObligation(**read(), claim=r, approx=approx, rounded=_rounded_in(r, ctx.rounded),
                                    word_problem=ctx.word_problem, ceiling=ctx.word_problem and counts_items(ctx.around))
    if len(vs) > MAX_VARS or f.multiletter and not (f.latex and _identity_meant(ctx, r, vs)):
        return None  # juxtaposed letters in plain text may be one name; in LaTeX math beside a rewriting cue, a product
    if edge.type == TransitionType.DEFINITION:
        if ctx.system is not None and not ctx.hypothetical:
            eqs, values = ctx.system
            return SolutionObligation(**read(), equations=eqs, values=values, approx=approx)
        return _solution(ctx, read, approx)
    if ctx.hypothetical and not (vs <= set(ctx.env) and _CHECK_CUE.search(f.lead[-80:])):
        return None  # "check: 10 - x = 10 - 6" with x known is the value put in, not a supposition
    if vs <= set(ctx.env) and r.op == "=" and _substitution_meant(ctx, r, edge.step):
        env = {k: ctx.env[k] for k in sorted(vs)}  # sorted: set order varies between processes
        origins = {k: ctx.env_origin.get(k, "") for k in sorted(vs)}
        return SubstitutionObligation(**read(), claim=r, env=env, approx=approx, origins=origins,
                                      word_problem=ctx.word_problem)
    if ctx.premises and edge.type == TransitionType.DERIVATION and not has_calculus(r):
        # (a calculus value is computed, not derived from the premise: it is checked as an identity)
        derived = _derivation(ctx, r, vs, read)
        if derived is not None:
            return derived
    if r.op == "=" and not ctx.parallel and not ctx.reductio:
        # (inside a supposition being refuted, an equation no value satisfies is the contradiction sought)
        return _identity(ctx, r, vs, read)
    return None


_ROUNDING_AFTER = re.compile(r"(?i)[^.;\n]{0,24}?\b(?:to\s{1,3}the\s{1,3}nearest|rounded|rounding|rounds)\b")
"""``500 \\cdot 1.03^4 = 563, to the nearest dollar``: a rounding instruction written after the formula, in its
clause, applies to the value it ends with, as one written before it does (``Formula.approx_context``)."""


def _derivation(ctx: EdgeContext, r: Rel, vs: frozenset[str], read: Callable[[], dict[str, object]]) -> Obligation | None:
    """The obligation of a relation derived from the premises before it: the identity of the two forms
    of a side it rewrote (``_one_side_rewritten``), else that it follows from them, or None."""
    prem = ctx.premises
    rewritten = _one_side_rewritten(prem, r)
    if rewritten is not None:
        return IdentityObligation(**read(), claim=rewritten, asserted_identity=True, asserted_by="rewriting")
    if len(prem) == 1 and unit_restatement(prem[0], r, ctx.around[1]):
        return None  # "3x = 1 hour", "thus 3x = 60 minutes": the same quantity in another unit
    if (vs == set().union(*(_rel_vars(p) for p in prem)) and all(p != r for p in prem)
            and all(p.op != "!=" and not _defines_var(p) for p in prem)
            # an identity holds for every value, so nothing follows from it: a claim after a rewriting
            # link ("0 = w^3 - 1 = (w - 1)(w^2 + w + 1), hence w^2 + w + 1 = 0") rests on other facts
            and not all(_identity_premise(p) for p in prem)):
        return DerivationObligation(**read(), premises=prem, claim=r, integer_vars=tuple(sorted(ctx.integer_vars & vs)),
                                    # a candidate over other unknowns is not what this claim rewrites
                                    other_premises=tuple(p for p in ctx.other_premises if _rel_vars(p) == vs))
    return None


def _one_side_rewritten(prem: tuple[Rel, ...], r: Rel) -> Rel | None:
    """``m^2 - 32 > 0``, hence ``(m - 4)(m + 8) > 0``: a relation that keeps one side of the relation before
    it and the relation sign, and writes the other side in another form (factored, expanded, over a
    common denominator: ``rewrite_shape``) in the same letters, claims the two forms equal: the
    equality of the two forms, or None. Where the kept side is 0, the new side may be the old one
    times a number (both sides divided by it) or a factor of it (a product is 0 when a factor is); a
    kept 1 or -1 is left by squaring both sides: those are left to the derivation checks. A form in
    other letters, or one that is no rewriting shape, may use the problem's facts
    (``x^2 + y^2 + 2xy = 196``, then ``x^2 + y^2 + 38 = 196``)."""
    if len(prem) != 1 or prem[0].op != r.op or r.op not in ("=", "<", ">", "<=", ">="):
        return None
    p = prem[0]
    if p.rhs == r.rhs and p.lhs != r.lhs:
        old, new, kept = p.lhs, r.lhs, r.rhs
    elif p.lhs == r.lhs and p.rhs != r.rhs:
        old, new, kept = p.rhs, r.rhs, r.lhs
    else:
        return None
    claim = Rel(old, "=", new)
    vs = variables(old)
    if not vs or variables(new) != vs or len(vs) > MAX_VARS or not _rewrite_shape(claim) or _identity_premise(p):
        return None  # (an identity before it says nothing: "2(p^2 + 2) = 2p^2 + 4", then "4p^2 + 2 = 2p^2 + 4")
    # a kept 0 or 1 is what both sides squared or multiplied leave: "w + 1/w = 1", so "(w + 1/w)^2 = 1"
    if _bare(kept) and ((k := evaluate(kept)) in (-1, 1) or k == 0 and not _same_degree_not_proportional(old, new)):
        return None
    return claim


def _same_degree_not_proportional(old: Expr, new: Expr) -> bool:
    """Both sides expand to polynomials of the same degree and ``new`` is no number times ``old``
    (so it is neither ``old`` divided by a number nor a factor of it)."""
    zero = Num(Fraction(0), "0", 0)
    a = poly_difference(old, zero, DEFAULT_LIMITS, quotients=False)
    b = poly_difference(new, zero, DEFAULT_LIMITS, quotients=False)
    if a is None or b is None:
        return False
    pa = {m: c for m, c in a[0].items() if c}
    pb = {m: c for m, c in b[0].items() if c}
    if not pa or not pb:
        return False
    if max(sum(k for _, k in m) for m in pa) != max(sum(k for _, k in m) for m in pb):
        return False
    if pa.keys() != pb.keys():
        return True
    ratios = {Fraction(pa[m]) / Fraction(pb[m]) for m in pa}
    return len(ratios) > 1


def _identity(ctx: EdgeContext, r: Rel, vs: frozenset[str], read: Callable[[], dict[str, object]]) -> Obligation | None:
    asserted_by = _identity_meant(ctx, r, vs)
    if ctx.restates is not None and asserted_by != "stated" and not has_calculus(r):
        # the problem's equation with one side rewritten is that equation, to solve: what holds for all
        # values is only the equality of the side's two forms (none, when the rewriting is no such shape)
        rewritten = _one_side_rewritten((ctx.restates,), r)
        if rewritten is not None:
            return IdentityObligation(**read(), claim=rewritten, asserted_identity=True, asserted_by="rewriting")
        if not asserted_by:
            return None
        # "Expanding the square, (x + 3)^2 = x^2 + 9" after "(x + 3)^2 = x^2 + 15": the new side is no form of
        # the side it replaced, and the text says it rewrites the side it kept: the relation's own identity
    if not asserted_by and (not variables(r.lhs) or not variables(r.rhs)) and _linear_equation(r):
        return None  # "2x + 3 = 11" restated: an equation with a solution, never an identity to check
    return IdentityObligation(**read(), claim=r, asserted_identity=bool(asserted_by), asserted_by=asserted_by)


_REWRITE_CUE = re.compile(r"(?i)\b(expand\w*|multiply\w* out|foil\w*|distribut\w*|factor(?:s|ed|ing|i[sz]\w*)?|"
                          r"simplif\w*|rewrit\w*|collect\w*|combin\w* like terms)\b")
_SOLVE_CUE = re.compile(r"(?i)\b(solv\w*|find\w*|roots?|zeros?|unknowns?|equations?|holds? when|satisf\w*|both sides)\b")
_CHECK_CUE = re.compile(r"(?i)\b(check\w*|verif\w*)\b")
_VERIFIES = re.compile(r"(?i)\b(?:verif(?:y|ies|ying)|check(?:s|ing)?|confirm(?:s|ing)?)\s{1,3}that\b[^.;]{0,120}?\bsatisf(?:y|ies)\b")
"""The sentence verifies that a function or expression satisfies an equation ("we verify that P(x) = ... satisfies
the original equation:"): what it then writes computes each side, rewriting one expression in its letters, so
a product set equal to its expansion, or a chain of rewritings, claims an identity. "Check which x satisfy"
asks for values: it solves."""
_RELATION_REWRITTEN = re.compile(
    r"(?i)\b(?:this|it|which|that|equations?|conditions?|relations?|inequalit(?:y|ies)|system)\s{1,3}"
    r"(?:(?:can|may|could|will)\s{1,3}(?:also\s{1,3})?be\s{1,3}|is\s{1,3}|we\s{1,3}(?:can\s{1,3})?)?rewrit\w*"
    r"|\brewrit\w*\s{1,3}(?:this|it|that|the\s{1,3}(?:given\s{1,3})?(?:equations?|conditions?|relations?|inequalit(?:y|ies)|system))\b"
    r"(?!\s{1,3}expression)")
"""What the sentence rewrites is the relation before it ("This can be rewritten as", "rewrite the equation
as"): when it writes a single relation, an equation restated, both of its sides changed at will, not one
expression rewritten."""


def _sentence_after(ctx: EdgeContext) -> str:
    after = ctx.around[1]
    return after[: min((i for i in (after.find(". "), after.find("\n"), after.find(";")) if i >= 0), default=len(after))]


def _solved_next(after: str, vs: frozenset[str]) -> bool:
    """The text goes on to solve the equation: a solving word, or a value for one of its letters."""
    if _SOLVE_CUE.search(after):
        return True
    return any(v in after and compiled(rf"(?<![A-Za-z\\]){re.escape(v)}\s{{0,2}}=\s{{0,2}}[-−]?\s{{0,2}}\d").search(after)
               for v in vs)


def _identity_meant(ctx: EdgeContext, r: Rel, vs: frozenset[str]) -> str:
    """The step claims ``r`` for all values of its letters: the text says so ("for all x", "identically"),
    the display rewrites one expression, or the step rewrites (expanding, simplifying, factoring) one
    expression in the same letters as the other side, or sets a product or power equal to its
    expansion (``(x+3)^2 = x^2 + 6x + 9``). An equation the text goes on to solve is not one. A chain in one set of
    letters alone does not say so: its links may use relations the problem gave.

    The answer names the reason (``IdentityObligation.asserted_by``), "" when no identity is meant."""
    f = ctx.formula
    assert f is not None
    sentence, after = f.opening if f.aligned is not None else f.lead_sentence, _sentence_after(ctx)
    if _quantified_over(sentence, vs) or _quantified_over(after, vs):
        return "stated"
    if ctx.rewrites:
        return "display"
    same = bool(variables(r.lhs)) and variables(r.lhs) == variables(r.rhs)
    if not same or isinstance(r.lhs, Var) or isinstance(r.rhs, Var):
        return ""  # "simplifies to a = 1/(1 - 1/(1 - a))": a letter set equal to an expression in it is an equation
    if r.op != "=":
        return ""
    if ctx.asked_rewrite and not _SOLVE_CUE.search(sentence):
        return "rewriting"  # "Expand (x - y)^2.": a side is the expression asked for, the other its new form
    if _VERIFIES.search((f.opening if f.aligned is not None else f.sentence_before)[-300:]) and (
            _rewrite_shape(r) or _rewriting_chain(f, vs)):
        return "rewriting"  # "we verify that P(x) = 8/9 (x^2 - 1) satisfies the equation: (x - 1)P(x + 1) = ... = ..."
    if _SOLVE_CUE.search(sentence) or _solved_next(after, vs):
        return ""  # (the cheap tests of shape first: most relations fail them)
    if _RELATION_REWRITTEN.search(sentence) and len((f.aligned or f.chain).exprs) < 3:
        return ""  # (a chain of three members or more rewrites one expression: "rewrite this as a = b = c")
    if _REWRITE_CUE.search(sentence) and (_rewrite_shape(r) or _expanding_chain(f, vs) or _rewriting_chain(f, vs)):
        return "rewriting"
    if _rewriting_chain(f, vs) and _collects_like_terms(r):
        return "rewriting"  # "-(6 + 2r + 3r + 6r) = -(15r + 6)" in a chain that rewrites one expression
    if _FOR_ALL_NUMBERS.search(sentence[:400]) and (_rewrite_shape(r) or _expanding_chain(f, vs)):
        return "stated"  # "for all real numbers, (x - y)^2 = ...": every letter quantified, a rewriting shape
    return ""  # a chain alone is not enough: "(I − P)^2 = I − 2P + P^2 = I − P" uses P^2 = P, told in the problem


def _expanding_chain(f: Formula, vs: frozenset[str]) -> bool:
    """A chain in one set of letters that starts from a product or power of sums: each link expands it."""
    exprs = (f.aligned or f.chain).exprs
    return len(exprs) >= 3 and _product_form(exprs[0]) and all(variables(e) == vs for e in exprs)


def _rewriting_chain(f: Formula, vs: frozenset[str]) -> bool:
    """After a rewriting word ("combining like terms", "simplifying"), a chain of equalities with three
    members or more, each in the same letters: each member rewrites the first expression. An equation the
    step simplifies changes both of its sides, so it is written as two members per line, not as one chain.
    The rows of an aligned chain (``a &= b \\\\ &= c``) are members of one chain."""
    whole = f.aligned or f.chain
    return len(whole.exprs) >= 3 and all(op == "=" for op in whole.rels) and all(variables(e) == vs for e in whole.exprs)


_MAX_TERMS = 24


def _terms(e: Expr, out: list[Expr]) -> bool:
    """The additive terms of ``e`` as written, signs dropped, into ``out`` (False past ``_MAX_TERMS``)."""
    if isinstance(e, BinOp) and e.op in "+-":
        return _terms(e.left, out) and _terms(e.right, out)
    if isinstance(e, Neg):
        return _terms(e.operand, out)
    out.append(e)
    return len(out) <= _MAX_TERMS


def _monomials(terms: list[Expr]) -> list[tuple[object, ...]] | None:
    """The one monomial each term is (None when a term expands to no single monomial: a sum, a product of
    sums, a quotient by a letter)."""
    out: list[tuple[object, ...]] = []
    for t in terms:
        p = expand(t)
        mons = [m for m, c in p.items() if c] if p is not None else []
        if len(mons) != 1:
            return None
        out.append(tuple(mons[0]))
    return out


def _collects_like_terms(r: Rel) -> bool:
    """The link combines like terms (``6 + 2r + 3r + 6r = 15r + 6``): its left side, as written, has two
    terms or more in one monomial with a letter, and its right side writes each monomial of the collected
    left side once, and no other. An equation put together from a word problem
    (``3x + 2x + 1 = 4x + 7``) has the shape too; only a chain that rewrites one expression says so."""
    left: list[Expr] = []
    right: list[Expr] = []
    if not (_terms(r.lhs, left) and _terms(r.rhs, right)) or len(left) <= len(right):
        return False
    lm, rm = _monomials(left), _monomials(right)
    if lm is None or rm is None or len(set(rm)) != len(rm):
        return False
    if not any(m and lm.count(m) > 1 for m in lm):
        return False
    collected = expand(r.lhs)
    return collected is not None and {tuple(m) for m, c in collected.items() if c} == set(rm)


def _rewrite_shape(r: Rel) -> bool:
    """What expanding, factoring or simplifying relates: a product or power of sums and a sum
    (``(x+3)^2 = x^2 + 6x + 9``, ``x^2 - 9 = (x-3)(x+3)``), or a quotient with a sum in it and another
    form (``(x^2 - 9)/(x - 3) = x + 3``). ``2/(3k^2) = k`` or ``x^2 + 2 = x^2 + 4x + 4`` are equations
    the step simplified, not rewritings of one expression."""
    if _expansion_shape(r):
        return True
    for a in (r.lhs, r.rhs):
        if isinstance(a, BinOp) and a.op == "/" and any(isinstance(x, BinOp) and x.op in "+-" for x in (a.left, a.right)):
            return True
    return False


rewrite_shape = _rewrite_shape
"""The shape of what expanding, factoring or simplifying relates (``_rewrite_shape``), for the modules
that read other rewriting claims."""


_CONNECTIVE = frozenset(["and", "or", "so", "as", "is", "are", "was", "were", "then", "thus", "hence", "which", "that", "since", "because", "we", "it", "this", "the", "by", "in", "of", "to", "for", "from", "so", "at", "if", "when", "while", "but", "therefore", "gives", "yields", "means", "leaves", "left", "remains", "remaining"])
_UNIT_AFTER = re.compile(r"\s{0,3}(?:\$\s{0,3})?(?:\\(?:text|mathrm|textrm|mbox)\s{0,2}\{\s{0,3})?([A-Za-z]{2,})")
_MONEY_BEFORE = re.compile(r"(?:\\\$|€|£|¥)\s{0,2}$")


def counts_items(around: tuple[str, str]) -> bool:
    """The result of a word problem's computation names what it counts or pays (``= 14 boxes``,
    ``= 13 \\text{ buses}``, ``\\$ 3.13``): only then may a value be written rounded to whole items or
    cents. A bare ``1/4 + 1/2 = 1`` claims an equality whatever the problem is about."""
    before, after = around
    m = _UNIT_AFTER.match(after)
    if m is not None and m.group(1).lower() not in _CONNECTIVE:
        return True
    return bool(_MONEY_BEFORE.search(before))


def _rounded_in(r: Rel, rounded: frozenset[str]) -> tuple[str, ...]:
    """The literals of ``r`` (as written) that are among ``rounded``, sorted. With nothing rounded
    the answer is empty whatever the literals are, so the claim is not walked."""
    if not rounded:
        return ()
    return tuple(sorted({n.text for n in literals(r.lhs) + literals(r.rhs)} & rounded))


_SUBST_CUE = re.compile(r"(?i)\b(substitut\w*|plug\w*|using|putting|replac\w*|evaluat\w*|check\w*|verif\w*)\b")


def _substitution_meant(ctx: EdgeContext, r: Rel, step: int) -> bool:
    """A relation over quantities with known values is a *use* of those values (not a new
    equation in unknowns) in a word problem, after an explicit cue ("substituting"), or when
    the chain shows the substituted numbers (``3x + 1 = 3·5 + 1``)."""
    f = ctx.formula
    assert f is not None
    if solved_again(ctx.around[1], _rel_vars(r), ctx.env):
        return False  # "3x = 9 gives x = 3" while x held 4: the letter is reused, the relation is a new equation
    if ctx.word_problem or _SUBST_CUE.search(f.lead[-160:]):
        return True
    closed = r.rhs if not variables(r.rhs) else (r.lhs if not variables(r.lhs) else None)
    # the substituted numbers are shown, and the values were established in this very step
    same_step = all(ctx.env_steps.get(v, 0) >= step for v in _rel_vars(r))
    return closed is not None and not isinstance(closed, Num) and len(f.chain.exprs) >= 3 and same_step


_FOR_ALL = re.compile(r"(?i)\b(?:for all|for every|for any)\b(?:\s{1,3}(?:real|integers?|values?|numbers?|of|complex|positive|"
                      r"non-?negative)\b){0,3}\s{0,3}(?:\$|\\\()?\s{0,3}([a-zA-Z])(?![A-Za-z(])")
_FOR_ALL_NUMBERS = re.compile(r"(?i)\b(?:for all|for every|for any)\s{1,3}(?:(?:real|complex|positive|non-?negative)\s{1,3})?"
                              r"(?:numbers?|integers?|reals|values)\s{0,3}[,:]")
"""A quantifier over a number domain that names no letter: it binds every letter of the claim."""
_IDENTITY_WORD = re.compile(r"(?i)\bidentically\b|\b(?:is|as|an|this|the\s{1,3}(?:usual|standard|familiar|well-known|algebraic))\s{1,3}identity\b(?!\s{0,3}(?:matrix|map|element|function|"
                            r"permutation|transformation|operator))")


def _quantified_over(sentence: str, vs: frozenset[str]) -> bool:
    """"for all x" says an identity in x is meant: only when x, the letter right after the
    quantifier, is one of the claim's variables ("must hold for all values of x, so 4 - 6c = 0" is
    an equation in c; "for each pair (a, b)" lists objects, not values); "identically" or "is an
    identity" says so outright (not "the identity matrix")."""
    if _IDENTITY_WORD.search(sentence[:400]):
        return True
    for m in _FOR_ALL.finditer(sentence[:400]):
        if _IN_STRUCTURE.match(sentence, m.end(), m.end() + 40):
            continue  # "for all x in G": elements of a group or another structure, not numbers
        # "for all a, c": every letter of the claim must be quantified; a letter left out is an
        # unknown to be found ("A/(x-3) + B/(x-5) = ... for all x" determines A and B)
        listed, pos = {m.group(1)}, m.end()
        while (more := _LISTED.match(sentence, pos, pos + 20)) is not None:
            listed.add(more.group(1))
            pos = more.end()
        if vs <= listed:
            return True
    return False


_IN_STRUCTURE = re.compile(r"[\s$\\)a-zA-Z,]{0,12}?(?:\bin\b|∈|\\in\b)\s{1,3}(?:\$|\\\()?\s{0,3}"
                           r"(?!\\mathbb|ℝ|ℤ|ℕ|ℚ|ℂ|[RZNQC]\b|the real|the integer|real|integer)")
_LISTED = re.compile(r"\s{0,3}(?:\$|\\\))?\s{0,3}(?:,|\band\b)\s{0,3}(?:\$|\\\()?\s{0,3}([a-zA-Z])(?![A-Za-z(])")


def _product_form(e: Expr) -> bool:
    """A power or product of sums: what expanding acts on."""
    if isinstance(e, Pow):
        return isinstance(e.base, BinOp) and e.base.op in "+-"
    if isinstance(e, BinOp) and e.op == "*":
        return any(isinstance(x, BinOp) and x.op in "+-" or _product_form(x) for x in (e.left, e.right))
    return False


def _expansion_shape(r: Rel) -> bool:
    """``(x+3)^2 = x^2 + 9``: one side a product form, the other a sum over the same unknowns."""
    for a, b in ((r.lhs, r.rhs), (r.rhs, r.lhs)):
        if _product_form(a) and isinstance(b, BinOp) and b.op in "+-" and variables(a) == variables(b):
            return True
    return False


def _bare(e: Expr) -> bool:
    """A number as written, nothing computed (``5``, ``-3``)."""
    return isinstance(e, Num) or isinstance(e, Neg) and isinstance(e.operand, Num)


def _defines_var(r: Rel) -> bool:
    """``s = 1/2 - c``: a name for an expression, not an equation to derive from."""
    return r.op == "=" and (isinstance(r.lhs, Var) or isinstance(r.rhs, Var))


def _solution(ctx: EdgeContext, read: Callable[[], dict[str, object]], approx: bool) -> Obligation | None:
    """The solution obligation of a definition; ``read()`` gives the common fields with the readings."""
    r = ctx.rel
    assert r is not None and ctx.definition_of is not None
    if not ctx.premises:
        return None
    var = ctx.definition_of
    value_expr = r.rhs if isinstance(r.lhs, Var) else r.lhs
    try:
        value = evaluate(value_expr)
    except FaithSieveError:
        return None
    prem = ctx.premises[0]
    if _rel_vars(prem) != {var} or prem.op != "=" or _identity_premise(prem):
        return None  # "x = 5" after "x^2 - 7x + 10 = (x - 2)(x - 5)": an identity has no solutions to claim
    values: dict[str, Fraction] = {var: value}
    lit = value_expr.operand if isinstance(value_expr, Neg) else value_expr
    decimals = lit.decimals if isinstance(lit, Num) else 0
    listed = ctx.roots_listed if not approx and r.op == "=" and decimals == 0 else 0
    constraints = tuple(p for p in ctx.premises[1:] if p.op in ("<", ">", "<=", ">=", "!=") and _rel_vars(p) == {var})
    return SolutionObligation(**read(), equations=(prem,), values=values, approx=approx or r.op == "~" or decimals > 0,
                              decimals=decimals, listed=listed, constraints=constraints,
                              sole=not ctx.parallel and r.op == "=" and not listed and not _more_values(ctx.around[1], var))


def _more_values(after: str, var: str) -> bool:
    """Another value of ``var`` follows in the same clause ("x = 10 and x = -3", "x = 0, \\pm 4"): the value
    is one of a list, not the letter's sole value."""
    clause = re.split(r"(?<!\d)\.(?!\d)|;", after, maxsplit=1)[0]
    return re.search(rf"(?<![A-Za-z\\]){re.escape(var)}\s*=|\\pm|±|\\mp|∓", clause) is not None


def _linear_equation(r: Rel) -> bool:
    """``r`` expands to a polynomial of degree one: some value satisfies it, so as an equation in its
    unknowns it can never be refuted, and it is no identity."""
    diff = poly_difference(r.lhs, r.rhs, DEFAULT_LIMITS, quotients=False)
    if diff is None:
        return False
    degrees = [sum(k for _, k in mono) for mono, c in diff[0].items() if c]
    return bool(degrees) and max(degrees) == 1


def _identity_premise(r: Rel) -> bool:
    """``r`` holds for every value of its letters (its sides expand to the same polynomial)."""
    diff = poly_difference(r.lhs, r.rhs, DEFAULT_LIMITS, quotients=False)
    return diff is not None and not any(diff[0].values())


def _coverage(cov: CaseSplit, base: dict[str, object]) -> Obligation:
    return CoverageObligation(
        **base,
        variable=cov.variable,
        cases=tuple(h.strip()[:120] for h in cov.headers),
        conditions=tuple(r for rels in cov.relations for r in rels),
        case_sizes=tuple(len(rels) for rels in cov.relations),
        parity=cov.residues,
        domain="integer" if cov.integer else "real",
        domain_constraints=cov.constraints,
        domain_stated=cov.domain_stated,
    )
