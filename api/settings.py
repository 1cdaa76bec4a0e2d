"""Settings of the HTTP service: the pipeline's ``Settings`` plus the service's own limits.

Same ``FAITHSIEVE_`` prefix; nothing reads the environment at import time. Build
``ServiceSettings()`` at the entry point (``faithsieve serve``) or explicitly in tests.
List-valued settings (``FAITHSIEVE_CORS_ORIGINS``) are read from the environment as JSON.
"""

from __future__ import annotations

from pydantic import Field, SecretStr, model_validator

from faithsieve.core.settings import Settings


class ServiceSettings(Settings):
    """Configuration of ``faithsieve serve``: pool size, time limits, admission, size limits, access."""

    host: str = "127.0.0.1"
    """Interface ``faithsieve serve`` binds by default (loopback; pass ``--host 0.0.0.0`` to expose it)."""
    port: int = Field(default=8000, ge=0, le=65535)
    """TCP port ``faithsieve serve`` binds by default."""
    workers: int = Field(default=2, ge=1, le=256)
    """Worker processes that run the pipeline (one proof at a time each)."""
    request_time_limit_s: float = Field(default=10.0, gt=0)
    """Wall-clock limit for one ``POST /localize``, from admission to answer, waiting for a worker
    included. Must exceed ``proof_time_limit_s`` so the pipeline's own budget (which turns late
    obligations into ``unknown`` evidence) runs out first; past it the worker is killed and the
    answer is 504."""
    batch_time_limit_s: float = Field(default=60.0, gt=0)
    """Wall-clock limit for one ``POST /localize/batch``; each item also has ``request_time_limit_s``
    once it reaches a worker. Items not done in time get a per-item 504."""
    batch_max_items: int = Field(default=32, ge=1)
    """Most proofs in one batch request (never more than ``max_pending``: see ``batch_limit``)."""
    max_pending: int = Field(default=64, ge=1)
    """Most proofs admitted at once (running plus waiting for a worker); a request that would
    exceed it is answered 429 with ``Retry-After`` instead of being queued."""
    reward_max_pending: int = Field(default=64, ge=1)
    """Most ``/get_reward`` samples admitted at once (being graded plus waiting); a request that would
    exceed it is answered 429 with ``Retry-After``."""
    heavy_chars: int = Field(default=4000, ge=1)
    """A proof with more characters than this, or with an expensive-looking formula (transcendental
    functions, exponents or factorials of three or more digits, long operator runs), runs in the
    heavy lane (``faithsieve.api.admission``)."""
    heavy_workers: int | None = Field(default=None, ge=1)
    """Most workers heavy proofs may hold at once; default ``workers - 1`` (at least 1), so one
    worker is always left for light proofs."""
    heavy_max_pending: int = Field(default=16, ge=1)
    """Most heavy proofs admitted at once (429 beyond), within ``max_pending``."""
    max_body_bytes: int = Field(default=1_048_576, ge=1)
    """Largest request body accepted by ``POST /localize`` (bytes); larger is 413."""
    max_batch_body_bytes: int = Field(default=8_388_608, ge=1)
    """Largest request body accepted by ``POST /localize/batch`` (bytes); larger is 413."""
    body_read_time_limit_s: float = Field(default=30.0, gt=0)
    """Time allowed to receive a request body; a slower client gets 408."""
    header_read_timeout_s: float = Field(default=10.0, gt=0)
    """Time a connection has, from its opening or from the end of its previous response, to send a
    request's complete headers; then it is closed (slowloris)."""
    max_unfinished_connections: int = Field(default=128, ge=1)
    """Most open connections without a request in progress (idle, or headers still arriving); past
    it the oldest of them is closed to make room for the new one."""
    max_header_bytes: int = Field(default=65536, ge=1024)
    """Most bytes of one request head (request line and headers); a head that has not ended within
    them is answered 431 and the connection closed."""
    min_body_rate_bps: float = Field(default=1024.0, ge=0)
    """Request bodies arriving slower than this (bytes per second since the headers) may be closed to
    make room when ``max_connections`` is reached (slow-body floods); 0 never evicts them."""
    max_connections: int = Field(default=1024, ge=1)
    """Most open connections; a new one past it evicts the oldest unfinished connection, or is
    closed when every connection has a request in progress."""
    shutdown_grace_s: float = Field(default=10.0, gt=0)
    """On SIGTERM/SIGINT: time given to requests in progress before they are cancelled and the
    workers stopped; the process exits within about this long."""
    worker_memory_mb: int = Field(default=2048, ge=0)
    """Address-space limit of each worker process in MiB (``RLIMIT_AS``); 0 leaves it unlimited.
    A proof that hits it is answered 422 ``resource_limit``."""
    cache_entries: int = Field(default=1024, ge=0)
    """Verdicts kept in the in-memory cache, keyed by a hash of the input and the settings that
    affect the verdict; 0 disables the cache."""
    cache_max_bytes: int = Field(default=64 * 1_048_576, ge=0)
    """Most bytes of cached verdict JSON."""
    reward_warmup: bool = True
    """Start the ``/get_reward`` grader's worker processes with the service (so a reward call is never
    charged for their start-up); false saves those processes where ``/get_reward`` is not used."""
    api_key: SecretStr | None = None
    """When set, ``/localize``, ``/localize/batch``, ``/get_reward``, ``/metrics`` and ``POST /web/tree``
    require it in ``X-API-Key`` or ``Authorization: Bearer``; compared in constant time."""
    cors_origins: tuple[str, ...] = ()
    """Origins allowed by CORS; empty (the default) adds no CORS headers at all."""

    @model_validator(mode="after")
    def _consistent(self) -> ServiceSettings:
        if self.request_time_limit_s <= self.proof_time_limit_s:
            raise ValueError(
                f"request_time_limit_s ({self.request_time_limit_s}) must exceed proof_time_limit_s "
                f"({self.proof_time_limit_s}) so the pipeline's own budget runs out first"
            )
        return self

    @property
    def batch_limit(self) -> int:
        """Most items per batch in effect: ``batch_max_items``, capped by ``max_pending`` (a larger batch
        could never be admitted)."""
        return min(self.batch_max_items, self.max_pending)

    def pipeline_settings(self) -> Settings:
        """The pipeline's part of these settings (what a worker needs), as a plain ``Settings``.

        The service runs the offline sieve: its per-request limits are sized for milliseconds, not
        for language-model calls, so ``FAITHSIEVE_MODE`` does not reach it."""
        values = {name: getattr(self, name) for name in Settings.model_fields}
        values["mode"] = "offline"
        return Settings.model_construct(**values)
