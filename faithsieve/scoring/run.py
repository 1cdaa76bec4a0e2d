"""The scoring run: items -> predictions (resumable, parallel) -> metrics and report.

``run_score`` reads a dataset with the adapters, predicts every item not yet in the output
directory's ``predictions.jsonl`` (append-only; each line written whole with one ``write``,
then fsynced), and writes ``metrics.json``, ``report.md`` and plots atomically. A run killed
at any point and restarted on the same directory continues: complete lines are kept, a torn
last line is cut off, and every item is counted once (keyed by id; the newest line wins).

Predictions are written in item order whatever the number of workers, so ``--workers N``
gives the same ``predictions.jsonl`` as ``--workers 1`` up to timing fields (``stable_view``). Every
item is predicted in a killable worker process under the run's ``ItemLimits`` (per-item time, worker
memory: ``faithsieve.scoring.chunks``), never in this process; with ``ray`` the items go to a Ray
cluster (``faithsieve.scoring.onray``) and come back here to the same journal.

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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faithsieve.core.errors import InputError
from faithsieve.core.settings import Settings, method_key
from faithsieve.datasets.adapters import LoadedDataset, dataset_files, load_dataset
from faithsieve.datasets.formats import LabelledItem
from faithsieve.runtime.atomic import write_atomic
from faithsieve.runtime.limits import ItemLimits, item_time_limit  # noqa: F401 (item_time_limit re-exported)
from faithsieve.scoring.chunks import (  # noqa: F401 (predict, stable_view re-exported)
    TIMING_KEYS,
    iter_predictions,
    predict,
    stable_view,
)
from faithsieve.scoring.evidence import CHECKS_KEY, clear_evidence, write_evidence
from faithsieve.scoring.runfiles import PredictionLog
from faithsieve.scoring.runinfo import RunMismatch, check_resume, run_identity  # noqa: F401 (RunMismatch re-exported)
from faithsieve.scoring.sampling import class_gaps, select

log = logging.getLogger(__name__)

PREDICTIONS = "predictions.jsonl"
METRICS = "metrics.json"
REPORT = "report.md"
STATE = "run.json"
SUMMARY = "summary.json"
"""What ``faithsieve predict`` writes in place of metrics (``faithsieve.scoring.bulk``)."""


class InvalidDataset(InputError):
    """The dataset has malformed records (listed in ``detail``) and the run was not told to skip them."""

    code = "invalid_dataset"


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
    """Worker processes (never this process: 1 is one worker, under the same limits)."""
    worker_memory_mb: int | None = None
    """Address-space cap of each worker in MB (None: ``runtime.limits.WORKER_MEMORY_MB``; 0: none)."""
    item_time_limit_s: float | None = None
    """Hard seconds for one item (None: ``item_time_limit(settings)``)."""
    ray: str | None = None
    """A Ray cluster's address (or ``auto``) to fan the items out to (``faithsieve.scoring.onray``)."""
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
    failure: str | None = None
    """One line when the run checked (almost) nothing: most items ended ``unknown`` for the same reason
    (``common_failure``); the CLI prints it and exits 1."""


MOST_FAILED_SHARE = 0.5
"""A run where more than this share of its items ended ``unknown`` for one and the same reason (a lost
worker, an import error on Ray workers, a time limit every item hit) checked nothing worth a metric."""


def common_failure(recs: Sequence[dict[str, Any]]) -> str | None:
    """The line that says a run checked nothing: more than ``MOST_FAILED_SHARE`` of ``recs`` ended
    ``unknown`` with the same error or reason (its first 160 characters), or None."""
    if not recs:
        return None
    counts: dict[str, int] = {}
    for r in recs:
        if r.get("predicted") != "unknown":
            continue
        why = str(r.get("error") or r.get("reason") or "no reason recorded")[:160]
        counts[why] = counts.get(why, 0) + 1
    if not counts:
        return None
    why, k = max(counts.items(), key=lambda kv: kv[1])
    if k <= MOST_FAILED_SHARE * len(recs):
        return None
    return (f"{k} of {len(recs)} items ended unknown for one reason ({why}): this run checked almost nothing "
            f"and its metrics say nothing of the method")


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
    if (req.out / SUMMARY).exists():
        raise InputError(f"{req.out}: holds the verdicts of `faithsieve predict` (no labels); give score another --out")
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

    j = journal(req, items, settings, formats=sorted(set(data.formats.values())))
    done, processed, reused, stopped, out = j.done, j.processed, j.reused, j.stopped, req.out
    identity, config, sessions = j.identity, j.config, j.sessions

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
        metrics["llm"] = {**llm, "calibration": calibration_label(settings)}
    write_atomic(out / METRICS, json.dumps(metrics, indent=1, ensure_ascii=False) + "\n")
    if req.report:
        write_report(out, metrics, rows)
    return ScoreResult(metrics=metrics, out=out, processed=processed, reused=reused, dataset=data,
                       warnings=[*class_gaps(items), *([stopped] if stopped else [])],
                       failure=common_failure([rec for _, rec in rows]))


