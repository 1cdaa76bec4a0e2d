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
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction

from faithsieve.statetree.continuation import constrains, continues, rewrite_claim
from faithsieve.statetree.models import (
    CaseSplit,
    EdgeContext,
    EdgeUnit,
    NodeRecord,
    StateTree,
    TransitionType,
)
from faithsieve.statetree.rebinding import reused_letter
from faithsieve.statetree.retraction import retracted

from faithsieve.core.errors import FaithSieveError
from faithsieve.core.proof import Proof
from faithsieve.mathtext.ast import (
    Chain,
    Expr,
    Num,
    Rel,
    Var,
    leftmost_operand,
    render,
    variables,
)
from faithsieve.mathtext.cues import (
    ALTERNATIVE,
    CASE_HEAD,
    CONCLUDE,
    CONDITION_CUE,
    CUSTOM_OP,
    FOR_CONDITION,
    FOR_VALUE,
    HYPOTHETICAL,
    IF_PARITY,
    IMAGINARY,
    INTEGER_WORDS,
    NAMING,
    NEGATION,
    PARALLEL,
    PARITY,
    REDUCTIO_CLOSE,
    REDUCTIO_CUE,
    REDUCTIO_OPEN,
    RENAMING,
    ROOT_CLAIM,
    ROOTS_LISTED,
    STACKED,
    SUBPROBLEM,
    SUPPOSE,
    VERBAL_CONCLUSION,
    VERBAL_DEF,
    compared_with,
    compiled,
    cue_absent,
    cue_finditer,
    cue_search,
    domain_stated,
    first_alternative,
    last_clause,
    step_sentences,
    trailing_negation,
)
from faithsieve.mathtext.evaluate import evaluate
from faithsieve.mathtext.formulas import (
    Formula,
    RecentReadings,
    extract_formulas,
    sentence_start,
)

_RELATIONS = ("=", "<", ">", "<=", ">=")
"""The relations a stated fact may have (an equation or an inequality)."""


@dataclass(slots=True)
class Scope:
    """One branch of the argument as the builder walks it: its current state node, the values it has
    established (each with where and at which step), the facts it states and the case it is in."""

    node: str
    env: dict[str, Fraction]
    origin: dict[str, str]
    facts: list[str | Rel]  # a relation is rendered (str) only when the graph is built: see new_state
    branch: str = ""
    origin_step: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StepReading:
    """A step as the builder reads it before walking its formulas: the text, its formulas, and the
    case headers ("Case 1:") and parity clauses ("if n is even") that open cases."""

    index: int
    text: str
    formulas: list[Formula]
    heads: list[re.Match[str]]
    if_parity: list[re.Match[str]]


@dataclass(slots=True)
class FormulaReading:
    """How a step speaks of one of its formulas: read from the text alone (and whether the formula
    before it was supposed), before any transition is made. Not changed once read (not frozen only
    because a frozen dataclass costs more to make, and one is made for every formula)."""

    formula: Formula
    first: bool
    """The step's first formula."""
    rels: list[Rel]
    """The chain's links, in order."""
    evars: list[frozenset[str]]
    """The variables of each member of the chain."""
    negated: bool
    """The sentence denies, questions or retracts it (or it may use the problem's own operation)."""
    hypothetical: bool
    """Conditional, checked, tested, evaluated at a value, or supposed: not a fact."""
    supposed: bool
    """The object of a supposition ("Suppose x = 3", "If n = 4")."""
    opens_reductio: bool
    """The supposition is one the argument means to refute."""
    stacked: bool
    """Nothing but display delimiters since the formula before: it rewrites that one."""
    derived: bool
    """Stated as following from what came before ("so", "then", or stacked)."""
    parallel: bool
    """One of a run of parallel facts or alternatives ("x = 2, y = 3", "x = 2 or x = 4")."""
    alternative: bool
    """The first of alternatives ("x - 8 = 12 or x - 8 = -12")."""
    sent_start: int
    """Where the formula's sentence begins in the step."""
    conditional_sentence: bool
    """The sentence so far states a condition ("if x < 0, then ...")."""
    around: tuple[str, str]
    """A few characters of the step just before and after the formula."""


