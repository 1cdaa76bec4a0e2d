"""One item's prediction and many items' in killable worker processes, under the run's hard limits.

``predict`` runs the pipeline on one item and returns its record (never raising for bad input).
``score_chunk`` scores a chunk in a ``KillablePool`` under the run's ``ItemLimits`` (per-item time, worker
memory: ``faithsieve.runtime.limits``, the wrapper ``localize`` uses too) and is what every runner calls: ``iter_predictions`` (local workers: one or many, never the calling
process) and the Ray actors of ``faithsieve.scoring.onray``. A chunk whose worker is killed or dies is
retried item by item; only the item at fault gets a ``resource_limit`` record (verdict ``unknown``,
predicted ``unknown``: a wrong answer in every metric).
"""

from __future__ import annotations

import itertools
import logging
import os
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from faithsieve.core.errors import FaithSieveError
from faithsieve.core.settings import Settings, method_key
from faithsieve.datasets.formats import LabelledItem
from faithsieve.datasets.unlabelled import is_unlabelled
from faithsieve.runtime.lazy import freeze_after_import
from faithsieve.runtime.limits import OUT_OF_MEMORY, RESOURCE_LIMIT, ItemLimits, Stopped
from faithsieve.runtime.workers import KillablePool
from faithsieve.scoring.evidence import CHECKS_KEY, step_checks
from faithsieve.warmup import OFFLINE_MODULES

log = logging.getLogger(__name__)

TIMING_KEYS = frozenset({"time_ms", "timings", "usage"})
"""Fields that vary from run to run (LLM usage too: a cached rerun makes no calls); ``stable_view`` drops them."""


# ---------------------------------------------------------------------------------------
# One prediction


def _label_json(step: int | None) -> str | int:
    return "correct" if step is None else step


_FAILED: dict[str, Any] = {"predicted": "unknown", "verdict": "unknown", "reason": None, "coverage": None}
"""The fields of an item that got no verdict (refused input, a crash, a lost worker): predicted ``unknown``,
which the metrics count as a wrong answer (never as ``correct``)."""


def _record_head(item: LabelledItem, settings: Settings) -> dict[str, Any]:
    rec: dict[str, Any] = {"id": item.id, "subset": item.subset, "domain": item.domain}
    if not is_unlabelled(item):  # an item read by ``faithsieve predict``: its label is a placeholder
        rec["label"] = item.label
    if settings.mode != "offline":
        rec["method"] = method_key(settings)
    return rec


def predict(item: LabelledItem, settings: Settings, limits: ItemLimits | None = None) -> dict[str, Any]:
    """Run the pipeline on one item and return its prediction record (never raises for bad input);
    ``limits``: those of the worker it runs in (None: none, as in this process).

    Input the pipeline refuses (``InputError``/``InputTooLarge``) and crashes inside it are
    recorded with an ``error`` field and predicted ``unknown`` (a wrong answer in every metric).
    """
    from faithsieve.pipeline import localize
    from faithsieve.split import proof_from_steps

    t0 = time.perf_counter()
    rec = _record_head(item, settings)
    try:
        verdict = localize(proof_from_steps(item.problem, list(item.steps), settings), settings)
    except FaithSieveError as exc:
        rec.update(_FAILED, error=f"{exc.code}: {exc.message}")
    except MemoryError:  # the worker's address-space cap (ItemLimits.memory_mb): unknown, with the reason
        reason = (limits or ItemLimits(None, 0)).out_of_memory().record
        rec.update(_FAILED, verdict="unknown", reason=reason, error=reason)
    except Exception as exc:  # a pipeline bug must not end a long run; it is recorded and counted
        log.debug("pipeline crashed on %s", item.id, exc_info=True)
        rec.update(_FAILED, error=f"internal: {type(exc).__name__}: {str(exc)[:300]}")
    else:
        k = verdict.first_error_step if verdict.verdict == "error" else None
        evidence: list[Any] = []
        if k is not None and 1 <= k <= len(verdict.steps):
            evidence = [e.model_dump(mode="json") for e in verdict.steps[k - 1].evidence if e.status == "refuted"]
        rec.update(predicted="unknown" if verdict.verdict == "unknown" else _label_json(k), verdict=verdict.verdict, reason=verdict.reason,
                   coverage=verdict.coverage.model_dump(mode="json"), error=None)
        if verdict.flag_scope is not None:
            rec["flag_scope"] = verdict.flag_scope
        if verdict.mode != "offline":
            rec["basis"] = verdict.basis
            rec["usage"] = verdict.usage.model_dump() if verdict.usage else None
            if verdict.audit and verdict.audit.notes:
                rec["notes"] = list(verdict.audit.notes[:20])
        if evidence:
            rec["evidence"] = evidence
        if is_unlabelled(item):
            rec.update(_bulk_fields(verdict, evidence))
        checks = step_checks(verdict.steps)
        if checks:
            rec[CHECKS_KEY] = checks
    rec["time_ms"] = round((time.perf_counter() - t0) * 1000, 3)
    rec["item_hash"] = item.content_hash()
    return rec


