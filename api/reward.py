"""``POST /get_reward``: OpenRLHF's remote reward model, served by ``faithsieve.grader``."""

from __future__ import annotations

import asyncio
import logging

from faithsieve.api import errors
from faithsieve.api.models import RewardRequest, RewardResponse
from faithsieve.api.service import ServiceDep
from faithsieve.api.settings import ServiceSettings

from faithsieve.core.errors import InputError, InputTooLarge

__all__ = ["route_get_reward", "warm_reward_grader"]

log = logging.getLogger(__name__)


async def warm_reward_grader(settings: ServiceSettings) -> None:
    """Start the ``/get_reward`` grader's workers with the service's, so their start-up is never
    charged to a reward call's budget (``reward_warmup``)."""
    if not settings.reward_warmup:
        return
    from faithsieve import grader

    try:
        await asyncio.to_thread(grader.warmup)
    except Exception as exc:  # noqa: BLE001 - the route still works; its first call pays the start-up
        log.warning("could not warm the reward grader: %r", exc)


async def route_get_reward(body: RewardRequest, service: ServiceDep) -> RewardResponse:
    """OpenRLHF's remote reward model: ``{"query", "prompts", "labels"}`` in, ``{"rewards", "scores",
    "extra_logs"}`` out. The grader bounds each sample by its own time budget in its own worker
    processes (``FAITHSIEVE_GRADER_*``), so one hostile completion costs its budget, never the batch."""
    from faithsieve.grader import openrlhf_reward

    s = service.settings
    n = len(body.query)
    if n > s.batch_limit:
        raise InputTooLarge(f"{n} samples; the limit is {s.batch_limit} per request", {"field": "query"})
    for name, seq in (("prompts", body.prompts), ("labels", body.labels)):
        if seq is not None and len(seq) != n:
            raise InputError(f"'{name}' has {len(seq)} entries but 'query' has {n}", {"field": name})
    try:
        out = await asyncio.wait_for(asyncio.to_thread(openrlhf_reward, body.query, body.prompts, body.labels),
                                     timeout=s.batch_time_limit_s)
    except asyncio.TimeoutError:
        raise errors.RequestTimeout("reward batch exceeded its time limit", {"limit_s": s.batch_time_limit_s}) from None
    except ValueError as exc:
        raise InputError(str(exc)) from None
    return RewardResponse(**out)
