"""A small, bounded abstract syntax for the formulas that proofs write.

Nodes are frozen dataclasses: cheap to build, hashable, never evaluated on
construction. ``render`` turns a node back into readable plain text for
evidence records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TypeVar, Union


@dataclass(frozen=True, slots=True)
class Num:
    """A numeric literal as written, at ``[start, end)`` of the text its tokens were read from
    (``-1`` when it was not read from text). The span takes no part in equality, hashing or
    ``repr``: two literals of the same value and writing are the same number wherever they stand."""

    value: Fraction
    text: str
    decimals: int  # digits after the decimal point as written (0 for integers)
    start: int = field(default=-1, compare=False, repr=False)
    end: int = field(default=-1, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Var:
    """A variable (single letter, optionally subscripted, or a Greek letter)."""

    name: str


@dataclass(frozen=True, slots=True)
class Const:
    """A named mathematical constant: ``pi`` or ``e``."""

    name: str


@dataclass(frozen=True, slots=True)
class BinOp:
    """``left op right`` with op in ``+ - * / mod``."""

    op: str
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True, slots=True)
class Neg:
    """Unary minus."""

    operand: "Expr"


@dataclass(frozen=True, slots=True)
class Pow:
    """``base ^ exponent``."""

    base: "Expr"
    exponent: "Expr"


@dataclass(frozen=True, slots=True)
class Call:
    """A known function applied to arguments: sqrt, root, factorial, abs, floor,
    ceil, binom, percent, and the opaque functions (sin, log, ...)."""

    fn: str
    args: tuple["Expr", ...]


@dataclass(frozen=True, slots=True)
class Calc:
    """A value of calculus over one bound variable ``var``: ``op`` is

    - ``diff``: the derivative of ``body`` in ``var``; with ``args == ()`` a function of ``var`` (so
      ``var`` stays free: ``d/dx x^3`` is ``3x^2``), with ``args == (a,)`` its value at ``a`` (``f'(2)``:
      ``var`` is bound);
    - ``int``: the definite integral of ``body`` over ``var`` from ``args[0]`` to ``args[1]``; with
      ``args == ()`` an indefinite integral (an antiderivative: a function of ``var``, which stays free);
    - ``lim``: the limit of ``body`` as ``var`` tends to ``args[0]``, or, with ``args == ()``, to
      ``side`` infinity (``side`` is ``+`` or ``-``); a one-sided limit at a point has ``side`` ``+``/``-``.

    In a definite ``int``, ``lim`` and a derivative at a point the variable is bound: it is never free in the node
    (``variables``), never substituted (``substitute``) and never a fact."""

    op: str
    body: "Expr"
    var: str
    args: tuple["Expr", ...] = ()
    side: str = ""


Expr = Union[Num, Var, Const, BinOp, Neg, Pow, Call, Calc]
_N = TypeVar("_N", Num, Var, Const, BinOp, Neg, Pow, Call, Calc)
"""One node type (``of_type``)."""

RELATIONS = ("=", "!=", "<", ">", "<=", ">=", "~")
"""Relation symbols after normalisation; ``~`` is "approximately equal"."""


@dataclass(frozen=True, slots=True)
class Chain:
    """``e0 r1 e1 r2 e2 ...``: a chain of relations, e.g. ``a = b = c`` or ``0 < x < 1``."""

    exprs: tuple[Expr, ...]
    rels: tuple[str, ...]

    def links(self) -> list[tuple[Expr, str, Expr]]:
        return [(self.exprs[i], self.rels[i], self.exprs[i + 1]) for i in range(len(self.rels))]


_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "mod": 2}


def render(e: Expr) -> str:
    """Plain-text rendering, parenthesised only where needed."""
    return _render(e, 0)


def _render(e: Expr, parent: int) -> str:
    if isinstance(e, BinOp):  # the commonest node first (the node types are disjoint, so order is free)
        p = _PREC[e.op]
        right_p = p + 1 if e.op in ("-", "/", "mod") else p
        s = f"{_render(e.left, p)} {e.op} {_render(e.right, right_p)}"
        return f"({s})" if p < parent else s
    if isinstance(e, Num):
        return str(e.value) if e.value.denominator != 1 and not e.decimals else e.text
    if isinstance(e, (Var, Const)):
        return e.name
    if isinstance(e, Neg):
        s = "-" + _render(e.operand, 3)
        return f"({s})" if parent >= 2 else s
    if isinstance(e, Pow):
        return f"{_render(e.base, 4)}^{_render(e.exponent, 4)}"
    if isinstance(e, Call):
        if e.fn == "factorial":
            return f"{_render(e.args[0], 4)}!"
        if e.fn == "percent":
            return f"{_render(e.args[0], 4)}%"
        if e.fn == "deg":
            return f"{_render(e.args[0], 4)}°"
        return f"{e.fn}({', '.join(_render(a, 0) for a in e.args)})"
    if isinstance(e, Calc):
        return render_calc(e)
    raise TypeError(f"not an expression node: {type(e).__name__}")


def render_calc(e: Calc) -> str:
    """``d/dx(x^3)``, ``d/dx(x^4)|x=2``, ``int(x^2, x, 0, 1)``, ``lim(sin(x) / x, x -> 0+)``."""
    body = _render(e.body, 0)
    if e.op == "diff":
        at = f"|{e.var}={_render(e.args[0], 0)}" if e.args else ""
        return f"d/d{e.var}({body}){at}"
    if e.op == "int":
        if not e.args:
            return f"int({body}, {e.var})"
        return f"int({body}, {e.var}, {_render(e.args[0], 0)}, {_render(e.args[1], 0)})"
    point = _render(e.args[0], 0) + e.side if e.args else f"{e.side}oo"
    return f"lim({body}, {e.var} -> {point})"


def render_chain(c: Chain) -> str:
    parts = [render(c.exprs[0])]
    for r, e in zip(c.rels, c.exprs[1:], strict=True):
        parts.append({"~": "≈"}.get(r, r))
        parts.append(render(e))
    return " ".join(parts)


def children(e: Expr) -> tuple[Expr, ...]:
    """Direct sub-expressions of a node."""
    if isinstance(e, BinOp):
        return (e.left, e.right)
    if isinstance(e, Neg):
        return (e.operand,)
    if isinstance(e, Pow):
        return (e.base, e.exponent)
    if isinstance(e, Call):
        return e.args
    if isinstance(e, Calc):
        return (e.body, *e.args)
    return ()


def walk(e: Expr) -> Iterator[Expr]:
    """Every node of ``e`` (iteratively: deep trees cannot exhaust the stack), in the order ``nodes`` lists them."""
    stack = [e]
    while stack:
        n = stack.pop()
        yield n
        _push_children(n, stack)


def nodes(e: Expr) -> list[Expr]:
    """Every node of ``e`` as a list: what ``list(walk(e))`` gives, without the generator."""
    out: list[Expr] = []
    stack = [e]
    while stack:
        n = stack.pop()
        out.append(n)
        _push_children(n, stack)
    return out


def map_nodes(e: Expr, f: Callable[[Expr], Expr]) -> Expr:
    """Rebuild ``e`` bottom-up, applying ``f`` to each rebuilt node (the readings of a formula, integer functions)."""
    if isinstance(e, BinOp):
        e = BinOp(e.op, map_nodes(e.left, f), map_nodes(e.right, f))
    elif isinstance(e, Neg):
        e = Neg(map_nodes(e.operand, f))
    elif isinstance(e, Pow):
        e = Pow(map_nodes(e.base, f), map_nodes(e.exponent, f))
    elif isinstance(e, Call):
        e = Call(e.fn, tuple(map_nodes(a, f) for a in e.args))
    return f(e)


def shown_tolerance(e: Expr) -> Fraction:
    """Rounding tolerance implied by how a literal side is written (one unit in the last place)."""
    if isinstance(e, Neg):
        return shown_tolerance(e.operand)
    if isinstance(e, Num) and e.decimals:
        return Fraction(1, 10**e.decimals)
    if isinstance(e, Call) and e.fn == "percent" and isinstance(e.args[0], Num):
        return shown_tolerance(e.args[0]) / 100 if e.args[0].decimals else Fraction(1, 100)
    return Fraction(0)


def of_type(e: Expr, cls: type[_N]) -> list[_N]:
    """The nodes of ``e`` whose type is exactly ``cls``, in ``nodes`` order (one stack, no generator: the
    checkers ask it of every relation, for the few node kinds they handle apart)."""
    out: list[_N] = []
    stack = [e]
    while stack:
        n = stack.pop()
        if type(n) is cls:
            out.append(n)
        _push_children(n, stack)
    return out


def nodes_within(exprs: Iterable[Expr], limit: int) -> bool:
    """The trees in ``exprs`` have at most ``limit`` nodes in all (stops counting past it)."""
    stack = list(exprs)
    count = 0
    while stack:
        count += 1
        if count > limit:
            return False
        _push_children(stack.pop(), stack)
    return True


def _push_children(n: Expr, stack: list[Expr]) -> None:
    """``stack.extend(children(n))``, exact node types first."""
    t = type(n)
    if t is Num or t is Var or t is Const:
        return
    if t is BinOp:
        stack.append(n.left)  # type: ignore[union-attr]
        stack.append(n.right)  # type: ignore[union-attr]
    elif t is Pow:
        stack.append(n.base)  # type: ignore[union-attr]
        stack.append(n.exponent)  # type: ignore[union-attr]
    elif t is Neg:
        stack.append(n.operand)  # type: ignore[union-attr]
    elif t is Call:
        stack.extend(n.args)  # type: ignore[union-attr]
    else:
        stack.extend(children(n))


def variables(e: Expr) -> frozenset[str]:  # noqa: C901 (one dispatch per node type, kept flat for speed)
    """Free variable names of an expression (the nodes ``walk`` visits, without the generator:
    the tree builder asks this of every formula)."""
    t = type(e)
    if t is Num or t is Const:
        return _NO_NAMES
    if t is Var:
        return frozenset((e.name,))  # type: ignore[union-attr]
    names: set[str] = set()
    stack = [e]
    pop, push = stack.pop, stack.append
    while stack:
        n = pop()
        t = type(n)  # exact types first (the common case); a subclass takes the isinstance branch below
        if t is BinOp:
            push(n.left)  # type: ignore[union-attr]
            push(n.right)  # type: ignore[union-attr]
        elif t is Num or t is Const:
            continue
        elif t is Var:
            names.add(n.name)  # type: ignore[union-attr]
        elif t is Pow:
            push(n.base)  # type: ignore[union-attr]
            push(n.exponent)  # type: ignore[union-attr]
        elif t is Neg:
            push(n.operand)  # type: ignore[union-attr]
        elif t is Call:
            stack.extend(n.args)  # type: ignore[union-attr]
        elif isinstance(n, Var):
            names.add(n.name)
        elif isinstance(n, BinOp):
            push(n.left)
            push(n.right)
        elif isinstance(n, Neg):
            push(n.operand)
        elif isinstance(n, Pow):
            push(n.base)
            push(n.exponent)
        elif isinstance(n, Call):
            stack.extend(n.args)
        elif t is Calc:
            names |= calc_variables(n)  # type: ignore[arg-type]
    return frozenset(names)


def calc_variables(e: Calc) -> frozenset[str]:
    """The free variables of a calculus value: those of its body and bounds, less the bound variable
    (a derivative as a function and an indefinite integral keep their variable free)."""
    inner = variables(e.body)
    if e.args or e.op == "lim":
        inner = inner - {e.var}
    for a in e.args:
        inner |= variables(a)
    return inner


_NO_NAMES: frozenset[str] = frozenset()


def literals(e: Expr) -> list[Num]:
    """Numeric literals of an expression."""
    return [n for n in nodes(e) if isinstance(n, Num)]


def functions(e: Expr) -> frozenset[str]:
    """Names of the functions applied in an expression."""
    return frozenset(n.fn for n in walk(e) if isinstance(n, Call))


def substitute(e: Expr, values: dict[str, Expr]) -> Expr:
    """Replace variables by expressions (no evaluation)."""
    if isinstance(e, Var):
        return values.get(e.name, e)
    if isinstance(e, BinOp):
        return BinOp(e.op, substitute(e.left, values), substitute(e.right, values))
    if isinstance(e, Neg):
        return Neg(substitute(e.operand, values))
    if isinstance(e, Pow):
        return Pow(substitute(e.base, values), substitute(e.exponent, values))
    if isinstance(e, Call):
        return Call(e.fn, tuple(substitute(a, values) for a in e.args))
    if isinstance(e, Calc):
        return _substitute_calc(e, values)
    return e


def _substitute_calc(e: Calc, values: dict[str, Expr]) -> Expr:
    """The bound variable is never replaced inside the body; a derivative as a function of its variable,
    given a value for it, becomes the derivative at that value; an indefinite integral is left as it is."""
    inner = {k: v for k, v in values.items() if k != e.var}
    body = substitute(e.body, inner) if inner else e.body
    args = tuple(substitute(a, values) for a in e.args)
    if e.op == "diff" and not e.args and e.var in values:
        args = (values[e.var],)
    return Calc(e.op, body, e.var, args, e.side)


def leftmost_operand(e: Expr) -> Expr:
    """The first leaf-ish operand of a sum/product: ``12`` in ``12 + 5``."""
    while isinstance(e, BinOp):
        e = e.left
    return e


@dataclass(frozen=True, slots=True)
class Rel:
    """``lhs op rhs`` with op one of ``= != < > <= >= ~``."""

    lhs: Expr
    op: str
    rhs: Expr

    def __str__(self) -> str:
        return f"{render(self.lhs)} {'≈' if self.op == '~' else self.op} {render(self.rhs)}"
