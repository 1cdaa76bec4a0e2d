"""ProofLoc JSONL: validation of every line, with line number and reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from faithsieve.datasets.formats import (
    LabelledItem,
    load_proofloc,
    parse_item,
    parse_proofloc_lines,
    write_proofloc,
)

GOOD = {"id": "a", "problem": "p", "steps": ["s1", "s2"], "label": "correct"}


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"label": 0}, "label 0 is outside 1..2"),
        ({"label": 3}, "label 3 is outside 1..2"),
        ({"label": -1}, "label -1 is outside 1..2"),
        ({"label": "2"}, "an integer), got '2'"),
        ({"label": True}, "got True"),
        ({"label": None}, "got None"),
        ({"label": "Correct"}, "got 'Correct'"),
        ({"steps": []}, "steps: Tuple should have at least 1 item"),
        ({"steps": "s1\ns2"}, "steps:"),
        ({"steps": ["s1", 2]}, "steps.1:"),
        ({"id": ""}, "id: String should have at least 1 character"),
        ({"problem": 5}, "problem: Input should be a valid string"),
        ({"extra": 1}, "extra: Extra inputs are not permitted"),
        ({"meta": []}, "meta: Input should be a valid dictionary"),
    ],
)
def test_invalid_records_have_reasons(change: dict, reason: str) -> None:
    with pytest.raises(ValueError) as exc:
        parse_item({**GOOD, **change})
    assert reason in str(exc.value)


@pytest.mark.parametrize("missing", ["id", "problem", "steps", "label"])
def test_required_fields(missing: str) -> None:
    rec = {k: v for k, v in GOOD.items() if k != missing}
    with pytest.raises(ValueError, match=f"{missing}: Field required"):
        parse_item(rec)


@pytest.mark.parametrize(("label", "first_error"), [("correct", None), (1, 1), (2, 2)])
def test_valid_labels(label: object, first_error: int | None) -> None:
    item = parse_item({**GOOD, "label": label})
    assert item.first_error == first_error


def test_blank_step_is_kept_for_positional_labels() -> None:
    item = parse_item({**GOOD, "steps": ["s1", "", "s3"], "label": 3})
    assert item.steps == ("s1", "", "s3")


def test_bad_file_reports_every_line(fixtures: Path) -> None:
    items, bad = load_proofloc(fixtures / "proofloc" / "bad.jsonl")
    assert [i.id for i in items] == ["ok-1"]
    assert [b.location for b in bad] == [f"line {n}" for n in range(2, 12)]
    reasons = {b.location: b.reason for b in bad}
    assert "duplicate id 'ok-1' (first on line 1)" in reasons["line 9"]
    assert reasons["line 10"].startswith("invalid JSON")
    assert reasons["line 11"] == "expected a JSON object, got list"
    assert all(str(b).startswith(str(fixtures / "proofloc" / "bad.jsonl")) for b in bad)


def test_blank_lines_are_not_records() -> None:
    lines = ["", json.dumps(GOOD), "   ", json.dumps({**GOOD, "id": "b"})]
    out = list(parse_proofloc_lines(lines))
    assert [x.id for x in out] == ["a", "b"]  # type: ignore[union-attr]


def test_round_trip(tmp_path: Path) -> None:
    items = [
        LabelledItem(id="x", problem="p", steps=("a", "b"), label=2, domain="algebra", source="t", meta={"subset": "s"}),
        LabelledItem(id="y", problem="q", steps=("c",), label="correct"),
    ]
    path = tmp_path / "out.jsonl"
    assert write_proofloc(items, path) == 2
    back, bad = load_proofloc(path)
    assert bad == [] and back == items
    assert json.loads(path.read_text().splitlines()[1]) == {"id": "y", "problem": "q", "steps": ["c"], "label": "correct"}


def test_subset_and_hash() -> None:
    a = parse_item({**GOOD, "domain": "d", "meta": {"subset": "s"}})
    assert a.subset == "s"
    assert parse_item({**GOOD, "domain": "d"}).subset == "d"
    assert parse_item(GOOD).subset == "all"
    assert a.content_hash() == parse_item({**GOOD, "label": 1}).content_hash()
    assert a.content_hash() != parse_item({**GOOD, "steps": ["s1", "s3"]}).content_hash()
