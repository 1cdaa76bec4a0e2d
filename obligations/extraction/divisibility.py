"""Divisibility, congruences of powers and multiplicative orders between written integers, read from
the step text.

``7 \\mid 91``, ``5 \\nmid 91``, "13 divides 91", "91 is divisible by 7", ``2^{10} \\equiv 1 \\pmod{11}``
and "the order of 2 modulo 7 is 3" (``\\operatorname{ord}_7(2) = 3``) are claims about integers that the
formula reader does not read as relations. Each becomes closed arithmetic obligations with the meaning
the notation fixes:

- ``a | b``: ``b mod a = 0``; ``a ∤ b``: ``b mod a ≠ 0`` (read only for ``a ≠ 0``);
- ``a^e ≡ r (mod n)``: ``(a^e − r) mod n = 0`` (the exact evaluator bounds the power);
- the order of ``a`` modulo ``n`` is ``k`` (for ``n ≥ 2``, ``k ≥ 1``): ``(a^k − 1) mod n = 0`` and, for
  each prime ``p`` dividing ``k``, ``(a^{k/p} − 1) mod n ≠ 0`` (the least such exponent is ``k`` exactly
  when both hold). Each is its own obligation, so the evidence names the part that fails.

Word negations ("does not divide") are left alone: the shared guard skips any sentence that denies,
supposes or tests, so only the symbol ``\\nmid`` states a non-divisibility here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from faithsieve.obligations.extraction.wordclaims import INT as _INT
from faithsieve.obligations.extraction.wordclaims import INT_FIRST as _INT_FIRST
from faithsieve.obligations.extraction.wordclaims import SEP as _SEP
from faithsieve.obligations.extraction.wordclaims import Found, closed_claims
from faithsieve.obligations.extraction.wordclaims import glued as _glued
from faithsieve.obligations.extraction.wordclaims import num as _num
from faithsieve.obligations.extraction.wordclaims import word as _word
from faithsieve.obligations.kinds.models import ArithmeticObligation

from faithsieve.core.proof import Proof
from faithsieve.mathtext.ast import BinOp, Expr, Pow, Rel

MAX_ORDER = 10**6
"""The largest order whose prime divisors are listed (trial division, at most a thousand steps)."""

# the divided number ends the operand: ``4 \mid 3k``, ``4 \mid 3(q + 1)``, ``7 \mid 2 \cdot 7`` divide more than it
_ENDS = r"(?![A-Za-z(\[{]|\s{0,2}(?:\\(?:cdot|times|left|frac|sqrt)|[*·×^/+\-−(]))"
_MID = re.compile(_INT_FIRST + _SEP + r"(\\mid|∣|\\nmid|∤|%s)" % _word(r"divides") + _SEP + _INT + _ENDS)
_DIVISIBLE = re.compile(_INT_FIRST + _SEP + r"is\s{1,3}(?:evenly\s{1,3})?divisible\s{1,3}by" + _SEP + _INT + _ENDS)
# an integer power written out: 2^{10}, 2^10, 3^{2}
_POWER = r"(?<![\d.,])(\d{1,9})\s{0,2}\^\s{0,2}(?:\{\s{0,2}(\d{1,6})\s{0,2}\}|(\d{1,6}))"
_MOD = r"(?:\(\s{0,3}(?:\\?mod|\\bmod|\\mathrm\{mod\}|\\text\{mod\}|\\operatorname\{mod\}|modulo)|\\pmod|\\mod|\\bmod|\bmod|\bmodulo)\s{0,3}\{?\s{0,3}"
_POWER_CONGRUENT = re.compile(_POWER + _SEP + r"(?:≡|\\equiv)" + _SEP + r"([-−]?)" + _INT + _SEP + _MOD + _INT)
_ORDER_WORDS = re.compile(r"(?i)\b(?:multiplicative\s{1,3})?order\s{1,3}of" + _SEP + _INT + _SEP
                          + r"(?:modulo|mod)" + _SEP + _INT + _SEP + r",?\s{0,3}(?:is|equals|=)" + _SEP + _INT)
_ORDER_SYMBOL = re.compile(r"(?:\\operatorname\{ord\}|\\text\{ord\}|\\mathrm\{ord\}|\bord)\s{0,2}_\s{0,2}(?:\{\s{0,2}(\d{1,9})\s{0,2}\}|(\d))"
                           r"\s{0,2}(?:\\left)?\(\s{0,2}(\d{1,9})\s{0,2}(?:\\right)?\)" + _SEP + r"=" + _SEP + _INT)


def _primes_of(k: int) -> list[int]:
    out, p = [], 2
    while p * p <= k:
        if k % p == 0:
            out.append(p)
            while k % p == 0:
                k //= p
        p += 1
    return [*out, k] if k > 1 else out


def _residue_zero(e: Expr, n: int, op: str = "=") -> Rel:
    return Rel(BinOp("mod", e, _num(n)), op, _num(0))


def _order_claims(span: tuple[int, int], a: int, n: int, k: int) -> list[Found]:
    """``ord_n(a) = k`` as ``a^k ≡ 1`` and ``a^{k/p} ≢ 1`` for each prime ``p | k`` (nothing read when
    the order is undefined or too large to list)."""
    if n < 2 or not 1 <= k <= MAX_ORDER or a % n == 0:
        return []
    one = _num(1)
    out: list[Found] = [(span, _residue_zero(BinOp("-", Pow(_num(a), _num(k)), one), n))]
    for p in _primes_of(k):
        out.append((span, _residue_zero(BinOp("-", Pow(_num(a), _num(k // p)), one), n, "!=")))
    return out


def _finds(pattern: re.Pattern[str], text: str, marks: tuple[str, ...], seen: str | None = None) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)``, skipped when ``seen`` (``text`` itself unless given) holds none of the
    ``marks`` every match contains."""
    within = text if seen is None else seen
    return pattern.finditer(text) if any(k in within for k in marks) else iter(())


