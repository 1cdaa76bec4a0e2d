"""The production deployment: gunicorn managing several uvicorn server processes, same limits.

    pip install 'faithsieve[production]'          # gunicorn, uvicorn[standard] (httptools, uvloop)
    gunicorn 'faithsieve.api.server:make_app()' -k faithsieve.api.gunicorn_worker.Worker \\
        -w 2 -b 0.0.0.0:8000 --graceful-timeout 10 --keep-alive 5

Each gunicorn worker is one uvicorn server process with its own pool of
``FAITHSIEVE_WORKERS`` checking processes, so the machine runs ``-w × FAITHSIEVE_WORKERS``
of them. The worker class swaps uvicorn's HTTP protocol for the guarded one
(``faithsieve.api.server``: header-read timeout, cap on unfinished connections) with the limits
from ``FAITHSIEVE_*``, and turns off uvicorn's socket-counting ``limit_concurrency``.
"""

from __future__ import annotations

import warnings
from typing import Any

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # uvicorn.workers: moving to the uvicorn-worker package
    from uvicorn.workers import UvicornWorker

from faithsieve.api.server import protocol_class
from faithsieve.api.settings import ServiceSettings


class Worker(UvicornWorker):
    """``UvicornWorker`` with FaithSieve's connection limits."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        settings = ServiceSettings()
        self.config.http = protocol_class(settings)
        self.config.limit_concurrency = None
        self.config.h11_max_incomplete_event_size = settings.max_header_bytes + 4096
