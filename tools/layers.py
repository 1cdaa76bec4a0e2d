"""The import-layer check: no room imports a room above it, and no module cycle.

Rooms and their order are the table below (``ARCHITECTURE.md`` says what each one is for). A
module may import its own room and rooms of a lower rank; rooms of equal rank are independent
and may not import each other. Every import counts — at module level, inside functions, under
``TYPE_CHECKING`` — because each is a dependency a reader has to follow. Independently of rooms,
the graph of modules must have no cycle (importing a parent package does not count: Python runs
it for any of its modules). An optional extra's package (``OPTIONAL_IMPORTS``: Ray) is imported only by
the module named for it. Exit status 1 and one line per finding when the house is broken.

A module named in a string is imported too, by whoever holds the string, so strings count:

- an import call — ``importlib.import_module(name)``, ``import_module`` under any alias,
  ``importlib.__import__``, ``__import__`` — whose name is a literal (a relative ``".x"`` is read
  against the module's own package) imports that module, ours or an optional extra's;
- any other string literal that is a dotted name beginning ``faithsieve.`` (optionally followed by
  ``:attribute``, the entry-point form) refers to the longest module of ours it starts with, wherever it
  is written: in a call, a tuple or list of names handed to an import function later, a default
  argument. The module that writes the name owns the knowledge of it, so the name must be one it may
  import. A name that is no module of ours below the root package is not read, and neither is a logger's
  name (the literal argument of ``getLogger``): a logger is not imported.

A name computed at run time (``import_module(prefix + x)``) is not seen; the literals it is built from
are, wherever they are written. Tests are not rooms and are not checked (a monkeypatch target is a string).

    python tools/layers.py            # check
    python tools/layers.py --graph    # print the room graph
    python tools/layers.py --root DIR # check another checkout
"""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
"""The checkout checked (``--root DIR`` checks another one, e.g. a copy with a planted import)."""

# (module prefix, room, rank): the longest matching prefix decides
ROOMS: list[tuple[str, str, float]] = [
    ("faithsieve.core", "core", 0),
    ("faithsieve.runtime", "runtime", 1),
    ("faithsieve.mathtext", "mathtext", 2),
    ("faithsieve.llm", "llm", 2),
    ("faithsieve.split", "split", 2),
    ("faithsieve.statetree", "statetree", 3),
    ("faithsieve.datasets", "datasets", 3),
    ("faithsieve.obligations", "obligations", 4),
    # inside obligations, one folder per job and an order among them (a fractional rank): the typed
    # obligations below the procedures that decide them; extraction and the checkers both use the
    # procedures and are independent of each other
    ("faithsieve.obligations.kinds", "obligations.kinds", 4.1),
    ("faithsieve.obligations.procedures", "obligations.procedures", 4.2),
    ("faithsieve.obligations.extraction", "obligations.extraction", 4.3),
    ("faithsieve.obligations.checkers", "obligations.checkers", 4.3),
    ("faithsieve.lean", "lean", 5),
    ("faithsieve.verdict", "verdict", 5),
    ("faithsieve.stages", "stages", 6),
    ("faithsieve.pipeline", "pipeline", 7),
    ("faithsieve.synthesis", "pipeline", 7),
    ("faithsieve.warmup", "pipeline", 7),
    ("faithsieve.grading", "grading", 8),
    ("faithsieve.grader", "grading", 8),
    ("faithsieve.scoring", "scoring", 8),
    ("faithsieve.doctor", "doctor", 8),
    ("faithsieve.rewrite", "rewrite", 9),
    ("faithsieve.api", "service", 9),
    ("faithsieve.cli", "cli", 10),
    ("faithsieve.__main__", "cli", 10),
    ("faithsieve", "package", 0),  # the empty root package itself (exact match only)
]


OPTIONAL_IMPORTS: dict[str, frozenset[str]] = {
    "ray": frozenset({"faithsieve.runtime.raycluster"}),  # the ray extra: imported in one module, lazily
}
"""Third-party packages of an optional extra and the only modules of ours allowed to import them."""


