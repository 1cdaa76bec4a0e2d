"""Rule-based decomposition of proof steps into EdgeUnits of a proof-state tree.

Each step's formulas are read with ``faithsieve.mathtext``. Every link of an
equation chain, every derived relation, every definition, case and conclusion
becomes one EdgeUnit. States accumulate what the proof has established: values
of quantities (``x = 5``), relations, rounded literals. Case splits branch:
each case is a child of the state where the split happened and starts from that
state's facts. No checking happens here; ``EdgeContext`` carries what the
obligation extractor needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING

from faithsieve.errors import FaithSieveError
from faithsieve.lazy import lazy_module
from faithsieve.mathtext.ast import Chain, Expr, Num, Var, leftmost_operand, render, variables
from faithsieve.mathtext.evaluate import evaluate
from faithsieve.mathtext.extract import Formula, extract_formulas
from faithsieve.models import Proof
from faithsieve.obligations.models import Rel
from faithsieve.statetree.continuation import constrains, continues, rewrite_claim
from faithsieve.statetree.rebinding import reused_letter
from faithsieve.statetree.retraction import retracted
from faithsieve.statetree.models import CaseSplit, EdgeContext, EdgeUnit, ProofState, StateTree, TransitionType

if TYPE_CHECKING:
    import networkx as nx
else:
    nx = lazy_module("networkx", globals(), "nx")  # imported when the first tree is built

# Quantifiers are bounded ({0,8}) so that long runs of spaces cannot make matching quadratic.
_CASE_HEAD = re.compile(r"(?im)(?:^|\.\s)[ \t*#_>-]{0,8}(?:sub)?case[ \t]{0,4}(\d{1,2}|[ivx]{1,4}|[a-d])\b[ \t*]{0,4}[:.)\-–]?")
_IF_PARITY = re.compile(r"(?i)\bif[ \t]{1,4}(?:\$|\\\()?[ \t]{0,4}([a-z])[ \t]{0,4}(?:\$|\\\))?[ \t]{1,4}is[ \t]{1,4}(even|odd)\b")
_PARITY = re.compile(r"(?i)\b([a-z])[ \t]{0,4}(?:\$|\\\))?[ \t]{0,4}(?:is[ \t]{1,4})?(?:an?[ \t]{1,4})?(even|odd)\b")
_NEGATION = re.compile(
    r"(?i)\b(not|isn't|aren't|doesn't|don't|cannot|can't|false|incorrect\w*|wrong|mistake\w*|contradict\w*|"
    r"impossible|absurd|invalid|fails?|instead|would|should be|error|whether|no\s+solution)\b|\\neq|≠|\?"
)
_HYPOTHETICAL = re.compile(r"(?i)\b(check(?:ing)?|verify\w*|verif\w+|suppose|assum\w+|test(?:ing)?|try|trying|plug\w*|if)\b")
# the supposition verb governs the formula: nothing between them closes the clause (a comma, "then")
_SUPPOSE = re.compile(r"(?i)\b(suppose[sd]?|supposing|assume[sd]?|assuming|try|trying|if|presume|presuming|"
                      r"let'?s say|say)\b(?:(?!\bthen\b)[^,.;:!?\n]){0,80}$")
_REDUCTIO_CUE = re.compile(r"(?i)\b(for (?:the sake of )?(?:a )?contradiction|on the contrary|to the contrary|otherwise|"
                           r"towards? a contradiction)\b")
_REDUCTIO_OPEN = re.compile(r"(?i)\b(suppose[sd]?|supposing|assume[sd]?|assuming)\b")
_REDUCTIO_CLOSE = re.compile(r"(?i)\b(contradict\w*|absurd\w*|impossible)\b|⊥|\\bot\b|\\Rightarrow\\!\\Leftarrow")
# "(b)", "Part 2", "**Problem (ii)**" at the start of a step or line: a new sub-problem
_SUBPROBLEM = re.compile(r"(?im)^[ \t*#_>-]{0,8}(?:(?:part|question|sub-?problem|problem)[ \t]{0,4}\(?(?:[a-d]|[ivx]{1,4}|\d{1,2})\b\)?"
                         r"|\((?:[a-d]|i{1,3}|iv|v)\)[ \t])")
# "let x be", "let $n$ denote", "where x is", "define x as": a letter receives its meaning here
_RENAMING = re.compile(r"(?i)\b(?:let|define|denote|call|where|now)[ \t]{1,4}(?:\$|\\\()?[ \t]{0,4}([a-zA-Z])(?![A-Za-z(])[ \t]{0,4}"
                       r"(?:\$|\\\))?[ \t]{0,4}(?:be|denote|denotes|represent|represents|is|as|stand|now)\b")
# the sentence states its relations under a condition ("if x < 0, then ... so x <= -2")
_CONDITION_CUE = re.compile(r"(?i)\b(if|suppose|supposing|assume|assuming|when|whenever|in case|try|test|check)\b")
_FOR_VALUE = re.compile(r"(?i)\b(for|with|at|when|taking|using)[ \t\n]{0,4}(\\\(|\$|\\\[)?[ \t\n]{0,4}$")
_VERBAL_DEF = re.compile(r"(?i)\blet[ \t]{1,4}(?:\$|\\\()?[ \t]{0,4}[a-zA-Z](?:_\w{1,8})?[ \t]{0,4}(?:\$|\\\))?[ \t]{1,4}(?:be|denote|represent)\b")
_VERBAL_CONCLUSION = re.compile(r"(?i)\b(?:the (?:final )?answer is|therefore,? the answer|we conclude|this proves|which proves|"
                                r"\\boxed\{|q\.?e\.?d)")
_CUSTOM_OP = re.compile(r"(?i)\boperations?\b|\bdefined? (?:by|as)\b|\\(?:star|diamond|oplus|otimes|odot|circ|"
                        r"bigstar|clubsuit|spadesuit|heartsuit|triangle|nabla|dagger|boxplus)\b")
_IMAGINARY = re.compile(r"(?i)\bcomplex\b|\bimaginary\b|(?<![A-Za-z\\])i ?\^ ?\{? ?2|\\mathrm\{i\}|\bi ?= ?\\sqrt\{-1\}")
# naming or substituting an input value, not solving for it ("substitute f = 10 cm into the formula")
_NAMING = re.compile(r"(?i)\b(where|let|with|denote|call|coefficients?|given|substitut\w*|plug\w*|putting|inserting|setting)\b")
_ALTERNATIVE = re.compile(r"(?i)\bor\b|\\lor|\\vee")
_PARALLEL = re.compile(r"(?i)\bor\b|\band\b|,|;|\\quad|\\lor|\\vee|\\text\{ {0,3}(or|and) {0,3}\}")
# nothing but display delimiters between two formulas: "\\[ 3x - 4 = 11 \\] \\[ 3x = 15 \\]" is a chain of
# transformations, each line rewriting the one above (as after "so"); a comma or full stop may end the upper line
_STACKED = re.compile(r"[\s,.;]{0,6}(?:\\\]|\$\$)\s{0,6}(?:\\\[|\$\$)\s{0,6}")
_CONCLUDE = re.compile(r"(?i)\b(answer|therefore|thus|hence|finally|in total|altogether)\b|\\boxed")
_INTEGER_WORDS = re.compile(r"(?i)\b(integers?|whole numbers?|natural numbers?|digits?)\b")


@dataclass
class _Scope:
    node: str
    env: dict[str, Fraction]
    origin: dict[str, str]
    facts: list[str]
    branch: str = ""
    origin_step: dict[str, int] = field(default_factory=dict)


def _closed_value(e: Expr) -> Fraction | None:
    if variables(e):
        return None
    try:
        return evaluate(e)
    except FaithSieveError:
        return None


def _is_assignment(r: Rel) -> bool:
    return r.op == "=" and (
        (isinstance(r.lhs, Var) and not variables(r.rhs)) or (isinstance(r.rhs, Var) and not variables(r.lhs))
    )


class _Builder:
    def __init__(self, proof: Proof) -> None:
        self.proof = proof
        self.g = nx.DiGraph()
        self.edges: list[EdgeUnit] = []
        self.ctx: dict[str, EdgeContext] = {}
        self.n_states = 0
        self.rounded: set[str] = set()
        self.integer_vars: set[str] = set()
        self.problem_constraints: list[Rel] = []
        self.stated_eqs: list[Rel] = []  # relations in unknowns stated so far (problem and steps)
        self.case_records: list[tuple[int, tuple[int, int], str, str]] = []  # step, span, header text, edge id
        self.split_scope: _Scope | None = None
        self.splits_mixed = False
        self.word_problem = True
        # "i" is the imaginary unit when the problem or proof works with complex numbers
        # the problem defines its own operation ("a * b = a^2 + b"): '*' in the proof may be it
        self.custom_ops = bool(_CUSTOM_OP.search(proof.problem))
        self.imaginary = any(_IMAGINARY.search(t) for t in [proof.problem, *(st.text for st in proof.steps)])

    # -- states ----------------------------------------------------------
    def new_state(self, scope: _Scope, goal: str = "") -> str:
        sid = f"s{self.n_states}"
        self.n_states += 1
        hyps = tuple(scope.facts[-12:]) + tuple(f"{k} = {v}" for k, v in list(scope.env.items())[-12:])
        self.g.add_node(sid, state=ProofState(id=sid, hypotheses=hyps, goal=goal, branch=scope.branch).model_dump())
        return sid

    def add_edge(self, scope: _Scope, ttype: TransitionType, step: int, span: tuple[int, int], text: str,
                 ctx: EdgeContext) -> EdgeUnit:
        child = self.new_state(scope)
        eid = f"e{len(self.edges)}"
        edge = EdgeUnit(id=eid, type=ttype, parent=scope.node, child=child, step=step, span=span, text=text)
        self.g.add_edge(scope.node, child, edge=edge.model_dump())
        self.edges.append(edge)
        self.ctx[eid] = ctx
        scope.node = child
        return edge

    # -- problem ---------------------------------------------------------
    def read_problem(self, scope: _Scope) -> None:
        text = self.proof.problem
        problem_formulas = extract_formulas(text, self.imaginary)
        self.word_problem = not any(variables(e) for f in problem_formulas for e in f.chain.exprs) and not re.search(
            r"\$[^$]*[a-zA-Z][^$]*\$|\\\(", text)
        for f in problem_formulas:
            for i, (lhs, op, rhs) in enumerate(f.chain.links()):
                r = Rel(lhs, op, rhs)
                if i == 0 and _is_assignment(r) and op == "=":
                    var, val_expr = (lhs, rhs) if isinstance(lhs, Var) else (rhs, lhs)
                    v = _closed_value(val_expr)
                    if v is not None and not f.conditional and isinstance(var, Var):
                        scope.env[var.name] = v
                        scope.origin[var.name] = f"problem: {f.text}"
                        scope.origin_step[var.name] = 10**9  # problem values never expire
                elif variables(lhs) | variables(rhs):
                    scope.facts.append(str(r))
                    self.stated_eqs.append(r)
                    if op in ("<", ">", "<=", ">=") and len(variables(lhs) | variables(rhs)) == 1:
                        self.problem_constraints.append(r)
        if _INTEGER_WORDS.search(text):
            for m in re.finditer(r"(?<![A-Za-z\\])([a-z])(?![A-Za-z])", text):
                self.integer_vars.add(m.group(1))

    # -- steps -----------------------------------------------------------
    def build(self) -> StateTree:
        root_scope = _Scope(node="", env={}, origin={}, facts=[])
        self.read_problem(root_scope)
        root_scope.node = self.new_state(root_scope, goal=self.proof.problem[:200])
        scope = root_scope
        last_rel: Rel | None = None  # the most recent asserted relation with variables
        rel_before: Rel | None = None  # the one asserted before it
        prev_tail: tuple[int, Expr] | None = None  # the step and last expression of the latest formula
        last_rel_step, last_rel_hyp, last_rel_sent = 0, False, (0, 0)
        recent_eqs: list[tuple[int, Rel]] = []  # asserted equations in unknowns, for systems
        group: list[tuple[str, str, Fraction]] = []  # a run of parallel assignments: (edge, var, value)
        group_derived = False
        group_premise: Rel | None = None
        reductio = False  # inside a supposition the argument means to refute
        case_from: int | None = None  # the step where the latest case began
        for step in self.proof.steps:
            text = step.text
            reductio = reductio or any(_REDUCTIO_OPEN.search(sn) and _REDUCTIO_CUE.search(sn) for sn in _sentences(text))
            heads = list(_CASE_HEAD.finditer(text))
            if_par = list(_IF_PARITY.finditer(text))
            formulas = extract_formulas(text, self.imaginary)
            if heads or len(if_par) >= 2:
                if case_from is not None:
                    # a new case: the equations stated in the previous case are not premises here
                    recent_eqs[:] = [(st, r) for st, r in recent_eqs if st < case_from]
                case_from = step.index
                scope, last_rel = self.enter_cases(scope, step.index, text, heads, if_par)
            if last_rel is not None and step.index - last_rel_step > 1:
                last_rel = None
            if _SUBPROBLEM.search(text[:400]):
                # a new sub-problem: the facts of the previous one are not premises here
                scope, last_rel = self.fresh_context(scope, step.index), None
                recent_eqs.clear()
                case_from = None
                reductio = False
            renamed = {m.group(1) for m in _RENAMING.finditer(text[:5000])}
            if renamed:
                # a letter given a (new) meaning: its old value and the relations about it no longer apply
                for v in renamed:
                    scope.env.pop(v, None)
                if last_rel is not None and renamed & (variables(last_rel.lhs) | variables(last_rel.rhs)):
                    last_rel = None
            step_edges = 0
            named: dict[str, Formula] = {}
            supposed_prev = False
            for fi, f in enumerate(formulas):
                sentence = _sentence(f.lead)
                negated = (bool(_NEGATION.search(sentence)) or _trailing_negation(text, f.end) or retracted(text, f.end)
                           or (self.custom_ops and any(c in f.text for c in "*#@&")))
                hypothetical = f.conditional or bool(_HYPOTHETICAL.search(sentence)) or (
                    bool(f.chain.rels) and _is_assignment(Rel(*f.chain.links()[0])) and bool(_FOR_VALUE.search(f.lead)))
                # "x = 2, y = 3" lists alternatives or parallel facts; ", so" / ", then" derives
                stacked = fi > 0 and _STACKED.fullmatch(f.lead) is not None
                derived = f.derived or stacked
                parallel = fi > 0 and len(f.lead.strip()) < 40 and bool(_PARALLEL.search(f.lead)) and not derived
                supposed = bool(_SUPPOSE.search(sentence)) or (
                    parallel and fi > 0 and supposed_prev and not re.search(r"(?i)\bthen\b|[,;:]", f.lead))
                supposed_prev = supposed
                if supposed and _REDUCTIO_OPEN.search(sentence) and (
                        _REDUCTIO_CUE.search(sentence) or not any(variables(e) for e in f.chain.exprs)):
                    reductio = True
                hypothetical = hypothetical or supposed
                if not parallel:
                    self.close_group(group, group_derived, recent_eqs, step.index)
                    group, group_derived, group_premise = [], derived and not hypothetical, last_rel
                sent_start = max(text.rfind(". ", 0, f.start), text.rfind("\n", 0, f.start)) + 1
                if last_rel is not None and last_rel_hyp and last_rel_sent != (step.index, sent_start):
                    last_rel = None  # a conditional relation is a premise only inside its own sentence
                conditional_sentence = bool(_CONDITION_CUE.search(text[sent_start : f.start]))
                alternative = _first_alternative(f, text)
                prev_for_derivation = None if parallel or alternative else last_rel
                if f.name is not None:
                    step_edges += self.link_named(scope, step.index, text, named.get(f.name), f, negated)
                    named[f.name] = f
                # values in scope: from the problem, this step or the previous one
                env = {k: v for k, v in scope.env.items() if scope.origin_step.get(k, 0) >= step.index - 1}
                if prev_tail is not None and prev_tail[0] == step.index - (fi == 0) and continues(f, fi == 0, text[: f.start]):
                    step_edges += self.continuation_edge(scope, step.index, text, f, prev_tail[1], env)
                for li, (lhs, op, rhs) in enumerate(f.chain.links()):
                    r = Rel(lhs, op, rhs)
                    span = f.member_spans[li][0], f.member_spans[li + 1][1]
                    src = text[span[0] : span[1]]
                    vars_ = variables(lhs) | variables(rhs)
                    ctx_common = dict(
                        formula=f, link=li, rel=r, env=env, env_origin=dict(scope.origin),
                        negated=negated, hypothetical=hypothetical, parallel=parallel, word_problem=self.word_problem,
                        supposed=supposed, reductio=reductio, around=(text[max(0, f.start - 12) : f.start], text[f.end : f.end + 60]),
                        rounded=frozenset(self.rounded),
                        env_steps={k: scope.origin_step.get(k, 0) for k in env},
                        integer_vars=frozenset(self.integer_vars),
                    )
                    if not vars_:
                        self.note_rounding(lhs, rhs, op)
                        ttype = TransitionType.CONCLUSION if _CONCLUDE.search(f.lead[-80:]) else TransitionType.COMPUTATION
                        self.add_edge(scope, ttype, step.index, span, src, EdgeContext(**ctx_common))
                    elif li == 0 and _is_assignment(r) and op in ("=", "~"):
                        var = lhs if isinstance(lhs, Var) else rhs
                        assert isinstance(var, Var)
                        premises: tuple[Rel, ...] = ()
                        # alternatives "x = 2 or x = 4" share the premise of the first one
                        source_rel = group_premise if parallel else prev_for_derivation
                        if _NAMING.search(_sentence(text[max(0, f.start - 400) : f.start])):
                            source_rel = None  # "where a = 1, b = -1, c = -2": naming, not solving
                        if (source_rel is not None and not hypothetical and not negated
                                and var.name in variables(source_rel.lhs) | variables(source_rel.rhs)):
                            premises = (source_rel,)
                        if premises and reused_letter(var.name, f.chain.exprs[1], self.chain_value(f.chain), premises[0], scope.env):
                            premises = ()  # the letter takes a new value in place; the premise was about the old one
                        edge = self.add_edge(scope, TransitionType.DEFINITION, step.index, span, src,
                                             EdgeContext(**ctx_common, premises=premises, definition_of=var.name))
                        value = self.chain_value(f.chain)
                        if value is not None and not hypothetical and not negated:
                            group.append((edge.id, var.name, value))
                            scope.env[var.name] = value
                            scope.origin[var.name] = f"step {step.index}: {f.text[:80]}"
                            scope.origin_step[var.name] = step.index
                    else:
                        premises = ()
                        if prev_for_derivation is not None and derived and li == 0:
                            premises = (prev_for_derivation,)
                        ttype = TransitionType.DERIVATION if premises else TransitionType.CLAIM
                        if li > 0 and not premises:
                            ttype = TransitionType.COMPUTATION
                        # a stacked line may restate one of two alternatives above it ("\\[ x - 2 = 0 \\] \\[ x + 3 = 0 \\]"):
                        # the line before the premise is a candidate premise too
                        others = (rel_before,) if premises and stacked and rel_before is not None else ()
                        self.add_edge(scope, ttype, step.index, span, src,
                                      EdgeContext(**ctx_common, premises=premises, other_premises=others))
                        if not hypothetical and not negated and op in ("=", "<", ">", "<=", ">="):
                            scope.facts.append(str(r))
                            self.stated_eqs.append(r)
                            if op == "=" and not (parallel and _ALTERNATIVE.search(f.lead)):
                                recent_eqs.append((step.index, r))
                    step_edges += 1
                # the next formula may derive from this one's last relation with variables
                asserted = [Rel(a, o, b) for a, o, b in f.chain.links()]
                with_vars = [r for r in asserted if (variables(r.lhs) | variables(r.rhs)) and not _is_assignment(r)]
                new_last = with_vars[-1] if with_vars and not negated and not parallel and not alternative else None
                rel_before, last_rel = (last_rel if new_last is not None else None), new_last
                prev_tail = (step.index, f.chain.exprs[-1])
                last_rel_step, last_rel_hyp = step.index, hypothetical or conditional_sentence
                last_rel_sent = (step.index, sent_start)
            self.close_group(group, group_derived, recent_eqs, step.index)
            group = []
            if reductio and _REDUCTIO_CLOSE.search(text):
                reductio = False  # the contradiction was reached: the supposition is discharged
            step_edges += self.verbal_edges(scope, step.index, text, formulas)
            if step_edges == 0:
                self.add_edge(scope, TransitionType.NARRATION, step.index, (0, len(text)), text[:200],
                              EdgeContext(formula=None))
        return StateTree(graph=self.g, edges=self.edges, contexts=self.ctx)

    def continuation_edge(self, scope: _Scope, step: int, text: str, f: Formula, prev: Expr,
                          env: dict[str, Fraction]) -> int:
        """An edge for ``\\[ = E \\]`` continuing ``prev``: a rewrite claimed as an identity, when nothing in
        context could make it hold otherwise (``statetree.continuation``). Closed arithmetic continued this
        way is not paired (measured: it raised false alarms on a validation source)."""
        r = rewrite_claim(prev, f)
        vs = variables(r.lhs) | variables(r.rhs)
        rewrites = bool(vs) and variables(r.lhs) == variables(r.rhs) and not vs & set(scope.env) and not any(
            constrains(q, frozenset(vs)) for q in self.stated_eqs)
        if not rewrites:
            return 0
        span = f.member_spans[0]
        self.add_edge(scope, TransitionType.COMPUTATION, step, span, text[span[0] : span[1]], EdgeContext(
            formula=f, link=0, rel=r, env=env, word_problem=self.word_problem, rewrites=True,
            around=(text[max(0, f.start - 12) : f.start], text[f.end : f.end + 60]), rounded=frozenset(self.rounded)))
        return 1

    def fresh_context(self, scope: _Scope, step: int) -> _Scope:
        """A scope holding only what the problem states (for a new sub-problem)."""
        keep = {k for k, st in scope.origin_step.items() if st >= 10**9}
        fresh = _Scope(node=scope.node, env={k: v for k, v in scope.env.items() if k in keep},
                       origin={k: o for k, o in scope.origin.items() if k in keep}, facts=[],
                       origin_step={k: scope.origin_step[k] for k in keep})
        self.split_scope = None
        self.splits_mixed = bool(self.case_records)  # cases of two sub-problems are not one split
        return fresh

    def link_named(self, scope: _Scope, step: int, text: str, a: Formula | None, b: Formula, negated: bool) -> int:
        """``Daily earnings = 105 / 5. Daily earnings = 21.``: two statements about one named quantity,
        the first left unevaluated and the second a number, assert that the expression equals the number."""
        if a is None or negated:
            return 0
        last, first = a.chain.exprs[-1], b.chain.exprs[0]
        if isinstance(last, Num) or not isinstance(first, Num) or variables(last):
            return 0
        if (a.chain.rels and a.chain.rels[-1] != "=") or (b.chain.rels and b.chain.rels[0] not in ("=", "~")):
            return 0
        span = (a.member_spans[-1][0], b.member_spans[0][1])
        self.note_rounding(last, first, "=")
        ctx = EdgeContext(formula=b, link=-1, rel=Rel(last, "=", first), rounded=frozenset(self.rounded),
                          word_problem=self.word_problem)
        self.add_edge(scope, TransitionType.COMPUTATION, step, span, text[span[0] : span[1]], ctx)
        return 1

    def verbal_edges(self, scope: _Scope, step: int, text: str, formulas: list[Formula]) -> int:
        """Definitions and conclusions stated in words ("Let x be the number of apples",
        "The answer is 42") become EdgeUnits too; they carry no obligation."""
        n = 0
        covered = [(f.start, f.end) for f in formulas]
        for pattern, ttype in ((_VERBAL_DEF, TransitionType.DEFINITION), (_VERBAL_CONCLUSION, TransitionType.CONCLUSION)):
            for m in pattern.finditer(text[:5000]):
                if any(a <= m.start() < b for a, b in covered):
                    continue
                end = min(len(text), m.end() + 120)
                stop = text.find(". ", m.end(), end)
                span = (m.start(), stop if stop >= 0 else end)
                self.add_edge(scope, ttype, step, span, text[span[0] : span[1]], EdgeContext(formula=None))
                n += 1
                if ttype == TransitionType.DEFINITION:
                    scope.facts.append(text[span[0] : span[1]][:120])
        return n

    def close_group(self, group: list[tuple[str, str, Fraction]], derived: bool,
                    recent_eqs: list[tuple[int, Rel]], step: int) -> None:
        """A derived run of assignments to two or more unknowns ("so x = 7 and y = 3") claims to
        solve the system the proof just stated: attach those equations to its first edge."""
        names = {v for _, v, _ in group}
        if len(names) < 2 or len(names) != len(group) or not derived:
            return
        eqs = tuple(r for st, r in recent_eqs if st >= step - 1 and len(variables(r.lhs) | variables(r.rhs)) >= 2
                    and (variables(r.lhs) | variables(r.rhs)) <= names)[-4:]
        if not eqs:
            return
        first = group[0][0]
        old = self.ctx[first]
        self.ctx[first] = replace(old, system=(eqs, {v: val for _, v, val in group}))

    def chain_value(self, chain: Chain) -> Fraction | None:
        """Value a definition chain establishes: the first closed member that evaluates exactly."""
        for e in chain.exprs[1:]:
            v = _closed_value(e)
            if v is not None:
                return v
        return None

    def note_rounding(self, lhs: Expr, rhs: Expr, op: str) -> None:
        if isinstance(rhs, Num) and rhs.decimals:
            v = _closed_value(lhs)
            if v is not None and v != rhs.value:
                self.rounded.add(rhs.text)

    # -- cases -----------------------------------------------------------
    def enter_cases(self, scope: _Scope, step: int, text: str, heads: list[re.Match[str]],
                    if_par: list[re.Match[str]]) -> tuple[_Scope, Rel | None]:
        if self.split_scope is None:
            base = scope
            self.add_edge(base, TransitionType.CASE_SPLIT, step, (heads[0].start() if heads else if_par[0].start(),
                          heads[0].end() if heads else if_par[0].end()), "case split", EdgeContext(formula=None))
            self.split_scope = _Scope(node=base.node, env=dict(base.env), origin=dict(base.origin), facts=list(base.facts),
                                      origin_step=dict(base.origin_step))
        split = self.split_scope
        items: list[tuple[int, int, str]] = []
        for m in heads:
            end = text.find("\n", m.end())
            end = len(text) if end < 0 else end
            dot = text.find(". ", m.end(), end)
            end = dot if dot >= 0 else end
            items.append((m.start(), min(end, m.end() + 200), text[m.end() : min(end, m.end() + 200)]))
        if not heads:
            for m in if_par:
                items.append((m.start(), m.end(), m.group()))
        new_scope = scope
        for start, end, header in items:
            new_scope = _Scope(node=split.node, env=dict(split.env), origin=dict(split.origin), facts=list(split.facts),
                               branch=header.strip()[:120], origin_step=dict(split.origin_step))
            edge = self.add_edge(new_scope, TransitionType.CASE, step, (start, end), text[start:end],
                                 EdgeContext(formula=None))
            self.case_records.append((step, (start, end), header, edge.id))
        return new_scope, None

    def coverage_cases(self) -> CaseSplit | None:
        """Collect the case conditions of the split: one variable, residue or relational conditions."""
        if len(self.case_records) < 2 or self.splits_mixed:
            return None
        var: str | None = None
        residues: list[str] = []
        relations: list[tuple[Rel, ...]] = []
        for _, _, header, _ in self.case_records:
            m = _PARITY.search(header)
            fs = [f for f in extract_formulas(header) if f.chain.rels]
            if m and not fs:
                v, residue, rels = m.group(1), m.group(2).lower(), ()
            elif fs and len(fs) == 1 and (res := _residue_class(fs[0].chain)) is not None:
                v, residue, rels = res[0], f"mod {res[1]} {res[2]}", ()
            elif fs and len(fs) == 1:
                f = fs[0]
                vs = set().union(*(variables(e) for e in f.chain.exprs))
                if len(vs) != 1 or any(r in ("!=", "~") for r in f.chain.rels):
                    return None
                if not all(isinstance(e, Var) or not variables(e) for e in f.chain.exprs):
                    return None
                v, residue, rels = next(iter(vs)), "", tuple(Rel(a, o, b) for a, o, b in f.chain.links())
            else:
                return None
            if var is not None and var != v:
                return None
            var = v
            residues.append(residue)
            relations.append(rels)
        assert var is not None
        if len({bool(r) for r in residues}) != 1:
            return None  # residue and relational cases mixed: not read
        if len(set(zip(residues, relations))) < len(residues):
            return None  # a branch repeated (a case header restated), not a split into distinct cases
        return CaseSplit(variable=var, residues=tuple(residues), relations=tuple(relations),
                         integer=bool(residues[0]) or var in self.integer_vars,
                         headers=tuple(h for _, _, h, _ in self.case_records))


_OR_NEXT = re.compile(r"(?:\s|\$|\\\)|\\\]|\\\[|\\\(|\\q?quad|\\,|,){0,12}(?:or\b|\\lor\b|\\vee\b|\\text\{\s*or\b)")


def _first_alternative(f: Formula, text: str) -> bool:
    """The formula is the first of alternatives: "x - 8 = 12 or x - 8 = -12", or the first of a
    list of values for one letter ("x = 0, x = 9 and x = -8": the solutions, each of something)."""
    after = text[f.end : f.end + 60]
    if _OR_NEXT.match(after):
        return True
    first = f.chain.exprs[0]
    if isinstance(first, Var) and len(f.chain.rels) == 1:
        name = re.escape(first.name)
        return bool(re.match(r"(?:\s|\$|\\\)|\\\]|\\\[|\\\(|\\q?quad|\\,){0,12}(?:,|;|and\b)(?:\s|\$|\\\(|\\\[|and\b){0,12}" + name + r"\s*=",
                             after))
    return False


def _residue_class(chain: Chain) -> tuple[str, int, int] | None:
    """``n = 3k + 1`` (k an integer parameter): n is 1 mod 3."""
    if len(chain.rels) != 1 or chain.rels[0] != "=" or not isinstance(chain.exprs[0], Var):
        return None
    n, rhs = chain.exprs[0].name, chain.exprs[1]
    params = variables(rhs)
    if len(params) != 1 or n in params:
        return None
    (k,) = params
    try:
        v0, v1, v2 = (evaluate(rhs, {k: Fraction(i)}) for i in (0, 1, 2))
    except FaithSieveError:
        return None
    a = v1 - v0
    if v2 - v1 != a or a.denominator != 1 or v0.denominator != 1 or a < 2:
        return None
    return n, int(a), int(v0) % int(a)


def _sentences(text: str) -> list[str]:
    """The sentences of a step (bounded: the first 5,000 characters)."""
    return re.split(r"(?<=[.!?])\s+|\n", text[:5000])


def _sentence(lead: str) -> str:
    cut = max(lead.rfind(". "), lead.rfind("\n"), lead.rfind("; "))
    return lead[cut + 1 :][-160:]


_TRAIL_STRONG = re.compile(r"(?i)\b(not|no|false|contradiction|impossible|absurd|extraneous|invalid|reject\w*|discard\w*|"
                           r"undefined|isn't|aren't|doesn't|don't|cannot)\b")


def _trailing_negation(text: str, end: int) -> bool:
    rest = text[end : end + 200]
    stop = rest.find(". ")
    if _TRAIL_STRONG.search(rest[: stop if stop >= 0 else len(rest)]):
        return True
    tail = text[end : end + 60].lower()
    return bool(re.match(r"\s*(\?|,?\s*(but\s+(?:that|this|it)|which|that)?\s*(is|are|'s)?\s*(not|false|wrong|incorrect|impossible|a contradiction))", tail)) or \
        "contradiction" in tail


def _domain_stated(var: str, proof: Proof) -> bool:
    """The problem quantifies the split variable over all integers ("for every integer n",
    "n ∈ ℤ"), or the proof says its cases cover all of them."""
    v = re.escape(var)
    problem = proof.problem[:4000]
    if re.search(r"(?i)\bfor\s{1,3}(?:every|all|any|each)\s{1,3}integers?\s{0,3}(?:\$|\\\()?\s{0,3}" + v + r"(?![A-Za-z])", problem) \
            or re.search(v + r"\s{0,3}\\in\s{0,3}\\mathbb\s{0,3}\{?Z", problem):
        return True
    return any(re.search(r"(?i)\bcover\w{0,3}\s{1,3}(?:all|every)\s{1,3}(?:the\s{1,3})?(?:integers?|residues?|remainders?)", s.text[:4000])
               for s in proof.steps)


def decompose(proof: Proof) -> StateTree:
    """Decompose every step into EdgeUnits and build the proof-state tree."""
    b = _Builder(proof)
    tree = b.build()
    cov = b.coverage_cases()
    if cov is not None:
        _, _, _, eid = b.case_records[0]
        constraints = [c for c in b.problem_constraints if variables(c.lhs) | variables(c.rhs) == {cov.variable}]
        zero = Num(Fraction(0), "0", 0)
        if re.search(r"(?i)\bpositive\b", proof.problem):
            constraints.append(Rel(Var(cov.variable), ">", zero))
        elif re.search(r"(?i)\bnon-?negative\b", proof.problem):
            constraints.append(Rel(Var(cov.variable), ">=", zero))
        cov = replace(cov, constraints=tuple(constraints),
                      domain_stated=_domain_stated(cov.variable, proof) and cov.integer and not constraints)
        tree.contexts[eid] = EdgeContext(formula=tree.contexts[eid].formula, coverage=cov)
    return tree


__all__ = ["CaseSplit", "EdgeContext", "StateTree", "decompose", "leftmost_operand", "render"]
