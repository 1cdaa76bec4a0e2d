"""One adapter per public dataset: each converts one record to a ``LabelledItem`` (1-based labels).

Importing this module registers them, in the order below (the detection order). Label
conventions of the sources are described in ``datasets/README.md``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from faithsieve.datasets.formats import LabelledItem, parse_item, validation_reason
from faithsieve.datasets.registry import Adapter, Exclude, RecordContext, register
from faithsieve.datasets.steptext import (
    group_marked_steps,
    strip_number_prefix,
    strip_step_marker,
)
from pydantic import ValidationError


def _text(record: Mapping[str, Any], key: str) -> str:
    v = record[key]
    if not isinstance(v, str):
        raise TypeError(f"field {key!r} must be a string, got {type(v).__name__}")
    return v


def _str_list(record: Mapping[str, Any], key: str) -> list[str]:
    v = record[key]
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        raise TypeError(f"field {key!r} must be a list of strings")
    if not v:
        raise ValueError(f"field {key!r} is empty")
    return v


def _int(v: object, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{what} must be an integer, got {v!r}")
    return v


def _item(**kw: Any) -> LabelledItem:
    try:
        return LabelledItem.model_validate(kw)
    except ValidationError as exc:
        raise ValueError(validation_reason(exc)) from None


def _in_range(label: int, steps: Sequence[str]) -> int:
    if not 1 <= label <= len(steps):
        raise Exclude("label points past the last step")
    return label


# ---------------------------------------------------------------------------------------
# The adapters


def _proofloc(r: Mapping[str, Any], ctx: RecordContext) -> LabelledItem:
    return parse_item(dict(r))


register(Adapter(
    name="proofloc",
    description="ProofLoc JSONL: {id, problem, steps, label: 'correct' | k (1-based)}",
    required=frozenset({"id", "problem", "steps", "label"}),
    convert=_proofloc,
    detect_extra=lambda r: set(r) <= {"id", "problem", "steps", "label", "domain", "source", "meta"},
))


def _processbench(r: Mapping[str, Any], ctx: RecordContext) -> LabelledItem:
    steps = _str_list(r, "steps")
    raw = _int(r["label"], "label")
    if not -1 <= raw < len(steps):
        raise ValueError(f"label {raw} is outside -1..{len(steps) - 1} (0-based, -1 = correct)")
    return _item(
        id=_text(r, "id"), problem=_text(r, "problem"), steps=steps,
        label="correct" if raw == -1 else raw + 1,
        domain=ctx.stem, source="processbench",
        meta={"subset": ctx.stem, "generator": r.get("generator"), "final_answer_correct": r.get("final_answer_correct")},
    )


register(Adapter(
    name="processbench",
    description="ProcessBench JSON array: label 0-based, -1 = correct",
    required=frozenset({"id", "problem", "steps", "label", "final_answer_correct"}),
    convert=_processbench,
))


_SUBJECT_PREFIX = re.compile(r"^([A-Za-z][A-Za-z_-]{0,40}?)[-_]?\d{1,9}$")


def _proofloc_native_label(raw: object) -> object:
    """``"correct"`` and step numbers written as strings in their label form; anything else is left
    for ``LabelledItem`` to refuse (wrong type, out of range)."""
    if isinstance(raw, str) and raw.strip().lower() == "correct":
        return "correct"
    if isinstance(raw, str) and raw.strip().isdigit() and len(raw.strip()) <= 6:
        return int(raw.strip())
    return raw


def _proofloc_native(r: Mapping[str, Any], ctx: RecordContext) -> LabelledItem:
    steps = _str_list(r, "steps")
    rid = _text(r, "id")
    m = _SUBJECT_PREFIX.match(rid)
    subject = m.group(1) if m else ctx.stem
    return _item(id=rid, problem=_text(r, "problem"), steps=steps,
                 label=_proofloc_native_label(r["first_error_step"]),
                 domain=subject, source="proofloc", meta={"subset": subject})


register(Adapter(
    name="proofloc-native",
    description="ProofLoc as published: {id, problem, steps, first_error_step: 'correct' | 'k' (1-based, a string)}",
    required=frozenset({"id", "problem", "steps", "first_error_step"}),
    convert=_proofloc_native,
    detect_extra=lambda r: set(r) <= {"id", "problem", "steps", "first_error_step", "domain", "subject", "source"},
))


def _bigbench(r: Mapping[str, Any], ctx: RecordContext) -> LabelledItem:
    steps = _str_list(r, "steps")
    raw = r["mistake_index"]
    if raw is not None:
        raw = _int(raw, "mistake_index")
        if not 0 <= raw < len(steps):
            raise ValueError(f"mistake_index {raw} is outside 0..{len(steps) - 1}")
    return _item(
        id=f"{ctx.stem}-{ctx.index}", problem=_text(r, "input"), steps=steps,
        label="correct" if raw is None else raw + 1,
        domain="arithmetic" if ctx.stem == "multistep_arithmetic" else ctx.stem, source="bigbench-mistake",
        meta={"subset": ctx.stem, "target": r.get("target"), "answer": r.get("answer")},
    )


register(Adapter(
    name="bigbench-mistake",
    description="BIG-Bench Mistake JSONL: mistake_index 0-based, null = correct",
    required=frozenset({"input", "steps", "mistake_index"}),
    convert=_bigbench,
))


_MRBEN_TRAILER = re.compile(r"^Solution\s*:", re.IGNORECASE)


def _mrben(r: Mapping[str, Any], ctx: RecordContext) -> LabelledItem:
    grouped = group_marked_steps(_str_list(r, "Model_Solution_Steps"), trailer=_MRBEN_TRAILER)
    if not grouped.steps:
        raise ValueError("no steps")
    raw = _text(r, "Model_Solution_First_Error_Step").strip()
    correctness = r.get("Model_Solution_Correctness")
    if raw.upper() == "N/A":
        if correctness not in (None, "correct"):
            raise ValueError(f"first error step is N/A but Model_Solution_Correctness is {correctness!r}")
        label: str | int = "correct"
    elif raw.isdigit():
        label = grouped.position_of(int(raw))
    else:
        raise ValueError(f"Model_Solution_First_Error_Step must be digits or 'N/A', got {raw!r}")
    problem = _text(r, "Question")
    options = r.get("Options")
    if isinstance(options, str) and options.strip():
        problem = f"{problem}\n{options.strip()}"
    reasons = r.get("Model_Solution_Error_Reason") or []
    return _item(
        id=f"{_text(r, 'Question_UUID')}-{r.get('Sampled_Model', ctx.index)}", problem=problem,
        steps=grouped.steps, label=label, domain=r.get("Subject") or ctx.stem, source="mr-ben",
        meta={"subset": ctx.stem, "model": r.get("Sampled_Model"), "answer_line": grouped.trailer,
              "error_reason": reasons[0] if isinstance(reasons, list) and reasons else None},
    )


register(Adapter(
    name="mr-ben",
    description='MR-Ben JSON {uuid: [solution, ...]}: "Step k" 1-based strings, "N/A" = correct',
    required=frozenset({"Model_Solution_Steps", "Model_Solution_First_Error_Step", "Question"}),
    convert=_mrben,
))


def _mrmath_steps(fmt: object) -> list[str]:
    if not isinstance(fmt, list) or not fmt or not all(isinstance(s, list) and all(isinstance(x, str) for x in s) for s in fmt):
        raise TypeError("model_output_step_format must be a non-empty list of lists of strings")
    out = []
    for k, lines in enumerate(fmt, 1):
        text = "\n".join(lines).strip()
        text = strip_number_prefix(text, k)
        out.append(strip_step_marker(text))
    return out


_PERTURB_LABELLED = {"random number", "random operation"}


def _mrmath(r: Mapping[str, Any], ctx: RecordContext) -> LabelledItem:
    rid = r.get("id", ctx.index)
    if "hypothesis_steps" in r:  # perturbation.json
        etype = _text(r, "error_type")
        if etype not in _PERTURB_LABELLED:
            raise Exclude(f"perturbation {etype!r} has no first-error step")
        steps = [strip_number_prefix(s, k) for k, s in enumerate(_str_list(r, "hypothesis_steps"), 1)]
        tag = _int(r["tags"], "tags")
        if not 0 <= tag < len(steps):
            raise ValueError(f"tags {tag} is outside 0..{len(steps) - 1}")
        return _item(id=f"perturbation-{rid}", problem=_text(r, "question"), steps=steps, label=tag + 1,
                     domain=etype, source="mr-math",
                     meta={"subset": ctx.stem, "rid": r.get("rid"), "error_type": etype})
    steps = _mrmath_steps(r["model_output_step_format"])
    if "rating" in r:  # redundant_errors.json: no step is wrong
        return _item(id=f"redundant-{rid}", problem=_text(r, "question"), steps=steps, label="correct",
                     domain="math", source="mr-math",
                     meta={"subset": ctx.stem, "generator": r.get("generator"), "rating": r.get("rating")})
    raw = r["model_output_solution_first_error_step"]
    if raw == "N/A":
        label: str | int = "correct"
    else:
        label = _in_range(_int(raw, "model_output_solution_first_error_step"), steps)
    return _item(id=f"invalid-{rid}", problem=_text(r, "question"), steps=steps, label=label,
                 domain="math", source="mr-math",
                 meta={"subset": ctx.stem, "generator": r.get("generator")})


register(Adapter(
    name="mr-math",
    description='MR-MATH JSONL (.json): 1-based int or "N/A"; also its redundancy and perturbation sets',
    required=frozenset({"question", "ground_truth_answer"}),
    convert=_mrmath,
    detect_extra=lambda r: ("model_output_step_format" in r) or ({"hypothesis_steps", "rid", "tags"} <= r.keys()),
))


_MATHCHECK_TRAILER = re.compile(r"^the answer is\b", re.IGNORECASE)
_STEP_ANSWER = re.compile(r"^\s*step\s*(\d+)\s*$", re.IGNORECASE)


def _mathcheck(r: Mapping[str, Any], ctx: RecordContext) -> LabelledItem:
    task = r.get("task_type")
    if task != "process_judging":
        raise Exclude(f"task_type {task!r} has no step labels")
    grouped = group_marked_steps(_text(r, "solution").split("\n"), trailer=_MATHCHECK_TRAILER)
    if not grouped.steps:
        raise ValueError("no steps in solution")
    m = _STEP_ANSWER.match(_text(r, "answer"))
    if not m:
        raise ValueError(f"answer must be 'Step k', got {r['answer']!r}")
    label = grouped.position_of(int(m.group(1)))
    return _item(
        id=f"mathcheck-{r['id']}", problem=_text(r, "question"), steps=grouped.steps, label=label,
        domain="gsm8k", source="mathcheck-gsm",
        meta={"subset": r.get("question_type") or ctx.stem, "group_id": r.get("group_id"), "answer_line": grouped.trailer},
    )


register(Adapter(
    name="mathcheck-gsm",
    description='MathCheck-GSM JSON array: process_judging rows, answer "Step k" (1-based)',
    required=frozenset({"task_type", "question_type", "question", "answer"}),
    convert=_mathcheck,
))


def _parc(r: Mapping[str, Any], ctx: RecordContext) -> LabelledItem:
    steps = [strip_step_marker(s) for s in _str_list(r, "steps")]
    levels = r["error_annotation"]["error_annotations"]["step_level"]
    if not isinstance(levels, list):
        raise TypeError("error_annotation.error_annotations.step_level must be a list")
    bad = [lv for lv in levels if lv.get("has_error")]
    label: str | int = "correct"
    first: Mapping[str, Any] | None = None
    if bad:
        first = min(bad, key=lambda lv: _int(lv["step_number"], "step_number"))
        label = _in_range(first["step_number"], steps)
    errors = (first or {}).get("errors") or []
    return _item(
        id=f"{ctx.stem}-{ctx.index}", problem=_text(r, "question"), steps=steps, label=label,
        domain=ctx.path.parent.name, source="parc",
        meta={"subset": ctx.stem, "model_answer": r.get("model_answer"), "ground_truth_answer": r.get("ground_truth_answer"),
              "error_types": sorted({e.get("error_type") for e in errors if isinstance(e, Mapping)} - {None})},
    )


register(Adapter(
    name="parc",
    description="PARC JSON array: first error = min step_number with has_error (1-based)",
    required=frozenset({"question", "steps", "error_annotation"}),
    convert=_parc,
))


def _prmbench(r: Mapping[str, Any], ctx: RecordContext) -> LabelledItem:
    steps = [strip_number_prefix(s, k) for k, s in enumerate(_str_list(r, "modified_process"), 1)]
    errs = r["error_steps"]
    if not isinstance(errs, list) or not errs:
        raise ValueError("error_steps must be a non-empty list")
    errs = [_int(e, "error_steps entry") for e in errs]
    if max(errs) > len(steps) or min(errs) < 1:
        raise Exclude("label points past the last step")
    cls = r.get("classification") or ctx.stem
    return _item(
        id=f"{cls}:{_text(r, 'idx')}", problem=_text(r, "modified_question"), steps=steps, label=min(errs),
        domain="math", source="prmbench-preview",
        meta={"subset": cls, "error_steps": errs, "reason": r.get("reason")},
    )


register(Adapter(
    name="prmbench",
    description="PRMBench preview JSONL: error_steps 1-based, first = min; items past the last step dropped",
    required=frozenset({"modified_process", "error_steps", "modified_question"}),
    convert=_prmbench,
))


def _mrgsm8k(r: Mapping[str, Any], ctx: RecordContext) -> LabelledItem:
    steps = [strip_step_marker(s) for s in _str_list(r, "model_output_steps")]
    raw = r["model_output_solution_first_error_step"]
    if isinstance(raw, str) and raw.strip().isdigit():
        raw = int(raw)
    label = _in_range(_int(raw, "model_output_solution_first_error_step"), steps)
    qtype = r.get("question_type") or ctx.stem
    return _item(
        id=_text(r, "uuid"), problem=_text(r, "question"), steps=steps, label=label,
        domain="gsm8k", source="mr-gsm8k",
        meta={"subset": qtype, "error_reason": r.get("model_output_solution_first_error_reason")},
    )


register(Adapter(
    name="mr-gsm8k",
    description="MR-GSM8K eval-result JSON arrays: 1-based int; wrong solutions only; deduped by uuid",
    required=frozenset({"uuid", "model_output_steps", "model_output_solution_first_error_step"}),
    convert=_mrgsm8k,
    dedupe=True,
))


def _gsm8k(r: Mapping[str, Any], ctx: RecordContext) -> LabelledItem:
    from faithsieve.datasets.inject import gsm8k_steps

    return _item(id=f"gsm8k-{ctx.stem}-{ctx.index}", problem=_text(r, "question"),
                 steps=gsm8k_steps(_text(r, "answer")), label="correct", domain="gsm8k", source="gsm8k",
                 meta={"subset": f"gsm8k-{ctx.stem}"})


register(Adapter(
    name="gsm8k",
    description="GSM8K JSONL {question, answer}: the reference solution, labelled correct (steps are its lines, "
                "<<...>> calculator annotations removed, '#### N' as 'The answer is N.')",
    required=frozenset({"question", "answer"}),
    convert=_gsm8k,
    detect_extra=lambda r: set(r) == {"question", "answer"},
))


_REFERENCE_KEYS = frozenset({"id", "problem", "solution", "answer", "subject", "level"})


def _reference_solution(r: Mapping[str, Any], ctx: RecordContext) -> LabelledItem:
    from faithsieve.split import split_proof_text

    steps = [t for _, t in split_proof_text(_text(r, "solution"))]
    if not steps:
        raise ValueError("field 'solution' has no step text")
    subject = r.get("subject")
    return _item(id=_text(r, "id"), problem=_text(r, "problem"), steps=steps, label="correct",
                 domain=subject if isinstance(subject, str) else ctx.stem, source="reference-solutions",
                 meta={"subset": ctx.stem, "answer": r.get("answer"), "level": r.get("level")})


register(Adapter(
    name="reference-solution",
    description="reference solutions JSONL {id, problem, solution, answer}: labelled correct; the solution is split "
                "into steps as `localize` splits a proof text",
    required=frozenset({"id", "problem", "solution"}),
    convert=_reference_solution,
    detect_extra=lambda r: set(r) <= _REFERENCE_KEYS,
))


_LOCALIZE_KEYS = frozenset({"id", "problem", "steps", "proof", "label", "expected", "category", "note", "options"})
"""Fields of a ``localize`` input file (the project's examples add ``expected``, ``category``, ``note``)."""


def _localize_input(r: Mapping[str, Any], ctx: RecordContext) -> LabelledItem:
    if "steps" in r:
        steps = _str_list(r, "steps")
    else:
        from faithsieve.split import split_proof_text

        steps = [t for _, t in split_proof_text(_text(r, "proof"))]
        if not steps:
            raise ValueError("field 'proof' has no step text")
    if "label" in r:
        label = r["label"]
    elif isinstance(r.get("expected"), Mapping) and "first_error_step" in r["expected"]:
        label = r["expected"]["first_error_step"]
        label = "correct" if label is None else label
    else:
        raise ValueError("no label: add 'label' ('correct' or the 1-based first wrong step) or "
                         "'expected': {'first_error_step': k or null}")
    item_id = r.get("id") if isinstance(r.get("id"), str) and r.get("id") else (
        ctx.stem if ctx.location == "object" else f"{ctx.stem}-{ctx.index}")
    meta = {**(r["meta"] if isinstance(r.get("meta"), dict) else {}), **{k: r[k] for k in ("category", "note") if k in r}}
    domain = next((r[k] for k in ("domain", "category") if isinstance(r.get(k), str)), None)
    source = r["source"] if isinstance(r.get("source"), str) else ctx.path.parent.name or None
    return _item(id=item_id, problem=_text(r, "problem"), steps=steps, label=label, domain=domain, source=source,
                 meta=meta)


register(Adapter(
    name="localize",
    description="what `faithsieve localize` reads ({problem, steps} or {problem, proof}), with 'label' "
                "or 'expected.first_error_step' (1-based, null = correct); a pretty-printed object per file",
    required=frozenset({"problem"}),
    convert=_localize_input,
    detect_extra=lambda r: _is_localize_input(r),
))


_PROOFLOC_OPTIONAL = frozenset({"domain", "source", "meta"})


def _is_localize_input(r: Mapping[str, Any]) -> bool:
    """A ``localize`` input: ``steps`` with its fields only (plus ProofLoc's optional ones), or a labelled
    ``proof`` text whatever else the record holds (no other format writes one ``proof`` string)."""
    if "proof" in r and "steps" not in r and ("label" in r or "expected" in r):
        return True
    return ("steps" in r or "proof" in r) and set(r) <= _LOCALIZE_KEYS | _PROOFLOC_OPTIONAL \
        and not {"id", "steps", "label"} <= r.keys()  # that is ProofLoc


def undetected_hint(record: object) -> str:
    """What to do with a record no adapter detects: GSM8K solutions go to ``inject`` or ``predict``."""
    if isinstance(record, Mapping) and {"question", "answer"} <= record.keys() and "####" in str(record["answer"]):
        return ("GSM8K solutions carry no step labels: `faithsieve inject FILE --out items.jsonl` makes labelled "
                "items from them, `faithsieve predict FILE` gives verdicts without labels")
    return "use --format (`faithsieve formats` lists the formats)"

