"""Formula extraction from model-written text (table tests)."""

import sys

import pytest

from faithsieve.mathtext import extract_formulas, render_chain
from faithsieve.mathtext.formulas import MAX_FORMULAS_PER_STEP
from faithsieve.mathtext.lexer import _LATEX_CMDS, _OP_WORDS, _UNI_OPS, OP, POW, REL


def chains(text: str) -> list[str]:
    return [render_chain(f.chain) for f in extract_formulas(text) if f.chain.rels]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # plain-text arithmetic, money, percentages, "of", "x" as times
        ("5000 + 10000 + 30000 = 43000", ["5000 + 10000 + 30000 = 43000"]),
        ("Total cost = $3.5 * 4000 = $14,000.", ["3.5 * 4000 = 14000"]),
        ("2 × 15000 = 30000 and 2 x 15000 = 30000", ["2 * 15000 = 30000", "2 * 15000 = 30000"]),
        ("1/3 of 18 = 6", ["1 / 3 * 18 = 6"]),
        ("25% of 80 = 20", ["25% * 80 = 20"]),
        ("It costs $1,200 in total, 1,200 / 4 = 300", ["1200 / 4 = 300"]),
        ("10/3 is approximately 3.33", ["10 / 3 ≈ 3.33"]),
        ("so 10/3 ≈ 3.33", ["10 / 3 ≈ 3.33"]),
        ("2 1/2 + 1 = 3.5", ["5/2 + 1 = 3.5"]),
        ("21 mod 19 = 2", ["21 mod 19 = 2"]),
        # LaTeX delimiters and macros
        (r"\( 1/3 \times 18 = 6 \)", ["1 / 3 * 18 = 6"]),
        (r"\[ \frac{3}{4} + \frac12 = \frac{5}{4} \]", ["3 / 4 + 1 / 2 = 5 / 4"]),
        (r"$\sqrt{16} = 4$ and $$2^{10} \div 4 = 256$$", ["sqrt(16) = 4", "2^10 / 4 = 256"]),
        (r"\(2 \cdot 3 = 6\), \boxed{7 - 1 = 6}", ["2 * 3 = 6", "7 - 1 = 6"]),
        (r"\[ 26^3 \times 10^3 = 17,576,000 \]", ["26^3 * 10^3 = 17576000"]),
        (r"\(2\frac{6}{7} = \frac{20}{7}\)", ["20/7 = 20 / 7"]),  # a mixed number is one literal
        (r"\(\binom{5}{2} = 10\), \(5! = 120\)", ["binom(5, 2) = 10", "5! = 120"]),
        # chains and inequalities with variables
        ("Then 2x + 3 = 7, so x = 2.", ["2 * x + 3 = 7", "x = 2"]),
        (r"\( 0 < x \le 1 \)", ["0 < x <= 1"]),
        # units after numbers are not part of the value; named quantities stop a formula
        (r"\(2 \text{ books} \times 2 \text{ pounds} = 4 \text{ pounds}\)", ["2 * 2 = 4"]),
        (r"\[ 52 = \text{Jamal's apples} + 8 \]", []),
        # truncated members are dropped, never checked
        ("6 pairs * 2 = 12 shoes", []),
        ("half of 2000 = 1000", []),
        ("1st - 5 = 6th", []),
        (r"\( x = -3 \pm 11 \)", []),
        (r"\( 0.\overline{6} = \frac{2}{3} \)", ["2/3 = 2 / 3"]),  # a repeating decimal, read exactly
        (r"\(\frac{1}{2} \text{ inch} = 20 \text{ miles}\)", []),
        # functions are opaque, not products
        (r"\( f(2) = 7 \)", ["fn:f(2) = 7"]),
        # number words, dashes, bullets
        ("So 8 times 1/2 equals 4", ["8 * 1 / 2 = 4"]),
        ("12 divided by 4 = 3", ["12 / 4 = 3"]),
        ("He spent 120 – 80 - 15 = 25", ["120 - 80 - 15 = 25"]),
        ("pages 5–10 = 6", []),
        ("Steps:\n- 5 + 3 = 8", ["5 + 3 = 8"]),
        # ambiguous or unread context: skipped
        ("W = 1 1/2 / 1/2 = 3", []),
        ("48 = 100% + 20% = 120% of the actual number", []),
        ("Nikita = (1/2) 278 + 11 = 150 points", []),
        # an aligned chain continues across line breaks; prose in between ends it
        (r"\begin{align*} (x+1)^2 &= x^2 + 2x + 1 \\ &= 2 + 3 \end{align*}",
         ["(x + 1)^2 = x^2 + 2 * x + 1", "x^2 + 2 * x + 1 = 2 + 3"]),
        (r"\[ 26^3 = 17576 \] and then \[ = 5 \]", ["26^3 = 17576"]),
        # several equations run together on one line
        ("2r + r = 9 3r = 9 r = 3.", ["2 * r + r = 9", "3 * r = 9", "r = 3"]),
        ("Width = 60 cm = 0.6 m (converting)", []),
        # function names in plain text; glued words; markup fragments
        ("cos(0) = 1 and floor(2.5) = 2", ["cos(0) = 1", "floor(2.5) = 2"]),
        ("Γ(5) = 24", []),
        ("<img src=x onerror=alert(1)> + 1 = 2", []),
        ("he is 6th + 2 = 8th", []),
        # unit words after numbers in plain text; different units on the two sides are not a computation
        ("Total = 12 shoes * $60/shoe = $720.", ["12 * 60 = 720"]),
        ("5 apples + 3 apples = 8 apples", ["5 + 3 = 8"]),
        ("2 hours = 120 minutes", []),
        ("2 dozen = 24", []),
        ("4 daps = 7 yaps (given)", []),
        ("$9.90 - $9 = $0.90 = 90 cents", ["9.90 - 9 = 0.90"]),
        # unknown functions and their inverses are opaque, never products
        (r"\( f^{-1}(0) = 3 \)", ["fn:f^{-1}(0) = 3"]),
        ("S(0) = 3 grams", ["fn:S(0) = 3"]),
        ("F'(3) = -4", []),
        # currency is not math
        ("It costs $5 and $6 each.", []),
    ],
)
def test_extract(text: str, expected: list[str]) -> None:
    assert chains(text) == expected


