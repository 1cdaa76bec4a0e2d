"""Error injection (faithsieve.datasets.inject), `faithsieve inject`, and proofloc-mini."""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
from faithsieve.datasets.inject import (
    MUTATIONS,
    ArithError,
    evaluate,
    find_chains,
    format_number,
    get_mutation,
    gsm8k_steps,
    inject_items,
    inject_solution,
    is_eligible,
)
from faithsieve.datasets.injection import mutations as mutations_module

from faithsieve.cli import inject as cli_inject

REPO = Path(__file__).resolve().parents[2]
SHARED_GSM8K = REPO.parent / "shared" / "datasets" / "raw" / "gsm8k"
MINI = REPO / "datasets" / "proofloc-mini" / "proofloc-mini.jsonl"
FALSE_EQUATION = {"result_changed", "result_changed_propagated", "sign_flip_result"}

# --- hand-written GSM8K-shaped records ---------------------------------------

DUCKS = {
    "question": "Janet's ducks lay 16 eggs per day. She eats three for breakfast and bakes "
                "muffins with four. She sells the rest for $2 per egg. How much does she make "
                "every day?",
    "answer": "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\n"
              "She makes 9 * 2 = $<<9*2=18>>18 every day at the farmer's market.\n#### 18",
}
BAKER = {
    "question": "A baker makes 12 loaves in the morning, 15 at noon and 9 in the evening. He "
                "sells each loaf for $3 and pays $20 for flour. What is his profit?",
    "answer": "He makes 12 + 15 + 9 = <<12+15+9=36>>36 loaves.\n"
              "He earns 36 x 3 = $<<36*3=108>>108 from the loaves.\n"
              "His profit is $108 - $20 = $<<108-20=88>>88.\n#### 88",
}
MARBLES = {
    "question": "Tom has 15 red marbles and 8 blue marbles. How many marbles does he have?",
    "answer": "Tom has 15 + 8 = <<15+8=23>>23 marbles.\n#### 23",
}
PAINT = {
    "question": "A wall is 12 feet long and 8 feet high. One can of paint covers 32 square "
                "feet. How many cans are needed for two coats?",
    "answer": "The wall has an area of 12 * 8 = <<12*8=96>>96 square feet.\n"
              "Two coats cover 96 * 2 = <<96*2=192>>192 square feet.\n"
              "So 192 / 32 = <<192/32=6>>6 cans are needed.\n#### 6",
}
RECORDS = [DUCKS, BAKER, MARBLES, PAINT]


def _steps(rec):
    return gsm8k_steps(rec["answer"])


def _one(rec, mutation, seed=0):
    return inject_solution(rec["question"], _steps(rec), mutation, random.Random(seed))


# --- arithmetic ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("16 - 3 - 4", Fraction(9)),
        ("2 + 3 * 4", Fraction(14)),
        ("(2 + 3) * 4", Fraction(20)),
        ("3/5*700", Fraction(420)),
        ("80,000*1.5", Fraction(120000)),
        ("$3 x 5", Fraction(15)),
        ("-3 + 5", Fraction(2)),
        ("50 * 20%", Fraction(10)),
        (".75 * 4", Fraction(3)),
        ("10 / 4", Fraction(5, 2)),
        ("12 \u00f7 4 \u00d7 3", Fraction(9)),
        ("22 \u2013 7", Fraction(15)),
    ],
)
def test_evaluate_table(text, value):
    assert evaluate(text) == value


@pytest.mark.parametrize(
    "text",
    ["", "3 +", "(3 + 4", "3 + 4)", "5 / 0", "__import__('os')", "2 ** 3", "x + 1", "3 4"],
)
def test_evaluate_rejects(text):
    with pytest.raises(ArithError):
        evaluate(text)


def test_evaluate_deep_nesting_is_bounded():
    with pytest.raises(ArithError):
        evaluate("(" * 500 + "1" + ")" * 500)


