"""The scoring run: items -> predictions (resumable, parallel) -> metrics and report.

``run_score`` reads a dataset with the adapters, predicts every item not yet in the output
directory's ``predictions.jsonl`` (append-only; each line written whole with one ``write``,
then fsynced), and writes ``metrics.json``, ``report.md`` and plots atomically. A run killed
at any point and restarted on the same directory continues: complete lines are kept, a torn
last line is cut off, and every item is counted once (keyed by id; the newest line wins).

Predictions are written in item order whatever the number of workers, so ``--workers N``
gives the same ``predictions.jsonl`` as ``--workers 1`` up to timing fields (``stable_view``).

Each run records in ``run.json`` and ``metrics.json`` its configuration, the package and backend
versions and the data's hash (``faithsieve.scoring.runinfo``). A rerun on a directory whose recorded
settings, versions or data differ is refused (``RunMismatch``, listing the differences) unless
``force_new`` clears the directory's run files first. ``evidence/<id>.json`` holds every item's
checks (``faithsieve.scoring.evidence``); a new run starts with an empty folder.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import time
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faithsieve.core.errors import FaithSieveError, InputError
from faithsieve.core.settings import Settings, method_key
from faithsieve.datasets.adapters import LoadedDataset, dataset_files, load_dataset
from faithsieve.datasets.formats import LabelledItem
from faithsieve.runtime.atomic import write_atomic
from faithsieve.runtime.lazy import OFFLINE_MODULES, freeze_after_import
from faithsieve.runtime.workers import JobTimeout, KillablePool, WorkerCrashed
from faithsieve.scoring.evidence import (
    CHECKS_KEY,
    clear_evidence,
    step_checks,
    write_evidence,
)
from faithsieve.scoring.runfiles import PredictionLog
from faithsieve.scoring.runinfo import RunMismatch, check_resume, run_identity  # noqa: F401 (RunMismatch re-exported)
from faithsieve.scoring.sampling import class_gaps, select

log = logging.getLogger(__name__)

PREDICTIONS = "predictions.jsonl"
METRICS = "metrics.json"
REPORT = "report.md"
STATE = "run.json"
TIMING_KEYS = frozenset({"time_ms", "timings", "usage"})
"""Fields that vary from run to run (LLM usage too: a cached rerun makes no calls); ``stable_view`` drops them."""


class InvalidDataset(InputError):
    """The dataset has malformed records (listed in ``detail``) and the run was not told to skip them."""

    code = "invalid_dataset"


# ---------------------------------------------------------------------------------------
# One prediction


def _label_json(step: int | None) -> str | int:
    return "correct" if step is None else step


_FAILED: dict[str, Any] = {"predicted": "correct", "verdict": "correct", "reason": None, "coverage": None}
"""The fields of an item that got no verdict (refused input, a crash, a lost worker): counted ``correct``."""


def _record_head(item: LabelledItem, settings: Settings) -> dict[str, Any]:
    rec: dict[str, Any] = {"id": item.id, "subset": item.subset, "domain": item.domain, "label": item.label}
    if settings.mode != "offline":
        rec["method"] = method_key(settings)
    return rec


def predict(item: LabelledItem, settings: Settings) -> dict[str, Any]:
    """Run the pipeline on one item and return its prediction record (never raises for bad input).

    Input the pipeline refuses (``InputError``/``InputTooLarge``) and crashes inside it are
    recorded with an ``error`` field and counted as a ``correct`` prediction.
    """
    from faithsieve.pipeline import localize
    from faithsieve.split import proof_from_steps

    t0 = time.perf_counter()
    rec = _record_head(item, settings)
    try:
        verdict = localize(proof_from_steps(item.problem, list(item.steps), settings), settings)
    except FaithSieveError as exc:
        rec.update(_FAILED, error=f"{exc.code}: {exc.message}")
    except Exception as exc:  # a pipeline bug must not end a long run; it is recorded and counted
        log.debug("pipeline crashed on %s", item.id, exc_info=True)
        rec.update(_FAILED, error=f"internal: {type(exc).__name__}: {str(exc)[:300]}")
    else:
        k = verdict.first_error_step if verdict.verdict == "error" else None
        evidence: list[Any] = []
        if k is not None and 1 <= k <= len(verdict.steps):
            evidence = [e.model_dump(mode="json") for e in verdict.steps[k - 1].evidence if e.status == "refuted"]
        rec.update(predicted="unknown" if verdict.verdict == "unknown" else _label_json(k), verdict=verdict.verdict, reason=verdict.reason,
                   coverage=verdict.coverage.model_dump(mode="json"), error=None)
        if verdict.flag_scope is not None:
            rec["flag_scope"] = verdict.flag_scope
        if verdict.mode != "offline":
            rec["basis"] = verdict.basis
            rec["usage"] = verdict.usage.model_dump() if verdict.usage else None
            if verdict.audit and verdict.audit.notes:
                rec["notes"] = list(verdict.audit.notes[:20])
        if evidence:
            rec["evidence"] = evidence
        checks = step_checks(verdict.steps)
        if checks:
            rec[CHECKS_KEY] = checks
    rec["time_ms"] = round((time.perf_counter() - t0) * 1000, 3)
    rec["item_hash"] = item.content_hash()
    return rec


def stable_view(record: Any) -> Any:
    """A prediction record without its timing fields (what must match across runs and worker counts)."""
    if isinstance(record, dict):
        return {k: stable_view(v) for k, v in record.items() if k not in TIMING_KEYS}
    if isinstance(record, list):
        return [stable_view(v) for v in record]
    return record


# ---------------------------------------------------------------------------------------
# Running many, in order, in a process pool

_WORKER_SETTINGS: Settings | None = None


def _init_worker(settings: Settings) -> None:
    global _WORKER_SETTINGS
    _WORKER_SETTINGS = settings
    freeze_after_import()  # a long-lived worker: no full collection rescans the imported modules


def _predict_chunk(items: list[LabelledItem]) -> list[dict[str, Any]]:
    assert _WORKER_SETTINGS is not None
    return [predict(it, _WORKER_SETTINGS) for it in items]


_PRELOAD = OFFLINE_MODULES  # the solvers load lazily: the fork server imports them once for every worker


def item_time_limit(settings: Settings) -> float | None:
    """Hard limit for one item in a worker: a generous multiple of the checking budget offline (the
    pipeline honours its budget, so only a runaway reaches it); none with a language model."""
    return max(60.0, 4 * settings.proof_time_limit_s) if settings.mode == "offline" else None


def _failed(item: LabelledItem, settings: Settings, message: str) -> dict[str, Any]:
    """The record of an item whose worker was killed (time limit) or died: counted as ``correct``."""
    rec = _record_head(item, settings)
    rec.update(_FAILED, error=f"resource_limit: {message}", time_ms=None, item_hash=item.content_hash())
    return rec


def _one_by_one(pool: KillablePool, items: list[LabelledItem], settings: Settings) -> list[dict[str, Any]]:
    """A chunk whose worker was lost, item by item, so only the item at fault is recorded as failed."""
    out = []
    for it in items:
        try:
            out.extend(pool.run(_predict_chunk, [it], time_limit=item_time_limit(settings)))
        except (JobTimeout, WorkerCrashed) as exc:
            log.warning("item %s: %s", it.id, exc)
            out.append(_failed(it, settings, str(exc)))
    return out


def iter_predictions(
    items: Sequence[LabelledItem], settings: Settings, workers: int = 1, chunk: int = 4, memory_mb: int = 0
) -> Iterator[dict[str, Any]]:
    """Predictions for ``items``, yielded in item order; ``workers > 1`` uses the shared killable pool
    (``faithsieve.runtime.workers``: per-chunk time limit, ``memory_mb`` cap, orphan watch) with a bounded
    window of chunks in flight. A chunk whose worker is killed or dies is retried item by item."""
    if workers <= 1 or len(items) <= chunk:
        freeze_after_import()
        for it in items:
            yield predict(it, settings)
        return
    chunks = [list(items[i:i + chunk]) for i in range(0, len(items), chunk)]
    per_item = item_time_limit(settings)
    with KillablePool(workers, memory_mb, initializer=_init_worker, initargs=(settings,), preload=_PRELOAD) as pool:
        window: deque[tuple[list[LabelledItem], Future[list[dict[str, Any]]]]] = deque()
        pending = iter(chunks)

        def submit(c: list[LabelledItem]) -> None:
            window.append((c, pool.submit(_predict_chunk, c, time_limit=per_item * len(c) if per_item else None)))

        for c in pending:
            submit(c)
            if len(window) >= workers * 4:
                break
        while window:
            c, fut = window.popleft()
            try:
                results = fut.result()
            except (JobTimeout, WorkerCrashed) as exc:
                log.warning("a chunk of %d items lost its worker (%s); retrying them one by one", len(c), exc)
                results = _one_by_one(pool, c, settings)
            nxt = next(pending, None)
            if nxt is not None:
                submit(nxt)
            yield from results


# ---------------------------------------------------------------------------------------
# The run


@dataclass(frozen=True)
class ScoreRequest:
    """What to score and how."""

    path: Path
    """Dataset file or directory."""
    out: Path
    """Output directory (reused to resume)."""
    format: str | None = None
    """Adapter name; ``None`` detects it per file."""
    workers: int = 1
    """Worker processes (1 = in this process)."""
    limit: int | None = None
    """Score only N of the selected items (see ``sample``)."""
    sample: str = "stratified"
    """How ``limit`` picks: ``stratified`` (seeded by ``seed``, by subset and class) or ``first``."""
    force_new: bool = False
    """Start over: remove the run files already in ``out`` instead of resuming them."""
    subsets: tuple[str, ...] = ()
    """Score only items of these subsets (empty = all)."""
    skip_invalid: bool = False
    """Go on without malformed records (each still reported) instead of refusing the dataset."""
    progress: bool | None = None
    """Progress bar on stderr: True, False, or None = only on a terminal."""
    resamples: int = 1000
    """Bootstrap resamples for the 95 % intervals."""
    seed: int = 0
    """Seed of the ``limit`` sample and of the bootstrap."""
    report: bool = True
    """Write report.md and the plots."""
    settings: Settings | None = None
    """Pipeline settings (default: ``Settings()``)."""


@dataclass
class ScoreResult:
    """What a run did."""

    metrics: dict[str, Any]
    """The content of metrics.json."""
    out: Path
    """The output directory."""
    processed: int
    """Items predicted in this invocation."""
    reused: int
    """Items whose prediction was already in the output directory."""
    dataset: LoadedDataset
    """The loaded dataset (items, bad and excluded records)."""
    warnings: list[str] = field(default_factory=list)
    """Things the reader of the metrics must know (a subset with no item of one class)."""


def default_out(path: Path, subsets: Sequence[str] = ()) -> Path:
    """``runs/<name>``: the file stem or directory name, plus the subsets when filtered."""
    name = path.stem if path.is_file() else path.name or "dataset"
    if subsets:
        name += "-" + "-".join(subsets)
    return Path("runs") / name


def _load_state(path: Path) -> dict[str, Any]:
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}


def run_score(req: ScoreRequest) -> ScoreResult:
    """Score a dataset into ``req.out``; resumes from what is already there."""
    from faithsieve.datasets.metrics import score_document
    from faithsieve.datasets.report import write_report

    settings = req.settings or Settings()
    if req.limit is not None and req.limit < 0:
        raise InputError(f"--limit must be 0 or more, got {req.limit}")
    if req.out.exists() and not req.out.is_dir():
        raise InputError(f"{req.out}: exists and is not a directory; give a directory for --out")
    data = load_dataset(req.path, req.format)
    if data.bad and not req.skip_invalid:
        raise InvalidDataset(f"{len(data.bad)} malformed record(s) in {req.path}", [str(b) for b in data.bad])
    items = select(data.items, req.subsets, req.limit, req.sample, req.seed)
    known = {it.subset for it in data.items}
    missing = [s for s in req.subsets if s not in known]
    if missing:
        raise InputError(f"unknown subset(s) {', '.join(missing)}; subsets here: {', '.join(sorted(known))}")
    log.info("%s: %d items (%s), %d selected%s", req.path, len(data.items), ", ".join(sorted(set(data.formats.values()))),
             len(items), f" ({req.sample} sample of {req.limit}, seed {req.seed})" if req.limit is not None else "")

    out = req.out
    identity = run_identity(settings, dataset_files(Path(req.path)))
    if req.force_new:
        clear_run(out)
    plog = PredictionLog(out / PREDICTIONS)
    done = plog.load()
    state = _load_state(out / STATE)
    if done:
        check_resume(out, STATE, state.get("identity"), identity)
    else:
        clear_run(out)
        state = {}
    out.mkdir(parents=True, exist_ok=True)
    method = method_key(settings)
    pending = [it for it in items if (rec := done.get(it.id)) is None or rec.get("item_hash") != it.content_hash()
               or rec.get("method", "offline") != method or _endpoint_failed(rec)]
    reused = len(items) - len(pending)
    log.info("%s: %d predictions reused, %d to predict", out, reused, len(pending))
    config = run_config(req, settings)
    state.update({"dataset": str(req.path), "format": req.format, "formats": sorted(set(data.formats.values())),
                  "identity": identity, "config": config})
    sessions: list[dict[str, Any]] = state.setdefault("sessions", [])
    write_atomic(out / STATE, json.dumps(state, indent=1))  # before any prediction: a killed run can be resumed

    t0 = time.perf_counter()
    processed = 0
    spend = Spend()
    stopped = ""
    if pending:
        from tqdm import tqdm

        bar = tqdm(total=len(items), initial=reused, unit="proof", file=sys.stderr, dynamic_ncols=True,
                   disable=(not req.progress) if req.progress is not None else None, desc=out.name, smoothing=0.1)
        try:
            with plog:
                by_id = {it.id: it for it in pending}
                for rec in iter_predictions(pending, settings, req.workers):
                    checks = rec.pop(CHECKS_KEY, None)
                    if checks:
                        write_evidence(out, by_id[rec["id"]], rec, checks)
                    plog.append(rec)
                    done[rec["id"]] = rec
                    processed += 1
                    bar.update(1)
                    spend.add(rec.get("usage"))
                    if spend.calls:
                        bar.set_postfix_str(spend.line(), refresh=False)
                    if spend.over(settings):
                        stopped = f"run budget reached after {processed} new item(s) ({spend.line()}); rerun to resume"
                        break
        finally:
            bar.close()
            if processed:
                sessions.append({"items": processed, "wall_s": round(time.perf_counter() - t0, 3), "workers": req.workers})
                write_atomic(out / STATE, json.dumps(state, indent=1))

    rows = [(it, done[it.id]) for it in items if it.id in done]  # all of them unless the run budget stopped it
    run_info = {
        "dataset": str(req.path), "formats": sorted(set(data.formats.values())), "subsets_selected": list(req.subsets),
        "limit": req.limit, "bad_records": len(data.bad), "excluded": data.excluded_counts(),
        "ignored_predictions": len(set(done) - {it.id for it in items}), "sessions": sessions,
        "workers": req.workers, "sample": req.sample if req.limit is not None else None,
        "config": config, "versions": identity["versions"], "data_sha256": identity["data_sha256"],
    }
    metrics = score_document(rows, run_info, resamples=req.resamples, seed=req.seed)
    llm = llm_summary([rec for _, rec in rows])
    if llm:
        metrics["llm"] = llm
    write_atomic(out / METRICS, json.dumps(metrics, indent=1, ensure_ascii=False) + "\n")
    if req.report:
        write_report(out, metrics, rows)
    return ScoreResult(metrics=metrics, out=out, processed=processed, reused=reused, dataset=data,
                       warnings=[*class_gaps(items), *([stopped] if stopped else [])])


RUN_FILES = (PREDICTIONS, METRICS, REPORT, STATE, "offsets.png", "subsets.png")
"""The files a run writes in its directory (``clear_run`` removes these and ``evidence/``, nothing else)."""


def clear_run(out: Path) -> None:
    """Remove an earlier run's files from ``out`` (other files there are left alone)."""
    for name in RUN_FILES:
        with contextlib.suppress(FileNotFoundError):
            (out / name).unlink()
    clear_evidence(out)


