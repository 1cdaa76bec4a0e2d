"""``faithsieve localize --exit-code``: 0 correct, 1 error, 3 unknown, 2 bad input; stdin is named once."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from faithsieve.cli import main


def _proof(tmp_path: Path, step: str) -> str:
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"problem": "Compute 12 * 15.", "steps": [step]}))
    return str(f)


def test_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wrong = _proof(tmp_path, "12 * 15 = 170.")
    assert main(["localize", wrong, "--exit-code"]) == 1
    assert main(["localize", wrong]) == 0  # without the option an error verdict is a normal answer
    right = _proof(tmp_path, "12 * 15 = 180.")
    assert main(["localize", right, "--exit-code"]) == 0
    capsys.readouterr()
    assert main(["localize", str(tmp_path / "missing.json"), "--exit-code"]) == 2
    # a proof past its hard time limit is unknown: 3 with --exit-code, 1 without
    slow = _proof(tmp_path, "12 * 15 = 180.")
    assert main(["localize", slow, "--exit-code", "--item-time-limit", "0.001"]) == 3
    assert main(["localize", slow, "--item-time-limit", "0.001"]) == 1


def test_stdin_is_named_once(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FAITHSIEVE_MAX_STEP_CHARS", "3")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"problem": "x", "steps": ["1 + 1 = 2."]}')))
    assert main(["localize", "-"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: <stdin>: step 1 has") and "-:" not in err
