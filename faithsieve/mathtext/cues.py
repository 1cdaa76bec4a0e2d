"""Sentence cues of the decomposition: the patterns that read how a step speaks of its formulas.

Case headers, parity and residue cases, negation and hypothetical wording, supposition and
reductio, sub-problems, renamings, conditions, verbal definitions and conclusions, alternatives,
trailing negations, and the integer domain a problem states. ``decompose`` builds the tree; this
module only reads the text.
"""

from __future__ import annotations

import re
from functools import lru_cache

from faithsieve.core.proof import Proof
from faithsieve.mathtext.ast import Var
from faithsieve.mathtext.formulas import CLOSED_PERIODS, Formula, sentence_start


@lru_cache(maxsize=4096)
def compiled(source: str) -> re.Pattern[str]:
    """``re.compile(source)``, kept: the patterns built from a formula's own text (a number, a letter)
    recur from proof to proof, and so many of them would crowd the ``re`` module's own small cache,
    recompiling every pattern of the reader in turn."""
    return re.compile(source)


# Quantifiers are bounded ({0,8}) so that long runs of spaces cannot make matching quadratic.
CASE_HEAD = re.compile(r"(?im)(?:^|\.\s)[ \t*#_>-]{0,8}(?:sub)?case[ \t]{0,4}(\d{1,2}|[ivx]{1,4}|[a-d])\b[ \t*]{0,4}[:.)\-–]?")
IF_PARITY = re.compile(r"(?i)\bif[ \t]{1,4}(?:\$|\\\()?[ \t]{0,4}([a-z])[ \t]{0,4}(?:\$|\\\))?[ \t]{1,4}is[ \t]{1,4}(even|odd)\b")
PARITY = re.compile(r"(?i)\b([a-z])[ \t]{0,4}(?:\$|\\\))?[ \t]{0,4}(?:is[ \t]{1,4})?(?:an?[ \t]{1,4})?(even|odd)\b")
NEGATION = re.compile(
    r"(?i)\b(not|isn't|aren't|doesn't|don't|cannot|can't|false|incorrect\w*|wrong|mistake\w*|slips?|typos?|blunders?|pitfalls?|"
    r"misprints?|contradict\w*|impossible|absurd|invalid|fails?|instead|would|should be|error|whether|no\s+solution)\b|\\neq|≠|\?"
)
HYPOTHETICAL = re.compile(r"(?i)\b(check(?:ing)?|verify\w*|verif\w+|suppose|assum\w+|test(?:ing)?|try|trying|plug\w*|if)\b")
# the supposition verb governs the formula: nothing between them closes the clause (a comma, "then")
SUPPOSE = re.compile(r"(?i)\b(suppose[sd]?|supposing|assume[sd]?|assuming|try|trying|if|presume|presuming|"
                      r"let'?s say|say)\b(?:(?!\bthen\b)[^,.;:!?\n]){0,80}$")
REDUCTIO_CUE = re.compile(r"(?i)\b(for (?:the sake of )?(?:a )?contradiction|on the contrary|to the contrary|otherwise|"
                           r"towards? a contradiction)\b")
REDUCTIO_OPEN = re.compile(r"(?i)\b(suppose[sd]?|supposing|assume[sd]?|assuming)\b")
REDUCTIO_CLOSE = re.compile(r"(?i)\b(contradict\w*|absurd\w*|impossible)\b|⊥|\\bot\b|\\Rightarrow\\!\\Leftarrow")
# "(b)", "Part 2", "**Problem (ii)**" at the start of a step or line: a new sub-problem
SUBPROBLEM = re.compile(r"(?im)^[ \t*#_>-]{0,8}(?:(?:part|question|sub-?problem|problem)[ \t]{0,4}\(?(?:[a-d]|[ivx]{1,4}|\d{1,2})\b\)?"
                         r"|\((?:[a-d]|i{1,3}|iv|v)\)[ \t])")
# "let x be", "let $n$ denote", "where x is", "define x as": a letter receives its meaning here
RENAMING = re.compile(r"(?i)\b(?:let|define|denote|call|where|now)[ \t]{1,4}(?:\$|\\\()?[ \t]{0,4}([a-zA-Z])(?![A-Za-z(])[ \t]{0,4}"
                       r"(?:\$|\\\))?[ \t]{0,4}(?:be|denote|denotes|represent|represents|is|as|stand|now)\b")
# the sentence states its relations under a condition ("if x < 0, then ... so x <= -2")
CONDITION_CUE = re.compile(r"(?i)\b(if|suppose|supposing|assume|assuming|when|whenever|in case|try|test|check)\b")
ROOT_CLAIM = re.compile(r"(?i)\b(roots?|solutions?|zeros|zeroes|zero|solves?|solving|so|thus|therefore|hence|"
                        r"gives?|get|obtain|yields?)\b")
