"""Lean snippet text, pure: import preambles, unsafe-command screening of tool input, splitting a
declaration at its ``:=``, reading a theorem header (``parse_header``), negating it
(``negate_header``) and specialising it at a counterexample (``counterexample_snippets``).

Shared by the Lean tools (``faithsieve.lean.tools``) and the kernel (``faithsieve.lean.kernel``).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import Any

MATHLIB_PREAMBLE = "import Mathlib\n\n"
CORE_PREAMBLE = ""


def preamble(mathlib: bool) -> str:
    """The import lines put in front of every snippet (``import Mathlib`` or nothing)."""
    return MATHLIB_PREAMBLE if mathlib else CORE_PREAMBLE


_UNSAFE = re.compile(r"#eval\b|#exit\b|\brun_(?:cmd|elab|meta|tac)\b|\b(?:builtin_)?initialize\b|\bunsafe\b"
                     r"|@\[\s*(?:extern|implemented_by|\w*_elab|tactic|command_elab)|\belab(?:_rules)?\b"
                     r"|\b(?:E|Base)?IO\b|\bSystem\b|\bset_option\s+(?:maxHeartbeats|maxRecDepth)\s+0\b")
# an import line: blanks within the line, never across lines, before the keyword (``^\s*`` crossed every blank line
# after each line start, n²/2 steps on a run of n blank lines)
_IMPORT = re.compile(r"(?m)^[^\S\n]*import\s+[^\n]*\n?")
_OPEN_BR, _CLOSE_BR = "([{⦃⟨", ")]}⦄⟩"


def unsafe_commands(code: str) -> list[str]:
    """What a model-written snippet may not contain: code execution (``#eval``, ``run_cmd``,
    elaborator definitions), ``IO``/``System``, native code, unbounded limits. Textual and
    conservative (comments are not exempt); the backend's own sandboxing is still needed."""
    return sorted({m.group(0).strip() for m in _UNSAFE.finditer(code)})


def strip_imports(code: str) -> str:
    """``code`` without its ``import`` lines (the preamble supplies the imports)."""
    return _IMPORT.sub("", code).strip("\n")


def top_level_assign(text: str) -> int:
    """Index of the first ``:=`` outside brackets in ``text`` (-1 when there is none)."""
    depth = 0
    for i, c in enumerate(text):
        if c in _OPEN_BR:
            depth += 1
        elif c in _CLOSE_BR:
            depth = max(0, depth - 1)
        elif c == ":" and depth == 0 and text.startswith(":=", i):
            return i
    return -1


def split_proof(text: str) -> tuple[str, str | None]:
    """``(header, proof)`` of a declaration: the text before the first top-level ``:=`` and the
    text after it (``None`` when there is no ``:=``). Both stripped."""
    i = top_level_assign(text)
    if i < 0:
        return text.strip(), None
    return text[:i].strip(), text[i + 2:].strip()


def with_proof(header: str, tactics: str) -> str:
    """``header := by`` followed by ``tactics`` indented under it."""
    body = textwrap.indent(textwrap.dedent(tactics).strip("\n"), "  ")
    return f"{header} := by\n{body}"