@dataclass(slots=True)
class BuilderState:
    """What the walk carries from formula to formula and from step to step."""

    scope: Scope
    last_rel: Rel | None = None
    """The most recent asserted relation with variables: the premise of a derivation."""
    rel_before: Rel | None = None
    """The one asserted before it (a stacked line may restate it)."""
    last_rel_step: int = 0
    last_rel_hyp: bool = False
    """``last_rel`` was stated under a condition: a premise only inside its own sentence."""
    last_rel_sent: tuple[int, int] = (0, 0)
    """The step and sentence start of the formula ``last_rel`` came from."""
    prev_tail: tuple[int, Expr] | None = None
    """The step and last expression of the latest formula (what ``\\[ = E \\]`` continues)."""
    recent_eqs: list[tuple[int, Rel]] = field(default_factory=list)
    """Asserted equations in unknowns, with their steps: the system a run of assignments solves."""
    group: list[tuple[str, str, Fraction]] = field(default_factory=list)
    """The current run of parallel assignments: (edge, variable, value)."""
    group_derived: bool = False
    group_premise: Rel | None = None
    """The premise the run's alternatives share (that of its first member)."""
    reductio: bool = False
    """Inside a supposition the argument means to refute."""
    case_from: int | None = None
    """The step where the latest case began."""


@dataclass(slots=True)
class LinkWalk:
    """The walk over one formula's links: what the contexts of its edges share."""

    step: StepReading
    reading: FormulaReading
    env: dict[str, Fraction]
    """The values in scope: from the problem, this step or the previous one."""
    premise: Rel | None
    """What a derivation here derives from (none for a parallel fact or an alternative)."""
    origins: tuple[dict[str, str], dict[str, int]] | None = None
    """Where and at which step each value was established: copied once, until a link changes them."""
    concludes: bool | None = None
    """Whether the lead states a conclusion: read at the first closed link."""


def imaginary_unit(texts: list[str]) -> bool:
    """Whether the proof works with complex numbers, so that ``i`` is read as the imaginary unit
    (part of the reading: the flag is passed to every ``extract_formulas`` call)."""
    return any(cue_search(IMAGINARY, t) for t in texts)


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


def _opens_reductio(text: str) -> bool:
    """A sentence of the step supposes something for contradiction."""
    return not cue_absent(REDUCTIO_OPEN, text) and any(
        REDUCTIO_OPEN.search(sn) and cue_search(REDUCTIO_CUE, sn) for sn in step_sentences(text))


_NEW_ITEM = re.compile(r"\n[ \t]{0,8}(?:[-*•]|\d{1,2}[.)]|\([a-z0-9]{1,3}\))[ \t]")
"""A line break and a list marker ("- ", "* ", "2. ", "(b) "): the formula after it opens an item of its own
(a list of cases "- k = 0 ⇒ a = 8 / - k = 1 ⇒ a = 28"), not a fact parallel to the one before it."""


def _tested_and_rejected(text: str, f: Formula, problem: str) -> bool:
    """An equation ``A = R`` with ``R`` a number the problem gives (a target), whose text goes on to
    compare the value of ``A`` with ``R``, strictly (a trial: "we get 0 + (15 − 1)·71 = 999, ... Since
    994 is less than 999, ..."): the text itself says the equation does not hold, so it is no claim.
    A number the step computed itself is no target: "6^2 + 85 = 91, ... Since 91 is not equal to 121"
    claims its own wrong sum."""
    if len(f.chain.rels) != 1 or f.chain.rels[0] != "=" or not problem:
        return False
    lhs, rhs = f.chain.exprs
    if isinstance(lhs, Num) and not isinstance(rhs, Num):
        lhs, rhs = rhs, lhs
    if not isinstance(rhs, Num) or variables(lhs):
        return False
    head = problem[:4000]
    if rhs.text not in head or compiled(r"(?<![\d.,])" + re.escape(rhs.text) + r"(?![\d]|[.,]\d)").search(head) is None:
        return False
    others = compared_with(text, f.end, rhs.text)
    if not others:
        return False
    value = _closed_value(lhs)
    return value is not None and any(_decimal(o) == value for o in others)


def _decimal(text: str) -> Fraction | None:
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        return None


_OPTIMIZING = re.compile(r"(?i)\b(?:minimi[sz]\w*|maximi[sz]\w*|optimi[sz]\w*)\b")
""""To minimize this expression, choose x = -3/8": a value chosen to make an expression least or greatest
(its vertex, where its derivative vanishes) does not solve the equation that defines the expression."""

_NEW_SOLUTION = re.compile(
    r"(?im)^[ \t*#_>]{0,8}(?:~[ \t]{0,2}[A-Za-z]|-[A-Za-z][\w .()]{0,40}$"
    r"|(?:(?:alternat(?:e|ive)|another|second|third)[ \t]{1,3})?(?:solution|method|approach)[ \t]{0,3}\d{0,2}[ \t]{0,3}"
    r"(?:[:.)*]|$))")
"""Where another solution of the problem begins: a heading ("Solution 2", "Alternative solution:") or the
line after a signature ("~Steven Chen", "-Westwoodmonster": a short line of a name right after a tilde or a
dash, no space, as collected solutions end). Each solution
names its letters afresh, so nothing the one before it found is a premise of it."""