"""A sentence that names the values after it as solutions of an equation, or concludes them."""
ROOTS_LISTED = re.compile(r"(?i)\b(?:the|its|all)[ \t]{1,3}(?:(?:two|three|four|distinct|real)[ \t]{1,3}){0,2}"
                          r"(?:roots|solutions|zeros|zeroes)[ \t]{1,3}(?:are|of[^.;:]{0,120}?[ \t]are)\b[^.;]{0,40}$")
"""The values after it are given as all the roots or solutions ("the roots are", "the solutions of
the equation are"); "x = 2 is a root" names one and claims no more."""
FOR_CONDITION = re.compile(r"(?i)\b(for|when|whenever)[ \t\n]{0,4}(\\\(|\$|\\\[)?[ \t\n]{0,4}$")
"""A relation right after "for" / "when" is the condition of what follows ("for \\(b - a = 3\\)
and \\(b + a = 33\\): ...", "For \\(x > 5\\), ..."), not a claim."""
FOR_VALUE = re.compile(r"(?i)\b(for|with|at|when|taking|using)[ \t\n]{0,4}(\\\(|\$|\\\[)?[ \t\n]{0,4}$")
VERBAL_DEF = re.compile(r"(?i)\blet[ \t]{1,4}(?:\$|\\\()?[ \t]{0,4}[a-zA-Z](?:_\w{1,8})?[ \t]{0,4}(?:\$|\\\))?[ \t]{1,4}(?:be|denote|represent)\b")
VERBAL_CONCLUSION = re.compile(r"(?i)\b(?:the (?:final )?answer is|therefore,? the answer|we conclude|this proves|which proves|"
                                r"\\boxed\{|q\.?e\.?d)")
CUSTOM_OP = re.compile(r"(?i)\boperations?\b|\bdefined? (?:by|as)\b|\\(?:star|diamond|oplus|otimes|odot|circ|"
                        r"bigstar|clubsuit|spadesuit|heartsuit|triangle|nabla|dagger|boxplus)\b")
IMAGINARY = re.compile(r"(?i)\bcomplex\b|\bimaginary\b|(?<![A-Za-z\\])i ?\^ ?\{? ?2|\\mathrm\{i\}|\bi ?= ?\\sqrt\{-1\}")
# naming or substituting an input value, not solving for it ("substitute f = 10 cm into the formula")
NAMING = re.compile(r"(?i)\b(where|let|with|denote|call|coefficients?|given|substitut\w*|plug\w*|putting|inserting|setting)\b")
ALTERNATIVE = re.compile(r"(?i)\bor\b|\\lor|\\vee")
PARALLEL = re.compile(r"(?i)\bor\b|\band\b|,|;|\\quad|\\lor|\\vee|\\text\{ {0,3}(or|and) {0,3}\}")
# nothing but display delimiters between two formulas: "\\[ 3x - 4 = 11 \\] \\[ 3x = 15 \\]" is a chain of
# transformations, each line rewriting the one above (as after "so"); a comma or full stop may end the upper line
STACKED = re.compile(r"[\s,.;]{0,6}(?:\\\]|\$\$)\s{0,6}(?:\\\[|\$\$)\s{0,6}")
CONCLUDE = re.compile(r"(?i)\b(answer|therefore|thus|hence|finally|in total|altogether)\b|\\boxed")
INTEGER_WORDS = re.compile(r"(?i)\b(integers?|whole numbers?|natural numbers?|digits?)\b")


TRAIL_STRONG = re.compile(r"(?i)\b(not|no|false|contradiction|impossible|absurd|extraneous|invalid|"
                           r"reject\w*|discard\w*|undefined|isn't|aren't|doesn't|don't|cannot|"
                           r"(?:neither|none)(?: of (?:these|them|the two|which))? (?:holds?|works?|is true|is valid))\b")
TRAIL_WEAK = re.compile(r"\?|(?:,\s*)?(?:(?:but\s+(?:that|this|it)|which|that)\s*)?(?:(?:is|are|'s)\s*)?"
                         r"(?:not|false|wrong|incorrect|impossible|a contradiction)")
r"""A relation's next words deny it ("x = 5, which is false", "... ?", "but that is wrong"); matched
at the start of the lower-cased text after the relation, its leading spaces stripped. Every run of
spaces in it is followed by a word or a question mark, never by another optional run of spaces, so
a match attempt is linear in the text. With the stripped spaces it is the language of the older
form ``\s*(\?|,?\s*(B)?\s*(V)?\s*(N))``, whose adjacent optional runs made one attempt cubic on a
long run of spaces (tests/mathtext/test_cues_trailing.py compares the two)."""


