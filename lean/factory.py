"""``build_backend(settings)``: the configured Lean backend, checked before it is handed out.

``lean_backend="none"`` gives ``None`` (no formal checks). ``local`` and ``remote`` give a
backend whose ``available()`` has already answered yes, wrapped in the result cache
(``lean_cache_path``; an empty path turns the cache off). A configured backend that cannot run
raises ``LeanUnavailable`` with its one-line reason, quickly (local: file-system detection only;
remote: one health request with a 5 s limit), before any file is written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from faithsieve.lean.backend import LeanBackend, LeanUnavailable
from faithsieve.lean.cache import CachedBackend

if TYPE_CHECKING:
    from faithsieve.core.settings import Settings


def build_backend(settings: Settings, *, cache: bool = True) -> LeanBackend | None:
    """The backend ``settings`` configure, ready to check; raises ``LeanUnavailable`` if it cannot run."""
    backend: LeanBackend
    if settings.lean_backend == "none":
        return None
    if settings.lean_backend == "local":
        from faithsieve.lean.local import LocalLeanBackend

        backend = LocalLeanBackend(settings)
    elif settings.lean_backend == "remote":
        from faithsieve.lean.remote import KiminaBackend

        backend = KiminaBackend(settings)
    else:  # pragma: no cover (Settings validates the choice)
        raise LeanUnavailable(f"unknown lean_backend {settings.lean_backend!r}")
    ok, why = backend.available()
    if not ok:
        backend.close()
        raise LeanUnavailable(f"Lean backend '{settings.lean_backend}' unavailable: {why}")
    if cache and settings.lean_cache_path:
        return CachedBackend(backend, settings.lean_cache_path)
    return backend
