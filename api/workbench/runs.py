"""Read-only access to scoring runs for the workbench, restricted to the runs this server may show.

A run directory is shown only if the operator opened it (``faithsieve view RUN_DIR``) or it
lies under the configured runs root (``FAITHSIEVE_RUNS_ROOT``). Paths are compared after
resolving symlinks and ``..``, so nothing outside those directories can be named; the page
refers to runs by an opaque id and shows names, never a server path. Files are read by fixed names
only (``predictions.jsonl``, ``metrics.json``, ``run.json``, the two plots, ``evidence/<id>.json``),
and a file whose resolved path leaves its run directory (a symlink out of it) is not read. The
items' text comes from the dataset ``run.json`` names only when that file lies under the runs root
(or, with no root, under the run's parent directory or the server's working directory); the
operator's ``faithsieve view --dataset PATH`` is taken as given. With an API key set, every
``/web/runs`` route requires it (``faithsieve.api.routers.runs.PROTECTED_PREFIXES``); those routes
are ``faithsieve.api.routers.runs``.

Each item's outcome follows ``datasets.metrics``: ``exact`` (flag at the labelled step),
``early`` (flag before it, or on a correct proof), ``late``, ``missed`` (flawed, predicted
correct), ``correct`` (correct, predicted correct).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faithsieve.api.errors import Forbidden, NotFound

from faithsieve.core.errors import FaithSieveError, InputError

OUTCOMES = ("exact", "early", "late", "missed", "correct")
PLOTS = ("offsets.png", "subsets.png")
MAX_PAGE = 500
"""Most table rows in one answer."""
MAX_FILE_BYTES = 256 * 1024 * 1024
"""Largest run file read (predictions of a very large run are still far below it)."""
MAX_PATH_CHARS = 4096
MAX_LISTED = 200
"""Most run directories listed under the runs root."""
_HEADLINE = ("n", "n_error", "n_correct", "binary_accuracy", "exact_accuracy", "error_accuracy", "correct_accuracy",
             "f1", "flag_precision", "flags", "exact_flags", "early_flags", "late_flags", "missed_errors",
             "mean_signed_offset", "proofs_per_second")


def outcome(label: Any, predicted: Any) -> str:
    """One of ``OUTCOMES`` for a label and a prediction (each ``"correct"`` or a step number)."""
    lab = label if isinstance(label, int) and not isinstance(label, bool) else None
    pred = predicted if isinstance(predicted, int) and not isinstance(predicted, bool) else None
    if pred is None:
        return "correct" if lab is None else "missed"
    if lab is None or pred < lab:
        return "early"
    return "exact" if pred == lab else "late"


def _read_json(path: Path) -> Any:
    if path.stat().st_size > MAX_FILE_BYTES:
        raise InputError(f"{path.name} is larger than {MAX_FILE_BYTES} bytes")
    return json.loads(path.read_text(encoding="utf-8", errors="replace"))


def _is_run(path: Path) -> bool:
    return path.is_dir() and ((path / "predictions.jsonl").is_file() or (path / "metrics.json").is_file())


@dataclass
class Run:
    """One run directory, its predictions loaded once (reloaded when ``predictions.jsonl`` changes)."""

    path: Path
    dataset: Path | None = None
    """Where the items' text is read from (``run.json``'s dataset unless ``faithsieve view --dataset``)."""
    _stamp: tuple[int, int] | None = None
    _rows: list[dict[str, Any]] = field(default_factory=list)
    _by_id: dict[str, int] = field(default_factory=dict)
    _items: dict[str, Any] | None = None
    _items_error: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    allowed_datasets: tuple[Path, ...] = ()
    """Directories a dataset named by ``run.json`` may lie in (resolved)."""

    def file(self, name: str) -> Path:
        """``path/name`` if it is a regular file whose resolved path stays inside the run directory;
        ``NotFound`` otherwise (a symlink that leaves the run is treated as absent)."""
        candidate = self.path / name
        try:
            real = candidate.resolve()
        except (OSError, RuntimeError):
            raise NotFound(f"no file {_short(name)!r} in this run", {"field": "name"}) from None
        if not real.is_relative_to(self.path) or not real.is_file():
            raise NotFound(f"no file {_short(name)!r} in this run", {"field": "name"})
        return real

    def has(self, name: str) -> bool:
        """Whether ``file(name)`` would answer."""
        try:
            self.file(name)
        except NotFound:
            return False
        return True

    @property
    def id(self) -> str:
        return hashlib.sha256(str(self.path).encode("utf-8", "surrogateescape")).hexdigest()[:16]

    def use_dataset(self, path: Path) -> None:
        """Read the items' text from ``path`` from now on (forgets what was read, or failed, before)."""
        with self._lock:
            self.dataset, self._items, self._items_error = path, None, None

    def rows(self) -> list[dict[str, Any]]:
        """Prediction records in file order (a later line for the same id replaces the earlier one)."""
        with self._lock:
            try:
                path = self.file("predictions.jsonl")
                st = path.stat()
            except (OSError, NotFound):
                return []
            stamp = (st.st_mtime_ns, st.st_size)
            if stamp != self._stamp:
                if st.st_size > MAX_FILE_BYTES:
                    raise InputError(f"predictions.jsonl is larger than {MAX_FILE_BYTES} bytes")
                rows: list[dict[str, Any]] = []
                by_id: dict[str, int] = {}
                for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                    try:
                        rec = json.loads(line)
                        key = str(rec["id"])
                    except (json.JSONDecodeError, KeyError, TypeError):
                        continue  # a torn last line of a running score, or damage: skipped, not fatal
                    rec["outcome"] = outcome(rec.get("label"), rec.get("predicted"))
                    if key in by_id:
                        rows[by_id[key]] = rec
                    else:
                        by_id[key] = len(rows)
                        rows.append(rec)
                self._rows, self._by_id, self._stamp = rows, by_id, stamp
            return self._rows

    def plot(self, name: str) -> Path:
        """The file of one of the run's plots (``PLOTS``); ``NotFound`` for any other name or a plot not written."""
        if name not in PLOTS or not self.has(name):
            raise NotFound(f"no plot {_short(name)!r} in this run", {"field": "name"})
        return self.file(name)

    def record(self, item_id: str) -> dict[str, Any]:
        rows = self.rows()
        if item_id not in self._by_id:
            raise NotFound(f"no item {_short(item_id)!r} in this run", {"field": "id"})
        return rows[self._by_id[item_id]]

    def summary(self) -> dict[str, Any]:
        """Headline metrics, outcome and subset counts, and which plots exist."""
        metrics: dict[str, Any] = {}
        if self.has("metrics.json"):
            doc = _read_json(self.file("metrics.json"))
            if isinstance(doc, dict):
                metrics = {k: doc.get(k) for k in _HEADLINE if k in doc}
                metrics["ci95"] = doc.get("ci95")
                metrics["coverage"] = doc.get("coverage")
        rows = self.rows()
        dataset = self._dataset_path()
        return {"id": self.id, "name": self.path.name, "metrics": metrics,
                "outcomes": {o: c for o, c in Counter(r["outcome"] for r in rows).items()},
                "subsets": sorted({str(r.get("subset")) for r in rows if r.get("subset") is not None}),
                "items": len(rows), "plots": [p for p in PLOTS if self.has(p)],
                "dataset": dataset.name if dataset is not None else None}

    def _dataset_path(self) -> Path | None:
        if self.dataset is not None:
            return self.dataset
        try:
            state = _read_json(self.file("run.json"))
        except (OSError, ValueError, NotFound):
            return None
        raw = state.get("dataset") if isinstance(state, dict) else None
        if not isinstance(raw, str) or not raw or "\x00" in raw or len(raw) > MAX_PATH_CHARS:
            return None
        p = Path(raw)
        for cand in ([p] if p.is_absolute() else [Path.cwd() / p, self.path.parent / p]):
            try:
                real = cand.resolve()
            except (OSError, RuntimeError):
                continue
            if real.exists() and any(real.is_relative_to(d) for d in self.allowed_datasets):
                return real
        return None

    def item(self, item_id: str) -> tuple[Any | None, str]:
        """The labelled item (problem, steps, label) and where it came from, or ``None`` and why not."""
        name = f"evidence/{_safe_name(item_id)}.json"
        if self.has(name):
            ev = self.file(name)
            doc = _read_json(ev)
            it = doc.get("item") if isinstance(doc, dict) else None
            if isinstance(it, dict) and it.get("id") == item_id:
                return it, f"evidence/{ev.name}"
        with self._lock:
            if self._items is None and self._items_error is None:
                self._load_items()
            items, err = self._items, self._items_error
        if items is None:
            return None, err or "the dataset could not be read"
        where = self._dataset_path()
        shown = where.name if where is not None else "?"
        if item_id not in items:
            return None, f"item {_short(item_id)!r} is not in the dataset {shown}"
        return items[item_id], f"dataset {shown}"

    def _load_items(self) -> None:
        from faithsieve.datasets.adapters import load_dataset

        path = self._dataset_path()
        if path is None or not path.exists():
            self._items_error = "the run's dataset was not found (run.json names none, or one this server may " \
                                "not read); start `faithsieve view RUN_DIR --dataset PATH`"
            return
        try:
            data = load_dataset(path)
        except (FaithSieveError, OSError, ValueError) as exc:
            self._items_error = f"the run's dataset could not be read: {getattr(exc, 'message', exc)}"
            return
        self._items = {it.id: it.model_dump(mode="json") for it in data.items}


