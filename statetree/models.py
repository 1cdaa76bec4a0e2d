"""Proof states and EdgeUnits: the nodes and edges of the proof-state tree."""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict


class TransitionType(str, Enum):
    """What one local reasoning transition does."""

    COMPUTATION = "computation"
    """Rewrite/computation: a link of an equation chain, ``a op b = c``."""
    DERIVATION = "derivation"
    """A new relation derived from earlier ones ("so", "therefore", "⇒")."""
    DEFINITION = "definition"
    """Introduces a name or value ("let x be ...", ``x = 5`` for a fresh x)."""
    CASE_SPLIT = "case_split"
    """Splits the goal into cases; each case is a child state."""
    CASE = "case"
    """Enters one case under its branch hypothesis."""
    CONCLUSION = "conclusion"
    """States the answer or closes the goal."""
    CLAIM = "claim"
    """A relation asserted without a detectable derivation (an equation set up, a fact)."""
    NARRATION = "narration"
    """Text with no checkable mathematics."""


class ProofState(BaseModel):
    """A node: hypotheses available and the goal still to prove."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Node id in the tree, e.g. ``s3``."""
    hypotheses: tuple[str, ...] = ()
    """Γ: established facts, rendered as text (equations, variable values, branch hypotheses)."""
    goal: str = ""
    """G: what remains to be shown (the problem's question until a conclusion closes it)."""
    branch: str = ""
    """Case label when this state lies inside a case split ("Case 1: n even"), else empty."""


class EdgeUnit(BaseModel):
    """An edge: one local reasoning transition taken from one step."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Edge id, e.g. ``e7``."""
    type: TransitionType
    """Transition type τ."""
    parent: str
    """Parent state id."""
    child: str
    """Child state id."""
    step: int
    """1-based source step."""
    span: tuple[int, int]
    """Character span ``[start, end)`` of the source text inside the step."""
    text: str
    """The source text of this transition, verbatim."""
