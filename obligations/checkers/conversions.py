"""A bounded cache of the sympy checker's conversions (``to_sympy``), owned by the checker.

The sides of a proof's claims repeat: a chain ``a = b = c`` checks ``b`` twice, a derivation
restates the previous line, rollouts of one problem repeat whole steps; on ProcessBench a third of
the sympy checker's conversions are of a side it converted before. ``to_sympy`` is a function of
the expression and the limits alone (sympy expressions are immutable), so a conversion made once
can be handed out again.

* Only successful conversions are kept. A conversion that raised (a limit, a node with no
  sympy meaning, or the time budget running out in the probe) is tried again the next time, so
  no outcome depends on what the process converted before: a kept conversion is exactly what a
  conversion without a clock gives, as for the outcome memo (``obligations.checkers.memo``).
* Bounded: at most ``MAX_ENTRIES`` conversions, least recently used dropped first, each of an
  expression of at most ``MAX_NODES`` nodes (larger ones are converted every time).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from faithsieve.mathtext.ast import Expr, nodes_within
from faithsieve.mathtext.evaluate import Limits, to_sympy

if TYPE_CHECKING:
    import sympy

MAX_ENTRIES = 2048
"""Most conversions one process keeps."""
MAX_NODES = 128
"""Largest expression (in nodes) whose conversion is kept."""


def _small(e: Expr, limit: int) -> bool:
    """``e`` has at most ``limit`` nodes (stops counting past it)."""
    return nodes_within((e,), limit)


class ConversionCache:
    """Least-recently-used map from (expression, limits) to its sympy conversion."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_nodes: int = MAX_NODES) -> None:
        self.max_entries, self.max_nodes = max_entries, max_nodes
        self._map: OrderedDict[tuple[Expr, Limits], sympy.Expr] = OrderedDict()
        self._lock = threading.Lock()  # a server may check in threads

    def __len__(self) -> int:
        return len(self._map)

    def clear(self) -> None:
        with self._lock:
            self._map.clear()

    def convert(self, e: Expr, lim: Limits) -> sympy.Expr:
        """``to_sympy(e, lim)``, or the conversion it gave before."""
        key = (e, lim)
        with self._lock:
            hit = self._map.get(key)
            if hit is not None:
                self._map.move_to_end(key)
                return hit
        out = to_sympy(e, lim)  # raises as before; nothing is kept then
        if _small(e, self.max_nodes):
            with self._lock:
                self._map[key] = out
                while len(self._map) > self.max_entries:
                    self._map.popitem(last=False)
        return out

