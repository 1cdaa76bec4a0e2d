"""bench/generalization.py: the per-source figures and the false-alarm families of the protocol."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "bench" / "generalization.py"
_spec = importlib.util.spec_from_file_location("generalization", _PATH)
assert _spec is not None and _spec.loader is not None
G = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(G)


def _rec(label, predicted, scope=None, kind="arithmetic", source="1 + 1 = 3"):  # type: ignore[no-untyped-def]
    r = {"id": f"{label}-{predicted}-{scope}", "label": label, "predicted": predicted, "subset": "s"}
    if scope:
        r["flag_scope"] = scope
        r["evidence"] = [{"kind": kind, "source": source, "claim": source}]
    return r


def test_figures_and_the_flawed_only_rule() -> None:
    rows = [_rec(3, 3, "first"), _rec(3, 5, "at_or_before"), _rec(4, 2, "at_or_before"), _rec("correct", 1, "first"),
            _rec("correct", "correct"), _rec(2, "correct")]
    f = G.figures(rows)
    assert f["flags"] == 4 and f["flag_soundness"] == pytest.approx(0.5) and f["correct_flagged"] == pytest.approx(0.5)
    assert f["precision_first"] == pytest.approx(0.5) and f["flags_at_or_before"] == 2
    # judged on flawed items only: the flag on the correct-labelled trace does not count
    f = G.figures(rows, flawed_only=True)
    assert f["flags"] == 3 and f["flag_soundness"] == pytest.approx(2 / 3) and f["correct_flagged"] is None


@pytest.mark.parametrize(("kind", "source", "text", "family"), [
    ("arithmetic", "log(100) = 5", r"$\log 100 = 5$", "notation: log base"),
    ("arithmetic", "3 + 4 = 8", "The volume is 3 + 4 = 8 cm^3", "notation: units with exponents"),
    ("coverage", "cases", "Case 1: n = 3", "case coverage against a guessed domain"),
    ("identity", "a + b = 7", "a + b = 7", "equation in unknowns read as identity / derivation from one premise"),
    ("substitution", "x = 3 ⊢ x - 7 = 0", "x - 7 = 0", "facts carried across contexts (values, candidates, cases)"),
    ("arithmetic", "5 - 2 = 1", "5 - 2 = 1", "arithmetic (closed numbers; label or reading)"),
])
def test_family(kind: str, source: str, text: str, family: str) -> None:
    assert G.family(_rec(3, 1, "first", kind, source), text) == family


def test_table_reads_run_directories(tmp_path: Path) -> None:
    run = tmp_path / "processbench"
    run.mkdir()
    rows = [_rec(3, 3, "first") | {"subset": "math"}, _rec("correct", "correct") | {"subset": "gsm8k"}]
    (run / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    lines = G.table(tmp_path, None)
    assert any(line.startswith("| processbench | tune | 2 | 1 | 1.000 |") for line in lines)
    assert any(line.startswith("| processbench (math) | tune | 1 | 1 |") for line in lines)
