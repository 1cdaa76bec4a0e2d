"""LaTeX written without delimiters inside plain text is read as it would be between $ $."""

import pytest

from faithsieve.mathtext import extract_formulas, find_segments, render_chain
from faithsieve.mathtext.barelatex import MAX_BARE_SPAN, bare_latex_spans
from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps


def spans(text: str) -> list[str]:
    return [text[a:b] for a, b in bare_latex_spans(text, 0, len(text))]


def chains(text: str) -> list[str]:
    return [render_chain(f.chain) for f in extract_formulas(text) if f.chain.rels]


def first(problem: str, *steps: str) -> int | None:
    return localize(proof_from_steps(problem, list(steps))).first_refutation


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"Pairing the first and last terms, S = 50 \cdot 101 = 5050.", [r"S = 50 \cdot 101 = 5050"]),
        (r"In particular a_{10} = 2^{10} - 1 = 1023.", [r"a_{10} = 2^{10} - 1 = 1023"]),
        # prose words, sentence ends, ':' and line breaks end a stretch
        (r"So x = \frac{1}{2} and then y = 3.", [r"x = \frac{1}{2}"]),
        ("Case 1: \\sqrt{4} = 2.\nNext line 3 = 3", [r"\sqrt{4} = 2"]),
        # a product of letters glued to a coefficient, and 'ab', are math; 'is' is prose
        (r"Multiplying, 8abc \le (a+b)(b+c)(c+a) is what we want.", [r"8abc \le (a+b)(b+c)(c+a)"]),
        # without a command or a ^{ } / _{ } group the plain reading stays
        ("So 2^3 = 8 and x_1 = 4.", []),
        # currency and percent keep their plain reading
        (r"A 20% rise: 50 \cdot 1.2 = 60.", [r"50 \cdot 1.2 = 60"]),
        # a bullet at the start of a line is not a minus sign
        ("- \\frac{9}{3} = 3", [r"\frac{9}{3} = 3"]),
    ],
)
def test_bare_latex_spans(text: str, expected: list[str]) -> None:
    assert spans(text) == expected


def test_a_bare_latex_formula_is_read_whole() -> None:
    assert chains(r"Pairing the first and last terms, S = 50 \cdot 101 = 5050.") == ["S = 50 * 101 = 5050"]
    assert chains(r"The area is \frac12 \cdot 6 \cdot 5 = 15.") == ["1 / 2 * 6 * 5 = 15"]
    assert [s.latex for s in find_segments(r"Thus S = 50 \cdot 101 = 5050.")] == [False, True, False]


def test_a_value_is_not_cut_out_of_a_bare_latex_product() -> None:
    # read as plain text, 'S = 50' was a value of S and '2S = 10100' a false substitution
    assert first("Find S and T.", r"Pairing the first and last terms, S = 50 \cdot 101 = 5050.",
                 "So T = 2S = 10100.") is None
    assert first("Evaluate a_{10}.", r"By the formula, a_{10} = 2^{10} - 1 = 1023.") is None


def test_bare_latex_arithmetic_is_checked() -> None:
    assert first("Choose 4 of 9.", r"\binom{9}{4} = \frac{9 \cdot 8 \cdot 7 \cdot 6}{24} = 136.") == 1
    assert first("Choose 4 of 9.", r"\binom{9}{4} = \frac{9 \cdot 8 \cdot 7 \cdot 6}{24} = 126.") is None
    assert first("Find a_{15}.", r"a_{15} = 5 + 14 \cdot 3 = 45.") == 1
    assert first("Find the modulus.", r"|5 - 12i| = \sqrt{25 + 144} = \sqrt{179}.") == 1
    assert first("Find the modulus.", r"|5 - 12i| = \sqrt{25 + 144} = \sqrt{169} = 13.") is None


def test_a_bare_latex_stretch_is_bounded() -> None:
    text = r"1 \cdot " * (MAX_BARE_SPAN // 2)
    found = bare_latex_spans(text, 0, len(text))
    assert len(found) >= 2
    assert all(b - a <= MAX_BARE_SPAN + 16 for a, b in found)


def test_open_brace_groups_are_not_rescanned() -> None:
    calls = []
    import faithsieve.mathtext.barelatex as bare

    real = bare.brace_group_end

    def counting(text: str, i: int) -> int:
        calls.append(i)
        return real(text, i)

    text = r"\frac{1 " * 3000
    bare.brace_group_end = counting
    try:
        bare_latex_spans(text, 0, len(text))
    finally:
        bare.brace_group_end = real
    # one scan per MAX_BRACE_SCAN characters at most, not one per open group
    assert len(calls) <= len(text) // bare.MAX_BRACE_SCAN + 2


@pytest.mark.parametrize(("step", "reading"), [
    # read as plain text these were pieces cut out of a longer expression (unknown); read as
    # LaTeX the whole formula is there
    (r"So the area is \frac{1}{2}(4)(4) = 8.", "1 / 2 * 4 * 4 = 8"),
    (r"Simplify: 7 = 2 \times 7 \times \sin \theta.", "7 = 2 * 7 * sin(theta)"),
    ("Therefore, f^{-1}(0)=3.", "fn:f^{-1}(0) = 3"),  # an unknown function applied to 0
    ("The answer is 2^{10} − 1 = 1023.", "2^10 - 1 = 1023"),
])
def test_formulas_once_cut_are_read_whole(step: str, reading: str) -> None:
    assert reading in chains(step)
    assert first("Q", step) is None


def test_mod_after_a_bare_latex_chain_keeps_its_congruence_reading() -> None:
    # 'mod' is notation, not a prose word: the stretch does not end before it, so the trailing
    # 'mod 7' still qualifies the whole chain (3^100 ≡ 3^4 ≡ 4 mod 7)
    assert first("Q", "Then 3^{100} = 3^4 = 4 mod 7.") is None
    assert first("Q", "Then 3^{100} = 3^4 = 5 mod 7.") == 1


def test_a_whole_bare_latex_formula_is_refuted_when_false() -> None:
    assert first("Q", r"So the area is \frac{1}{2}(4)(4) = 9.") == 1
    assert first("Q", r"That is -12\cdot 0 + 20\cdot (-1) - 36\cdot (-1) = -20 + 36 = 17.") == 1


@pytest.mark.parametrize("formula", [r"S = 50 \cdot 101 = 5050", r"a_{10} = 2^{10} - 1 = 1023",
                                     r"\binom{9}{4} = \frac{9 \cdot 8 \cdot 7 \cdot 6}{24} = 126"])
def test_read_as_between_dollars(formula: str) -> None:
    # the README's promise: the same chain as the delimited formula
    assert chains(f"Hence {formula}.") == chains(f"Hence ${formula}$.") != []