@dataclass
class Journal:
    """What ``journal`` did: the predictions by id (this session's and those reused) and the run's record."""

    done: dict[str, dict[str, Any]]
    """Every prediction in ``predictions.jsonl`` by id (the newest line wins)."""
    processed: int
    """Items predicted in this invocation."""
    reused: int
    """Selected items whose prediction was already there."""
    stopped: str
    """Why the run stopped early (its run budget), or empty."""
    identity: dict[str, Any]
    """Settings, versions and data hash (``run_identity``)."""
    config: dict[str, Any]
    """The run's configuration (``run_config``)."""
    sessions: list[dict[str, Any]]
    """Each invocation's items, wall time and workers."""


def journal(req: ScoreRequest, items: Sequence[LabelledItem], settings: Settings, formats: list[str]) -> Journal:
    """Predict every item of ``items`` not yet journaled in ``req.out`` (``predictions.jsonl``, append-only,
    fsynced a line at a time; evidence files first) in killable workers or on Ray under the run's limits,
    with a progress bar; a rerun resumes, one with other settings, versions or data is refused (``score``
    and ``predict`` share it)."""
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
    state.update({"dataset": str(req.path), "format": req.format, "formats": formats,
                  "identity": identity, "config": config})
    sessions: list[dict[str, Any]] = state.setdefault("sessions", [])
    write_atomic(out / STATE, json.dumps(state, indent=1))  # before any prediction: a killed run can be resumed

    limits = ItemLimits.for_run(settings, req.item_time_limit_s, req.worker_memory_mb)
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
                for rec in _predictions(req, pending, settings, limits, spend):
                    _record(out, by_id[rec["id"]], rec, plog, done)
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
                session: dict[str, Any] = {"items": processed, "wall_s": round(time.perf_counter() - t0, 3), "workers": req.workers}
                if req.ray is not None:
                    session["ray"] = req.ray
                sessions.append(session)
                write_atomic(out / STATE, json.dumps(state, indent=1))

    return Journal(done=done, processed=processed, reused=reused, stopped=stopped, identity=identity, config=config,
                   sessions=sessions)


RUN_FILES = (PREDICTIONS, METRICS, REPORT, STATE, SUMMARY, "offsets.png", "subsets.png")
"""The files a run writes in its directory (``clear_run`` removes these and ``evidence/``, nothing else)."""


def clear_run(out: Path) -> None:
    """Remove an earlier run's files from ``out`` (other files there are left alone)."""
    for name in RUN_FILES:
        with contextlib.suppress(FileNotFoundError):
            (out / name).unlink()
    clear_evidence(out)


def _record(out: Path, item: LabelledItem, rec: dict[str, Any], plog: PredictionLog, done: dict[str, dict[str, Any]]) -> None:
    """Journal one prediction (its evidence file first): a killed run resumes after it."""
    checks = rec.pop(CHECKS_KEY, None)
    if checks:
        write_evidence(out, item, rec, checks)
    plog.append(rec)
    done[rec["id"]] = rec


def run_config(req: ScoreRequest, settings: Settings) -> dict[str, Any]:
    """The run's full configuration as recorded: what was asked for and every pipeline setting."""
    return {"path": str(req.path), "format": req.format, "subsets": list(req.subsets), "limit": req.limit,
            "sample": req.sample, "seed": req.seed, "resamples": req.resamples, "workers": req.workers,
            "skip_invalid": req.skip_invalid, "worker_memory_mb": req.worker_memory_mb,
            "item_time_limit_s": req.item_time_limit_s, "ray": req.ray, "settings": settings.model_dump(mode="json")}


