"""Notation with more than one meaning in common use: refuted only when false under every reading;
a refutation resting on a guess with no second reading is recorded unknown with the guess as reason."""

import pytest

from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps


def verdict(step: str):  # type: ignore[no-untyped-def]
    return localize(proof_from_steps("Compute.", [step, "Done."]))


def reasons(v) -> str:  # type: ignore[no-untyped-def]
    return " ".join(e.reason or "" for s in v.steps for e in s.evidence)


@pytest.mark.parametrize(("holds", "fails", "why"), [
    (r"$\log 100 = 2$", r"$\log 100 = 9$", "'log' without a base"),
    (r"$\log 8 \cdot \log 10 = 3 \log 2$", r"$\log 1000 = 2$", "'log' without a base"),
    (r"$\sin 30 = \frac{1}{2}$", r"$\sin 30 = 0.7$", "without a unit"),
    (r"$\cos 60 = 0.5$", r"$\cos 60 = 0.9$", "without a unit"),
    ("2^3^2 = 64", "2^3^2 = 100", "a^b^c"),
    ("In binary, 1 + 1 = 10.", "In binary, 1 + 1 = 11.", "in base 2"),
    ("45° = π/4 rad.", "90° = π/3.", "degrees beside a multiple of pi"),
    ("Then 3! = 6 and 3!! = 3.", "Then 5!! = 16.", "double factorial"),
    ("In Z_5, 3 · 2 = 1.", "In Z_5, 3 · 2 = 2.", "modulo 5"),
    ("Modulo 7, 3 + 5 = 1.", "Modulo 7, 3 + 5 = 2.", "modulo 7"),
    # the stated modulus scopes over the rest of its sentence, past earlier formulas in it
    ("In Z_5, 3 + 4 = 2 and 2 + 4 = 1.", "In Z_5, 3 + 4 = 2 and 2 + 4 = 3.", "modulo 5"),
    ("Working mod 7: 3 + 5 = 1, and 4 + 4 = 1.", "Working mod 7: 3 + 5 = 1, and 4 + 4 = 2.", "modulo 7"),
    (r"In $\mathbb{Z}/7\mathbb{Z}$, 3 + 5 = 1.", r"In $\mathbb{Z}/7\mathbb{Z}$, 3 + 5 = 4.", "modulo 7"),
    ("Over GF(2), 1 + 1 = 0.", "Over GF(2), 1 + 1 = 1.", "modulo 2"),
    ("In base 8, 7 + 1 = 10.", "In base 8, 7 + 2 = 10.", "in base 8"),
    ("$[100/3] + [100/9] + [100/27] = 33 + 11 + 3$", "$[100/3] + [100/9] + [100/27] = 30 + 11 + 3$", "square brackets"),
])
def test_refuted_only_under_every_reading(holds: str, fails: str, why: str) -> None:
    v = verdict(holds)
    assert v.verdict == "correct"
    assert why in reasons(v)
    assert verdict(fails).first_error_step == 1


def test_explicit_notation_has_one_reading() -> None:
    assert verdict("$2^{3^2} = 64$").first_error_step == 1  # braces fix the order
    assert verdict(r"$\sin 30^\circ = 0.7$").first_error_step == 1  # the degree sign fixes the unit
    assert verdict(r"$\sin(\pi/6) = 0.7$").first_error_step == 1


@pytest.mark.parametrize(("step", "why"), [
    (r"The box holds $4 \times 5 \times 6 = 120 \text{ cm}^3$.", "unit with an exponent"),
    (r"The area is $6 \times 6 = 36 \, \text{m}^2$.", "unit with an exponent"),
    (r"$2,\!500 \times 2 = 5,\!000$.", "cut out of a longer one"),
    (r"so 6_8 = 6 \\cdot 8^0 = 6 and 7_8 = 7.", "cut out of a longer expression"),  # "8^0 = 6" is what is read
    ("Subtract: (3-2), (0-2), (2-2), (5-2) = 1, -2, 0, 3.", "pair up element by element"),
    ("Squares: 1^2, (-2)^2, 0^2, 3^2 = 1, 4, 0, 9.", "pair up element by element"),
    ("This means that 5 + 1 + 1 = 12 in base b.", "does not fix"),
    ("This means that $5 + 1 + 1 = 12$ in base $b$.", "does not fix"),
    ("In base b, we need 5 + 1 + 1 = 12.", "does not fix"),
    ("The derivative is 3x^2, which at x = 2 equals 12.", "value condition"),
    ("log_{10} 0.01 = −2.", "cut out of a longer expression"),
])
def test_a_guess_without_a_second_reading_is_unknown(step: str, why: str) -> None:
    v = verdict(step)
    assert v.verdict == "correct"
    assert why in reasons(v)


def test_factorial_or_not_equal() -> None:
    assert verdict("We have 7*2!=14 possibilities.").verdict == "correct"  # 7 * 2! = 14
    assert verdict("We have 7*3!=42 possibilities.").verdict == "correct"  # 7 * 3! = 42 holds (7 * 3 != 42 too)
    assert verdict("We have 2*3!=6 possibilities.").first_error_step == 1  # 2 * 3! = 12 and 2 * 3 = 6: false both ways


def test_latex_sizing_commands_do_not_cut_a_formula() -> None:
    assert verdict(r"\[ \left(\frac{3}{2}\right)^2 = \frac{9}{2} \]").first_error_step == 1
    assert verdict(r"\[\boxed{4 - 4} = -3\]").first_error_step == 1


def test_the_same_numbers_written_whole_are_checked() -> None:
    assert verdict("$2500 \\times 2 = 6000$.").first_error_step == 1
    assert verdict("The box holds $4 \\times 5 \\times 6 = 130$ cubic centimetres.").first_error_step == 1


