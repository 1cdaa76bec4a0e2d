"""Step splitting and input validation (table tests)."""

import pytest

from faithsieve.core.errors import InputError, InputTooLarge
from faithsieve.core.settings import Settings
from faithsieve.split import proof_from_input, split_proof_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Step 1: a = 1\nmore\nStep 2: b = 2", ["a = 1\nmore", "b = 2"]),
        ("**Step 1:** x\n**Step 2:** y", ["x", "y"]),
        ("Intro line.\nStep 1: x\nStep 2: y", ["Intro line.", "x", "y"]),
        ("1. foo\n2. bar\n3. baz", ["foo", "bar", "baz"]),
        ("1) foo\n2) bar", ["foo", "bar"]),
        ("para one\nstill one\n\npara two\n\n\npara three", ["para one\nstill one", "para two", "para three"]),
        ("line one\nline two", ["line one", "line two"]),
        ("single", ["single"]),
        # numbered lines that do not count 1, 2, 3 are not a step list
        ("We have 3. items\n\n5. more", ["We have 3. items", "5. more"]),
    ],
)
def test_split_proof_text(text: str, expected: list[str]) -> None:
    pieces = split_proof_text(text)
    assert [p for _, p in pieces] == expected
    for offset, piece in pieces:
        assert text[offset : offset + len(piece)] == piece


def test_proof_from_input_forms() -> None:
    a = proof_from_input({"problem": "p", "steps": ["x", "y"]})
    b = proof_from_input({"problem": "p", "proof": "Step 1: x\nStep 2: y"})
    assert [s.text for s in a.steps] == [s.text for s in b.steps] == ["x", "y"]
    assert [s.index for s in b.steps] == [1, 2]
    assert b.steps[1].offset == len("Step 1: x\nStep 2: ")


@pytest.mark.parametrize(
    "data",
    [[], {"problem": "p"}, {"problem": 3, "steps": ["x"]}, {"problem": "p", "proof": "Step 1:"},
     {"problem": "p", "steps": ["x = \ud800"]}, {"problem": "p", "steps": "x"},
     {"problem": "p", "steps": []}, {"problem": "p", "steps": [1]}, {"problem": "p", "proof": "  "}],
)
def test_bad_input_is_a_clear_error(data: object) -> None:
    with pytest.raises(InputError):
        proof_from_input(data)  # type: ignore[arg-type]


def test_size_limits() -> None:
    s = Settings(max_steps=2, max_step_chars=10, max_proof_chars=50)
    with pytest.raises(InputTooLarge):
        proof_from_input({"problem": "p", "steps": ["a", "b", "c"]}, s)
    with pytest.raises(InputTooLarge):
        proof_from_input({"problem": "p", "steps": ["x" * 11]}, s)
    with pytest.raises(InputTooLarge):
        proof_from_input({"problem": "p" * 60, "proof": "x"}, s)
