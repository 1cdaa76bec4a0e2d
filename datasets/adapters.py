"""Adapters from public step-labelled datasets to ``LabelledItem`` (1-based labels).

Each adapter is registered by name, recognises a record by the record's own fields, and
converts one record at a time. A conversion either returns an item, raises ``Exclude``
(a well-formed record left out by the adapter's documented policy, counted per reason),
or raises ``ValueError``/``KeyError``/``TypeError`` (a malformed record, reported with its
location). ``load_dataset`` reads a file or a directory, picks the adapter per file
(or uses the one forced by name), and returns items plus every bad and excluded record.

Label conventions of the sources are described in ``datasets/README.md``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from faithsieve.datasets.formats import BadRecord, Excluded, LabelledItem, parse_item, validation_reason
from faithsieve.textfile import read_utf8


class Exclude(Exception):
    """Raised by a converter for a record its policy leaves out (not an error in the file)."""


@dataclass(frozen=True)
class RecordContext:
    """Where a record comes from: passed to converters for ids and subsets."""

    path: Path
    """The file."""
    location: str
    """``line N`` (JSONL), ``index N`` (JSON array) or ``KEY[i]`` (object of lists)."""
    index: int
    """0-based position of the record in its file."""

    @property
    def stem(self) -> str:
        """The file name without extension (the default subset name)."""
        return self.path.stem


Converter = Callable[[Mapping[str, Any], RecordContext], LabelledItem]


@dataclass(frozen=True)
class Adapter:
    """One dataset format."""

    name: str
    """Registry name, used by ``--format``."""
    description: str
    """One line for ``--help`` and the README."""
    required: frozenset[str]
    """Fields a record must have for auto-detection."""
    convert: Converter
    """Record -> item (or ``Exclude``/``ValueError``)."""
    detect_extra: Callable[[Mapping[str, Any]], bool] | None = None
    """An extra test beyond ``required``, for formats whose fields overlap."""
    dedupe: bool = False
    """Whether a repeated id with identical content is a known duplicate to drop (else it is a bad record)."""

    def detects(self, record: object) -> bool:
        """Whether a record has this format's fields."""
        if not isinstance(record, Mapping) or not self.required <= record.keys():
            return False
        return self.detect_extra is None or bool(self.detect_extra(record))


_REGISTRY: dict[str, Adapter] = {}


def register(adapter: Adapter) -> Adapter:
    """Add an adapter to the registry (a name can be registered once)."""
    if adapter.name in _REGISTRY:
        raise ValueError(f"adapter {adapter.name!r} is already registered")
    _REGISTRY[adapter.name] = adapter
    return adapter


def adapter_names() -> list[str]:
    """Registered adapter names, in registration order."""
    return list(_REGISTRY)


def get_adapter(name: str) -> Adapter:
    """The adapter registered under ``name`` (``ValueError`` naming the known ones otherwise)."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r}; known formats: {', '.join(_REGISTRY)}") from None


def detect_adapter(record: object) -> Adapter | None:
    """The first registered adapter whose fields the record has, or ``None``."""
    for adapter in _REGISTRY.values():
        if adapter.detects(record):
            return adapter
    return None


# ---------------------------------------------------------------------------------------
# Step-text helpers (pure)

_STEP_MARK = re.compile(
    r"^[ \t>#_]*(?:\*\*)?[ \t]*s?tep[ \t]*(\d{1,3})[ \t]*(?:\*\*)?[ \t]*[:.)](?!\d)[ \t]*(?:\*\*)?[ \t]*",
    re.IGNORECASE,
)
_NUM_PREFIX = re.compile(r"^[ \t]*(\d{1,3})\.[ \t]+")


def strip_step_marker(text: str) -> str:
    """``"Step 3: Add."`` -> ``"Add."``; text without a leading ``Step k`` marker is kept."""
    m = _STEP_MARK.match(text)
    return text[m.end():].strip() if m else text.strip()


def strip_number_prefix(text: str, k: int) -> str:
    """``"3. Add."`` -> ``"Add."`` when the prefix is the step's own number ``k``."""
    m = _NUM_PREFIX.match(text)
    return text[m.end():].strip() if m and int(m.group(1)) == k else text.strip()


