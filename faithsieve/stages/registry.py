"""Stages registered by name, and each mode's list of stages built from the settings.

``stages_for(settings)`` is the one place that reads ``settings.mode`` and the ablations: it picks
the registered stages of that mode and returns them as a ``ModeStages`` list, which the pipeline
runs as given. Imports are lazy so the offline path never loads the language-model stages.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import Any, Literal, overload

from faithsieve.core.settings import Settings
from faithsieve.stages.base import (
    Decomposer,
    Fusion,
    Gate,
    ProofJudge,
    Scanner,
    Sieve,
    TreeJudge,
    Typer,
    Verifier,
)
from faithsieve.stages.plan import (
    Anchor,
    Decompose,
    Fuse,
    JudgeProof,
    JudgeTree,
    ModeStages,
    Scan,
    Sift,
    Stage,
    TypeObligations,
    Verify,
)

_REGISTRY: dict[str, dict[str, str]] = {
    "decomposer": {"rule": "faithsieve.stages.rule:RuleDecomposer",
                   "llm": "faithsieve.stages.llm_decompose:LLMDecomposer",
                   "coarse": "faithsieve.stages.llm_decompose:CoarseDecomposer"},
    "sieve": {"literal": "faithsieve.stages.rule:LiteralSieve"},
    "scanner": {"llm": "faithsieve.stages.tree_scan:LLMScanner", "all": "faithsieve.stages.tree_scan:AllEdgesScanner"},
    "typer": {"llm": "faithsieve.stages.typer:LLMTyper"},
    "gate": {"llm": "faithsieve.stages.gate:LLMGate", "pass": "faithsieve.stages.gate:PassGate"},
    "verifier": {"formal": "faithsieve.stages.verify:FormalVerifier"},
    "fusion": {"llm": "faithsieve.stages.fusion:EvidenceFusion"},
    "judge": {"direct": "faithsieve.stages.judge:DirectJudge", "graph": "faithsieve.stages.judge:GraphJudge"},
}


@overload
def stage(role: Literal["decomposer"], name: str, **kwargs: Any) -> Decomposer: ...
@overload
def stage(role: Literal["sieve"], name: str, **kwargs: Any) -> Sieve: ...
@overload
def stage(role: Literal["scanner"], name: str, **kwargs: Any) -> Scanner: ...
@overload
def stage(role: Literal["typer"], name: str, **kwargs: Any) -> Typer: ...
@overload
def stage(role: Literal["gate"], name: str, **kwargs: Any) -> Gate: ...
@overload
def stage(role: Literal["verifier"], name: str, **kwargs: Any) -> Verifier: ...
@overload
def stage(role: Literal["fusion"], name: str, **kwargs: Any) -> Fusion: ...
@overload
def stage(role: Literal["judge"], name: Literal["direct"], **kwargs: Any) -> ProofJudge: ...
@overload
def stage(role: Literal["judge"], name: Literal["graph"], **kwargs: Any) -> TreeJudge: ...
@overload
def stage(role: str, name: str, **kwargs: Any) -> Any: ...
def stage(role: str, name: str, **kwargs: Any) -> Any:
    """Instantiate the stage registered as ``name`` for ``role`` (typed by its role's protocol)."""
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
    """The model stages of ``--mode llm`` as chosen by the settings (ablations included)."""

    decomposer: Decomposer
    scanner: Scanner
    typer: Typer
    verifier: Verifier
    fusion: Fusion
    graph_judge: TreeJudge | None = None

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

    def mode_stages(self, settings: Settings) -> ModeStages:
        """``--mode llm``: the offline sieve's closed computations (of ``llm_rule_kinds``) on the rule-based
        tree, the model's tree, then scan -> type -> verify -> fuse (or the graph judge over the tree)."""
        anchor: tuple[Stage, ...] = () if self.graph_judge is not None else (Anchor(),)
        decompose: tuple[Stage, ...] = (*anchor, Decompose(stage("decomposer", "rule")),
                                        Sift(stage("sieve", "literal", kinds=settings.llm_rule_kinds)),
                                        Decompose(self.decomposer))
        check: tuple[Stage, ...] = (
            (JudgeTree(self.graph_judge),) if self.graph_judge is not None
            else (Scan(self.scanner), TypeObligations(self.typer), Verify(self.verifier), Fuse(self.fusion)))
        return ModeStages(mode="llm", decompose=decompose, check=check, time_limit_s=settings.llm_proof_time_limit_s,
                          needs_llm=True, needs_kernel=True)


def offline_stages(settings: Settings) -> ModeStages:
    """``--mode offline``: the rule-based tree, then its literal formulas checked (no model)."""
    return ModeStages(mode="offline", decompose=(Decompose(stage("decomposer", "rule")),),
                      check=(Sift(stage("sieve", "literal")),), time_limit_s=settings.proof_time_limit_s)


def judge_stages(settings: Settings) -> ModeStages:
    """``--mode judge``: the direct-judge baseline (the rule-based tree is reported, not checked)."""
    return ModeStages(mode="judge", decompose=(Decompose(stage("decomposer", "rule")),),
                      check=(JudgeProof(stage("judge", "direct")),), time_limit_s=settings.llm_proof_time_limit_s,
                      needs_llm=True)


def llm_stages(settings: Settings) -> ModeStages:
    return LLMStages.from_settings(settings).mode_stages(settings)


MODES: dict[str, Callable[[Settings], ModeStages]] = {"offline": offline_stages, "llm": llm_stages,
                                                      "judge": judge_stages}
"""Each mode's list of stages, built from the settings."""


def stages_for(settings: Settings) -> ModeStages:
    """The stages of ``settings.mode``."""
    return MODES[settings.mode](settings)