# Words one of which every match of a case-insensitive cue contains. ASCII text is case-folded
# exactly by str.lower() (A-Z to a-z, nothing else), and on ASCII text a case-insensitive pattern
# letter matches a character only when the two agree lower-cased (the folds that differ from
# lower(), such as the dotless i or the Kelvin sign, all involve non-ASCII characters): so on ASCII
# text that contains none of a cue's words, lower-cased, the cue cannot match, and ``cue_search``
# answers None without running it. Non-ASCII text always runs the pattern (so a cue's non-ASCII
# alternatives, such as ≠ or ⊥, need no word).
# (tests/mathtext/test_cue_words.py checks each entry against the pattern on generated text.)
CUE_WORDS: dict[re.Pattern[str], tuple[str, ...]] = {
    CASE_HEAD: ("case",),
    IF_PARITY: ("even", "odd"),
    SUBPROBLEM: ("part", "question", "problem", "(a)", "(b)", "(c)", "(d)", "(i", "(v)"),
    RENAMING: ("let", "define", "denote", "call", "where", "now"),
    REDUCTIO_OPEN: ("suppos", "assum"),
    REDUCTIO_CUE: ("contradiction", "contrary", "otherwise"),
    REDUCTIO_CLOSE: ("contradict", "absurd", "impossible", "\\bot", "\\rightarrow\\!\\leftarrow"),
    VERBAL_DEF: ("let",),
    VERBAL_CONCLUSION: ("answer", "we conclude", "proves", "\\boxed{", "qed", "q.e", "qe.d"),
    NEGATION: ("no", "n't", "false", "incorrect", "wrong", "mistake", "slip", "typo", "blunder", "pitfall", "misprint",
                "contradict", "impossible", "absurd",
                "invalid", "fail", "instead", "would", "should be", "error", "whether", "\\neq", "?"),
    HYPOTHETICAL: ("check", "suppose", "assum", "test", "try", "plug", "if"),  # "verif..." holds "if"
    SUPPOSE: ("suppos", "assum", "try", "if", "presum", "say"),
    CONDITION_CUE: ("if", "suppos", "assum", "when", "in case", "try", "test", "check"),
    NAMING: ("where", "let", "with", "denote", "call", "coefficient", "given", "substitut", "plug", "putting",
              "inserting", "setting"),
    CONCLUDE: ("answer", "therefore", "thus", "hence", "finally", "in total", "altogether", "\\boxed"),
    INTEGER_WORDS: ("integer", "whole number", "natural number", "digit"),
    ROOT_CLAIM: ("root", "zero", "so", "thus", "therefore", "hence", "give", "get", "obtain", "yield"),
    TRAIL_STRONG: ("no", "neither", "false", "contradiction", "impossible", "absurd", "extraneous", "invalid", "reject",
                    "discard", "undefined", "n't"),
    # "i ^ 2" and "i = \\sqrt{-1}" hold "i^"/"i ^" and "\\sqrt{-1}": most math text holds "^" but few hold these
    IMAGINARY: ("complex", "imaginary", "i^", "i ^", "\\mathrm{i}", "\\sqrt{-1}"),
    CUSTOM_OP: ("operation", "define", "\\star", "\\diamond", "\\oplus", "\\otimes", "\\odot", "\\circ", "\\bigstar",
                 "\\clubsuit", "\\spadesuit", "\\heartsuit", "\\triangle", "\\nabla", "\\dagger", "\\boxplus"),
}


def words_absent(text: str, words: tuple[str, ...]) -> bool:
    """``text`` is ASCII and holds none of ``words`` (lower-case ASCII), lower-cased: a pattern every match
    of which contains one of them cannot match it (see ``CUE_WORDS``)."""
    if not text.isascii():
        return False
    low = text.lower()
    for w in words:  # noqa: SIM110 (the hot path: a loop costs less than all() over a generator, measured)
        if w in low:
            return False
    return True


def by_identity(table: dict[re.Pattern[str], tuple[str, ...]]) -> dict[int, tuple[str, ...]]:
    """``table`` keyed by each pattern's ``id``. Hashing a compiled pattern hashes its whole compiled
    code every time (Python keeps no hash for it: about half a microsecond for a cue), and the cue
    tables are asked some 300,000 times in a ProcessBench pass; an ``id`` is an int, hashed at once.
    The patterns are module constants that ``table`` keeps alive, so no other object has one of their
    ids while it exists, and callers pass those constants themselves: ``by_identity(table)[id(p)]`` is
    ``table[p]`` for each of them (a pattern it does not list raises ``KeyError`` either way)."""
    return {id(p): words for p, words in table.items()}


