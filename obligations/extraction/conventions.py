"""Ways people write numbers and operations that a literal reading of the formula gets wrong.

Each rule names a notation in common use whose meaning the formula alone does not carry, and says
what the sieve does with it (``readings.guessed_reading`` and ``readings.written_readings`` call here):

- a *second reading* where the other meaning can be written out (``6!/3!3!`` is also ``6!/(3!·3!)``;
  ``0.5(20)`` is also ``0.5 · 20``; ``= 1/3 of $150`` also ends at ``1/3``): a refutation stands only
  when every reading is false, so a false claim is still caught;
- *silence* (a refutation recorded ``unknown`` with the reason) where the notation is not arithmetic on
  the numbers as written: clock times (``0900 - 0130 = 0730``, ``11 a.m. - 2 hours = 9 a.m.``), a mixed
  number cut at its "and" ("1 and 1/4 cups"), a formula cut at an en dash written for a minus
  (``2,430 – (1,250 + 850)``), quantities in two units of one measure (``4 pounds - 6 ounces = 58
  ounces``), and ``×`` between vectors (the cross product: ``b × a = -a × b``).
"""

from __future__ import annotations

import re
from fractions import Fraction

from faithsieve.mathtext.ast import Num, Rel

# -- silence: what a refutation would rest on that the text does not fix ---------------------------

_LEADING_ZERO = re.compile(r"(?<![\d.])0\d{2,3}(?![\d.,])")
"""``0900``, ``0130``: a quantity is never written with a leading zero; a 24-hour clock time (minutes run
to 60, not 100) or a code is."""

_CLOCK_BEFORE = re.compile(r"(?i)(?:\d[ \t]{0,2}(?:[ap]\.[ \t]?m\.?|[ap]m\b)|\bo'clock\b|\bnoon\b|\bmidnight\b)[ \t]{0,3}\Z")
_CLOCK_AFTER = re.compile(r"(?i)[ \t]{0,3}(?:[ap]\.[ \t]?m\.|[ap]m\b|o'clock\b)")
"""``11 a.m. - 2 hours = 9 a.m.``: the formula read is cut out of clock arithmetic (12-hour times)."""

_MIXED_AND_BEFORE = re.compile(r"(?<![\d.])\d{1,6}[ \t]{1,3}and[ \t]{1,3}\Z")
_FRACTION_HEAD = re.compile(r"[ \t]{0,2}\d{1,6}[ \t]{0,2}/[ \t]{0,2}\d{1,6}")
_MIXED_AND_AFTER = re.compile(r"[ \t]{1,3}and[ \t]{1,3}\d{1,6}[ \t]{0,2}/[ \t]{0,2}\d{1,6}")
""""1 and 1/4 cups": a whole number and a fraction joined by "and" are one mixed number (1 1/4); a
formula that starts at the fraction, or ends at the whole number, lost part of it."""

_DASH_BEFORE = re.compile(r"(?:\d|\)|(?<![A-Za-z])[A-Za-z])[ \t]{0,3}[–—][ \t]{0,3}(?:\\?\$)?[ \t]{0,2}\Z")
_DASH_AFTER = re.compile(r"[ \t]{0,3}[–—][ \t]{0,3}(?:\\?\$[ \t]{0,2})?(?:\d|\((?!\s*[a-z]{2})|(?<![A-Za-z])[A-Za-z](?![A-Za-z]))")
"""``2,430 – (1,250 + 850)``, ``32 + x – 32``: an en or em dash between two operands is a minus typed
with the wrong key; the formula read stops at it, so it is a piece of a longer one."""