def optional_imports(module: str, path: Path, tree: ast.AST, called: dict[int, str]) -> Iterator[str]:
    """A finding for each import of an ``OPTIONAL_IMPORTS`` package outside the modules allowed it
    (``tree``: the module parsed; ``called``: its import calls, ``_import_calls``)."""
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else \
            [called[id(node)]] if id(node) in called else []
        for name in names:
            top = name.split(".")[0]
            if top in OPTIONAL_IMPORTS and module not in OPTIONAL_IMPORTS[top]:
                yield (f"{path.relative_to(ROOT)}:{node.lineno}: {module} imports {name}, an optional extra that only "
                       f"{', '.join(sorted(OPTIONAL_IMPORTS[top]))} may import")


def room_of(module: str) -> tuple[str, float] | None:
    best = None
    for prefix, room, rank in ROOMS:
        inside = module == prefix or (room != "package" and module.startswith(prefix + "."))
        if inside and (best is None or len(prefix) > len(best[0])):
            best = (prefix, room, rank)
    return None if best is None else (best[1], best[2])


def modules() -> dict[str, Path]:
    """Every module of the package, by import name, from the package-dir mapping."""
    with (ROOT / "pyproject.toml").open("rb") as fh:
        mapping = tomllib.load(fh)["tool"]["setuptools"]["package-dir"]
    found: dict[str, Path] = {}
    for name, folder in mapping.items():
        base = ROOT / folder
        for path in base.rglob("*.py"):
            rel = path.relative_to(base).with_suffix("").parts
            if any(not part.isidentifier() for part in rel):
                continue  # data folders with scripts (names Python cannot import)
            parts = [*name.split("."), *rel]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found.setdefault(".".join(parts), path)
    return found


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


OUR_NAME = re.compile(r"faithsieve(\.[A-Za-z_]\w*)+(:[A-Za-z_][\w.]*)?")
"""A string literal that names a module of ours: ``faithsieve.x.y`` or ``faithsieve.x.y:attr``."""


def _absolute(package: str, level: int, name: str) -> str:
    """The absolute module ``name`` (empty: the package itself) names ``level`` dots up from ``package``."""
    base = package.split(".")[: len(package.split(".")) - level + 1]
    return ".".join([*base, *([name] if name else [])])


def _parse(module: str, path: Path) -> tuple[ast.AST, dict[int, str]]:
    """The module parsed, once, and its import calls (``_import_calls``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return tree, _import_calls(tree, _package_of(module, path))


def _import_calls(tree: ast.AST, package: str) -> dict[int, str]:
    """The module name (absolute) of every import call with a literal name, by the call node's id."""
    importlib_names = {"importlib"}
    function_names = {"__import__"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            importlib_names |= {a.asname or a.name for a in node.names if a.name == "importlib"}
        elif isinstance(node, ast.ImportFrom) and node.module == "importlib" and not node.level:
            function_names |= {a.asname or a.name for a in node.names if a.name in {"import_module", "__import__"}}
    found: dict[int, str] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        fn = node.func
        is_import = (isinstance(fn, ast.Name) and fn.id in function_names) or (
            isinstance(fn, ast.Attribute) and fn.attr in {"import_module", "__import__"}
            and isinstance(fn.value, ast.Name) and fn.value.id in importlib_names)
        arg = node.args[0]
        if not (is_import and isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value):
            continue
        name = arg.value
        if name.startswith("."):  # relative to the package argument; read against the module's own package
            name = _absolute(package, len(name) - len(name.lstrip(".")), name.lstrip("."))
        found[id(node)] = name
    return found


def _ours(name: str, known: set[str]) -> str | None:
    """The longest module of ours that dotted ``name`` starts with, below the root package."""
    parts = name.split(":")[0].split(".")
    for n in range(len(parts), 1, -1):
        if ".".join(parts[:n]) in known:
            return ".".join(parts[:n])
    return None


def imports(module: str, path: Path, known: set[str], tree: ast.AST, called: dict[int, str]) -> Iterator[tuple[str, int]]:
    """(imported module of ours, line) for every import statement, import call and module name in a string
    (``tree``: the module parsed; ``called``: its import calls, ``_import_calls``)."""
    package = _package_of(module, path)
    loggers = {id(node.args[0]) for node in ast.walk(tree) if isinstance(node, ast.Call) and node.args and (
        (isinstance(node.func, ast.Attribute) and node.func.attr == "getLogger")
        or (isinstance(node.func, ast.Name) and node.func.id == "getLogger"))}
    for node in ast.walk(tree):
        if id(node) in called and isinstance(node, ast.Call) and str(ast.literal_eval(node.args[0])).startswith("."):
            named = _ours(called[id(node)], known)  # a relative name: the one form whose literal does not show the module
            if named is not None:
                yield named, node.lineno
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                target = _absolute(package, node.level, node.module or "")
            else:
                target = node.module or ""
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in known]
            if subs:
                yield from ((s, node.lineno) for s in subs)
            elif target in known:
                yield target, node.lineno
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and OUR_NAME.fullmatch(node.value) \
                and id(node) not in loggers:
            named = _ours(node.value, known)
            if named is not None:
                yield named, node.lineno