def run_config(req: ScoreRequest, settings: Settings) -> dict[str, Any]:
    """The run's full configuration as recorded: what was asked for and every pipeline setting."""
    return {"path": str(req.path), "format": req.format, "subsets": list(req.subsets), "limit": req.limit,
            "sample": req.sample, "seed": req.seed, "resamples": req.resamples, "workers": req.workers,
            "skip_invalid": req.skip_invalid, "settings": settings.model_dump(mode="json")}


class Spend:
    """Model calls, tokens and cost of the items predicted in this session (the progress line and the
    run budget, ``llm_max_calls`` / ``llm_max_cost``)."""

    def __init__(self) -> None:
        self.calls, self.tokens, self.cost = 0, 0, 0.0

    def add(self, usage: Any) -> None:
        if isinstance(usage, dict):
            self.calls += int(usage.get("calls", 0) or 0)
            self.tokens += int(usage.get("prompt_tokens", 0) or 0) + int(usage.get("completion_tokens", 0) or 0)
            self.cost += float(usage.get("cost_usd", 0) or 0)

    def line(self) -> str:
        return f"{self.calls} calls, {self.tokens} tokens, ${self.cost:.4f}"

    def over(self, settings: Settings) -> bool:
        return ((settings.llm_max_calls is not None and self.calls >= settings.llm_max_calls)
                or (settings.llm_max_cost is not None and self.cost >= settings.llm_max_cost))


