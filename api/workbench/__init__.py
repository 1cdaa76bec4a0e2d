"""What the web workbench's routes serve, beyond the page itself: the proof-state tree of one proof
(``tree``, a job for the worker pool) and the read-only browser of scoring runs (``runs``).

The page at ``/`` is hand-written (``api/static/workbench/``): it checks a proof through the JSON
API and draws its proof-state tree. Its routes are ``faithsieve.api.routers.workbench`` and
``faithsieve.api.routers.runs``, left out of the OpenAPI schema."""
