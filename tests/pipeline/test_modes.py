"""Modes: the offline default needs nothing; llm/judge need an endpoint and say so; the service and
the RL grader stay offline whatever the environment says."""

from __future__ import annotations

import pytest

from faithsieve.cli import main
from faithsieve.core.errors import BackendUnavailable
from faithsieve.core.settings import Settings, method_key
from faithsieve.pipeline import Pipeline
from faithsieve.scoring.run import _endpoint_failed, llm_summary
from faithsieve.split import proof_from_steps


def test_llm_modes_need_a_model() -> None:
    for mode in ("llm", "judge"):
        with pytest.raises(BackendUnavailable, match="needs a language model"):
            Pipeline(Settings(mode=mode))  # type: ignore[arg-type]


def test_offline_verdict_reports_checked_basis_and_no_usage() -> None:
    v = Pipeline(Settings()).localize(proof_from_steps("p", ["2 + 2 = 5"]))
    assert (v.mode, v.basis, v.usage, v.audit) == ("offline", "checked", None, None)
    v = Pipeline(Settings()).localize(proof_from_steps("p", ["2 + 2 = 4"]))
    assert (v.verdict, v.basis) == ("correct", None)


@pytest.mark.parametrize("mode", ["llm", "judge"])
def test_cli_without_endpoint_is_a_clear_error(mode: str, tmp_path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("FAITHSIEVE_LLM_BASE_URL", raising=False)
    f = tmp_path / "p.json"
    f.write_text('{"problem": "p", "steps": ["1 + 1 = 2"]}')
    assert main(["localize", str(f), "--mode", mode]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err


def test_service_and_grader_ignore_the_mode_environment(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from faithsieve.api.settings import ServiceSettings

    from faithsieve import grader

    monkeypatch.setenv("FAITHSIEVE_MODE", "llm")
    assert Settings().mode == "llm"  # the variable is read ...
    assert ServiceSettings().pipeline_settings().mode == "offline"  # ... but not by the service
    grader._settings.cache_clear()
    assert grader._settings(()).mode == "offline"
    grader._settings.cache_clear()


def test_method_key_separates_what_changes_predictions() -> None:
    assert method_key(Settings()) == "offline"
    a = method_key(Settings(mode="llm", llm_model="m1", llm_base_url="http://x/v1"))
    b = method_key(Settings(mode="llm", llm_model="m2", llm_base_url="http://x/v1"))
    c = method_key(Settings(mode="llm", llm_model="m1", llm_base_url="http://x/v1", ablations=("no_gate",)))
    d = method_key(Settings(mode="judge", llm_model="m1", llm_base_url="http://x/v1"))
    assert len({a, b, c, d}) == 4


def test_llm_summary_totals_and_means() -> None:
    recs = [
        {"usage": {"calls": 10, "cache_hits": 0, "prompt_tokens": 1000, "completion_tokens": 200, "cost_usd": 0.01},
         "basis": "judged", "time_ms": 100.0},
        {"usage": {"calls": 0, "cache_hits": 12, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0},
         "basis": None, "time_ms": 50.0},
        {"predicted": "correct"},  # an offline record has no usage and is not counted
    ]
    s = llm_summary(recs)
    assert s is not None
    assert s["items"] == 2 and s["totals"]["calls"] == 10 and s["totals"]["cache_hits"] == 12
    assert s["per_item"]["prompt_tokens"] == 500 and s["time_ms_per_item"] == 75.0
    assert s["basis"] == {"judged": 1, "None": 1}
    assert llm_summary([{"predicted": 1}]) is None


def test_items_predicted_while_the_endpoint_failed_are_redone() -> None:
    assert _endpoint_failed({"usage": {"failures": 2}})
    assert not _endpoint_failed({"usage": {"failures": 0}}) and not _endpoint_failed({"predicted": "correct"})


def test_backend_lean_without_a_toolchain_warns_and_falls_back(tmp_path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``--backend lean`` on a machine with no Lean: one clear warning, the other checkers still run,
    no traceback, quickly."""
    import time

    monkeypatch.setenv("PATH", str(tmp_path))  # nothing named lean/lake/elan on it
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    f = tmp_path / "p.json"
    f.write_text('{"problem": "p", "steps": ["7 × 2 = 15"]}')
    t = time.monotonic()
    assert main(["localize", str(f), "--backend", "lean"]) == 0
    assert time.monotonic() - t < 2.0
    captured = capsys.readouterr()
    assert captured.err.startswith("warning: Lean backend unavailable: ") and "Traceback" not in captured.err
    assert "continuing with exact, sympy, z3" in captured.err
    assert '"first_error_step": 1' in captured.out
    assert not (tmp_path / "home").exists()  # nothing written, nothing installed


def test_llm_mode_reports_why_there_is_no_kernel(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PATH", str(tmp_path))
    s = Settings(mode="llm", llm_base_url="http://127.0.0.1:9/v1", llm_model="m", lean_backend="local",
                 llm_cache=False)
    pipe = Pipeline.from_settings(s)
    ok, why = pipe.kernel.available()
    assert not ok and "no Lean toolchain" in why
    assert "no Lean toolchain" in pipe.backends()["kernel"]