_WORDS_OF = by_identity(CUE_WORDS)


def cue_absent(pattern: re.Pattern[str], text: str) -> bool:
    """``pattern`` (a key of ``CUE_WORDS``) cannot match ``text``."""
    return words_absent(text, _WORDS_OF[id(pattern)])


# Words one of which every match of a case-insensitive cue, lower-cased, BEGINS with (each of these
# patterns opens with ``\b(word|word...)`` or a literal). On ASCII text a match can then only start
# where one of them occurs in the lower-cased text (same positions: lower() keeps an ASCII string's
# length); ``pattern.search`` tries each position left to right and returns the first that matches,
# and ``finditer`` goes on from where a match ends, so trying ``pattern.match`` at those positions only,
# in order, gives the same matches (a match attempt at a position sees the whole string: ``\b`` and
# lookbehinds read the characters before it). It spares the regex engine its attempt at every other
# position. Only the two cues run on a whole step are listed: on a sentence of at most 160 characters
# the pattern's own scan costs less than finding the words' positions (measured on ProcessBench).
# (tests/mathtext/test_cue_words.py checks each entry against the pattern on generated text.)
CUE_STARTS: dict[re.Pattern[str], tuple[str, ...]] = {
    RENAMING: ("let", "define", "denote", "call", "where", "now"),
    VERBAL_DEF: ("let",),
}
_STARTS_OF = by_identity(CUE_STARTS)


def _starts(low: str, words: tuple[str, ...]) -> list[int]:
    """The positions in ``low`` where one of ``words`` begins, in order."""
    found: set[int] = set()
    for w in words:
        i = low.find(w)
        while i >= 0:
            found.add(i)
            i = low.find(w, i + 1)
    return sorted(found)


def _scan(pattern: re.Pattern[str], starts: tuple[str, ...], text: str, first: bool) -> list[re.Match[str]] | None:
    """``pattern``'s matches (only the first when ``first``) tried at the positions of ``starts``, its start
    words; None when the text is not ASCII (then the caller runs the pattern itself)."""
    if not text.isascii():
        return None
    out: list[re.Match[str]] = []
    end = 0
    for pos in _starts(text.lower(), starts):
        if pos < end:
            continue
        m = pattern.match(text, pos)
        if m is not None:
            out.append(m)
            if first:
                break
            end = max(m.end(), pos + 1)
    return out


