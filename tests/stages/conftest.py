"""Fixtures for stage tests: ``scripted`` is the ``ScriptedLLM`` class (recorded answers per prompt id)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

_spec = importlib.util.spec_from_file_location("faithsieve_tests_scripted", Path(__file__).with_name("scripted.py"))
assert _spec and _spec.loader
scripted_module = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = scripted_module
_spec.loader.exec_module(scripted_module)


@pytest.fixture
def scripted() -> Any:
    return scripted_module.ScriptedLLM


@pytest.fixture(autouse=True)
def one_review_call_per_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scripted answers of these tests are written per unit or per step review, and their small caps force
    the scan: whole steps are not packed into one review call and the scan is not skipped for a cheap tree
    here. Packing and the skip are tested with the defaults in ``test_review_calls.py`` and, end to end,
    by the scripted-model harness (``tests/llm``)."""
    from faithsieve.stages import scan

    monkeypatch.setattr(scan, "PACK_STEPS", False)
    monkeypatch.setattr(scan, "REVIEW_ALL_CALLS", 0)
