"""The weak trailing-negation cue (``cues.TRAIL_WEAK``) accepts exactly the tails its older,
cubic form accepted, on the 60 lower-cased characters after a relation, and stays linear on long runs."""

from __future__ import annotations

import random
import re
import time

from faithsieve.mathtext import cues

OLDER = re.compile(r"\s*(\?|,?\s*(but\s+(?:that|this|it)|which|that)?\s*(is|are|'s)?\s*(not|false|wrong|incorrect|"
                   r"impossible|a contradiction))")
"""The form used before: adjacent optional runs of spaces, so one attempt is cubic on a long run."""

PIECES = [" ", "  ", "\t", "\n", "\u00a0", "\u2003", ",", ", ", "?", "but", "but ", "that", "this", "it", "which", "is",
          "are", "'s", "not", "false", "wrong", "incorrect", "impossible", "a contradiction", "a", "contradiction", "x",
          "=", "5", "nothing", "isn't", "is not", ".", "b", "ut", "th", "no"]


def _newer(tail: str) -> bool:
    return bool(cues.TRAIL_WEAK.match(tail.lstrip()))


def test_the_same_tails_as_the_older_form() -> None:
    rng = random.Random(20261201)
    seen = {True: 0, False: 0}
    for _ in range(30_000):
        tail = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 9)))[:60]
        older = bool(OLDER.match(tail))
        assert _newer(tail) == older, repr(tail)
        seen[older] += 1
    assert min(seen.values()) > 2_000  # both answers are drawn often


def test_hand_cases() -> None:
    yes = [" is not", ", which is false", "?", "  but that is wrong", ", that's not", "\t, but it is impossible",
           " a contradiction", "not", ", is incorrect", " but this false"]
    no = [" is true", ", so x = 3", " but then", "which gives 5", " isn't", ", no", ""]
    assert all(_newer(t) and OLDER.match(t) for t in yes)
    assert not any(_newer(t) or OLDER.match(t) for t in no)


def test_the_cue_reads_the_text_after_the_relation() -> None:
    text = "so 3 + 4 = 8, which is false. Then x = 2"
    end = text.index("8") + 1
    assert cues.trailing_negation(text, end)
    assert not cues.trailing_negation(text, len(text))


def test_no_hang_on_long_runs() -> None:
    # a hang guard (the older form's one attempt on n spaces takes ~n^3 steps: minutes at n = 2,000);
    # the pattern is also in tests/house/test_redos.py, which measures growth on hostile inputs
    for run in (" " * 200_000 + "x", ", " * 100_000, "but " * 50_000, " is" * 60_000):
        t = time.perf_counter()
        _newer(run)
        cues.trailing_negation("x = 1" + run, 5)
        assert time.perf_counter() - t < 1.0


def test_an_abbreviation_does_not_end_the_sentence() -> None:
    """"X, i.e. Y, which is absurd": the denial reaches back over "i.e." (an abbreviation's full stop
    is no sentence end), as it does over ", so Y"; a real full stop still ends the sentence."""
    for text in ("then 4 + 9 = 12, i.e. 13 = 12, which is absurd.", "then 5/6 = 2/5, i.e. 25 = 12, which is false.",
                 "then 5/6 = 2/5, e.g. 25 = 12, which is false.", "so 1 = 2, I.e. 0 = 1, which is impossible."):
        end = text.index(",")
        assert cues.trailing_negation(text, end), text
    text = "so 3 + 4 = 8. Next, 2 + 2 = 5 is not what we want"
    assert not cues.trailing_negation(text, text.index("."))


def test_a_display_ending_its_line_ends_the_sentence() -> None:
    r"""A display closed at the end of its line and a capitalised word on the next line start a new
    sentence, so a denial there is about something else ("\[ 990 - 720 = 90 \]" then "In this
    remaining 90°, no further solutions exist"); a blank line ends the sentence too. A display whose
    next line goes on in lower case ("which is not possible") is still denied."""
    for text in ("we have:\n\\[ 990 - 720 = 90 \\]\nIn this remaining part, no further solutions exist.",
                 "we have $$ 990 - 720 = 90 $$\n In the rest there is no solution.",
                 "we have 990 - 720 = 90\n\nThere is no other solution.",
                 "\\begin{align*} a &= 990 - 720 = 90 \\end{align*}\nOther angles give no solution."):
        end = text.index("90", text.index("720")) + 2
        assert not cues.trailing_negation(text, end), text
    for text in ("we have:\n\\[ 2 + 2 = 5 \\]\nwhich is not possible.", "we get \\[ 2 + 2 = 5 \\] No, that is wrong.",
                 "we get \\[ 2 + 2 = 5 \\]\n, which is false.", "we get \\[ 2 + 2 = 5 \\]\nThis is impossible.",
                 "we get $$ 2 + 2 = 5 $$\nBut that is not possible.", "we get \\[ 2 + 2 = 5 \\]\nThen 4 = 5, impossible."):
        end = text.index("5") + 1
        assert cues.trailing_negation(text, end), text


def test_a_computation_before_a_new_sentence_that_denies_is_checked() -> None:
    """The whole reading: the arithmetic of a display is checked when the next line, a new sentence,
    says that no more solutions exist."""
    from faithsieve.core.proof import Proof, Step
    from faithsieve.pipeline import localize

    text = ("After 2 complete periods, we have:\n\\[ 990^\\circ - 2 \\times 360^\\circ = 90^\\circ \\]\n"
            "In this remaining \\( 90^\\circ \\), no additional solutions exist.")
    v = localize(Proof(problem="How many x in [0°, 990°) have sin x = -0.31?",
                       steps=(Step(index=1, text="The period is 360°."), Step(index=2, text=text))))
    assert v.first_error_step == 2