def check() -> list[str]:
    mods = modules()
    known = set(mods)
    problems: list[str] = []
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in sorted(mods.items()):
        src = room_of(module)
        if src is None:
            problems.append(f"{path.relative_to(ROOT)}: module {module} belongs to no room (add it to tools/layers.py)")
            continue
        tree, called = _parse(module, path)
        problems.extend(optional_imports(module, path, tree, called))
        for target, line in imports(module, path, known, tree, called):
            if module.startswith(target + ".") or target == module:
                continue  # a parent package: Python runs it for any of its modules
            graph[module].add(target)
            dst = room_of(target)
            if dst is None or dst[0] == src[0] or dst[0] == "package":
                continue
            where = f"{path.relative_to(ROOT)}:{line}"
            if dst[1] > src[1]:
                problems.append(f"{where}: {module} ({src[0]}, rank {src[1]}) imports {target} "
                                f"({dst[0]}, rank {dst[1]}): a lower room may not import a higher one")
            elif dst[1] == src[1]:
                problems.append(f"{where}: {module} ({src[0]}) imports {target} ({dst[0]}): "
                                f"rooms of equal rank {src[1]} are independent")
    problems.extend(f"import cycle: {' -> '.join(c)}" for c in cycles(graph))
    return problems


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (a real import path) per strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(_one_cycle(graph, set(comp)))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _one_cycle(graph: dict[str, set[str]], comp: set[str]) -> list[str]:
    """A shortest import path from the component's first module back to itself (breadth first)."""
    start = min(comp)
    parent: dict[str, str] = {}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph.get(v, ())):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return [*reversed(path), start]
            if w in comp and w not in parent and w != start:
                parent[w] = v
                queue.append(w)
    return sorted(comp)


def room_graph() -> dict[str, set[str]]:
    mods = modules()
    edges: dict[str, set[str]] = defaultdict(set)
    for module, path in mods.items():
        src = room_of(module)
        for target, _ in imports(module, path, set(mods), *_parse(module, path)):
            dst = room_of(target)
            if src and dst and src[0] != dst[0] and dst[0] != "package":
                edges[src[0]].add(dst[0])
    return edges


def main(argv: list[str]) -> int:
    global ROOT
    if "--root" in argv:
        ROOT = Path(argv[argv.index("--root") + 1]).resolve()
    if "--graph" in argv:
        for room, targets in sorted(room_graph().items()):
            print(f"{room:12s} -> {' '.join(sorted(targets))}")
        return 0
    problems = check()
    for p in problems:
        print(p)
    print(f"layers: {len(problems)} finding(s)" if problems else "layers: ok (no upward import, no cycle)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
