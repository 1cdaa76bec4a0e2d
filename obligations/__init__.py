"""Proof obligations (rank 4): what a step claims, and the evidence that decides it. One folder per job:

- ``kinds`` (4.1): the typed obligations, outcomes and evidence records; which refutation kinds decide;
- ``procedures`` (4.2): the decision procedures by name (``procedures.registry``);
- ``extraction`` (4.3): EdgeUnits (and their step text) -> typed obligations, pure;
- ``checkers`` (4.3): the checkers that run the procedures, cheapest first, and their portfolio.

Each folder imports only the folders ranked below it (``tools/layers.py`` checks it); extraction and
the checkers are independent of each other.
"""
