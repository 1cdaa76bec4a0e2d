"""Text as a reader should see it: what a person reading the rendered text sees, and nothing hidden.

``clean_text`` runs before any reading of proof or answer text (the grader, and every proof that enters
the pipeline). Without it one invisible character inside a false claim (``3 + 4 = 8\\u200b``) makes the
claim unreadable, so it is never refuted. In order:

1. line breaks: ``\\r\\n``, ``\\r``, U+2028 and U+2029 become ``\\n``;
2. invisible characters are removed: every format character (Unicode category Cf: zero-width space
   and joiners, word joiner, soft hyphen, byte-order mark, bidirectional controls such as RLO, the
   invisible operators U+2061-U+2064, ...), every control character but ``\\n`` and ``\\t``, variation
   selectors, the combining grapheme joiner, Hangul fillers, private-use and surrogate code points;
3. marks whose meaning compatibility folding would change: superscripts stay as they are for the
   reader, which reads them itself (``x²`` is a power, ``36 cm²`` a unit, a detached ``²`` no
   exponent); subscripts become an index (``a₁₂`` -> ``a_{12}``) and vulgar fractions a quotient
   (``½`` -> ``(1/2)``, ``3½`` -> ``(3+1/2)``); plain NFKC would read them as ``x2``, ``a12`` and ``1⁄2``;
4. NFKC folds the remaining compatibility forms (fullwidth ``＝`` and ``８``, mathematical
   alphanumerics ``𝑥``, ligatures, no-break and other spaces), except the superscripts and the
   blackboard letters of number sets (``ℝ``, ``ℕ``, ``ℤ``, ``ℚ``, ``ℂ``), which stay as they are;
5. combining marks left on a plain character (``8\\u0336``) are removed (NFKC has already composed
   the ones that change a character, such as ``=\\u0338`` into ``≠``); the minus sign U+2212 and the
   fraction slash U+2044 become ``-`` and ``/``.

Linear in the text and done by ``re``/``str`` primitives; plain ASCII text without control characters
is returned as it is, at once.

The proof reader goes one step further (``read_text``, which ``clean_proof`` applies to every step after
the split): it also reads the presentation (``faithsieve.mathtext.presentation``: markdown, HTML, LaTeX
formatting, confusable letters, asserting idioms). Answer extraction uses ``clean_text`` alone.
"""

from __future__ import annotations

import re
import unicodedata

from faithsieve.core.proof import Proof
from faithsieve.mathtext.presentation import read_presentation

__all__ = ["clean_proof", "clean_text", "read_text", "squeeze_spaces"]

# Every format character (Cf) of Unicode 15, as ranges (tests/grader/test_textnorm.py checks this list
# against ``unicodedata`` over all code points), and the other invisible characters listed above.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\ue000-\uf8ff\ud800-\udfff"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef\U000f0000-\U0010ffff]+"
)
_NEEDS_WORK = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
_BREAKS = re.compile("\r\n?|[\u2028\u2029]")

_SUPERSCRIPT = "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱ"
_SUBSCRIPT = "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₒₓₕₖₗₘₙₚₛₜ"
_SUBSCRIPT_PLAIN = "0123456789+-=()aeoxhklmnpst"
_SUB_RUN = re.compile(f"[{_SUBSCRIPT}]+")
_SUB_MAP = str.maketrans(_SUBSCRIPT, _SUBSCRIPT_PLAIN)

_VULGAR = {
    "½": "1/2", "⅓": "1/3", "⅔": "2/3", "¼": "1/4", "¾": "3/4", "⅕": "1/5", "⅖": "2/5", "⅗": "3/5",
    "⅘": "4/5", "⅙": "1/6", "⅚": "5/6", "⅐": "1/7", "⅛": "1/8", "⅜": "3/8", "⅝": "5/8", "⅞": "7/8",
    "⅑": "1/9", "⅒": "1/10", "↉": "0/3",
}
_FRACTION = re.compile(r"(?<!\d)(\d*)([" + "".join(_VULGAR) + "])")
_KEEP = re.compile(f"[ℝℕℤℚℂ{_SUPERSCRIPT}]")
_KEEP_MARK = "\ue000"  # a private-use character: removed in step 2, so never in the text by now
_LEFTOVER_MARKS = re.compile(r"(?<=[\x00-\x7f])[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
_SIGNS = str.maketrans({"\u2212": "-", "\u2044": "/", "\u2215": "/"})


def _index(m: re.Match[str]) -> str:
    return "_{" + m.group().translate(_SUB_MAP) + "}"


def _fraction(m: re.Match[str]) -> str:
    whole, frac = m.group(1), _VULGAR[m.group(2)]
    return f"({whole}+{frac})" if whole else f"({frac})"


def clean_text(text: str) -> str:
    """``text`` as a reader should see it (see the module docstring). Idempotent."""
    if text.isascii() and _NEEDS_WORK.search(text) is None and "\r" not in text:
        return text
    s = _BREAKS.sub("\n", text)
    s = _INVISIBLE.sub("", s)
    if s.isascii():
        return s
    s = _SUB_RUN.sub(_index, s)
    s = _FRACTION.sub(_fraction, s)
    kept = _KEEP.findall(s)
    if kept:
        s = _KEEP.sub(_KEEP_MARK, s)
    s = unicodedata.normalize("NFKC", s)
    if kept:
        it = iter(kept)
        s = re.sub(_KEEP_MARK, lambda _m: next(it), s)
    s = _LEFTOVER_MARKS.sub("", s)
    s = s.translate(_SIGNS)
    if not s.isascii():
        s = _INVISIBLE.sub("", s)  # NFKC never makes one, but a fold may leave a control character
    return s


def read_text(text: str) -> str:
    """``text`` as the proof reader reads it: cleaned (``clean_text``), then its presentation read
    (``faithsieve.mathtext.presentation.read_presentation``: markdown, HTML, LaTeX formatting, confusable
    letters, idioms). Not for answer extraction: a ``\\boxed{}`` around a relation is unwrapped here."""
    return read_presentation(clean_text(text))


def clean_proof(proof: Proof) -> Proof:
    """``proof`` with its problem and every step's text read as a person reads it (``read_text``); the same
    object when nothing changes. A step keeps its index and its offset in the text the user sent."""
    problem = read_text(proof.problem)
    steps = tuple(s if (t := read_text(s.text)) == s.text else s.model_copy(update={"text": t}) for s in proof.steps)
    if problem == proof.problem and all(a is b for a, b in zip(steps, proof.steps, strict=True)):
        return proof
    return proof.model_copy(update={"problem": problem, "steps": steps})


def squeeze_spaces(text: str) -> tuple[str, list[int]]:
    """``text`` with every run of white space one space (none leading), and for each of its characters the
    position in ``text`` it came from: a quote matched in the squeezed text maps back to an exact span."""
    chars: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        if ch.isspace():
            if chars and chars[-1] != " ":
                chars.append(" ")
                index.append(i)
        else:
            chars.append(ch)
            index.append(i)
    return "".join(chars), index