@pytest.mark.parametrize(("step", "expected"), [
    ("Since 4x = 0 for all x in G, every order divides 4.", None),  # elements of a group, not numbers
    ("Since $4x = 0$ for all $x$, we are done.", 1),
    (r"Since $4x = 0$ for all $x \in \mathbb{R}$, we are done.", 1),
    (r"Clearly $\sqrt{a^2} = a$ for all a.", None),  # holds for every positive a: lengths, counts
    (r"Clearly $\sqrt{a^2} = 2a$ for all a.", 1),
    ("f(pi) = 0 since sin 4pi = 0.", None),  # "4pi = 0" is what is read: sin was applied to it
])
def test_the_domain_of_a_quantified_identity(step: str, expected: int | None) -> None:
    assert verdict(step).first_error_step == expected


def test_a_substituted_value_is_an_input_not_a_solution() -> None:
    v = localize(proof_from_steps("Lens: $1/f = 1/u + 1/v$.", ["We have $2f = 30$.", "Substitute $f = 10$ into the formula."]))
    assert v.verdict == "correct"
    v = localize(proof_from_steps("Lens.", ["We have $2f = 30$.", "So $f = 10$."]))
    assert v.first_refutation == 2


@pytest.mark.parametrize(("holds", "fails"), [
    ("We have 2^5 = 32 = 10 mod 11.", "We have 2^5 = 32 = 9 mod 11."),
    ("So 3^4 = 81 = 4 mod 7.", "So 3^4 = 81 = 5 mod 7."),
    ("Hence 5 + 12 = 1 + 2 mod 7.", "Hence 5 + 12 = 1 + 3 mod 7."),  # 'mod n' after a sum reduces the whole right side
    ("Then 3^{100} = 3^4 = 4 mod 7.", "Then 3^{100} = 3^4 = 5 mod 7."),  # a trailing 'mod n' qualifies every link
])
def test_equals_then_mod_is_also_a_congruence(holds: str, fails: str) -> None:
    v = verdict(holds)
    assert v.verdict == "correct"
    assert "congruence modulo n" in reasons(v)
    assert verdict(fails).first_error_step == 1


def test_mod_as_an_operator_keeps_one_reading() -> None:
    assert verdict("17 mod 5 = 2.").verdict == "correct"
    assert verdict("17 mod 5 = 3.").first_error_step == 1  # 'mod' does not end the right side: no congruence reading
    assert verdict("We have 2^5 = 32 = 10.").first_error_step == 1  # no 'mod' at all: one reading


def test_runs_of_computations_are_not_lists() -> None:
    assert verdict("We add 2 + 3 = 5, 5 + 4 = 10, 10 + 1 = 11.").first_error_step == 1  # a relation before it
    assert verdict("So 1, 3 + 4 = 8, and 9.").first_error_step == 1  # no list of values after it
    assert verdict("Then 5 - 2 = 1, so we stop.").first_error_step == 1


def test_a_base_reading_needs_the_digits_and_the_words() -> None:
    assert verdict("In base 8, 7 + 9 = 10.").first_error_step == 1  # 9 is no base-8 digit: base ten only
    assert verdict("In the base case, 1 + 1 = 3.").first_error_step == 1  # "base case" names no base
    assert verdict("So 1 + 1 = 3 in the base case.").first_error_step == 1
    assert verdict("So 1 + 1 = 10.").first_error_step == 1
    # single digits mean the same in every base: no ambiguity to wait on
    assert verdict("This means that $5 + 1 + 1 = 6$ in base $b$.").first_error_step == 1
    assert verdict("In base b, we need 5 + 1 + 1 = 6.").first_error_step == 1


def test_a_value_condition_alone_is_still_checked() -> None:
    assert verdict("At x = 2, we get 3 + 4 = 8.").first_error_step == 1


def test_degrees_without_pi_keep_one_reading() -> None:
    assert verdict("180° − 50° − 60° = 80°.").first_error_step == 1
    assert verdict(r"We get \(\sqrt{16} + 1 = 6\).").first_error_step == 1  # a command inside the formula cuts nothing


def test_double_factorial_and_modulus_readings_are_bounded() -> None:
    from fractions import Fraction

    from faithsieve.obligations.extraction import readings as R

    from faithsieve.mathtext.ast import Call, Num
    big = Call("factorial", (Call("factorial", (Num(Fraction(R.MAX_DOUBLE_FACTORIAL + 1), "x", 0),)),))
    with pytest.raises(R._NotThisReading):
        R._double_factorial(big)
    ok = Call("factorial", (Call("factorial", (Num(Fraction(R.MAX_DOUBLE_FACTORIAL), "x", 0),)),))
    assert R._double_factorial(ok) != ok
    assert verdict(f"Modulo {R.MAX_MODULUS + 1}, 3 + 5 = {8 - R.MAX_MODULUS - 1}.").first_error_step == 1
    assert verdict(f"Modulo {R.MAX_MODULUS}, 3 + 5 = {8 - R.MAX_MODULUS}.").verdict == "correct"
    assert verdict("We have 3 + 5 = 1.").first_error_step == 1  # no modulus named


def test_a_numbered_step_is_no_ratio() -> None:
    assert verdict("Step 3: 15 − 7 = 9.").first_error_step == 1  # the colon follows the step number
    assert verdict("We get 2^10 − 1 = 1024.").first_error_step == 1  # no brace group: read whole, still refuted


def test_a_stated_modulus_ends_with_its_sentence() -> None:
    # "Modulo 7," scopes over its own sentence only: the next sentence computes in the integers again
    assert verdict("Modulo 7, 3 + 5 = 1. Also 4 + 4 = 1.").first_error_step == 1
