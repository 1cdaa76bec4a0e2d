""""Follows" for derivations whose relations are polynomial pieces (``abs`` split by the sign of
its argument, a quotient by whether its divisor vanishes), proved without a solver by exact
elimination.

The SMT check of a derivation answers "follows from the previous relation" when the query
"premises ∧ ¬claim" is unsatisfiable. This module proves that a query has no model, and says
nothing otherwise (False: the solver decides):

1. **Pieces.** Each side is read as the SMT translation computes it (``fastpaths.smt_term``): numbers,
   variables, ``+ - *``, ``p%`` as ``p/100``, integer powers as repeated products, ``abs(t)``,
   translated as ``If(t >= 0, t, -t)``, and ``a / b``. The result is a list of pieces, each a
   polynomial valid under conditions: for ``abs``, ``t >= 0`` with ``t`` and ``t < 0`` with ``-t``;
   for a quotient by a nonzero number, the exact quotient; for a divisor ``b`` with a variable,
   either a new unknown ``q`` with ``q·b = a`` (at a point where ``b ≠ 0`` the quotient is such a
   ``q``), or, with ``b = 0``, a new unknown ``z`` standing for SMT's value of ``a / 0`` (an
   unspecified value that depends on the dividend alone: ``witness``). An unknown is named
   after the polynomials it comes from, so a quotient met twice is one unknown, as it is one
   value in every model. Every model of the SMT query — a point, and the values it gives
   division by zero — satisfies, at every split (an ``abs`` argument, a divisor), the conditions
   of the branch the point takes there, with the unknowns at the model's values; so the query
   holds only where, for the pieces of those branches, the pieces' relations hold. The query is
   thus covered by a finite disjunction of conjunctions of polynomial sign conditions (a ``!=``
   and a negated ``=`` split into ``<`` and ``>``; combinations that take two branches at one
   split read no model and are dropped); it is unsatisfiable when every conjunction is.
2. **Premises not read** (a node outside the fragment, a bound reached) are left out. Leaving out a
   conjunct can only add points, so a query shown empty without it is empty with it. The claim
   is always read in full (its negation is not a relaxation).
3. **Each conjunction** is shown empty by relaxation: an equation linear in a variable ``v`` that
   occurs in it only as ``a·v`` (``a`` a nonzero number) is solved for ``v`` and substituted
   into the others (the same point set, one variable fewer); then every remaining monomial of
   degree two or more is renamed a fresh variable, constrained to be ``>= 0`` when all its
   exponents are even (a square is never negative; so is an even power as written, whose
   expansion is kept as a condition of its piece), and the linear system left is decided by
   Fourier–Motzkin elimination with strict and non-strict inequalities, exact over fractions
   (complete for linear real arithmetic). Every real point of the conjunction gives a point of
   the relaxed system (the monomials' values), so an empty relaxed system means an empty
   conjunction. An undecided system (bounds reached) leaves the whole answer undecided.

Then the query has no model over the reals, so none where the integer variables are integers
either, and z3 cannot answer "sat" (it reports a model). It answers "unsat": real arithmetic
with division is decidable (z3 itself reads ``a/b`` as a fresh ``q`` with ``b·q = a`` where
``b ≠ 0`` and a function of ``a`` where ``b = 0``, the construction above) and its procedure for
it is complete; these queries are small (``MAX_CASES`` conjunctions of a few polynomials of
degree at most ``MAX_DEGREE`` in at most ``MAX_NAMES`` variables and the unknowns of their
quotients), far inside the solver's resource limit, so it does not give up. With integer
variables the solver works in integer arithmetic, complete only where it is linear: there every
conjunction must be linear as read (a quotient by a variable is not), and a linear query with
no real point is one the solver's simplex rejects before any integer reasoning; otherwise the
answer is undecided.

Bounded: ``MAX_NAMES`` variables, ``MAX_CASES`` conjunctions per query, ``MAX_PIECES`` pieces per
side, ``MAX_ROWS`` inequalities during elimination, the degree and term bounds of
``polynomials.pmul`` and the bit limit of ``evaluate`` on every coefficient, ``MAX_FASTPATH_NESTING`` nesting.
"""

from __future__ import annotations

from fractions import Fraction
from functools import partial
from itertools import product

from faithsieve.obligations.procedures.fastpaths import smt_power
from faithsieve.obligations.procedures.polynomials import (
    MAX_FASTPATH_NESTING,
    Poly,
    pconst,
    pmul,
    pneg,
    psub,
)

from faithsieve.mathtext.ast import (
    BinOp,
    Call,
    Expr,
    Neg,
    Num,
    Pow,
    Rel,
    Var,
    variables,
)
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS

