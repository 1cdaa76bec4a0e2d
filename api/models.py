"""Wire types of the HTTP service: requests, error bodies, health and version answers.

Frozen pydantic models with a docstring per field. The verdict itself is
``faithsieve.verdict.Verdict`` (documented in the OpenAPI schema, sent as the
pipeline serialised it).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    field_validator,
    model_validator,
)

_FROZEN = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


def _json_number_only(v: object) -> object:
    if isinstance(v, (bool, str, bytes)):
        raise ValueError("Input should be a valid integer")
    return v


JsonInt = Annotated[int, BeforeValidator(_json_number_only)]
"""An integer as JSON Schema means it: ``5`` or ``5.0``, never ``true`` or ``"5"``."""


class LocalizeOptions(BaseModel):
    """Per-request tightening of the server's limits (a request can lower them, never raise them).

    Numbers and booleans are taken as JSON types: ``true`` is not 1 and ``"2"`` is not 2."""

    model_config = _FROZEN

    time_limit_s: float | None = Field(default=None, gt=0, le=3600, strict=True)
    """Checking budget for this proof in seconds; capped at the server's ``proof_time_limit_s``."""
    obligation_time_limit_ms: Annotated[
        JsonInt, Field(gt=0, le=3_600_000), WithJsonSchema({"type": "integer", "exclusiveMinimum": 0, "maximum": 3_600_000})
    ] | None = None
    """Time limit per solver call in ms; capped at the server's ``obligation_time_limit_ms``."""
    checkers: tuple[Literal["exact", "sympy", "z3"], ...] | None = Field(default=None, max_length=8)
    """Run only these of the server's configured checkers (order kept from the server's list)."""
    use_cache: bool = Field(default=True, strict=True)
    """Answer from the verdict cache when the same input was checked with the same settings."""


def _valid_unicode(text: str) -> str:
    """JSON can carry lone UTF-16 surrogates (``"\\ud800"``); they are not text, so refuse them."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"contains an unpaired UTF-16 surrogate at character {exc.start}") from None
    return text


class LocalizeRequest(BaseModel):
    """One proof: a problem and either its steps or one proof text that the service splits.

    Unknown top-level keys are ignored (a dataset record can be posted as it is); unknown
    option names are an error."""

    model_config = ConfigDict(frozen=True, extra="ignore", use_attribute_docstrings=True, json_schema_extra={
        "examples": [{"problem": "Solve 5x - 7 = 18.",
                      "steps": ["Add 7: 5x = 25.", "Divide by 5: x = 5."]}],
    })

    problem: str = ""
    """The problem statement (its numbers and equations count as established facts)."""
    steps: list[str] | None = None
    """The proof's steps in order (step numbers in the answer are 1-based indices into this list)."""
    proof: str | None = None
    """The proof as one text, split on ``Step k:`` markers, numbered lines, paragraphs or lines.
    Give either ``steps`` or ``proof``, not both."""
    options: LocalizeOptions | None = None
    """Optional per-request limits."""

    @field_validator("problem", "proof")
    @classmethod
    def _unicode_text(cls, v: str | None) -> str | None:
        return _valid_unicode(v) if v is not None else v

    @field_validator("steps")
    @classmethod
    def _unicode_steps(cls, v: list[str] | None) -> list[str] | None:
        if v is not None:
            for s in v:
                _valid_unicode(s)
        return v

    @model_validator(mode="after")
    def _has_proof(self) -> LocalizeRequest:
        if self.steps is None and self.proof is None:
            raise ValueError("give 'steps' (a list of strings) or 'proof' (a string)")
        if self.steps is not None and self.proof is not None:
            raise ValueError("give either 'steps' (a list of strings) or 'proof' (a string), not both")
        return self

    def pipeline_input(self) -> dict[str, Any]:
        """The part of the request the pipeline reads (``faithsieve.split.proof_from_input``)."""
        out: dict[str, Any] = {"problem": self.problem}
        if self.steps is not None:
            out["steps"] = list(self.steps)
        else:
            out["proof"] = self.proof
        return out


_ITEMS_SCHEMA = WithJsonSchema({
    "type": "array",
    "items": {"$ref": "#/components/schemas/LocalizeRequest"},
    "description": "Proofs to check. Each item is validated on its own: a malformed item gets its "
                   "own error entry and does not fail the others.",
})


class BatchRequest(BaseModel):
    """Many proofs in one request; answered in order."""

    model_config = _FROZEN

    items: Annotated[list[Any], _ITEMS_SCHEMA]
    """The proofs, each shaped like a ``POST /localize`` body."""
    options: LocalizeOptions | None = None
    """Options applied to every item that has none of its own."""


class RewardRequest(BaseModel):
    """OpenRLHF's remote reward request: ``query[i]`` is prompt + response, ``labels[i]`` the reference."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    query: list[str]
    """Prompt followed by the model's response, one per sample."""
    prompts: list[str] | None = None
    """The prompts (their prefix is removed from each query)."""
    labels: list[str | None] | None = None
    """Reference answers (null or "" grades the process only)."""

    @field_validator("query", "prompts", "labels")
    @classmethod
    def _unicode_texts(cls, v: list[str | None] | None) -> list[str | None] | None:
        for s in v or ():
            if s is not None:
                _valid_unicode(s)  # the same rule as /localize: lone surrogates are not text
        return v


