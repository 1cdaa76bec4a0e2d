"""``/get_reward`` is admitted like ``/localize``: at most ``reward_max_pending`` samples at once (429
beyond), one sample per waiting request in turn (a one-sample call is not stuck behind whole batches),
and nothing more of a request starts after its deadline (504). The grader's worker processes are the
external part here: ``_grade_one`` is replaced by a sample that takes a known time."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from faithsieve.api import reward_queue

from tests.api.conftest import client_for

SAMPLE_S = 0.4


@pytest.fixture
def graded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every sample graded, in the order grading started; each takes ``SAMPLE_S``."""
    seen: list[str] = []

    def fake(sample: Any) -> dict[str, Any]:
        seen.append(str(sample[0]))
        time.sleep(SAMPLE_S)
        return {"rewards": [1.0], "scores": [1.0], "extra_logs": {"time_ms": [1.0]}}

    monkeypatch.setattr(reward_queue, "_grade_one", fake)
    return seen


def _body(tag: str, n: int) -> dict[str, Any]:
    return {"query": [f"{tag}{i}" for i in range(n)], "labels": ["1"] * n}


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], threading.Event]:
    """Every sample graded, in the order grading started; each waits until the test sets the event (30 s at
    most), so a request is known to hold its samples while the test sends the next one, however slow the
    machine (a fixed sleep raced the first request's admission on a loaded CI runner)."""
    seen: list[str] = []
    release = threading.Event()

    def fake(sample: Any) -> dict[str, Any]:
        seen.append(str(sample[0]))
        release.wait(30)
        return {"rewards": [1.0], "scores": [1.0], "extra_logs": {"time_ms": [1.0]}}

    monkeypatch.setattr(reward_queue, "_grade_one", fake)
    return seen, release


def _until(cond: Any, limit_s: float = 30.0) -> None:
    deadline = time.monotonic() + limit_s
    while not cond():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.01)


def test_samples_past_capacity_get_429(held: tuple[list[str], threading.Event]) -> None:
    seen, release = held
    with client_for(reward_max_pending=3, batch_max_items=8, reward_warmup=False) as c:
        first: dict[str, Any] = {}
        t = threading.Thread(target=lambda: first.setdefault("r", c.post("/get_reward", json=_body("a", 2))))
        t.start()
        _until(lambda: seen)  # admitted: its two samples are pending until released
        r = c.post("/get_reward", json=_body("b", 2))
        release.set()
        assert r.status_code == 429 and r.json()["error"]["code"] == "saturated", r.text
        assert int(r.headers["Retry-After"]) >= 1
        t.join(30)
        assert first["r"].status_code == 200 and first["r"].json()["rewards"] == [1.0] * 2
        assert sorted(seen) == ["a0", "a1"]  # the refused request graded nothing
        assert c.post("/get_reward", json=_body("c", 1)).status_code == 200  # capacity back once answered


def test_large_batches_leave_room_for_a_one_sample_call(held: tuple[list[str], threading.Event]) -> None:
    seen, release = held
    with client_for(reward_max_pending=16, max_pending=64, batch_max_items=16, reward_warmup=False) as c:
        queue = c.app.state.service.rewards  # type: ignore[attr-defined]
        assert queue.reserve == queue.slots
        big = threading.Thread(target=c.post, args=("/get_reward",), kwargs={"json": _body("a", 16 - queue.reserve)})
        big.start()
        _until(lambda: queue.pending == 16 - queue.reserve)
        r = c.post("/get_reward", json=_body("b", queue.slots + 1))  # large: the reserve is not for it
        assert r.status_code == 429, r.text
        small: dict[str, Any] = {}
        one = threading.Thread(target=lambda: small.setdefault("r", c.post("/get_reward", json=_body("one", 1))))
        one.start()
        # small: the reserve is (admitted while the big one holds the rest; a refusal answers at once)
        _until(lambda: "r" in small or queue.pending == 16 - queue.reserve + 1)
        release.set()
        one.join(30)
        big.join(60)
        assert small["r"].status_code == 200, small["r"].text


def test_a_one_sample_call_waits_one_turn_not_whole_batches(graded: list[str]) -> None:
    with client_for(reward_max_pending=64, max_pending=64, batch_max_items=16, reward_warmup=False) as c:
        slots = c.app.state.service.rewards.slots  # type: ignore[attr-defined]
        batches = [threading.Thread(target=c.post, args=("/get_reward",), kwargs={"json": _body(t, 16)})
                   for t in "ab"]
        for b in batches:
            b.start()
        time.sleep(0.3)
        t0 = time.monotonic()
        r = c.post("/get_reward", json=_body("one", 1))
        took = time.monotonic() - t0
        assert r.status_code == 200
        for b in batches:
            b.join(60)
    # first come first served by batch would have graded 32 samples first: 32 / slots turns
    assert took < (3 + 1) * SAMPLE_S + 1.0, took
    assert graded.index("one0") <= 2 * slots + 2, graded


def test_nothing_more_starts_after_the_deadline(graded: list[str]) -> None:
    with client_for(reward_max_pending=64, max_pending=64, batch_max_items=32, batch_time_limit_s=1.0, reward_warmup=False) as c:
        slots = c.app.state.service.rewards.slots  # type: ignore[attr-defined]
        r = c.post("/get_reward", json=_body("a", 32))
        assert r.status_code == 504 and r.json()["error"]["code"] == "timeout", r.text
        started = len(graded)
        time.sleep(4 * SAMPLE_S)
        assert len(graded) == started <= slots * (1.0 / SAMPLE_S + 1)  # no sample started after the 504
        assert c.app.state.service.rewards.pending == 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("field", ["query", "labels", "prompts"])
def test_lone_surrogates_are_refused_as_by_localize(client: Any, field: str) -> None:
    body: dict[str, Any] = {"query": ["x"], "labels": ["1"], "prompts": [""]}
    body[field] = ["a\ud800b"]
    raw = __import__("json").dumps(body)  # keeps the escape: the lone surrogate reaches the server
    r = client.post("/get_reward", content=raw, headers={"Content-Type": "application/json"})
    loc = client.post("/localize", content='{"problem": "p", "steps": ["a\\ud800b"]}',
                      headers={"Content-Type": "application/json"})
    assert r.status_code == loc.status_code == 422, (r.text, loc.text)
    assert "surrogate" in r.text
