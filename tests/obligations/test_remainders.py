"""Division with remainder and congruences between written integers (``obligations.extraction.remainders``)."""

import pytest
from faithsieve.obligations.extraction.remainders import (
    MAX_PER_STEP,
    remainder_obligations,
)

from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps


def claims(*steps: str) -> list[str]:
    return [str(ob.claim) for ob in remainder_obligations(proof_from_steps("P", list(steps)))]


def first(*steps: str) -> int | None:
    return localize(proof_from_steps("Find the remainder.", list(steps))).first_refutation


@pytest.mark.parametrize(("step", "claim"), [
    ("1529 ÷ 6 = 254 with a remainder of 5.", "1529 = 6 * 254 + 5"),
    (r"$$355\div 6=59\;\mathrm{R}\;1.$$", "355 = 6 * 59 + 1"),
    (r"Then \(770 \div 333 = 2\) with a remainder of \(104\).", "770 = 333 * 2 + 104"),
    (r"\(1121 \div 243 = 4\) remainder \(149\)", "1121 = 243 * 4 + 149"),
    (r"$$ 10 \div 13 = 0\, \text{R}\, 10 $$", "10 = 13 * 0 + 10"),
    ("100 divided by 7 is 14 with remainder 2.", "100 = 7 * 14 + 2"),
    ("The remainder when 100 is divided by 7 is 2.", "100 mod 7 = 2"),
    (r"so \[327 \equiv 4 \pmod{17}.\]", "(327 - 4) mod 17 = 0"),
    (r"We have $100 \equiv -2 \pmod{17}$.", "(100 + 2) mod 17 = 0"),
    ("so 10 ≡ −1 (mod 11).", "(10 + 1) mod 11 = 0"),  # the typographic minus sign (U+2212)
    ("Hence 38 ≡ 3 (mod 5).", "(38 - 3) mod 5 = 0"),
    (r"\[2^{10} = 1024 \equiv 4 \pmod{17}\]", "(1024 - 4) mod 17 = 0"),  # a link of a chain
])
def test_claims_are_read_with_the_meaning_the_notation_fixes(step: str, claim: str) -> None:
    assert claims(step) == [claim]


@pytest.mark.parametrize("step", [
    "1529 ÷ 6 = 254 with a remainder of 5.",
    r"$$355\div 6=59\;\mathrm{R}\;1.$$",
    "The remainder when 100 is divided by 7 is 2.",
    r"so \[327 \equiv 4 \pmod{17}.\]",
    r"We have $100 \equiv -2 \pmod{17}$.",
])
def test_true_claims_pass(step: str) -> None:
    assert first(step) is None


@pytest.mark.parametrize("step", [
    "1529 ÷ 6 = 255 with a remainder of 4.",  # 6 · 255 + 4 = 1534
    r"$$355\div 6=58\;\mathrm{R}\;5.$$",  # 6 · 58 + 5 = 353
    "The remainder when 100 is divided by 7 is 3.",
    r"so \[327 \equiv 8 \pmod{17}.\]",
    "Hence 38 ≡ 2 (mod 5).",
])
def test_false_claims_are_refuted(step: str) -> None:
    assert first("We start.", step) == 2


@pytest.mark.parametrize("step", [
    "Is 1529 ÷ 6 = 255 with a remainder of 4?",  # a question
    "It is not true that 38 ≡ 2 (mod 5).",  # a denial
    "Suppose 38 ≡ 2 (mod 5).",  # a supposition
    "Check whether 1529 ÷ 6 = 255 with a remainder of 4.",  # a test
    r"$2^5 \equiv 4 \pmod{7}$",  # 5 is an exponent, not the number claimed congruent
    r"$3 \cdot 12 \equiv 2 \pmod{7}$",  # 12 is a factor of a product
    r"\( 5k + 1 \equiv 3 \pmod{4} \)",  # 1 is a term of a sum (spaces between)
    r"\[R \equiv 4 + 5 \equiv 9 \pmod{7}\]",  # 5 ends a sum
    r"\[ 9 \cdot 51 + 3^6 \equiv 0 + 15 \pmod{17} \]",  # neither side is a single number
    "1,529 ÷ 6 = 255 R 4",  # 529 is cut out of 1,529
    "(−1)^3 = −1 ≡ 10 (mod 11)",  # 1 is the magnitude of −1 (typographic minus): a signed left side
    "x – 1 ≡ 10 (mod 11)",  # an en dash written for minus
    "2.5 ÷ 6 = 1 R 4",  # a decimal
    r"$n \equiv 3 \pmod{4}$",  # a letter: not a closed claim
    "The remainder when 100 is divided by 7 is 9.",  # 9 is not a remainder mod 7: another convention
    "The remainder when 100 is divided by 7 is -5.",  # a least absolute residue: not guessed at
])
def test_what_is_not_an_asserted_closed_claim_is_not_read(step: str) -> None:
    assert claims(step) == []


def test_a_zero_divisor_or_modulus_is_not_read() -> None:
    assert claims("5 ÷ 0 = 1 R 5", r"$5 \equiv 2 \pmod{0}$") == []


def test_the_number_of_claims_read_per_step_is_bounded() -> None:
    step = " ".join(f"{10 + k} ≡ {k % 3} (mod 1000)." for k in range(MAX_PER_STEP + 5))
    assert len(claims(step)) == MAX_PER_STEP
    assert len(claims(" ".join(f"{10 + k} ≡ {k % 3} (mod 1000)." for k in range(MAX_PER_STEP - 1)))) == MAX_PER_STEP - 1


def test_a_refutation_names_the_claim_as_read() -> None:
    v = localize(proof_from_steps("P", ["1529 ÷ 6 = 255 with a remainder of 4."]))
    assert v.first_error_step == 1 and "1529 = 6 * 255 + 4" in (v.reason or "")
