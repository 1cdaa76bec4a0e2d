"""Where a number of a rewritten solution comes from (``Source``) and the value it takes when the
question's numbers change (``source_value``): the vocabulary the plan, the identity check and the
feasibility screen share."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any
from typing import Literal as TLiteral

_PREFIX = {"literal": "q", "percent_of": "p", "percent_more": "m", "percent_less": "l", "percent_inverse": "r",
           "percent_complement": "k", "node": "n"}
PERCENT_KINDS = ("percent_of", "percent_more", "percent_less", "percent_inverse", "percent_complement")
"""What a percent ``p`` may turn into: p/100, 1 + p/100, 1 - p/100, 100/p (25 % -> divide by 4), 100 - p."""
LITERAL_KINDS = ("literal", *PERCENT_KINDS, "converted")
KIND_OF_PREFIX = {v: k for k, v in _PREFIX.items()}


@dataclass(frozen=True)
class Source:
    """Where one annotation number comes from."""

    kind: TLiteral["literal", "percent_of", "percent_more", "percent_less", "percent_inverse", "percent_complement",
                   "converted", "node", "constant"]
    ref: int = -1
    """Question literal index (``literal``, ``percent_of``) or annotation index (``node``)."""
    value: Fraction = Fraction(0)
    """The constant's value (``constant``), or the unit factor of a ``converted`` literal."""
    cue: str = ""
    """The question word that justifies a constant."""

    def key(self) -> str:
        """Compact stable name: ``q3`` (literal 3), ``p3`` (literal 3 / 100), ``m3`` (1 + literal 3 / 100),
        ``l3`` (1 - literal 3 / 100), ``r3`` (100 / literal 3), ``k3`` (100 - literal 3), ``n1`` (annotation 1),
        ``c60`` (a constant), ``v3*12`` (literal 3 converted by a factor 12: ``4 feet`` as 48 inches)."""
        if self.kind == "constant":
            return f"c{self.value}"
        if self.kind == "converted":
            return f"v{self.ref}*{self.value}"
        return _PREFIX[self.kind] + str(self.ref)



def source_value(s: Source, literal_value: Any) -> Any:
    """The value a literal-based source gives when its question literal has ``literal_value``
    (a ``Fraction``, or a z3 term: the same arithmetic)."""
    if s.kind == "percent_of":
        return literal_value / 100
    if s.kind == "percent_more":
        return 1 + literal_value / 100
    if s.kind == "percent_less":
        return 1 - literal_value / 100
    if s.kind == "percent_inverse":
        return 100 / literal_value
    if s.kind == "percent_complement":
        return 100 - literal_value
    if s.kind == "converted":
        return literal_value * s.value.numerator / s.value.denominator
    return literal_value
