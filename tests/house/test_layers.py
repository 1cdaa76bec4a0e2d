"""The import-layer check (``tools/layers.py``): passes on this tree, fails on a planted upward
import, on an import between rooms of equal rank, and on a module cycle."""

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


def _plant(path: Path, line: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + "\n" + line + "\n", encoding="utf-8")


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
    _plant(copy / "obligations" / "exact.py", "def _late():\n    from faithsieve.stages import judge  # planted\n")
    done = _run(copy)
    assert done.returncode == 1 and "obligations (rank 4) imports faithsieve.stages.judge" not in done.stdout
    assert "faithsieve.obligations.exact (obligations, rank 4) imports faithsieve.stages.judge" in done.stdout


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
