"""The integer functions of number theory, exact and bounded: gcd, lcm, Euler's totient, the number
and the sum of divisors, the p-adic valuation. Factoring is trial division up to the square root,
charged to the evaluation's ``Meter``; an argument beyond ``MAX_FACTOR`` is an ``EvaluationLimit``."""

from __future__ import annotations

import math
from fractions import Fraction

from faithsieve.core.errors import EvaluationLimit, NotRational
from faithsieve.mathtext.cost import Limits, Meter

MAX_FACTOR = 10**10
"""The largest integer factored (trial division to 10^5, charged a step per 64 divisions)."""
FUNCTIONS = frozenset({"gcd", "lcm", "totient", "numdivisors", "divsigma", "padicval"})


def _integer(x: Fraction, fn: str) -> int:
    if x.denominator != 1:
        raise NotRational(f"{fn} of a non-integer")
    return x.numerator


def factor(n: int, meter: Meter) -> dict[int, int]:
    """The prime factorization of ``1 <= n <= MAX_FACTOR``."""
    if not 1 <= n <= MAX_FACTOR:
        raise EvaluationLimit("integer too large to factor")
    out: dict[int, int] = {}
    p = 2
    while p * p <= n:
        if p % 64 == 0:
            meter.charge()
        while n % p == 0:
            out[p] = out.get(p, 0) + 1
            n //= p
        p += 1 if p == 2 else 2
    if n > 1:
        out[n] = out.get(n, 0) + 1
    return out


def apply(fn: str, args: list[Fraction], lim: Limits, meter: Meter) -> Fraction:
    """``fn`` (one of ``FUNCTIONS``) of integer ``args``."""
    ints = [_integer(a, fn) for a in args]
    if fn in ("gcd", "lcm"):
        return Fraction(_gcd_lcm(fn, ints, lim, meter))
    if fn == "padicval":
        if len(ints) != 2:
            raise NotRational("padicval takes p and n")
        return Fraction(_valuation(ints[0], ints[1], lim, meter))
    if len(ints) != 1 or ints[0] < 1:
        raise NotRational(f"{fn} of a non-positive integer")
    f = factor(ints[0], meter)
    if fn == "totient":
        return Fraction(math.prod((p - 1) * p ** (k - 1) for p, k in f.items()))
    if fn == "numdivisors":
        return Fraction(math.prod(k + 1 for k in f.values()))
    if fn == "divsigma":
        return Fraction(math.prod((p ** (k + 1) - 1) // (p - 1) for p, k in f.items()))
    raise NotRational(f"function {fn}")


def _gcd_lcm(fn: str, ints: list[int], lim: Limits, meter: Meter) -> int:
    if any(i.bit_length() > lim.max_bits for i in ints):
        raise EvaluationLimit(f"{fn} argument too large")
    meter.charge_bits(sum(i.bit_length() for i in ints))
    if fn == "gcd":
        return math.gcd(*ints)
    if sum(i.bit_length() for i in ints) > lim.max_bits:
        raise EvaluationLimit("lcm too large")
    return math.lcm(*ints)


def _valuation(p: int, n: int, lim: Limits, meter: Meter) -> int:
    if p < 2 or n == 0 or p.bit_length() > lim.max_bits or n.bit_length() > lim.max_bits:
        raise NotRational("padicval needs a base at least 2 and a nonzero integer")
    if any(p % q == 0 for q in range(2, min(p, 1000)) if q * q <= p):
        raise NotRational("padicval of a base that is not prime")
    if p > 10**6:
        raise EvaluationLimit("padicval base too large")
    n = abs(n)
    k = 0
    while n % p == 0:
        meter.charge_bits(n.bit_length())
        n //= p
        k += 1
    return k
