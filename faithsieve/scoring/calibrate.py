"""``faithsieve calibrate``: measure an endpoint's reliability per evidence kind on a labelled sample.

Each sampled item runs through ``--mode llm``; its verdict's audit keeps the whole-proof judgment fusion
anchored on and every local review with its re-samples. Against the item's label (the first wrong step, every
step before it sound) that gives: the whole-proof judgment's exact and binary accuracy; the share of first
reviews of sound units (steps before the labelled error, or of a correct proof) that call the unit
``incorrect`` (false alarms); the share of labelled wrong steps where a first review calls some unit of the
step ``incorrect`` (sensitivity, at step level: the label does not say which unit of the step is wrong); and
how often a re-sample repeats its unit's first review, read as a correlation (``calibration.correlation``).
Re-samples are asked where the evidence is contested, so the pairs lean to disputed units; the correlation is
read at the accuracy the reviews showed on the sample.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from faithsieve.core.settings import Settings
from faithsieve.runtime.atomic import write_atomic
from faithsieve.stages.calibration import Calibration, correlation
from faithsieve.verdict import Verdict

MAX_SAMPLE = 400
"""Most items one calibration runs (each costs a ``--mode llm`` run)."""


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def measure(records: Sequence[tuple[int | None, Verdict]], *, model: str = "", dataset: str = "") -> Calibration:
    """The calibration that ``records`` (label, verdict) show (pure)."""
    judged = [(label, v.audit.judge) for label, v in records if v.audit is not None and v.audit.judge is not None]
    exact = sum(1 for label, j in judged if j == (label or 0))
    binary = sum(1 for label, j in judged if (j == 0) == (label is None))
    sound = alarms = wrong_steps = caught = pairs = same = 0
    for label, v in records:
        if v.audit is None:
            continue
        first = {r.edge: r for r in v.audit.reviews if r.sample == 0}
        for r in first.values():
            if label is None or r.step < label:
                sound += 1
                alarms += r.verdict == "incorrect"
        at_label = [r for r in first.values() if label is not None and r.step == label]
        if at_label:
            wrong_steps += 1
            caught += any(r.verdict == "incorrect" for r in at_label)
        for r in v.audit.reviews:
            if r.sample > 0 and r.edge in first and "uncertain" not in (r.verdict, first[r.edge].verdict):
                pairs += 1
                same += r.verdict == first[r.edge].verdict
    fa, sens, agree = _ratio(alarms, sound), _ratio(caught, wrong_steps), _ratio(same, pairs)
    rho = None
    if agree is not None and fa is not None and sens is not None:
        rho = round(correlation(agree, (1 - fa + sens) / 2), 4)
    return Calibration(model=model, dataset=dataset, items=len(records), judge_exact=_ratio(exact, len(judged)),
                       judge_binary=_ratio(binary, len(judged)), sound_units=sound, false_alarm=fa,
                       wrong_steps=wrong_steps, sensitivity=sens, resample_pairs=pairs, resample_agreement=agree, rho=rho)


def calibrate(path: str, settings: Settings, out: Path, *, sample: int = 40,
              progress: Callable[[int, int], None] | None = None) -> Calibration:
    """Run ``sample`` items of the labelled dataset at ``path`` (evenly spaced) in ``--mode llm`` and write their
    calibration to ``out`` (atomically)."""
    from faithsieve.datasets.adapters import load_dataset
    from faithsieve.pipeline import Pipeline
    from faithsieve.split import proof_from_steps

    items = list(load_dataset(path).items)
    n = max(1, min(sample, MAX_SAMPLE, len(items)))
    chosen = [items[i * len(items) // n] for i in range(n)]
    settings = settings.model_copy(update={"mode": "llm", "llm_calibration": None})
    pipe = Pipeline.from_settings(settings)
    records: list[tuple[int | None, Verdict]] = []
    for k, it in enumerate(chosen, 1):
        records.append((it.first_error, pipe.localize(proof_from_steps(it.problem, list(it.steps), settings))))
        if progress is not None:
            progress(k, n)
    cal = measure(records, model=settings.llm_model, dataset=str(path))
    write_atomic(out, cal.model_dump_json(indent=1) + "\n")
    return cal
