"""Adapters: one table test per public format, on hand-written fixtures of the same shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from faithsieve.datasets.adapters import (
    adapter_names,
    get_adapter,
    group_marked_steps,
    load_dataset,
    strip_number_prefix,
    strip_step_marker,
)

# (fixture dir, adapter, [(id, label, n_steps, first step, last step)], {excluded reason: count})
CASES = [
    ("processbench", "processbench",
     [("gsm8k-0", "correct", 3, "Tom starts with 3 apples.", "The answer is 7."),
      ("gsm8k-1", 2, 3, "Each pen costs $2.", "The answer is 12."),
      ("gsm8k-2", 3, 3, "She reads 10 * 3 = 30 pages in 3 days.", "In total 30 + 5 = 36 pages.")], {}),
    ("bigbench-mistake", "bigbench-mistake",
     [("multistep_arithmetic-0", "correct", 3, 'This equation can be written as "A * B", where A = (2 + 3) and B = 4.',
       "Then, the final equation is A * B = 5 * 4 = 20. So the answer is 20"),
      ("multistep_arithmetic-1", 2, 3, 'This equation can be written as "A * B", where A = (6 - 1) and B = 2.',
       "Then, the final equation is A * B = 4 * 2 = 8. So the answer is 8")], {}),
    ("mr-ben", "mr-ben",
     [("q-1-Claude2", "correct", 2, "Multiplication comes first: 2 * 3 = 6.", "Then 2 + 6 = 8."),
      ("q-1-GPT3.5", 1, 3, "Let's think step by step.\nWork left to right.", "The value is 12.")],
     {"label is ambiguous: the step numbering repeats": 1}),
    ("mr-math", "mr-math",
     [("invalid-0", "correct", 3, "We have $3^2 = 9$.", "So the sum is $25$."),
      ("invalid-1", 2, 2, "Write it as a product.\n$2^5 = 2 \\cdot 2^4$", "Then $2^4 = 8$, so $2^5 = 16 \\cdot 2 = 32$."),
      ("redundant-0", "correct", 3, "10% means one tenth.", "Also, 50 is an even number."),
      ("perturbation-0", 1, 2, "6 * 7 = 48.", "# Answer\n\n48")],
     {"perturbation 'swap steps' has no first-error step": 1}),
    ("mathcheck-gsm", "mathcheck-gsm",
     [("mathcheck-3", 2, 3, "Ann starts with 5 pens.", "So 4 pens remain."),
      ("mathcheck-7", 2, 3, "Ann has 5 pens.", "None are left.")],
     {"task_type 'solving' has no step labels": 1}),
    ("parc", "parc",
     [("gsm8k_negatives-0", 2, 3, "Two books cost 2 * 8 = 16 dollars.", "The total is 20 dollars."),
      ("gsm8k_negatives-1", "correct", 2, "9 - 4 = 5.", "So the answer is 5.")], {}),
    ("prmbench-preview", "prmbench",
     [("circular:prm_test_p1_0", 2, 4, "Assume the answer is 15.", "# Answer\n\n15")],
     {"label points past the last step": 1}),
    ("proofloc-native", "proofloc-native",
     [("Algebra001", "correct", 2, "Two plus two is 2 + 2 = 4.", "Hence the claim."),
      ("Algebra002", 2, 3, "3 * 4 = 12.", "So the value is 14."),
      ("RealAnalysis007", 1, 1, "A square of a real number is nonnegative.", "A square of a real number is nonnegative.")],
     {}),
    ("mr-gsm8k-partial", "mr-gsm8k",
     [("u-1", 2, 2, "Bob runs 3 km each day.", "In 4 days he runs 3 + 4 = 7 km."),
      ("u-2", 1, 2, "3 boxes hold 6 * 3 = 24 eggs.", "The answer is 24.")],
     {"duplicate of an earlier item with the same id": 1}),
    ("localize", "localize",
     [("a_steps", 1, 2, "She buys 4 more: 3 + 4 = 8.", "So she has 8 apples."),
      ("b_proof", "correct", 2, "6 * 7 = 42.", "The answer is 42.")], {}),
    ("gsm8k", "gsm8k",  # reference solutions: calculator annotations removed, '#### N' as the answer line
     [("gsm8k-train-0", "correct", 2, "He has 3 + 4 = 7 apples.", "The answer is 7."),
      ("gsm8k-train-1", "correct", 3, "One pen costs $2.", "The answer is 12.")], {}),
    ("reference-solutions", "reference-solution",  # paragraphs as steps, as localize splits a proof text
     [("math500-0", "correct", 2, "Multiplication comes first: $3 \\cdot 4 = 12$.", "Then $2 + 12 = \\boxed{14}$."),
      ("math500-1", "correct", 1, "We have $7^2 = \\boxed{49}$.", "We have $7^2 = \\boxed{49}$.")], {}),
]


@pytest.mark.parametrize(("folder", "name", "expected", "excluded"), CASES, ids=[c[0] for c in CASES])
def test_adapter_table(fixtures: Path, folder: str, name: str, expected: list, excluded: dict) -> None:
    data = load_dataset(fixtures / folder)
    assert data.bad == [] or folder == "proofloc-native"
    assert set(data.formats.values()) == {name}
    got = [(i.id, i.label, len(i.steps), i.steps[0], i.steps[-1]) for i in data.items]
    assert got == expected
    assert data.excluded_counts() == excluded


@pytest.mark.parametrize(("folder", "name", "expected", "excluded"), CASES, ids=[c[0] for c in CASES])
def test_forced_format_matches_detection(fixtures: Path, folder: str, name: str, expected: list, excluded: dict) -> None:
    data = load_dataset(fixtures / folder, format=name)
    assert [i.id for i in data.items] == [e[0] for e in expected]


def test_every_format_has_a_fixture_and_detection_is_unambiguous(fixtures: Path) -> None:
    names = {c[1] for c in CASES} | {"proofloc"}
    assert names == set(adapter_names())
    # each fixture's first record is claimed by exactly one adapter
    from faithsieve.datasets.adapters import read_records

    for folder, name, _, _ in CASES:
        for file in sorted((fixtures / folder).rglob("*.json*")):
            rec = next(r for r in read_records(file) if not hasattr(r, "reason"))
            claims = [a for a in adapter_names() if get_adapter(a).detects(rec[2])]
            assert claims == [name], (file, claims)


def test_subsets_and_sources(fixtures: Path) -> None:
    pb = load_dataset(fixtures / "processbench" / "gsm8k.json").items
    assert {i.subset for i in pb} == {"gsm8k"} and {i.source for i in pb} == {"processbench"}
    mc = load_dataset(fixtures / "mathcheck-gsm").items
    assert [i.subset for i in mc] == ["seed_question", "distractor_insertion_question"]
    assert mc[0].meta["answer_line"] == "The answer is 4."
    mb = load_dataset(fixtures / "mr-ben").items
    assert mb[0].meta["answer_line"] == "Solution: Choice_B" and "B: 8" in mb[0].problem


def test_wrong_forced_format_gives_bad_records(fixtures: Path) -> None:
    data = load_dataset(fixtures / "processbench", format="bigbench-mistake")
    assert data.items == [] and len(data.bad) == 3
    assert all(b.reason == "missing field(s) input, mistake_index of format 'bigbench-mistake'" for b in data.bad)


def test_unknown_format_name() -> None:
    with pytest.raises(ValueError, match="unknown format 'nope'; known formats: proofloc, processbench"):
        get_adapter("nope")


def test_undetectable_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "x.jsonl").write_text(json.dumps({"question": "q", "foo": 1}) + "\n")
    data = load_dataset(tmp_path)
    assert data.items == [] and len(data.bad) == 1
    assert "cannot detect the format" in data.bad[0].reason and data.bad[0].location == "line 1"


def test_malformed_records_carry_locations(tmp_path: Path) -> None:
    recs = [
        {"id": "a", "generator": "g", "problem": "p", "steps": ["s"], "final_answer_correct": True, "label": 1},
        {"id": "b", "generator": "g", "problem": "p", "steps": ["s"], "final_answer_correct": True, "label": "0"},
        {"id": "c", "generator": "g", "problem": "p", "steps": ["s", "t"], "final_answer_correct": True, "label": 1},
        {"id": "c", "generator": "g", "problem": "p", "steps": ["s", "u"], "final_answer_correct": True, "label": 1},
    ]
    (tmp_path / "pb.json").write_text(json.dumps(recs))
    data = load_dataset(tmp_path / "pb.json")
    assert [i.id for i in data.items] == ["c"]
    assert [(b.location, b.reason.split(" (")[0]) for b in data.bad] == [
        ("index 0", "label 1 is outside -1..0"),
        ("index 1", "label must be an integer, got '0'"),
        ("index 3", "duplicate id 'c' with different content"),
    ]


def test_missing_path() -> None:
    with pytest.raises(FileNotFoundError):
        load_dataset("/nonexistent/file.jsonl")


@pytest.mark.parametrize(
    ("text", "out"),
    [("Step 3: Add.", "Add."), ("**Step 2:** Sub.", "Sub."), ("step 1. x", "x"), ("Step 6.1: sub", "Step 6.1: sub"),
     ("Step 7_A: c", "Step 7_A: c"), ("Steps are fun", "Steps are fun"), ("tep 1: typo", "typo")],
)
def test_strip_step_marker(text: str, out: str) -> None:
    assert strip_step_marker(text) == out


@pytest.mark.parametrize(("text", "k", "out"), [("3. Add.", 3, "Add."), ("3. Add.", 2, "3. Add."), ("3.5 is half", 3, "3.5 is half")])
def test_strip_number_prefix(text: str, k: int, out: str) -> None:
    assert strip_number_prefix(text, k) == out


def test_group_marked_steps() -> None:
    g = group_marked_steps(["intro", "Step 1: a", "more a", "Step 3: c", "Solution: Choice_A"],
                           trailer=__import__("re").compile("^Solution:"))
    assert g.steps == ["intro\na\nmore a", "c"] and g.numbers == [1, 3] and g.trailer == "Solution: Choice_A"
    assert g.position_of(3) == 2
    g2 = group_marked_steps(["lost marker", "Step 2: b"])
    assert g2.steps == ["lost marker", "b"] and g2.numbers == [1, 2]


# --- the real files, when ../shared is present --------------------------------------------

REAL = [
    ("processbench", 1400, 0, {}),
    ("bigbench-mistake/multistep_arithmetic.jsonl", 300, 0, {}),
    ("mr-ben", 2430, 0, {"label is ambiguous: the step numbering repeats": 3}),
    ("mathcheck-gsm", 515, 0, None),
    ("parc", 753, 0, {}),
    ("prmbench-preview", 2805, 0, {"label points past the last step": 43}),
    ("mr-gsm8k-partial", 590, 0, {"duplicate of an earlier item with the same id": 261}),
    ("mr-math", 787, 0, None),
]


@pytest.mark.parametrize(("rel", "n", "n_bad", "excluded"), REAL, ids=[r[0] for r in REAL])
def test_real_raw_datasets(shared_raw: Path, rel: str, n: int, n_bad: int, excluded: dict | None) -> None:
    data = load_dataset(shared_raw / rel)
    assert len(data.items) == n and len(data.bad) == n_bad, [str(b) for b in data.bad[:3]]
    if excluded is not None:
        assert data.excluded_counts() == excluded


def test_real_processbench_labels(shared_raw: Path) -> None:
    raw = json.loads((shared_raw / "processbench" / "gsm8k.json").read_text())
    items = load_dataset(shared_raw / "processbench" / "gsm8k.json").items
    assert sum(i.label == "correct" for i in items) == 193
    for r, i in zip(raw, items, strict=False):
        assert i.id == r["id"] and list(i.steps) == r["steps"]
        assert i.label == ("correct" if r["label"] == -1 else r["label"] + 1)


def test_native_proofloc_labels_and_subjects(fixtures: Path) -> None:
    """ProofLoc as published: "correct" or a 1-based step number written as a string; the subject
    is the id's prefix; an out-of-range or wordy label is a bad record, never guessed."""
    data = load_dataset(fixtures / "proofloc-native")
    assert [i.subset for i in data.items] == ["Algebra", "Algebra", "RealAnalysis"]
    assert [b.location for b in data.bad] == ["line 4", "line 5"]
    assert "outside 1..2" in data.bad[0].reason and "'second'" in data.bad[1].reason


def test_native_proofloc_university_reads_as_published(shared_raw: Path) -> None:
    data = load_dataset(shared_raw / "proofloc-university" / "data" / "test.jsonl")
    assert data.bad == [] and len(data.items) == 200
    assert sum(i.label == "correct" for i in data.items) == 130
    assert {i.subset for i in data.items} == {"Topology", "LinearAlgebra", "AbstractAlgebra", "RealAnalysis",
                                              "ConvexAnalysis", "ConvexOptimization"}
