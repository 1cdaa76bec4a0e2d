"""Run mypy over the installed layout of the package.

The repository maps its top-level folders into one namespace (``statetree/`` is
``faithsieve.statetree``, see ``[tool.setuptools.package-dir]``), which mypy cannot follow from the
source tree. This builds the package as it is installed — a temporary tree of symbolic links —
and runs ``mypy -p faithsieve`` there with the ``[tool.mypy]`` settings of ``pyproject.toml``.
Paths in the report are the repository's own.

Why a tree of links: mypy finds a module only in a folder named by its import path and has no option
that maps a package to a folder of another name (``mypy_path`` and ``explicit_package_bases`` only add
roots), while the plain ``pip install -e`` that CI and the README use resolves the mapping with an import
hook that mypy does not run. Setuptools' strict editable mode (``--config-settings editable_mode=strict``)
builds such a tree too, but only at install time (a new module needs a reinstall), only for a checkout
installed that way, and under ``build/`` whose paths mypy would report; this builds it fresh on every run.

    python tools/typecheck.py [mypy options]
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def package_dirs() -> dict[str, str]:
    """``{"faithsieve.statetree": "statetree", ...}`` from pyproject.toml."""
    with (ROOT / "pyproject.toml").open("rb") as fh:
        conf = tomllib.load(fh)
    return dict(conf["tool"]["setuptools"]["package-dir"])


def build_tree(dest: Path) -> dict[str, str]:
    """Link every mapped folder into ``dest`` at its import path; the path prefixes to map back."""
    back = {}
    for name, folder in sorted(package_dirs().items(), key=lambda kv: kv[0].count(".")):
        target = dest.joinpath(*name.split("."))
        if target.exists() or target.is_symlink():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if name == "faithsieve":  # the root package: its files linked one by one, so mapped folders can sit inside it
            target.mkdir()
            for entry in (ROOT / folder).iterdir():
                if entry.name not in {n.split(".")[1] for n in package_dirs() if n.count(".") == 1}:
                    os.symlink(entry, target / entry.name)
        else:
            os.symlink(ROOT / folder, target)
        back["/".join(name.split(".")) + "/"] = folder.rstrip("/") + "/"
    return back


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="faithsieve-mypy-") as tmp:
        back = build_tree(Path(tmp))
        cmd = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "-p", "faithsieve", *argv]
        done = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        prefixes = sorted(back, key=len, reverse=True)
        pattern = re.compile("^(" + "|".join(re.escape(p) for p in prefixes) + ")", re.M)
        out = pattern.sub(lambda m: back[m.group(1)], done.stdout)
        sys.stdout.write(out)
        sys.stderr.write(done.stderr)
        return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
