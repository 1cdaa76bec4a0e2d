"""The human-readable side of a run: ``report.md``, PNG plots, and evidence files for the worst misses.

``render_report`` is pure (metrics + rows -> Markdown); ``write_report`` writes the files
(each atomically) into the run directory.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from faithsieve.datasets.formats import LabelledItem

from faithsieve.runtime.atomic import write_atomic

Row = tuple[LabelledItem, Mapping[str, Any]]

OFFSETS_PNG = "offsets.png"
SUBSETS_PNG = "subsets.png"
EVIDENCE_DIR = "evidence"

_HEADLINE = [
    ("binary_accuracy", "Binary accuracy (correct vs. flawed)"),
    ("exact_accuracy", "Exact first-error accuracy"),
    ("error_accuracy", "Error accuracy (exact, flawed items)"),
    ("correct_accuracy", "Correct accuracy (correct items kept)"),
    ("f1", "F1 (harmonic mean of the two)"),
    ("flag_precision", "Flag precision (flags at the labelled step)"),
]


def _pct(v: Any) -> str:
    return "–" if v is None else f"{100 * float(v):.1f} %"


def _num(v: Any, nd: int = 2) -> str:
    if v is None:
        return "–"
    if isinstance(v, int):
        return str(v)
    return f"{float(v):.{nd}f}"


def _ci(ci: Any) -> str:
    return "–" if not ci else f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def _cell(text: Any, limit: int = 90) -> str:
    s = " ".join(str(text).split())
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return s.replace("|", "\\|")


def safe_name(item_id: str) -> str:
    """A file name for an item id (path separators and odd characters replaced)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", item_id)[:120] or "item"


def _label(v: Any) -> str:
    return "correct" if v is None or v == "correct" else str(v)


def worst_misses(rows: Sequence[Row], k: int = 10) -> list[tuple[str, Row]]:
    """The ``k`` worst wrong predictions, worst first: flags on correct proofs (certain false
    alarms), then early flags, then late flags (each by distance), then missed errors."""
    ranked: list[tuple[tuple[int, int, str], str, Row]] = []
    for row in rows:
        item, rec = row
        pred = rec.get("predicted")
        pred = pred if isinstance(pred, int) else None
        lab = item.first_error
        if pred == lab:
            continue
        if lab is None:
            key, kind = (0, 0), "flag on a correct proof"
        elif pred is None:
            key, kind = (3, lab), "missed error"
        elif pred < lab:
            key, kind = (1, -(lab - pred)), f"early by {lab - pred}"
        else:
            key, kind = (2, -(pred - lab)), f"late by {pred - lab}"
        ranked.append(((*key, item.id), kind, row))
    ranked.sort(key=lambda t: t[0])
    return [(kind, row) for _, kind, row in ranked[:k]]


def _sampled(run: Mapping[str, Any]) -> str:
    """How ``--limit`` picked the items, in one sentence."""
    if run.get("sample") == "first":
        return f"Limited to the first {run['limit']} items in file order (`--sample first`)."
    seed = (run.get("config") or {}).get("seed", "?")
    return (f"A stratified sample of {run['limit']} items (`--limit {run['limit']}`): each subset's flawed and "
            f"correct items in proportion, drawn with seed {seed}.")


def _title(run: Mapping[str, Any]) -> str:
    if run.get("predictions_file"):
        return f"# Predictions `{run['predictions_file']}` scored on `{run.get('dataset', '?')}`\n"
    return f"# FaithSieve score: `{run.get('dataset', '?')}`\n"


