"""A non-editable wheel ships every data file the package reads at run time (the API docs'
vendored assets, the web workbench's page, the worked examples, the LLM prompts,
proofloc-mini), and setuptools builds it without a 'package absent from `packages`' warning.

Slow (a wheel build through pip, with build isolation as a user's ``pip install .`` does);
``.ci/run`` runs it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]

# in the repository -> in the wheel
SHIPPED = {
    "api/static/docs": "faithsieve/api/static/docs",
    "api/static/workbench": "faithsieve/api/static/workbench",
    "datasets/examples": "faithsieve/datasets/examples",
    "faithsieve/llm/prompts": "faithsieve/llm/prompts",
}


def _tracked_copy(dest: Path) -> None:
    """The files git would commit (tracked, or untracked and not ignored): no stale build/."""
    names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=REPO, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, names):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def test_wheel_ships_the_data_files(tmp_path: Path) -> None:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs a git checkout to copy the project from")
    tree, out = tmp_path / "tree", tmp_path / "wheel"
    _tracked_copy(tree)
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", str(tree), "-w", str(out), "--no-deps", "-v"],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    log = build.stdout + build.stderr
    assert "is absent from the `packages` configuration" not in log
    (wheel,) = out.glob("faithsieve-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for src, dst in SHIPPED.items():
        files = [p for p in (REPO / src).iterdir() if p.is_file()]
        assert files, src
        missing = sorted(p.name for p in files if f"{dst}/{p.name}" not in names)
        assert not missing, f"{src}: {missing}"
    assert {"faithsieve/py.typed", "faithsieve/datasets/proofloc-mini/proofloc-mini.jsonl",
            "faithsieve/api/static/workbench/index.html", "faithsieve/api/static/docs/swagger-ui-bundle.js",
            "faithsieve/api/static/docs/redoc.standalone.js"} <= names
