"""The method and the judge end to end against a real OpenAI-compatible server (CI: llama.cpp,
SmolLM2-135M). Selected with ``-m llm_live``; skipped without ``FAITHSIEVE_LIVE_BASE_URL`` and
``FAITHSIEVE_LIVE_MODEL``.

A 135M model's answers are poor, so this checks plumbing, not accuracy: every stage's request goes
over real HTTP with a schema, answers are parsed or end as notes, a verdict comes back whose
``error`` (if any) is backed by a basis, usage is counted, and a second pipeline over the same
cache file makes zero calls and gives the same verdict. Per-item timings go to
``FAITHSIEVE_LIVE_REPORT`` (key ``"pipeline"``) when that is set.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from faithsieve.core.settings import Settings
from faithsieve.pipeline import Pipeline
from faithsieve.split import proof_from_input

BASE_URL = os.environ.get("FAITHSIEVE_LIVE_BASE_URL", "")
MODEL = os.environ.get("FAITHSIEVE_LIVE_MODEL", "")
MODE = os.environ.get("FAITHSIEVE_LIVE_STRUCTURED", "json_object_schema")
EXAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "37_wrong_linear_solution.json"

pytestmark = [
    pytest.mark.llm_live,
    pytest.mark.skipif(not (BASE_URL and MODEL),
                       reason="live LLM tests need FAITHSIEVE_LIVE_BASE_URL and FAITHSIEVE_LIVE_MODEL "
                              "(start a server with .ci/llm_server.sh start)"),
]


def settings(mode: str, cache: Path) -> Settings:
    return Settings(mode=mode, llm_base_url=BASE_URL, llm_model=MODEL, llm_structured=MODE,  # type: ignore[arg-type]
                    llm_cache_path=str(cache), llm_max_tokens=512, llm_timeout_s=120, llm_max_retries=1,
                    llm_backoff_s=0.5)


def report(key: str, row: dict[str, Any]) -> None:
    print(f"\nlive {key}: {json.dumps(row)}")
    target = os.environ.get("FAITHSIEVE_LIVE_REPORT")
    if not target:
        return
    path = Path(target)
    try:
        doc = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except json.JSONDecodeError:
        doc = {}
    doc.setdefault("pipeline", {})[key] = row
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


@pytest.mark.parametrize("mode", ["judge", "llm"])
def test_pipeline_end_to_end_and_cached_rerun(mode: str, tmp_path: Path) -> None:
    proof = proof_from_input(json.loads(EXAMPLE.read_text(encoding="utf-8")), Settings())
    cache = tmp_path / "cache.sqlite"

    started = time.perf_counter()
    first = Pipeline.from_settings(settings(mode, cache)).localize(proof)
    wall_ms = (time.perf_counter() - started) * 1000
    u = first.usage
    assert u is not None and u.calls > 0 and u.failures == 0, first.audit
    assert first.mode == mode
    if first.verdict == "error":
        assert first.basis in {"checked", "formalized", "formal", "reviewed", "judged"}
        if first.basis == "checked":  # a checked error always carries an exact counterexample
            assert any(e.counterexample for e in first.steps[first.first_error_step - 1].evidence)  # type: ignore[operator]
    else:  # correct: the synthesis said so, or every step was cleared by local reviews
        assert first.basis in {None, "judged", "reviewed"}
    if mode == "llm":
        assert first.audit is not None and first.audit.decomposition in {"llm", "coarse"}
        assert first.steps and all(r.edges for r in first.steps)

    second = Pipeline.from_settings(settings(mode, cache)).localize(proof)
    u2 = second.usage
    assert u2 is not None and u2.calls == 0 and u2.cache_hits == u.calls
    assert (second.verdict, second.first_error_step, second.basis) == (first.verdict, first.first_error_step,
                                                                       first.basis)
    report(mode, {"calls": u.calls, "prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens,
                  "unparsed": u.unparsed, "latency_ms_per_call": round(u.latency_ms / u.calls, 1),
                  "wall_ms": round(wall_ms, 1), "verdict": first.verdict, "step": first.first_error_step,
                  "basis": first.basis, "rerun_calls": u2.calls, "rerun_cache_hits": u2.cache_hits})
