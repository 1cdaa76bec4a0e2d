"""Hostile proofs in the notations read since 2916f76 (double factorials, moduli, bases, remainders,
retractions, letters given new values), and the bounds those readings keep.

Every bound is pinned by a literal value on both sides of it, so loosening it fails a test; the
hostile proofs must come back (never raise) within the proof time limit, with ``unknown``
evidence where a claim is too large to decide.
"""

from __future__ import annotations

import time
from fractions import Fraction

import pytest
from faithsieve.obligations.extraction import readings as R
from faithsieve.obligations.extraction.remainders import remainder_obligations
from faithsieve.obligations.extraction.wordclaims import glued
from faithsieve.statetree.rebinding import solved_again
from faithsieve.statetree.retraction import retracted

from faithsieve.core.settings import Settings
from faithsieve.mathtext.ast import Call, Num
from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps

LIMIT_S = Settings().proof_time_limit_s


def run(*steps: str):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    v = localize(proof_from_steps("Hostile.", list(steps)))
    assert time.perf_counter() - t0 < LIMIT_S  # a hang guard (the proof's own budget), not a speed figure
    return v


def statuses(v) -> list[str]:  # type: ignore[no-untyped-def]
    return [e.status for s in v.steps for e in s.evidence]


def claims(*steps: str) -> list[str]:
    return [str(ob.claim) for ob in remainder_obligations(proof_from_steps("P", list(steps)))]


def _double(n: int) -> Call:
    return Call("factorial", (Call("factorial", (Num(Fraction(n), str(n), 0),)),))


# -- the bounds, each pinned on both sides --------------------------------------------------------------

def test_double_factorial_reading_stops_at_400() -> None:
    assert R._double_factorial(_double(400)) != _double(400)
    with pytest.raises(R._NotThisReading):
        R._double_factorial(_double(401))


def test_a_stated_modulus_is_read_up_to_a_million() -> None:
    # 3 + 5 = 8 - n holds modulo n only: read modulo n at n = 10**6, plain (and false) above it
    assert run("Modulo 1000000, 3 + 5 = -999992.", "Done.").first_error_step is None
    assert run("Modulo 1000001, 3 + 5 = -999993.", "Done.").first_error_step == 1


def test_a_stated_base_is_read_from_2_to_16() -> None:
    assert run("In base 16, 9 + 9 = 12.", "Done.").first_error_step is None  # 9 + 9 = 0x12
    assert run("In base 17, 9 + 9 = 11.", "Done.").first_error_step == 1  # 18 = 1·17 + 1, but base 17 is not read
    assert run("In base 2, 1 + 1 = 10.", "Done.").first_error_step is None
    assert run("In base 1, 1 + 1 = 10.", "Done.").first_error_step == 1


def test_remainder_claims_read_integers_of_at_most_30_digits() -> None:
    a = 10**29 + 4  # 30 digits
    assert claims(f"{a} ÷ 7 = {a // 7} R {a % 7}.") == [f"{a} = 7 * {a // 7} + {a % 7}"]
    b = 10**30 + 4  # 31 digits: part of something longer, not read
    assert claims(f"{b} ÷ 7 = {b // 7} R {b % 7}.") == []


def test_remainder_claims_stop_at_20_per_step() -> None:
    step = " ".join(f"{10 + k} ≡ {k % 3} (mod 1000)." for k in range(30))
    assert len(claims(step)) == 20
    assert len(claims(step, step)) == 40  # per step, not per proof


def test_a_value_solved_again_has_at_most_12_digits() -> None:
    assert solved_again(" gives x = 123456789012", frozenset({"x"}), {"x": Fraction(4)})
    assert not solved_again(" gives x = 1234567890123", frozenset({"x"}), {"x": Fraction(4)})


def test_a_retraction_marker_must_follow_within_a_few_characters() -> None:
    text = "1 + 1 = 3"
    assert retracted(text + "   ------   wait", len(text))
    assert retracted(text + " " * 6 + "wait", len(text))
    assert not retracted(text + " " * 7 + "wait", len(text))  # spaces count against both [ \t]{0,3}
    assert not retracted(text + " ------- wait", len(text))


class _Spy(str):
    """A text that records the slices taken of it (the windows a reader looks at)."""

    def __new__(cls, text: str) -> "_Spy":
        out = super().__new__(cls, text)
        out.slices = []  # type: ignore[attr-defined]
        return out

    def __getitem__(self, key):  # type: ignore[no-untyped-def]
        if isinstance(key, slice):
            self.slices.append(len(range(*key.indices(len(self)))))  # type: ignore[attr-defined]
        return super().__getitem__(key)


