"""Scoring a step-labelled dataset: the run (``run``), items in killable workers under the run's limits
(``chunks``) or over a Ray cluster (``onray``), its journal and files (``runfiles``), its
record of settings and versions (``runinfo``), item sampling (``sampling``) and per-item evidence
files (``evidence``); verdicts for proofs without labels on the same journal (``bulk``) and another
system's prediction file scored like a run (``external``).

``faithsieve.scoring.stable_view`` is a public entry point; it is loaded on first use, so importing
a light part of this package (``runinfo`` at CLI start-up) does not import the pipeline.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TIMING_KEYS", "ScoreRequest", "ScoreResult", "predict", "run_score", "stable_view"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from faithsieve.scoring import run

        return getattr(run, name)
    raise AttributeError(f"module 'faithsieve.scoring' has no attribute {name!r}")
