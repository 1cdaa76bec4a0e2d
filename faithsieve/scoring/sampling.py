"""Which items a scoring run scores: ``--subset`` filter, then ``--limit`` as a seeded,
label-stratified sample (or the first N with ``--sample first``).

Stratified: the items are grouped by (subset, flawed or correct); each group gets its
proportional share of ``limit`` (largest remainders round up, ties by group name) and that
many items drawn with ``random.Random(seed)``. The sample is returned in dataset order, so a
benchmark that lists every flawed item first (ProcessBench) still yields both classes.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

from faithsieve.datasets.formats import LabelledItem

SAMPLES = ("stratified", "first")
"""How ``--limit`` picks items."""


def _stratum(item: LabelledItem) -> tuple[str, bool]:
    return item.subset, item.first_error is not None


def stratified_indices(items: Sequence[LabelledItem], limit: int, seed: int) -> list[int]:
    """Indices (ascending) of a proportional, seeded sample of ``limit`` items by (subset, class)."""
    groups: dict[tuple[str, bool], list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        groups[_stratum(it)].append(i)
    keys = sorted(groups)
    total = len(items)
    quota = {k: limit * len(groups[k]) / total for k in keys}
    alloc = {k: int(quota[k]) for k in keys}
    short = limit - sum(alloc.values())
    for k in sorted(keys, key=lambda k: (-(quota[k] - alloc[k]), k))[:short]:
        alloc[k] += 1
    rng = random.Random(seed)
    picked: list[int] = []
    for k in keys:
        picked.extend(rng.sample(groups[k], alloc[k]))
    return sorted(picked)


def select(items: Sequence[LabelledItem], subsets: Sequence[str] = (), limit: int | None = None,
           sample: str = "stratified", seed: int = 0) -> list[LabelledItem]:
    """Items of the given subsets (all if none given), then ``limit`` of them (``sample``: how)."""
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be 0 or more, got {limit}")
    if sample not in SAMPLES:
        raise ValueError(f"unknown sample {sample!r}; use one of {', '.join(SAMPLES)}")
    chosen = [it for it in items if not subsets or it.subset in subsets]
    if limit is None or limit >= len(chosen):
        return chosen
    if sample == "first":
        return chosen[:limit]
    return [chosen[i] for i in stratified_indices(chosen, limit, seed)]


def class_gaps(items: Sequence[LabelledItem]) -> list[str]:
    """Warnings (at most two lines) when the scored items, as a whole or per subset, have no
    flawed or no correct item: F1 and one of the accuracies are then undefined there."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for it in items:
        counts[it.subset][it.first_error is None] += 1
    out = []
    n_err = sum(c[0] for c in counts.values())
    n_ok = sum(c[1] for c in counts.values())
    if items and (not n_err or not n_ok):
        out.append(f"the {len(items)} scored items have no {'flawed' if not n_err else 'correct'} item: "
                   f"F1 and {'error' if not n_err else 'correct'} accuracy are undefined")
    if len(counts) > 1:
        no_ok = [f"{name} ({e})" for name, (e, c) in sorted(counts.items()) if not c]
        no_err = [f"{name} ({c})" for name, (e, c) in sorted(counts.items()) if not e]
        parts = ([f"no correct item in {', '.join(no_ok)}"] if no_ok else []) + \
                ([f"no flawed item in {', '.join(no_err)}"] if no_err else [])
        if parts:
            out.append(f"per-subset F1 undefined: {'; '.join(parts)} (items scored)")
    return out