def _bulk_fields(verdict: Any, evidence: list[Any]) -> dict[str, Any]:
    """What ``faithsieve predict`` adds to a record: the flagged step, what backs the verdict (basis, flag
    kind) and one line per refuted check of the flagged step (claim, method, counterexample)."""
    lines = []
    for e in evidence[:5]:
        line = f"{e.get('kind', 'claim')} {e.get('claim', '')!r} refuted by {e.get('method') or '?'}"
        cex = e.get("counterexample")
        if isinstance(cex, dict) and cex:
            line += " (" + ", ".join(f"{k} = {v}" for k, v in cex.items())[:200] + ")"
        lines.append(line)
    return {"step": verdict.first_error_step if verdict.verdict == "error" else None,
            "basis": verdict.basis, "flag_kind": verdict.flag_kind, "evidence_summary": lines}


def stable_view(record: Any) -> Any:
    """A prediction record without its timing fields (what must match across runs and worker counts)."""
    if isinstance(record, dict):
        return {k: stable_view(v) for k, v in record.items() if k not in TIMING_KEYS}
    if isinstance(record, list):
        return [stable_view(v) for v in record]
    return record


# ---------------------------------------------------------------------------------------
# Running many, in order, in a process pool

_WORKER: tuple[Settings, ItemLimits] | None = None
"""A scoring worker's settings and limits (set once, at its start)."""


def _init_worker(settings: Settings, limits: ItemLimits) -> None:
    global _WORKER
    _WORKER = (settings, limits)
    if settings.lean_backend != "none":  # the Lean header is imported here, at start-up, outside every item's limit
        from faithsieve.pipeline import warm_lean

        log.info("scoring worker %d: %s", os.getpid(), warm_lean(settings))
    freeze_after_import(OFFLINE_MODULES)  # a long-lived worker: no full collection rescans the imported modules


def _predict_chunk(items: list[LabelledItem]) -> list[dict[str, Any]]:
    assert _WORKER is not None
    settings, limits = _WORKER
    return [predict(it, settings, limits) for it in items]


STARTUP_S = 120.0
"""How long a scoring worker may take to start, besides the Lean import limit when a Lean backend is configured."""
_PRELOAD = OFFLINE_MODULES  # the solvers load lazily: the fork server imports them once for every worker


def _failed(item: LabelledItem, settings: Settings, stopped: Stopped) -> dict[str, Any]:
    """The record of an item whose worker was killed (time or memory limit) or died: verdict ``unknown``
    with the reason, predicted ``unknown``."""
    rec = _record_head(item, settings)
    rec.update(_FAILED, verdict="unknown", reason=stopped.record, error=stopped.record, time_ms=None,
               item_hash=item.content_hash())
    return rec


def scoring_pool(settings: Settings, workers: int, limits: ItemLimits) -> KillablePool:
    """The killable pool that scores items (not started): ``workers`` processes under ``limits.memory_mb``, each
    holding ``settings``; the jobs are functions of this module (``ItemLimits.pool``)."""
    from faithsieve.lean.local import IMPORT_TIMEOUT_S

    start_s = STARTUP_S + (IMPORT_TIMEOUT_S if settings.lean_backend != "none" else 0.0)  # a cold import of Mathlib
    return limits.pool(workers, initializer=_init_worker, initargs=(settings, limits), preload=_PRELOAD,
                       retire=_out_of_memory, startup_timeout_s=start_s)


