"""Regular expressions written inline stay linear on hostile input too.

``test_redos`` tests every compiled pattern a module holds at module level; a pattern written as a
literal inside a function (``re.search(r"...", text)``) never appears there. This file reads the
source of the same modules, finds every call ``re.search / match / fullmatch / finditer / findall
/ sub / subn / split / compile`` inside a function whose pattern is a string literal, compiles it
with the flags the call passes, and runs it over the same hostile inputs with the same guard: a
``match`` or ``fullmatch`` call is timed as one anchored attempt (that is all it makes), every other
call as a scan from every position (``finditer``).
"""

from __future__ import annotations

import ast
import inspect
import re
import time
from types import ModuleType

import pytest

from tests.house.test_redos import (
    GROWTH,
    INPUTS,
    LIMIT_UNITS,
    MODULES,
    SMALL_INPUTS,
    TIMED_UNITS,
    module_patterns,
    reference_unit,
)

_CALLS = {"search": 2, "match": 2, "fullmatch": 2, "finditer": 2, "findall": 2, "sub": 4, "subn": 4, "split": 3,
          "compile": 1}
"""The ``re`` functions that take a pattern, with the position of their ``flags`` argument."""
_ANCHORED = {"match", "fullmatch"}
_FLAGS = {"I": re.I, "IGNORECASE": re.I, "M": re.M, "MULTILINE": re.M, "S": re.S, "DOTALL": re.S, "X": re.X,
          "VERBOSE": re.X, "A": re.A, "ASCII": re.A, "U": re.U, "UNICODE": re.U}

# Inline patterns known not to be linear on these inputs, each with the reason it is harmless where it
# runs (keyed "module:pattern"). They run as strict expected failures: once one is made linear, its
# entry must go.
KNOWN_SUPERLINEAR: dict[str, str] = {}


def _flags(node: ast.expr | None) -> int | None:
    """The value of a flags expression made of ``re.X`` names joined by ``|`` (None: not read)."""
    if node is None:
        return 0
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re":
        return _FLAGS.get(node.attr)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        a, b = _flags(node.left), _flags(node.right)
        return None if a is None or b is None else a | b
    if isinstance(node, ast.Constant) and node.value == 0:
        return 0
    return None


def _calls(tree: ast.AST) -> list[ast.Call]:
    """Calls of ``re`` functions with a literal pattern, inside any function or lambda of ``tree``."""
    found: dict[int, ast.Call] = {}
    for scope in ast.walk(tree):
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        for n in ast.walk(scope):
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _CALLS
                    and isinstance(n.func.value, ast.Name) and n.func.value.id == "re" and n.args
                    and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)):
                found[id(n)] = n
    return sorted(found.values(), key=lambda c: (c.lineno, c.col_offset))


Found = tuple[str, re.Pattern[str], bool]
"""``("module:pattern", compiled, anchored)``: anchored when every call of it is a match or fullmatch."""


def inline_patterns(modules: list[ModuleType]) -> tuple[list[Found], list[str]]:
    """Every distinct inline literal pattern not already held at module level (a pattern called both
    anchored and not is tested unanchored), and the calls whose flags could not be read (``module:line``)."""
    covered = {(p.pattern, p.flags) for _, p in module_patterns(modules)}
    out: dict[tuple[str, int], Found] = {}
    unread: list[str] = []
    for m in sorted(modules, key=lambda m: m.__name__):
        try:
            tree = ast.parse(inspect.getsource(m))
        except (OSError, TypeError):  # no source (a namespace package): nothing written in it
            continue
        for call in _calls(tree):
            assert isinstance(call.args[0], ast.Constant)
            pos = _CALLS[call.func.attr]  # type: ignore[attr-defined]
            given = next((k.value for k in call.keywords if k.arg == "flags"),
                         call.args[pos] if len(call.args) > pos else None)
            flags = _flags(given)
            if flags is None:
                unread.append(f"{m.__name__}:{call.lineno}")
                continue
            p = re.compile(call.args[0].value, flags)
            anchored = call.func.attr in _ANCHORED  # type: ignore[attr-defined]
            if (p.pattern, p.flags) not in covered:
                key = (p.pattern, p.flags)
                name, _, before = out.get(key, (f"{m.__name__}:{p.pattern}", p, True))
                out[key] = (name, p, before and anchored)
    return sorted(out.values(), key=lambda kv: kv[0]), unread


