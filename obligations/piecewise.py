""""Follows" for derivations whose relations are polynomial pieces (``abs`` split by the sign of
its argument), proved without a solver by exact elimination.

The SMT check of a derivation answers "follows from the previous relation" when the query
"premises ∧ ¬claim" is unsatisfiable. This module proves that a query has no real point, and
says nothing otherwise (None: the solver decides):

1. **Pieces.** Each side is read as the SMT translation computes it (``smt._z3_expr``): numbers,
   variables, ``+ - *``, ``p%`` as ``p/100``, integer powers as repeated products, division by a
   divisor that expands to a nonzero number (an exact division), and ``abs(t)``, translated as
   ``If(t >= 0, t, -t)``: a list of pieces, each a polynomial valid under sign conditions on the
   arguments of the ``abs`` met (``t >= 0`` with ``t``, ``t < 0`` with ``-t``). The pieces of a
   side cover every real point, so a relation holds at a point exactly when, for the piece whose
   conditions hold there, the piece's relation holds. The query is thus a finite disjunction of
   conjunctions of polynomial sign conditions (a ``!=`` and a negated ``=`` split into ``<`` and
   ``>``); it is unsatisfiable exactly when every conjunction is.
2. **Premises not read** (a divisor with a variable, another node) are left out. Leaving out a
   conjunct can only add points, so a query shown empty without it is empty with it. The claim
   is always read in full (its negation is not a relaxation).
3. **Each conjunction** is shown empty by relaxation: an equation linear in a variable ``v`` that
   occurs in it only as ``a·v`` (``a`` a nonzero number) is solved for ``v`` and substituted
   into the others (the same point set, one variable fewer); then every remaining monomial of
   degree two or more is renamed a fresh variable, constrained to be ``>= 0`` when all its
   exponents are even (a square is never negative), and the linear system left is decided by
   Fourier–Motzkin elimination with strict and non-strict inequalities, exact over fractions
   (complete for linear real arithmetic). Every real point of the conjunction gives a point of
   the relaxed system (the monomials' values), so an empty relaxed system means an empty
   conjunction. An undecided system (bounds reached) leaves the whole answer None.

Then the query has no real point, so none where the integer variables are integers either. z3
answers "unsat" to it: real arithmetic is decidable and z3's procedure for it is complete, and
these queries are small (``MAX_CASES`` conjunctions of at most a few low-degree polynomials in
at most ``MAX_NAMES`` variables, far inside the solver's resource limit), so it does not give up.
With integer variables the solver works in integer arithmetic, complete only where it is linear:
there every conjunction must be linear as read (before any renaming), where z3's integer
arithmetic is complete; otherwise None.

Bounded: ``MAX_NAMES`` variables, ``MAX_CASES`` conjunctions per query, ``MAX_PIECES`` pieces per
side, ``MAX_ROWS`` inequalities during elimination, the degree and term bounds of
``fastpaths._pmul`` and the bit limit of ``evaluate`` on every coefficient, ``MAX_DEPTH`` nesting.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product

from faithsieve.mathtext.ast import BinOp, Call, Expr, Neg, Num, Pow, Var, variables
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS
from faithsieve.obligations.fastpaths import MAX_DEPTH, Poly, _pmul, _sub, smt_power
from faithsieve.obligations.models import Rel

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
Piece = tuple[Poly, tuple[Atom, ...]]
"""A polynomial valid under sign conditions."""

_ONE: Poly = {(): Fraction(1)}
_BITS = DEFAULT_LIMITS.max_bits


class _Outside(Exception):
    """A node outside what is read here, or a bound reached."""


def _neg(p: Poly) -> Poly:
    return {m: -c for m, c in p.items()}


def _checked(p: Poly | None) -> Poly:
    if p is None or any(c.numerator.bit_length() > _BITS or c.denominator.bit_length() > _BITS or
                        sum(k for _, k in m) > MAX_DEGREE for m, c in p.items()):
        raise _Outside
    return p


def _mul(a: Poly, b: Poly) -> Poly:
    return _checked(_pmul(a, b))


def _const(p: Poly) -> Fraction | None:
    return p.get((), Fraction(0)) if all(not m for m in p) else None


def _pieces(e: Expr, depth: int = 0) -> list[Piece]:
    """``e`` as pieces (module docstring, 1); ``_Outside`` where it cannot be read."""
    if depth > MAX_DEPTH:
        raise _Outside
    if isinstance(e, Num):
        return [({(): e.value} if e.value else {}, ())]
    if isinstance(e, Var):
        return [({((e.name, 1),): Fraction(1)}, ())]
    if isinstance(e, Neg):
        return [(_neg(p), c) for p, c in _pieces(e.operand, depth + 1)]
    if isinstance(e, Call) and e.fn == "percent" and len(e.args) == 1:
        return [({m: k / 100 for m, k in p.items()}, c) for p, c in _pieces(e.args[0], depth + 1)]
    if isinstance(e, Call) and e.fn == "abs" and len(e.args) == 1:
        out: list[Piece] = []
        for p, c in _pieces(e.args[0], depth + 1):
            k = _const(p)
            if k is not None:  # the branch z3's If takes everywhere
                out.append((p if k >= 0 else _neg(p), c))
            else:
                out += [(p, (*c, (p, ">="))), (_neg(p), (*c, (_neg(p), ">")))]
        return _bounded(out)
    if isinstance(e, Pow):
        times = smt_power(e.exponent)
        if times is None:
            raise _Outside
        out = []
        for p, c in _pieces(e.base, depth + 1):
            acc = _ONE
            for _ in range(times):
                acc = _mul(acc, p)
            out.append((acc, c))
        return out
    if isinstance(e, BinOp) and e.op in ("+", "-", "*", "/"):
        left, right = _pieces(e.left, depth + 1), _pieces(e.right, depth + 1)
        out = []
        for (a, ca), (b, cb) in product(left, right):
            if e.op == "+":
                v = _checked(_sub(a, _neg(b)))
            elif e.op == "-":
                v = _checked(_sub(a, b))
            elif e.op == "*":
                v = _mul(a, b)
            else:
                d = _const(b)
                if not d:  # a divisor with a variable, or zero (SMT leaves x/0 open)
                    raise _Outside
                v = _checked({m: k / d for m, k in a.items()})
            out.append((v, ca + cb))
        return _bounded(out)
    raise _Outside


def _bounded(pieces: list[Piece]) -> list[Piece]:
    if len(pieces) > MAX_PIECES:
        raise _Outside
    return pieces


def _relation(r: Rel, negated: bool) -> list[tuple[Atom, ...]]:
    """The conjunctions whose union is the set of points where ``r`` holds (fails, when ``negated``)."""
    op = r.op
    if negated:
        op = {"=": "!=", "!=": "=", "<": ">=", ">": "<=", "<=": ">", ">=": "<"}[op]
    out: list[tuple[Atom, ...]] = []
    for (a, ca), (b, cb) in product(_pieces(r.lhs), _pieces(r.rhs)):
        d = _checked(_sub(a, b))
        if op in ("=", ">", ">="):
            atoms: list[Atom] = [(d, op)]
        elif op in ("<", "<="):
            atoms = [(_neg(d), {"<": ">", "<=": ">="}[op])]
        else:  # "!=": one side or the other
            atoms = [(d, ">"), (_neg(d), ">")]
        out += [(*ca, *cb, atom) for atom in atoms]
    if len(out) > MAX_CASES:
        raise _Outside
    return out


def follows(premises: list[Rel], claim: Rel, integer_vars: tuple[str, ...] = ()) -> bool:
    """True where "premises ∧ ¬claim" is shown to have no real point (and, with integer
    variables, every conjunction is linear): z3 answers "unsat", the outcome "follows from the
    previous relation"; False when not shown (the solver decides)."""
    names = set().union(*(variables(r.lhs) | variables(r.rhs) for r in [*premises, claim]))
    if len(names) > MAX_NAMES:
        return False
    try:
        query = [_relation(claim, True)]
    except _Outside:
        return False
    for p in premises:
        try:
            query.append(_relation(p, False))
        except _Outside:
            continue  # a premise left out: a larger set of points (module docstring, 2)
    total = 1
    for conj in query:
        total *= len(conj)
    if total > MAX_CASES:
        return False
    linear_only = bool(set(integer_vars) & names)
    for parts in product(*query):
        system = [atom for part in parts for atom in part]
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
            k = _const(p)
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
        out = _checked(_sub(out, _neg(term)))
    return out


def _linearized(rows: list[Atom]) -> list[tuple[dict[object, Fraction], Fraction, bool]]:
    """``rows`` as linear inequalities ``Σ a·x + c > 0`` (strict) or ``>= 0`` over the monomials read
    as variables, an equation as two inequalities, and ``m >= 0`` for each monomial whose
    exponents are all even."""
    out: list[tuple[dict[object, Fraction], Fraction, bool]] = []
    even: set[object] = set()
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


def _eliminated(rows: list[tuple[dict[object, Fraction], Fraction, bool]]) -> bool:
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

        def cost(x: object) -> tuple[int, str]:  # rows the elimination adds, then a fixed order
            pos = sum(1 for c, _, _ in rest if c.get(x, 0) > 0)
            neg = sum(1 for c, _, _ in rest if c.get(x, 0) < 0)
            return pos * neg - pos - neg, str(x)

        x = min(names, key=cost)
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
