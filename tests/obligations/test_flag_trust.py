"""Flag kinds earn the right to decide (issue 35): the deciding table, the forms of a closed computation, and
the suspect mechanism in the verdict, the grader and llm mode's fusion.

The table is measured data (``obligations/kinds/flagtable.py``, written by ``bench/reference_precision.py``); the
tests below read it and check that every consumer follows it, whichever kinds it lets decide today."""

from __future__ import annotations

import pytest
from faithsieve.obligations.kinds.flagtable import (
    MEASURED,
    KindMeasure,
    arithmetic_form,
    mark_suspects,
    suspect_reason,
    trust_key,
)
from faithsieve.obligations.kinds.models import Evidence, ObligationKind

from faithsieve.core.settings import Settings
from faithsieve.grader import grade
from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps
from faithsieve.stages.fusion import (
    Signal,
    decide,
    evidence_signal,
    logit,
    refutation_floor,
    step_scores,
    with_floor,
)
from faithsieve.synthesis import trusted_refutation

WORDED = "false_as_written/arithmetic-worded"
LITERAL = "false_as_written/arithmetic-literal"


@pytest.mark.parametrize(("source", "before", "after", "form"), [
    ("14*20=140", "So he played ", " minutes", "literal"),
    ("2/5 * 4000 = 800", "purchased = ", " gallons.", "literal"),
    ("495 students * $15/student = $7455", "week = ", ".", "literal"),
    ("20 - \\$13.00 = \\$6.00", "\\[ \\$", " \\]", "literal"),
    ("1529 ÷ 6 = 255 with a remainder of 4", "Divide 1529 by 6. ", "", "literal"),
    ("1/4 = 15", "because 12 x 1 and ", "", "worded"),           # a mixed number: 1 and 1/4
    ("400 / 80 = 180", "because 14, ", "", "worded"),             # 14, 400: a number cut at its separator
    ("1 * 2 = 20", "10 pages per day on day ", " pages", "worded"),  # a label: day 1
    ("0900-0130 = 0730", "i.e. ", " hours", "worded"),            # 24-hour times
    ("8*45 = 360", "represents ", " divided by 5", "worded"),      # the right side goes on in words
    ("3/3 - 2/3 = 1/3 of $150", "has ", " left", "worded"),
    ("100 * 0.75 = $0.75", "Margaret has ", ".", "worded"),        # a currency sign on one side only
    ("4 pounds - 6 ounces = 58", "Lazlo = ", " ounces", "worded"),  # a sum of two units
    ("9 / 21 * 100% = 42.857", "ginger: ", ", which", "worded"),   # a percentage on one side only
    ("8 batches = 5.5 * 8", "", " = 44 cups", "worded"),           # a count with its noun
    ("42/5 + 42/25 = 8 + 1", "is ", " = 9", "quotient"),          # integer parts (Legendre)
    ("42/6 + 42/36 = 7 + 1", "is ", " = 8", "quotient"),
    ("12/4 + 8/2 = 7", "is ", ".", "literal"),                     # quotients that divide
    ("the remainder when 17 is divided by 5 is 3", "so ", ".", "words"),  # read from a sentence: no relation written
    ("17 is divisible by 3", "and ", ".", "words"),
])
def test_the_form_of_a_closed_computation(source: str, before: str, after: str, form: str) -> None:
    assert arithmetic_form(source, before, after, latex="\\" in source) == form


def test_keys_split_false_as_written_only() -> None:
    assert trust_key("false_as_written", "arithmetic", "literal") == LITERAL
    assert trust_key("false_as_written", "identity") == "false_as_written/identity"
    assert trust_key("does_not_follow", "derivation") == "does_not_follow"


def test_a_kind_decides_only_when_measured_clean() -> None:
    assert KindMeasure(refutations=40, slips=40, misreadings=0, solutions=10000).decides
    assert not KindMeasure(refutations=40, slips=39, misreadings=1, solutions=10000).decides
    assert not KindMeasure(refutations=0, slips=0, misreadings=0, solutions=0).decides
    assert suspect_reason("no_such_kind") == "kind no_such_kind not yet measured on the reference bench"
    for key, m in MEASURED.items():
        why = suspect_reason(key)
        assert (why is None) == m.decides
        if why is not None and m.solutions:
            assert f"{m.misreadings} misreading(s) of {m.refutations}" in why


