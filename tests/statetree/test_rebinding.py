"""A letter reused for a new equation: "x = 4" … "3x = 9 gives x = 3" is a new equation in x,
not a use of the old value; the same relation with no new value, or solved to the old one, is a use."""

from fractions import Fraction

from faithsieve.statetree.rebinding import solved_again

from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps


def first(*steps: str) -> int | None:
    return localize(proof_from_steps("Compute.", list(steps))).first_refutation


def test_a_relation_solved_again_for_a_new_value_is_a_new_equation() -> None:
    assert first("We get 2x = 8, i.e. x = 4.", "Similarly, 3x = 9 gives x = 3 for the second equation.") is None
    assert first("We get 2x = 8, i.e. x = 4.", "Next 5x = 10, so x = 2.") is None


def test_a_use_of_the_old_value_is_still_checked() -> None:
    assert first("We get 2x = 8, i.e. x = 4.", "Then 3x = 13.") == 2  # no new value: a use of x = 4
    assert first("We get 2x = 8, i.e. x = 4.", "Similarly, 3x = 9 gives x = 4.") == 2  # the old value again
    assert first("We get 2x = 8, i.e. x = 4.", "Then 3x = 13 gives y = 1.") == 2  # another letter


def test_solved_again_reads_only_right_after_the_relation() -> None:
    env = {"x": Fraction(4)}
    xs = frozenset({"x"})
    assert solved_again(" gives x = 3", xs, env)
    assert solved_again(", so x = 7/2.", xs, env)
    assert not solved_again(" gives x = 4", xs, env)
    assert not solved_again(" and later, much later, gives x = 3", xs, env)
    assert not solved_again(" " * 90 + "gives x = 3", xs, env)  # bounded window
