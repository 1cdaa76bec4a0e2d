"""The import-layer check (``tools/layers.py``): passes on this tree, fails on a planted upward
import (a statement, or a module named in a string), on an import between rooms of equal rank, and on a
module cycle (one closed inside functions too)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "layers.py"
FOLDERS = ("faithsieve", "statetree", "obligations", "lean", "datasets", "api")


def _run(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TOOL), "--root", str(root)], capture_output=True, text=True, timeout=120)


@pytest.fixture()
def copy(tmp_path: Path) -> Path:
    """The package's source folders and pyproject.toml, copied (Python files only)."""
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=lambda d, names: [
            n for n in names if not (n.endswith(".py") or (Path(d) / n).is_dir()) or n == "__pycache__"])
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def _plant(path: Path, line: str) -> int:
    """Append ``line`` (one or more lines) to the file; the number of its first line."""
    text = path.read_text(encoding="utf-8")
    path.write_text(text + "\n" + line + "\n", encoding="utf-8")
    return text.count("\n") + 2 - (not text.endswith("\n"))


def test_the_tree_as_it_is_passes() -> None:
    done = _run(ROOT)
    assert done.returncode == 0, done.stdout
    assert "layers: ok" in done.stdout


def test_an_upward_import_fails(copy: Path) -> None:
    assert _run(copy).returncode == 0
    _plant(copy / "faithsieve" / "core" / "errors.py", "from faithsieve.pipeline import localize  # planted")
    done = _run(copy)
    assert done.returncode == 1
    assert "faithsieve.core.errors (core, rank 0) imports faithsieve.pipeline (pipeline, rank 7)" in done.stdout


def test_an_upward_import_inside_a_function_fails(copy: Path) -> None:
    _plant(copy / "obligations" / "checkers" / "exact.py", "def _late():\n    from faithsieve.stages import judge  # planted\n")
    done = _run(copy)
    assert done.returncode == 1 and "obligations (rank 4) imports faithsieve.stages.judge" not in done.stdout
    assert "faithsieve.obligations.checkers.exact (obligations.checkers, rank 4.3) imports faithsieve.stages.judge" in done.stdout


def test_the_folders_of_obligations_keep_their_order(copy: Path) -> None:
    """Inside obligations: kinds, then procedures, then extraction and the checkers (independent)."""
    _plant(copy / "obligations" / "procedures" / "calculus.py", "from faithsieve.obligations.checkers import exact  # planted")
    _plant(copy / "obligations" / "extraction" / "readings.py", "from faithsieve.obligations.checkers import memo  # planted")
    done = _run(copy)
    assert done.returncode == 1
    assert ("faithsieve.obligations.procedures.calculus (obligations.procedures, rank 4.2) imports "
            "faithsieve.obligations.checkers.exact (obligations.checkers, rank 4.3)") in done.stdout
    assert ("faithsieve.obligations.extraction.readings (obligations.extraction) imports faithsieve.obligations.checkers.memo "
            "(obligations.checkers): rooms of equal rank 4.3 are independent") in done.stdout


def test_rooms_of_equal_rank_are_independent(copy: Path) -> None:
    _plant(copy / "faithsieve" / "llm" / "cache.py", "from faithsieve.mathtext import ast  # planted")
    done = _run(copy)
    assert done.returncode == 1 and "rooms of equal rank 2 are independent" in done.stdout


def test_a_module_cycle_inside_a_room_fails(copy: Path) -> None:
    _plant(copy / "faithsieve" / "mathtext" / "ast.py", "from faithsieve.mathtext import parser  # planted")
    done = _run(copy)
    assert done.returncode == 1 and "import cycle:" in done.stdout and "faithsieve.mathtext.ast" in done.stdout


def test_a_module_in_no_room_fails(copy: Path) -> None:
    (copy / "faithsieve" / "stray.py").write_text("x = 1\n", encoding="utf-8")
    done = _run(copy)
    assert done.returncode == 1 and "faithsieve.stray belongs to no room" in done.stdout


