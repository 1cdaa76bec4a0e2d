"""Turning user input into a ``Proof``: step lists, or one text split into steps.

A proof text is split on the first convention it uses, tried in order:
``Step k:`` markers, numbered lines (``1.``, ``2)``), then blank-line paragraphs.
Pure functions; every step keeps its character offset in the original text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

from faithsieve.core.errors import InputError, InputTooLarge
from faithsieve.core.proof import Proof, Step
from faithsieve.core.settings import Settings

_STEP_MARK = re.compile(r"(?im)^[ \t>*#_]*(?:\*\*)?step[ \t]*(\d{1,4})[ \t]*(?:\*\*[ \t]*)?[:.)\-–][ \t]*(?:\*\*)?")
_NUMBERED = re.compile(r"(?m)^[ \t]*(\d{1,3})[.)][ \t]+(?=\S)")
_PARA = re.compile(r"\n[ \t]*\n")
_LINE = re.compile(r"\n")


def _pieces(text: str, marks: list[re.Match[str]]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    head = text[: marks[0].start()].strip()
    if head:
        out.append((text.find(head), head))
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = text[m.end() : end]
        stripped = body.strip()
        if stripped:
            out.append((m.end() + body.find(stripped), stripped))
    return out


def _sequential(marks: list[re.Match[str]]) -> bool:
    nums = [int(m.group(1)) for m in marks]
    return len(nums) >= 2 and nums[0] in (0, 1) and all(b == a + 1 for a, b in pairwise(nums))


def split_proof_text(text: str) -> list[tuple[int, str]]:
    """Split a proof into ``(offset, step_text)`` pieces."""
    marks = list(_STEP_MARK.finditer(text))
    if len(marks) >= 1 and (len(marks) == 1 or _sequential(marks)):
        return _pieces(text, marks)
    marks = list(_NUMBERED.finditer(text))
    if _sequential(marks):
        return _pieces(text, marks)
    paras = _chunks(text, _PARA)
    if len(paras) > 1:
        return paras
    return _chunks(text, _LINE)


def _chunks(text: str, sep: re.Pattern[str]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    pos = 0
    for m in [*sep.finditer(text), None]:
        end = m.start() if m is not None else len(text)
        chunk = text[pos:end]
        stripped = chunk.strip()
        if stripped:
            out.append((pos + chunk.find(stripped), stripped))
        if m is not None:
            pos = m.end()
    return out


def _check_sizes(problem: str, steps: Sequence[str], settings: Settings) -> None:
    if len(steps) > settings.max_steps:
        raise InputTooLarge(f"proof has {len(steps)} steps; the limit is {settings.max_steps}", {"field": "steps"})
    total = len(problem)
    for i, s in enumerate(steps, 1):
        if len(s) > settings.max_step_chars:
            raise InputTooLarge(
                f"step {i} has {len(s)} characters; the limit is {settings.max_step_chars}", {"field": f"steps[{i - 1}]"}
            )
        total += len(s)
    if total > settings.max_proof_chars:
        raise InputTooLarge(f"proof has {total} characters; the limit is {settings.max_proof_chars}", {"field": "proof"})


def proof_from_steps(problem: str, steps: Sequence[str], settings: Settings | None = None) -> Proof:
    """Build a Proof from a problem and a list of step texts."""
    settings = settings or Settings()
    _check_sizes(problem, steps, settings)
    return Proof(problem=problem, steps=tuple(Step(index=i, text=s) for i, s in enumerate(steps, 1)))


def proof_from_text(problem: str, text: str, settings: Settings | None = None) -> Proof:
    """Build a Proof from a problem and one proof text, split into steps."""
    settings = settings or Settings()
    if len(text) + len(problem) > settings.max_proof_chars:
        raise InputTooLarge(
            f"proof has {len(text) + len(problem)} characters; the limit is {settings.max_proof_chars}", {"field": "proof"}
        )
    pieces = split_proof_text(text)
    if not pieces:
        raise InputError("'proof' has no step text (only markers or whitespace)", {"field": "proof"})
    _check_sizes(problem, [p for _, p in pieces], settings)
    return Proof(problem=problem, steps=tuple(Step(index=i, text=t, offset=o) for i, (o, t) in enumerate(pieces, 1)))


def _valid_unicode(text: str, field: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"'{field}' is not valid Unicode (unpaired surrogate)", {"field": field}) from None


def proof_from_input(data: Mapping[str, Any], settings: Settings | None = None) -> Proof:
    """Accept ``{"problem", "steps": [...]}`` or ``{"problem", "proof": "..."}`` (other keys ignored)."""
    if not isinstance(data, Mapping):
        raise InputError("input must be a JSON object with 'problem' and 'steps' or 'proof'")
    problem = data.get("problem", "")
    if not isinstance(problem, str):
        raise InputError("'problem' must be a string", {"field": "problem"})
    _valid_unicode(problem, "problem")
    steps = data.get("steps")
    proof = data.get("proof")
    if steps is not None:
        if not isinstance(steps, list) or not all(isinstance(s, str) for s in steps):
            raise InputError("'steps' must be a list of strings", {"field": "steps"})
        if not steps:
            raise InputError("'steps' is empty", {"field": "steps"})
        for i, st in enumerate(steps):
            _valid_unicode(st, f"steps[{i}]")
        return proof_from_steps(problem, steps, settings)
    if proof is not None:
        if not isinstance(proof, str):
            raise InputError("'proof' must be a string", {"field": "proof"})
        if not proof.strip():
            raise InputError("'proof' is empty", {"field": "proof"})
        _valid_unicode(proof, "proof")
        return proof_from_text(problem, proof, settings)
    raise InputError("input needs 'steps' (a list of strings) or 'proof' (a string)", {"field": "steps"})
