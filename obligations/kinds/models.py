"""Typed proof obligations, checker outcomes and evidence records.

Obligations carry parsed relations (``Rel``: an AST triple) so checkers never
re-read text. Checker outcomes are values: ``Verified``, ``Refuted`` (with a
counterexample confirmed exactly) or ``Unknown`` (with a reason). ``Evidence``
is the public, serialisable record of one check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from typing import TYPE_CHECKING, Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer

from faithsieve.mathtext.ast import Rel
from faithsieve.mathtext.literals import show_number


def _rels_text(rels: tuple[Rel, ...]) -> list[str]:
    return [str(r) for r in rels]


RelField = Annotated[Rel, PlainSerializer(str, return_type=str)]
RelsField = Annotated[tuple[Rel, ...], PlainSerializer(_rels_text, return_type=list[str])]
EnvField = Annotated[
    dict[str, Fraction], PlainSerializer(lambda d: {k: str(v) for k, v in d.items()}, return_type=dict[str, str])
]


class ObligationKind(str, Enum):
    ARITHMETIC = "arithmetic"
    """A closed computation ``a op b = c`` (no free variables)."""
    IDENTITY = "identity"
    """``e1 = e2`` with variables, claimed to hold as expressions."""
    SUBSTITUTION = "substitution"
    """A relation over quantities whose values were established earlier: it must hold at those values."""
    DERIVATION = "derivation"
    """A relation derived from the previous relation(s): implication or at least consistency."""
    SOLUTION = "solution"
    """Claimed values ``x = v`` solve the stated equation(s)."""
    COVERAGE = "coverage"
    """The cases of a split exhaust the domain."""
    # Kinds of the language-model method (natural-language targets typed from one EdgeUnit).
    DERIVED_FACT = "derived_fact"
    """A new fact follows from the context before the edge."""
    REWRITE = "rewrite"
    """A rewrite, simplification or computation preserves meaning."""
    GOAL_REDUCTION = "goal_reduction"
    """Proving the new goal suffices for the old one."""
    FACT_PLUS_REDUCTION = "fact_plus_reduction"
    """A new fact and a goal change at once: checked as a derived fact, then a reduction."""
    CASE_SPLIT = "case_split"
    """The cases are valid and cover the domain."""
    BRANCH_ELIMINATION = "branch_elimination"
    """A discarded branch is impossible."""
    WITNESS = "witness"
    """A witness satisfies what it is chosen for."""
    CONTESTED_CLAIM = "contested_claim"
    """A claim a reviewer flagged is true."""
    ENTAILMENT = "entailment"
    """The context entails a bare assertion."""
    OVERLAP_PARTITION = "overlap_partition"
    """The cases form a proper partition (no overlap, no gap)."""
    JUSTIFICATION = "justification_faithfulness"
    """The stated reason for a branch consequence is the one the proof uses."""
    REVIEW = "review"
    """A local natural-language review of one EdgeUnit (judged, not proved)."""
    JUDGMENT = "judgment"
    """A whole-proof judgment: the direct judge or the final synthesis (judged, not proved)."""


class _ObligationBase(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    id: str
    """Obligation id, unique within one proof (``o12``)."""
    step: int
    """1-based source step."""
    span: tuple[int, int]
    """Character span ``[start, end)`` of the claim inside the step text."""
    edge: str
    """Id of the EdgeUnit this obligation came from."""
    source: str
    """The claim's source text, verbatim."""
    readings: RelsField = ()
    """Other readings of the claim in common use (``log`` base 10, degrees, ...): a refutation
    stands only if every reading is refuted too (``obligations.extraction.readings``)."""
    ambiguity: str = ""
    """What the text leaves open; with no ``readings``, a refutation is recorded ``unknown`` with it."""

    if TYPE_CHECKING:  # declared by every kind as a field; ``claim`` by the kinds that keep this ``claim_text``
        @property
        def kind(self) -> ObligationKind: ...

        @property
        def claim(self) -> Rel: ...

    def claim_text(self) -> str:
        """The obligation as checked, rendered: premises ⊢ claim."""
        return str(self.claim)

    def flag_kind(self) -> str:
        """What a refutation of this obligation rests on: ``false_as_written`` where the formula is false
        read literally (under every reading that stood), else the rule that made it a claim to refute."""
        return FALSE_AS_WRITTEN

    def evidence(self, outcome: Outcome, ms: float) -> Evidence:
        """The public record of checking this obligation with ``outcome`` in ``ms`` milliseconds."""
        common = dict(obligation=self.id, kind=self.kind, step=self.step, span=self.span,
                      source=self.source, claim=self.claim_text(), method=outcome.method, time_ms=round(ms, 3))
        if isinstance(outcome, Verified):
            return Evidence(**common, status="verified", reason=outcome.note or None)
        if isinstance(outcome, Refuted):
            return Evidence(**common, status="refuted", counterexample=outcome.counterexample,
                            reason=outcome.note or None, flag_kind=self.flag_kind())
        return Evidence(**common, status="unknown", reason=outcome.reason, counterexample=None)