def test_ray_imported_outside_its_one_module_fails(copy: Path) -> None:
    _plant(copy / "faithsieve" / "grading" / "onray.py", "def _late():\n    import ray.util  # planted\n")
    res = _run(copy)
    assert res.returncode == 1
    assert "faithsieve.grading.onray imports ray.util, an optional extra" in res.stdout


UPWARD = "a lower room may not import a higher one"


def test_a_string_import_upward_fails(copy: Path) -> None:
    at = _plant(copy / "faithsieve" / "runtime" / "urls.py",
                'import importlib\n\ndef _late():\n    return importlib.import_module("faithsieve.pipeline")  # planted')
    done = _run(copy)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0] == (f"faithsieve/runtime/urls.py:{at + 3}: faithsieve.runtime.urls (runtime, rank 1) imports "
                        f"faithsieve.pipeline (pipeline, rank 7): {UPWARD}")
    # the pipeline reaches urls (through the Lean client), so the name closes a module cycle as well
    assert [line for line in lines[1:-1] if line.startswith("import cycle:")] == lines[1:-1] == [
        line for line in lines if "faithsieve.runtime.urls -> faithsieve.pipeline ->" in line]


def test_every_form_of_a_string_import_counts(copy: Path) -> None:
    at = _plant(copy / "faithsieve" / "core" / "errors.py", "\n".join([
        "import importlib as il",
        "from importlib import import_module as load",
        "import logging",
        'NAMES = ("sympy", "faithsieve.stages.rule")  # a list handed to an import function later',
        'load("faithsieve.lean.backend")',
        'il.import_module("..verdict", __package__)',
        '__import__("faithsieve.grader")',
        'ENTRY = "faithsieve.cli:main"',
        'logging.getLogger("faithsieve.api")  # a logger is no import',
        'NOT_OURS = "faithsieve.no_such_module"',
    ]))
    done = _run(copy)
    head = "faithsieve.core.errors (core, rank 0) imports"
    assert done.returncode == 1
    assert sorted(line for line in done.stdout.splitlines() if line.startswith("faithsieve/")) == sorted([
        f"faithsieve/core/errors.py:{at + 3}: {head} faithsieve.stages.rule (stages, rank 6): {UPWARD}",
        f"faithsieve/core/errors.py:{at + 4}: {head} faithsieve.lean.backend (lean, rank 5): {UPWARD}",
        f"faithsieve/core/errors.py:{at + 5}: {head} faithsieve.verdict (verdict, rank 5): {UPWARD}",
        f"faithsieve/core/errors.py:{at + 6}: {head} faithsieve.grader (grading, rank 8): {UPWARD}",
        f"faithsieve/core/errors.py:{at + 7}: {head} faithsieve.cli (cli, rank 10): {UPWARD}",
    ])


def test_ray_imported_by_name_outside_its_one_module_fails(copy: Path) -> None:
    at = _plant(copy / "faithsieve" / "grading" / "onray.py",
                'def _late():\n    from importlib import import_module\n    return import_module("ray")  # planted')
    done = _run(copy)
    assert done.returncode == 1
    assert (f"faithsieve/grading/onray.py:{at + 2}: faithsieve.grading.onray imports ray, an optional extra that only "
            "faithsieve.runtime.raycluster may import") in done.stdout


def test_a_cycle_closed_inside_functions_fails(copy: Path) -> None:
    _plant(copy / "faithsieve" / "runtime" / "atomic.py", "def _late():\n    from faithsieve.runtime import urls  # planted")
    _plant(copy / "faithsieve" / "runtime" / "urls.py", "def _late():\n    import faithsieve.runtime.atomic  # planted")
    done = _run(copy)
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "import cycle: faithsieve.runtime.atomic -> faithsieve.runtime.urls -> faithsieve.runtime.atomic",
        "layers: 1 finding(s)"]