def _claims(text: str) -> list[Found]:
    out: list[Found] = []
    for m in _finds(_MID, text, ("mid", "∣", "∤", "divides")):
        a, sym, b = int(m.group(1)), m.group(2), int(m.group(3))
        if a != 0 and not _glued(text, m.start()):
            op = "!=" if sym in ("\\nmid", "∤") else "="
            out.append((m.span(), _residue_zero(_num(b), a, op)))
    for m in _finds(_DIVISIBLE, text, ("divisible",)):
        b, a = int(m.group(1)), int(m.group(2))
        if a != 0 and not _glued(text, m.start()):
            out.append((m.span(), _residue_zero(_num(b), a)))
    for m in _finds(_POWER_CONGRUENT, text, ("≡", "\\equiv")):
        base, exp = int(m.group(1)), int(m.group(2) or m.group(3))
        sign, residue, n = m.group(4), int(m.group(5)), int(m.group(6))
        if n > 0 and not _glued(text, m.start()):
            diff = BinOp("+" if sign else "-", Pow(_num(base), _num(exp)), _num(residue))
            out.append((m.span(), _residue_zero(diff, n)))
    for m in _finds(_ORDER_WORDS, text, ("order",), text.lower()):  # (?i): "Order of" too
        out += _order_claims(m.span(), int(m.group(1)), int(m.group(2)), int(m.group(3)))
    for m in _finds(_ORDER_SYMBOL, text, ("ord",)):
        n = int(m.group(1) or m.group(2))
        out += _order_claims(m.span(), int(m.group(3)), n, int(m.group(4)))
    return out


def divisibility_obligations(proof: Proof) -> list[ArithmeticObligation]:
    """The divisibility, power-congruence and order claims of every step, as closed arithmetic obligations."""
    return closed_claims(proof, "d", ("mid", "∣", "∤", "divi", "equiv", "≡", "order", "ord"), _claims)


__all__ = ["divisibility_obligations"]
