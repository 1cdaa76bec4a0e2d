"""Reading the model's Lean answers, pure: the ``{"lean": ...}`` answer (or a fenced block),
a proof for a fixed statement (refusing answers that change the statement, add declarations or
use ``sorry``), and the bounded trajectory log the kernel's loops keep.
"""

from __future__ import annotations

import re
import textwrap

from faithsieve.lean.snippets import (
    DECL,
    Header,
    bounded,
    parse_header,
    split_proof,
    strip_imports,
)
from pydantic import BaseModel, Field, ValidationError

from faithsieve.llm.structured import extract_json

MAX_TRAJECTORY = 80
"""Entries kept in one trajectory (later ones are counted, not kept)."""
SORRY_WORD = re.compile(r"\b(?:sorry|admit)\b")
_TACTIC_START = re.compile(r"^(?:intros?|norm_num|simp\w*|n?linarith|omega|decide|rcases|obtain|constructor|refine|"
                           r"exact|apply|rw|rwa|have|ring\w*|field_simp|positivity|push_neg|use|unfold|induction|"
                           r"cases|by_contra|by_cases|nlinarith|interval_cases|subst|calc|gcongr|aesop|trivial|rfl)\b")


class LeanAnswer(BaseModel):
    """The model's final answer in both loops."""

    lean: str = Field(min_length=1, max_length=20_000)


class Trajectory:
    """A bounded log of one loop."""

    def __init__(self, limit: int = MAX_TRAJECTORY) -> None:
        self.items: list[str] = []
        self.limit = limit
        self.dropped = 0

    def add(self, entry: str) -> None:
        if len(self.items) < self.limit:
            self.items.append(bounded(entry, 1200))
        else:
            self.dropped += 1

    def frozen(self) -> tuple[str, ...]:
        return (*self.items, *([f"... {self.dropped} more entries not kept"] if self.dropped else []))


def read_lean_answer(text: str) -> str | None:
    """The ``lean`` field of the model's JSON answer; else a fenced ``lean`` block; else None."""
    try:
        return LeanAnswer.model_validate(extract_json(text)).lean
    except (ValueError, ValidationError):
        pass
    m = re.search(r"```(?:lean4?)?\s*\n(.*?)```", text, re.DOTALL)
    return m.group(1).strip() if m and m.group(1).strip() else None


def _tactic_proof(tactic: str) -> str:
    return "by\n  " + tactic.replace("\n", "\n  ")


def read_proof(text: str, target: Header) -> tuple[str | None, str]:
    """``(proof, "")``: what goes after ``:=`` in the model's answer; ``(None, why)`` when refused
    (no answer, the statement changed, ``sorry`` or another declaration in it)."""
    answer = read_lean_answer(text)
    if answer is None:
        return None, 'Could not find a JSON object with a "lean" field.'
    code = strip_imports(answer).strip()
    decls = list(DECL.finditer(code))
    if len(decls) > 1 or (decls and any(not ln.strip().startswith(("open ", "--"))
                                        for ln in code[:decls[0].start()].splitlines() if ln.strip())):
        return None, "The proof may not contain sorry, admit or further declarations."
    if decls:
        header, proof = split_proof(code)
        try:
            h = parse_header(header)
        except ValueError:
            return None, "The theorem statement in the answer could not be read."
        if h.signature() != target.signature() or (h.prelude and h.prelude.split() != target.prelude.split()):
            return None, "The answer changed the statement."
        if not proof:
            return None, "The answer has no proof."
        code = proof
    if DECL.search(code) or SORRY_WORD.search(code):
        return None, "The proof may not contain sorry, admit or further declarations."
    if code.startswith("by") and (len(code) == 2 or code[2].isspace()):
        lines = code[2:].split("\n")
        body = ([lines[0].strip()] if lines[0].strip() else []) + [
            ln for ln in textwrap.dedent("\n".join(lines[1:])).split("\n") if ln.strip()]
        return "by\n" + "\n".join("  " + ln for ln in body), ""
    if _TACTIC_START.match(code):
        return "by\n" + "\n".join("  " + ln for ln in textwrap.dedent(code).split("\n")), ""
    return code, ""
