"""The service's routes, one ``APIRouter`` per concern, mounted in this order by ``create_app``:

``docs`` (``/docs``, ``/redoc`` and their vendored assets), ``localize`` (``POST /localize``,
``POST /localize/batch``), ``reward`` (``POST /get_reward``), ``ops`` (health, readiness,
versions, limits, metrics), ``workbench`` (the page at ``/``, its assets, ``/web/config``,
``/web/examples``, ``POST /web/tree``) and ``runs`` (the run browser's ``/web/runs...``).
Routes are thin: what they run lives in the service's other modules, and they receive the
running service, its settings and the run registry as dependencies (``faithsieve.api.service``).
"""
