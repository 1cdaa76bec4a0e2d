"""What a scoring run records about itself, and the check that a resumed run is the same run.

``run_identity`` gathers the settings that decide predictions, the package and backend
versions and the data's hash. A resumed run compares its identity with the one recorded in
``run.json``; ``identity_diff`` lists what changed (``proof_time_limit_s: 0.005 -> 5.0``).

Which settings decide predictions: every pipeline limit and checker setting; the language-model
and method settings when the mode is not ``offline``; the Lean settings when a Lean backend
is on. Settings that change only speed, cost accounting or where caches live (concurrency,
retries, prices, cache paths, worker counts) are recorded but not compared.
"""

from __future__ import annotations

import hashlib
import platform
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from faithsieve.core.errors import InputError
from faithsieve.core.settings import Settings


class RunMismatch(InputError):
    """The output directory holds a run made with other settings, versions or data (``detail``:
    the differences); resuming it would mix predictions."""

    code = "run_mismatch"


_NOT_PREDICTIVE = frozenset({
    "llm_api_key_env", "llm_concurrency", "llm_cache", "llm_cache_path", "llm_price_in_per_mtok",
    "llm_price_out_per_mtok", "llm_max_retries", "llm_backoff_s", "lean_cache_path", "lean_workers",
    "lean_server_api_key_env", "lake_path", "lean_repl_path", "lean_recycle_after", "llm_max_calls", "llm_max_cost",
})
"""Settings that do not change a prediction: recorded, not compared."""

_METHOD_PREFIXES = ("llm_", "scan_", "audit_", "max_audit_", "gate_")
_METHOD_FIELDS = frozenset({"ablations"})
_LEAN_PREFIX = "lean_"

_BACKEND_PACKAGES = ("faithsieve", "sympy", "z3-solver", "pydantic")
_LLM_PACKAGES = ("openai",)
_LEAN_PACKAGES = ("lean-interact",)


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def backend_versions(settings: Settings | None = None) -> dict[str, str]:
    """Python, faithsieve and checker versions; the LLM client's and Lean's when those are used."""
    dists = list(_BACKEND_PACKAGES)
    if settings is not None and settings.mode != "offline":
        dists += _LLM_PACKAGES
    if settings is not None and settings.lean_backend != "none":
        dists += _LEAN_PACKAGES
    out = {"python": platform.python_version()}
    for d in dists:
        v = _version(d)
        out["z3" if d == "z3-solver" else d] = v or "not installed"
    return out


def predictive_settings(settings: Settings) -> dict[str, Any]:
    """The settings that decide predictions (see the module docstring), as JSON values."""
    data = settings.model_dump(mode="json")
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in _NOT_PREDICTIVE:
            continue
        if settings.mode == "offline" and (key.startswith(_METHOD_PREFIXES) or key in _METHOD_FIELDS):
            continue
        if settings.lean_backend == "none" and key.startswith(_LEAN_PREFIX) and key != "lean_backend":
            continue
        out[key] = value
    return out


def data_hash(files: Iterable[Path]) -> str:
    """sha256 over the files' names (relative order) and bytes: ``sha256:<hex>``."""
    h = hashlib.sha256()
    for f in files:
        h.update(Path(f).name.encode("utf-8") + b"\0")
        with Path(f).open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        h.update(b"\0")
    return "sha256:" + h.hexdigest()


def run_identity(settings: Settings, files: Iterable[Path]) -> dict[str, Any]:
    """What must match for a resumed run to reuse predictions: settings, versions, data hash."""
    return {"settings": predictive_settings(settings), "versions": backend_versions(settings),
            "data_sha256": data_hash(files)}


def _flatten(doc: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in doc.items():
        if isinstance(v, Mapping):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def identity_diff(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """``key: old -> new`` for every difference (a key on one side only shows ``(unset)``). When
    ``mode`` or ``lean_backend`` changed, the settings that only that change brought in or out
    are not listed one by one."""
    a, b = _flatten(recorded), _flatten(current)
    switched = any(a.get(f"settings.{k}") != b.get(f"settings.{k}") for k in ("mode", "lean_backend"))
    lines = []
    for key in sorted(set(a) | set(b), key=lambda k: (not k.startswith("settings.mode"), k)):
        if switched and key.startswith("settings.") and (key not in a or key not in b):
            continue
        if a.get(key, _UNSET) != b.get(key, _UNSET):
            lines.append(f"{key.removeprefix('settings.')}: {_show(a.get(key, _UNSET))} -> {_show(b.get(key, _UNSET))}")
    return lines


_UNSET = object()


def _show(v: Any) -> str:
    return "(unset)" if v is _UNSET else repr(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)


def check_resume(out: Path, state_name: str, recorded: Mapping[str, Any] | None, current: Mapping[str, Any]) -> None:
    """Refuse (``RunMismatch``) to resume predictions in ``out`` made with other settings,
    versions or data, or whose ``state_name`` file records none."""
    if recorded is None:
        raise RunMismatch(f"{out}: holds predictions but its {state_name} records no settings (an older run); "
                          f"pass --force-new to start over, or choose another --out")
    diff = identity_diff(recorded, current)
    if diff:
        raise RunMismatch(f"{out}: holds a run made with other settings, versions or data ({'; '.join(diff)}); "
                          f"pass --force-new to start over, or choose another --out", diff)
