"""Command-line options of the method (mode, endpoint, cache, ablations), shared by ``localize`` and ``score``.

Options override ``FAITHSIEVE_*`` environment settings; unset options leave them alone.
"""

from __future__ import annotations

import argparse
from typing import Any

from faithsieve.config import Settings, method_key  # noqa: F401 (re-export)

ABLATIONS = ("no_local_edges", "no_gate", "graph_judge", "nl_only")


def add_method_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("method", "offline sieve, the language-model method, or the direct-judge baseline")
    g.add_argument("--mode", choices=("offline", "llm", "judge"),
                   help="offline (default): rule-based checks only; llm: the full method; judge: direct judge")
    g.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 (FAITHSIEVE_LLM_BASE_URL)")
    g.add_argument("--model", help="model id (FAITHSIEVE_LLM_MODEL)")
    g.add_argument("--api-key-env", help="environment variable holding the API key (default OPENAI_API_KEY)")
    g.add_argument("--structured", choices=("json_schema", "json_object_schema", "json_object", "none"),
                   help="how JSON answers are requested: json_schema (OpenAI, vLLM), json_object_schema (llama.cpp), "
                        "json_object, none")
    g.add_argument("--llm-timeout", type=float, help="seconds per LLM call (default 120)")
    g.add_argument("--concurrency", type=int, help="most LLM calls in flight (default 4)")
    g.add_argument("--max-tokens", type=int, help="most tokens per answer (default 2048)")
    g.add_argument("--no-cache", action="store_true", help="bypass the LLM response cache")
    g.add_argument("--cache-path", help="sqlite file of the LLM response cache (default ~/.cache/faithsieve/llm.sqlite)")
    g.add_argument("--ablate", action="append", choices=ABLATIONS, help="paper ablation (repeatable)")


_MAP = {"mode": "mode", "base_url": "llm_base_url", "model": "llm_model", "api_key_env": "llm_api_key_env",
        "structured": "llm_structured", "llm_timeout": "llm_timeout_s", "concurrency": "llm_concurrency",
        "max_tokens": "llm_max_tokens", "cache_path": "llm_cache_path"}


def settings_from_args(args: argparse.Namespace) -> Settings:
    """``Settings()`` from the environment, with the options given on the command line on top."""
    overrides: dict[str, Any] = {field: getattr(args, opt) for opt, field in _MAP.items()
                                 if getattr(args, opt, None) is not None}
    if getattr(args, "no_cache", False):
        overrides["llm_cache"] = False
    if getattr(args, "ablate", None):
        overrides["ablations"] = tuple(dict.fromkeys(args.ablate))
    return Settings(**overrides)
