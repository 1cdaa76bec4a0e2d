"""Calculator annotations as exact arithmetic, read by ``faithsieve.mathtext`` (never evaluated as code).

An annotation expression (the part of ``<<16-3-4=9>>`` before ``=``) is numbers, ``+ - * /``,
unary minus and parentheses. ``parse`` checks that grammar in one left-to-right pass whose
numbers come from the one number-literal reader (``mathtext.literals``), and hands the tokens to
``mathtext``'s parser: the tree is a ``mathtext.ast`` expression whose literals carry the span
where they were written, so a rewrite can replace exactly those characters. ``value`` walks it
with ``Fraction``. Every size is bounded: text length, number length, nesting depth, leaf count and
the bit length of every intermediate value. Anything else raises ``ArithError``.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from faithsieve.core.errors import FaithSieveError
from faithsieve.datasets.injection.tokens import ArithError
from faithsieve.mathtext.ast import BinOp, Expr, Neg, Num
from faithsieve.mathtext.lexer import LP, NUM, OP, RP, Token
from faithsieve.mathtext.literals import PLAIN, number_pattern, read_number
from faithsieve.mathtext.parser import parse_tokens

MAX_CHARS = 200
"""Longest expression accepted."""
MAX_NUMBER_CHARS = 24
"""Longest single number accepted."""
MAX_ANNOTATION_NESTING = 24
"""Deepest nesting of parentheses and unary minus."""
MAX_LEAVES = 40
"""Most numbers in one expression."""
MAX_BITS = 256
"""Largest bit length of a numerator or denominator produced while computing."""


Lit = Num
"""A number as written, at ``[start, end)`` of the expression text (a ``mathtext`` literal)."""
Node = Expr
"""An annotation's tree: ``Num``, ``BinOp`` (``+ - * /``) and ``Neg`` of ``mathtext.ast``."""


def number_value(text: str) -> Fraction:
    """``"1,200.50"`` -> ``Fraction(2401, 2)``: digits, one optional point, thousands commas."""
    plain = text.replace(",", "")
    if not plain or len(plain) > MAX_NUMBER_CHARS or not number_pattern(PLAIN).fullmatch(plain):
        raise ArithError(f"not a plain number: {text[:30]!r}")
    return Fraction(plain)


