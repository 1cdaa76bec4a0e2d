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
