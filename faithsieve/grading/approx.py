"""Bounded floating-point evaluation of an answer's expression tree: the cost model's double-precision
probe (``faithsieve.mathtext.cost.approx``) under the grader's profile (``GRADER``).

Two uses, both cheap and bounded whatever the input:

* the magnitude guard: before an arbitrary-precision evaluation (``sympy.N``) the value is
  estimated in doubles; a value or an intermediate past ``MAX_MAGNITUDE`` (``\\exp(\\exp(\\exp(64)))``,
  ``10^{10^{10}}``) is never evaluated to many digits — that evaluation can take hours;
* identities that rational sample points cannot show (``\\tan^2 y + 1`` vs ``\\sec^2 y``): both sides
  are compared in doubles at fixed points, to a relative tolerance.
"""

from __future__ import annotations

from collections.abc import Mapping

from faithsieve.mathtext import cost
from faithsieve.mathtext.ast import Expr
from faithsieve.mathtext.cost import GRADER, close

__all__ = ["MAX_MAGNITUDE", "MAX_NODES", "approx", "close"]

MAX_MAGNITUDE = GRADER.max_magnitude
"""A value or intermediate larger than this (in absolute value) is 'too large to evaluate'."""
MAX_NODES = GRADER.float_nodes


def approx(e: Expr, env: Mapping[str, complex] | None = None) -> complex | None:
    """The value of ``e`` as a complex double (variables from ``env``), or None when it is too large,
    undefined, or uses a node this evaluator does not know."""
    return cost.approx(e, env, GRADER)