class _Reader:
    """The annotation grammar checked over the text, as mathtext tokens (all marked spaced, so
    mathtext reads no juxtaposition as a product)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.leaves = 0
        self.toks: list[Token] = []
        self.opened: list[int] = []  # the depth of each open parenthesis' enclosing expression

    def peek(self) -> str:
        text = self.text
        while self.pos < len(text) and text[self.pos] == " ":
            self.pos += 1
        return text[self.pos] if self.pos < len(text) else ""

    def emit(self, kind: str, value: str, length: int) -> None:
        self.toks.append(Token(kind, value, self.pos, self.pos + length, True))
        self.pos += length

    def operand(self, depth: int) -> None:
        """An operand at nesting ``depth``: unary minuses and open parentheses, then a number."""
        while True:
            if depth > MAX_ANNOTATION_NESTING:
                raise ArithError("expression nested too deeply")
            c = self.peek()
            if c == "-":
                self.emit(OP, "-", 1)
                depth += 1
            elif c == "(":
                self.emit(LP, "(", 1)
                depth += 1
                self.opened.append(depth)
            else:
                break
        lit = read_number(self.text, self.pos, PLAIN)
        if lit is None:
            raise ArithError(f"unexpected {c!r} at {self.pos}" if c else "expression ends too early")
        self.leaves += 1
        if self.leaves > MAX_LEAVES:
            raise ArithError(f"more than {MAX_LEAVES} numbers")
        number_value(lit.text)
        self.emit(NUM, lit.text, len(lit.text))

    def read(self) -> list[Token]:
        depth = 0
        self.operand(depth)
        while True:
            c = self.peek()
            if c in ("+", "-", "*", "/"):
                self.emit(OP, c, 1)
                if c in ("*", "/") and self.peek() == "*":
                    raise ArithError("powers are not supported")
                self.operand(self.opened[-1] if self.opened else 0)
            elif self.opened:
                if c != ")":
                    raise ArithError("unbalanced parenthesis")
                self.emit(RP, ")", 1)
                self.opened.pop()
            elif c:
                raise ArithError(f"unexpected {c!r} at {self.pos}")
            else:
                return self.toks


def parse(text: str) -> Node:
    """The tree of ``text``; raises ``ArithError`` when it is not bounded plain arithmetic."""
    if len(text) > MAX_CHARS:
        raise ArithError(f"expression longer than {MAX_CHARS} characters")
    toks = _Reader(text).read()
    try:
        chain, _ = parse_tokens(toks, latex=False)
    except FaithSieveError as exc:  # the grammar above is a subset of mathtext's: not expected
        raise ArithError(exc.message) from None
    return chain.exprs[0]


def leaves(node: Node) -> list[Lit]:
    """The numbers of ``node`` in writing order."""
    out: list[Lit] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Num):
            out.append(n)
        elif isinstance(n, Neg):
            stack.append(n.operand)
        elif isinstance(n, BinOp):
            stack.extend((n.right, n.left))
    return out


def _binary(n: Node) -> BinOp:
    """``n`` as the ``+ - * /`` node it is in every tree ``parse`` builds."""
    if not isinstance(n, BinOp) or n.op not in ("+", "-", "*", "/"):
        raise ArithError(f"not an annotation node: {type(n).__name__}")
    return n


def term(node: Node, leaf_terms: list[Any]) -> tuple[Any, list[Any]]:
    """``node`` built over ``leaf_terms`` (writing order) with their own ``+ - * /`` (z3 or sympy terms),
    and every divisor in it."""
    it = iter(leaf_terms)
    divisors: list[Any] = []

    def go(n: Node) -> Any:
        if isinstance(n, Lit):
            return next(it)
        if isinstance(n, Neg):
            return -go(n.operand)
        n = _binary(n)
        a, b = go(n.left), go(n.right)
        if n.op == "/":
            divisors.append(b)
            return a / b
        return a + b if n.op == "+" else (a - b if n.op == "-" else a * b)

    return go(node), divisors


def _guard(x: Fraction) -> Fraction:
    if x.numerator.bit_length() > MAX_BITS or x.denominator.bit_length() > MAX_BITS:
        raise ArithError("intermediate value too large")
    return x


def value(node: Node, leaf_value: Callable[[int, Lit], Fraction] | None = None) -> Fraction:
    """Exact value of ``node``. ``leaf_value(i, lit)`` may give the i-th leaf (writing order) another
    value than the one written, which is how a rewrite recomputes an annotation."""
    counter = [0]

    def go(n: Node) -> Fraction:
        if isinstance(n, Lit):
            i = counter[0]
            counter[0] += 1
            return _guard(leaf_value(i, n) if leaf_value else n.value)
        if isinstance(n, Neg):
            return -go(n.operand)
        n = _binary(n)
        a, b = go(n.left), go(n.right)
        if n.op == "+":
            return _guard(a + b)
        if n.op == "-":
            return _guard(a - b)
        if n.op == "*":
            return _guard(a * b)
        if b == 0:
            raise ArithError("division by zero")
        return _guard(a / b)

    return go(node)


def decimal_text(x: Fraction, max_decimals: int = 6) -> str | None:
    """``x`` written as a plain decimal (``"2.5"``, ``"-3"``), or ``None`` when it needs more than
    ``max_decimals`` digits after the point (or does not terminate)."""
    sign = "-" if x < 0 else ""
    x = abs(x)
    for d in range(max_decimals + 1):
        scaled = x * 10 ** d
        if scaled.denominator == 1:
            n = scaled.numerator
            if d == 0:
                return f"{sign}{n}"
            whole, frac = divmod(n, 10 ** d)
            return f"{sign}{whole}.{frac:0{d}d}"
    return None