def render_report(metrics: Mapping[str, Any], rows: Sequence[Row], *, plots: bool = True) -> str:
    """The Markdown report for a run (pure)."""
    run = metrics.get("run", {})
    ci = metrics.get("ci95", {})
    out: list[str] = []
    add = out.append
    add(_title(run))
    intro = (f"{metrics['n']} items ({metrics['n_error']} with an error, {metrics['n_correct']} correct); "
             f"formats: {', '.join(run.get('formats', [])) or '?'}.")
    if run.get("subsets_selected"):
        intro += f" Subsets selected: {', '.join(run['subsets_selected'])}."
    if run.get("limit") is not None:
        intro += " " + _sampled(run)
    add(intro + "\n")
    add("## Headline\n")
    b = metrics.get("bootstrap", {})
    add(f"| metric | value | 95 % CI (bootstrap, {b.get('resamples', '?')} resamples, seed {b.get('seed', '?')}) |")
    add("|---|---:|---|")
    for key, name in _HEADLINE:
        add(f"| {name} | {_pct(metrics.get(key))} | {_ci(ci.get(key))} |")
    add("")
    add("## Flags\n")
    add("| | count | note |")
    add("|---|---:|---|")
    add(f"| flags raised | {metrics['flags']} | items where an error was reported |")
    add(f"| at the labelled step | {metrics['exact_flags']} | |")
    add(f"| early flags | {metrics['early_flags']} | on correct proofs or before the labelled step: certain false alarms "
        f"({_pct(metrics.get('early_flag_rate'))} of flags) |")
    add(f"| flag soundness | {_pct(metrics.get('flag_soundness'))} | flags on a proof labelled wrong, at or after its first error |")
    add(f"| correct proofs flagged | {_pct(metrics.get('correct_flagged'))} | of the proofs labelled correct |")
    scopes = () if run.get("predictions_file") else (  # FaithSieve's own flags carry a scope
        ("first", "every earlier obligation decided: the first error as far as formulas go"),
        ("at_or_before", "some earlier obligation unknown: the first error is at or before the flag"))
    for scope, note in scopes:
        fs = (metrics.get("flag_scope") or {}).get(scope) or {}
        add(f"| flags marked `{scope}` | {fs.get('flags', 0)} | {note}; exact precision {_pct(fs.get('flag_precision'))} |")
    add(f"| late flags | {metrics['late_flags']} | after the labelled step: maybe a real later error, not the first |")
    add(f"| missed errors | {metrics['missed_errors']} | flawed proofs predicted correct |")
    add(f"| mean signed offset of wrong flags | {_num(metrics.get('mean_signed_offset'))} | predicted − labelled step (< 0: early) |")
    add("")
    if run.get("predictions_file"):  # another system's predictions: nothing was checked or timed here
        add(f"Predictions read from `{run['predictions_file']}` ({run.get('convention')} convention); "
            f"{run.get('missing_predictions', 0)} items had none and count as wrong.\n")
        out.extend(_tail(metrics, rows, plots))
        return "\n".join(out) + "\n"
    cov = metrics.get("coverage", {})
    t = metrics.get("time_ms", {})
    add("## Coverage and speed\n")
    add(f"- Steps with a decided check: {_pct(cov.get('step_coverage'))} of {cov.get('steps', 0)} steps; "
        f"proofs with at least one decided step: {_pct(cov.get('proofs_with_decided_step'))}.")
    add(f"- Obligations decided: {cov.get('obligations_decided', 0)} of {cov.get('obligations', 0)} "
        f"({_pct(cov.get('obligation_decided_rate'))}).")
    add(f"- Throughput: {_num(metrics.get('proofs_per_second'), 1)} proofs/s wall clock over the run's sessions; "
        f"{_num(metrics.get('pipeline_proofs_per_second'), 1)} proofs/s of pipeline time; per proof "
        f"mean {_num(t.get('mean'), 1)} ms, p95 {_num(t.get('p95'), 1)} ms, max {_num(t.get('max'), 1)} ms.")
    llm = metrics.get("llm")
    if llm:
        tot, per = llm.get("totals", {}), llm.get("per_item", {})
        add(f"- Language model ({llm.get('items', 0)} items): {tot.get('calls', 0)} calls, {tot.get('cache_hits', 0)} "
            f"cache hits, {tot.get('prompt_tokens', 0)} prompt + {tot.get('completion_tokens', 0)} completion tokens, "
            f"${_num(tot.get('cost_usd'), 4)}; per item {_num(per.get('calls'), 1)} calls, "
            f"{_num(per.get('prompt_tokens'), 0)} + {_num(per.get('completion_tokens'), 0)} tokens, "
            f"{_num(llm.get('time_ms_per_item'), 0)} ms. Unreadable answers: {tot.get('unparsed', 0)}; answers read but "
            f"unusable: {tot.get('unusable', 0)}; failed calls: "
            f"{tot.get('failures', 0)}. What backs each answer: "
            f"{', '.join(f'{k}: {v}' for k, v in llm.get('basis', {}).items())}.")
    if metrics.get("pipeline_errors"):
        kinds = ", ".join(f"{k}: {v}" for k, v in metrics.get("pipeline_error_kinds", {}).items())
        add(f"- **{metrics['pipeline_errors']} items could not be checked** ({kinds}); they are predicted `unknown` and count as wrong answers (never as correct).")
    if run.get("excluded"):
        add("- Left out by the adapters: " + "; ".join(f"{v} × {k}" for k, v in run["excluded"].items()) + ".")
    if run.get("bad_records"):
        add(f"- **{run['bad_records']} malformed records were skipped** (listed on stderr when the run started).")
    add("")
    out.extend(_tail(metrics, rows, plots))
    return "\n".join(out) + "\n"