_UNITS: dict[str, dict[str, str]] = {
    "time": {"second": "s", "seconds": "s", "sec": "s", "secs": "s", "minute": "min", "minutes": "min",
             "min": "min", "mins": "min", "hour": "h", "hours": "h", "hr": "h", "hrs": "h", "day": "d",
             "days": "d", "week": "wk", "weeks": "wk", "month": "mo", "months": "mo", "year": "y", "years": "y"},
    "mass": {"ounce": "oz", "ounces": "oz", "oz": "oz", "pound": "lb", "pounds": "lb", "lb": "lb", "lbs": "lb",
             "gram": "g", "grams": "g", "kilogram": "kg", "kilograms": "kg", "kg": "kg", "ton": "t", "tons": "t"},
    "length": {"inch": "in", "inches": "in", "foot": "ft", "feet": "ft", "ft": "ft", "yard": "yd", "yards": "yd",
               "mile": "mi", "miles": "mi", "centimeter": "cm", "centimeters": "cm", "cm": "cm", "meter": "m",
               "meters": "m", "kilometer": "km", "kilometers": "km", "km": "km", "millimeter": "mm", "mm": "mm"},
    "volume": {"cup": "cup", "cups": "cup", "pint": "pt", "pints": "pt", "quart": "qt", "quarts": "qt",
               "gallon": "gal", "gallons": "gal", "liter": "l", "liters": "l", "litre": "l", "litres": "l",
               "milliliter": "ml", "milliliters": "ml", "ml": "ml", "tablespoon": "tbsp", "tablespoons": "tbsp",
               "teaspoon": "tsp", "teaspoons": "tsp"},
    "money": {"dollar": "$", "dollars": "$", "cent": "c", "cents": "c"},
}
_UNIT_OF = {word: (measure, unit) for measure, table in _UNITS.items() for word, unit in table.items()}
_NUMBER_UNIT = re.compile(r"\d[ \t]{0,2}(?:\\text\{\s{0,2})?([A-Za-z]{1,12})\b")
"""A number and the word after it (``4 pounds``, ``6\\text{ ounces}``)."""

_SPLIT_POINT = re.compile(r"(?:[-+*/×·=]|\\times|\\cdot)[ \t]{0,2}\.[ \t]{1,2}\Z")
"""``.8 + . 84 + .82``: a lone point between an operator and the formula read is its decimal point typed
with a space: the formula read (``84 + .82``) is cut out of the one written."""

_VECTOR_CROSS = re.compile(r"\\(?:mathbf|vec|boldsymbol|bm|overrightarrow)\b[^=]{0,80}?\\times|\\times[^=]{0,40}?\\(?:mathbf|vec|boldsymbol|bm|overrightarrow)\b")
"""``\\mathbf{b} \\times \\mathbf{a}``: ``×`` between vectors is the cross product, which is neither
commutative (``b × a = -a × b``) nor a product of numbers."""


_MULTIPLYING = re.compile(r"[*×/·]|\\(?:times|cdot|div|frac)\b|\bx\b")
"""A formula that multiplies or divides may write its conversion factor (``3 hours * 60 minutes``)."""


def _mixed_units(text: str) -> bool:
    """Two numbers in ``text`` carry different units of one measure (``4 pounds - 6 ounces = 58 ounces``,
    ``1 hour = 60 minutes``): the arithmetic converts between units, which the formula does not write."""
    seen: dict[str, str] = {}
    for m in _NUMBER_UNIT.finditer(text):
        found = _UNIT_OF.get(m.group(1).lower())
        if found is None:
            continue
        measure, unit = found
        if seen.setdefault(measure, unit) != unit:
            return True
    return False


_GROUPED_BEFORE = re.compile(r"\d(?:[ \t\u2009\u202f~]|\\[,;:! ]|\{,\}|,)?\Z")
"""``84 000``, ``54\\,000``: a group of three digits after a digit and a space is part of one number."""


def _leading_zero(text: str) -> bool:
    """A number written with a leading zero (not a digit group of a longer number)."""
    return any(not _GROUPED_BEFORE.search(text[: m.start()]) for m in _LEADING_ZERO.finditer(text))


def convention_guess(formula_text: str, before: str, after: str) -> str:
    """What a refutation of the formula written ``formula_text`` (with ``before`` and ``after`` the text
    around it) would rest on that a convention of writing leaves open, or ""."""
    if "0" in formula_text and _leading_zero(formula_text):
        return "a number written with a leading zero (a 24-hour clock time or a code, not a quantity)"
    if _CLOCK_BEFORE.search(before) or _CLOCK_AFTER.match(after):
        return "a clock time (a.m./p.m.): the arithmetic is on times of day"
    if _MIXED_AND_BEFORE.search(before) and _FRACTION_HEAD.match(formula_text) or _MIXED_AND_AFTER.match(after):
        return "a mixed number written with 'and' ('1 and 1/4'), cut out of the formula"
    if _SPLIT_POINT.search(before):
        return "a decimal point split from its digits by a space ('. 84'): the formula is cut out of a longer one"
    if _DASH_BEFORE.search(before) or _DASH_AFTER.match(after):
        return "an en dash written for a minus: the formula is cut out of a longer one"
    if not _MULTIPLYING.search(formula_text) and _mixed_units(formula_text + after[:16]):
        return "quantities in two units of one measure (the formula does not write the conversion)"
    if "\\times" in formula_text and _VECTOR_CROSS.search(formula_text):
        return "'×' between vectors (the cross product, not a product of numbers)"
    return ""


