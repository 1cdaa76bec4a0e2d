"""Numbers in a solution's own style, and the numbers a text mentions (digits and number words)."""

from __future__ import annotations

from fractions import Fraction

from faithsieve.datasets.injection.tokens import tokenize

__all__ = ["format_number"]


def _decimal_places(value: Fraction, limit: int = 6) -> int | None:
    for places in range(limit + 1):
        if (value * 10**places).denominator == 1:
            return places
    return None


def format_number(value: Fraction, like: str = "", max_places: int = 4) -> str | None:
    """Write ``value`` as a plain decimal in the style of ``like`` (thousands commas,
    decimal places); ``None`` when it has no short terminating decimal form."""
    places = _decimal_places(value, max_places)
    if places is None:
        return None
    like_places = len(like.split(".", 1)[1]) if "." in like else 0
    if like_places > places:
        places = like_places  # "$18.00" stays in cents
    negative = value < 0
    scaled = abs(value) * 10**places
    assert scaled.denominator == 1
    digits = str(scaled.numerator).rjust(places + 1, "0")
    int_part, frac_part = (digits[:-places], digits[-places:]) if places else (digits, "")
    if "," in like and len(int_part) > 3:
        int_part = f"{int(int_part):,}"
    out = int_part + ("." + frac_part if frac_part else "")
    return ("-" if negative else "") + out


_NUMBER_WORDS: dict[str, int | Fraction] = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
    "dozen": 12, "half": Fraction(1, 2), "twice": 2, "double": 2, "triple": 3,
    "quarter": Fraction(1, 4), "third": Fraction(1, 3),
}


def _text_numbers(text: str) -> list[tuple[Fraction, str]]:
    """Numbers written in ``text`` (digits, and common number words), in order."""
    out: list[tuple[Fraction, str]] = []
    for t in tokenize(text):
        if t.kind == "NUM":
            assert t.value is not None
            out.append((t.value, t.text))
        elif t.kind == "WORD" and t.text.lower() in _NUMBER_WORDS:
            out.append((Fraction(_NUMBER_WORDS[t.text.lower()]), ""))
    return out

