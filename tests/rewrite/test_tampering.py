"""``rewrite --check`` against edited files: every tampering of a verified row fails, with its line and
the reason, and ``--compare`` refuses a rewrite paired with an original it was not made from."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from faithsieve.cli import main
from faithsieve.rewrite.compare import compare
from faithsieve.rewrite.offline import rewrite_item

# two items of our own: a product then a difference; a sum then a quotient (each result restated in prose)
TILES = {"question": "A builder lays 24 tiles per hour for 5 hours and then breaks 3 of them. How many whole "
                     "tiles did he lay?",
         "answer": "He lays 24 * 5 = <<24*5=120>>120 tiles.\nWithout the broken ones, 120 - 3 = <<120-3=117>>117 "
                   "are whole.\n#### 117"}
JARS = {"question": "Mia fills 18 jars on Monday and 12 jars on Tuesday, then packs them in boxes of 6 jars. "
                    "How many boxes does she fill?",
        "answer": "She fills 18 + 12 = <<18+12=30>>30 jars.\nThat is 30 / 6 = <<30/6=5>>5 boxes.\n#### 5"}

Row = dict[str, Any]


@pytest.fixture(scope="module")
def rows() -> tuple[Row, Row]:
    (tiles,), _ = rewrite_item(TILES, "shop-0", seed=0, variants=1)
    (jars,), _ = rewrite_item(JARS, "shop-1", seed=0, variants=1)
    return tiles, jars


def _bump_after_annotation(r: Row) -> None:
    m = re.search(r">>(\d+)", r["solution"])
    assert m
    r["solution"] = r["solution"][:m.start(1)] + str(int(m.group(1)) + 1) + r["solution"][m.end(1):]


def _add_sentence(text: str) -> Callable[[Row], None]:
    def edit(r: Row) -> None:
        head, _, tail = r["solution"].rpartition("####")
        r["solution"] = f"{head}{text}\n####{tail}"
    return edit


def _set(path: str, value: Any) -> Callable[[Row], None]:
    def edit(r: Row) -> None:
        *parents, last = path.split(".")
        node = r
        for p in parents:
            node = node[p]
        node[last] = value
    return edit


def _add_question_number(r: Row) -> None:  # after every listed number, so their spans still hold
    r["question"] = r["question"].replace("How many whole", "How many of the 40 whole")


def _first_sources(r: Row) -> None:
    r["graph"][0]["sources"] = list(reversed(r["graph"][0]["sources"]))


def _as_llm(r: Row) -> None:
    r["mode"] = "llm"
    r["verification"] = {"proof_checked": True, "proof": f"theorem t : x = {r['answer']}", "answer_class": "final"}


def _word(r: Row) -> None:
    r["question"] = r["question"].replace("breaks", "keeps")


def _delete(key: str) -> Callable[[Row], None]:
    return lambda r: r.pop(key)


def _bigger_answer(r: Row) -> None:
    r["answer"] = str(int(r["answer"]) + 1)


def _final_line(r: Row) -> None:
    head, _, tail = r["solution"].rpartition("#### ")
    r["solution"] = f"{head}#### {int(tail) + 1}"


def _double_space(r: Row) -> None:
    r["solution"] = r["solution"].replace(" ", "  ", 1)


# (name, edit of the TILES row, a phrase the reason must hold)
TAMPERINGS: list[tuple[str, Callable[[Row], None], str]] = [
    ("number after an annotation", _bump_after_annotation, "solution at character"),
    ("false prose equation added", _add_sentence("So 2 + 2 = 5."), "solution at character"),
    ("true sentence added", _add_sentence("Check: 2 + 2 = 4."), "annotations do not match its graph"),
    ("plain sentence added", _add_sentence("That is a lot of tiles."), "solution at character"),
    ("id is an absolute path", _set("id", "/etc/passwd"), "not original_id/v<variant>"),
    ("original_id is a relative path", lambda r: r.update(id="../../etc/passwd/v0", original_id="../../etc/passwd"),
     "reads as a path"),
    ("original_id under the home directory", lambda r: r.update(id="~root/x/v0", original_id="~root/x"),
     "reads as a path"),
    ("original_id is a drive path", lambda r: r.update(id="C:/x/v0", original_id="C:/x"), "reads as a path"),
    ("original_id names another item", _set("original_id", "shop-1"), "not original_id/v<variant>"),
    ("original.answer changed", lambda r: r["original"].update(answer="118"), "original.answer"),
    ("original solution's result changed", lambda r: r["original"].update(
        solution=r["original"]["solution"].replace("=120>>", "=121>>")), "cannot be rebuilt"),
    ("original question changed alone", lambda r: r["original"].update(
        question=r["original"]["question"].replace("breaks", "drops")), "does not name a number of the original"),
    ("verification replaced", _set("verification", {"checks": [], "well_defined": True, "feasible": True,
                                                    "answer_correct": True}), "verification.checks"),
    ("verification removed", _delete("verification"), "field 'verification' is missing"),
    ("verification detail edited", lambda r: r["verification"]["checks"][-1].update(detail="trust me"),
     "verification.checks"),
    ("answer changed", _bigger_answer, "final answer"),
    ("#### line changed", _final_line, "final answer"),
    ("a number added to the question", _add_question_number, "only the listed numbers"),
    ("an input's new value changed", lambda r: r["inputs"][0].update(new=str(int(r["inputs"][0]["new"]) + 1)),
     "only the listed numbers"),
    ("inputs emptied", _set("inputs", []), "only the listed numbers"),
    ("graph sources swapped", _first_sources, "source"),
    ("graph expression edited", lambda r: r["graph"][0].update(expression="1 + 1"), "graph"),
    ("target moved", lambda r: r.update(target=0), "final answer"),
    ("a constant added", _set("constants", [{"value": "2", "cue": "twice"}]), "constants"),
    ("readings changed", _set("readings", 3), "readings"),
    ("variant changed", _set("variant", 4), "not original_id/v<variant>"),
    ("variant is a string", _set("variant", "0"), "malformed row"),
    ("seed is a string", _set("seed", "0"), "malformed row"),
    ("mode made llm with a forged proof", _as_llm, "offline rewrite's fields"),
    ("mode renamed", _set("mode", "verified"), "mode"),
    ("a field added", _set("verified_by", "a person"), "'verified_by' is not one the rewriter writes"),
    ("a question word changed", _word, "the new question has no number at"),
    ("a space doubled in the solution", _double_space, "solution at character"),
]


def _write(path: Path, rows: list[Row]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _check(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    rc = main(["rewrite", "--check", str(path)])
    return rc, capsys.readouterr().err.splitlines()


def test_the_untouched_rows_verify(rows: tuple[Row, Row], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, err = _check(_write(tmp_path / "rw.jsonl", list(rows)), capsys)
    assert (rc, err) == (0, [])


def test_there_are_at_least_twenty_tamperings() -> None:
    assert len(TAMPERINGS) >= 20 and len({name for name, _, _ in TAMPERINGS}) == len(TAMPERINGS)


@pytest.mark.parametrize(("name", "edit", "reason"), TAMPERINGS, ids=[t[0] for t in TAMPERINGS])
def test_every_tampering_fails_with_the_line_and_the_reason(
        name: str, edit: Callable[[Row], None], reason: str, rows: tuple[Row, Row], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    tiles, jars = rows
    bad = copy.deepcopy(tiles)
    edit(bad)
    assert bad != tiles, name
    rc, err = _check(_write(tmp_path / "rw.jsonl", [jars, bad]), capsys)
    assert rc == 1
    assert len(err) == 1 and err[0].startswith("line 2 ("), err  # the good row passes, the edited one is named
    assert reason in err[0], err[0]


def test_file_level_tamperings(rows: tuple[Row, Row], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tiles, jars = rows
    rc, err = _check(_write(tmp_path / "dup.jsonl", [tiles, jars, tiles]), capsys)
    assert rc == 1 and len(err) == 1 and err[0].startswith("line 3 (") and "already on line 1" in err[0]
    # jars' row relabelled as a second variant of the tiles item: id and original_id consistent, the original not
    moved = copy.deepcopy(jars) | {"id": "shop-0/v1", "original_id": "shop-0", "variant": 1}
    rc, err = _check(_write(tmp_path / "moved.jsonl", [tiles, moved]), capsys)
    assert rc == 1 and err[0].startswith("line 2 (") and "names another original on line 1" in err[0]


def test_compare_refuses_a_rewrite_paired_with_the_wrong_original(rows: tuple[Row, Row], tmp_path: Path) -> None:
    tiles, jars = rows
    original = tmp_path / "shop.jsonl"
    original.write_text("".join(json.dumps(r | {"id": f"shop-{i}"}) + "\n" for i, r in enumerate([TILES, JARS])))
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"id": i, "response": "#### 5"}) + "\n"
                             for i in ("shop-0", "shop-1", tiles["id"], jars["id"])))
    good = _write(tmp_path / "rw.jsonl", [tiles, jars])
    assert compare(original, good, preds, bootstrap=50)["paired_items"] == 2
    swapped = _write(tmp_path / "swapped.jsonl", [tiles | {"original_id": "shop-1"}, jars])
    with pytest.raises(ValueError, match="names .*'shop-1' as its original but carries another question"):
        compare(original, swapped, preds, bootstrap=50)
