"""Proof obligations (rank 4): what a step claims, and the evidence that decides it. One folder per job:

- ``kinds``: the typed obligations, outcomes and evidence records; which refutation kinds decide;
- ``extraction``: EdgeUnits (and their step text) -> typed obligations, pure;
- ``procedures``: the decision procedures by name (``procedures.registry``);
- ``checkers``: the checkers that run the procedures, cheapest first, and their portfolio.
"""