def bounded(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    keep = max(0, limit - 40)
    return text[:keep] + f"\n... ({len(text) - keep} more characters cut)"


# ---------------------------------------------------------------------------------------
# Theorem headers

DECL = re.compile(r"(?m)^[ \t]*(?:@\[[^\]\n]*\][ \t]*)?(?:(?:private|protected|noncomputable)[ \t]+)*"
                  r"(theorem|lemma|example)(?=\s)")
"""A declaration keyword a statement may use, at the start of a line."""
_NAME = re.compile(r"[^\s(\[{⦃:]+")
# a comment; an unclosed block comment runs to the end of the text (so no start rescans the rest: linear)
_COMMENT = re.compile(r"--[^\n]*|/-.*?(?:-/|\Z)", re.DOTALL)
_BLANK = re.compile(r"\s*")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?(?:/\d+)?$")


@dataclass(frozen=True)
class Header:
    """``theorem name binders : conclusion``, read from text (``prelude``: ``open`` lines before it)."""

    name: str
    binders: tuple[str, ...]
    conclusion: str
    prelude: str = ""

    def signature(self) -> tuple[str, str]:
        """Binders and conclusion with whitespace normalized (the name and prelude left out)."""
        return " ".join(" ".join(self.binders).split()), " ".join(self.conclusion.split())

    def text(self, name: str | None = None, *, with_prelude: bool = False) -> str:
        binders = "".join(f" {b}" for b in self.binders)
        decl = f"theorem {name or self.name}{binders} : {self.conclusion}"
        return f"{self.prelude}\n{decl}" if with_prelude and self.prelude else decl


def _closing(text: str, i: int) -> int:
    depth = 0
    for j in range(i, len(text)):
        if text[j] in _OPEN_BR:
            depth += 1
        elif text[j] in _CLOSE_BR:
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("unbalanced brackets in the binders")


def _past_blanks_and_comments(text: str, i: int) -> int:
    """The first index at or after ``i`` that is neither blank nor inside a comment."""
    while True:
        b = _BLANK.match(text, i)
        i = b.end() if b else i  # ``\s*`` always matches
        c = _COMMENT.match(text, i)
        if c is None:
            return i
        i = c.end()


def parse_header(text: str) -> Header:
    """Read ``[open lines] theorem|lemma|example [name] binders : P [:= ...]`` (raises ``ValueError``).
    ``example`` gets the name ``obligation``."""
    m = DECL.search(text)
    if m is None:
        raise ValueError("no theorem declaration")
    rest = text[m.end():]
    i = len(rest) - len(rest.lstrip())
    name = "obligation"
    if m.group(1) != "example":
        nm = _NAME.match(rest, i)
        if nm is None:
            raise ValueError("the theorem has no name")
        name, i = nm.group(0), nm.end()
    binders: list[str] = []
    while True:
        i = _past_blanks_and_comments(rest, i)
        if i >= len(rest):
            raise ValueError("no ':' before the statement's type")
        if rest[i] in "([{⦃":
            j = _closing(rest, i)
            binders.append(rest[i:j + 1])
            i = j + 1
        elif rest[i] == ":" and not rest.startswith(":=", i):
            conclusion = rest[i + 1:]
            cut = top_level_assign(conclusion)
            conclusion = (conclusion[:cut] if cut >= 0 else conclusion).strip()
            break
        else:
            raise ValueError(f"unexpected text {rest[i:i + 30]!r} where binders or ':' should be")
    if not conclusion:
        raise ValueError("empty statement type")
    return Header(name=name, binders=tuple(binders), conclusion=conclusion, prelude=text[:m.start()].strip())


def negate_header(text: str) -> str:
    """``theorem name binders : P`` -> ``theorem name_neg : ¬ (∀ binders, P)``; without binders
    ``¬ (P)``. Any proof after ``:=`` is dropped, ``open`` lines before it are kept (pure)."""
    h = parse_header(text)
    inner = f"∀ {' '.join(h.binders)}, {h.conclusion}" if h.binders else h.conclusion
    return Header(name=f"{h.name}_neg", binders=(), conclusion=f"¬ ({inner})", prelude=h.prelude).text(with_prelude=True)


AUTO_IMPLICIT_OFF = "set_option autoImplicit false in"
"""Put before every checked declaration: a statement that names an undeclared variable is an error,
not a theorem quantified over a hidden implicit argument (``autoImplicit`` is on by default)."""


def with_options(decl: str, heartbeats: int | None = None) -> str:
    """``decl`` (optionally after ``open`` lines) with ``set_option autoImplicit false in`` and, with
    ``heartbeats``, ``set_option maxHeartbeats N in`` put right before its declaration keyword."""
    m = DECL.search(decl)
    if m is None:
        return decl
    options = AUTO_IMPLICIT_OFF + "\n" + (f"set_option maxHeartbeats {heartbeats} in\n" if heartbeats else "")
    start = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
    return decl[:start] + options + decl[start:]


def _binder_parts(binder: str) -> tuple[str, list[str], str]:
    """``(x y : ℝ)`` -> ``("(", ["x", "y"], "ℝ")``; ``[Foo]`` -> ``("[", [], "Foo")``."""
    width = 2 if binder.startswith("{{") else 1
    inner = binder[width:-width]
    cut = next((k for k in range(len(inner)) if inner[k] == ":" and not inner.startswith(":=", k)
                and inner[:k].count("(") == inner[:k].count(")")), -1)
    if cut < 0:
        return binder[0], [], inner.strip()
    return binder[0], inner[:cut].split(), inner[cut + 1:].strip()


def counterexample_snippets(header: str, assignment: dict[str, str] | Any, *,
                            mathlib: bool) -> list[tuple[str, str, str]]:
    """``(declaration name, closing tactic, snippet)`` candidates proving ``¬ (∀ binders, P)`` by
    specialising the statement at ``assignment`` (pure; raises ``ValueError`` when it cannot:
    no binders, a value that is not a plain number, no value for any variable). Keys of
    ``assignment`` that name no binder are ignored; binders with no value are taken as
    hypotheses and discharged by ``norm_num`` (``decide`` without Mathlib)."""
    h = parse_header(header)
    if not h.binders:
        raise ValueError("the statement has no variables to specialise")
    args: list[str] = []
    used = 0
    hyp = "(by norm_num)" if mathlib else "(by decide)"
    for b in h.binders:
        kind, names, typ = _binder_parts(b)
        if kind == "[":
            args.append("_")
            continue
        for n in names:
            if n in assignment:
                value = str(assignment[n]).split(" (")[0].strip()
                if not _NUMBER.match(value):
                    raise ValueError(f"value {value[:40]!r} of {n} is not a plain number")
                args.append(f"({value} : {typ})")
                used += 1
            else:
                args.append(hyp)
    if not used:
        raise ValueError("no value for any variable of the statement")
    closers = (("norm_num at hcx", "simp at hcx", "exact absurd hcx (by norm_num)", "exact absurd hcx (by decide)",
                "omega") if mathlib else ("simp at hcx", "exact absurd hcx (by decide)", "omega"))
    name = f"{h.name}_cx"
    neg = f"theorem {name} : ¬ (∀ {' '.join(h.binders)}, {h.conclusion}) := by\n  intro hall\n" \
          f"  have hcx := @hall {' '.join(args)}\n"
    pre = f"{h.prelude}\n" if h.prelude else ""
    return [(name, c, f"{pre}{neg}  {c}") for c in closers]
