"""What a long-lived process imports before its first proof.

The pipeline room owns this list because it knows what the offline path loads; the mechanism that
imports the names and freezes the heap is ``faithsieve.runtime.lazy.freeze_after_import``, which
knows no module of ours. Scoring workers, the grader's workers and the service preload the list.
"""

from __future__ import annotations

OFFLINE_MODULES = ("sympy", "z3", "networkx", "faithsieve.pipeline", "faithsieve.split",
                   "faithsieve.obligations.checkers.portfolio", "faithsieve.statetree.decompose")
"""What a long-lived worker (scoring, the service) imports before its first item: the solvers too."""