@pytest.mark.parametrize(
    ("text", "statuses"),
    [
        ("Janet sells 16 - 3 - 4 = 9 duck eggs a day.", ["verified"]),
        ("She makes 9 * 2 = $18 every day.", ["verified"]),
        ("Mary is 25 \u2013 2 = 22 years old.", ["false"]),
        ("Artie sells 12 marigolds x $3 = $36", ["unparsed"]),
        ("Let x be the price. 3x + 4 = 10", ["unparsed"]),
        ("Total: x+4x-13+4x-8=339", ["unparsed"]),
        ("So x = 30/3 = 10", ["verified"]),
        ("The oven is off by 4% because 18 / 450 x 100 = 4%", ["verified"]),
        ("(so 3+4=7) and then 7*2 = 14.", ["verified", "verified"]),
        ("He has 3 apples and 4 pears.", []),
        ("2 * 3 = 6 = 7", ["false"]),
    ],
)
def test_find_chains_table(text, statuses):
    assert [c.status for c in find_chains(text)] == statuses


def test_format_number_keeps_style():
    assert format_number(Fraction(129999), "130,000") == "129,999"
    assert format_number(Fraction(6), "5.50") == "6.00"
    assert format_number(Fraction(6), "5") == "6"
    assert format_number(Fraction(13, 2), "5.50") == "6.50"
    assert format_number(Fraction(1, 3)) is None
    assert format_number(Fraction(-5, 4)) == "-1.25"


def test_gsm8k_steps_strips_annotations_and_answer_line():
    assert _steps(DUCKS) == [
        "Janet sells 16 - 3 - 4 = 9 duck eggs a day.",
        "She makes 9 * 2 = $18 every day at the farmer's market.",
        "The answer is 18.",
    ]
    with pytest.raises(ValueError):
        gsm8k_steps("no answer line")


# --- mutations -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rec", "mutation", "labels"),
    [
        (MARBLES, "result_changed", {1}),
        (MARBLES, "result_changed_propagated", {1}),
        (MARBLES, "sign_flip", {1}),
        (MARBLES, "sign_flip_result", {1}),
        (MARBLES, "swapped_operand", {1}),
        (MARBLES, "wrong_substitution", None),  # nothing established before step 1
        (MARBLES, "dropped_term", None),  # a two-term sum has no term to drop
        (DUCKS, "sign_flip", {1}),
        (DUCKS, "sign_flip_result", {1}),
        (DUCKS, "dropped_term", {1}),
        (DUCKS, "wrong_substitution", {2}),
        (DUCKS, "result_changed", {1, 2}),
        (DUCKS, "swapped_operand", {1, 2}),
        (BAKER, "dropped_term", {1}),
        (BAKER, "sign_flip", {1, 3}),
        (BAKER, "wrong_substitution", {2, 3}),
        (PAINT, "sign_flip", None),  # no + or - anywhere
        (PAINT, "wrong_substitution", {2, 3}),
        (PAINT, "result_changed_propagated", {1, 2, 3}),
    ],
)
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_mutation_label_table(rec, mutation, labels, seed):
    v = _one(rec, mutation, seed)
    if labels is None:
        assert v is None
        return
    assert v is not None
    assert v.label in labels
    original = _steps(rec)
    # the label is the first step that differs, and everything before it is unchanged
    first_diff = next(i for i, (a, b) in enumerate(zip(original, v.steps, strict=False)) if a != b) + 1
    assert v.label == first_diff
    assert v.steps[: v.label - 1] == original[: v.label - 1]
    assert len(v.steps) == len(original)


