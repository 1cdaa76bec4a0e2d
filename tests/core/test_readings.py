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
    ("$12:00 + 3 = 15:00$", "cut out of a longer one"),
    (r"so 6_8 = 6 \\cdot 8^0 = 6 and 7_8 = 7.", "cut out of a longer expression"),  # "8^0 = 6" is what is read
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
    assert v.first_error_step == 2