MAX_NAMES = 6
"""Most variables a derivation may have."""
MAX_PIECES = 16
"""Most pieces one side of a relation may split into."""
MAX_CASES = 64
"""Most conjunctions one query may split into."""
MAX_ROWS = 96
"""Most inequalities a system may hold during elimination."""
MAX_DEGREE = 8
"""Highest total degree of a monomial read."""

Atom = tuple[Poly, str]
"""``p R 0`` with R one of ``=``, ``>``, ``>=``."""
Choices = frozenset[tuple[str, bool]]
"""The branch taken at each split (an ``abs`` argument's sign, a divisor zero or not), by split."""
Piece = tuple[Poly, tuple[Atom, ...], Choices]
"""A polynomial valid under sign conditions, and the branches they come from."""
Monomial = tuple[tuple[str, int], ...]
Row = tuple[Poly, Fraction, bool]
"""A linear inequality ``Σ a·m + c > 0`` (strict) or ``>= 0``, each monomial ``m`` read as a variable."""

_ONE: Poly = {(): Fraction(1)}
_BITS = DEFAULT_LIMITS.max_bits


class _Outside(Exception):
    """A node outside what is read here, or a bound reached."""


def _checked(p: Poly | None) -> Poly:
    if p is None or any(c.numerator.bit_length() > _BITS or c.denominator.bit_length() > _BITS or
                        sum(k for _, k in m) > MAX_DEGREE for m, c in p.items()):
        raise _Outside
    return p


def _mul(a: Poly, b: Poly) -> Poly:
    return _checked(pmul(a, b))


def _canon(p: Poly) -> str:
    return repr(sorted(p.items()))


def _merged(a: Choices, b: Choices) -> Choices | None:
    """The choices of both, or None where they take different branches at one split (no model
    is read by such a combination: a point takes one branch at every split)."""
    both = a | b
    return None if len({key for key, _ in both}) < len(both) else both


def _var(name: str) -> Poly:
    return {((name, 1),): Fraction(1)}


def _pieces(e: Expr, depth: int = 0) -> list[Piece]:
    """``e`` as pieces (module docstring, 1); ``_Outside`` where it cannot be read."""
    if depth > MAX_FASTPATH_NESTING:
        raise _Outside
    if isinstance(e, Num):
        return [({(): e.value} if e.value else {}, (), frozenset())]
    if isinstance(e, Var):
        return [(_var(e.name), (), frozenset())]
    if isinstance(e, Neg):
        return [(pneg(p), c, ch) for p, c, ch in _pieces(e.operand, depth + 1)]
    if isinstance(e, Call) and e.fn == "percent" and len(e.args) == 1:
        return [({m: k / 100 for m, k in p.items()}, c, ch) for p, c, ch in _pieces(e.args[0], depth + 1)]
    if isinstance(e, Call) and e.fn == "abs" and len(e.args) == 1:
        return _abs_pieces(_pieces(e.args[0], depth + 1))
    if isinstance(e, Pow):
        times = smt_power(e.exponent)
        if times is None:
            raise _Outside
        return _power_pieces(_pieces(e.base, depth + 1), times)
    if isinstance(e, BinOp) and e.op in ("+", "-", "*", "/"):
        return _binop_pieces(e.op, _pieces(e.left, depth + 1), _pieces(e.right, depth + 1))
    raise _Outside


def _abs_pieces(args: list[Piece]) -> list[Piece]:
    """``abs`` of each piece: split by the sign of a piece that is not a number."""
    out: list[Piece] = []
    for p, c, ch in args:
        k = pconst(p)
        if k is not None:  # the branch z3's If takes everywhere
            out.append((p if k >= 0 else pneg(p), c, ch))
            continue
        key = "abs " + _canon(p)
        for branch, value, cond in ((True, p, (p, ">=")), (False, pneg(p), (pneg(p), ">"))):
            if (choices := _merged(ch, frozenset({(key, branch)}))) is not None:
                out.append((value, (*c, cond), choices))
    return _bounded(out)


def _power_pieces(bases: list[Piece], times: int) -> list[Piece]:
    """Each piece to the power ``times``, as repeated products."""
    out: list[Piece] = []
    for p, c, ch in bases:
        acc = _ONE
        for _ in range(times):
            acc = _mul(acc, p)
        # an even power is never negative: a condition true at every point, kept for the
        # elimination, where the expanded monomials no longer show it ("(x - y)^2 >= 0")
        even = times % 2 == 0 and pconst(acc) is None
        out.append((acc, (*c, (acc, ">=")) if even else c, ch))
    return out