INLINE, UNREAD = inline_patterns(MODULES)


def test_inline_patterns_are_found() -> None:
    # the pipeline's own inline patterns (statetree and obligations) are among those tested
    names = {n.split(":", 1)[0] for n, _, _ in INLINE}
    assert {"faithsieve.mathtext.cues", "faithsieve.statetree.decompose", "faithsieve.obligations.extraction.readings"} <= names
    assert len(INLINE) >= 30


def test_every_inline_flags_argument_is_read() -> None:
    assert not UNREAD, UNREAD


def test_the_reader_finds_literals_in_functions_only() -> None:
    tree = ast.parse("import re\nA = re.compile('a')\ndef f(t):\n    return re.search(r'b+c', t, re.I | re.M)\n"
                     "g = lambda t: re.sub('d', '', t)\ndef h(p, t):\n    return re.search(p, t)\n")
    calls = _calls(tree)
    assert [c.args[0].value for c in calls] == ["b+c", "d"]  # type: ignore[attr-defined]
    assert _flags(calls[0].args[2]) == re.I | re.M


def test_known_superlinear_inline_patterns_still_exist() -> None:
    assert set(KNOWN_SUPERLINEAR) <= {n for n, _, _ in INLINE}


def _time(pattern: re.Pattern[str], text: str, anchored: bool) -> float:
    t0 = time.perf_counter()
    if anchored:
        pattern.match(text)
    else:
        for _ in pattern.finditer(text):
            pass
    return time.perf_counter() - t0


def _finding(pattern: re.Pattern[str], anchored: bool, big: str, small: str, unit: float, runs: int) -> str:
    t_big = min(_time(pattern, big, anchored) for _ in range(runs))
    if t_big > LIMIT_UNITS * unit:
        return f"{t_big:.2f} s on {big[:20]!r}… ({t_big / unit:.0f}x the reference scan)"
    if t_big > TIMED_UNITS * unit:
        grows = t_big / max(min(_time(pattern, small, anchored) for _ in range(runs)), 1e-6)
        if grows > GROWTH:
            return f"time grows {grows:.0f}x for 8x the text on {big[:20]!r}…"
    return ""


def superlinear(pattern: re.Pattern[str], anchored: bool) -> str:
    """Why ``pattern``, called as it is called, is not linear on the hostile inputs ("" when it is);
    the same bounds as ``test_redos.superlinear`` (in units of a reference scan timed in the same run), a
    flagged input timed again, three times each way, before it counts."""
    unit = reference_unit()
    for big, small in zip(INPUTS, SMALL_INPUTS, strict=True):
        if _finding(pattern, anchored, big, small, unit, 1):
            why = _finding(pattern, anchored, big, small, reference_unit(), 3)
            if why:
                return why
    return ""


def test_the_guard_times_calls_as_they_are_made() -> None:
    quadratic = re.compile(r"\s*(\d+)\.")  # each start scans the rest of a run of spaces
    assert superlinear(quadratic, anchored=False)
    assert not superlinear(quadratic, anchored=True)  # re.match makes one attempt: linear


def _param(name: str, pattern: re.Pattern[str], anchored: bool) -> object:
    reason = KNOWN_SUPERLINEAR.get(name)
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(name, pattern, anchored, id=name[:120], marks=marks)


@pytest.mark.parametrize(("name", "pattern", "anchored"), [_param(*found) for found in INLINE])
def test_inline_pattern_is_linear_on_hostile_text(name: str, pattern: re.Pattern[str], anchored: bool) -> None:
    why = superlinear(pattern, anchored)
    assert not why, f"{name}: {why}"
