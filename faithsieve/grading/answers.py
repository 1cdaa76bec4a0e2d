"""Final answers: find the one a solution states, and compare it with a reference as a value.

Extraction (``extract_answer``), most explicit marker first:

1. the last ``\\boxed{...}`` (or ``\\fbox{...}``) whose braces balance;
2. otherwise whichever of "The answer is X" / "Final answer: X" and GSM8K's ``#### X``
   comes last in the text;
3. otherwise, if enabled, the last number in the text.

Comparison (``answers_equal``) never evaluates text as code. An answer is normalized
(``$``, ``\\text{}`` units, trailing unit words, thousands separators, ``\\dfrac``, a
trailing period, ``x =`` prefixes), then read with the project's bounded math
tokenizer and parser and compared as an exact value:

* numbers as ``Fraction`` (``0.5 == 1/2 == \\frac{1}{2} == 2/4``);
* closed forms that are not rational (``2\\sqrt{3}``, ``\\pi/2``) with sympy, built node
  by node under size guards, equal when their difference is 0 or below 1e-40 at 50 digits;
* expressions in variables (``2x+2`` vs ``2(x+1)``) at fixed pseudo-random rational points
  (deterministic; a polynomial identity test);
* tuples and intervals element by element with matching brackets; unbracketed lists
  (``2, 3``) as unordered collections; everything else as a normalized string.

Policies (see ``AnswerPolicy``): percent (``50%`` against ``0.5`` and ``50``) and
rounded decimals (``0.33`` against ``1/3``).
"""

from __future__ import annotations

from faithsieve.grading.equivalence import answers_equal
from faithsieve.grading.normalize import normalize_answer
from faithsieve.grading.parse import ParsedAnswer, parse_answer
from faithsieve.grading.stated_answer import (
    AnswerPolicy,
    ExtractedAnswer,
    extract_answer,
    reference_answer,
)

__all__ = [
    "AnswerPolicy", "ExtractedAnswer", "ParsedAnswer", "answers_equal", "extract_answer", "normalize_answer",
    "parse_answer", "reference_answer",
]
