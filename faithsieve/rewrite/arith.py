"""Calculator annotations as exact arithmetic: a small bounded parser that never evaluates text as code.

An annotation expression (the part of ``<<16-3-4=9>>`` before ``=``) is numbers, ``+ - * /``,
unary minus and parentheses. ``parse`` turns it into a tree whose leaves remember where they
were written, so a rewrite can replace exactly those characters. ``value`` computes with
``Fraction``. Every size is bounded: text length, number length, nesting depth, leaf count and
the bit length of every intermediate value. Anything else raises ``ArithError``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Union

MAX_CHARS = 200
"""Longest expression accepted."""
MAX_NUMBER_CHARS = 24
"""Longest single number accepted."""
MAX_DEPTH = 24
"""Deepest nesting of parentheses and unary minus."""
MAX_LEAVES = 40
"""Most numbers in one expression."""
MAX_BITS = 256
"""Largest bit length of a numerator or denominator produced while computing."""

_NUMBER = re.compile(r"\d+(?:\.\d+)?|\.\d+")


class ArithError(ValueError):
    """The expression is not plain bounded arithmetic (or divides by zero)."""


@dataclass(frozen=True)
class Lit:
    """A number as written, at ``[start, end)`` of the expression text."""

    value: Fraction
    start: int
    end: int


@dataclass(frozen=True)
class Bin:
    op: str
    left: "Node"
    right: "Node"


@dataclass(frozen=True)
class Neg:
    operand: "Node"


Node = Union[Lit, Bin, Neg]


def number_value(text: str) -> Fraction:
    """``"1,200.50"`` -> ``Fraction(2401, 2)``: digits, one optional point, thousands commas."""
    plain = text.replace(",", "")
    if not plain or len(plain) > MAX_NUMBER_CHARS or not _NUMBER.fullmatch(plain):
        raise ArithError(f"not a plain number: {text[:30]!r}")
    return Fraction(plain)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.leaves = 0

    def peek(self) -> str:
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expr(self, depth: int) -> Node:
        node = self.term(depth)
        while self.peek() in ("+", "-"):
            op = self.text[self.pos]
            self.pos += 1
            node = Bin(op, node, self.term(depth))
        return node

    def term(self, depth: int) -> Node:
        node = self.unary(depth)
        while self.peek() in ("*", "/"):
            op = self.text[self.pos]
            self.pos += 1
            if self.peek() == "*":
                raise ArithError("powers are not supported")
            node = Bin(op, node, self.unary(depth))
        return node

    def unary(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise ArithError("expression nested too deeply")
        c = self.peek()
        if c == "-":
            self.pos += 1
            return Neg(self.unary(depth + 1))
        if c == "(":
            self.pos += 1
            node = self.expr(depth + 1)
            if self.peek() != ")":
                raise ArithError("unbalanced parenthesis")
            self.pos += 1
            return node
        m = _NUMBER.match(self.text, self.pos)
        if not m:
            raise ArithError(f"unexpected {c!r} at {self.pos}" if c else "expression ends too early")
        self.leaves += 1
        if self.leaves > MAX_LEAVES:
            raise ArithError(f"more than {MAX_LEAVES} numbers")
        self.pos = m.end()
        return Lit(number_value(m.group()), m.start(), m.end())


def parse(text: str) -> Node:
    """The tree of ``text``; raises ``ArithError`` when it is not bounded plain arithmetic."""
    if len(text) > MAX_CHARS:
        raise ArithError(f"expression longer than {MAX_CHARS} characters")
    p = _Parser(text)
    node = p.expr(0)
    if p.peek():
        raise ArithError(f"unexpected {p.peek()!r} at {p.pos}")
    return node


def leaves(node: Node) -> list[Lit]:
    """The numbers of ``node`` in writing order."""
    out: list[Lit] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Lit):
            out.append(n)
        elif isinstance(n, Neg):
            stack.append(n.operand)
        else:
            stack.extend((n.right, n.left))
    return out


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
