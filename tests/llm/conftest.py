"""Fixtures of the LLM-layer tests: a scripted fake OpenAI server per test.

Tests elsewhere can import the server directly: ``from tests.llm.fakeserver import FakeOpenAI, Reply``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.llm.fakeserver import FakeOpenAI


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A started ``FakeOpenAI`` with an empty script (stopped after the test)."""
    with FakeOpenAI() as server:
        yield server
