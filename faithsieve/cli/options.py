"""Command-line options of the method (mode, endpoint, cache, ablations), shared by ``localize`` and ``score``.

Options override ``FAITHSIEVE_*`` environment settings; unset options leave them alone.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from faithsieve.cli.common import err, non_negative_int, positive_float
from faithsieve.runtime.limits import WORKER_MEMORY_MB

if TYPE_CHECKING:
    from pathlib import Path

    from faithsieve.core.settings import Settings
    from faithsieve.scoring.run import ScoreRequest

ABLATIONS = ("no_local_edges", "no_gate", "graph_judge", "nl_only")


def add_method_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("method", "offline sieve, the language-model method, or the direct-judge baseline")
    g.add_argument("--mode", choices=("offline", "llm", "judge"),
                   help="offline (default): rule-based checks only; llm: the full method; judge: direct judge")
    g.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 (FAITHSIEVE_LLM_BASE_URL)")
    g.add_argument("--model", help="model id (FAITHSIEVE_LLM_MODEL)")
    g.add_argument("--api-key-env", help="environment variable holding the API key (default OPENAI_API_KEY)")
    g.add_argument("--structured", choices=("json_schema", "json_schema_strict", "guided_json", "json_object_schema",
                                            "json_object", "none"),
                   help="how JSON answers are requested: json_schema (OpenAI, vLLM), json_schema_strict (OpenAI "
                        "strict mode), guided_json (vLLM guided decoding), json_object_schema (llama.cpp), json_object, none")
    g.add_argument("--llm-timeout", type=float, help="seconds per LLM call (default 120)")
    g.add_argument("--concurrency", type=int, help="most LLM calls in flight (default 4)")
    g.add_argument("--max-tokens", type=int, help="most tokens per answer (default 2048)")
    g.add_argument("--max-calls", type=int, metavar="N", help="most model calls per proof (default 32)")
    g.add_argument("--max-cost", type=float, metavar="USD", help="most estimated cost per proof (needs prices)")
    g.add_argument("--max-tokens-per-item", type=int, metavar="N",
                   help="most tokens per proof (default: 9 whole-proof judgments of it)")
    g.add_argument("--calibration", metavar="FILE",
                   help="the endpoint's measured reliabilities (written by faithsieve calibrate); default: "
                        "conservative weights")
    g.add_argument("--max-run-calls", type=int, metavar="N", help="score: most model calls for the run")
    g.add_argument("--max-run-cost", type=float, metavar="USD", help="score: most estimated cost for the run")
    g.add_argument("--no-cache", action="store_true", help="bypass the LLM response cache")
    g.add_argument("--cache-path", help="sqlite file of the LLM response cache (default ~/.cache/faithsieve/llm.sqlite)")
    g.add_argument("--ablate", action="append", choices=ABLATIONS, help="paper ablation (repeatable)")
    g.add_argument("--backend", choices=("none", "lean", "kimina"),
                   help="formal backend: lean (local toolchain through lean-interact), kimina (a Kimina Lean "
                        "Server), none (default); unavailable -> a warning and the other checkers")
    g.add_argument("--lean-project", help="Lake project (with Mathlib) for --backend lean (FAITHSIEVE_LEAN_PROJECT)")
    g.add_argument("--lean-server", help="Kimina Lean Server URL for --backend kimina (FAITHSIEVE_LEAN_SERVER_URL)")


_MAP = {"mode": "mode", "base_url": "llm_base_url", "model": "llm_model", "api_key_env": "llm_api_key_env",
        "structured": "llm_structured", "llm_timeout": "llm_timeout_s", "concurrency": "llm_concurrency",
        "max_tokens": "llm_max_tokens", "cache_path": "llm_cache_path", "max_calls": "llm_max_calls_per_item",
        "max_cost": "llm_max_cost_per_item",
        "max_tokens_per_item": "llm_max_tokens_per_item", "calibration": "llm_calibration", "max_run_calls": "llm_max_calls", "max_run_cost": "llm_max_cost", "lean_project": "lean_project",
        "lean_server": "lean_server_url"}
_BACKENDS = {"none": "none", "lean": "local", "kimina": "remote"}


def add_limit_options(p: argparse.ArgumentParser, one: str) -> None:
    """``--item-time-limit`` and ``--worker-memory-mb``: the hard limits (``faithsieve.runtime.limits``) of the
    worker that checks ``one`` (``the proof``, ``each item``)."""
    g = p.add_argument_group("limits", f"the hard limits of the worker process that checks {one}")
    g.add_argument("--item-time-limit", type=positive_float, metavar="S",
                   help=f"hard seconds for {one} (default: max(60, 4 x the proof budget) offline, none with a "
                        f"model): past it the worker is killed and {one} ends unknown")
    g.add_argument("--worker-memory-mb", type=non_negative_int, metavar="MB",
                   help=f"address-space cap of the worker (default {WORKER_MEMORY_MB}; 0: none): past it {one} "
                        "ends unknown")


def settings_from_args(args: argparse.Namespace) -> Settings:
    """``Settings()`` from the environment, with the options given on the command line on top."""
    from pydantic import ValidationError

    from faithsieve.core.errors import FaithSieveError, InputError
    from faithsieve.core.settings import (  # pydantic-settings: imported when a command runs, not for --help
        Settings,
        settings_error_line,
    )

    overrides: dict[str, Any] = {field: getattr(args, opt) for opt, field in _MAP.items()
                                 if getattr(args, opt, None) is not None}
    if getattr(args, "no_cache", False):
        overrides["llm_cache"] = False
    if getattr(args, "ablate", None):
        overrides["ablations"] = tuple(dict.fromkeys(args.ablate))
    if getattr(args, "backend", None):
        overrides["lean_backend"] = _BACKENDS[args.backend]
    try:
        settings = Settings(**overrides)
    except ValidationError as exc:  # one sentence naming the option or FAITHSIEVE_* variable, not pydantic's dump
        given = {field: "--" + opt.replace("_", "-") for opt, field in _MAP.items() if field in overrides}
        raise InputError(settings_error_line(exc, given)) from None
    if settings.llm_calibration and settings.mode == "llm":  # a bad file is one line and exit 2, before any work
        from faithsieve.stages.calibration import load_calibration

        try:
            load_calibration(settings.llm_calibration)
        except FaithSieveError as exc:
            raise InputError(str(exc)) from None
    return settings


def warn_if_lean_missing(settings: Settings) -> str | None:
    """When a Lean backend is asked for but cannot run, the one-line warning to print (the run goes on
    with the other checkers); ``None`` when none is asked for or it is available."""
    if settings.lean_backend == "none":
        return None
    from faithsieve.pipeline import lean_status

    ok, why = lean_status(settings)
    return None if ok else f"warning: Lean backend unavailable: {why}; continuing with {', '.join(settings.checkers)}"


def say_if_lean_missing(settings: Settings) -> None:
    """``warn_if_lean_missing``'s warning, when there is one, as a line on stderr (a bulk run goes on)."""
    warning = warn_if_lean_missing(settings)
    if warning:
        err(warning)


def subset_names(values: list[str] | None) -> tuple[str, ...]:
    """The subsets named by ``--subset`` (repeated, or comma-separated)."""
    out: list[str] = []
    for v in values or []:
        out.extend(s for s in (p.strip() for p in v.split(",")) if s)
    return tuple(out)


def bulk_request(args: argparse.Namespace, path: Path, out: Path, settings: Settings, **more: Any) -> ScoreRequest:
    """The request of a bulk run (``score``, ``predict``) from the options both commands take; ``more`` are the
    fields only one of them sets (``report``, ``resamples``)."""
    from faithsieve.scoring.run import ScoreRequest

    quiet = getattr(args, "quiet", False)
    return ScoreRequest(
        path=path, out=out, format=args.format, workers=args.workers, limit=args.limit,
        subsets=subset_names(args.subset),
        skip_invalid=args.skip_invalid, progress=False if (args.no_progress or quiet) else None, seed=args.seed,
        settings=settings, sample=args.sample, force_new=args.force_new, worker_memory_mb=args.worker_memory_mb,
        item_time_limit_s=args.item_time_limit, ray=args.ray, **more,
    )