def _tail(metrics: Mapping[str, Any], rows: Sequence[Row], plots: bool) -> list[str]:
    """The report's plots, breakdowns, confusion table and worst misses."""
    out: list[str] = []
    add = out.append
    if plots:
        add(f"![Predicted minus labelled step]({OFFSETS_PNG})\n")
    _breakdown_table(out, "Per subset", metrics.get("per_subset", {}))
    if plots and len(metrics.get("per_subset", {})) > 0:
        add(f"![Per-subset accuracies]({SUBSETS_PNG})\n")
    per_domain = metrics.get("per_domain", {})
    if per_domain and set(per_domain) != set(metrics.get("per_subset", {})) and len(per_domain) > 1:
        _breakdown_table(out, "Per domain", per_domain)
    _confusion_table(out, metrics.get("confusion", {}))
    worst = worst_misses(rows)
    add("## The ten worst misses\n")
    if not worst:
        add("None: every prediction matches its label.\n")
    else:
        add("| # | id | subset | label | predicted | what | reason | evidence |")
        add("|---:|---|---|---:|---:|---|---|---|")
        for i, (kind, (item, rec)) in enumerate(worst, 1):
            link = f"[{EVIDENCE_DIR}/{safe_name(item.id)}.json]({EVIDENCE_DIR}/{safe_name(item.id)}.json)"
            reason = rec.get("reason") or rec.get("error") or ""
            add(f"| {i} | `{_cell(item.id, 60)}` | {_cell(item.subset, 30)} | {_label(item.label)} | "
                f"{_label(rec.get('predicted'))} | {kind} | {_cell(reason)} | {link} |")
        add("")
    return out


def _breakdown_table(out: list[str], title: str, table: Mapping[str, Mapping[str, Any]]) -> None:
    if not table:
        return
    out.append(f"## {title}\n")
    out.append("| name | n | flawed | correct | error acc. | correct acc. | F1 | F1 95 % CI | flag prec. | sound | correct flagged | flags | early | late |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for name, m in table.items():
        out.append(
            f"| {_cell(name, 40)} | {m['n']} | {m['n_error']} | {m['n_correct']} | {_pct(m.get('error_accuracy'))} | "
            f"{_pct(m.get('correct_accuracy'))} | {_pct(m.get('f1'))} | {_ci((m.get('ci95') or {}).get('f1'))} | "
            f"{_pct(m.get('flag_precision'))} | {_pct(m.get('flag_soundness'))} | {_pct(m.get('correct_flagged'))} | {m['flags']} | {m['early_flags']} | {m['late_flags']} |"
        )
    out.append("")


def _bucket_order(name: str) -> tuple[int, int]:
    if name == "correct":
        return (0, 0)
    if name == "unknown":  # no answer: the last column
        return (3, 0)
    if name.startswith("≥"):
        return (2, int(name[1:]))
    return (1, int(name))


def _confusion_table(out: list[str], conf: Mapping[str, Mapping[str, int]]) -> None:
    if not conf:
        return
    cols = sorted({c for row in conf.values() for c in row} | set(conf), key=_bucket_order)
    out.append("## Predicted vs. labelled step\n")
    out.append("Rows: labelled first error; columns: predicted. The diagonal is exact; left of it is early.\n")
    out.append("| label \\ predicted | " + " | ".join(cols) + " | total |")
    out.append("|---|" + "---:|" * (len(cols) + 1))
    for r in sorted(conf, key=_bucket_order):
        row = conf[r]
        cells = [(f"**{row.get(c, 0)}**" if c == r and row.get(c) else str(row.get(c, 0) or "·")) for c in cols]
        out.append(f"| {r} | " + " | ".join(cells) + f" | {sum(row.values())} |")
    out.append("")


# ---------------------------------------------------------------------------------------
# Files


def _png(fig: Any) -> bytes:
    """A matplotlib figure as PNG bytes (closed after)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def plot_offsets(metrics: Mapping[str, Any], path: Path) -> None:
    """Left: histogram of predicted − labelled step over flags on flawed items (0 = exact).
    Right: every item's outcome (exact, early, late, flag on a correct proof, missed, kept correct)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hist = metrics.get("offset_histogram", {})
    offs = sorted(int(k) for k in hist if k.lstrip("-").isdigit())
    lo, hi = (min(min(offs), -3), max(max(offs), 3)) if offs else (-3, 3)
    xs = list(range(lo, hi + 1))
    ys = [hist.get(str(x), 0) for x in xs]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4), dpi=110, gridspec_kw={"width_ratios": [3, 2]})
    ax.bar(xs, ys, color=["#2a9d8f" if x == 0 else "#e76f51" if x < 0 else "#f4a261" for x in xs])
    for x, y in zip(xs, ys, strict=True):
        if y:
            ax.annotate(str(y), (x, y), ha="center", va="bottom", fontsize=7)
    ax.set_xlabel("predicted − labelled step (flags on flawed items)")
    ax.set_ylabel("items")
    ax.set_title("Where the flags land (0 = exact, < 0 = early)", fontsize=10)
    if len(xs) <= 25:
        ax.set_xticks(xs)
    ax.tick_params(axis="x", labelsize=8)
    n_err, n_ok = metrics.get("n_error", 0), metrics.get("n_correct", 0)
    exact = hist.get("0", 0)
    early = sum(v for k, v in hist.items() if k.lstrip("-").isdigit() and int(k) < 0)
    late = sum(v for k, v in hist.items() if k.lstrip("-").isdigit() and int(k) > 0)
    false_alarm = hist.get("flag on correct", 0)
    bars = [("exact", exact, "#2a9d8f"), ("early", early, "#e76f51"), ("late", late, "#f4a261"),
            ("missed", hist.get("missed", 0), "#8d99ae"), ("flag on\ncorrect", false_alarm, "#9b2226"),
            ("kept\ncorrect", n_ok - false_alarm, "#95d5b2")]
    ax2.bar([b[0] for b in bars], [b[1] for b in bars], color=[b[2] for b in bars])
    for i, b in enumerate(bars):
        ax2.annotate(str(b[1]), (i, b[1]), ha="center", va="bottom", fontsize=7)
    ax2.set_title(f"All items: {n_err} flawed, {n_ok} correct", fontsize=10)
    ax2.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    write_atomic(path, _png(fig))


