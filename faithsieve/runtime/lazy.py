"""Heavy modules imported on first use, so that ``faithsieve --help`` does not pay for them.

``sympy = lazy_module("sympy", globals())`` binds a stand-in under the module's global name;
its first attribute access imports the real module and rebinds the global to it, so after that
the name is the module itself (no indirection left on the hot path). Type checkers see the
real import under ``TYPE_CHECKING``.

``freeze_after_import(modules)`` is for long-lived processes (score workers, the service): it imports
what the offline path needs (the caller names it: ``faithsieve.warmup.OFFLINE_MODULES``; this room
knows no module above it), then moves every object alive at that point out of the garbage
collector's reach (``gc.freeze``), so the full collections no longer rescan them, and raises the
collector's thresholds to ``LONG_LIVED_GC_THRESHOLDS``: checking a proof allocates many
short-lived objects that reference counting frees, and with the default thresholds (700, 10,
10) about 400 collections ran over the 1,400 ProcessBench items (0.11 s of CPU) against 2
(0.02 s) with these. The cyclic garbage left waiting is bounded by the first threshold.
"""

from __future__ import annotations

import gc
import importlib
from types import ModuleType
from typing import Any


class _LazyModule:
    """Stands in for module ``name`` in ``namespace`` until its first attribute access."""

    __slots__ = ("_name", "_namespace", "_alias")

    def __init__(self, name: str, namespace: dict[str, Any], alias: str) -> None:
        self._name = name
        self._namespace = namespace
        self._alias = alias

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self._name)
        if self._namespace.get(self._alias) is self:
            self._namespace[self._alias] = module
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def lazy_module(name: str, namespace: dict[str, Any], alias: str | None = None) -> Any:
    """A stand-in for ``import name as alias`` in ``namespace`` (a module's ``globals()``); the real
    module when it is already imported."""
    import sys

    loaded = sys.modules.get(name)
    if isinstance(loaded, ModuleType):
        return loaded
    return _LazyModule(name, namespace, alias or name.rpartition(".")[2])


_frozen = False

LONG_LIVED_GC_THRESHOLDS = (50_000, 20, 10)
"""Generation-0 allocations, and collections of the generation below, between collections."""


def freeze_after_import(modules: tuple[str, ...]) -> None:
    """Import ``modules`` and freeze the heap as it stands (once per process)."""
    global _frozen
    for name in modules:
        importlib.import_module(name)
    if not _frozen:
        gc.collect()
        gc.freeze()
        gc.set_threshold(*LONG_LIVED_GC_THRESHOLDS)
        _frozen = True
