"""A Lean 4 theorem statement as a value (``LeanStatement``), or why there is none (``Unrenderable``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Flavour", "LeanStatement", "Unrenderable"]

Flavour = Literal["mathlib", "core"]


@dataclass(frozen=True)
class Unrenderable:
    """No faithful Lean statement for this obligation in this flavour, and why."""

    reason: str


@dataclass(frozen=True)
class LeanStatement:
    """A theorem statement: ``theorem name binders hypotheses : conclusion``.

    ``binders`` and ``hypotheses`` are ``(name, type)`` / ``(name, proposition)`` pairs, written
    ``(x : ℚ)`` / ``(h1 : x = 5)``. ``refute`` says what refutes the obligation: ``negation``
    (a proof of ``negation()``), ``contradiction`` (a proof of ``refutation()``: the claim
    contradicts its premises, the project's meaning of a wrong derivation) or ``none`` (nothing
    Lean proves counts as an error: an equation not asserted as an identity)."""

    name: str
    conclusion: str
    binders: tuple[tuple[str, str], ...] = ()
    hypotheses: tuple[tuple[str, str], ...] = ()
    imports: tuple[str, ...] = ("Mathlib",)
    opens: tuple[str, ...] = ()
    flavour: Flavour = "mathlib"
    refute: Literal["negation", "contradiction", "none"] = "negation"
    notes: tuple[str, ...] = field(default=())

    def text(self) -> str:
        """The one-line header, without ``:=``."""
        parts = [f"theorem {self.name}"]
        parts += [f"({n} : {t})" for n, t in self.binders]
        parts += [f"({n} : {p})" for n, p in self.hypotheses]
        return " ".join(parts) + f" : {self.conclusion}"

    def theorem(self, proof: str = "sorry") -> str:
        """The whole self-contained snippet: imports, opens, then ``header := proof``."""
        blocks = []
        if self.imports:
            blocks.append("\n".join(f"import {i}" for i in self.imports))
        if self.opens:
            blocks.append("open " + " ".join(self.opens))
        blocks.append(f"{self.text()} := {proof.strip()}")
        return "\n\n".join(blocks) + "\n"

    def negation(self) -> LeanStatement:
        """The statement whose proof refutes this one: ``¬ (claim)`` when closed, else the
        counterexample form ``∃ binders, hyp₁ ∧ … ∧ ¬ (claim)``."""
        body = " ∧ ".join([_paren_prop(p) for _, p in self.hypotheses] + [f"¬ ({self.conclusion})"])
        if self.binders:
            concl = "∃ " + " ".join(f"({n} : {t})" for n, t in self.binders) + ", " + body
        else:
            concl = body
        return LeanStatement(name=self.name + "_neg", conclusion=concl, imports=self.imports, opens=self.opens,
                             flavour=self.flavour, refute="negation", notes=self.notes)

    def refutation(self) -> LeanStatement | None:
        """What a refutation must prove (see ``refute``), or ``None`` when nothing counts."""
        if self.refute == "none":
            return None
        if self.refute == "negation":
            return self.negation()
        return LeanStatement(name=self.name + "_contra", conclusion=f"¬ ({self.conclusion})", binders=self.binders,
                             hypotheses=self.hypotheses, imports=self.imports, opens=self.opens,
                             flavour=self.flavour, refute="negation", notes=self.notes)


def _paren_prop(p: str) -> str:
    return f"({p})" if any(c in p for c in "∧∨→↔∀∃¬") else p