def _endpoint_failed(rec: dict[str, Any]) -> bool:
    """The prediction was made while the LLM endpoint failed: a resumed run predicts it again."""
    usage = rec.get("usage")
    return isinstance(usage, dict) and bool(usage.get("failures"))


def llm_summary(records: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Language-model cost of a run: totals and per-item means of calls, tokens, cache hits and cost,
    over the items predicted with a model (``None`` for an offline run)."""
    used = [r["usage"] for r in records if isinstance(r.get("usage"), dict)]
    if not used:
        return None
    keys = ("calls", "cache_hits", "failures", "unparsed", "prompt_tokens", "completion_tokens", "cost_usd", "latency_ms")
    floats = ("cost_usd", "latency_ms")
    totals: dict[str, float | int] = {k: (round(sum(float(u.get(k, 0) or 0) for u in used), 6) if k in floats
                                          else sum(int(u.get(k, 0) or 0) for u in used)) for k in keys}
    n = len(used)
    per_item = {k: round(totals[k] / n, 3) for k in keys}
    times = [float(r.get("time_ms", 0) or 0) for r in records if isinstance(r.get("usage"), dict)]
    bases: dict[str, int] = {}
    for r in records:
        if isinstance(r.get("usage"), dict):
            b = str(r.get("basis"))
            bases[b] = bases.get(b, 0) + 1
    unknown = sum(1 for r in records if isinstance(r.get("usage"), dict) and r.get("verdict") == "unknown")
    failed = sum(1 for r in records if _endpoint_failed(r))
    return {"items": n, "totals": totals, "per_item": per_item,
            "time_ms_per_item": round(sum(times) / n, 1), "basis": bases,
            "unknown_items": unknown, "failed_items": failed}


def load_predictions(run_dir: Path) -> dict[str, dict[str, Any]]:
    """The predictions of a run directory by id (read-only: a torn last line is ignored, not cut)."""
    path = run_dir / PREDICTIONS
    out: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
            out[str(rec["id"])] = rec
        except (json.JSONDecodeError, KeyError, TypeError):
            continue
    return out


def compare_runs(a: dict[str, Any], b: dict[str, Any], preds_a: dict[str, dict[str, Any]],
                 preds_b: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Metric deltas (B − A) and the items whose predicted step changed (pure)."""
    def numbers(doc: dict[str, Any]) -> dict[str, Any]:
        flat = {k: v for k, v in doc.items() if v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))}
        flat.update({f"coverage.{k}": v for k, v in (doc.get("coverage") or {}).items()})
        return flat

    na, nb = numbers(a), numbers(b)
    deltas: dict[str, dict[str, Any]] = {}
    for key in [*na, *(k for k in nb if k not in na)]:
        va, vb = na.get(key), nb.get(key)
        if va is None and vb is None:
            continue
        deltas[key] = {"a": va, "b": vb, "delta": vb - va if va is not None and vb is not None else None}
    subsets: dict[str, dict[str, Any]] = {}
    for name in sorted(set(a.get("per_subset", {})) | set(b.get("per_subset", {}))):
        sa, sb = a.get("per_subset", {}).get(name, {}), b.get("per_subset", {}).get(name, {})
        subsets[name] = {k: {"a": sa.get(k), "b": sb.get(k)} for k in ("n", "error_accuracy", "correct_accuracy", "f1", "flag_precision")}
    changed = []
    for id_ in sorted(set(preds_a) & set(preds_b)):
        pa, pb = preds_a[id_].get("predicted"), preds_b[id_].get("predicted")
        if pa != pb:
            label = preds_b[id_].get("label", preds_a[id_].get("label"))
            effect = "fixed" if pb == label else "broken" if pa == label else "changed"
            changed.append({"id": id_, "label": label, "a": pa, "b": pb, "effect": effect})
    return {"metrics": deltas, "per_subset": subsets, "changed": changed,
            "only_a": len(set(preds_a) - set(preds_b)), "only_b": len(set(preds_b) - set(preds_a))}

