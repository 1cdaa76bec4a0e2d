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
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer

from faithsieve.mathtext.ast import Expr, render


@dataclass(frozen=True, slots=True)
class Rel:
    """``lhs op rhs`` with op one of ``= != < > <= >= ~``."""

    lhs: Expr
    op: str
    rhs: Expr

    def __str__(self) -> str:
        return f"{render(self.lhs)} {'≈' if self.op == '~' else self.op} {render(self.rhs)}"


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


class ArithmeticObligation(_ObligationBase):
    kind: Literal[ObligationKind.ARITHMETIC] = ObligationKind.ARITHMETIC
    claim: RelField
    """The closed relation to check."""
    approx: bool = False
    """Rounding to the precision shown is allowed (``≈``, 'about', decimals, percentages)."""
    rounded: tuple[str, ...] = ()
    """Literals in the claim that are themselves rounded results of earlier steps."""


class IdentityObligation(_ObligationBase):
    kind: Literal[ObligationKind.IDENTITY] = ObligationKind.IDENTITY
    claim: RelField
    """``e1 = e2`` over free variables."""
    asserted_identity: bool = False
    """The text says an identity is meant (expand, simplify, factor, ...): a non-identity is refuted."""


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


class DerivationObligation(_ObligationBase):
    kind: Literal[ObligationKind.DERIVATION] = ObligationKind.DERIVATION
    premises: RelsField
    """The relations it is derived from."""
    claim: RelField
    """The derived relation."""
    integer_vars: tuple[str, ...] = ()
    """Variables known to be integers."""


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
