"""Every parser obligation of a proof as a Lean 4 statement, or why there is none (pure, no Lean).

``formalize_proof(proof, flavour, lean_version)`` decomposes the proof with the rule-based
decomposer, extracts its obligations (the literal-formula ones and the remainder claims, as the
offline pipeline does) and renders each with ``faithsieve.lean.render``. ``lean_file`` writes the
result as one Lean file a user can paste into a project: the header it assumes (``import Mathlib``, a
comment where no Mathlib was found), then for each obligation a comment naming its step and claim, the
statement ``:= by sorry`` as the kernel checks it (``set_option autoImplicit false in``) and what refutes
it, or the reason it is not rendered. ``faithsieve formalize`` prints it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from faithsieve.lean.intform import integer_form
from faithsieve.lean.render import LeanStatement, Unrenderable, render
from faithsieve.lean.snippets import with_options
from faithsieve.lean.statement import Flavour
from faithsieve.obligations.extraction.edgeunits import extract_obligations
from faithsieve.obligations.extraction.remainders import remainder_obligations
from faithsieve.obligations.kinds.models import Obligation
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
        return {**out, "rendered": True, "statement": st.text(), "checked": _checked(st), "refute": st.refute,
                "refutation": ref.text() if ref is not None else None, "imports": list(st.imports),
                "notes": list(st.notes)}


def formalize_proof(proof: Proof, flavour: Flavour = "mathlib", lean_version: str | None = None) -> list[Formalized]:
    """The obligations of ``proof`` in step order, each with its rendering."""
    obligations = sorted([*extract_obligations(decompose(proof)), *remainder_obligations(proof)], key=lambda ob: ob.step)
    return [Formalized(ob, render(ob, flavour, lean_version), integer_form(ob) if flavour == "core" else None)
            for ob in obligations]


def _comment(text: str) -> str:
    return " ".join(text.split()).replace("-/", "- /")


def _checked(st: LeanStatement) -> str:
    """The declaration as the kernel checks it: ``set_option autoImplicit false in`` before its keyword."""
    return f"{with_options(st.text())} := by sorry"


def _header(flavour: Flavour, mathlib_here: bool | None) -> list[str]:
    """The header line(s): the import every check begins with, or a comment where it is known to be missing."""
    if flavour == "core":
        return ["-- header assumed: none (core Lean; the kernel's checks have no imports)"]
    if mathlib_here is False:
        return ["-- header assumed: import Mathlib (the kernel's checks begin with it), but `faithsieve doctor` finds",
                "-- no built Mathlib project here (FAITHSIEVE_LEAN_PROJECT): uncomment it in a project that has one",
                "-- import Mathlib"]
    return ["-- header assumed: import Mathlib (the kernel's checks begin with it)", "import Mathlib"]


def lean_file(items: list[Formalized], flavour: Flavour, lean_version: str | None,
              mathlib_here: bool | None = None) -> str:
    """The obligations as one Lean file: the header, then each statement and its refutation ``:= by sorry``,
    each as the kernel checks it (``set_option autoImplicit false in``). ``mathlib_here``: whether a built
    Mathlib project was found (False: ``import Mathlib`` is written as a comment; None: not known)."""
    rendered = sum(isinstance(f.statement, LeanStatement) for f in items)
    lines = [*_header(flavour, mathlib_here), "",
             f"/-! {len(items)} obligation(s), {rendered} rendered; flavour {flavour}"
             f"{f', Lean {lean_version}' if lean_version else ''}. Each statement is followed by what refutes it. -/"]
    for f in items:
        ob, st = f.obligation, f.statement
        lines += ["", f"-- step {ob.step}, {ob.id} ({ob.kind.value}): {_comment(ob.claim_text())}"]
        if f.integer is not None:
            lines += ["-- integer form (denominators cleared exactly; core tactics decide it):", _checked(f.integer)]
        if isinstance(st, Unrenderable):
            lines.append(f"-- not rendered: {_comment(st.reason)}")
            continue
        lines.append(_checked(st))
        ref = st.refutation()
        if ref is None:
            lines.append(f"-- no refutation: {_comment('; '.join(st.notes) or 'nothing Lean proves refutes it')}")
        else:
            lines += [f"-- refuted by {_REFUTES[st.refute]}:", _checked(ref)]
    return "\n".join(lines) + "\n"