def plot_subsets(metrics: Mapping[str, Any], path: Path) -> None:
    """Grouped bars per subset: error accuracy, correct accuracy, F1, flag precision."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = metrics.get("per_subset", {})
    names = list(table)
    keys = [("error_accuracy", "error acc."), ("correct_accuracy", "correct acc."), ("f1", "F1"), ("flag_precision", "flag prec.")]
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(names) + 2), 4), dpi=110)
    width = 0.8 / len(keys)
    for j, (k, lab) in enumerate(keys):
        raw = [table[n].get(k) for n in names]
        pos = [i + (j - 1.5) * width for i in range(len(names))]
        heights = [100 * (v or 0.0) for v in raw]  # percent, as the title and the axis say
        ax.bar(pos, heights, width, label=lab)
        for x, v, h in zip(pos, raw, heights, strict=True):
            ax.annotate("n/a" if v is None else f"{h:.0f}", (x, h), ha="center", va="bottom", fontsize=6)
    ax.set_xticks(range(len(names)))
    tilt = len(names) > 5
    ax.set_xticklabels([f"{n}\n(n={table[n]['n']})" for n in names], fontsize=8,
                       rotation=30 if tilt else 0, ha="right" if tilt else "center")
    ax.set_ylim(0, 120)
    ax.set_yticks([0, 20, 40, 60, 80, 100])
    ax.set_ylabel("%")
    ax.legend(fontsize=8, ncol=4, loc="upper center", frameon=False)
    ax.set_title("Per subset (%, n/a = no items of that kind)", fontsize=10)
    fig.tight_layout()
    write_atomic(path, _png(fig))


def write_report(out: Path, metrics: Mapping[str, Any], rows: Sequence[Row], *, plots: bool = True) -> None:
    """Write report.md, the plots, and ``evidence/<id>.json`` for those of the ten worst misses
    that have none yet (an item without checks: no steps)."""
    ev_dir = out / EVIDENCE_DIR
    ev_dir.mkdir(parents=True, exist_ok=True)
    for kind, (item, rec) in worst_misses(rows):
        path = ev_dir / f"{safe_name(item.id)}.json"
        if path.exists():  # written by the run with the item's checks
            continue
        doc = {"what": kind, "item": item.model_dump(mode="json"), "prediction": dict(rec), "steps": []}
        write_atomic(path, json.dumps(doc, indent=1, ensure_ascii=False))
    if plots:
        plot_offsets(metrics, out / OFFSETS_PNG)
        plot_subsets(metrics, out / SUBSETS_PNG)
    write_atomic(out / "report.md", render_report(metrics, rows, plots=plots))
