"""Stages registered by name; the pipeline picks them from settings. Imports are lazy so the
offline path never loads the language-model stages."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any

from faithsieve.core.settings import Settings

_REGISTRY: dict[str, dict[str, str]] = {
    "decomposer": {"rule": "faithsieve.stages.rule:RuleDecomposer",
                   "llm": "faithsieve.stages.llm_decompose:LLMDecomposer",
                   "coarse": "faithsieve.stages.llm_decompose:CoarseDecomposer"},
    "scanner": {"llm": "faithsieve.stages.scan:LLMScanner", "all": "faithsieve.stages.scan:AllEdgesScanner"},
    "typer": {"llm": "faithsieve.stages.typer:LLMTyper"},
    "gate": {"llm": "faithsieve.stages.gate:LLMGate", "pass": "faithsieve.stages.gate:PassGate"},
    "verifier": {"formal": "faithsieve.stages.verify:FormalVerifier"},
    "fusion": {"llm": "faithsieve.stages.fusion:EvidenceFusion"},
    "judge": {"direct": "faithsieve.stages.judge:DirectJudge", "graph": "faithsieve.stages.judge:GraphJudge"},
}


def stage(role: str, name: str, **kwargs: Any) -> Any:
    """Instantiate the stage registered as ``name`` for ``role``."""
    try:
        target = _REGISTRY[role][name]
    except KeyError:
        raise KeyError(f"no {role} stage named {name!r}; known: {sorted(_REGISTRY.get(role, {}))}") from None
    module, _, attr = target.partition(":")
    return getattr(import_module(module), attr)(**kwargs)


def register(role: str, name: str, target: str) -> None:
    """Register ``module:Class`` as stage ``name`` for ``role`` (plugins, tests)."""
    _REGISTRY.setdefault(role, {})[name] = target


@dataclass
class LLMStages:
    """The stages of ``--mode llm`` as chosen by the settings (ablations included)."""

    decomposer: Any
    scanner: Any
    typer: Any
    verifier: Any
    fusion: Any
    graph_judge: Any | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMStages:
        ablate = set(settings.ablations)
        gate = stage("gate", "pass" if "no_gate" in ablate else "llm")
        return cls(
            decomposer=stage("decomposer", "coarse" if "no_local_edges" in ablate else "llm"),
            scanner=stage("scanner", "llm"),
            typer=stage("typer", "llm"),
            verifier=stage("verifier", "formal", gate=gate),
            fusion=stage("fusion", "llm"),
            graph_judge=stage("judge", "graph") if "graph_judge" in ablate else None,
        )
