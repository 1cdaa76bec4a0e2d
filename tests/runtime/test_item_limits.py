"""One wrapper over the killable pool for every item, whoever runs it (``faithsieve.runtime.limits``): a job
past its time, out of its memory or whose worker dies gives ``Stopped`` with the limit and the option that
raises it; a good job its result. Jobs are standard-library callables (a worker cannot import test modules)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from faithsieve.core.settings import Settings
from faithsieve.runtime.limits import (
    WORKER_MEMORY_MB,
    ItemLimits,
    Stopped,
    item_time_limit,
)
from faithsieve.runtime.workers import KillablePool, WorkerUnavailable

LIMITS = ItemLimits(time_s=0.5, memory_mb=400)


@pytest.fixture(scope="module")
def pool() -> Iterator[KillablePool]:
    with LIMITS.pool(1) as p:
        yield p


def test_a_good_job_gives_its_result(pool: KillablePool) -> None:
    assert LIMITS.run(pool, sum, [1, 2, 3]) == 6


def test_past_the_time_limit_is_stopped_with_the_option(pool: KillablePool) -> None:
    t0 = time.monotonic()
    why = LIMITS.run(pool, time.sleep, 30)
    assert isinstance(why, Stopped) and "time limit (0.5 s)" in why.reason and "--item-time-limit" in why.reason
    assert why.record.startswith("resource_limit: the check ran past its time limit")
    assert time.monotonic() - t0 < 15  # generous under load; the job alone would take 30 s
    assert LIMITS.run(pool, sum, [2, 2]) == 4  # the replacement worker serves


def test_a_job_of_many_items_gets_the_time_of_each(pool: KillablePool) -> None:
    why = LIMITS.run(pool, time.sleep, 30, items=3)
    assert isinstance(why, Stopped) and "time limit (1.5 s)" in why.reason
    assert LIMITS.run(pool, time.sleep, 0.7, items=2) is None  # 0.7 s is past one item's 0.5 s, within two


def test_out_of_memory_is_stopped_with_the_option(pool: KillablePool) -> None:
    why = LIMITS.run(pool, bytearray, 2 * 1024 ** 3)  # 2 GiB against a 400 MB cap
    assert isinstance(why, Stopped) and "memory limit (400 MB)" in why.reason and "--worker-memory-mb" in why.reason


def test_a_dying_worker_is_stopped(pool: KillablePool) -> None:
    why = LIMITS.run(pool, os._exit, 3)
    assert isinstance(why, Stopped) and "died" in why.reason and "400 MB" in why.reason
    assert LIMITS.run(pool, sum, [1]) == 1


def test_other_errors_of_the_job_are_raised(pool: KillablePool) -> None:
    with pytest.raises(ZeroDivisionError):
        LIMITS.run(pool, divmod, 1, 0)


def test_memory_error_without_a_cap_says_so() -> None:
    class Exhausted:
        def run(self, *args: object, **kwargs: object) -> None:
            raise MemoryError

    why = ItemLimits(1.0, memory_mb=0).run(Exhausted(), sum, [1])  # type: ignore[arg-type]
    assert isinstance(why, Stopped) and "no memory limit" in why.reason and "(0 MB)" not in why.reason


def test_a_pool_that_cannot_start_is_not_a_limit() -> None:
    class Refused:
        def run(self, *args: object, **kwargs: object) -> None:
            raise WorkerUnavailable("no worker")

    with pytest.raises(WorkerUnavailable):
        LIMITS.run(Refused(), sum, [1])  # type: ignore[arg-type]


def test_the_limits_of_a_run() -> None:
    assert ItemLimits.for_run(Settings()) == ItemLimits(item_time_limit(Settings()), WORKER_MEMORY_MB)
    assert ItemLimits.for_run(Settings(), 3.0, 0) == ItemLimits(3.0, 0)
    assert ItemLimits(None).chunk_s(4) is None and ItemLimits(2.0).chunk_s(4) == 8.0


def test_the_pool_has_the_memory_cap() -> None:
    import resource

    with ItemLimits(10.0, 700).pool(1) as p:
        soft, hard = p.run(resource.getrlimit, resource.RLIMIT_AS, time_limit=10)
    assert soft == 700 * 1024 * 1024
    assert hard == resource.getrlimit(resource.RLIMIT_AS)[1]  # left as inherited: the Lean REPL may get more


def test_start_soon_hands_a_failed_start_to_its_waiter(monkeypatch: pytest.MonkeyPatch) -> None:
    p = KillablePool(1)

    def refuse() -> KillablePool:
        raise WorkerUnavailable("a worker did not start")

    monkeypatch.setattr(p, "start", refuse)
    with pytest.raises(WorkerUnavailable):
        p.start_soon().result(10)
