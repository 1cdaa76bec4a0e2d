"""The import paths users put in their configs keep working after the house moved."""

from __future__ import annotations

import importlib

import pytest

PUBLIC = [
    ("faithsieve.grader", "compute_score"),
    ("faithsieve.grader", "grade"),
    ("faithsieve.grader", "grade_many"),
    ("faithsieve.grader", "make_compute_score"),
    ("faithsieve.grader", "make_trl_reward"),
    ("faithsieve.grader", "reward_func"),
    ("faithsieve.grader", "openrlhf_reward"),
    ("faithsieve.grader", "GraderConfig"),
    ("faithsieve.pipeline", "localize"),
    ("faithsieve.pipeline", "Pipeline"),
    ("faithsieve.scoring", "stable_view"),
    ("faithsieve.cli", "main"),
    ("faithsieve.api.app", "create_app"),
]


@pytest.mark.parametrize(("module", "name"), PUBLIC)
def test_public_name_imports(module: str, name: str) -> None:
    obj = getattr(importlib.import_module(module), name)
    assert callable(obj)


def test_stable_view_drops_timings() -> None:
    from faithsieve.scoring import stable_view

    assert stable_view({"verdict": "correct", "timings": {"total_ms": 1.0}, "steps": [{"time_ms": 2}]}) == {
        "verdict": "correct", "steps": [{}]}


def test_console_script_entry_point_resolves() -> None:
    from importlib.metadata import entry_points

    (ep,) = [e for e in entry_points(group="console_scripts") if e.name == "faithsieve"]
    assert ep.value == "faithsieve.cli:main" and ep.load() is importlib.import_module("faithsieve.cli").main


def test_httpx_is_a_base_dependency() -> None:
    """``faithsieve doctor`` and the Kimina client import httpx at start; a plain ``pip install .`` must
    bring it (recent openai releases no longer depend on it)."""
    import ast
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    deps = re.search(r"(?ms)^dependencies = \[(.*?)^\]", text)
    assert deps is not None and re.search(r'^\s*"httpx[><=]', deps.group(1), re.M)
    for path in (root / "faithsieve" / "doctor.py", root / "lean" / "remote.py"):
        tops = {a.name for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.Import)
                for a in n.names}
        assert "httpx" in tops, path  # the reason this test exists; drop it with the import