@dataclass
class MarkedSteps:
    """Steps grouped from pieces that start with ``Step k`` markers."""

    steps: list[str] = field(default_factory=list)
    """Step texts, markers removed."""
    numbers: list[int] = field(default_factory=list)
    """The marker number of each step (not always 1..n in the sources)."""
    trailer: str | None = None
    """A removed final non-step line (e.g. ``Solution: Choice_B``)."""

    def position_of(self, marker: int) -> int:
        """1-based position of the step whose marker is ``marker`` (``Exclude`` if absent or repeated)."""
        hits = [i for i, n in enumerate(self.numbers, 1) if n == marker]
        if not hits:
            raise Exclude("label names a step that is not in the solution")
        if len(hits) > 1:
            raise Exclude("label is ambiguous: the step numbering repeats")
        return hits[0]


def group_marked_steps(pieces: Sequence[str], trailer: re.Pattern[str] | None = None) -> MarkedSteps:
    """Group text pieces (lines or list entries) into steps on ``Step k`` markers.

    A piece that starts with a marker opens a step; any other non-blank piece continues the
    current one. Text before the first marker becomes its own step 1 when the first marker
    is ``Step 2`` (a dropped marker), otherwise it is prefixed to the first step. A last
    piece matching ``trailer`` (a final answer line that is not a step) is set aside.
    """
    out = MarkedSteps()
    body = [p for p in pieces if p.strip()]
    if trailer is not None and body and trailer.match(body[-1].strip()) and not _STEP_MARK.match(body[-1]):
        out.trailer = body.pop().strip()
    preamble: list[str] = []
    for piece in body:
        m = _STEP_MARK.match(piece)
        if m:
            out.numbers.append(int(m.group(1)))
            out.steps.append(piece[m.end():].strip())
        elif out.steps:
            out.steps[-1] = (out.steps[-1] + "\n" + piece.strip()).strip()
        else:
            preamble.append(piece.strip())
    if preamble:
        head = "\n".join(preamble)
        if out.numbers and out.numbers[0] == 2:
            out.steps.insert(0, head)
            out.numbers.insert(0, 1)
        elif out.steps:
            out.steps[0] = (head + "\n" + out.steps[0]).strip()
        else:
            out.steps, out.numbers = [head], [1]
    return out


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
    meta = {k: r[k] for k in ("category", "note") if k in r}
    return _item(id=item_id, problem=_text(r, "problem"), steps=steps, label=label,
                 domain=r.get("category") if isinstance(r.get("category"), str) else None,
                 source=ctx.path.parent.name or None, meta=meta)


register(Adapter(
    name="localize",
    description="what `faithsieve localize` reads ({problem, steps} or {problem, proof}), with 'label' "
                "or 'expected.first_error_step' (1-based, null = correct); a pretty-printed object per file",
    required=frozenset({"problem"}),
    convert=_localize_input,
    detect_extra=lambda r: ("steps" in r or "proof" in r) and set(r) <= _LOCALIZE_KEYS
    and not {"id", "steps", "label"} <= r.keys(),  # that is ProofLoc
))


# ---------------------------------------------------------------------------------------
# Reading files


_JSON_SUFFIXES = (".json", ".jsonl")


def read_records(path: Path) -> Iterator[tuple[str, int, object] | BadRecord]:
    """Yield ``(location, index, record)`` for each record of a JSON/JSONL file, or a ``BadRecord``.

    A JSON array gives its elements; an object whose values are all lists of objects (MR-Ben)
    gives those, located ``KEY[i]``; any other JSON object in a ``.json`` file is one record (a
    pretty-printed ``localize`` input, located ``object``); anything else is read as JSONL, one record a line.
    A file that is not UTF-8 text raises ``InputError`` naming it.
    """
    text = read_utf8(path)
    head = text.lstrip()[:1]
    whole: object = None
    parsed = False
    if head in ("[", "{"):
        try:
            whole, parsed = json.loads(text), True
        except json.JSONDecodeError as exc:
            if head == "[":
                yield BadRecord(path=str(path), location=f"line {exc.lineno}", reason=f"invalid JSON ({exc.msg})")
                return
    if parsed and isinstance(whole, list):
        for i, rec in enumerate(whole):
            yield f"index {i}", i, rec
        return
    if parsed and isinstance(whole, dict) and whole and all(
        isinstance(v, list) and v and all(isinstance(x, dict) for x in v) for v in whole.values()
    ):
        i = 0
        for key, recs in whole.items():
            for j, rec in enumerate(recs):
                yield f"{key}[{j}]", i, rec
                i += 1
        return
    if parsed and isinstance(whole, dict) and path.suffix != ".jsonl":
        yield "object", 0, whole
        return
    i = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            yield BadRecord(path=str(path), location=f"line {lineno}", reason=f"invalid JSON ({exc.msg}, column {exc.colno})")
            continue
        yield f"line {lineno}", i, rec
        i += 1


