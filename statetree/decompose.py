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

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import Chain, Expr, Num, Var, leftmost_operand, render, variables
from faithsieve.mathtext.evaluate import evaluate
from faithsieve.mathtext.extract import Formula, extract_formulas
from faithsieve.core.proof import Proof
from faithsieve.mathtext.ast import Rel
from faithsieve.statetree.continuation import constrains, continues, rewrite_claim
from faithsieve.mathtext.cues import (
    _ALTERNATIVE, _CASE_HEAD, _CONCLUDE, _CONDITION_CUE, _CUSTOM_OP, _FOR_VALUE, _HYPOTHETICAL, _IF_PARITY, _IMAGINARY,
    _INTEGER_WORDS, _NAMING, _NEGATION, _PARALLEL, _PARITY, _REDUCTIO_CLOSE, _REDUCTIO_CUE, _REDUCTIO_OPEN, _RENAMING,
    _STACKED, _SUBPROBLEM, _SUPPOSE, _VERBAL_CONCLUSION, _VERBAL_DEF, _domain_stated, _first_alternative, _sentence,
    _sentences, _trailing_negation, cue_absent, cue_finditer, cue_search,
)
from faithsieve.mathtext.cues import _OR_NEXT as _OR_NEXT, _TRAIL_STRONG as _TRAIL_STRONG  # re-exported, unused here
from faithsieve.statetree.rebinding import reused_letter
from faithsieve.statetree.retraction import retracted
from faithsieve.statetree.models import CaseSplit, EdgeContext, EdgeUnit, NodeRecord, StateTree, TransitionType


@dataclass
class _Scope:
    node: str
    env: dict[str, Fraction]
    origin: dict[str, str]
    facts: list[str | Rel]  # a relation is rendered (str) only when the graph is built: see new_state
    branch: str = ""
    origin_step: dict[str, int] = field(default_factory=dict)


def imaginary_unit(texts: list[str]) -> bool:
    """Whether the proof works with complex numbers, so that ``i`` is read as the imaginary unit
    (part of the reading: the flag is passed to every ``extract_formulas`` call)."""
    return any(cue_search(_IMAGINARY, t) for t in texts)


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


def _assigns(r: Rel, lhs_vars: frozenset[str], rhs_vars: frozenset[str]) -> bool:
    """``_is_assignment(r)`` with the variables of its two sides already known."""
    return r.op == "=" and ((isinstance(r.lhs, Var) and not rhs_vars) or (isinstance(r.rhs, Var) and not lhs_vars))