@pytest.mark.parametrize("mutation", MUTATIONS)
@pytest.mark.parametrize("rec", RECORDS, ids=lambda r: r["answer"][:12])
@pytest.mark.parametrize("seed", range(6))
def test_mutated_equation_contract(mutation, rec, seed):
    v = _one(rec, mutation, seed)
    if v is None:
        return
    original = _steps(rec)
    k = v.label
    lhs, rhs = v.mutated_equation.rsplit("=", 1)
    lhs_value, rhs_value = evaluate(lhs), evaluate(rhs)
    orig_lhs, orig_rhs = v.original_equation.rsplit("=", 1)
    assert evaluate(orig_lhs) == evaluate(orig_rhs)  # the original was right
    assert v.mutated_equation in v.steps[k - 1]
    if mutation in FALSE_EQUATION:
        assert lhs_value != rhs_value, "the mutated equation must be really false"
    else:
        # a true equation with a wrong operation or quantity: its result changed
        assert lhs_value == rhs_value
        assert rhs_value != evaluate(orig_rhs)
    if mutation == "result_changed":
        assert v.steps[k:] == original[k:]
    else:
        # propagated: everything after the error is consistent with the wrong value
        assert is_eligible(v.steps[k:])
        assert v.steps[-1] != original[-1]


def test_result_changed_propagated_carries_value_to_the_answer():
    v = _one(DUCKS, "result_changed_propagated", seed=0)
    assert v is not None
    wrong = evaluate(v.mutated_equation.rsplit("=", 1)[1])
    if v.label == 1:
        assert v.steps[1] == f"She makes {format_number(wrong)} * 2 = ${format_number(wrong * 2)} " \
                             "every day at the farmer's market."
        assert v.steps[2] == f"The answer is {format_number(wrong * 2)}."
    else:
        assert v.steps[2] == f"The answer is {format_number(wrong)}."


def test_false_solution_is_not_used():
    bad = {"question": "Q with 3 and 4", "answer": "So 3 + 4 = <<3+4=8>>8 things.\n"
                                                   "Then 8 * 2 = <<8*2=16>>16.\n#### 16"}
    assert not is_eligible(_steps(bad))
    assert inject_items([bad], seed=0, per_item=3, include_correct=True) == []


# --- inject_items ----------------------------------------------------------------


def test_inject_items_form_and_meta():
    items = inject_items(RECORDS, seed=5, per_item=2, include_correct=True, split="test")
    assert items == json.loads(json.dumps(items))  # plain JSON
    ids = [it["id"] for it in items]
    assert len(ids) == len(set(ids))
    assert sum(it["label"] == "correct" for it in items) == len(RECORDS)
    for it in items:
        assert set(it) == {"id", "problem", "steps", "label", "domain", "source", "meta"}
        assert it["domain"] == "gsm8k"
        meta = it["meta"]
        assert meta["split"] == "test" and meta["seed"] == 5 and meta["reason"]
        if it["label"] == "correct":
            assert it["source"] == f"gsm8k-test-{meta['gsm8k_index']}"
            continue
        k = it["label"]
        assert 1 <= k < len(it["steps"])
        assert it["source"] == f"gsm8k-test-{meta['gsm8k_index']}-inject-{meta['mutation']}"
        assert meta["step"] == k
        assert meta["mutated"] == it["steps"][k - 1] != meta["original"]
        assert meta["original"] == _steps(RECORDS[meta["gsm8k_index"]])[k - 1]


def test_determinism_under_seed():
    a = inject_items(RECORDS, seed=11, per_item=3, include_correct=True)
    b = inject_items(RECORDS, seed=11, per_item=3, include_correct=True)
    assert a == b
    others = [inject_items(RECORDS, seed=s, per_item=3) for s in range(6)]
    assert any(o != others[0] for o in others[1:])


def test_item_variants_do_not_depend_on_other_items():
    recs = [dict(r, gsm8k_index=i, split="x") for i, r in enumerate(RECORDS)]
    alone = inject_items(recs[2:3], seed=4, per_item=2)
    together = [it for it in inject_items(recs, seed=4, per_item=2)
                if it["meta"]["gsm8k_index"] == 2]
    assert alone == together


def test_unknown_mutation_raises():
    with pytest.raises(ValueError):
        inject_items(RECORDS, mutations=["nope"])