def _predictions(req: ScoreRequest, items: Sequence[LabelledItem], settings: Settings,
                 limits: ItemLimits, spend: Spend) -> Iterator[dict[str, Any]]:
    """The records of ``items`` in item order: from local workers, or from a Ray cluster with ``req.ray``.
    Under a run budget the local workers start no item once it is spent (Ray's chunks in flight finish)."""
    if req.ray is None:
        budget = settings.llm_max_calls is not None or settings.llm_max_cost is not None
        return iter_predictions(items, settings, req.workers, limits=limits,
                                go_on=(lambda: not spend.over(settings)) if budget else None)
    from faithsieve.scoring.onray import ray_predictions

    return ray_predictions(items, settings, req.ray, limits)


class Spend:
    """Model calls, tokens and cost of the items predicted in this session (the progress line and the
    run budget, ``llm_max_calls`` / ``llm_max_cost``)."""

    def __init__(self) -> None:
        self.calls, self.tokens, self.cost, self.items = 0, 0, 0.0, 0

    def add(self, usage: Any) -> None:
        if isinstance(usage, dict):
            self.items += 1
            self.calls += int(usage.get("calls", 0) or 0)
            self.tokens += int(usage.get("prompt_tokens", 0) or 0) + int(usage.get("completion_tokens", 0) or 0)
            self.cost += float(usage.get("cost_usd", 0) or 0)

    def line(self) -> str:
        """The spend so far and per proof: ``41 calls, 16,240 tokens, $0.0123 (8.2 calls, 3,248 tokens per proof)``."""
        total = f"{self.calls} calls, {self.tokens:,} tokens, ${self.cost:.4f}"
        if not self.items:
            return total
        return f"{total} ({self.calls / self.items:.1f} calls, {self.tokens / self.items:,.0f} tokens per proof)"

    def over(self, settings: Settings) -> bool:
        return ((settings.llm_max_calls is not None and self.calls >= settings.llm_max_calls)
                or (settings.llm_max_cost is not None and self.cost >= settings.llm_max_cost))


def _endpoint_failed(rec: dict[str, Any]) -> bool:
    """The prediction was made while the LLM endpoint failed: a resumed run predicts it again."""
    usage = rec.get("usage")
    return isinstance(usage, dict) and bool(usage.get("failures"))


def calibration_label(settings: Settings) -> str:
    """Which weights a ``--mode llm`` run's fusion used: the calibration file (name and digest), or the defaults."""
    if settings.mode != "llm":
        return "none (no fusion in this mode)"
    if not settings.llm_calibration:
        return "default weights (no calibration); re-samples counted as one opinion until the run measures them"
    from faithsieve.stages.calibration import load_calibration

    return load_calibration(settings.llm_calibration)[1]


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
    totals["unusable"] = sum(unusable_notes(r.get("notes") or ()) for r in records if isinstance(r.get("usage"), dict))
    # an item whose failed calls left it unknown is lost to the metrics; one whose stages fell back (an anchored
    # verdict, issue 36) is answered, and counted apart
    failed = sum(1 for r in records if _endpoint_failed(r) and r.get("verdict") == "unknown")
    fell_back = sum(1 for r in records if _endpoint_failed(r) and r.get("verdict") != "unknown")
    return {"items": n, "totals": totals, "per_item": per_item,
            "time_ms_per_item": round(sum(times) / n, 1), "basis": bases,
            "unknown_items": unknown, "failed_items": failed, "fell_back_items": fell_back}


UNUSABLE_MARKS = ("unusable", "unreadable", "no usable")
"""How a stage's note says that a model answer parsed but could not be used (an empty or placeholder claim)."""


def unusable_notes(notes: Sequence[str]) -> int:
    """How many of a verdict's audit notes report a model answer that parsed but was unusable (``unparsed``
    counts only answers that did not parse)."""
    return sum(1 for n in notes if any(m in str(n) for m in UNUSABLE_MARKS))


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
        if (doc.get("run") or {}).get("predictions_file"):  # another system's file: nothing checked, nothing timed
            return {k: v for k, v in flat.items() if k not in ("pipeline_errors", "proofs_per_second",
                                                              "pipeline_proofs_per_second")}
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

