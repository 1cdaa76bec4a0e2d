"""The web workbench served by ``faithsieve serve`` at ``/``: a hand-written page (``static/``)
that checks a proof through the JSON API and draws its proof-state tree, and a read-only
browser for scoring runs (``faithsieve view RUN_DIR``).

``routes.mount(app, settings)`` adds the page, its assets and the ``/web/...`` JSON routes the
page needs beyond the public API (hidden from the OpenAPI schema)."""
