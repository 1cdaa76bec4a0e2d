"""Answer extraction: an answer only as a literal span of checked proof text."""

import pytest
from faithsieve.lean.answer_span import MAX_ANSWER_CHARS, literal_span

FAR = "\n" + "-- filler line to keep commands far away\n" * 4
PROOF = "theorem ans : (12 : ℤ) * 26 = 312 := by norm_num"


def found(answer: str, proof: str, window: int = 80) -> str | None:
    span = literal_span(answer, proof, window)
    return None if span is None else proof[span[0]:span[1]]


@pytest.mark.parametrize(
    ("answer", "proof", "expected"),
    [
        ("12", PROOF, "12"),
        ("312", PROOF, "312"),
        ("26", PROOF, "26"),
        ("2", PROOF, None),  # only inside 12, 26 and 312
        ("31", PROOF, None),
        ("12", "theorem t : x = 312 := rfl", None),
        ("12", "theorem t : x = 123 := rfl", None),
        ("12", "theorem t : y = 12.5 := rfl", None),
        ("12", "theorem t : y = 0.12 := rfl", None),
        ("12", "theorem t : x12 = 5 := rfl", None),
        ("12", "theorem t : a_12 = 5 := rfl", None),
        ("12.5", "theorem t : y = 12.5 := by norm_num", "12.5"),
        ("x + 1", "theorem t (x : ℤ) : x+1 = 1 + x := by ring", "x+1"),
        ("x+1", "theorem t (x : ℤ) : 1 + x = x  +\n  1 := by ring", "x  +\n  1"),
        ("a b", "theorem t : ab = 1 := rfl", None),
        ("-3", "theorem t : (5 : ℤ)-3 = 2 := rfl", None),
        ("-3", "theorem t : (y : ℤ) = -3 := rfl", "-3"),
        ("(-3)", "theorem t : f (-3) = 9 := rfl", "(-3)"),
        ("1/2", "theorem t : (1 / 2 : ℚ) = 0.5 := by norm_num", "1 / 2"),
        ("Even n", "theorem t (n : ℤ) (h : Even n) : Even (n + 2) := by simpa", "Even n"),
        ("  12  ", PROOF, "12"),
        ("", PROOF, None),
        ("   ", PROOF, None),
        ("42", "theorem t : True := trivial -- the answer is 42", None),
        ("42", "/- 42 -/ theorem t : True := trivial", None),
        ("42", 'def s : String := "42"', None),
    ],
)
def test_literal_span(answer: str, proof: str, expected: str | None) -> None:
    assert found(answer, proof) == expected


@pytest.mark.parametrize(
    ("proof", "window", "expected"),
    [
        ("#eval 42", 80, None),
        ("#reduce (40 + 2 : Nat)", 0, None),
        ("#check (42 : Nat)", 0, None),
        ("theorem t : (42 : ℤ) = 42 := rfl  #print axioms t", 0, None),  # same line
        ("theorem t : (42 : ℤ) = 42 := rfl\n#print axioms t", 80, None),  # next line, within the window
        ("theorem t : (42 : ℤ) = 42 := rfl\n#print axioms t", 0, "42"),  # next line, window 0
        ("#eval\n  (42 : Nat)", 80, None),  # a command written over two lines
        ("#eval 42" + FAR + "theorem t : (42 : ℤ) = 6 * 7 := by norm_num", 80, "42"),
    ],
)
def test_commands_nearby(proof: str, window: int, expected: str | None) -> None:
    assert found("42", proof, window) == expected


def test_first_acceptable_occurrence_is_returned() -> None:
    proof = "#eval 42" + FAR + "theorem t : (42 : ℤ) = 6 * 7 := by norm_num"
    start, end = literal_span("42", proof)  # type: ignore[misc]
    assert proof[start:end] == "42" and start == proof.index("(42") + 1


def test_bounded_answers() -> None:
    assert literal_span("1" * (MAX_ANSWER_CHARS + 1), PROOF) is None
    assert literal_span(" + ".join(["x"] * 400), PROOF) is None
