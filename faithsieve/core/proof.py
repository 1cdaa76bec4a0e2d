"""The pipeline's input: a problem and its proof, split into steps.

Frozen pydantic models with a docstring per field. Steps are numbered from 1 in every
public interface.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class Step(BaseModel):
    """One step of a proof as the user gave it."""

    model_config = _FROZEN

    index: int = Field(ge=1)
    """1-based step number."""
    text: str
    """The step text, verbatim."""
    offset: int = 0
    """Character offset of this step in the original proof text (0 when steps were given as a list)."""


class Proof(BaseModel):
    """A problem and its proof, split into steps."""

    model_config = _FROZEN

    problem: str
    """The problem statement (its numbers and equations are established facts)."""
    steps: tuple[Step, ...]
    """The proof's steps in order."""
