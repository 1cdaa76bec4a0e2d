"""Every test starts with an empty outcome memo (``obligations.memo``): a test that changes how a
checker decides (a monkeypatched fast path, other settings) must not be answered by an outcome an
earlier test left in this process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from faithsieve.obligations.memo import MEMO


@pytest.fixture(autouse=True)
def _empty_outcome_memo() -> Iterator[None]:
    MEMO.clear()
    yield
