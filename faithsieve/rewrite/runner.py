"""Running a rewrite over a file: progress, a resumable journal, atomic results, statistics and a report.

Every finished item appends one line to ``OUT.journal`` (its outcome and its rows). With
``resume`` a run started with the same settings skips the items the journal already holds, so an
interrupted run loses at most the item in progress. The results — ``OUT`` (JSONL), ``stats.json``
and ``report.md`` next to it — are written through temporary files and ``os.replace`` only at the
end, and the journal is removed once they are in place.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from faithsieve.runtime.atomic import write_atomic
from faithsieve.runtime.textfile import loads_json

RowsAndOutcome = tuple[list[dict[str, Any]], dict[str, Any]]


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line index, object)`` for each non-empty line; raises ``ValueError`` naming a bad line."""
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh):
            if not line.strip():
                continue
            try:
                obj = loads_json(line, f"{path}:{lineno + 1}")  # bounded nesting: InputError past it
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno + 1}: not JSON ({exc.msg})") from None
            if not isinstance(obj, dict):
                raise ValueError(f"{path}:{lineno + 1}: not a JSON object")
            yield lineno, obj


def read_records(path: Path, limit: int | None = None) -> list[tuple[str, dict[str, Any]]]:
    """``(id, record)`` for each JSON line of a GSM8K-style file; the id is ``<stem>-<line index>``
    (or the record's own ``id`` when it has one). Raises ``ValueError`` naming the bad line."""
    out: list[tuple[str, dict[str, Any]]] = []
    for lineno, rec in iter_jsonl(path):
        if limit is not None and len(out) >= limit:
            break
        rid = rec.get("id")
        out.append((str(rid) if isinstance(rid, (str, int)) else f"{path.stem}-{lineno}", rec))
    return out


def _journal(out: Path) -> Path:
    return out.with_name(out.name + ".journal")


def _load_journal(path: Path, config: dict[str, Any]) -> dict[str, RowsAndOutcome]:
    done: dict[str, RowsAndOutcome] = {}
    if not path.exists():
        return done
    with path.open(encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    if not lines or json.loads(lines[0]).get("config") != config:
        raise ValueError(f"{path} was written with other settings; remove it or run without --resume")
    for line in lines[1:]:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            break  # a line cut by the interruption: that item runs again
        done[entry["outcome"]["id"]] = (entry["rows"], entry["outcome"])
    return done


def run(records: list[tuple[str, dict[str, Any]]], work: Callable[[str, dict[str, Any]], RowsAndOutcome],
        out: Path, config: dict[str, Any], *, resume: bool = False, progress: bool = True) -> dict[str, Any]:
    """Apply ``work`` to every record, journal each result, then write the outputs; returns the stats."""
    journal = _journal(out)
    done = _load_journal(journal, config) if resume else {}
    if not resume and journal.exists():
        journal.unlink()
    journal.parent.mkdir(parents=True, exist_ok=True)
    fresh = not journal.exists()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(records), initial=sum(1 for rid, _ in records if rid in done), unit="item",
                   file=sys.stderr, dynamic_ncols=True, desc="rewrite")
    results: list[RowsAndOutcome] = []
    with journal.open("a", encoding="utf-8") as jh:
        if fresh:
            jh.write(json.dumps({"config": config}) + "\n")
        for rid, rec in records:
            if rid in done:
                results.append(done[rid])
                continue
            rows, outcome = work(rid, rec)
            jh.write(json.dumps({"rows": rows, "outcome": outcome}, ensure_ascii=False) + "\n")
            jh.flush()
            results.append((rows, outcome))
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    stats = summarize([o for _, o in results], config)
    rows = [r for rs, _ in results for r in rs]
    write_atomic(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    write_atomic(out.with_name("stats.json"), json.dumps(stats, indent=2) + "\n")
    write_atomic(out.with_name("report.md"), report_markdown(stats))
    journal.unlink()
    return stats


def summarize(outcomes: Iterable[dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
    """Generation rate, rejections by stage and reason, and the validity criteria of the kept rows."""
    outcomes = list(outcomes)
    n = len(outcomes)
    kept_items = sum(1 for o in outcomes if o["kept"])
    variants = sum(o["kept"] for o in outcomes)
    by_stage: Counter[str] = Counter()
    by_reason: Counter[str] = Counter()
    attempts: Counter[str] = Counter()
    for o in outcomes:
        if not o["kept"]:
            by_stage[o["stage"]] += 1
            by_reason[f"{o['stage']}/{o['reason']}"] += 1
        attempts.update(o.get("failures", {}))
    verified = config.get("verified", True)
    how = config.get("established_by", "")
    how_of = how if isinstance(how, dict) else {c: how for c in ("well_defined", "feasible", "answer_correct")}
    return {
        "mode": config.get("mode"), "config": config, "items": n, "items_kept": kept_items,
        "generation_rate": round(kept_items / n, 6) if n else None,
        "variants_requested": n * int(config.get("variants", 1)), "variants_kept": variants,
        "rejected_items_by_stage": dict(by_stage.most_common()),
        "rejected_items_by_reason": dict(by_reason.most_common()),
        "rejected_draws_by_reason": dict(attempts.most_common()),
        "validity": {
            "established_by": how_of,
            "well_defined": (1.0 if verified else None) if variants else None,
            "feasible": (1.0 if verified else None) if variants else None,
            "answer_correct": (1.0 if verified else None) if variants else None,
        },
        "notes": config.get("notes", []),
    }


def report_markdown(stats: dict[str, Any]) -> str:
    """A short human-readable report of ``stats``."""
    n, k = stats["items"], stats["items_kept"]
    rate = stats["generation_rate"]
    lines = [f"# Rewrite report ({stats['mode']} mode)", "",
             f"- items: {n}; items with a kept rewrite: {k}; generation rate: "
             f"{'n/a' if rate is None else f'{100 * rate:.2f} %'}",
             f"- variants kept: {stats['variants_kept']} of {stats['variants_requested']} requested", ""]
    v = stats["validity"]
    lines += ["## Validity of the kept rewrites", "",
              "| criterion | rate | how it was established |", "|---|---|---|"]
    for c in ("well_defined", "feasible", "answer_correct"):
        val = v[c]
        lines.append(f"| {c} | {'n/a' if val is None else f'{100 * val:.2f} %'} | {v['established_by'].get(c) or '-'} |")
    lines += ["", "## Rejected items by stage and reason", "", "| stage/reason | items |", "|---|---|"]
    lines += [f"| {r} | {c} |" for r, c in stats["rejected_items_by_reason"].items()] or ["| (none) | 0 |"]
    if stats["rejected_draws_by_reason"]:
        lines += ["", "## Rejected draws (all attempts) by reason", "", "| reason | draws |", "|---|---|"]
        lines += [f"| {r} | {c} |" for r, c in stats["rejected_draws_by_reason"].items()]
    for note in stats.get("notes", []):
        lines += ["", f"> {note}"]
    return "\n".join(lines) + "\n"
