"""Every parser obligation of a proof as a Lean 4 statement, or why there is none (pure, no Lean).

``formalize_proof(proof, flavour, lean_version)`` decomposes the proof with the rule-based
decomposer, extracts its obligations (the literal-formula ones and the remainder claims, as the
offline pipeline does) and renders each with ``faithsieve.lean.render``. ``lean_file`` writes the
result as one Lean file a user can paste into a project: the imports once, then for each obligation
a comment naming its step and claim, the statement ``:= by sorry`` and what refutes it, or the
reason it is not rendered. ``faithsieve formalize`` prints it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from faithsieve.lean.intform import integer_form
from faithsieve.lean.render import LeanStatement, Unrenderable, render
from faithsieve.lean.statement import Flavour
from faithsieve.obligations.extract import extract_obligations
from faithsieve.obligations.models import Obligation
from faithsieve.obligations.remainders import remainder_obligations
from faithsieve.statetree.decompose import decompose

from faithsieve.core.proof import Proof

__all__ = ["Formalized", "formalize_proof", "lean_file"]

_REFUTES = {"negation": "a proof of its negation", "contradiction": "a proof that it contradicts its premises"}


@dataclass(frozen=True)
class Formalized:
    """One obligation and its Lean statement (or why there is none)."""

    obligation: Obligation
    statement: LeanStatement | Unrenderable
    integer: LeanStatement | None = None
    """Core flavour: the claim with denominators cleared exactly (``faithsieve.lean.intform``), which
    core tactics decide and which needs no ``Rat``."""

    def to_json(self) -> dict[str, Any]:
        ob, st = self.obligation, self.statement
        out: dict[str, Any] = {"id": ob.id, "step": ob.step, "kind": ob.kind.value, "claim": ob.claim_text()}
        if self.integer is not None:
            out["integer_form"] = self.integer.text()
        if isinstance(st, Unrenderable):
            return {**out, "rendered": False, "reason": st.reason}
        ref = st.refutation()
        return {**out, "rendered": True, "statement": st.text(), "refute": st.refute,
                "refutation": ref.text() if ref is not None else None, "imports": list(st.imports),
                "notes": list(st.notes)}


def formalize_proof(proof: Proof, flavour: Flavour = "mathlib", lean_version: str | None = None) -> list[Formalized]:
    """The obligations of ``proof`` in step order, each with its rendering."""
    obligations = sorted([*extract_obligations(decompose(proof)), *remainder_obligations(proof)], key=lambda ob: ob.step)
    return [Formalized(ob, render(ob, flavour, lean_version), integer_form(ob) if flavour == "core" else None)
            for ob in obligations]


def _comment(text: str) -> str:
    return " ".join(text.split()).replace("-/", "- /")


def lean_file(items: list[Formalized], flavour: Flavour, lean_version: str | None) -> str:
    """The obligations as one Lean file: imports, then each statement and its refutation ``:= by sorry``."""
    rendered = sum(isinstance(f.statement, LeanStatement) for f in items)
    lines = ["import Mathlib" if flavour == "mathlib" else "-- core Lean: no imports", "",
             f"/-! {len(items)} obligation(s), {rendered} rendered; flavour {flavour}"
             f"{f', Lean {lean_version}' if lean_version else ''}. Each statement is followed by what refutes it. -/"]
    for f in items:
        ob, st = f.obligation, f.statement
        lines += ["", f"-- step {ob.step}, {ob.id} ({ob.kind.value}): {_comment(ob.claim_text())}"]
        if f.integer is not None:
            lines += ["-- integer form (denominators cleared exactly; core tactics decide it):",
                      f"{f.integer.text()} := by sorry"]
        if isinstance(st, Unrenderable):
            lines.append(f"-- not rendered: {_comment(st.reason)}")
            continue
        lines.append(f"{st.text()} := by sorry")
        ref = st.refutation()
        if ref is None:
            lines.append(f"-- no refutation: {_comment('; '.join(st.notes) or 'nothing Lean proves refutes it')}")
        else:
            lines += [f"-- refuted by {_REFUTES[st.refute]}:", f"{ref.text()} := by sorry"]
    return "\n".join(lines) + "\n"