class _Builder:
    def __init__(self, proof: Proof) -> None:
        self.proof = proof
        self.node_records: list[NodeRecord] = []  # with the edges, the graph, built when read (StateTree.from_records)
        self.edges: list[EdgeUnit] = []
        self.ctx: dict[str, EdgeContext] = {}
        self.n_states = 0
        self.rounded: set[str] = set()
        self.rounded_frozen: frozenset[str] = frozenset()  # = frozenset(self.rounded), kept up to date
        self.integer_vars: set[str] = set()
        self.integer_frozen: frozenset[str] = frozenset()  # = frozenset(self.integer_vars) once the problem is read
        self.problem_constraints: list[Rel] = []
        self.stated_eqs: list[Rel] = []  # relations in unknowns stated so far (problem and steps)
        self.case_records: list[tuple[int, tuple[int, int], str, str]] = []  # step, span, header text, edge id
        self.split_scope: _Scope | None = None
        self.splits_mixed = False
        self.word_problem = True
        # "i" is the imaginary unit when the problem or proof works with complex numbers
        # the problem defines its own operation ("a * b = a^2 + b"): '*' in the proof may be it
        self.custom_ops = bool(cue_search(_CUSTOM_OP, proof.problem))
        self.imaginary = imaginary_unit([proof.problem, *(st.text for st in proof.steps)])

    # -- states ----------------------------------------------------------
    def new_state(self, scope: _Scope, goal: str = "") -> str:
        sid = f"s{self.n_states}"
        self.n_states += 1
        # the hypotheses as they stand now, rendered when the graph is built (``StateTree.from_records``):
        # a relation and a value are immutable, so they render then as they would now
        self.node_records.append((sid, tuple(scope.facts[-12:]), tuple(scope.env.items())[-12:], goal, scope.branch))
        return sid

    def add_edge(self, scope: _Scope, ttype: TransitionType, step: int, span: tuple[int, int], text: str,
                 ctx: EdgeContext) -> EdgeUnit:
        child = self.new_state(scope)
        eid = f"e{len(self.edges)}"
        edge = EdgeUnit(id=eid, type=ttype, parent=scope.node, child=child, step=step, span=span, text=text)
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
                    scope.facts.append(r)
                    self.stated_eqs.append(r)
                    if op in ("<", ">", "<=", ">=") and len(variables(lhs) | variables(rhs)) == 1:
                        self.problem_constraints.append(r)
        if cue_search(_INTEGER_WORDS, text):
            for m in re.finditer(r"(?<![A-Za-z\\])([a-z])(?![A-Za-z])", text):
                self.integer_vars.add(m.group(1))
        self.integer_frozen = frozenset(self.integer_vars)

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
            reductio = reductio or (not cue_absent(_REDUCTIO_OPEN, text) and any(
                _REDUCTIO_OPEN.search(sn) and cue_search(_REDUCTIO_CUE, sn) for sn in _sentences(text)))
            heads = cue_finditer(_CASE_HEAD, text)
            if_par = cue_finditer(_IF_PARITY, text)
            formulas = extract_formulas(text, self.imaginary)
            if heads or len(if_par) >= 2:
                if case_from is not None:
                    # a new case: the equations stated in the previous case are not premises here
                    recent_eqs[:] = [(st, r) for st, r in recent_eqs if st < case_from]
                case_from = step.index
                scope, last_rel = self.enter_cases(scope, step.index, text, heads, if_par)
            if last_rel is not None and step.index - last_rel_step > 1:
                last_rel = None
            if cue_search(_SUBPROBLEM, text[:400]):
                # a new sub-problem: the facts of the previous one are not premises here
                scope, last_rel = self.fresh_context(scope, step.index), None
                recent_eqs.clear()
                case_from = None
                reductio = False
            renamed = {m.group(1) for m in cue_finditer(_RENAMING, text[:5000])}
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
                # each formula's relations and the variables of its members, read once
                rels = [Rel(a, o, b) for a, o, b in f.chain.links()]
                evars = [variables(e) for e in f.chain.exprs]
                sentence = _sentence(f.lead)
                negated = (bool(cue_search(_NEGATION, sentence)) or _trailing_negation(text, f.end) or retracted(text, f.end)
                           or (self.custom_ops and any(c in f.text for c in "*#@&")))
                hypothetical = f.conditional or bool(cue_search(_HYPOTHETICAL, sentence)) or (
                    bool(rels) and _assigns(rels[0], evars[0], evars[1]) and bool(_FOR_VALUE.search(f.lead)))
                # "x = 2, y = 3" lists alternatives or parallel facts; ", so" / ", then" derives
                stacked = fi > 0 and _STACKED.fullmatch(f.lead) is not None
                derived = f.derived or stacked
                parallel = fi > 0 and len(f.lead.strip()) < 40 and bool(_PARALLEL.search(f.lead)) and not derived
                supposed = bool(cue_search(_SUPPOSE, sentence)) or (
                    parallel and fi > 0 and supposed_prev and not re.search(r"(?i)\bthen\b|[,;:]", f.lead))
                supposed_prev = supposed
                if supposed and _REDUCTIO_OPEN.search(sentence) and (
                        _REDUCTIO_CUE.search(sentence) or not any(evars)):
                    reductio = True
                hypothetical = hypothetical or supposed
                if not parallel:
                    self.close_group(group, group_derived, recent_eqs, step.index)
                    group, group_derived, group_premise = [], derived and not hypothetical, last_rel
                sent_start = max(text.rfind(". ", 0, f.start), text.rfind("\n", 0, f.start)) + 1
                if last_rel is not None and last_rel_hyp and last_rel_sent != (step.index, sent_start):
                    last_rel = None  # a conditional relation is a premise only inside its own sentence
                conditional_sentence = bool(cue_search(_CONDITION_CUE, text[sent_start : f.start]))
                alternative = _first_alternative(f, text)
                prev_for_derivation = None if parallel or alternative else last_rel
                if f.name is not None:
                    step_edges += self.link_named(scope, step.index, text, named.get(f.name), f, negated)
                    named[f.name] = f
                # values in scope: from the problem, this step or the previous one
                env = {k: v for k, v in scope.env.items() if scope.origin_step.get(k, 0) >= step.index - 1}
                if prev_tail is not None and prev_tail[0] == step.index - (fi == 0) and continues(f, fi == 0, text[: f.start]):
                    step_edges += self.continuation_edge(scope, step.index, text, f, prev_tail[1], env)
                around = (text[max(0, f.start - 12) : f.start], text[f.end : f.end + 60])
                concludes: bool | None = None  # whether the lead states a conclusion: read at the first closed link
                origins: tuple[dict[str, str], dict[str, int]] | None = None  # copied once, until a link changes them
                for li, r in enumerate(rels):
                    lhs, op, rhs = r.lhs, r.op, r.rhs
                    span = f.member_spans[li][0], f.member_spans[li + 1][1]
                    src = text[span[0] : span[1]]
                    vars_ = evars[li] | evars[li + 1]
                    if origins is None:
                        origins = dict(scope.origin), {k: scope.origin_step.get(k, 0) for k in env}
                    ctx_common = dict(
                        formula=f, link=li, rel=r, rel_vars=vars_, env=env, env_origin=origins[0],
                        negated=negated, hypothetical=hypothetical, parallel=parallel, word_problem=self.word_problem,
                        supposed=supposed, reductio=reductio, around=around,
                        rounded=self.rounded_frozen,
                        env_steps=origins[1],
                        integer_vars=self.integer_frozen,
                    )
                    if not vars_:
                        self.note_rounding(lhs, rhs, op)
                        if concludes is None:
                            concludes = bool(cue_search(_CONCLUDE, f.lead[-80:]))
                        ttype = TransitionType.CONCLUSION if concludes else TransitionType.COMPUTATION
                        self.add_edge(scope, ttype, step.index, span, src, EdgeContext(**ctx_common))
                    elif li == 0 and _assigns(r, evars[0], evars[1]) and op in ("=", "~"):
                        var = lhs if isinstance(lhs, Var) else rhs
                        assert isinstance(var, Var)
                        premises: tuple[Rel, ...] = ()
                        # alternatives "x = 2 or x = 4" share the premise of the first one
                        source_rel = group_premise if parallel else prev_for_derivation
                        if cue_search(_NAMING, _sentence(text[max(0, f.start - 400) : f.start])):
                            source_rel = None  # "where a = 1, b = -1, c = -2": naming, not solving
                        if (source_rel is not None and not hypothetical and not negated
                                and var.name in variables(source_rel.lhs) | variables(source_rel.rhs)):
                            premises = (source_rel,)
                        value = self.chain_value(f.chain)  # read once (a pure function of the chain)
                        if premises and reused_letter(var.name, f.chain.exprs[1], value, premises[0], scope.env):
                            premises = ()  # the letter takes a new value in place; the premise was about the old one
                        edge = self.add_edge(scope, TransitionType.DEFINITION, step.index, span, src,
                                             EdgeContext(**ctx_common, premises=premises, definition_of=var.name))
                        if value is not None and not hypothetical and not negated:
                            group.append((edge.id, var.name, value))
                            scope.env[var.name] = value
                            scope.origin[var.name] = f"step {step.index}: {f.text[:80]}"
                            scope.origin_step[var.name] = step.index
                            origins = None
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
                            scope.facts.append(r)
                            self.stated_eqs.append(r)
                            if op == "=" and not (parallel and _ALTERNATIVE.search(f.lead)):
                                recent_eqs.append((step.index, r))
                    step_edges += 1
                # the next formula may derive from this one's last relation with variables
                with_vars = [r for i, r in enumerate(rels) if (evars[i] or evars[i + 1]) and not _assigns(r, evars[i], evars[i + 1])]
                new_last = with_vars[-1] if with_vars and not negated and not parallel and not alternative else None
                rel_before, last_rel = (last_rel if new_last is not None else None), new_last
                prev_tail = (step.index, f.chain.exprs[-1])
                last_rel_step, last_rel_hyp = step.index, hypothetical or conditional_sentence
                last_rel_sent = (step.index, sent_start)
            self.close_group(group, group_derived, recent_eqs, step.index)
            group = []
            if reductio and cue_search(_REDUCTIO_CLOSE, text):
                reductio = False  # the contradiction was reached: the supposition is discharged
            step_edges += self.verbal_edges(scope, step.index, text, formulas)
            if step_edges == 0:
                self.add_edge(scope, TransitionType.NARRATION, step.index, (0, len(text)), text[:200],
                              EdgeContext(formula=None))
        return StateTree.from_records(self.node_records, self.edges, self.ctx)

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
            around=(text[max(0, f.start - 12) : f.start], text[f.end : f.end + 60]), rounded=self.rounded_frozen))
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
        ctx = EdgeContext(formula=b, link=-1, rel=Rel(last, "=", first), rounded=self.rounded_frozen,
                          word_problem=self.word_problem)
        self.add_edge(scope, TransitionType.COMPUTATION, step, span, text[span[0] : span[1]], ctx)
        return 1

    def verbal_edges(self, scope: _Scope, step: int, text: str, formulas: list[Formula]) -> int:
        """Definitions and conclusions stated in words ("Let x be the number of apples",
        "The answer is 42") become EdgeUnits too; they carry no obligation."""
        n = 0
        covered = [(f.start, f.end) for f in formulas]
        head = text[:5000]
        for pattern, ttype in ((_VERBAL_DEF, TransitionType.DEFINITION), (_VERBAL_CONCLUSION, TransitionType.CONCLUSION)):
            for m in cue_finditer(pattern, head):
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
                self.rounded_frozen = frozenset(self.rounded)

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
