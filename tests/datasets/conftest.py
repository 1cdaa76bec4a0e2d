"""Shared paths for the dataset tests."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
SHARED_RAW = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "raw"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def shared_raw() -> Path:
    if not SHARED_RAW.is_dir():
        pytest.skip(f"shared raw datasets not present at {SHARED_RAW}")
    return SHARED_RAW
