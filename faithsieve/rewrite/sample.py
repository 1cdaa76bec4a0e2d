"""New values for question numbers: the same kind of number, a realistic size, written the same way.

``domain(lit)`` is the set a literal's new value is drawn from, as ``(lo, hi, step)``:

- the step is the literal's granularity: ``10**-d`` for a decimal written with ``d`` places; for
  an integer the largest power of ten dividing it, at most a tenth of it (``80,000`` moves in
  thousands, ``16`` in ones) — round numbers stay round;
- the range is half to twice the original, never below 2 for counts (plurals stay plurals),
  at most 100 for a percent that was at most 100;
- the original value itself is excluded, so every resampled number changes, and a decimal stays
  a non-whole decimal (``$1.5`` never becomes ``$3.0``).

``render(lit, v)`` writes ``v`` like the original: thousands separators, the same decimal places.
``words(n)`` writes a number in words (the solution's prose may name a changed value that way).
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

from faithsieve.rewrite.gsm8k import WORD_VALUES, Literal

_NAMES = {v: w for w, v in WORD_VALUES.items()}


def _step(lit: Literal) -> Fraction:
    if lit.decimals:
        step = Fraction(1, 10 ** lit.decimals)
        while lit.value % (step * 10) == 0 and step * 10 <= lit.value / 10:
            step *= 10
        return step
    v = int(lit.value)
    whole = 1
    while v % (whole * 10) == 0 and whole * 10 <= v // 10:
        whole *= 10
    return Fraction(whole)


def domain(lit: Literal) -> tuple[Fraction, Fraction, Fraction]:
    """``(lo, hi, step)``: new values are ``lo, lo+step, ..., hi`` minus the original."""
    step = _step(lit)
    v = lit.value
    lo = max(step, math.ceil(v / 2 / step) * step)
    hi = math.floor(v * 2 / step) * step
    if lit.kind == "integer":
        lo = max(lo, Fraction(2))
        hi = max(hi, Fraction(6))
    if lit.kind == "percent" and v <= 100:
        hi = min(hi, Fraction(100))
    return Fraction(lo), Fraction(hi), step


def draw(lit: Literal, rng: random.Random) -> Fraction | None:
    """One new value for ``lit`` (``None`` when its domain holds nothing but the original)."""
    lo, hi, step = domain(lit)
    n = int((hi - lo) / step) + 1
    if n <= 1 and lo == lit.value:
        return None
    for _ in range(8):
        v = lo + step * rng.randrange(n)
        if v != lit.value and not (lit.kind == "decimal" and v.denominator == 1):
            return v
    return None


def words(n: int, capital: bool = False) -> str:
    """``n`` (1..99) in words: ``25`` -> ``twenty-five``."""
    if n in _NAMES:
        w = _NAMES[n]
    else:
        tens, units = divmod(n, 10)
        w = f"{_NAMES[tens * 10]}-{_NAMES[units]}"
    return w.capitalize() if capital else w


def render(lit: Literal, v: Fraction) -> str:
    """``v`` written the way ``lit`` was written."""
    if v.denominator == 1 and not lit.decimals:
        n = int(v)
        return f"{n:,}" if lit.commas or (n >= 10_000 and "," in lit.text) else str(n)
    scaled = v * 10 ** lit.decimals
    if scaled.denominator != 1:
        raise ValueError(f"{v} does not fit {lit.decimals} decimal places")
    whole, frac = divmod(int(scaled), 10 ** lit.decimals)
    head = f"{whole:,}" if lit.commas else str(whole)
    return f"{head}.{frac:0{lit.decimals}d}" if lit.decimals else head


def substitute(text: str, spans: list[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, new)`` span replaced (spans must not overlap)."""
    out = text
    for start, end, new in sorted(spans, reverse=True):
        out = out[:start] + new + out[end:]
    return out