def cue_search(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """``pattern.search(text)``, skipped when the words show it cannot match."""
    starts = _STARTS_OF.get(id(pattern))
    if starts is not None:
        found = _scan(pattern, starts, text, True)
        if found is not None:
            return found[0] if found else None
    return None if words_absent(text, _WORDS_OF[id(pattern)]) else pattern.search(text)


def cue_finditer(pattern: re.Pattern[str], text: str) -> list[re.Match[str]]:
    """``list(pattern.finditer(text))``, skipped when the words show it cannot match."""
    starts = _STARTS_OF.get(id(pattern))
    if starts is not None:
        found = _scan(pattern, starts, text, False)
        if found is not None:
            return found
    return [] if words_absent(text, _WORDS_OF[id(pattern)]) else list(pattern.finditer(text))


OR_NEXT = re.compile(r"(?:\s|\$|\\\)|\\\]|\\\[|\\\(|\\q?quad|\\,|,){0,12}(?:or\b|\\lor\b|\\vee\b|\\text\{\s*or\b)")


def first_alternative(f: Formula, text: str) -> bool:
    """The formula is the first of alternatives: "x - 8 = 12 or x - 8 = -12", or the first of a
    list of values for one letter ("x = 0, x = 9 and x = -8": the solutions, each of something)."""
    after = text[f.end : f.end + 60]
    if OR_NEXT.match(after):
        return True
    first = f.chain.exprs[0]
    if isinstance(first, Var) and len(f.chain.rels) == 1:
        if first.name not in after:
            return False  # the letter's own name must follow
        name = re.escape(first.name)
        return bool(compiled(r"(?:\s|\$|\\\)|\\\]|\\\[|\\\(|\\q?quad|\\,){0,12}(?:,|;|and\b)(?:\s|\$|\\\(|\\\[|and\b){0,12}" + name + r"\s*=").match(
                             after))
    return False


def step_sentences(text: str) -> list[str]:
    """The sentences of a step (bounded: the first 5,000 characters)."""
    return re.split(r"(?<=[.!?])\s+|\n", text[:5000])


def last_clause(lead: str) -> str:
    cut = max(sentence_start(lead), lead.rfind("; ") + 1)
    return lead[cut:][-160:]


# a full stop and a space end the sentence, except the stop of an abbreviation read mid-sentence
# ("X, i.e. Y, which is absurd": the denial covers X restated as Y)
SENTENCE_STOP = re.compile(r"(?i)(?<!\bi\.e)(?<!\be\.g)(?<!\bcf)(?<!\bresp)(?<!\bviz)\. ")


DISPLAY_BREAK = re.compile(r"(?:\\\]|\$\$|\\end\{(?:align|equation|gather)\*?\})[ \t]{0,8}\n[ \t]{0,8}"
                           r"(?!(?:This|That|It|These|Those|Such|Which|But|However|No|Not|Impossible|Contradiction|"
                           r"False|Wrong|Absurd|Clearly|Obviously|Wait|Oops|Hmm|Then|So|Thus|Hence|Therefore|Since|Because|If)\b)[A-Z]|\n[ \t]{0,8}\n")
r"""A display that ends its line and a capitalised word on the next line (``\[ x = 5 \]`` then "In this
case ..."), or a blank line: the sentence of the display ends there even without a period. A next line
that points back at the display ("This is impossible", "But that contradicts ...", "No, ...") or draws
its consequence ("Then ...", "So ...", "Hence ...") still speaks of it."""


def trailing_negation(text: str, end: int) -> bool:
    """The words right after a relation, to the end of its sentence, deny it."""
    rest = text[end : end + 200]
    # the sentence after it, up to its period (a period closing math included; not the stop of an abbreviation
    # read mid-sentence), may deny it too. The first denying word is found first and the sentence's end only
    # then (no word of TRAIL_STRONG holds a sentence break, so it is in the sentence when it ends before it)
    strong = cue_search(TRAIL_STRONG, rest)
    if strong is not None:
        m = SENTENCE_STOP.search(rest, 0, strong.end())
        d = DISPLAY_BREAK.search(rest, 0, strong.end())
        if m is None and d is None and all(rest.find(p, 0, strong.end()) < 0 for p in CLOSED_PERIODS):
            return True
    tail = text[end : end + 60].lower()
    return bool(TRAIL_WEAK.match(tail.lstrip())) or "contradiction" in tail


_COMPARE = r"\s{0,3}(?:is\s{1,3})?(?:(?:strictly\s{1,3})?(?:less|greater|smaller|larger|more|fewer|bigger)\s{1,3}than|" \
           r"not\s{1,3}equal\s{1,3}to|different\s{1,3}from|<|>|≠|\\neq?|\\[lg]t)\s{0,3}\$?\s{0,3}"
_NUMBER_AHEAD = r"(?<![\d.,])(-?\d[\d,]{0,20}(?:\.\d{1,12})?)(?![\d])"


def compared_with(text: str, end: int, value_text: str) -> set[str]:
    """The numbers the next 300 characters after ``end`` compare strictly with the number written
    ``value_text`` ("994 is less than 999", "994 ≠ 999", "999 is greater than 994": 994 for 999)."""
    if not value_text or len(value_text) > 24:
        return set()
    rest = text[end : end + 300]
    if value_text not in rest:
        return set()
    r = re.escape(value_text) + r"(?![\d.])"
    found: set[str] = set()
    for source in (_NUMBER_AHEAD + _COMPARE + r"(?<![\d.])" + r, r"(?<![\d.,])" + r + _COMPARE + _NUMBER_AHEAD):
        for m in compiled(source).finditer(rest):
            found.add(m.group(1).replace(",", ""))
    found.discard(value_text.replace(",", ""))
    return found


def domain_stated(var: str, proof: Proof) -> bool:
    """The problem quantifies the split variable over all integers ("for every integer n",
    "n ∈ ℤ"), or the proof says its cases cover all of them."""
    v = re.escape(var)
    problem = proof.problem[:4000]
    if re.search(r"(?i)\bfor\s{1,3}(?:every|all|any|each)\s{1,3}integers?\s{0,3}(?:\$|\\\()?\s{0,3}" + v + r"(?![A-Za-z])", problem) \
            or re.search(v + r"\s{0,3}\\in\s{0,3}\\mathbb\s{0,3}\{?Z", problem):
        return True
    return any(re.search(r"(?i)\bcover\w{0,3}\s{1,3}(?:all|every)\s{1,3}(?:the\s{1,3})?(?:integers?|residues?|remainders?)", s.text[:4000])
               for s in proof.steps)