def test_spans_point_at_source() -> None:
    text = r"First \( 12 \times 15 = 170 \) then 3 + 4 = 7."
    fs = extract_formulas(text)
    assert [text[f.start : f.end] for f in fs] == [r"12 \times 15 = 170", "3 + 4 = 7"]
    f = fs[0]
    assert [text[a:b] for a, b in f.member_spans] == [r"12 \times 15", "170"]


def test_named_quantities() -> None:
    fs = extract_formulas("Daily earnings = $105 / 5. Daily earnings = $21.")
    assert [(f.name, render_chain(f.chain)) for f in fs] == [("daily earnings", "105 / 5"), ("daily earnings", "21")]


def work(text: str) -> tuple[int, list]:
    """Python-level calls made by ``extract_formulas(text)`` (a deterministic measure of its work)."""
    calls = 0

    def count(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        calls += 1

    sys.setprofile(count)
    try:
        found = extract_formulas(text)
    finally:
        sys.setprofile(None)
    return calls, found


@pytest.mark.parametrize(
    "text",
    ["(" * 10_000 + "1" + ")" * 10_000 + " = 1", "1" + "+1" * 5000 + " = 5001", "a" * 100_000,
     "$" * 5000, r"\frac{" * 3000, "= " * 20_000, "1 = " * 20_000, "<" * 19_999],
)
def test_hostile_text_is_bounded(text: str) -> None:
    # returns (possibly nothing) without recursion errors, with work linear in the text:
    # at most 40 calls per character (about 25 today; a quadratic path makes thousands)
    calls, found = work(text)
    assert isinstance(found, list) and len(found) <= MAX_FORMULAS_PER_STEP
    assert calls <= 40 * len(text), f"{calls} calls for {len(text)} characters"


def _symbols() -> list[str]:
    """Every operator and relation the lexer reads: symbols, LaTeX commands, words."""
    out = [s for s, (kind, _) in _UNI_OPS.items() if kind in (OP, REL, POW)]
    out += [c for c, (kind, _) in _LATEX_CMDS.items() if kind in (OP, REL, POW)]
    out += sorted(_OP_WORDS)
    return out + ["<=", ">=", "!=", "=>", "~", "mod", "is"]


@pytest.mark.parametrize("symbol", _symbols())
def test_extraction_is_linear_in_runs_of_every_operator(symbol: str) -> None:
    # doubling a run of the symbol (alone, spaced, between operands; plain and inside \( \))
    # at most doubles the work, with slack for constant costs (a quadratic path gives 4)
    shapes = [lambda n: symbol * n, lambda n: (symbol + " ") * n, lambda n: ("1 " + symbol + " ") * n,
              lambda n: "\\(" + ("x " + symbol + " ") * n + "\\)"]
    for shape in shapes:
        small, large = work(shape(60))[0], work(shape(120))[0]
        assert large <= 2.3 * small, f"{shape(2)!r}: {small} calls at N, {large} at 2N"


def test_recent_readings_answer_what_a_fresh_read_answers_and_keep_a_few() -> None:
    from faithsieve.mathtext.formulas import RecentReadings

    readings = RecentReadings()
    texts = [f"We get {k} + 1 = {k + 1}." for k in range(RecentReadings.SIZE + 2)]
    for text in texts + texts:
        assert readings.read(text) == extract_formulas(text)
    assert len(readings._recent) == RecentReadings.SIZE