_CONVERSION_FACTORS = frozenset(Fraction(n) for n in (2, 3, 4, 7, 8, 10, 12, 16, 24, 36, 52, 60, 100, 365, 1000, 1440,
                                                         2000, 3600, 5280))
"""The factors between units of one measure in everyday use (minutes in an hour, ounces in a pound, ...)."""


_UNIT_AHEAD = re.compile(r"[ \t$]{0,3}(?:\\text\{\s{0,2})?([A-Za-z]{1,12})\b")


def unit_restatement(premise: Rel, claim: Rel, after: str) -> bool:
    """``3x = 1 hour``, then ``3x = 60 minutes``: the claim keeps a side of the premise and sets it equal to
    another number that is the first times a factor between units, and a unit of a measure follows it:
    the same quantity in another unit, not a consequence that contradicts the premise."""
    if premise.op != "=" or claim.op != "=":
        return False
    if premise.lhs == claim.lhs:
        old, new = premise.rhs, claim.rhs
    elif premise.rhs == claim.rhs:
        old, new = premise.lhs, claim.lhs
    else:
        return False
    if not (isinstance(old, Num) and isinstance(new, Num)) or old.value == 0 or new.value == 0:
        return False
    m = _UNIT_AHEAD.match(after)
    if m is None or m.group(1).lower() not in _UNIT_OF:
        return False
    ratio = max(old.value, new.value) / min(old.value, new.value) if old.value > 0 and new.value > 0 else Fraction(0)
    return ratio in _CONVERSION_FACTORS


# -- second readings: the other meaning, written out for the parser ---------------------------------

_MULTINOMIAL = re.compile(r"(!\s{0,2}/\s{0,2})((?:\d{1,4}\s{0,2}!\s{0,2}(?:\\cdot|\\times|\*|·)?\s{0,2}){2,4})(?=[\s=)]|$)")
"""``6!/3!3!``: a product of factorials written after ``/`` is the whole denominator (the multinomial
coefficient ``n!/(a!b!)``), though read literally only the first factor divides."""

_DECIMAL_PERIOD = re.compile(r"(\d\.\d{1,12})(\(\d{1,12}\))")
"""``0.5(20)``: a decimal followed by a bracketed number is a repeating decimal in some texts and, more
often, a product (``0.5 × 20``)."""

_WORD_TAIL = re.compile(r"\s{1,3}(?:of|divided\s{1,3}by|multiplied\s{1,3}by|times)\s{1,3}[^=<>]{1,40}\Z")
"""``3/3 - 2/3 = 1/3 of $150``, ``8*45 = 360 divided by 5``: after the last relation, a word operator may
start the next computation on the value just written ("1/3, of $150"; "360, divided by 5, is 72")
rather than continue the right side."""

CONVENTION_TRIGGER = re.compile(r"!\s{0,2}/|\d\.\d{1,12}\(|\s(?:of|by|times)\s")
"""Where a formula may hold one of the notations ``convention_texts`` re-reads."""


def convention_texts(formula_text: str, latex: bool) -> list[tuple[str, str]]:
    """The formula written out under each other reading of a notation it holds, with what is ambiguous."""
    out: list[tuple[str, str]] = []
    if "!" in formula_text:
        alt = _MULTINOMIAL.sub(lambda m: f"{m.group(1)}({m.group(2).strip()}){m.group(2)[len(m.group(2).rstrip()):]}",
                               formula_text)
        if alt != formula_text:
            out.append((alt, "'n!/a!b!' (the multinomial n!/(a!b!), or (n!/a!)·b!)"))
    if "(" in formula_text:
        times = " \\cdot " if latex else " * "
        alt = _DECIMAL_PERIOD.sub(lambda m: m.group(1) + times + m.group(2), formula_text)
        if alt != formula_text:
            out.append((alt, "'0.5(20)' (a product, or a repeating decimal)"))
    tail = _WORD_TAIL.search(formula_text)
    if tail is not None and re.search(r"[=<>]", formula_text[: tail.start()]):
        out.append((formula_text[: tail.start()], "a word operator after the last value (it may start the next computation)"))
    return out


__all__ = ["CONVENTION_TRIGGER", "convention_guess", "convention_texts", "unit_restatement"]
