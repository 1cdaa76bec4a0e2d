"""Ray puts the driver's working directory on its workers' path: a ``faithsieve/`` source folder there
(the repository root after a non-editable ``pip install .``) shadowed the installed package, and every
item or reward came from an import error (issue 38). No cluster needed: Ray is replaced by a recorder
(editable installs, as in these tests, hide the shadowing itself)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from faithsieve.runtime import raycluster


class _Ray:
    def __init__(self) -> None:
        self.cwd: list[str] = []

    def is_initialized(self) -> bool:
        return False

    def init(self, **options: Any) -> None:
        self.cwd.append(os.getcwd())


def test_the_driver_starts_ray_from_the_package_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = _Ray()
    monkeypatch.setattr(raycluster, "import_ray", lambda: fake)
    monkeypatch.chdir(tmp_path)
    raycluster.connect("auto")
    assert fake.cwd == [str(raycluster.package_root())]
    assert os.getcwd() == str(tmp_path)  # given back


def test_a_shadowing_source_folder_is_named_with_the_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert raycluster.shadowing_source(tmp_path) is None
    (tmp_path / "faithsieve").mkdir()
    (tmp_path / "faithsieve" / "__init__.py").write_text("", encoding="utf-8")
    assert raycluster.shadowing_source(tmp_path) == tmp_path / "faithsieve"
    assert raycluster.shadowing_source(raycluster.package_root()) is None  # the package itself
    with pytest.raises(raycluster.RayUnavailable, match="pip install -e"):
        raycluster.refuse_shadowing(tmp_path)
    monkeypatch.chdir(tmp_path)
    from faithsieve.grading.onray import grader_actor

    with pytest.raises(raycluster.RayUnavailable, match="another directory"):
        grader_actor()