def _binop_pieces(op: str, left: list[Piece], right: list[Piece]) -> list[Piece]:
    """``+ - * /`` of every pair of pieces whose choices agree."""
    out: list[Piece] = []
    for (a, ca, cha), (b, cb, chb) in product(left, right):
        choices = _merged(cha, chb)
        if choices is None:
            continue
        if op == "+":
            out.append((_checked(psub(a, pneg(b))), ca + cb, choices))
        elif op == "-":
            out.append((_checked(psub(a, b)), ca + cb, choices))
        elif op == "*":
            out.append((_mul(a, b), ca + cb, choices))
        else:
            out += _quotients(a, b, ca + cb, choices)
    return _bounded(out)

def _quotients(a: Poly, b: Poly, conds: tuple[Atom, ...], choices: Choices) -> list[Piece]:
    """``a / b`` as SMT computes it (module docstring, 1): the exact quotient by a nonzero number;
    where ``b`` has a variable, a new unknown ``q`` with ``q·b = a`` (wherever ``b`` is nonzero,
    ``q`` is the quotient) and, where ``b = 0``, a new unknown ``z`` for ``a/0`` (SMT's value of a
    division by zero depends on the dividend alone). The unknowns are named after the
    polynomials they come from, so a quotient met twice is one unknown, as in every model."""
    d = pconst(b)
    if d:
        return [(_checked({m: k / d for m, k in a.items()}), conds, choices)]
    zero = _var("\0z " + _canon(a))
    if d is not None:  # a divisor that is zero everywhere
        return [(zero, conds, choices)]
    key = "div " + _canon(a) + " / " + _canon(b)
    q = _var("\0q " + key)
    out: list[Piece] = []
    for branch, value, cond in ((True, q, (_checked(psub(_mul(q, b), a)), "=")), (False, zero, (b, "="))):
        if (merged := _merged(choices, frozenset({(key, branch)}))) is not None:
            out.append((value, (*conds, cond), merged))
    return out


def _bounded(pieces: list[Piece]) -> list[Piece]:
    if len(pieces) > MAX_PIECES:
        raise _Outside
    return pieces


def _relation(r: Rel, negated: bool) -> list[tuple[tuple[Atom, ...], Choices]]:
    """The conjunctions whose union is the set of points where ``r`` holds (fails, when ``negated``)."""
    op = r.op
    if negated:
        op = {"=": "!=", "!=": "=", "<": ">=", ">": "<=", "<=": ">", ">=": "<"}[op]
    out: list[tuple[tuple[Atom, ...], Choices]] = []
    for (a, ca, cha), (b, cb, chb) in product(_pieces(r.lhs), _pieces(r.rhs)):
        choices = _merged(cha, chb)
        if choices is None:
            continue
        d = _checked(psub(a, b))
        if op in ("=", ">", ">="):
            atoms: list[Atom] = [(d, op)]
        elif op in ("<", "<="):
            atoms = [(pneg(d), {"<": ">", "<=": ">="}[op])]
        else:  # "!=": one side or the other
            atoms = [(d, ">"), (pneg(d), ">")]
        out += [((*ca, *cb, atom), choices) for atom in atoms]
    if len(out) > MAX_CASES:
        raise _Outside
    return out


def follows(premises: list[Rel], claim: Rel, integer_vars: tuple[str, ...] = ()) -> bool:
    """True where "premises ∧ ¬claim" is shown to have no real point (and, with integer
    variables, every conjunction is linear): z3 answers "unsat", the outcome "follows from the
    previous relation"; False when not shown (the solver decides)."""
    return _empty_query([(claim, True)], premises, integer_vars)


def contradicts(premises: list[Rel], claim: Rel) -> bool:
    """True where "premises ∧ claim" is shown to have no real point: z3, asked over the reals,
    answers "unsat" (as for ``follows``); False when not shown. Any relation not read is left
    out (module docstring, 2)."""
    return _empty_query([], [*premises, claim], ())


def _empty_query(required: list[tuple[Rel, bool]], optional: list[Rel], integer_vars: tuple[str, ...]) -> bool:
    """The conjunction of ``required`` (each relation, negated where flagged) and of ``optional``
    shown to have no real point; a relation of ``optional`` that is not read is left out."""
    rels = [r for r, _ in required] + list(optional)
    names = set().union(*(variables(r.lhs) | variables(r.rhs) for r in rels))
    if len(names) > MAX_NAMES:
        return False
    try:
        query = [_relation(r, negated) for r, negated in required]
    except _Outside:
        return False
    for r in optional:
        try:
            query.append(_relation(r, False))
        except _Outside:
            continue  # a premise left out: a larger set of points (module docstring, 2)
    total = 1
    for conj in query:
        total *= len(conj)
    if not query or total > MAX_CASES:
        return False
    linear_only = bool(set(integer_vars) & names)
    for parts in product(*query):
        choices: Choices | None = frozenset()
        for _, ch in parts:
            choices = _merged(choices, ch) if choices is not None else None
        if choices is None:
            continue  # different branches at one split: no point is read this way
        system = [atom for part, _ in parts for atom in part]
        if linear_only and any(sum(k for _, k in m) > 1 for p, _ in system for m in p):
            return False
        if not empty(system):
            return False
    return True