_MAX_PROBLEM_EQUATIONS = 16
"""How many of the problem's equations ``TreeBuilder.restated`` compares each relation with."""

_ASKS_REWRITE = re.compile(r"(?i)\b(?:expand|simplify|factor|multiply\s{1,3}out)\w{0,6}\b[^.$?]{0,40}?"
                           r"(?:\$\$?|\\\()([^$=<>]{1,300}?)(?:\$|\\\))")
"""The problem asks to expand, simplify or factor an expression: "Expand $(x - y)^2$.", "Simplify the
expression $\\frac{x^2 - 1}{x - 1}$"."""


def asked_rewrites(problem: str) -> tuple[Expr, ...]:
    """The expressions the problem asks to expand, simplify or factor (at most four), parsed."""
    out: list[Expr] = []
    for m in _ASKS_REWRITE.finditer(problem[:4000]):
        fs = extract_formulas(f"${m.group(1)} = 0$")
        if len(fs) == 1 and len(fs[0].chain.exprs) == 2:
            out.append(fs[0].chain.exprs[0])
        if len(out) == 4:
            break
    return tuple(out)


_NAMED_RELATION = re.compile(
    r"(?i)(?:\b(?:roots?|solutions?|zeros|zeroes|zero)\s{1,3}(?:of|to)\s{1,3}"
    r"(?:the\s{1,3}(?:given\s{1,3})?(?:equation|polynomial|inequality)\s{0,3})?"
    r"|\b(?:multiply\w*|divid\w*|squar\w*|solv\w*|rewrit\w*|factor\w*)\s{1,3}(?:both\s{1,3}sides\s{1,3}of\s{1,3})?"
    r"the\s{1,3}(?:given\s{1,3})?(?:equation|polynomial|inequality)\s{0,3})(?:\$\$?|\\\(|\\\[)?\s{0,3}\Z")
""""every root of $z^4 + z^2 + 1 = 0$", "multiplying the equation $A = 0$ by ...": the relation is named as
the object of the sentence, not asserted as a consequence of the one before it: a "therefore" earlier in
the sentence derives what the sentence says about it ("is a sixth root of unity"), not the relation."""


def read_step(index: int, text: str, imaginary: bool,
              read: Callable[[str, bool], list[Formula]] = extract_formulas) -> StepReading:
    """The step's formulas and the headers that open cases in it."""
    return StepReading(index=index, text=text, formulas=read(text, imaginary),
                       heads=cue_finditer(CASE_HEAD, text), if_parity=cue_finditer(IF_PARITY, text))


def read_formula(step: StepReading, fi: int, f: Formula, supposed_prev: bool, custom_ops: bool,
                 problem: str = "") -> FormulaReading:
    """How the step speaks of its formula ``fi`` (``supposed_prev``: whether the formula before it was
    supposed; ``custom_ops``: the problem defines its own operation; ``problem``: its text)."""
    text = step.text
    rels = [Rel(a, o, b) for a, o, b in f.chain.links()]
    evars = [variables(e) for e in f.chain.exprs]
    sentence = last_clause(f.lead)
    negated = (bool(cue_search(NEGATION, sentence)) or trailing_negation(text, f.end) or retracted(text, f.end)
               or (custom_ops and any(c in f.text for c in "*#@&")) or _tested_and_rejected(text, f, problem))
    hypothetical = f.conditional or bool(cue_search(HYPOTHETICAL, sentence)) or (
        bool(rels) and _assigns(rels[0], evars[0], evars[1]) and bool(FOR_VALUE.search(f.lead)))
    # "x = 2, y = 3" lists alternatives or parallel facts; ", so" / ", then" derives
    stacked = fi > 0 and STACKED.fullmatch(f.lead) is not None
    derived = (f.derived or stacked) and not _NAMED_RELATION.search(f.lead[-80:])
    parallel = (fi > 0 and len(f.lead.strip()) < 40 and bool(PARALLEL.search(f.lead)) and not derived
                and _NEW_ITEM.search(f.lead) is None)
    # "for \(b - a = 3\) and \(b + a = 33\): ...": the relations a case is taken for are supposed
    supposed = bool(rels) and any(evars) and bool(FOR_CONDITION.search(f.lead)) or bool(cue_search(SUPPOSE, sentence)) or (
        parallel and fi > 0 and supposed_prev and not re.search(r"(?i)\bthen\b|[,;:]", f.lead))
    opens_reductio = supposed and REDUCTIO_OPEN.search(sentence) is not None and (
        REDUCTIO_CUE.search(sentence) is not None or not any(evars))
    sent_start = sentence_start(text, 0, f.start)
    return FormulaReading(
        formula=f, first=fi == 0, rels=rels, evars=evars, negated=negated, hypothetical=hypothetical or supposed,
        supposed=supposed, opens_reductio=opens_reductio, stacked=stacked, derived=derived, parallel=parallel,
        alternative=first_alternative(f, text), sent_start=sent_start,
        conditional_sentence=bool(cue_search(CONDITION_CUE, text[sent_start : f.start])),
        around=(text[max(0, f.start - 12) : f.start], text[f.end : f.end + 60]))