def dataset_files(path: Path) -> list[Path]:
    """The data files of a path: itself, or every ``.json``/``.jsonl`` below a directory, sorted."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _JSON_SUFFIXES)
    if not path.exists():
        raise FileNotFoundError(f"no such file or directory: {path}")
    return [path]


@dataclass
class LoadedDataset:
    """The result of reading a dataset: items in file order, and everything left out."""

    items: list[LabelledItem] = field(default_factory=list)
    """Converted items, ids unique."""
    bad: list[BadRecord] = field(default_factory=list)
    """Malformed records, each with its location and reason."""
    excluded: list[Excluded] = field(default_factory=list)
    """Records left out by an adapter's policy or as exact duplicates."""
    formats: dict[str, str] = field(default_factory=dict)
    """File -> adapter name used for it."""

    def excluded_counts(self) -> dict[str, int]:
        """How many records were excluded, per reason."""
        return dict(Counter(e.reason for e in self.excluded).most_common())


def load_dataset(path: str | Path, format: str | None = None) -> LoadedDataset:
    """Read a file or directory into items, detecting each file's adapter unless ``format`` names one.

    Ids must be unique across the dataset: a repeated id is a bad record, except for
    adapters marked ``dedupe`` (MR-GSM8K repeats items across its files), where a repeat
    with the same problem, steps and label is excluded as a duplicate.
    """
    forced = get_adapter(format) if format else None
    out = LoadedDataset()
    first_seen: dict[str, tuple[LabelledItem, str]] = {}
    for file in dataset_files(Path(path)):
        adapter = forced
        for rec in read_records(file):
            if isinstance(rec, BadRecord):
                out.bad.append(rec)
                continue
            location, index, record = rec
            if adapter is None:
                adapter = detect_adapter(record)
                if adapter is None:
                    keys = sorted(record)[:12] if isinstance(record, Mapping) else type(record).__name__
                    out.bad.append(BadRecord(path=str(file), location=location,
                                             reason=f"cannot detect the format from fields {keys}; use --format"))
                    break
                out.formats[str(file)] = adapter.name
            elif str(file) not in out.formats:
                out.formats[str(file)] = adapter.name
            if not isinstance(record, Mapping):
                out.bad.append(BadRecord(path=str(file), location=location,
                                         reason=f"expected a JSON object, got {type(record).__name__}"))
                continue
            lacking = sorted(adapter.required - record.keys())
            if lacking:
                out.bad.append(BadRecord(path=str(file), location=location,
                                         reason=f"missing field(s) {', '.join(lacking)} of format {adapter.name!r}"))
                continue
            ctx = RecordContext(path=file, location=location, index=index)
            try:
                item = adapter.convert(record, ctx)
            except Exclude as exc:
                out.excluded.append(Excluded(path=str(file), location=location, reason=str(exc)))
                continue
            except KeyError as exc:
                out.bad.append(BadRecord(path=str(file), location=location, reason=f"missing field {exc.args[0]!r}"))
                continue
            except (ValueError, TypeError) as exc:
                out.bad.append(BadRecord(path=str(file), location=location, reason=str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
                continue
            prev = first_seen.get(item.id)
            if prev is not None:
                same = (prev[0].problem, prev[0].steps, prev[0].label) == (item.problem, item.steps, item.label)
                if same and adapter.dedupe:
                    out.excluded.append(Excluded(path=str(file), location=location, reason="duplicate of an earlier item with the same id"))
                else:
                    what = "" if same else " with different content"
                    out.bad.append(BadRecord(path=str(file), location=location,
                                             reason=f"duplicate id {item.id!r}{what} (first at {prev[1]})"))
                continue
            first_seen[item.id] = (item, f"{file}: {location}")
            out.items.append(item)
    return out
