"""Settings: pydantic-settings with the ``FAITHSIEVE_`` prefix. Nothing reads the
environment at import time; build ``Settings()`` at an entry point (or explicitly in tests)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Runtime configuration of the pipeline and its limits."""

    model_config = SettingsConfigDict(env_prefix="FAITHSIEVE_", frozen=True, extra="ignore")

    proof_time_limit_s: float = Field(default=5.0, gt=0)
    """Wall-clock budget for checking one proof; obligations past it become ``unknown``."""
    obligation_time_limit_ms: int = Field(default=300, gt=0)
    """Time limit for one solver call (z3)."""
    max_steps: int = Field(default=200, gt=0)
    """Most steps accepted in one proof."""
    max_step_chars: int = Field(default=20_000, gt=0)
    """Most characters accepted in one step."""
    max_proof_chars: int = Field(default=200_000, gt=0)
    """Most characters accepted in problem plus proof."""
    max_exponent: int = Field(default=10_000, gt=0)
    """Largest integer exponent evaluated exactly."""
    max_factorial: int = Field(default=1_000, gt=0)
    """Largest factorial argument evaluated exactly."""
    max_bits: int = Field(default=20_000, gt=0)
    """Largest bit length of an exact intermediate value."""
    checkers: tuple[str, ...] = ("exact", "sympy", "z3")
    """Checkers to run, cheapest first (names from the checker registry)."""
    procedures_off: tuple[str, ...] = ()
    """Decision procedures switched off (switchable names from ``obligations.procedures.registry``: ``witness``,
    ``quotients``, ``cleared``, ``sections``, ``piecewise``, ``radicals``, ``ratfunc``, ``freevar``,
    ``varying``, and ``memo`` for the outcome memo). A shortcut switched off leaves the obligation to
    the later, general procedures: verdicts stay, only the time and the evidence's ``method`` change."""

    # ---- modes and the language-model method (``--mode llm`` / ``--mode judge``) ----
    mode: Literal["offline", "llm", "judge"] = "offline"
    """``offline``: rule-based sieve only. ``llm``: the full method over an LLM endpoint.
    ``judge``: the direct-judge baseline (whole proof in, first error out)."""
    llm_base_url: str | None = None
    """OpenAI-compatible endpoint, e.g. ``https://api.openai.com/v1`` or ``http://127.0.0.1:8080/v1``."""
    llm_model: str = ""
    """Model id sent with every request."""
    llm_api_key_env: str = "OPENAI_API_KEY"
    """Name of the environment variable holding the API key (read when the client is built)."""
    llm_timeout_s: float = Field(default=120.0, gt=0)
    """Time limit of one LLM call."""
    llm_proof_time_limit_s: float = Field(default=900.0, gt=0)
    """Wall-clock budget for one proof in ``llm``/``judge`` mode (calls included); stages past it
    leave their work ``unknown`` with a note."""
    llm_max_retries: int = Field(default=2, ge=0, le=10)
    """Retries of a failed call (connection error, 429, 5xx), with exponential backoff."""
    llm_backoff_s: float = Field(default=1.0, ge=0)
    """First backoff delay; doubled on each retry."""
    llm_concurrency: int = Field(default=4, ge=1, le=256)
    """Most LLM calls in flight at once from one client."""
    llm_structured: Literal["json_schema", "json_schema_strict", "guided_json", "json_object_schema", "json_object",
                            "none"] = "json_schema"
    """How JSON answers are requested: OpenAI ``json_schema`` (also vLLM), ``json_schema_strict`` (OpenAI
    strict mode), vLLM ``guided_json``; llama.cpp ``json_object_schema``; plain ``json_object``; or
    ``none`` (schema in the prompt only)."""
    llm_cache: bool = True
    """Use the sqlite response cache (``--no-cache`` turns it off)."""
    llm_cache_path: str = "~/.cache/faithsieve/llm.sqlite"
    """Where the response cache lives."""
    llm_price_in_per_mtok: float = Field(default=0.0, ge=0)
    """Price of a million prompt tokens, for cost accounting."""
    llm_price_out_per_mtok: float = Field(default=0.0, ge=0)
    """Price of a million completion tokens, for cost accounting."""
    llm_max_structure_tokens: int = Field(default=16384, gt=0)
    """Ceiling for answers that grow with the proof (decomposition, state tree, scan): they get
    ``max(llm_max_tokens, an estimate from the proof's size)`` up to this; lower it for servers
    with a small context window."""
    llm_temperature: float = Field(default=0.0, ge=0, le=2)
    """Sampling temperature of every call."""
    llm_max_tokens: int = Field(default=2048, gt=0)
    """Most tokens in one answer."""
    llm_max_calls_per_item: int | None = Field(default=32, ge=1)
    """Most model calls for one proof (``None``: no bound; the method plans at most about 27, re-samples included);
    past it no call is made but the anchoring whole-proof judgment, and the verdict says so (``unknown`` when the
    deciding answer was not had). With the token budget it bounds a server that reports no token counts."""
    llm_max_tokens_per_item: int | None = Field(default=None, ge=1)
    """Most tokens (prompt and completion) for one proof; ``None``: ``llm_token_budget_factor`` times an estimate
    of one whole-proof judgment of it."""
    llm_token_budget_factor: float = Field(default=9.0, gt=0, le=1000)
    """Without ``llm_max_tokens_per_item``: the per-proof token budget in units of the proof's own whole-proof
    judgment (``--mode llm`` asks it first; its tokens count in the budget). Every call's answer is capped to what
    is left; the final synthesis (one judgment-sized call, asked only to corroborate) may run past it, so a
    hostile model costs about this plus one or two judgments."""
    llm_max_cost_per_item: float | None = Field(default=None, gt=0)
    """Most estimated cost (USD, from the configured prices) for one proof."""
    llm_calibration: str | None = None
    """A calibration file written by ``faithsieve calibrate`` (the endpoint's measured reliability per
    evidence kind); ``None``: conservative weights, re-samples counted as one opinion until the run has
    measured their agreement."""
    llm_max_calls: int | None = Field(default=None, ge=1)
    """Most model calls for a whole scoring run: it stops before the next item (resumable)."""
    llm_max_cost: float | None = Field(default=None, gt=0)
    """Most estimated cost (USD) for a whole scoring run."""
    scan_threshold: float = Field(default=0.6, ge=0, le=1)
    """Suspicion above which an EdgeUnit is a candidate for the audit window (paper: 0.6)."""
    audit_prefix: int = Field(default=6, ge=0, le=64)
    """Preceding EdgeUnits scheduled with the focus unit (paper: 6)."""
    max_audit_units: int = Field(default=12, ge=1, le=200)
    """Most EdgeUnits reviewed and typed for one proof (bounds the calls per item)."""
    gate_threshold: float = Field(default=0.9, ge=0, le=1)
    """Least S_faith for formal evidence to count."""
    gate_critical_threshold: float = Field(default=0.75, ge=0, le=1)
    """Least score of each critical part (directionality, role alignment, conclusion fidelity)."""
    gate_judges: int = Field(default=1, ge=1, le=5)
    """Independent semantic judgments per statement; all must pass."""
    gate_revisions: int = Field(default=2, ge=0, le=10)
    """Times a statement is revised from the drift report before it is given up as ``unknown``."""
    llm_rule_kinds: tuple[str, ...] = ("arithmetic", "identity", "substitution", "derivation", "solution", "coverage")
    """Kinds of the offline sieve's literal-formula obligations whose evidence ``--mode llm`` also
    uses: by default every kind the offline path checks, so an exact refutation of a formula the
    proof writes is evidence whatever the model's decomposition keeps (fusion weighs it against the
    reviews of the unit that writes it)."""
    ablations: tuple[Literal["no_local_edges", "no_gate", "graph_judge", "nl_only"], ...] = ()
    """Paper ablations: coarse steps instead of EdgeUnits; no faithfulness gate; judge over the
    graph only; EdgeUnit review without formal evidence."""

    # ---- the Lean kernel ----
    lean_backend: Literal["none", "local", "remote"] = "none"
    """``local``: lean-interact REPLs over an installed toolchain; ``remote``: a Kimina Lean Server;
    ``none``: no formal backend (obligations needing Lean stay ``unknown``)."""
    lean_project: str | None = None
    """A Lake project directory (with Mathlib, usually) the local REPL runs in."""
    lean_repl_path: str | None = None
    """A prebuilt Lean REPL directory or binary to use instead of building one."""
    lake_path: str = "lake"
    """The ``lake`` executable."""
    lean_server_url: str | None = None
    """Base URL of a Kimina Lean Server (``remote`` backend), e.g. ``http://127.0.0.1:12332``."""
    lean_server_api_key_env: str = "LEAN_SERVER_API_KEY"
    """Environment variable holding the Lean server's API key, if it needs one."""
    lean_timeout_s: float = Field(default=60.0, gt=0)
    """Time limit of one Lean check (lean-interact has none by default)."""
    lean_memory_mb: int = Field(default=8192, ge=256)
    """Memory cap of one local REPL; above it the REPL is recycled."""
    lean_recycle_after: int = Field(default=200, ge=1)
    """Commands after which a local REPL is restarted (REPLs degrade after some hundreds)."""
    lean_workers: int = Field(default=1, ge=1, le=64)
    """Local REPLs kept in the pool."""
    lean_mathlib: bool = True
    """Render statements for Mathlib (``import Mathlib``, ℝ, ``Even``); ``False``: core Lean only."""
    lean_statement_budget: int = Field(default=4, ge=1, le=20)
    """Drafts (compile + repair rounds) allowed for one formal statement."""
    lean_proof_budget: int = Field(default=4, ge=0, le=20)
    """LLM proof attempts after the tactic portfolio fails."""
    lean_tool_calls: int = Field(default=8, ge=0, le=64)
    """Lean tool calls (compile, #check, search, goal state) one model turn may make."""
    lean_cache_path: str = "~/.cache/faithsieve/lean.sqlite"
    """Content-hash cache of check results."""