class TreeBuilder:
    """Builds the proof-state tree of one proof: reads the problem, then walks each step's formulas
    and each formula's links, making one transition (an EdgeUnit and its context) for each."""

    def __init__(self, proof: Proof, readings: RecentReadings | None = None) -> None:
        self.proof = proof
        self.read: Callable[[str, bool], list[Formula]] = readings.read if readings is not None else extract_formulas
        """How texts are read (``readings``: the pipeline's last few readings, when it keeps them)."""
        self.node_records: list[NodeRecord] = []  # with the edges, the graph, built when read (StateTree.from_records)
        self.edges: list[EdgeUnit] = []
        self.ctx: dict[str, EdgeContext] = {}
        self.n_states = 0
        self.rounded: set[str] = set()
        self.rounded_frozen: frozenset[str] = frozenset()  # = frozenset(self.rounded), kept up to date
        self.integer_vars: set[str] = set()
        self.integer_frozen: frozenset[str] = frozenset()  # = frozenset(self.integer_vars) once the problem is read
        self.problem_constraints: list[Rel] = []
        self.problem_eqs: dict[str, list[Rel]] = {}  # the problem's equations in one unknown, by unknown
        self.step_unknowns: set[str] = set()  # the letters of the relations in unknowns the steps wrote so far
        self.stated_eqs: list[Rel] = []  # relations in unknowns stated so far (problem and steps)
        self.problem_equations: list[Rel] = []  # the problem's equations in unknowns (not conditional)
        self.asked_rewrites: tuple[Expr, ...] = asked_rewrites(proof.problem)
        self.case_records: list[tuple[int, tuple[int, int], str, str]] = []  # step, span, header text, edge id
        self.split_scope: Scope | None = None
        self.splits_mixed = False
        self.word_problem = True
        # "i" is the imaginary unit when the problem or proof works with complex numbers
        # the problem defines its own operation ("a * b = a^2 + b"): '*' in the proof may be it
        self.custom_ops = bool(cue_search(CUSTOM_OP, proof.problem))
        self.imaginary = imaginary_unit([proof.problem, *(st.text for st in proof.steps)])

    # -- states ----------------------------------------------------------
    def new_state(self, scope: Scope, goal: str = "") -> str:
        sid = f"s{self.n_states}"
        self.n_states += 1
        # the hypotheses as they stand now, rendered when the graph is built (``StateTree.from_records``):
        # a relation and a value are immutable, so they render then as they would now
        self.node_records.append((sid, tuple(scope.facts[-12:]), tuple(scope.env.items())[-12:], goal, scope.branch))
        return sid

    def add_edge(self, scope: Scope, ttype: TransitionType, step: int, span: tuple[int, int], text: str,
                 ctx: EdgeContext) -> EdgeUnit:
        child = self.new_state(scope)
        eid = f"e{len(self.edges)}"
        edge = EdgeUnit(id=eid, type=ttype, parent=scope.node, child=child, step=step, span=span, text=text)
        self.edges.append(edge)
        self.ctx[eid] = ctx
        scope.node = child
        return edge

    # -- problem ---------------------------------------------------------
    def read_problem(self, scope: Scope) -> None:
        text = self.proof.problem
        problem_formulas = self.read(text, self.imaginary)
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
                    unknowns = variables(lhs) | variables(rhs)
                    if op == "=" and len(unknowns) == 1 and not f.conditional:
                        self.problem_eqs.setdefault(next(iter(unknowns)), []).append(r)
                    if (op == "=" and not f.conditional and len(self.problem_equations) < _MAX_PROBLEM_EQUATIONS
                            and not isinstance(lhs, Var) and not isinstance(rhs, Var)):  # (not a definition: y = sin x)
                        self.problem_equations.append(r)
                    if op in ("<", ">", "<=", ">=") and len(variables(lhs) | variables(rhs)) == 1:
                        self.problem_constraints.append(r)
        if cue_search(INTEGER_WORDS, text):
            for m in re.finditer(r"(?<![A-Za-z\\])([a-z])(?![A-Za-z])", text):
                self.integer_vars.add(m.group(1))
        self.integer_frozen = frozenset(self.integer_vars)

    # -- steps -----------------------------------------------------------
    def build(self) -> StateTree:
        root_scope = Scope(node="", env={}, origin={}, facts=[])
        self.read_problem(root_scope)
        root_scope.node = self.new_state(root_scope, goal=self.proof.problem[:200])
        state = BuilderState(scope=root_scope)
        for step in self.proof.steps:
            self.walk_step(state, read_step(step.index, step.text, self.imaginary, self.read))
        return StateTree.from_records(self.node_records, self.edges, self.ctx)

    def walk_step(self, state: BuilderState, step: StepReading) -> None:
        """The transitions of one step: its context opened, each formula walked, the step closed."""
        self.open_step(state, step)
        n_edges = 0
        named: dict[str, Formula] = {}
        supposed_prev = False
        gap_from = 0
        for fi, f in enumerate(step.formulas):
            if (fi or step.index > 1) and _NEW_SOLUTION.search(step.text, gap_from, max(gap_from, f.start)):
                self.start_afresh(state, step.index)  # another solution begins between the last formula and this one
            gap_from = f.end
            reading = read_formula(step, fi, f, supposed_prev, self.custom_ops, self.proof.problem)
            supposed_prev = reading.supposed
            n_edges += self.walk_formula(state, step, reading, named)
        self.close_step(state, step, n_edges)

    def open_step(self, state: BuilderState, step: StepReading) -> None:
        """What the step's wording changes before its formulas: a reductio opened, cases entered, an old
        premise expired, a new sub-problem, letters given new meanings."""
        text = step.text
        state.reductio = state.reductio or _opens_reductio(text)
        if step.heads or len(step.if_parity) >= 2:
            if state.case_from is not None:
                # a new case: the equations stated in the previous case are not premises here
                state.recent_eqs[:] = [(st, r) for st, r in state.recent_eqs if st < state.case_from]
            state.case_from = step.index
            state.scope, state.last_rel = self.enter_cases(state.scope, step.index, text, step.heads, step.if_parity)
        if state.last_rel is not None and step.index - state.last_rel_step > 1:
            state.last_rel = None
        if cue_search(SUBPROBLEM, text[:400]):
            self.start_afresh(state, step.index)  # a new sub-problem: the facts of the previous one are not premises
        renamed = {m.group(1) for m in cue_finditer(RENAMING, text[:5000])}
        if renamed:
            # a letter given a (new) meaning: its old value and the relations about it no longer apply
            for v in renamed:
                state.scope.env.pop(v, None)
            last = state.last_rel
            if last is not None and renamed & (variables(last.lhs) | variables(last.rhs)):
                state.last_rel = None

    def close_step(self, state: BuilderState, step: StepReading, n_edges: int) -> None:
        """The end of a step: its run of assignments closed, a reductio discharged, the definitions and
        conclusions it states in words, and a narration edge for a step that made no other."""
        self.close_group(state.group, state.group_derived, state.recent_eqs, step.index)
        state.group = []
        if state.reductio and cue_search(REDUCTIO_CLOSE, step.text):
            state.reductio = False  # the contradiction was reached: the supposition is discharged
        n_edges += self.verbal_edges(state.scope, step.index, step.text, step.formulas)
        if n_edges == 0:
            self.add_edge(state.scope, TransitionType.NARRATION, step.index, (0, len(step.text)), step.text[:200],
                          EdgeContext(formula=None))

    # -- formulas --------------------------------------------------------
    def walk_formula(self, state: BuilderState, step: StepReading, fr: FormulaReading,
                     named: dict[str, Formula]) -> int:
        """The transitions of one formula (the number of edges made): a named quantity's value, a
        continued display, then one edge per link; then what the next formula may derive from."""
        f = fr.formula
        if fr.opens_reductio:
            state.reductio = True
        if not fr.parallel:
            self.close_group(state.group, state.group_derived, state.recent_eqs, step.index)
            state.group, state.group_derived, state.group_premise = [], fr.derived and not fr.hypothetical, state.last_rel
        if state.last_rel is not None and state.last_rel_hyp and state.last_rel_sent != (step.index, fr.sent_start):
            state.last_rel = None  # a conditional relation is a premise only inside its own sentence
        premise = None if fr.parallel or fr.alternative else state.last_rel
        n_edges = 0
        scope = state.scope
        if f.name is not None:
            n_edges += self.link_named(scope, step.index, step.text, named.get(f.name), f, fr.negated)
            named[f.name] = f
        # values in scope: from the problem, this step or the previous one
        env = {k: v for k, v in scope.env.items() if scope.origin_step.get(k, 0) >= step.index - 1}
        tail = state.prev_tail
        if tail is not None and tail[0] == step.index - fr.first and continues(f, fr.first, step.text[: f.start]):
            n_edges += self.continuation_edge(scope, step.index, step.text, f, tail[1], env)
        n_edges += self.walk_links(state, LinkWalk(step=step, reading=fr, env=env, premise=premise))
        self.carry_premise(state, step, fr)
        return n_edges

    def carry_premise(self, state: BuilderState, step: StepReading, fr: FormulaReading) -> None:
        """The next formula may derive from this one's last relation with variables."""
        rels, evars = fr.rels, fr.evars
        with_vars = [r for i, r in enumerate(rels) if (evars[i] or evars[i + 1]) and not _assigns(r, evars[i], evars[i + 1])]
        new_last = with_vars[-1] if with_vars and not fr.negated and not fr.parallel and not fr.alternative else None
        state.rel_before, state.last_rel = (state.last_rel if new_last is not None else None), new_last
        state.prev_tail = (step.index, fr.formula.chain.exprs[-1])
        state.last_rel_step, state.last_rel_hyp = step.index, fr.hypothetical or fr.conditional_sentence
        state.last_rel_sent = (step.index, fr.sent_start)

    # -- links -----------------------------------------------------------
    def walk_links(self, state: BuilderState, walk: LinkWalk) -> int:
        """One edge per link of the chain: a closed link, a definition (the first link assigning a
        value to a letter) or a relation in unknowns."""
        fr, scope = walk.reading, state.scope
        evars, spans, text = fr.evars, fr.formula.member_spans, walk.step.text
        for li, r in enumerate(fr.rels):
            span = spans[li][0], spans[li + 1][1]
            vars_ = evars[li] | evars[li + 1]
            if walk.origins is None:
                walk.origins = dict(scope.origin), {k: scope.origin_step.get(k, 0) for k in walk.env}
            if not vars_:
                self.closed_link(state, walk, li, r, vars_, span, text[span[0] : span[1]])
            elif li == 0 and _assigns(r, evars[0], evars[1]) and r.op in ("=", "~"):
                self.definition_link(state, walk, r, vars_, span, text[span[0] : span[1]])
            else:
                self.relation_link(state, walk, li, r, vars_, span, text[span[0] : span[1]])
        return len(fr.rels)

    def link_context(self, state: BuilderState, walk: LinkWalk, li: int, r: Rel, vars_: frozenset[str],
                     premises: tuple[Rel, ...] = (), other_premises: tuple[Rel, ...] = (),
                     definition_of: str | None = None) -> EdgeContext:
        """The context of the edge for link ``li`` (``r``, in the variables ``vars_``)."""
        fr, origins = walk.reading, walk.origins
        assert origins is not None  # set by walk_links before each link
        return EdgeContext(
            formula=fr.formula, link=li, rel=r, rel_vars=vars_, env=walk.env, env_origin=origins[0],
            env_steps=origins[1], negated=fr.negated, hypothetical=fr.hypothetical, parallel=fr.parallel,
            supposed=fr.supposed, reductio=state.reductio, around=fr.around, word_problem=self.word_problem,
            rounded=self.rounded_frozen, integer_vars=self.integer_frozen, premises=premises,
            other_premises=other_premises, definition_of=definition_of,
            asked_rewrite=bool(self.asked_rewrites) and (r.lhs in self.asked_rewrites or r.rhs in self.asked_rewrites),
            restates=self.restated(r) if self.problem_equations and r.op == "=" else None)

    def restated(self, r: Rel) -> Rel | None:
        """The problem's equation that ``r`` keeps exactly one side of (``EdgeContext.restates``), or None.
        The side it replaces must hold a letter: an equation in an unknown restated keeps its unknowns on
        both sides it had them, while "A = 0 ... factor: A = (x + 3)(x - 2)" sets the kept side equal to a
        new form of itself (no restatement turns a number into an expression in the unknown)."""
        return next((p for p in self.problem_equations if (p.lhs == r.lhs) != (p.rhs == r.rhs)
                     and variables(p.rhs if p.lhs == r.lhs else p.lhs)), None)

    def closed_link(self, state: BuilderState, walk: LinkWalk, li: int, r: Rel, vars_: frozenset[str],
                    span: tuple[int, int], src: str) -> None:
        """A link between closed expressions (``span``, ``src``: where it is in the step and its text): a
        computation, or the conclusion when the lead says so."""
        ctx = self.link_context(state, walk, li, r, vars_)  # the rounded literals before this link
        self.note_rounding(r.lhs, r.rhs, r.op)
        if walk.concludes is None:
            walk.concludes = bool(cue_search(CONCLUDE, walk.reading.formula.lead[-80:]))
        ttype = TransitionType.CONCLUSION if walk.concludes else TransitionType.COMPUTATION
        self.add_edge(state.scope, ttype, walk.step.index, span, src, ctx)

    def definition_link(self, state: BuilderState, walk: LinkWalk, r: Rel, vars_: frozenset[str],
                        span: tuple[int, int], src: str) -> None:
        """``x = 5``: a letter receives a value, derived from the premise about it when there is one; the
        value then holds in the scope."""
        fr, scope, step = walk.reading, state.scope, walk.step
        f = fr.formula
        var = r.lhs if isinstance(r.lhs, Var) else r.rhs
        assert isinstance(var, Var)
        premises: tuple[Rel, ...] = ()
        # alternatives "x = 2 or x = 4" share the premise of the first one
        source_rel = state.group_premise if fr.parallel else walk.premise
        clause = last_clause(step.text[max(0, f.start - 400) : f.start])
        if cue_search(NAMING, clause) or _OPTIMIZING.search(clause):
            source_rel = None  # "where a = 1, b = -1, c = -2": naming, not solving; "to minimize this, x = -3/8"
        if (source_rel is not None and not fr.hypothetical and not fr.negated
                and var.name in variables(source_rel.lhs) | variables(source_rel.rhs)):
            premises = (source_rel,)
        elif source_rel is None and not fr.hypothetical and not fr.negated:
            premises = self.problem_premise(var.name, step.text, f)
        value = self.chain_value(f.chain)  # read once (a pure function of the chain)
        if premises and reused_letter(var.name, f.chain.exprs[1], value, premises[0], scope.env):
            premises = ()  # the letter takes a new value in place; the premise was about the old one
        edge = self.add_edge(scope, TransitionType.DEFINITION, step.index, span, src,
                             self.link_context(state, walk, 0, r, vars_, premises=premises, definition_of=var.name))
        if value is not None and not fr.hypothetical and not fr.negated:
            state.group.append((edge.id, var.name, value))
            scope.env[var.name] = value
            scope.origin[var.name] = f"step {step.index}: {f.text[:80]}"
            scope.origin_step[var.name] = step.index
            walk.origins = None

    def relation_link(self, state: BuilderState, walk: LinkWalk, li: int, r: Rel, vars_: frozenset[str],
                      span: tuple[int, int], src: str) -> None:
        """A relation in unknowns: a derivation from the premise (the chain's first link, stated as
        following), else a claim, or a computation further along the chain; a fact once asserted."""
        fr, step = walk.reading, walk.step
        premises: tuple[Rel, ...] = ()
        if walk.premise is not None and fr.derived and li == 0:
            premises = (walk.premise,)
        ttype = TransitionType.DERIVATION if premises else TransitionType.CLAIM
        if li > 0 and not premises:
            ttype = TransitionType.COMPUTATION
        # a stacked line may restate one of two alternatives above it ("\\[ x - 2 = 0 \\] \\[ x + 3 = 0 \\]"):
        # the line before the premise is a candidate premise too
        others = (state.rel_before,) if premises and fr.stacked and state.rel_before is not None else ()
        self.add_edge(state.scope, ttype, step.index, span, src,
                      self.link_context(state, walk, li, r, vars_, premises=premises, other_premises=others))
        self.step_unknowns |= vars_  # an equation the proof writes in these letters, claimed or not
        if not fr.hypothetical and not fr.negated and r.op in _RELATIONS:
            state.scope.facts.append(r)
            self.stated_eqs.append(r)
            if r.op == "=" and not (fr.parallel and ALTERNATIVE.search(fr.formula.lead)):
                state.recent_eqs.append((step.index, r))

    def continuation_edge(self, scope: Scope, step: int, text: str, f: Formula, prev: Expr,
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

    def start_afresh(self, state: BuilderState, step: int) -> None:
        """A new sub-problem or another solution of the problem: only what the problem states holds; the
        values, relations, cases and suppositions of the work before it are not premises here."""
        state.scope, state.last_rel = self.fresh_context(state.scope, step), None
        state.recent_eqs.clear()
        state.case_from = None
        state.reductio = False

    def fresh_context(self, scope: Scope, step: int) -> Scope:
        """A scope holding only what the problem states (for a new sub-problem)."""
        keep = {k for k, st in scope.origin_step.items() if st >= 10**9}
        fresh = Scope(node=scope.node, env={k: v for k, v in scope.env.items() if k in keep},
                       origin={k: o for k, o in scope.origin.items() if k in keep}, facts=[],
                       origin_step={k: scope.origin_step[k] for k in keep})
        self.split_scope = None
        self.splits_mixed = bool(self.case_records)  # cases of two sub-problems are not one split
        return fresh

    def link_named(self, scope: Scope, step: int, text: str, a: Formula | None, b: Formula, negated: bool) -> int:
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

    def verbal_edges(self, scope: Scope, step: int, text: str, formulas: list[Formula]) -> int:
        """Definitions and conclusions stated in words ("Let x be the number of apples",
        "The answer is 42") become EdgeUnits too; they carry no obligation."""
        n = 0
        covered = [(f.start, f.end) for f in formulas]
        head = text[:5000]
        for pattern, ttype in ((VERBAL_DEF, TransitionType.DEFINITION), (VERBAL_CONCLUSION, TransitionType.CONCLUSION)):
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

    def problem_premise(self, var: str, text: str, f: Formula) -> tuple[Rel, ...]:
        """"The roots are x = 2 and x = 4", "so x = 2 or x = 4" with no equation in ``x`` before it in
        the proof (nor any other relation in ``x``): the values solve the problem's own equation in
        ``x``, when it states exactly one (and the sentence says so: it names roots or solutions, or
        concludes)."""
        eqs = self.problem_eqs.get(var, [])
        if len(eqs) != 1 or var in self.step_unknowns:
            return ()  # after the proof's own equations in x, its values solve those ("the squared equation")
        clause = last_clause(text[max(0, f.start - 400) : f.start])
        return (eqs[0],) if cue_search(ROOT_CLAIM, clause) and not cue_search(NAMING, clause) else ()

    def close_group(self, group: list[tuple[str, str, Fraction]], derived: bool,
                    recent_eqs: list[tuple[int, Rel]], step: int) -> None:
        """A derived run of assignments to two or more unknowns ("so x = 7 and y = 3") claims to
        solve the system the proof just stated: attach those equations to its first edge."""
        names = {v for _, v, _ in group}
        if len(names) == 1 and group:
            first_ctx = self.ctx[group[0][0]]
            if first_ctx.premises and first_ctx.formula is not None and ROOTS_LISTED.search(
                    last_clause(first_ctx.formula.lead)):
                # "the roots are x = 2 and x = 3": the values listed are all the roots of the premise
                self.ctx[group[0][0]] = replace(first_ctx, roots_listed=len({val for _, _, val in group}))
            return
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
    def enter_cases(self, scope: Scope, step: int, text: str, heads: list[re.Match[str]],
                    if_par: list[re.Match[str]]) -> tuple[Scope, Rel | None]:
        if self.split_scope is None:
            base = scope
            self.add_edge(base, TransitionType.CASE_SPLIT, step, (heads[0].start() if heads else if_par[0].start(),
                          heads[0].end() if heads else if_par[0].end()), "case split", EdgeContext(formula=None))
            self.split_scope = Scope(node=base.node, env=dict(base.env), origin=dict(base.origin), facts=list(base.facts),
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
            new_scope = Scope(node=split.node, env=dict(split.env), origin=dict(split.origin), facts=list(split.facts),
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
            condition = _case_condition(header)
            if condition is None:
                return None
            v, residue, rels = condition
            if var is not None and var != v:
                return None
            var = v
            residues.append(residue)
            relations.append(rels)
        assert var is not None
        if len({bool(r) for r in residues}) != 1:
            return None  # residue and relational cases mixed: not read
        if len(set(zip(residues, relations, strict=True))) < len(residues):
            return None  # a branch repeated (a case header restated), not a split into distinct cases
        return CaseSplit(variable=var, residues=tuple(residues), relations=tuple(relations),
                         integer=bool(residues[0]) or var in self.integer_vars,
                         headers=tuple(h for _, _, h, _ in self.case_records))


def _case_condition(header: str) -> tuple[str, str, tuple[Rel, ...]] | None:
    """A case header's condition on its variable: a parity ("n is even"), a residue class
    (``n = 3k + 1``: "mod 3 1") or relations (``x < 0``, ``0 <= x < 2``); None when not one of these."""
    m = PARITY.search(header)
    fs = [f for f in extract_formulas(header) if f.chain.rels]
    if m and not fs:
        return m.group(1), m.group(2).lower(), ()
    if len(fs) != 1:
        return None
    f = fs[0]
    res = _residue_class(f.chain)
    if res is not None:
        return res[0], f"mod {res[1]} {res[2]}", ()
    vs = set().union(*(variables(e) for e in f.chain.exprs))
    if len(vs) != 1 or any(r in ("!=", "~") for r in f.chain.rels):
        return None
    if not all(isinstance(e, Var) or not variables(e) for e in f.chain.exprs):
        return None
    return next(iter(vs)), "", tuple(Rel(a, o, b) for a, o, b in f.chain.links())


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


def decompose(proof: Proof, readings: RecentReadings | None = None) -> StateTree:
    """Decompose every step into EdgeUnits and build the proof-state tree (the problem and the steps read
    through ``readings`` when given: a pipeline's last few readings)."""
    b = TreeBuilder(proof, readings)
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
                      domain_stated=domain_stated(cov.variable, proof) and cov.integer and not constraints)
        tree.contexts[eid] = EdgeContext(formula=tree.contexts[eid].formula, coverage=cov)
    return tree


__all__ = ["CaseSplit", "EdgeContext", "StateTree", "decompose", "leftmost_operand", "render"]