def test_a_retraction_is_looked_for_in_60_characters() -> None:
    # the marker pattern is bounded itself; the window keeps each formula's look at the text constant
    text = _Spy("1 + 1 = 3 — wait" + " filler" * 3000)
    assert retracted(text, 9)
    assert text.slices and max(text.slices) == 60  # type: ignore[attr-defined]


def test_a_solved_value_is_looked_for_in_80_characters() -> None:
    after = _Spy(" gives x = 3" + " filler" * 3000)
    assert solved_again(after, frozenset({"x"}), {"x": Fraction(4)})
    assert after.slices and max(after.slices) == 80  # type: ignore[attr-defined]


def test_an_operator_glues_a_number_within_40_characters() -> None:
    assert glued("7 -" + " " * 39 + "1529", 42)
    assert not glued("7 -" + " " * 40 + "1529", 43)  # the operator is 41 characters back


# -- hostile proofs through the pipeline ------------------------------------------------------------------

GUARDED = {
    "double factorial of 99999": ["99999!! = 5."],
    "double factorial nested": ["((400!!)!!)!! = 5."],
    "a power reduced modulo 7": ["2^100000 = 1 mod 7."],
    "a factorial modulo a prime": ["Modulo 999983, 99999!! = 1."],
    "a power in a stated modulus": ["Modulo 7, 3^1000000 = 1."],
    "a power in base 9": ["In base 9, 88888888^8888 = 1."],
}


@pytest.mark.parametrize("name", sorted(GUARDED))
def test_a_claim_too_large_to_decide_is_unknown(name: str) -> None:
    v = run(*GUARDED[name])
    assert statuses(v) == ["unknown"], statuses(v)
    assert v.first_error_step is None


HOSTILE = {
    "a 5000-digit modulus": ["2^5 = 32 = 10 mod " + "9" * 5000 + "."],
    "a 5000-digit congruence modulus": ["327 ≡ 8 (mod " + "9" * 5000 + ")."],
    "base 36, 10,000 digits": ["In base 36, " + "z" * 10_000 + " + 1 = 10."],
    "base 2, 9,000 digits": ["In binary, " + "1" * 9_000 + " + 1 = 1" + "0" * 9_000 + "."],
    "base 3, 9,000 digits": ["In base 3, " + "2" * 9_000 + " + 1 = 1" + "0" * 9_000 + "."],
    "10,000 'wait' retractions": [("1 + 1 = 3 — wait, " * 1000)[:19_990] for _ in range(10)],
    "10,000 'no,' retractions": [("1 + 1 = 3, no, " * 1334)[:19_990] for _ in range(8)],
    "5,000 rebindings of x": ["Let x = 1."] + ["".join(f"x = {k} + 1 = {k + 1}. " for k in range(i, i + 500))
                                              for i in range(1, 5001, 500)],
    "5,000 letters solved again": ["x = 4."] + ["".join(f"3x = {3 * k} gives x = {k}. " for k in range(i, i + 500))
                                                for i in range(1, 5001, 500)],
    "a 3000-link congruence chain": ["2 ≡ " + " ≡ ".join(["2"] * 3000) + " (mod 7)."],
    "a 2000-link chain reduced mod 11": ["2^5 = " + " = ".join(["32"] * 2000) + " = 10 mod 11."],
    "500 nested mods": ["(" * 500 + "3" + " mod 5)" * 500 + " = 3."],
    "2000 nested brackets mod 7": ["x = " + "(" * 2000 + "1" + ")" * 2000 + " mod 7."],
    "2400 double factorials summed": [" + ".join(["400!!"] * 2400) + " = 0."],
    "remainders of 30-digit numbers": [("9" * 30 + " ÷ " + "7" * 30 + " = " + "9" * 30 + " R " + "9" * 30 + ". ") * 100],
    "zero and fractional moduli": ["5 = 1 mod 0.", "5 = 1 mod 0.5.", "5 ÷ 0 = 1 R 5.", "5 ≡ 1 (mod 0)."],
    "a letter rebound after a huge premise": ["x^x^x = 256^256 - 1 gives x = 4.", "x = 4 + 2 = 6."],
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_notation_proof_comes_back(name: str) -> None:
    v = run(*HOSTILE[name])
    assert v.verdict in ("correct", "error")
    assert set(statuses(v)) <= {"verified", "refuted", "unknown"}
