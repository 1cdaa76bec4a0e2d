"""Every regular expression the pipeline runs over proof text stays linear on hostile input.

A hang guard, not a speed measurement: the bound is two orders of magnitude above a linear
pattern's time here, and a quadratic pattern on these inputs takes seconds to minutes.
"""

import re
import time
from types import ModuleType

import pytest

import faithsieve.answers
import faithsieve.grading.extract
import faithsieve.grading.inputs
import faithsieve.grading.normalize
import faithsieve.grading.parse
import faithsieve.api.admission
import faithsieve.mathtext.extract
import faithsieve.mathtext.lexer
import faithsieve.split
import faithsieve.statetree.decompose
import faithsieve.obligations.extract
import faithsieve.obligations.remainders
import faithsieve.obligations.wordclaims

MODULES: list[ModuleType] = [
    faithsieve.split, faithsieve.mathtext.extract, faithsieve.mathtext.lexer, faithsieve.statetree.decompose,
    faithsieve.obligations.extract, faithsieve.answers, faithsieve.grading.extract, faithsieve.grading.normalize,
    faithsieve.grading.inputs, faithsieve.grading.parse, faithsieve.api.admission, faithsieve.obligations.remainders,
    faithsieve.obligations.wordclaims,
]
PATTERNS = sorted(
    ((f"{m.__name__}.{k}", v) for m in MODULES for k, v in vars(m).items() if isinstance(v, re.Pattern)),
    key=lambda kv: kv[0],
)
_BASE = [" ", "\n", ". ", "*", "\t \n", "** ", "$", "\\(", "- ", "1,", "a", "1", "#"]
_WORDS = ["case", "if", "let", "for", "step", "Step 1", "so", "is", "x", "i", "the answer is", "\\text{", "\\boxed{"]
INPUTS = [b * 20_000 for b in _BASE] + [w + " " * 20_000 + "x" for w in _WORDS] + [(w + " ") * 4_000 for w in _WORDS]


@pytest.mark.parametrize(("name", "pattern"), PATTERNS, ids=[n for n, _ in PATTERNS])
def test_pattern_is_linear_on_hostile_text(name: str, pattern: re.Pattern[str]) -> None:
    for text in INPUTS:
        t0 = time.perf_counter()
        for _ in pattern.finditer(text):
            pass
        assert time.perf_counter() - t0 < 2.0, f"{name} is slow on {text[:20]!r}…"
