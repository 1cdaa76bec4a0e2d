"""The hard limits one item of work runs under in a killable worker, and the one account of a job they stopped.

An *item* is one proof: the one ``faithsieve localize`` checks, or one of a scoring run's (local workers, one
worker, a Ray actor's). ``ItemLimits`` holds its limits (seconds once a worker has it, the worker's
address-space cap); ``ItemLimits.run(pool, job, *args)`` runs the job in a ``KillablePool`` under them and
returns its result, or a ``Stopped`` saying why there is none: the limit it hit and the option that raises
it, in the same words whoever ran it. A worker that cannot start at all is not a limit: ``WorkerUnavailable``
is raised.

Importing this module is cheap (the worker machinery is imported on first use): the command line reads its
defaults at start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from faithsieve.core.settings import Settings
    from faithsieve.runtime.workers import KillablePool

T = TypeVar("T")

WORKER_MEMORY_MB = 4096
"""Address-space cap of a worker that checks items (``--worker-memory-mb``; 0: none): a formula that expands
without bound ends as a ``MemoryError`` (an ``unknown`` with the reason), not as the machine swapping."""

OUT_OF_MEMORY = "the check ran out of"
"""How the reason of a check that ran out of memory begins (``ItemLimits.out_of_memory``)."""
RESOURCE_LIMIT = "resource_limit"
"""How the ``reason`` of an item a limit stopped begins (``Stopped.record``)."""


def item_time_limit(settings: Settings) -> float | None:
    """Hard limit for one item in a worker: a generous multiple of the checking budget offline (the
    pipeline honours its budget, so only a runaway reaches it); none with a language model."""
    return max(60.0, 4 * settings.proof_time_limit_s) if settings.mode == "offline" else None


@dataclass(frozen=True)
class Stopped:
    """A job a limit stopped (or whose worker died): no result, only why."""

    reason: str
    """One sentence: the limit hit and the option that raises it."""

    @property
    def record(self) -> str:
        """The reason as an ``unknown`` verdict records it: ``resource_limit: ...``."""
        return f"{RESOURCE_LIMIT}: {self.reason}"


@dataclass(frozen=True)
class ItemLimits:
    """The hard limits every item runs under, whatever runs it (``localize``, local scoring workers, Ray)."""

    time_s: float | None
    """Seconds for one item once a worker has it (None: none); a job of ``n`` items gets ``n * time_s``."""
    memory_mb: int = WORKER_MEMORY_MB
    """Address-space cap of the worker process (0: none)."""

    @classmethod
    def for_run(cls, settings: Settings, time_s: float | None = None, memory_mb: int | None = None) -> ItemLimits:
        """The limits of a run: ``time_s`` and ``memory_mb`` when given, else the defaults for ``settings``."""
        return cls(time_s if time_s is not None else item_time_limit(settings),
                   WORKER_MEMORY_MB if memory_mb is None else memory_mb)

    def chunk_s(self, n: int) -> float | None:
        """Seconds for a job of ``n`` items."""
        return None if self.time_s is None else self.time_s * n

    def pool(self, workers: int, *, preload: Sequence[str] = (), initializer: Callable[..., None] | None = None,
             initargs: tuple[Any, ...] = (), retire: Callable[[Any], bool] | None = None,
             startup_timeout_s: float = 120.0) -> KillablePool:
        """A killable pool (not started) of ``workers`` processes under ``memory_mb``. The workers do not import
        the caller's ``__main__`` (a script need not guard it, Ray's worker script is not run again): jobs must
        be functions of importable modules."""
        from faithsieve.runtime.workers import KillablePool

        return KillablePool(workers, self.memory_mb, initializer=initializer, initargs=initargs, preload=preload,
                            retire=retire, clean_main=True, startup_timeout_s=startup_timeout_s)

    def out_of_memory(self) -> Stopped:
        """A check that ran out of memory under these limits (raised out of the job, or caught inside the worker
        by a job that goes on with its other items)."""
        if not self.memory_mb:
            return Stopped(f"{OUT_OF_MEMORY} memory (the worker had no memory limit of its own) and was stopped")
        return Stopped(f"{OUT_OF_MEMORY} its memory limit ({self.memory_mb} MB) and was stopped; raise it with "
                       "--worker-memory-mb (0: no limit)")

    def run(self, pool: KillablePool, job: Callable[..., T], *args: Any, items: int = 1) -> T | Stopped:
        """``job(*args)`` (``items`` items of work) in a worker of ``pool`` under these limits: its result, or
        ``Stopped`` when it ran past its time, out of its memory, or its worker died. Raises
        ``WorkerUnavailable`` when no worker could be started, and whatever else the job raised."""
        from faithsieve.runtime.workers import JobTimeout, WorkerCrashed

        limit = self.chunk_s(items)
        try:
            result: T = pool.run(job, *args, time_limit=limit)
            return result
        except JobTimeout:
            within = f" ({limit:g} s)" if limit is not None else ""
            return Stopped(f"the check ran past its time limit{within} and was stopped; raise it with "
                           "--item-time-limit")
        except MemoryError:
            return self.out_of_memory()
        except WorkerCrashed:
            return Stopped(f"the worker running the check died (memory limit {self.memory_mb or 'none'} MB, or "
                           "killed); raise the limit with --worker-memory-mb")


__all__ = ["OUT_OF_MEMORY", "RESOURCE_LIMIT", "WORKER_MEMORY_MB", "ItemLimits", "Stopped", "item_time_limit"]
