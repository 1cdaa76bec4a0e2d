"""``faithsieve rewrite --check FILE``: re-verify a rewritten file without trusting what it claims.

For every row, from its texts alone (the stored verification record is ignored):

1. the new question is the original question with exactly the listed numbers replaced;
2. the new numbers are read back from the new question's text;
3. every ``<<expr=result>>`` of the new solution is parsed and recomputed exactly, and must
   equal both its written result and the value its graph sources give (question numbers read in
   step 2, earlier results, constants whose cue word the question contains);
4. the final ``#### N`` and the row's ``answer`` equal the target annotation's result;
5. the original item is parsed again, its graph rebuilt, only numbers the graph allows to change
   have changed (none behind an ambiguous source), and the feasibility checks re-run at the
   new numbers: all readings agree, the constraints hold, and z3 finds the rewrite feasible with
   the answer forced.

6. the row is rebuilt from its original and its new numbers by the rewriter itself
   (``offline.variant_row``) and must equal the file's row in every field: the solution's text
   (a number after an annotation, an added sentence), the answer, the original's answer, the graph,
   the verification record; ``id`` must be ``original_id/v<variant>`` and ``original_id`` an item id,
   not a path; within a file an id appears once and an ``original_id`` names one original.

Rows of ``--mode llm`` carry no annotations; they are checked for their stored verification
record only (a kept llm row must hold a checked proof) and reported as such.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from faithsieve.datasets.injection.tokens import ArithError
from faithsieve.rewrite.arith import decimal_text, leaves, number_value
from faithsieve.rewrite.feasible import fast_violation, order_pairs, z3_verify
from faithsieve.rewrite.gsm8k import ItemRejected, cues_for, parse_item
from faithsieve.rewrite.offline import variant_row
from faithsieve.rewrite.plan import build_plan, check_readings_agree, conversion_factors
from faithsieve.rewrite.sample import substitute
from faithsieve.rewrite.sources import KIND_OF_PREFIX, Source, source_value
from faithsieve.runtime.textfile import loads_json, read_utf8

MAX_ROWS = 200_000
MAX_VARIANTS = 100
"""``--variants`` allows 1..100, so a variant index is below this."""
_NOT_AN_ID = re.compile(r"[\x00-\x1f\x7f\\]|^[/~.]|(?:^|/)\.\.(?:/|$)|^[A-Za-z]:")
"""What an item id may not hold: control characters, a backslash, a leading ``/``, ``~`` or ``.``, a ``..``
segment, a drive letter (an id that reads as a path)."""
_ABSENT = object()


class _Input(BaseModel):
    model_config = ConfigDict(extra="allow")
    literal: int = Field(ge=0, le=10_000)
    new: str = Field(max_length=40)
    original_span: tuple[int, int]
    span: tuple[int, int]


class _Original(BaseModel):
    question: str = Field(max_length=8000)
    solution: str = Field(max_length=12000)
    answer: str = Field(max_length=100)


class _Graph(BaseModel):
    model_config = ConfigDict(extra="allow")
    sources: list[str] = Field(max_length=64)


class OfflineRow(BaseModel):
    """The fields of an offline row that the check reads."""

    model_config = ConfigDict(extra="allow")
    id: str = Field(max_length=220)
    original_id: str = Field(min_length=1, max_length=200)
    variant: int = Field(ge=0, lt=MAX_VARIANTS, strict=True)
    seed: int = Field(strict=True)
    mode: str
    question: str = Field(max_length=8000)
    solution: str = Field(max_length=12000)
    answer: str = Field(max_length=100)
    original: _Original
    inputs: list[_Input] = Field(max_length=200)
    graph: list[_Graph] = Field(max_length=64)
    target: int = Field(ge=0)


def id_problem(rid: object, oid: object, variant: object) -> str | None:
    """Why a row's ``id``/``original_id``/``variant`` are not the rewriter's (``None`` when they are)."""
    if not isinstance(oid, str) or not 0 < len(oid) <= 200 or _NOT_AN_ID.search(oid):
        return f"original_id {str(oid)[:60]!r} is not an item id (empty, too long, or it reads as a path)"
    if not isinstance(variant, int) or isinstance(variant, bool) or not 0 <= variant < MAX_VARIANTS:
        return f"variant {str(variant)[:20]!r} is not a variant index (0..{MAX_VARIANTS - 1})"
    if rid != f"{oid}/v{variant}":
        return f"id {str(rid)[:80]!r} is not original_id/v<variant> ({oid[:60]}/v{variant})"
    return None


def check_row(raw: dict[str, Any]) -> list[str]:
    """Problems found in one row (empty: it verifies)."""
    try:
        row = OfflineRow.model_validate(raw)
    except ValidationError as exc:
        return [f"malformed row: {exc.error_count()} schema error(s), first at "
                f"{'.'.join(str(p) for p in exc.errors()[0]['loc'])}"]
    bad_id = id_problem(row.id, row.original_id, row.variant)
    if bad_id:
        return [bad_id]
    try:
        item = parse_item({"question": row.original.question, "answer": row.original.solution}, row.original_id)
        plan = build_plan(item)
    except ItemRejected as exc:
        return [f"the original item cannot be rebuilt: {exc.reason}"]
    lits = item.literals
    read = _new_numbers(row, lits)
    if isinstance(read, str):
        return [read]
    spans, new = read
    problems: list[str] = []
    if substitute(row.original.question, spans) != row.question:
        problems.append("the question is not the original with only the listed numbers changed")
    try:
        rewritten = parse_item({"question": row.question, "answer": row.solution}, row.id)
    except ItemRejected as exc:
        return problems + [f"the new solution does not parse or an annotation is false: {exc.reason}: {exc.detail}"]
    if len(rewritten.annotations) != len(row.graph) or len(row.graph) != len(item.annotations):
        return problems + ["the solution's annotations do not match its graph"]
    results: list[Fraction] = []
    for ann, g in zip(rewritten.annotations, row.graph, strict=False):
        lvs = leaves(ann.node)
        if len(lvs) != len(g.sources):
            return problems + [f"annotation {ann.index}: {len(lvs)} numbers but {len(g.sources)} sources"]
        for lit, key in zip(lvs, g.sources, strict=False):
            want = _source_value(key, lits, new, results, row.question, row.original.question)
            if want is None or want != lit.value:
                problems.append(f"annotation {ann.index} ({ann.expr}): {lit.value} is not what source {key} gives")
        results.append(ann.result)
    if row.target >= len(results) or decimal_text(results[row.target]) != row.answer \
            or rewritten.final != results[row.target]:
        problems.append("the final answer is not the target annotation's result")
    frozen = sorted(set(new) - set(plan.resampled))
    if frozen:
        problems.append(f"question number(s) {frozen} may not change (fixed, a constant's cue, or behind an "
                        "ambiguous source)")
    problems += _feasibility(plan, row, new)
    return problems or _rebuilt_differs(raw, plan, row, new)


def _new_numbers(row: OfflineRow, lits: Any) -> tuple[list[tuple[int, int, str]], dict[int, Fraction]] | str:
    """The listed replacements and the new values read back from the new question, or what is wrong."""
    spans, new = [], {}
    for inp in row.inputs:
        if inp.literal >= len(lits) or (lits[inp.literal].start, lits[inp.literal].end) != inp.original_span:
            return f"input {inp.literal} does not name a number of the original question"
        spans.append((*inp.original_span, inp.new))
        written = row.question[inp.span[0]:inp.span[1]]
        try:
            new[inp.literal] = number_value(written)
        except ArithError:
            return f"the new question has no number at {inp.span} (found {written[:20]!r})"
    return spans, new


def _rebuilt_differs(raw: dict[str, Any], plan: Any, row: OfflineRow, new: dict[int, Fraction]) -> list[str]:
    """The fields in which ``raw`` differs from the row the rewriter writes for its original and new numbers."""
    built = variant_row(plan, row.variant, row.seed, new, order_pairs(plan))
    if isinstance(built, str):
        return [f"the new numbers give no rewrite ({built})"]
    want = json.loads(json.dumps(built))
    out = []
    for key in [*want, *(k for k in raw if k not in want)]:
        mine, theirs = want.get(key, _ABSENT), raw.get(key, _ABSENT)
        if mine == theirs:
            continue
        if mine is _ABSENT:
            out.append(f"field {key[:40]!r} is not one the rewriter writes")
        elif theirs is _ABSENT:
            out.append(f"field {key!r} is missing")
        else:
            out.append(f"{_where(key, mine, theirs)} differs from the row rebuilt from the original and the new numbers")
    return out


def _where(key: str, want: Any, got: Any) -> str:
    """``solution at character 57 ('…18' where the rebuilt row has '…8')``, or the nested field that differs."""
    if isinstance(want, dict) and isinstance(got, dict):
        for k in [*want, *got]:
            if want.get(k, _ABSENT) != got.get(k, _ABSENT):
                return _where(f"{key}.{k}", want.get(k), got.get(k))
    if isinstance(want, str) and isinstance(got, str):
        i = next((j for j, (a, b) in enumerate(zip(want, got, strict=False)) if a != b), min(len(want), len(got)))
        lo = max(0, i - 12)
        return f"{key} at character {i} ({got[lo:i + 12]!r} where the rebuilt row has {want[lo:i + 12]!r})"
    return key


def _source_value(key: str, lits: Any, new: dict[int, Fraction], results: list[Fraction], question: str,
                  original: str) -> Fraction | None:
    try:
        if key.startswith("c"):
            v = Fraction(key[1:])
            # 1 may be a written unit fraction's numerator (1/2*20); the graph's keys are compared with the plan
            return v if cues_for(v, question) or v == 1 else None
        if key.startswith("v"):
            ref_text, _, factor_text = key[1:].partition("*")
            ref, factor = int(ref_text), Fraction(factor_text)
            if ref >= len(lits) or factor not in conversion_factors(original, original[lits[ref].end:lits[ref].end + 16]):
                return None
            return source_value(Source("converted", ref, value=factor), new.get(ref, lits[ref].value))  # type: ignore[no-any-return]
        ref = int(key[1:])
        kind = KIND_OF_PREFIX.get(key[0])
        if kind == "node":
            return results[ref] if ref < len(results) else None
        if kind is None or ref >= len(lits) or (kind != "literal" and lits[ref].kind != "percent"):
            return None
        return source_value(Source(kind, ref), new.get(ref, lits[ref].value))  # type: ignore[arg-type, no-any-return]
    except (ValueError, ZeroDivisionError, IndexError):
        return None


def _feasibility(plan: Any, row: OfflineRow, new: dict[int, Fraction]) -> list[str]:
    keys = [[s.key() for s in ann] for ann in plan.readings[0]]
    if keys != [g.sources for g in row.graph]:
        return ["the graph is not the first reading of the original solution"]
    try:
        agreed = check_readings_agree(plan, new)
    except ArithError as exc:
        return [f"recomputation failed: {exc}"]
    if isinstance(agreed, str):
        return [f"feasibility: {agreed}"]
    pairs = order_pairs(plan)
    bad = fast_violation(plan, new, agreed, pairs)
    if bad:
        return [f"feasibility: constraint '{bad}' violated"]
    answer = agreed[plan.targets[-1]]
    return [f"feasibility: {c['check']} failed ({c['detail']})" for c in z3_verify(plan, 0, new, answer, pairs)
            if not c["passed"]]


def check_file(path: Path) -> dict[str, Any]:
    """Check every row of ``path``; ``{"rows", "passed", "failed", "failures": [{"line", "id", "problems"}]}``."""
    failures: list[dict[str, Any]] = []
    rows = passed = 0
    seen_ids: dict[str, int] = {}
    originals: dict[str, tuple[int, str]] = {}
    for lineno, line in enumerate(read_utf8(path).split("\n"), start=1):
        if not line.strip():
            continue
        rows += 1
        if rows > MAX_ROWS:
            failures.append({"line": lineno, "id": None, "problems": [f"more than {MAX_ROWS} rows; rest not checked"]})
            break
        try:
            raw = loads_json(line, f"{path}:{lineno}")
        except json.JSONDecodeError as exc:
            failures.append({"line": lineno, "id": None, "problems": [f"not JSON ({exc.msg})"]})
            continue
        if not isinstance(raw, dict):
            failures.append({"line": lineno, "id": None, "problems": ["not a JSON object"]})
            continue
        problems = check_llm_row(raw) if raw.get("mode") == "llm" else check_row(raw)
        problems += _across_rows(raw, lineno, seen_ids, originals)
        if problems:
            failures.append({"line": lineno, "id": raw.get("id"), "problems": problems})
        else:
            passed += 1
    return {"rows": rows, "passed": passed, "failed": len(failures), "failures": failures}


def _across_rows(raw: dict[str, Any], lineno: int, seen_ids: dict[str, int],
                 originals: dict[str, tuple[int, str]]) -> list[str]:
    """A row id appears once in a file, and all rows naming one ``original_id`` carry the same original."""
    out = []
    rid, oid = raw.get("id"), raw.get("original_id")
    if isinstance(rid, str):
        if rid in seen_ids:
            out.append(f"id {rid[:80]!r} already on line {seen_ids[rid]}")
        seen_ids.setdefault(rid, lineno)
    if isinstance(oid, str):
        original = json.dumps(raw.get("original"), sort_keys=True)
        first = originals.setdefault(oid, (lineno, original))
        if first[1] != original:
            out.append(f"original_id {oid[:60]!r} names another original on line {first[0]}")
    return out


def check_llm_row(raw: dict[str, Any]) -> list[str]:
    """An llm-mode row verifies only with a kernel-checked proof and a ``final`` answer that is a
    literal span of that proof (what can be re-checked without a Lean backend)."""
    ver = raw.get("verification")
    offline = [k for k in ("inputs", "graph", "target") if k in raw]
    if offline:
        return [f"a row of mode llm carries the offline rewrite's fields ({', '.join(offline)})"]
    bad_id = id_problem(raw.get("id"), raw.get("original_id"), raw.get("variant"))
    if bad_id:
        return [bad_id]
    if not isinstance(ver, dict):
        return ["no verification record"]
    proof, answer = ver.get("proof"), raw.get("answer")
    problems = []
    if ver.get("proof_checked") is not True or not isinstance(proof, str) or not proof:
        problems.append("no kernel-checked proof")
    elif not isinstance(answer, str) or not answer or answer not in proof:
        problems.append("the answer is not a literal span of the checked proof")
    if ver.get("answer_class") != "final":
        problems.append("the answer was not classified final")
    return problems
