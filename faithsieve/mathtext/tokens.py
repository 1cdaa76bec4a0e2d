"""The token type both tokenizers make, and its kinds (``faithsieve.mathtext.lexer`` re-exports them)."""

from __future__ import annotations

from typing import NamedTuple

# Token kinds
NUM, VAR, CONST, OP, POW, LP, RP, LB, RB, REL, BANG, PCT, FUNC, BAR, SUB, BREAK, DEG = (
    "NUM", "VAR", "CONST", "OP", "POW", "LP", "RP", "LB", "RB", "REL", "BANG", "PCT",
    "FUNC", "BAR", "SUB", "BREAK", "DEG",
)
UNIT = "UNIT"
COMMA = "COMMA"
"""A comma between the arguments of a function of several arguments (``\\gcd(12, 18)``)."""
RATIO = "RATIO"
"""The colon of ratio notation ``a : b = c : d`` (the quotient ``a / b``)."""
TO = "TO"
"""The arrow of a limit's subscript (``\\lim_{x \\to 0}``), read only inside that subscript."""
INF = "INF"
"""``\\infty`` inside the scripts of ``\\lim`` or ``\\int``: where a bound variable tends or ranges."""
PRIME = "PRIME"
"""A prime right after a closing parenthesis: the derivative of the bracket (``(x^5)'``)."""
LEVAL, EVALBAR = "LEVAL", "EVALBAR"
"""``\\left.`` and ``\\right|`` before a subscript: the bracket of ``\\left. F \\right|_{x=a}``, F at ``x = a``."""
LSET, RSET = "LSET", "RSET"
"""LaTeX's ``\\{`` and ``\\}``: braces around a number are its fractional part."""


class Token(NamedTuple):
    """One token. A named tuple: the tokenizers make one per word and symbol of every step, and a
    tuple is several times cheaper to build than a frozen dataclass."""

    kind: str
    value: str
    start: int
    end: int
    space_before: bool = False
    flags: str = ""  # "m": came from a multi-letter run in LaTeX (possibly a unit)
