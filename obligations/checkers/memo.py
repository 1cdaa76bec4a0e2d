"""A bounded memo of decided checker outcomes, keyed by the obligation as checked; one is owned by
the checkers ``pipeline.build_checkers`` builds (a pipeline, or a grader's worker process).

A grader sees many rollouts of one problem, and they repeat the same symbolic steps; the sympy
and z3 checkers are deterministic functions of the obligation's mathematical content and the
checker's settings (a fresh z3 context per check, a fixed seed for random points), so an outcome
found once is the outcome every later check of the same obligation would find. The memo keeps
it, and a hit returns it without the symbolic work.

* Key: the checker's class and settings, the obligation's class, and every field of the
  obligation except where it sits in the proof (id, step, span, edge, source text); dicts
  become sorted tuples. A field added to an obligation later is part of the key by default.
* Slot: where an outcome is kept, by checker class, obligation class and source text (one
  outcome per slot, the latest). Rollouts of one problem repeat the same text; most
  obligations are seen once, and for them the slot is all the memo computes. A hit needs the
  same slot and equal keys (the full key is computed only when a slot is met again).
* Only checkers that hold a memo (``memo``) are memoized, for the obligation classes they list in
  ``memo_kinds`` (an LLM or Lean checker holds none).
* Never kept: an outcome that may have ended by the clock, since another run with more time may
  decide it: the check took ``CLOCK_SAFE_S`` or more (or half the checker's shortest internal
  time limit, ``min_time_limit_s``), ended less than ``CLOCK_SAFE_S`` before its deadline, or
  says a budget ran out or the solver gave up; and an obligation whose key cannot be hashed.
* Bounded: at most ``MAX_ENTRIES`` outcomes, least recently used dropped first, each of an
  obligation of at most ``MAX_KEY_NODES`` expression nodes (larger ones are checked every time,
  as before): a hostile stream of huge formulas cannot make the memo hold more than
  ``MAX_ENTRIES × MAX_KEY_NODES`` nodes.

A hit gives exactly what a fresh check gives, so the verdicts do not depend on what the process
checked before, on the order of items, or on the worker count.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from faithsieve.obligations.kinds.models import Obligation, Outcome, Unknown

from faithsieve.mathtext.ast import Rel, nodes_within

MAX_ENTRIES = 4096
"""Most outcomes one process keeps."""
MAX_KEY_NODES = 256
"""Most expression nodes (over all its relations) an obligation may have to be memoized."""

CLOCK_SAFE_S = 0.25
"""A check this quick, ending this far before its deadline, met no time limit (the solvers'
own limits are longer; see ``min_time_limit_s``)."""

_PLACE = frozenset({"id", "step", "span", "edge", "source"})
"""Fields saying where an obligation sits in a proof: no checker reads them."""
_CLOCK_WORDS = ("budget", "timeout", "gave up", "time limit", "z3 error")
"""An ``unknown`` whose reason names one of these may have ended by the clock."""


def _frozen(v: Any) -> Hashable:
    if isinstance(v, dict):
        return tuple(sorted((k, _frozen(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return tuple(_frozen(x) for x in v)
    out: Hashable = v
    return out


_OWNED = frozenset({"memo", "conversions"})
"""Checker attributes that hold state it was given, not settings: not part of a key."""


def _settings(checker: Any) -> Hashable:
    if not hasattr(checker, "__dict__"):
        return ()
    return _frozen({k: v for k, v in vars(checker).items() if k not in _OWNED})


class _Key:
    """A key tuple with its hash computed once (hashing an expression tree walks all of it)."""

    __slots__ = ("parts", "hash")

    def __init__(self, parts: tuple[Any, ...]) -> None:
        self.parts = parts
        self.hash = hash(parts)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and self.hash == other.hash and self.parts == other.parts


def _nodes_within(values: Any, limit: int) -> bool:
    """The expression trees in ``values`` (relations, alone or in tuples) have at most ``limit``
    nodes in all; stops counting past it."""
    stack: list[Any] = []
    for v in values:
        if isinstance(v, Rel):
            stack += (v.lhs, v.rhs)
        elif isinstance(v, tuple):
            stack += [x for r in v if isinstance(r, Rel) for x in (r.lhs, r.rhs)]
    return nodes_within(stack, limit)


def memo_key(checker: Any, ob: Obligation) -> Hashable | None:
    """The key of ``ob`` checked by ``checker``; None when some field cannot be hashed or the
    obligation is past ``MAX_KEY_NODES``."""
    if not _nodes_within([getattr(ob, k) for k in type(ob).model_fields if k not in _PLACE], MAX_KEY_NODES):
        return None
    fields = tuple((k, _frozen(getattr(ob, k))) for k in type(ob).model_fields if k not in _PLACE)
    try:
        return _Key((type(checker).__name__, _settings(checker), getattr(checker, "witness_points", None),
                     type(ob).__name__, fields))
    except TypeError:
        return None


def _by_the_clock(checker: Any, out: Outcome, elapsed: float, deadline: float) -> bool:
    limit = min(CLOCK_SAFE_S, getattr(checker, "min_time_limit_s", CLOCK_SAFE_S) / 2)
    if elapsed >= limit or deadline - time.monotonic() < CLOCK_SAFE_S:
        return True
    return isinstance(out, Unknown) and any(w in out.reason.lower() for w in _CLOCK_WORDS)


class _Entry:
    """One remembered check: the checker and obligation (whose key is computed at the first
    repeat, not before) and the outcome."""

    __slots__ = ("checker", "ob", "outcome", "key")

    def __init__(self, checker: Any, ob: Obligation, outcome: Outcome | None) -> None:
        self.checker, self.ob, self.outcome = checker, ob, outcome
        self.key: Hashable | None = None


class OutcomeMemo:
    """Least-recently-used map from a slot (checker class, obligation class, source text) to the
    last decided check there; a hit needs the full ``memo_key`` of both obligations to agree."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._map: OrderedDict[tuple[str, str, str], _Entry] = OrderedDict()
        self._lock = threading.Lock()  # a server may check in threads
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._map)

    def clear(self) -> None:
        """Forget every outcome."""
        with self._lock:
            self._map.clear()
            self.hits = self.misses = 0

    def check(self, checker: Any, ob: Obligation, deadline: float,
              run: Callable[[], Outcome | None]) -> Outcome | None:
        """``run()`` (the checker on ``ob``), or the outcome it gave before for the same key.

        Most obligations are seen once: the slot, a hash of a short text, is all they cost. The
        full keys (a walk over every expression) are computed only when a slot is met again."""
        slot = (type(checker).__name__, type(ob).__name__, ob.source)
        with self._lock:
            entry = self._map.get(slot)
        if entry is not None:
            if entry.key is None:
                entry.key = memo_key(entry.checker, entry.ob)
            if entry.key is not None and entry.key == memo_key(checker, ob):
                with self._lock:
                    self.hits += 1
                    if slot in self._map:
                        self._map.move_to_end(slot)
                return entry.outcome
        with self._lock:
            self.misses += 1
        start = time.monotonic()
        out = run()
        if (out is None or not _by_the_clock(checker, out, time.monotonic() - start, deadline)) and _nodes_within(
                [getattr(ob, k) for k in type(ob).model_fields if k not in _PLACE], MAX_KEY_NODES):
            with self._lock:
                self._map[slot] = _Entry(checker, ob, out)
                self._map.move_to_end(slot)
                while len(self._map) > self.max_entries:
                    self._map.popitem(last=False)
        return out

