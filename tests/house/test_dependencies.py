"""Every third-party module the installed package imports is a base dependency in ``pyproject.toml``, or
sits behind an optional guard: an import inside ``try: ... except ImportError`` whose distribution is
declared in an extra (``pip install 'faithsieve[math-verify]'``). Read statically from the source of
every package ``[tool.setuptools]`` installs: module-level and function-level imports alike, so a
``faithsieve doctor`` that imports httpx only when it runs is caught as well (``pip install .`` then
gives a traceback; CI's first step, ``.ci/fresh_install_smoke.sh``, shows it end to end)."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
GUARDS = ("ImportError", "ModuleNotFoundError")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_names(block: str) -> set[str]:
    return {_normal(m.group(1)) for m in re.finditer(r'^\s*"([A-Za-z0-9][A-Za-z0-9._-]*)', block, re.M)}


def base_dependencies(text: str = PYPROJECT) -> set[str]:
    """The distributions of ``[project] dependencies`` (read without tomllib: Python 3.10 has none)."""
    block = re.search(r"(?ms)^dependencies = \[(.*?)^\]", text)
    assert block is not None, "pyproject.toml has no dependencies list"
    return _requirement_names(block.group(1))


def extra_dependencies(text: str = PYPROJECT) -> set[str]:
    """The distributions named by any ``[project.optional-dependencies]`` extra."""
    section = re.search(r"(?ms)^\[project\.optional-dependencies\]\n(.*?)^\[", text)
    assert section is not None
    return {_normal(m.group(1)) for m in re.finditer(r'"([A-Za-z0-9][A-Za-z0-9._-]*)', section.group(1))}


def installed_dirs(text: str = PYPROJECT) -> list[Path]:
    """The source folder of every package ``[tool.setuptools] packages`` lists (``package-dir`` mapped)."""
    packages = re.search(r"(?ms)^packages = \[(.*?)^\]", text)
    assert packages is not None
    mapping = dict(re.findall(r'^"([\w.]+)" = "([\w/.-]+)"$', text.split("[tool.setuptools.package-dir]")[1], re.M))
    out = []
    for pkg in re.findall(r'"([\w.]+)"', packages.group(1)):
        head = max((k for k in mapping if pkg == k or pkg.startswith(k + ".")), key=len)
        out.append(ROOT / mapping[head] / Path(*pkg[len(head):].strip(".").split(".")) if pkg != head
                   else ROOT / mapping[head])
    return out


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _guards(handlers: list[ast.ExceptHandler]) -> bool:
    names = set()
    for h in handlers:
        for t in (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]) if h.type is not None else []:
            if isinstance(t, ast.Name):
                names.add(t.id)
    return bool(names & set(GUARDS))


LOADERS = ("lazy_module", "import_module", "__import__")
"""Calls that import the module their first argument names (``lazy_module("networkx", ...)``)."""


def _imported_by_name(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    first = node.args[0]
    if name in LOADERS and isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value.split(".")[0]
    return None


def imports(tree: ast.AST, guarded: bool = False) -> Iterator[tuple[str, int, bool]]:
    """``(top-level module, line, guarded)`` for every absolute import that runs (``TYPE_CHECKING`` blocks
    are not run), at any depth: module level, in functions, in classes; and every module a loader call
    names (``lazy_module("networkx", ...)``, ``importlib.import_module("x")``)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking_only(node):
            yield from (i for n in node.orelse for i in imports(ast.Module(body=[n], type_ignores=[]), guarded))
            continue
        if isinstance(node, ast.Try):
            inner = guarded or _guards(node.handlers)
            for n in node.body:
                yield from imports(ast.Module(body=[n], type_ignores=[]), inner)
            for n in [*node.orelse, *node.finalbody, *node.handlers]:
                yield from imports(ast.Module(body=[n], type_ignores=[]), guarded)
            continue
        if isinstance(node, ast.Import):
            yield from ((a.name.split(".")[0], node.lineno, guarded) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            yield node.module.split(".")[0], node.lineno, guarded
        else:
            named = _imported_by_name(node)
            if named:
                yield named, node.lineno, guarded  # type: ignore[attr-defined]
            yield from imports(node, guarded)


def third_party(path: Path) -> Iterator[tuple[str, int, bool]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for top, line, guarded in imports(tree):
        if top not in sys.stdlib_module_names and top != "faithsieve" and top != "__future__":
            yield top, line, guarded


_DISTS = packages_distributions()


def distribution(module: str) -> str:
    """The distribution that provides ``module`` (``z3`` -> ``z3-solver``); its own name when not installed."""
    return _normal(_DISTS.get(module, [module])[0])


def undeclared(text: str = PYPROJECT) -> list[str]:
    """``path:line: module (distribution)`` for each import that a plain ``pip install .`` would not satisfy."""
    base, extras = base_dependencies(text), extra_dependencies(text)
    out = []
    for folder in installed_dirs(text):
        for path in sorted(folder.glob("*.py")):
            for top, line, guarded in third_party(path):
                dist = distribution(top)
                if dist in base or (guarded and dist in extras):
                    continue
                why = "guarded, but in no extra" if guarded else "not a base dependency"
                out.append(f"{path.relative_to(ROOT)}:{line}: {top} ({dist}): {why}")
    return out


def test_the_installed_package_is_what_the_source_folders_hold() -> None:
    dirs = {d.relative_to(ROOT).as_posix() for d in installed_dirs()}
    assert {"faithsieve", "faithsieve/cli", "api", "statetree", "obligations", "lean", "datasets",
            "datasets/injection"} <= dirs
    assert all(d.is_dir() for d in installed_dirs())


def test_every_runtime_import_is_declared() -> None:
    assert undeclared() == []


def test_the_audit_sees_function_level_and_guarded_imports() -> None:
    seen = {(top, guarded) for top, _, guarded in third_party(ROOT / "faithsieve" / "doctor.py")}
    assert ("httpx", False) in seen  # imported inside a function
    assert ("math_verify", True) in {(t, g) for t, _, g in third_party(ROOT / "faithsieve" / "grading" / "check.py")}


@pytest.mark.parametrize("dropped", ["httpx", "z3-solver", "networkx", "mpmath", "starlette"])
def test_dropping_a_runtime_dependency_is_caught(dropped: str) -> None:
    block = re.search(r"(?ms)^dependencies = \[(.*?)^\]", PYPROJECT)
    assert block is not None
    kept = "\n".join(ln for ln in block.group(1).splitlines() if not re.match(rf'\s*"{re.escape(dropped)}[><=~!;" ]', ln))
    assert kept != block.group(1), f"{dropped} is not in the dependencies list"
    problems = undeclared(PYPROJECT.replace(block.group(1), kept))
    assert problems and all(f"({dropped})" in p for p in problems), problems


def test_an_unguarded_import_of_an_extra_is_caught() -> None:
    tree = ast.parse("def f():\n    from math_verify import parse\n    return parse\n")
    assert list(imports(tree)) == [("math_verify", 2, False)]
    tree = ast.parse("try:\n    import math_verify\nexcept ImportError:\n    math_verify = None\n")
    assert list(imports(tree)) == [("math_verify", 2, True)]
    tree = ast.parse("if TYPE_CHECKING:\n    import networkx as nx\nelse:\n    nx = lazy_module('networkx', globals())\n")
    assert list(imports(tree)) == [("networkx", 4, False)]
