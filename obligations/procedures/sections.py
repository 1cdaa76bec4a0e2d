"""Derivations in one real variable, decided exactly (``lines`` + ``realroots``).

The SMT check of a derivation "premises ⇒ claim" asks whether "premises ∧ ¬claim" and
"premises ∧ claim" are satisfiable. When every relation is in the SMT fragment without ``abs``
(``lines``) and all of them together have one variable, which is not an integer variable, both
questions are about real numbers. ``lines.conditions`` turns each into polynomial sign
conditions that hold exactly where the query holds, at every point where no divisor vanishes;
``realroots.satisfiable`` answers those exactly. Then:

* ``"independent"``: both sets of conditions have a real solution. Each is a point of its SMT
  query (no division by zero is read there), so both queries are satisfiable and z3 never
  answers "unsat": the outcome "does not follow from the previous relation alone", which
  ``witness`` shows with rational points and this shows where the points are irrational
  (``x^2 - 3x = 1`` then ``x > 0``: one root of the premise is positive, the other negative).
* ``"follows"``: "premises ∧ ¬claim" has no real solution away from the divisors' roots, and
  none at them either, because either no divisor has a real root, or the premises have no
  division (their conditions are exact everywhere) and fail at every real root of every
  divisor. The SMT query is then unsatisfiable over the reals. Real polynomial arithmetic is
  decidable and z3's procedure for it is complete (these queries are a few low-degree
  polynomials in one variable), so it answers "unsat": the outcome "follows from the previous
  relation" — the standard ``fastpaths.linear_derivation`` holds its non-linear "follows" to.
* ``"irrational"``: no division anywhere, "premises ∧ claim" has no real solution, and every
  real solution of "premises ∧ ¬claim" is an irrational root (``realroots.rational_root``; there
  is one at least). z3 then answers "sat" to the first query with a model whose value is an
  algebraic number, not a rational one (it has no other), and "unsat" to the second: the checker
  has no rational counterexample to show and goes on as it does after those two answers
  (``smt._gap_refutation``).
* ``"contradicted"`` (``univariate_decision``, with the point): no division anywhere, "premises ∧
  claim" has no real solution, and "premises ∧ ¬claim" has exactly one: one cell, a root, which
  is rational (``realroots.rational_value``; ``0.99B + 1.01B + B = 4500`` then ``3.01B = 4500``).
  That point is the only model of z3's first query, so z3 answers "sat" with it (a rational
  value, which its model shows as a rational numeral), and "unsat" to the second: the checker
  confirms the point exactly and refutes the claim with it as the counterexample — the
  refutation it makes after those two answers, byte for byte.
* None otherwise (another node, ``abs``, two or more variables, an integer variable, a bound
  reached, a claim that contradicts its premises at several points or along an interval — a
  refutation shows the solver's own model, so one is decided here only where z3 has no other
  model to choose): the solver decides as before.

Tried and left out (measured on ProcessBench): the same question along lines through fixed
points, for two to six variables, decided a few more derivations but cost more than z3 did on
them.
"""

from __future__ import annotations

from fractions import Fraction

from faithsieve.obligations.procedures import lines, realroots
from faithsieve.obligations.procedures.fastpaths import translates

from faithsieve.mathtext.ast import Rel, variables

MAX_RELATIONS = 4
"""Most relations (premises and claim together)."""

_OPS = realroots.OPS


def univariate_derivation(premises: list[Rel], claim: Rel, integer_vars: tuple[str, ...] = (),
                          shown: tuple[bool, bool] = (False, False)) -> str | None:
    """``"follows"``, ``"independent"``, ``"irrational"``, ``"contradicted"`` or None (undecided),
    as the module docstring states.
    ``shown``: whether points of "premises ∧ ¬claim" and of "premises ∧ claim" are already known
    (``witness`` points, which may lie where a divisor vanishes): a query shown satisfiable
    either way is satisfiable."""
    return univariate_decision(premises, claim, integer_vars, shown)[0]


def univariate_decision(premises: list[Rel], claim: Rel, integer_vars: tuple[str, ...] = (),
                        shown: tuple[bool, bool] = (False, False)) -> tuple[str | None, dict[str, Fraction] | None]:
    """``univariate_derivation``'s answer, and for ``"contradicted"`` the one point where the
    premises hold and the claim fails."""
    rels = [*premises, claim]
    if not premises or len(rels) > MAX_RELATIONS:
        return None, None
    names = set().union(*(variables(r.lhs) | variables(r.rhs) for r in rels))
    if len(names) != 1 or names & set(integer_vars) or not all(translates(r) for r in rels):
        return None, None
    (name,) = names
    found = lines.conditions(rels, name, {})
    if found is None:
        return None, None
    conds, divisors = found
    found_cells = realroots.cells([p for p, _ in conds] + divisors)
    if found_cells is None:
        return None, None
    return _decide(premises, claim, name, conds, divisors, found_cells, shown)


def _decide(premises: list[Rel], claim: Rel, name: str, conds: list[tuple[realroots.Poly1, str]],
            divisors: list[realroots.Poly1], found_cells: list[realroots.Cell],
            shown: tuple[bool, bool]) -> tuple[str | None, dict[str, Fraction] | None]:
    n = len(premises)
    ops = [op for _, op in conds]

    def premises_hold(row: tuple[int, ...]) -> bool:
        return all(_OPS[op](sign) for op, sign in zip(ops[:n], row, strict=False))

    def claim_holds(row: tuple[int, ...]) -> bool:
        return _OPS[claim.op](row[n])

    away = [c for c in found_cells if all(c.signs[len(conds):])]  # cells where no divisor vanishes
    failing = [c for c in away if premises_hold(c.signs) and not claim_holds(c.signs)]
    holds = shown[1] or any(premises_hold(c.signs) and claim_holds(c.signs) for c in away)
    if shown[0] or failing:
        if holds:
            return "independent", None
        if not divisors and len(failing) == 1 and failing[0].root is not None:
            point = realroots.rational_value(failing[0])  # the only point, a root: z3's only model
            if point is not None:
                return "contradicted", {name: point}
        irrational = not divisors and not shown[0] and \
            all(c.root is not None and realroots.rational_root(c) is False for c in failing)
        return ("irrational" if irrational else None), None
    at_roots = [c.signs for c in found_cells if not all(c.signs[len(conds):])]
    if not at_roots:
        return "follows", None  # no divisor has a real root
    alone = lines.conditions(list(premises), name, {})
    exact = alone is not None and not alone[1]  # the premises divide by nothing: exact at the roots too
    return ("follows" if exact and not any(premises_hold(row) for row in at_roots) else None), None