def method_key(settings: Settings) -> str:
    """What determines a prediction besides the item: resumed runs redo items predicted otherwise."""
    if settings.mode == "offline":
        return "offline"
    parts = [settings.mode, settings.llm_model, settings.llm_base_url or "", ",".join(settings.ablations)]
    if settings.mode == "llm" and settings.llm_calibration:  # other weights, other predictions
        parts.append(f"cal={settings.llm_calibration}")
    return "|".join(parts)


def settings_error_line(exc: ValidationError, given: Mapping[str, str] | None = None, prefix: str = "FAITHSIEVE_") -> str:
    """A settings ``ValidationError`` as one sentence per bad setting, naming it as the user set it: the
    command-line option in ``given`` (field -> ``--llm-timeout``) or else the environment variable
    (``FAITHSIEVE_MAX_STEPS='abc' is not valid: it should be a valid integer``)."""
    parts = []
    for e in exc.errors():
        field = str(e["loc"][0]) if e["loc"] else ""
        name = (given or {}).get(field) or f"{prefix}{field.upper()}"
        sep = " " if name.startswith("-") else "="
        value = e.get("input")
        shown = repr(value[:60]) if isinstance(value, str) else json_scalar(value)[:60]
        msg = str(e["msg"]).removeprefix("Input ").removeprefix("Value error, ")
        parts.append(f"{name}{sep}{shown} is not valid: it {msg[:1].lower()}{msg[1:]}"
                     if e["loc"] else f"invalid settings: {msg}")
    return "; ".join(parts)


def json_scalar(value: object) -> str:
    """A setting's value as the user typed it (``-5.0`` for -5.0, ``true`` for True)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