def empty(system: list[Atom]) -> bool:
    """The conjunction of ``system`` has no real point, shown by substitution and relaxation
    (module docstring, 3); False when not shown."""
    try:
        rows = _substituted(list(system))
        if rows is None:
            return True
        return _eliminated(_linearized(rows))
    except _Outside:
        return False


def _holds(c: Fraction, op: str) -> bool:
    return c == 0 if op == "=" else c > 0 if op == ">" else c >= 0


def _substituted(system: list[Atom]) -> list[Atom] | None:
    """``system`` with every equation that is linear in some variable solved and substituted
    (the same point set); None where a constant atom is false (no point at all)."""
    while True:
        rows: list[Atom] = []
        for p, op in system:
            k = pconst(p)
            if k is None:
                rows.append((p, op))
            elif not _holds(k, op):
                return None
        solved = _solvable(rows)
        if solved is None:
            return rows
        i, v, value = solved
        system = [(_substitute(p, v, value), op) for j, (p, op) in enumerate(rows) if j != i]


def _solvable(rows: list[Atom]) -> tuple[int, str, Poly] | None:
    """An equation ``a·v + rest = 0`` (``a`` a number, ``v`` nowhere in ``rest``): its index,
    ``v`` and ``-rest/a``."""
    for i, (p, op) in enumerate(rows):
        if op != "=":
            continue
        for m, a in p.items():
            if len(m) == 1 and m[0][1] == 1:
                v = m[0][0]
                if all(mm == m or all(name != v for name, _ in mm) for mm in p):
                    return i, v, {mm: -c / a for mm, c in p.items() if mm != m}
    return None


def _substitute(p: Poly, v: str, value: Poly) -> Poly:
    out: Poly = {}
    for m, c in p.items():
        term: Poly = {tuple(x for x in m if x[0] != v): c}
        for _ in range(sum(k for name, k in m if name == v)):
            term = _mul(term, value)
        out = _checked(psub(out, pneg(term)))
    return out


def _linearized(rows: list[Atom]) -> list[Row]:
    """``rows`` as linear inequalities ``Σ a·x + c > 0`` (strict) or ``>= 0`` over the monomials read
    as variables, an equation as two inequalities, and ``m >= 0`` for each monomial whose
    exponents are all even."""
    out: list[Row] = []
    even: set[Monomial] = set()
    for p, op in rows:
        coeffs = {m: c for m, c in p.items() if m}
        const = p.get((), Fraction(0))
        even |= {m for m in coeffs if all(k % 2 == 0 for _, k in m)}
        if op == "=":
            out += [(coeffs, const, False), ({m: -c for m, c in coeffs.items()}, -const, False)]
        else:
            out.append((coeffs, const, op == ">"))
    out += [({m: Fraction(1)}, Fraction(0), False) for m in sorted(even, key=str)]
    return out


def _elimination_cost(rows: list[Row], x: Monomial) -> tuple[int, str]:
    """The rows eliminating ``x`` adds, then a fixed order."""
    pos = sum(1 for c, _, _ in rows if c.get(x, 0) > 0)
    neg = sum(1 for c, _, _ in rows if c.get(x, 0) < 0)
    return pos * neg - pos - neg, str(x)


def _eliminated(rows: list[Row]) -> bool:
    """Fourier–Motzkin: True when the inequalities have no common real point (a combination with
    nonnegative multipliers reaches a false constant), False when they have one or past
    ``MAX_ROWS``."""
    while True:
        rest = []
        for coeffs, const, strict in rows:
            if coeffs:
                rest.append((coeffs, const, strict))
            elif const < 0 or (strict and const == 0):
                return True
        if not rest:
            return False
        names = {x for coeffs, _, _ in rest for x in coeffs}
        x = min(names, key=partial(_elimination_cost, rest))
        pos = [r for r in rest if r[0].get(x, 0) > 0]
        neg = [r for r in rest if r[0].get(x, 0) < 0]
        rows = [r for r in rest if x not in r[0]]
        if len(rows) + len(pos) * len(neg) > MAX_ROWS:
            raise _Outside
        for (cp, kp, sp), (cn, kn, sn) in product(pos, neg):
            a, b = cp[x], -cn[x]
            coeffs = {}
            for y in cp.keys() | cn.keys():
                c = b * cp.get(y, 0) + a * cn.get(y, 0)
                if c:
                    coeffs[y] = c
            const = b * kp + a * kn
            if any(c.numerator.bit_length() > _BITS or c.denominator.bit_length() > _BITS
                   for c in (const, *coeffs.values())):
                raise _Outside
            rows.append((coeffs, const, sp or sn))