def _out_of_memory(records: Any) -> bool:
    """A chunk in which an item ran out of memory gets a fresh worker afterwards."""
    return isinstance(records, list) and any(
        f"{RESOURCE_LIMIT}: {OUT_OF_MEMORY}" in str(r.get("error") or "") or "MemoryError" in str(r.get("error") or "")
        for r in records)


def _one_by_one(pool: KillablePool, items: list[LabelledItem], settings: Settings,
                limits: ItemLimits) -> list[dict[str, Any]]:
    """A chunk whose worker was lost, item by item, so only the item at fault is recorded as failed."""
    out: list[dict[str, Any]] = []
    for it in items:
        records = limits.run(pool, _predict_chunk, [it])
        if isinstance(records, Stopped):
            log.warning("item %s: %s", it.id, records.reason)
            out.append(_failed(it, settings, records))
        else:
            out.extend(records)
    return out


def score_chunk(pool: KillablePool, items: list[LabelledItem], settings: Settings,
                limits: ItemLimits) -> list[dict[str, Any]]:
    """One chunk's records in item order, scored in ``pool`` under ``limits`` (the same for a local run and
    a Ray worker): the chunk gets ``limits.time_s`` per item; a chunk whose worker is killed or dies is
    retried item by item, and only the item at fault gets a ``resource_limit`` record."""
    records = limits.run(pool, _predict_chunk, items, items=len(items))
    if not isinstance(records, Stopped):
        return list(records)
    if len(items) == 1:
        log.warning("item %s: %s", items[0].id, records.reason)
        return [_failed(items[0], settings, records)]
    log.warning("a chunk of %d items was stopped (%s); retrying them one by one", len(items), records.reason)
    return _one_by_one(pool, items, settings, limits)


def iter_predictions(
    items: Sequence[LabelledItem], settings: Settings, workers: int = 1, chunk: int = 4,
    limits: ItemLimits | None = None, go_on: Callable[[], bool] | None = None,
) -> Iterator[dict[str, Any]]:
    """Predictions for ``items``, yielded in item order, each made in the shared killable pool
    (``faithsieve.runtime.workers``: per-item time limit, memory cap, orphan watch) — one worker process
    when ``workers`` is 1, never in this process, so a runaway item ends as a ``resource_limit`` record
    however small the run. A bounded window of chunks is in flight.

    ``go_on`` (a run budget): asked after each yielded item, before the next item starts; then one item per
    job and at most ``workers`` in flight, so a spent budget starts no new item (with one worker, none runs
    past it)."""
    if not items:
        return
    lim = limits or ItemLimits.for_run(settings)
    size = chunk if len(items) > chunk and go_on is None else 1  # a short run: one item per job, so a killed job costs one item
    chunks = [list(items[i:i + size]) for i in range(0, len(items), size)]
    workers = max(1, min(workers, len(chunks)))
    # the pool closes first on the way out (Ctrl-C, a failure): the threads then end at once
    with ThreadPoolExecutor(workers, thread_name_prefix="score") as threads, scoring_pool(settings, workers, lim) as pool:
        window: deque[Future[list[dict[str, Any]]]] = deque()
        pending = iter(chunks)
        for c in itertools.islice(pending, workers * (4 if go_on is None else 1)):
            window.append(threads.submit(score_chunk, pool, c, settings, lim))
        while window:
            results = window.popleft().result()
            if go_on is None:
                nxt = next(pending, None)
                if nxt is not None:
                    window.append(threads.submit(score_chunk, pool, nxt, settings, lim))
                yield from results
                continue
            yield from results  # the caller adds this item's spend before it is asked to go on
            nxt = next(pending, None) if go_on() else None
            if nxt is not None:
                window.append(threads.submit(score_chunk, pool, nxt, settings, lim))