def _short(text: str, limit: int = 80) -> str:
    """A name as an error message shows it: at most ``limit`` characters."""
    return text if len(text) <= limit else text[:limit] + "…"


def _safe_name(item_id: str) -> str:
    from faithsieve.datasets.report import safe_name

    return safe_name(item_id)


class RunRegistry:
    """The runs this server may show: those opened by the operator and those under ``root``."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root.resolve() if root is not None else None
        self._runs: dict[str, Run] = {}
        self._opened: set[Path] = set()

    @classmethod
    def from_env(cls) -> RunRegistry:
        """The registry with ``FAITHSIEVE_RUNS_ROOT`` as its root (none when unset or empty)."""
        raw = os.environ.get("FAITHSIEVE_RUNS_ROOT", "").strip()
        return cls(Path(raw).expanduser() if raw else None)

    def add(self, path: Path, dataset: Path | None = None) -> Run:
        """Open a run directory on the operator's behalf (``faithsieve view``): it may be shown from now on."""
        real = path.expanduser().resolve()
        if not _is_run(real):
            raise InputError(f"{path} is not a scoring run (no predictions.jsonl or metrics.json)")
        self._opened.add(real)
        run = self._runs.get(Run(real).id) or self._run(real)
        if dataset is not None:
            run.use_dataset(dataset.expanduser().resolve())
        self._runs[run.id] = run
        return run

    def _run(self, real: Path) -> Run:
        """A run at a resolved, allowed path; the dataset its ``run.json`` names must lie under the root
        (with no root: under the run's parent directory or the server's working directory)."""
        dirs = (self.root,) if self.root is not None else (real.parent, Path.cwd().resolve())
        return Run(real, allowed_datasets=dirs)

    def allowed(self, real: Path) -> bool:
        """Whether a resolved path may be shown: opened by the operator, or inside the root."""
        if real in self._opened:
            return True
        return self.root is not None and real != self.root and real.is_relative_to(self.root)

    def open(self, text: str) -> Run:
        """The run at a path typed on the page, if it is allowed (403 otherwise, 404 if it is no run)."""
        if not text or len(text) > MAX_PATH_CHARS or "\x00" in text:
            raise InputError("give the path of a run directory", {"field": "path"})
        try:
            raw = Path(text).expanduser()
        except RuntimeError:  # "~nosuchuser/x": no such home directory
            raise InputError("this path names a home directory that does not exist", {"field": "path"}) from None
        if not raw.is_absolute():
            if self.root is None:
                raise Forbidden("relative paths are read under the runs root, and none is configured "
                                "(FAITHSIEVE_RUNS_ROOT)", {"field": "path"})
            raw = self.root / raw
        try:
            real = raw.resolve()
        except (OSError, RuntimeError):
            raise Forbidden("this path cannot be opened", {"field": "path"}) from None
        if not self.allowed(real):
            where = "under the runs root (FAITHSIEVE_RUNS_ROOT)" if self.root else "opened with `faithsieve view RUN_DIR`"
            raise Forbidden(f"only runs {where} can be shown", {"field": "path"})
        if not _is_run(real):
            raise NotFound("no scoring run there (no predictions.jsonl or metrics.json)", {"field": "path"})
        run = self._runs.get(Run(real).id) or self._run(real)
        self._runs[run.id] = run
        return run

    def get(self, run_id: str) -> Run:
        run = self._runs.get(run_id)
        if run is None or not self.allowed(run.path):
            raise NotFound(f"no run {_short(run_id)!r}; open it first", {"field": "run"})
        return run

    def listing(self) -> list[dict[str, Any]]:
        """Opened runs, then run directories directly under the root (at most ``MAX_LISTED``)."""
        seen = {r.path for r in self._runs.values()}
        out = [{"id": r.id, "name": r.path.name} for r in self._runs.values()]
        if self.root is not None and self.root.is_dir():
            for entry in sorted(self.root.iterdir())[:MAX_LISTED * 4]:
                real = entry.resolve()
                if real in seen or not self.allowed(real) or not _is_run(real):
                    continue
                run = self._run(real)
                self._runs[run.id] = run
                seen.add(real)
                out.append({"id": run.id, "name": real.name})
                if len(out) >= MAX_LISTED:
                    break
        return out
