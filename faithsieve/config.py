"""Settings: pydantic-settings with the ``FAITHSIEVE_`` prefix. Nothing reads the
environment at import time; build ``Settings()`` at an entry point (or explicitly in tests)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Runtime configuration of the pipeline and its limits."""

    model_config = SettingsConfigDict(env_prefix="FAITHSIEVE_", frozen=True, extra="ignore")

    proof_time_limit_s: float = Field(default=5.0, gt=0)
    """Wall-clock budget for checking one proof; obligations past it become ``unknown``."""
    obligation_time_limit_ms: int = Field(default=300, gt=0)
    """Time limit for one solver call (z3)."""
    max_steps: int = Field(default=200, gt=0)
    """Most steps accepted in one proof."""
    max_step_chars: int = Field(default=20_000, gt=0)
    """Most characters accepted in one step."""
    max_proof_chars: int = Field(default=200_000, gt=0)
    """Most characters accepted in problem plus proof."""
    max_exponent: int = Field(default=10_000, gt=0)
    """Largest integer exponent evaluated exactly."""
    max_factorial: int = Field(default=1_000, gt=0)
    """Largest factorial argument evaluated exactly."""
    max_bits: int = Field(default=20_000, gt=0)
    """Largest bit length of an exact intermediate value."""
    checkers: tuple[str, ...] = ("exact", "sympy", "z3")
    """Checkers to run, cheapest first (names from the checker registry)."""
