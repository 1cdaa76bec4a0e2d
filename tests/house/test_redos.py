"""Every regular expression the pipeline runs over proof text stays linear on hostile input.

A hang guard, not a speed measurement: the bound is two orders of magnitude above a linear
pattern's time here, and a quadratic pattern on these inputs takes seconds to minutes.

The patterns are not listed by hand: every module of the installed ``faithsieve`` package is
imported (``pkgutil.walk_packages``) and every compiled pattern it holds at module level is tested,
including patterns kept in module-level tuples, lists, sets and dicts (keys and values, nested
three deep), so a module added later is covered without editing this file.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import tomllib

# Modules not imported here, each with the reason. Nothing else may be left out.
EXCLUDED: dict[str, str] = {
    # the ``python -m faithsieve`` entry point: importing it parses sys.argv and exits; it defines no pattern
    # (its whole body is a call into faithsieve.cli, which is imported and tested)
    "faithsieve.__main__": "runs the command line on import; defines nothing",
    "faithsieve.cli.__main__": "runs the command line on import; defines nothing",
    # needs the production extra (gunicorn), which .ci/run installs only after the default suite; it
    # defines no pattern (a worker class that sets uvicorn's options)
    "faithsieve.api.gunicorn_worker": "imports gunicorn (the production extra); defines no pattern",
}
# Patterns known not to be linear on these inputs, each with the reason it is harmless where it is
# used. They run as strict expected failures: once one is made linear, its entry must go.
KNOWN_SUPERLINEAR: dict[str, str] = {
}


def _package_names() -> list[str]:
    """``faithsieve`` and every package pyproject.toml installs under it. Some live outside the
    ``faithsieve/`` folder (``statetree/`` is installed as ``faithsieve.statetree``), and an editable
    install does not show them inside ``faithsieve.__path__``, so each is walked from its own path."""
    with open(Path(__file__).resolve().parents[2] / "pyproject.toml", "rb") as fh:
        listed = tomllib.load(fh)["tool"]["setuptools"]["packages"]
    return sorted({"faithsieve", *listed})


def _modules() -> tuple[list[ModuleType], dict[str, str]]:
    found: dict[str, ModuleType] = {}
    failed: dict[str, str] = {}

    def onerror(name: str) -> None:
        failed[name] = "package could not be walked"

    def load(name: str) -> ModuleType | None:
        if name in EXCLUDED or name in found:
            return found.get(name)
        try:
            found[name] = importlib.import_module(name)
        except Exception as e:  # noqa: BLE001 (reported by test_every_module_is_imported, not hidden)
            failed[name] = repr(e)[:200]
        return found.get(name)

    for package in _package_names():
        pkg = load(package)
        if pkg is None or not hasattr(pkg, "__path__"):
            continue  # a data folder listed in pyproject whose name a module takes (llm/prompts.py): loaded, not walked
        for info in pkgutil.walk_packages(pkg.__path__, package + ".", onerror=onerror):
            load(info.name)
    return list(found.values()), failed


def _patterns_in(value: object, depth: int = 0) -> Iterator[re.Pattern[str]]:
    if isinstance(value, re.Pattern):
        if isinstance(value.pattern, str):
            yield value
    elif depth < 3 and isinstance(value, (tuple, list, set, frozenset)):
        for item in value:
            yield from _patterns_in(item, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for k, v in value.items():
            yield from _patterns_in(k, depth + 1)
            yield from _patterns_in(v, depth + 1)


def module_patterns(modules: list[ModuleType]) -> list[tuple[str, re.Pattern[str]]]:
    """``(module.name, pattern)`` for every distinct pattern held at module level; a pattern imported
    into several modules (the same source and flags) is tested once, under the first name found."""
    seen: dict[tuple[str, int], tuple[str, re.Pattern[str]]] = {}
    for m in sorted(modules, key=lambda m: m.__name__):
        for k, v in vars(m).items():
            for p in _patterns_in(v):
                seen.setdefault((p.pattern, p.flags), (f"{m.__name__}.{k}", p))
    return sorted(seen.values(), key=lambda kv: kv[0])


MODULES, FAILED = _modules()
PATTERNS = module_patterns(MODULES)

_BASE = [" ", "\n", ". ", "*", "\t \n", "** ", "$", "\\(", "- ", "1,", "a", "1", "#", ", ", "= ", "1 ", "(", "{", "−",
         "\\,", "~", "x = 1 ", "1 = ", "mod ", "no, ", "wait ", "Z_", "in ", "12 ≡ ", "1 ÷ ", "7 ",
         "mod 7, ", "in Z_5, ", "in base 8 "]
_WORDS = ["case", "if", "let", "for", "step", "Step 1", "so", "is", "x", "i", "the answer is", "\\text{", "\\boxed{",
          # the notations read since 2916f76: bases, moduli, congruences, remainders, retractions, rebinding
          "in base", "in base 7", "in binary", "modulo", "mod 7", "\\pmod{", "≡", "\\equiv", "remainder", "remainder when",
          "divided by", "÷", "R", "wait", "no", "let me", "that's", "gives", "x = 3", "in \\mathbb{Z}", "GF(", "at"]


def hostile_inputs(k: int) -> list[str]:
    """Repetitions of each shape, ``k`` units long: runs of one piece, a word then a long gap, a word repeated."""
    return ([b * k for b in _BASE] + [w + " " * k + "x" for w in _WORDS] + [(w + " ") * (k // 5) for w in _WORDS]
            + ["1" * k + " mod", "7 " * k + "≡ 1 (mod"]
            # runs a tail such as [^.;=]{0,60}\Z would cross before failing at the full stop
            + [b * k + "." for b in ("mod 7, ", "in Z_5, ", "wait ", "x ")])


BIG, SMALL = 20_000, 2_500
INPUTS = hostile_inputs(BIG)
SMALL_INPUTS = hostile_inputs(SMALL)
# Every bound is in units of this machine's speed now, measured in the same run: ``reference_unit()``, the time of a
# linear pattern that matches at every character over a BIG input (20,000 matches). Idle here that is about
# 1.5 ms; a loaded machine slows it and the patterns alike, so the bounds widen with the load instead of flaking.
REFERENCE = re.compile(r".", re.S)
# a hang, whatever the growth: 1,500 reference scans of the same length (about 2 s idle, the fixed bound this
# replaces); a quadratic pattern takes minutes on these inputs, an exponential one never ends
LIMIT_UNITS = 1500.0
# superlinear growth: from SMALL to BIG (8x the text) a linear scan takes ~8x the time in theory, a quadratic
# one ~64x (a ratio of two times taken back to back, so the load mostly cancels). In practice a linear pattern
# that matches at every position of the 100,000-character inputs measures up to ~28x here (even ``.`` does ~20x:
# allocation and cache effects of 100,000 match objects), and the quadratic patterns of
# ``test_the_guard_catches_a_quadratic_pattern`` 47x to 174x: the bound sits between. Measured only where the big
# run is long enough to time, 30 reference scans (about 0.05 s idle; under it, even a quadratic pattern is
# harmless here)
GROWTH, TIMED_UNITS = 40.0, 30.0


def _time(pattern: re.Pattern[str], text: str) -> float:
    t0 = time.perf_counter()
    for _ in pattern.finditer(text):
        pass
    return time.perf_counter() - t0


def reference_unit() -> float:
    """The reference scan's time over a BIG input now (the middle of three: one preemption, or one lucky
    quiet moment, does not set it)."""
    return sorted(_time(REFERENCE, INPUTS[0]) for _ in range(3))[1]


def _finding(pattern: re.Pattern[str], big: str, small: str, unit: float, runs: int) -> str:
    """Why ``pattern`` is not linear on this pair of inputs ("" when it is), each time the fastest of ``runs``
    runs (a loaded machine only ever adds time, so the fastest run is the closest to the pattern's own)."""
    t_big = min(_time(pattern, big) for _ in range(runs))
    if t_big > LIMIT_UNITS * unit:
        return f"{t_big:.2f} s on {big[:20]!r}… ({t_big / unit:.0f}x the reference scan)"
    if t_big > TIMED_UNITS * unit:
        growth = t_big / max(min(_time(pattern, small) for _ in range(runs)), 1e-6)
        if growth > GROWTH:
            return f"time grows {growth:.0f}x for 8x the text on {big[:20]!r}…"
    return ""


def superlinear(pattern: re.Pattern[str]) -> str:
    """Why ``pattern`` is not linear on the hostile inputs ("" when it is). A flagged input is timed
    again, three times each way against the reference measured again, before it counts, so one slow moment of
    a loaded machine is not a finding."""
    unit = reference_unit()
    for big, small in zip(INPUTS, SMALL_INPUTS, strict=True):
        if _finding(pattern, big, small, unit, 1):
            why = _finding(pattern, big, small, reference_unit(), 3)
            if why:
                return why
    return ""


def test_every_module_is_imported():
    assert not FAILED, FAILED
    names = {m.__name__ for m in MODULES}
    # this session's rule modules, and the old ones: discovery reaches the mapped packages (statetree, obligations)
    assert {"faithsieve.statetree.retraction", "faithsieve.statetree.rebinding", "faithsieve.statetree.continuation",
            "faithsieve.obligations.extraction.readings", "faithsieve.obligations.extraction.remainders", "faithsieve.obligations.extraction.wordclaims",
            "faithsieve.statetree.decompose", "faithsieve.split", "faithsieve.api.admission"} <= names


def test_patterns_in_containers_are_found():
    holder = ModuleType("holder")
    a, b, c = re.compile("a"), re.compile("b"), re.compile("c")
    holder.__dict__.update(single=a, pairs=((b, "why"),), table={"k": [c]}, text="not a pattern")
    assert sorted(p.pattern for _, p in module_patterns([holder])) == ["a", "b", "c"]


def test_new_modules_patterns_are_tested():
    names = {n.rsplit(".", 1)[0] for n, _ in PATTERNS}
    assert {"faithsieve.statetree.retraction", "faithsieve.statetree.rebinding", "faithsieve.obligations.extraction.readings",
            "faithsieve.obligations.extraction.remainders", "faithsieve.obligations.extraction.wordclaims"} <= names


def test_the_reference_is_a_fair_unit():
    """The unit is a full linear pass: on the same text it is within a small factor of a plain character scan,
    and it grows linearly itself (else the bounds would move with the pattern they measure)."""
    unit = reference_unit()
    assert unit > 0
    assert min(_time(REFERENCE, INPUTS[0][: BIG // 8]) for _ in range(5)) < unit / 3


def test_the_guard_catches_a_quadratic_pattern():
    """The inputs and the growth bound flag a pattern that backtracks quadratically (each start scans
    the rest of a run of spaces), and pass its bounded form."""
    assert superlinear(re.compile(r"\s*x"))
    assert superlinear(re.compile(r"[ \t]*,"))
    assert not superlinear(re.compile(r"\s{0,8}x"))


def _param(name: str, pattern: re.Pattern[str]) -> object:
    reason = KNOWN_SUPERLINEAR.get(name)
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(name, pattern, id=name, marks=marks)


def test_known_superlinear_patterns_still_exist():
    assert set(KNOWN_SUPERLINEAR) <= {n for n, _ in PATTERNS}


@pytest.mark.parametrize(("name", "pattern"), [_param(n, p) for n, p in PATTERNS])
def test_pattern_is_linear_on_hostile_text(name: str, pattern: re.Pattern[str]) -> None:
    why = superlinear(pattern)
    assert not why, f"{name}: {why}"


# Patterns rewritten to be linear, with the form they had: the rewrite matches the same strings (same
# span, same groups) on every string built from the pieces each pattern looks at.
REWRITTEN = {
    "step marker": (
        r"^[ \t>#_]*(?:\*\*)?[ \t]*s?tep[ \t]*(\d{1,3})[ \t]*(?:\*\*)?[ \t]*[:.)](?!\d)[ \t]*(?:\*\*)?[ \t]*",
        "faithsieve.datasets.steptext._STEP_MARK", re.IGNORECASE,
        ["", " ", "\t", "  ", "**", "*", ">", "#", "_", "Step", "step", "tep", "STEP", "s", "1", "12", "1234", ":", ".",
         ")", "x", "9"]),
    "judge line": (
        r"^(?:(?:final\s+)?answer\s*[:=\-]?\s*)?(?:(correct)|step\s*#?\s*(\d{1,6}))$",
        "faithsieve.stages.judge._LINE", 0,
        ["", " ", "\n", "  ", "final", "answer", ":", "=", "-", "#", "##", "correct", "step", "3", "1234567", "x"]),
}


@pytest.mark.parametrize("key", sorted(REWRITTEN))
def test_rewritten_pattern_matches_the_same_strings(key: str) -> None:
    import random

    old_source, name, flags, pieces = REWRITTEN[key]
    old = re.compile(old_source, flags)
    new = dict(PATTERNS)[name]
    assert new.pattern != old.pattern and new.flags == old.flags
    rng = random.Random(0)
    matched = 0
    for _ in range(40_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 7)))
        a, b = old.match(text), new.match(text)
        assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups())), text
        matched += a is not None
    assert matched > 100  # the pieces do build matching strings, not only misses
