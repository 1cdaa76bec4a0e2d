"""Every remaining limit of the rewrite package, each at and just past its bound."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from faithsieve.rewrite import check as check_mod
from faithsieve.rewrite import compare as compare_mod
from faithsieve.rewrite import gsm8k
from faithsieve.rewrite.feasible import MAX_DECIMALS, MAX_FACTOR, fast_violation
from faithsieve.rewrite.gsm8k import ItemRejected, parse_item
from faithsieve.rewrite.plan import build_plan


def _plan(question: str, answer: str):  # type: ignore[no-untyped-def]
    return build_plan(parse_item({"question": question, "answer": answer}, "x"))


def test_results_may_grow_up_to_max_factor_only() -> None:
    plan = _plan("A box holds 24 cookies for 4 friends.", "24/4=<<24/4=6>>6\n#### 6")
    assert fast_violation(plan, {}, [Fraction(6 * MAX_FACTOR)], []) is None
    assert fast_violation(plan, {}, [Fraction(6 * MAX_FACTOR + 1)], []) == "magnitude"
    assert fast_violation(plan, {}, [Fraction(6, MAX_FACTOR)], []) == "integral"  # and never fractional


def test_non_whole_results_need_at_most_max_decimals() -> None:
    plan = _plan("Pens cost $2.5 each and he buys 3.", "2.5*3=<<2.5*3=7.5>>7.5\n#### 7.5")
    ok = Fraction(75 * 10 ** (MAX_DECIMALS - 1) + 1, 10 ** MAX_DECIMALS)
    assert fast_violation(plan, {}, [ok], []) is None
    assert fast_violation(plan, {}, [ok + Fraction(1, 10 ** (MAX_DECIMALS + 1))], []) == "writable"


def test_annotation_count_bound() -> None:
    line = "1+1=<<1+1=2>>2\n"
    parse_item({"question": "q 1", "answer": line * gsm8k.MAX_ANNOTATIONS + "#### 2"}, "x")
    with pytest.raises(ItemRejected, match="too_many_annotations"):
        parse_item({"question": "q 1", "answer": line * (gsm8k.MAX_ANNOTATIONS + 1) + "#### 2"}, "x")
    prose = "so 1+1=2 here\n"  # prose equations are bounded alike
    parse_item({"question": "q 1", "answer": "<<1+1=2>>2\n" + prose * gsm8k.MAX_ANNOTATIONS + "#### 2"}, "x")
    with pytest.raises(ItemRejected, match="too_many_annotations"):
        parse_item({"question": "q 1", "answer": "<<1+1=2>>2\n" + prose * (gsm8k.MAX_ANNOTATIONS + 1) + "#### 2"}, "x")


def test_text_length_bounds() -> None:
    answer = "1+1=<<1+1=2>>2\n#### 2"
    parse_item({"question": "q" * gsm8k.MAX_QUESTION_CHARS, "answer": answer}, "x")
    with pytest.raises(ItemRejected, match="too_long"):
        parse_item({"question": "q" * (gsm8k.MAX_QUESTION_CHARS + 1), "answer": answer}, "x")
    parse_item({"question": "q", "answer": " " * (gsm8k.MAX_ANSWER_CHARS - len(answer)) + answer}, "x")
    with pytest.raises(ItemRejected, match="too_long"):
        parse_item({"question": "q", "answer": " " * (gsm8k.MAX_ANSWER_CHARS + 1 - len(answer)) + answer}, "x")


def test_prediction_text_is_capped(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"id": "a", "response": "x" * (compare_mod.MAX_RESPONSE_CHARS + 50)}) + "\n")
    assert len(compare_mod.read_predictions(path)["a"]) == compare_mod.MAX_RESPONSE_CHARS


def test_check_reads_at_most_max_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "rw.jsonl"
    path.write_text("{}\n" * 3)
    monkeypatch.setattr(check_mod, "MAX_ROWS", 2)
    result = check_mod.check_file(path)
    assert result["failed"] == 3 and "more than 2 rows" in result["failures"][-1]["problems"][0]