FALSE_AS_WRITTEN = "false_as_written"
"""``Evidence.flag_kind`` of a refuted formula that is false read literally."""


class ArithmeticObligation(_ObligationBase):
    kind: Literal[ObligationKind.ARITHMETIC] = ObligationKind.ARITHMETIC
    claim: RelField
    """The closed relation to check."""
    approx: bool = False
    """Rounding to the precision shown is allowed (``≈``, 'about', decimals, percentages)."""
    rounded: tuple[str, ...] = ()
    """Literals in the claim that are themselves rounded results of earlier steps."""
    word_problem: bool = False
    """The problem is a word problem (no letters in its formulas): a value that cannot be written in the
    digits shown may be rounded to nearest, and money to cents (``exact._written_tolerance``)."""
    ceiling: bool = True
    """An integer written for a non-integer value may be its ceiling (whole items needed, in a word
    problem); when False, only rounding to nearest or truncation is read into it."""


class IdentityObligation(_ObligationBase):
    kind: Literal[ObligationKind.IDENTITY] = ObligationKind.IDENTITY
    claim: RelField
    """``e1 = e2`` over free variables."""
    asserted_identity: bool = False
    """The text says an identity is meant (expand, simplify, factor, ...): a non-identity is refuted."""
    asserted_by: str = ""
    """Why an identity is meant: ``stated`` (the text quantifies it: "for all x", "identically"), or the
    reading rule: ``display`` (a display continuing one expression), ``rewriting`` (expanding, simplifying,
    factoring), ``expansion`` (a product or power set equal to a sum), ``chain`` (a chain in one set of letters)."""

    def flag_kind(self) -> str:
        return FALSE_AS_WRITTEN if self.asserted_by in ("", "stated") else f"identity_by_{self.asserted_by}"


class SubstitutionObligation(_ObligationBase):
    kind: Literal[ObligationKind.SUBSTITUTION] = ObligationKind.SUBSTITUTION
    claim: RelField
    """The relation as written."""
    env: EnvField
    """Established values of its variables."""
    approx: bool = False
    """Rounding allowed, as for arithmetic."""
    origins: dict[str, str] = Field(default_factory=dict)
    """Where each value was established (``step 2: x = 5``)."""
    word_problem: bool = False
    """The problem is a word problem: rounding as for arithmetic (``ArithmeticObligation.word_problem``)."""

    def claim_text(self) -> str:
        return f"{', '.join(f'{k} = {show_number(v)}' for k, v in self.env.items())} ⊢ {self.claim}"

    def flag_kind(self) -> str:
        return "known_values"  # false at the values established earlier, not as a formula in its letters


