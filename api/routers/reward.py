"""``POST /get_reward``: OpenRLHF's remote reward model, served by ``faithsieve.grader``.

Samples are admitted like proofs, by the service's ``RewardQueue`` (``faithsieve.api.reward_queue``):
at most ``reward_max_pending`` at once (429 beyond), graded one sample per waiting request in turn,
and a request past ``batch_time_limit_s`` answers 504 with its samples not yet started dropped.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from faithsieve.api import errors
from faithsieve.api.models import RewardRequest, RewardResponse
from faithsieve.api.schema import ERROR_RESPONSES
from faithsieve.api.service import ServiceDep
from faithsieve.api.settings import ServiceSettings
from fastapi import APIRouter

from faithsieve.core.errors import InputError, InputTooLarge

__all__ = ["route_get_reward", "router", "warm_reward_grader"]

log = logging.getLogger(__name__)

router = APIRouter()
"""The reward route; ``create_app`` documents that it needs the API key when the server has one."""


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


def _merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    keys = list(parts[0]["extra_logs"]) if parts else []
    return {"rewards": [x for p in parts for x in p["rewards"]], "scores": [x for p in parts for x in p["scores"]],
            "extra_logs": {k: [x for p in parts for x in p["extra_logs"][k]] for k in keys}}


@router.post("/get_reward", response_model=RewardResponse, responses=ERROR_RESPONSES, tags=["rl"],
             summary="OpenRLHF remote reward")
async def route_get_reward(body: RewardRequest, service: ServiceDep) -> RewardResponse:
    """OpenRLHF's remote reward model: ``{"query", "prompts", "labels"}`` in, ``{"rewards", "scores",
    "extra_logs"}`` out. The grader bounds each sample by its own time budget in its own worker
    processes (``FAITHSIEVE_GRADER_*``), so one hostile completion costs its budget, never the batch.
    Samples are admitted like proofs (429 past ``reward_max_pending``) and the request stops at
    ``batch_time_limit_s`` (504)."""
    s = service.settings
    n = len(body.query)
    if n > s.batch_limit:
        raise InputTooLarge(f"{n} samples; the limit is {s.batch_limit} per request", {"field": "query"})
    for name, seq in (("prompts", body.prompts), ("labels", body.labels)):
        if seq is not None and len(seq) != n:
            raise InputError(f"'{name}' has {len(seq)} entries but 'query' has {n}", {"field": name})
    if n == 0:
        from faithsieve.grader import openrlhf_reward

        return RewardResponse(**openrlhf_reward([]))
    prompts = body.prompts if body.prompts is not None else [""] * n
    labels = body.labels if body.labels is not None else [None] * n
    samples = list(zip(body.query, prompts, labels, strict=True))
    with service.rewards.admit(n):
        try:
            parts = await service.rewards.grade(samples, s.batch_time_limit_s)
        except asyncio.TimeoutError:
            service.metrics.timeouts.inc("reward")
            raise errors.RequestTimeout("reward batch exceeded its time limit; its remaining samples were dropped",
                                        {"limit_s": s.batch_time_limit_s}) from None
        except ValueError as exc:
            raise InputError(str(exc)) from None
    return RewardResponse(**_merge(parts))
