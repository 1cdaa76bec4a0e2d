"""The conversion cache hands out only successful conversions, bounded, and belongs to its checker."""

from __future__ import annotations

import time

import pytest
from faithsieve.obligations.checkers import conversions
from faithsieve.obligations.checkers.conversions import MAX_NODES, ConversionCache
from faithsieve.obligations.checkers.symbolic import SympyChecker

from faithsieve.core.errors import EvaluationLimit, FaithSieveError
from faithsieve.mathtext.cost import DEFAULT_LIMITS, budget
from faithsieve.mathtext.evaluate import to_sympy
from tests.obligations.symsupport import rel


def test_a_conversion_is_handed_out_again(monkeypatch) -> None:
    cache = ConversionCache()
    e = rel(r"\sqrt{x^2 + 1} = 2").lhs
    first = cache.convert(e, DEFAULT_LIMITS)
    assert first == to_sympy(e, DEFAULT_LIMITS)
    calls = []
    monkeypatch.setattr(conversions, "to_sympy", lambda *a: calls.append(a))
    assert cache.convert(e, DEFAULT_LIMITS) is first and not calls


def test_a_failed_conversion_is_tried_again() -> None:
    cache = ConversionCache()
    e = rel(r"x^{100000} \cdot 2^{100000} = 1").lhs
    for _ in range(2):
        with pytest.raises(FaithSieveError):
            cache.convert(e, DEFAULT_LIMITS)
    assert len(cache) == 0


def test_a_conversion_stopped_by_the_clock_is_not_kept() -> None:
    cache = ConversionCache()
    e = rel(" + ".join(f"3^{{{9000 + k}}}" for k in range(6)) + " = 1").lhs  # over 1,024 probe steps
    with budget(time.monotonic() - 1), pytest.raises(EvaluationLimit, match="time budget"):
        cache.convert(e, DEFAULT_LIMITS)
    assert len(cache) == 0
    cache.convert(e, DEFAULT_LIMITS)  # with time, it converts
    assert len(cache) == 1


def test_bounds() -> None:
    cache = ConversionCache(max_entries=3)
    for k in range(5):
        cache.convert(rel(f"x + {k} = 0").lhs, DEFAULT_LIMITS)
    assert len(cache) == 3
    big = rel(" + ".join(f"x_{{{i}}}" for i in range(MAX_NODES // 2 + 1)) + " = 0").lhs
    cache.convert(big, DEFAULT_LIMITS)
    assert len(cache) == 3 and (big, DEFAULT_LIMITS) not in cache._map
    small = rel(" + ".join(f"x_{{{i}}}" for i in range(MAX_NODES // 2 - 1)) + " = 0").lhs
    cache.convert(small, DEFAULT_LIMITS)
    assert (small, DEFAULT_LIMITS) in cache._map


def test_each_checker_owns_its_conversions() -> None:
    a, b = SympyChecker(), SympyChecker()
    a.conversions.convert(rel("y + 1 = 0").lhs, DEFAULT_LIMITS)
    assert len(a.conversions) == 1 and len(b.conversions) == 0
    shared = ConversionCache()
    assert SympyChecker(conversions=shared).conversions is shared