class RewardResponse(BaseModel):
    """OpenRLHF's remote reward response."""

    model_config = _FROZEN

    rewards: list[float]
    """Shaped reward per sample (outcome minus the process penalty)."""
    scores: list[float]
    """Outcome per sample (1.0 correct final answer, else 0.0), for dynamic filtering."""
    extra_logs: dict[str, list[float]]
    """Per-sample values to log (first error step, coverage, time, flags)."""


class ErrorDetail(BaseModel):
    """What went wrong, for a person and for a program."""

    model_config = _FROZEN

    code: str
    """Stable machine-readable name (``invalid_input``, ``input_too_large``, ``saturated``, ...)."""
    message: str
    """One sentence for a person."""
    detail: Any = None
    """Structured detail: the offending field, the limit, validation errors."""


class ErrorBody(BaseModel):
    """Every error response has this body."""

    model_config = _FROZEN

    error: ErrorDetail
    """The error."""


class BatchItemResult(BaseModel):
    """One item of a batch answer: a verdict or an error, with the status a single request would get."""

    model_config = _FROZEN

    index: int
    """0-based position of the item in the request's ``items``."""
    status: int
    """HTTP status ``POST /localize`` would have answered for this item alone."""
    result: dict[str, Any] | None = None
    """The verdict (as ``POST /localize`` returns it) when ``status`` is 200."""
    error: ErrorDetail | None = None
    """The error when ``status`` is not 200."""


class BatchResponse(BaseModel):
    """Answer to a batch, in request order."""

    model_config = _FROZEN

    results: list[BatchItemResult]
    """One entry per item, in order."""
    counts: dict[str, int]
    """Items per outcome: ``correct``, ``error`` (verdicts) and ``failed`` (items with an error entry)."""


class Liveness(BaseModel):
    """The process answers."""

    model_config = _FROZEN

    status: Literal["ok"] = "ok"
    """Always ``ok``."""


class Health(BaseModel):
    """Liveness or readiness."""

    model_config = _FROZEN

    status: Literal["ready", "not_ready"]
    """``ready`` (at least one worker up and the pool accepting work) or ``not_ready``."""
    workers: int = 0
    """Worker processes up."""
    restarting: int = 0
    """Worker processes being replaced (after a time limit or a crash); requests wait for them."""
    pending: int = 0
    """Proofs admitted and not yet answered."""
    capacity: int = 0
    """``max_pending``: admitted proofs beyond which requests get 429."""


class VersionInfo(BaseModel):
    """What is running."""

    model_config = _FROZEN

    service: str
    """Service name."""
    version: str
    """FaithSieve version."""
    api_version: str
    """Version of this HTTP API."""
    python: str
    """Python version."""
    backends: dict[str, str]
    """Checker backends and their versions."""


class LimitsInfo(BaseModel):
    """The limits this server enforces (see ``api/README.md``)."""

    model_config = _FROZEN

    max_body_bytes: int
    """Largest ``POST /localize`` body."""
    max_batch_body_bytes: int
    """Largest ``POST /localize/batch`` body."""
    batch_max_items: int
    """Most items per batch."""
    max_steps: int
    """Most steps per proof."""
    max_step_chars: int
    """Most characters per step."""
    max_proof_chars: int
    """Most characters in problem plus proof."""
    max_exponent: int
    """Largest integer exponent evaluated exactly."""
    max_factorial: int
    """Largest factorial argument evaluated exactly."""
    max_bits: int
    """Largest bit length of an exact intermediate value."""
    proof_time_limit_s: float
    """Checking budget per proof; obligations past it become ``unknown``."""
    obligation_time_limit_ms: int
    """Time limit per solver call."""
    request_time_limit_s: float
    """Hard limit per ``POST /localize`` (504 past it)."""
    batch_time_limit_s: float
    """Hard limit per ``POST /localize/batch``."""
    body_read_time_limit_s: float
    """Time allowed to send the body (408 past it)."""
    max_pending: int
    """Admitted proofs beyond which requests get 429."""
    workers: int
    """Worker processes."""
    worker_memory_mb: int
    """Address-space limit per worker (0: none)."""
    header_read_timeout_s: float
    """Time a connection has to complete a request's headers before it is closed."""
    max_unfinished_connections: int
    """Open connections without a request in progress beyond which the oldest is closed."""
    max_connections: int
    """Most open connections."""
    heavy_chars: int
    """Proofs longer than this (or with expensive-looking formulas) run in the heavy lane."""
    heavy_max_pending: int
    """Most heavy proofs admitted at once."""
    reward_max_pending: int
    """Most ``/get_reward`` samples admitted at once (429 beyond)."""
    max_header_bytes: int
    """Most bytes of one request head (431 past it)."""
    min_body_rate_bps: float
    """Bodies slower than this (bytes/s) may be closed to make room at ``max_connections``."""