class DerivationObligation(_ObligationBase):
    kind: Literal[ObligationKind.DERIVATION] = ObligationKind.DERIVATION
    premises: RelsField
    """The relations it is derived from."""
    claim: RelField
    """The derived relation."""
    integer_vars: tuple[str, ...] = ()
    """Variables known to be integers."""
    other_premises: RelsField = ()
    """Other relations the claim may be derived from: a refutation stands only when the claim
    contradicts each of them as well (``obligations.extraction.readings.reread``)."""

    def claim_text(self) -> str:
        return f"{'; '.join(str(p) for p in self.premises)} ⊢ {self.claim}"

    def flag_kind(self) -> str:
        return "does_not_follow"


class SolutionObligation(_ObligationBase):
    kind: Literal[ObligationKind.SOLUTION] = ObligationKind.SOLUTION
    equations: RelsField
    """The equation(s) being solved."""
    values: EnvField
    """The claimed solution."""
    approx: bool = False
    """Claimed values are rounded (decimals or ``≈``)."""
    decimals: int = 0
    """Decimal places shown in the claimed values."""
    listed: int = 0
    """The text lists this many distinct values as ALL the real roots of the equation (0: it claims
    only that this value is one)."""
    sole: bool = False
    """The step gives this one value as the letter's value ("so x = 3", no alternative beside it): a
    root of the equation it drops is named, and the claim is not verified while one may be dropped."""
    constraints: RelsField = ()
    """Inequalities on the letter read with the equation ("x > 0"): a root that violates one is not dropped."""

    def claim_text(self) -> str:
        vals = ", ".join(f"{k} = {show_number(v)}" for k, v in self.values.items())
        every = f" (the text lists {self.listed} distinct value(s) as all its real roots)" if self.listed else ""
        return f"{vals} solves {'; '.join(str(e) for e in self.equations)}{every}"

    def flag_kind(self) -> str:
        return "claimed_solution"


class CoverageObligation(_ObligationBase):
    kind: Literal[ObligationKind.COVERAGE] = ObligationKind.COVERAGE
    variable: str
    """The variable the cases split on."""
    cases: tuple[str, ...]
    """Case conditions as written, rendered (``n even``, ``x > 0``)."""
    conditions: RelsField = ()
    """Relational case conditions, flattened (parity cases use ``parity``)."""
    case_sizes: tuple[int, ...] = ()
    """How many of ``conditions`` belong to each case, in order (0 for a parity case)."""
    parity: tuple[str, ...] = ()
    """Residue conditions per case, in order: ``even``, ``odd`` or ``mod m r`` ("" when relational)."""
    domain: Literal["integer", "real"] = "real"
    """Domain of the variable."""
    domain_constraints: RelsField = ()
    """Constraints on the variable stated in the problem (e.g. ``n > 0``)."""
    domain_stated: bool = False
    """The text fixes the domain outright ("for every integer n"): every gap is refuted, not only
    those inside the range the cases mark out."""

    def claim_text(self) -> str:
        return f"cases {' | '.join(self.cases)} cover {self.variable} ∈ {self.domain}"

    def flag_kind(self) -> str:
        return "cases_do_not_cover"


Obligation = Annotated[
    Union[
        ArithmeticObligation, IdentityObligation, SubstitutionObligation, DerivationObligation,
        SolutionObligation, CoverageObligation,
    ],
    Field(discriminator="kind"),
]


# ---------------------------------------------------------------------------
# Checker outcomes: values, not exceptions
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Verified:
    method: str
    note: str = ""


@dataclass(frozen=True)
class Refuted:
    method: str
    counterexample: dict[str, str]
    note: str = ""


@dataclass(frozen=True)
class Unknown:
    method: str
    reason: str
    details: dict[str, str] = field(default_factory=dict)


Outcome = Union[Verified, Refuted, Unknown]


