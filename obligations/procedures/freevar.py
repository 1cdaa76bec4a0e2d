""""Not an identity" without ``together``: a variable that enters the claim only polynomially.

The sympy checker calls a claim "not an identity" when the numerator ``N`` that ``together`` +
``fraction`` + ``expand`` leave for ``lhs - rhs`` is not a number. ``polynomial_variable`` proves
that for claims with radicals, trigonometry, logarithms or absolute values, cheaply, from the
syntax, when some variable ``s`` is *free*:

* ``s`` occurs only in the polynomial skeleton of the claim: never inside a function, a root,
  a power other than a small non-negative integer one, an exponent or a divisor; and
* as a polynomial in ``s`` (every other non-polynomial part an opaque atom, equal atoms equal
  subtrees), ``lhs - rhs`` has some power ``s^k``, ``k >= 1``, whose coefficient ``q`` is a
  single term: a nonzero rational times powers of other variables (nonzero off their
  coordinate planes) and of closed atoms that are nonzero numbers (``pi``, ``e``, ``i``, or
  values with square roots and pi that ``radicals`` reads as nonzero);

and the claim is *generically defined*: every divisor (the right operand of ``/`` or ``mod``,
the base of a negative power) is a rational function with a nonzero value at one exact point,
or a nonzero closed value with square roots and pi; every exponent is a rational number; the
argument of ``tan`` is a rational function (its poles are irrational: it meets them on a nowhere
dense set, or never), that of ``ln`` or ``log`` a rational function nonzero at that point;
every other function is one of ``sqrt``, ``root``, ``sin``, ``cos``, ``exp``, ``abs``,
``deg``, ``percent`` (finite wherever its argument is); and (checked on sympy's expressions by
the caller) no part is already infinite or undefined.

Why ``N`` is then not a number: the divisors are nonzero, and the atoms finite, on a dense open
set of points. ``together`` puts ``d = lhs - rhs`` over a product ``D`` of powers of its terms'
denominators, which are (sympy's forms of) the divisors and numbers and hold no ``s``; so on
that set ``N = c·D·d`` for a nonzero number ``c``, a polynomial in ``s`` whose ``s^k``
coefficient is ``c·D·q``, nonzero at such points off the planes where a variable of ``q`` is 0.
A number cannot vary with ``s``: ``N`` has a free symbol, and it is not 0. That is sympy's "not
an identity" (``_not_identity``), which the caller returns; anything outside these conditions
answers False and sympy decides as before.
"""

from __future__ import annotations

from fractions import Fraction

from faithsieve.obligations.procedures.fastpaths import rational_expr
from faithsieve.obligations.procedures.polynomials import (
    MAX_FASTPATH_NESTING,
    MAX_POWER,
    Poly,
    pconst,
    pmul,
    psub,
)
from faithsieve.obligations.procedures.radicals import radical_value

from faithsieve.core.errors import FaithSieveError
from faithsieve.mathtext.ast import (
    BinOp,
    Call,
    Const,
    Expr,
    Neg,
    Num,
    Pow,
    Var,
    variables,
)
from faithsieve.mathtext.evaluate import DEFAULT_LIMITS, Limits, evaluate

ATOM = "\x01"
"""First character of an atom's name (no variable name has it)."""

_ENTIRE = frozenset({"sqrt", "root", "sin", "cos", "exp", "abs", "deg", "percent"})
"""Functions finite wherever their argument is."""
_POLES = frozenset({"tan", "ln", "log"})
"""Functions with poles or a logarithmic singularity: read only of a rational-function argument."""


