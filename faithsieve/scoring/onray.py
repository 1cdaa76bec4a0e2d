"""``faithsieve score --ray ADDRESS``: a scoring run's items fanned out over a Ray cluster.

The driver (the ``score`` process) cuts the pending items into chunks and sends them to
``ChunkScorer`` actors, one per CPU of the cluster. Each actor owns a one-worker killable pool
(``faithsieve.scoring.chunks.scoring_pool``) and scores a chunk with ``score_chunk``, the very function
a local run uses: the same per-item time limit and memory cap, the same item-by-item retry after a
killed worker, the same records. Records come back to the driver, which yields them in item order
to ``run_score``; it writes them through the same journal (``predictions.jsonl``), so a run whose
driver is killed resumes from that file like a local one, and ``metrics.json`` and the report are
the local ones.

A Ray worker (an actor process) that dies mid-chunk is restarted by Ray and the chunk is sent
again (``RESUBMITS`` times; then its items are ``resource_limit`` records): nothing is lost, and since
only the driver writes, nothing is written twice. When the driver ends (or dies), its actors end
with it, and their pool workers follow their parent within a second (the orphan watch).

With a language model (``--mode llm|judge``) the endpoint's concurrency limit (``llm_concurrency``)
holds across the whole cluster: each worker process gets a share, and there are never more workers
than the limit, so at most ``llm_concurrency`` requests are open at once however many nodes score.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

from faithsieve.core.settings import Settings
from faithsieve.datasets.formats import LabelledItem
from faithsieve.runtime.limits import ItemLimits, Stopped
from faithsieve.runtime.raycluster import cluster_cpus, connect, import_ray
from faithsieve.scoring.chunks import _failed, score_chunk, scoring_pool

log = logging.getLogger(__name__)

CHUNK = 8
"""Items per Ray task: large enough that a task's round trip is small next to its work."""
IN_FLIGHT = 2
"""Chunks queued per actor, so an actor never waits for the driver between two chunks."""
RESUBMITS = 3
"""How often a chunk whose Ray worker died is sent again before its items are recorded as lost."""


class ChunkScorer:
    """The body of a Ray actor that scores chunks (``ray.remote`` is applied by ``ray_predictions``,
    so importing this module needs no Ray). Its pool starts with the actor and lives as long."""

    def __init__(self, settings: Settings, limits: ItemLimits) -> None:
        self.settings = settings
        self.limits = limits
        self.pool = scoring_pool(settings, 1, limits).start()

    def score(self, items: list[LabelledItem]) -> list[dict[str, Any]]:
        """The chunk's records, in item order, under the run's limits."""
        return score_chunk(self.pool, items, self.settings, self.limits)

    def pids(self) -> list[int]:
        """This actor's process and its pool's worker (what tests kill and look for afterwards)."""
        return [os.getpid(), *self.pool.worker_pids]

    def close(self) -> None:
        self.pool.close()


def endpoint_share(settings: Settings, processes: int) -> tuple[Settings, int]:
    """Settings for each of at most ``processes`` scoring processes, and how many to use, such that
    their language-model requests together stay within ``settings.llm_concurrency`` (offline:
    unchanged). Each process gets ``llm_concurrency // n`` (at least 1) and ``n <= llm_concurrency``."""
    if settings.mode == "offline":
        return settings, processes
    n = max(1, min(processes, settings.llm_concurrency))
    share = max(1, settings.llm_concurrency // n)
    return settings.model_copy(update={"llm_concurrency": share}), n


def ray_predictions(items: Sequence[LabelledItem], settings: Settings, address: str, limits: ItemLimits,
                    chunk: int = CHUNK, actors: int | None = None) -> Iterator[dict[str, Any]]:
    """The records of ``items`` in item order, scored by actors on the Ray cluster at ``address``
    (``auto``: this machine's). ``actors``: how many (default: one per CPU of the cluster)."""
    if not items:
        return
    ray = connect(address)
    worker_settings, n = endpoint_share(settings, actors or cluster_cpus())
    chunks = [list(items[i:i + chunk]) for i in range(0, len(items), chunk)]
    n = max(1, min(n, len(chunks)))
    actor_cls = ray.remote(num_cpus=1, max_restarts=-1)(ChunkScorer)
    handles = [actor_cls.remote(worker_settings, limits) for _ in range(n)]
    log.info("Ray: %d items in %d chunks over %d actors", len(items), len(chunks), n)
    try:
        yield from _fan_out(ray, handles, chunks, settings)
    finally:
        for h in handles:
            ray.kill(h, no_restart=True)


def _fan_out(ray: Any, handles: list[Any], chunks: list[list[LabelledItem]],
             settings: Settings) -> Iterator[dict[str, Any]]:
    """Send chunks to the actors (``IN_FLIGHT`` each), collect them as they finish, and yield their
    records in chunk order; a chunk whose actor died is sent again."""
    lost_worker = (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError, ray.exceptions.ObjectLostError)
    todo = deque(range(len(chunks)))
    tries = [0] * len(chunks)
    flying: dict[Any, tuple[int, int]] = {}  # object ref -> (chunk, actor)
    load = [0] * len(handles)
    done: dict[int, list[dict[str, Any]]] = {}
    head = 0  # the next chunk to yield
    limit_ahead = len(handles) * (IN_FLIGHT + 2)  # chunks finished ahead of the head are held in memory

    def send() -> None:
        while todo and todo[0] < head + limit_ahead:
            actor = min(range(len(handles)), key=load.__getitem__)
            if load[actor] >= IN_FLIGHT:
                return
            c = todo.popleft()
            flying[handles[actor].score.remote(chunks[c])] = (c, actor)
            load[actor] += 1

    send()
    while flying:
        ready, _ = ray.wait(list(flying), num_returns=1)
        c, actor = flying.pop(ready[0])
        load[actor] -= 1
        try:
            done[c] = ray.get(ready[0])
        except lost_worker as exc:
            tries[c] += 1
            if tries[c] > RESUBMITS:
                log.warning("chunk %d: its Ray worker died %d times; its items are recorded as lost", c, tries[c])
                done[c] = [_failed(it, settings, Stopped(f"the Ray worker died {tries[c]} times")) for it in chunks[c]]
            else:
                log.warning("chunk %d: its Ray worker died (%s); sending it again", c, type(exc).__name__)
                todo.appendleft(c)
        else:
            log.info("Ray: chunk %d of %d done", c + 1, len(chunks))
        while head in done:
            yield from done.pop(head)
            head += 1
        send()


def ray_is_installed() -> bool:
    """Whether the ``ray`` extra is installed (without importing more than the check needs)."""
    try:
        import_ray()
    except Exception:  # noqa: BLE001 - RayUnavailable, or a broken install
        return False
    return True