class Evidence(BaseModel):
    """The public record of one check on one obligation."""

    model_config = ConfigDict(frozen=True)

    obligation: str
    """Obligation id."""
    kind: ObligationKind
    """Obligation type."""
    step: int
    """1-based source step."""
    span: tuple[int, int]
    """Character span of the claim inside the step."""
    source: str
    """The claim's source text, verbatim."""
    claim: str
    """The obligation as checked, rendered (premises ⊢ claim)."""
    status: Literal["verified", "refuted", "unknown"]
    """Outcome of the check."""
    method: str
    """Checker that decided it (``exact``, ``exact-rounding``, ``sympy``, ``random-points``, ``z3``, ...)."""
    counterexample: dict[str, str] | None = None
    """For ``refuted``: the values that show the claim false, confirmed exactly."""
    reason: str | None = None
    """For ``unknown``: why no decision; for others, a short note."""
    time_ms: float = 0.0
    """Time spent checking."""
    flag_kind: str | None = None
    """For ``refuted``: ``false_as_written`` when the formula is false read literally under every reading,
    otherwise the rule that made it an error (``known_values``, ``does_not_follow``, ``claimed_solution``,
    ``cases_do_not_cover``, ``identity_by_rewriting``, ...), so an audit can tell a formula the data's label
    may have missed from a reasoning judgment."""
    suspect: str | None = None
    """For a refutation whose flag kind has not earned the right to decide (``obligations.kinds.flagtable``): why,
    with the kind's record on the reference bench. A ``suspect`` refutation is shown and counted, and given to
    llm mode as a prior; it never decides a verdict, a grader's step penalty or llm mode's floor."""
    edge: str | None = None
    """EdgeUnit the obligation came from (language-model method)."""
    basis: Literal["checked", "formalized", "formal", "reviewed", "judged"] = "checked"
    """What stands behind the status: ``checked`` by our exact/symbolic/SMT checkers on the
    literal formula the proof writes; ``formalized``, by the same checkers on a statement the model
    wrote (admitted only through the faithfulness gate); ``formal``, a Lean statement that passed the gate;
    ``reviewed``, a local LLM review; ``judged``, a whole-proof LLM judgment."""
    faithfulness: float | None = None
    """S_faith of the formal statement, when one was scored."""
    drift: tuple[str, ...] = ()
    """Drift categories the faithfulness gate reported (``missing_assumptions``, ``wrong_direction``, ...)."""
    statement: str | None = None
    """The formal statement or equation that was checked, when one was written."""
    raw: str | None = None
    """The model's raw answer, kept when it could not be parsed."""


class NLObligation(BaseModel):
    """A natural-language obligation typed from one EdgeUnit by the language-model method."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Obligation id, unique within one proof (``u3.o1``)."""
    edge: str
    """EdgeUnit it checks."""
    step: int
    """1-based original step of that EdgeUnit."""
    span: tuple[int, int] = (0, 0)
    """Span of the EdgeUnit in its step."""
    source: str = ""
    """The EdgeUnit's source text."""
    kind: ObligationKind
    """One of the method's kinds (``derived_fact`` ... ``overlap_partition``)."""
    premises: tuple[str, ...] = ()
    """Context the claim may use: conditions of the before-state, branch hypotheses. Never a fact
    introduced by the same edge that has not itself been checked."""
    claim: str
    """What must hold, in words and formulas."""
    equation: str | None = None
    """The claim as a bare formula when it is pure mathematics (for our own checkers)."""
    use_formal: bool = True
    """Worth a formal statement (Lean) when a kernel is configured."""
    translation_confidence: float = 0.5
    """How confident the typer is that the claim can be formalized faithfully."""
    priority: float = 0.5
    """Order among obligations of the window (higher first when the budget is short)."""
    reason: str = ""
    """Why this obligation was generated."""

    def text(self) -> str:
        """``premises ⊢ claim`` as one line."""
        return f"{'; '.join(self.premises)} ⊢ {self.claim}" if self.premises else self.claim