def test_each_mutation_is_one_registered_object():
    assert len(MUTATIONS) == len(set(MUTATIONS)) == 7
    for m in MUTATIONS:
        spec = get_mutation(m)
        assert spec.name == m and spec.about
        assert spec.visibility == ("arithmetic" if m in FALSE_EQUATION else "formula")
        assert spec.propagated == (m != "result_changed")
    with pytest.raises(ValueError, match="unknown mutation 'nope'; known: result_changed, "):
        get_mutation("nope")
    with pytest.raises(ValueError, match="unknown mutation 'nope'"):
        inject_solution("q", ["a", "b"], "nope", random.Random(0))


def test_registering_a_mutation_twice_or_with_an_unknown_visibility_fails():
    spec = get_mutation("sign_flip")
    with pytest.raises(ValueError, match="registered twice"):
        mutations_module._register(spec)
    with pytest.raises(ValueError, match="unknown visibility"):
        mutations_module._register(dataclasses.replace(spec, name="new_one", visibility="verbal"))
    assert "new_one" not in mutations_module._REGISTRY


def test_item_meta_comes_from_its_mutation():
    """Visibility and reason are the registered mutation's; the reason names the step, the
    mutated equation and the correct result, with every template field filled."""
    items = inject_items(RECORDS, seed=3, per_item=len(MUTATIONS))
    assert {it["meta"]["mutation"] for it in items} == set(MUTATIONS)
    for it in items:
        meta = it["meta"]
        spec = get_mutation(meta["mutation"])
        assert meta["visibility"] == spec.visibility
        assert meta["propagated"] is spec.propagated
        reason = meta["reason"]
        assert reason.startswith(f"Step {it['label']}: {meta['mutated_equation']} ")
        assert f"{meta['correct_value']})." in reason
        assert "{" not in reason and "}" not in reason


# --- CLI -------------------------------------------------------------------------


def _cli(argv):
    parser = argparse.ArgumentParser(prog="faithsieve")
    cli_inject.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_writes_jsonl(tmp_path, capsys):
    src = tmp_path / "test.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    out = tmp_path / "out" / "inj.jsonl"
    argv = ["inject", str(src), "--out", str(out), "--seed", "3", "--include-correct",
            "--mutations", "result_changed,sign_flip", "--limit", "3"]
    assert _cli(argv) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {r["meta"]["gsm8k_index"] for r in rows} <= {0, 1, 2}
    assert {r["meta"]["mutation"] for r in rows} <= {None, "result_changed", "sign_flip"}
    assert all(r["id"].startswith("gsm8k-test-") for r in rows)
    assert sorted(p.name for p in out.parent.iterdir()) == ["inj.jsonl"]  # no temp left
    first = out.read_bytes()
    assert _cli(argv) == 0
    assert out.read_bytes() == first
    assert "wrote" in capsys.readouterr().err