def _refutation(flag_kind: str, kind: ObligationKind = ObligationKind.ARITHMETIC, source: str = "12 * 15 = 170",
                suspect: str | None = None, step: int = 1) -> Evidence:
    return Evidence(obligation="o0", kind=kind, step=step, span=(0, len(source)), source=source, claim=source,
                    status="refuted", method="exact", counterexample={"lhs": "180", "rhs": "170"},
                    flag_kind=flag_kind, suspect=suspect)


def test_marking_follows_the_table() -> None:
    unmeasured, literal = _refutation("no_such_kind"), _refutation("false_as_written")
    marked = mark_suspects([unmeasured, literal], {1: "12 * 15 = 170"})
    assert marked[0].suspect == "kind no_such_kind not yet measured on the reference bench"
    assert (marked[1].suspect is None) == (suspect_reason(LITERAL) is None)
    verified = Evidence(obligation="o1", kind=ObligationKind.ARITHMETIC, step=1, span=(0, 1), source="1 = 1",
                        claim="1 = 1", status="verified", method="exact", flag_kind="no_such_kind")
    assert mark_suspects([verified], {})[0].suspect is None  # only refutations are suspect


def test_a_suspect_refutation_is_not_trusted() -> None:
    assert trusted_refutation(_refutation("false_as_written"))
    assert not trusted_refutation(_refutation("false_as_written", suspect="kind x not yet measured clean"))


def _expect(key: str) -> bool:
    """Whether a refutation of ``key`` decides under the committed table."""
    return suspect_reason(key) is None


@pytest.mark.parametrize(("steps", "key"), [
    (["So she pays 5 * 3 = $16 in all.", "The answer is 16."], WORDED),  # a currency sign on one side only
    (["So 5 * 3 = 16.", "The answer is 16."], LITERAL),
])
def test_the_verdict_follows_the_table(steps: list[str], key: str) -> None:
    v = localize(proof_from_steps("She buys 3 apples at $5 each. How much does she pay?", steps))
    assert v.first_refutation == 1  # the reading refutes 5 + 3 = 9 either way
    if _expect(key):
        assert (v.verdict, v.first_error_step, v.suspect) == ("error", 1, ())
    else:
        assert (v.verdict, v.first_error_step) == ("correct", None)
        assert [e.step for e in v.suspect] == [1] and key in (v.suspect[0].suspect or "")
        assert v.steps[0].status == "unknown"  # never shown verified


@pytest.mark.parametrize(("text", "key"), [
    ("So she pays 5 * 3 = $16 in all.\nThe answer is 16.", WORDED),
    ("So 5 * 3 = 16.\nThe answer is 16.", LITERAL),
])
def test_the_grader_follows_the_table(text: str, key: str) -> None:
    from faithsieve.grading.config import GraderConfig

    cfg = GraderConfig(step_rewards=True, cache_size=0, isolation="inline")
    r = grade(text, reference="16", problem="She buys 3 apples at $5 each. How much does she pay?", config=cfg)
    assert r.process_checked and r.outcome
    if _expect(key):
        assert r.first_error_step == 1 and r.score == r.outcome_term - cfg.error_penalty
        assert r.step_rewards is not None and r.step_rewards[0] == cfg.step_reward_error
    else:
        assert r.first_error_step is None and r.score == r.outcome_term and r.suspect_steps == (1,)
        assert r.step_rewards == (cfg.step_reward_before,) * r.steps  # no step reward withheld


def test_a_suspect_refutation_is_a_prior_in_fusion_never_the_floor() -> None:
    settings = Settings()
    suspect = evidence_signal(_refutation("no_such_kind", suspect="kind no_such_kind not yet measured", step=2),
                              settings)
    deciding = evidence_signal(_refutation("false_as_written", step=2), settings)
    assert suspect is not None and deciding is not None
    assert (suspect.source, suspect.says, suspect.reliability) == ("scan", "wrong", 0.6)
    assert deciding.source == "checked"
    assert refutation_floor([suspect]) is None
    floor = refutation_floor([deciding])
    assert floor is not None and floor.step == 2
    none = decide([suspect], 3)
    assert none.step is None and with_floor(none, [suspect]).step is None
    assert with_floor(decide([deciding], 3), [deciding]).step == 2
    review = Signal(2, "wrong", "review", 0.85, "local review", None)
    gain = step_scores([review, suspect])[2] - step_scores([review])[2]
    assert gain == pytest.approx(logit(0.6))  # a prior that adds to local evidence, never decides alone
