"""Admission and fair scheduling of ``/get_reward``'s samples (``RewardQueue``, owned by the service).

The queue holds at most ``capacity`` samples (running plus waiting; past it a request is answered
429 with ``Retry-After``; the last ``reserve`` of them are kept for small requests) and grades them one at a time on ``slots`` slots (the grader's worker
processes), taking the next sample from each waiting request in turn: a one-sample call waits for
one sample per request ahead of it, not for whole batches. A request past its deadline has its
samples not yet started dropped; the ones running end within the grader's own per-sample budget.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from faithsieve.api.errors import Saturated
from faithsieve.api.metrics import ServiceMetrics

__all__ = ["RewardQueue", "Sample"]

Sample = tuple[Any, Any, Any]
"""One sample: ``(query, prompt, label)``."""


def _grade_one(sample: Sample) -> dict[str, Any]:
    from faithsieve.grader import openrlhf_reward

    q, p, lab = sample
    return openrlhf_reward([q], [p], [lab])


@dataclass(eq=False)
class _Request:
    """One request's samples, the next one to start, and one future per sample."""

    samples: list[Sample]
    futures: list[asyncio.Future[dict[str, Any]]]
    next: int = 0
    dropped: bool = False


@dataclass(eq=False)
class RewardQueue:
    """Admission and fair scheduling of reward samples (owned by the service's lifespan)."""

    capacity: int
    """Most samples admitted at once (``reward_max_pending``)."""
    slots: int
    """Samples graded at once (the grader's worker processes)."""
    metrics: ServiceMetrics
    pending: int = 0
    _waiting: deque[_Request] = field(default_factory=deque)
    _ready: asyncio.Event | None = None
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _sample_s: float = 0.5
    """Moving average of one sample's grading time, for ``Retry-After``."""

    def start(self) -> None:
        self._ready = asyncio.Event()
        self._tasks = [asyncio.ensure_future(self._slot()) for _ in range(self.slots)]

    async def close(self) -> None:
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with suppress(asyncio.CancelledError):
                await t
        self._tasks = []

    def retry_after(self) -> int:
        return max(1, min(60, math.ceil(self.pending / max(1, self.slots) * self._sample_s)))

    @property
    def reserve(self) -> int:
        """Samples of ``capacity`` only small requests (at most ``slots`` samples) may take, so a flood of
        large batches cannot refuse a one-sample call: an eighth of it, at least ``slots``."""
        return min(self.capacity - 1, max(self.slots, self.capacity // 8))

    @contextmanager
    def admit(self, n: int) -> Iterator[None]:
        """Reserve ``n`` samples for the block, or raise 429 now (a request of more than ``slots`` samples
        may not take the last ``reserve`` of them)."""
        room = self.capacity if n <= self.slots else self.capacity - self.reserve
        if self.pending + n > room:
            self.metrics.rejections.inc("saturated_reward")
            raise Saturated(f"the reward grader is at capacity ({self.pending} samples pending, at most "
                            f"{self.capacity}); retry later", {"pending": self.pending, "capacity": self.capacity},
                            headers={"Retry-After": str(self.retry_after())})
        self.pending += n
        try:
            yield
        finally:
            self.pending -= n

    async def grade(self, samples: list[Sample], timeout_s: float) -> list[dict[str, Any]]:
        """Grade ``samples`` (already admitted) in order; past ``timeout_s`` the ones not started are
        dropped and ``asyncio.TimeoutError`` is raised."""
        assert self._ready is not None, "reward queue not started"
        loop = asyncio.get_running_loop()
        req = _Request(samples, [loop.create_future() for _ in samples])
        self._waiting.append(req)
        self._ready.set()
        try:
            return list(await asyncio.wait_for(asyncio.gather(*req.futures), timeout_s))
        finally:
            req.dropped = True  # done, timed out or cancelled: nothing more of it starts
            with suppress(ValueError):
                self._waiting.remove(req)

    def _take(self) -> tuple[_Request, int] | None:
        while self._waiting:
            req = self._waiting.popleft()
            if req.dropped or req.next >= len(req.samples):
                continue
            i = req.next
            req.next += 1
            if req.next < len(req.samples):
                self._waiting.append(req)  # its next sample waits behind the other requests' next ones
            return req, i
        return None

    async def _slot(self) -> None:
        assert self._ready is not None
        loop = asyncio.get_running_loop()
        while True:
            got = self._take()
            if got is None:
                self._ready.clear()
                await self._ready.wait()
                continue
            req, i = got
            t0 = loop.time()
            try:
                out = await asyncio.to_thread(_grade_one, req.samples[i])
            except Exception as exc:  # noqa: BLE001 - the sample's request answers the error
                if not req.futures[i].done():
                    req.futures[i].set_exception(exc)
                continue
            self._sample_s = 0.8 * self._sample_s + 0.2 * (loop.time() - t0)
            if not req.futures[i].done():
                req.futures[i].set_result(out)