def test_cli_split_and_per_item(tmp_path):
    """docs/score.md's inject options: --split names the ids (default: the file's stem) and
    --per-item makes up to N variants per record, each a different mutation."""
    src = tmp_path / "dev.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    out = tmp_path / "a.jsonl"
    assert _cli(["inject", str(src), "--out", str(out), "--per-item", "3"]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows and all(r["id"].startswith("gsm8k-dev-") and r["meta"]["split"] == "dev" for r in rows)
    per_record = Counter(r["meta"]["gsm8k_index"] for r in rows)
    assert max(per_record.values()) == 3
    for index in per_record:
        mutations = [r["meta"]["mutation"] for r in rows if r["meta"]["gsm8k_index"] == index]
        assert len(mutations) == len(set(mutations))
    assert _cli(["inject", str(src), "--out", str(out), "--split", "train"]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows and all(r["id"].startswith("gsm8k-train-") and r["meta"]["split"] == "train" for r in rows)
    assert max(Counter(r["meta"]["gsm8k_index"] for r in rows).values()) == 1


def test_cli_errors(tmp_path, capsys):
    src = tmp_path / "g.jsonl"
    src.write_text(json.dumps(DUCKS) + "\n{not json\n" + json.dumps({"q": 1}) + "\n",
                   encoding="utf-8")
    out = tmp_path / "o.jsonl"
    assert _cli(["inject", str(src), "--out", str(out)]) == cli_inject.EXIT_INPUT
    err = capsys.readouterr().err
    assert ":2:" in err and ":3:" in err
    assert not out.exists()
    assert _cli(["inject", str(src), "--out", str(out), "--mutations", "bogus"]) == \
        cli_inject.EXIT_USAGE
    assert _cli(["inject", str(tmp_path / "missing.jsonl"), "--out", str(out)]) == \
        cli_inject.EXIT_INPUT


# --- real GSM8K (skipped without ../shared) ------------------------------------------


@pytest.mark.skipif(not (SHARED_GSM8K / "test.jsonl").is_file(),
                    reason="../shared/datasets/raw/gsm8k is absent")
def test_real_gsm8k_sample_contract():
    lines = (SHARED_GSM8K / "test.jsonl").read_text(encoding="utf-8").splitlines()[:150]
    recs = [dict(json.loads(line), gsm8k_index=i, split="test") for i, line in enumerate(lines)]
    items = inject_items(recs, seed=0, per_item=len(MUTATIONS))
    counts = Counter(it["meta"]["mutation"] for it in items)
    assert set(counts) == set(MUTATIONS)
    for it in items:
        original = gsm8k_steps(recs[it["meta"]["gsm8k_index"]]["answer"])
        k = it["label"]
        assert it["steps"][: k - 1] == original[: k - 1]
        assert it["steps"][k - 1] != original[k - 1]
        lhs, rhs = it["meta"]["mutated_equation"].rsplit("=", 1)
        assert (evaluate(lhs) != evaluate(rhs)) == (it["meta"]["mutation"] in FALSE_EQUATION)


# --- proofloc-mini ---------------------------------------------------------------------


def _build_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("proofloc_mini_build", REPO / "datasets" / "builders" / "proofloc-mini" / "build.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def _mini_items():
    rows = []
    for lineno, line in enumerate(MINI.read_text(encoding="utf-8").splitlines(), start=1):
        assert line.strip(), f"blank line {lineno}"
        rows.append(json.loads(line))
    return rows


def test_proofloc_mini_validates():
    items = _mini_items()
    assert len(items) >= 150
    ids = [it["id"] for it in items]
    assert len(ids) == len(set(ids))
    n_correct = 0
    for it in items:
        assert set(it) == {"id", "problem", "steps", "label", "domain", "source", "meta"}, it["id"]
        assert isinstance(it["problem"], str) and it["problem"].strip()
        assert isinstance(it["steps"], list) and it["steps"]
        assert all(isinstance(s, str) and s.strip() for s in it["steps"])
        label = it["label"]
        if label == "correct":
            n_correct += 1
        else:
            assert type(label) is int and 1 <= label <= len(it["steps"]), it["id"]
            assert it["meta"].get("visibility") in {"formula", "verbal", "arithmetic"}, it["id"]
        reason = it["meta"].get("reason")
        assert isinstance(reason, str) and reason.strip() and "\n" not in reason, it["id"]
        assert it["meta"].get("subset") in {"handwritten", "injected"}
        assert it["domain"] in {"gsm8k", "word_problem", "algebra", "number_theory", "inequality"}
    assert 0.30 <= n_correct / len(items) <= 0.50
    domains = Counter(it["domain"] for it in items)
    assert set(domains) == {"gsm8k", "word_problem", "algebra", "number_theory", "inequality"}
    hand = [it for it in items if it["meta"]["subset"] == "handwritten"]
    assert 0.4 <= len(hand) / len(items) <= 0.6
    assert sum(it["meta"].get("visibility") == "verbal" for it in items) >= 5


def test_proofloc_mini_handwritten_part_is_verified_and_merged():
    build = _build_module()
    hand = build.load_handwritten()
    assert build.verify_handwritten(hand) == []
    merged = [it for it in _mini_items() if it["meta"]["subset"] == "handwritten"]
    expected = [dict(it, meta={**it["meta"], "subset": "handwritten"}) for it in hand]
    assert merged == expected


def test_proofloc_mini_checker_catches_errors():
    build = _build_module()
    assert build.arithmetic_problems(r"So \( \frac{3}{4} \cdot 20 = 15 \) and 2^{10} = 1024.") == []
    assert build.arithmetic_problems(r"\( \frac{75}{7} \approx 10.71 \)".replace(r"\approx", "\u2248")) == []
    assert build.arithmetic_problems("\u221a2 \u2248 1.41, and 75/7 \u2248 10.8") != []
    assert build.arithmetic_problems("Then 7 \u00b7 8 = 54.") != []
    assert build.check_fact("(x + 1)**2 == x**2 + 2*x + 1")
    assert not build.check_fact("(x + 1)**2 == x**2 + 1")
    assert build.check_fact("forall n in -20..20: Mod(n**3 - n, 3) == 0")
    bad = {"id": "t", "problem": "p", "steps": ["3 + 4 = 8", "so 8"], "label": "correct",
           "domain": "algebra", "source": "s", "meta": {"reason": "r"}}
    assert build.item_problems(bad)
    assert build.item_problems(dict(bad, label=1)) == ["error items need meta.visibility "
                                                       "(formula, verbal or arithmetic)"]
    # a false equation before the labelled step means the label is not the first error
    assert build.item_problems(dict(bad, label=2, meta={"reason": "r", "visibility": "verbal"}))


@pytest.mark.skipif(not (SHARED_GSM8K / "train.jsonl").is_file(),
                    reason="../shared/datasets/raw/gsm8k is absent")
def test_proofloc_mini_injected_part():
    lines = (SHARED_GSM8K / "train.jsonl").read_text(encoding="utf-8").splitlines()
    injected = [it for it in _mini_items() if it["meta"]["subset"] == "injected"]
    assert injected
    for it in injected:
        meta = it["meta"]
        original = gsm8k_steps(json.loads(lines[meta["gsm8k_index"]])["answer"])
        assert meta["split"] == "train" and isinstance(meta["seed"], int)
        if it["label"] == "correct":
            assert it["steps"] == original
            continue
        k = it["label"]
        assert it["steps"][: k - 1] == original[: k - 1]
        assert it["steps"][k - 1] != original[k - 1]
        lhs, rhs = meta["mutated_equation"].rsplit("=", 1)
        assert (evaluate(lhs) != evaluate(rhs)) == (meta["mutation"] in FALSE_EQUATION)


def test_proofloc_mini_readme_figures_are_the_files():
    """datasets/proofloc-mini/README.md: the domain table, first-error positions, visibility
    counts, the two parts' sizes, the injected mutations and the seed are those of the file."""
    import re

    readme = (MINI.parent / "README.md").read_text(encoding="utf-8")
    flat = " ".join(readme.split())
    items = _mini_items()
    errors = [it for it in items if it["label"] != "correct"]
    assert f"{len(items)} items in ProofLoc JSONL" in flat
    rows = re.findall(r"^\| \**(\w+)\**[^|]*\| \**(\d+)[^|]*\| \**(\d+)\** \| \**(\d+)\** \|$", readme, re.M)
    assert len(rows) == 6
    for name, correct, error, total in rows:
        group = items if name == "all" else [it for it in items if it["domain"] == name]
        n_correct = sum(it["label"] == "correct" for it in group)
        assert (n_correct, len(group) - n_correct, len(group)) == (int(correct), int(error), int(total)), name
    positions = Counter(min(it["label"], 6) for it in errors)
    written = re.search(r"First-error positions: (.*?)\.", flat).group(1)
    assert written == ", ".join(f"step {k}: {positions[k]}" for k in range(1, 6)) + f", steps 6–7: {positions[6]}"
    assert max(it["label"] for it in errors) == 7
    vis = Counter(it["meta"]["visibility"] for it in errors)
    assert f"Visibility of the {len(errors)} errors: {vis['arithmetic']} arithmetic, {vis['formula']} formula, " \
           f"{vis['verbal']} verbal." in flat
    hand = [it for it in items if it["meta"]["subset"] == "handwritten"]
    assert f"`datasets/builders/proofloc-mini/handwritten.jsonl.txt`, {len(hand)} items" in flat
    injected = [it for it in items if it["meta"]["subset"] == "injected"]
    kept = sum(it["label"] == "correct" for it in injected)
    assert f"({len(injected)} items from GSM8K `train`" in flat
    assert f"{kept} reference solutions kept as they are and {len(injected) - kept} with one injected error" in flat
    assert {it["meta"]["seed"] for it in injected} == {int(re.search(r"seed `(\d+)`", flat).group(1))}
    muts = Counter(it["meta"]["mutation"] for it in injected if it["label"] != "correct")
    assert f"(`result_changed` {muts['result_changed']}, and 7 each of " in flat
    assert {m for m in muts if m != "result_changed"} == set(MUTATIONS) - {"result_changed"}
    assert {muts[m] for m in muts if m != "result_changed"} == {7}
    assert all(3 <= len(it["steps"]) <= 8 for it in injected)  # "with 3 to 8 steps"


@pytest.mark.skipif(not (SHARED_GSM8K / "train.jsonl").is_file(),
                    reason="../shared/datasets/raw/gsm8k is absent")
def test_proofloc_mini_rebuilds_identically():
    build = _build_module()
    assert build.render(build.build(SHARED_GSM8K)) == MINI.read_text(encoding="utf-8")


@pytest.mark.skipif(not (SHARED_GSM8K / "train.jsonl").is_file(),
                    reason="../shared/datasets/raw/gsm8k is absent")
def test_build_check_exits_1_when_the_file_is_stale(tmp_path, monkeypatch, capsys):
    build = _build_module()
    copy = tmp_path / "proofloc-mini.jsonl"
    copy.write_text(MINI.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(build, "OUTPUT", copy)
    assert build.main(["--check", "--gsm8k", str(SHARED_GSM8K)]) == 0
    copy.write_text(MINI.read_text(encoding="utf-8").replace('"label": 2', '"label": 3', 1), encoding="utf-8")
    assert build.main(["--check", "--gsm8k", str(SHARED_GSM8K)]) == 1
    assert "is stale" in capsys.readouterr().err
    assert build.main(["--check", "--gsm8k", str(tmp_path / "nowhere")]) == 2


# --- the arithmetic is faithsieve.mathtext's (no parser of its own) -------------------


def test_evaluation_is_mathtexts(monkeypatch):
    import faithsieve.datasets.injection.tokens as inject_mod

    from faithsieve.core.errors import ParseError

    assert not hasattr(inject_mod, "_Parser")
    calls = []
    real = inject_mod.parse_tokens

    def spy(toks, latex, imaginary=False):
        calls.append([t.value for t in toks])
        return real(toks, latex, imaginary)

    monkeypatch.setattr(inject_mod, "parse_tokens", spy)
    assert evaluate("$3 x 1,000 - 50%") == Fraction(5999, 2)
    assert calls == [["3", "*", "1,000", "-", "50", "%"]]

    def broken(*a, **k):
        raise ParseError("refused by mathtext")

    monkeypatch.setattr(inject_mod, "parse_tokens", broken)
    with pytest.raises(ArithError, match="refused by mathtext"):
        evaluate("1 + 1")


@pytest.mark.parametrize(("text", "value"), [("(2 + 3)%", Fraction(1, 20)), ("--5", Fraction(5)), ("-2 * -3", Fraction(6)),
                                             ("+4 / .5", Fraction(8)), ("1,000.25 - .25", Fraction(1000))])
def test_evaluate_signs_percent_and_numbers(text, value):
    assert evaluate(text) == value


@pytest.mark.parametrize("text", ["2(3)", "(2)(3)", "2 (3)", "5 % 3", "2 ^ 3", "4!"])
def test_juxtaposition_and_other_operators_are_refused(text):
    with pytest.raises(ArithError):
        evaluate(text)