class _Reader:
    """One pass over a claim: the expansion of its polynomial skeleton, the variables met
    outside it, and whether it is generically defined."""

    def __init__(self, lim: Limits) -> None:
        self.lim = lim
        self.atoms: dict[Expr, str] = {}
        self.outside: set[str] = set()
        self.divisors: list[Expr] = []
        self.nonzero: set[str] = set()
        self.defined = True

    def atom(self, e: Expr) -> Poly:
        names = variables(e)
        self.outside |= names
        self.scan(e, 0)
        name = self.atoms.get(e)
        if name is None:
            name = self.atoms[e] = f"{ATOM}{len(self.atoms)}"
            if not names and (isinstance(e, Const) or radical_value(e, self.lim)):
                self.nonzero.add(name)  # pi, e, i, or a nonzero value with roots and pi
        return {((name, 1),): Fraction(1)}

    def scan(self, e: Expr, depth: int) -> None:
        """Record the divisors inside an atom and whether its functions are generically finite."""
        if depth > MAX_FASTPATH_NESTING:
            self.defined = False
            return
        if isinstance(e, BinOp):
            if e.op in ("/", "mod"):
                self.divisors.append(e.right)
            elif e.op not in ("+", "-", "*"):
                self.defined = False
            self.scan(e.left, depth + 1)
            self.scan(e.right, depth + 1)
        elif isinstance(e, Neg):
            self.scan(e.operand, depth + 1)
        elif isinstance(e, Pow):
            try:
                k = evaluate(e.exponent, None, self.lim)
            except FaithSieveError:
                self.defined = False
                return
            if k < 0:
                self.divisors.append(e.base)
            self.scan(e.base, depth + 1)
        elif isinstance(e, Call):
            if e.fn in _POLES:
                # tan of a rational function: its poles are irrational, a nowhere dense set of points;
                # a logarithm of one that is nonzero somewhere (checked with the divisors)
                if len(e.args) != 1 or not rational_expr(e.args[0]):
                    self.defined = False
                elif e.fn != "tan":
                    self.divisors.append(e.args[0])
            elif e.fn not in _ENTIRE:
                self.defined = False
            for a in e.args:
                self.scan(a, depth + 1)

    def expand(self, e: Expr, depth: int) -> Poly | None:
        if depth > MAX_FASTPATH_NESTING:
            return None
        if isinstance(e, Num):
            return {(): e.value} if e.value else {}
        if isinstance(e, Var):
            return {((e.name, 1),): Fraction(1)}
        if isinstance(e, Const):
            return self.atom(e)
        if isinstance(e, Neg):
            a = self.expand(e.operand, depth + 1)
            return None if a is None else {m: -c for m, c in a.items()}
        if isinstance(e, Call) and e.fn in ("percent", "deg") and len(e.args) == 1:
            a = self.expand(e.args[0], depth + 1)  # outside trigonometry a degree is the number itself
            return None if a is None else {m: c / 100 for m, c in a.items()} if e.fn == "percent" else a
        if isinstance(e, BinOp) and e.op in ("+", "-", "*"):
            return self._ring(e, depth)
        if isinstance(e, BinOp) and e.op == "/" and not variables(e.right):
            return self._quotient(e, depth)
        if isinstance(e, Pow) and isinstance(e.exponent, Num) and e.exponent.value.denominator == 1 \
                and 0 <= e.exponent.value.numerator <= MAX_POWER:
            return self._power(e, e.exponent.value.numerator, depth)
        return self.atom(e)

    def _ring(self, e: BinOp, depth: int) -> Poly | None:
        """``+``, ``-`` or ``*`` of two expansions."""
        a, b = self.expand(e.left, depth + 1), self.expand(e.right, depth + 1)
        if a is None or b is None:
            return None
        if e.op == "*":
            return pmul(a, b)
        return psub(a, b) if e.op == "-" else psub(a, {m: -c for m, c in b.items()})

    def _quotient(self, e: BinOp, depth: int) -> Poly | None:
        """A quotient by a divisor without variables: by its exact value, or by one opaque quantity."""
        a = self.expand(e.left, depth + 1)
        try:
            d = evaluate(e.right, None, self.lim)
        except FaithSieveError:
            return None if a is None else pmul(a, self.atom(BinOp("/", Num(Fraction(1), "1", 0), e.right)))
        self.divisors.append(e.right)
        return None if a is None or not d else {m: c / d for m, c in a.items()}

    def _power(self, e: Pow, times: int, depth: int) -> Poly | None:
        """A small non-negative integer power: repeated products, or the value of a power of a number."""
        base = self.expand(e.base, depth + 1)
        if base is None:
            return None
        if pconst(base) is not None:
            try:  # a power of a number: its exact value, or one opaque quantity
                v = evaluate(e, None, self.lim)
            except FaithSieveError:
                return self.atom(e)
            return {(): v} if v else {}
        out: Poly | None = {(): Fraction(1)}
        for _ in range(times):
            out = pmul(out, base) if out is not None else None
        return out

def _nonzero_somewhere(e: Expr, point: dict[str, Fraction], lim: Limits) -> bool:
    """``e`` is a nonzero closed value with roots and pi, or a rational function of its variables
    with a nonzero exact value at ``point``."""
    if not variables(e):
        v = radical_value(e, lim)
        return bool(v)
    if not rational_expr(e):
        return False
    try:
        return evaluate(e, point, lim) != 0
    except FaithSieveError:
        return False


def polynomial_variable(lhs: Expr, rhs: Expr, lim: Limits = DEFAULT_LIMITS) -> bool:
    """Some variable is free in ``lhs = rhs`` and the claim is generically defined (see the module
    docstring): sympy's numerator of ``together(lhs - rhs)`` is then not a number."""
    reader = _Reader(lim)
    a, b = reader.expand(lhs, 0), reader.expand(rhs, 0)
    if a is None or b is None or not reader.defined:
        return False
    d = psub(a, b)
    names = {v for m in d for v, _ in m if not v.startswith(ATOM)} - reader.outside
    if not names:
        return False
    coefficients: dict[tuple[str, int], Poly] = {}
    for m, c in d.items():
        for v, k in m:
            if v in names:
                rest = tuple(x for x in m if x[0] != v)
                coefficients.setdefault((v, k), {})[rest] = c
    if not any(len(p) == 1 and all(x in reader.nonzero or not x.startswith(ATOM) for x, _ in next(iter(p)))
               for p in coefficients.values()):
        return False
    point = {n: Fraction(2 * i + 3, 7 + 2 * i) for i, n in enumerate(sorted(variables(lhs) | variables(rhs)))}
    return all(_nonzero_somewhere(x, point, lim) for x in reader.divisors)
