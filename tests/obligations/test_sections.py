"""Derivations in one real variable decided exactly give the outcome z3 gives."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from faithsieve.obligations.checkers.portfolio import Z3Checker
from faithsieve.obligations.checkers.smt import _holds
from faithsieve.obligations.kinds.models import DerivationObligation, Unknown, Verified
from faithsieve.obligations.procedures import lines, sections, witness
from faithsieve.obligations.procedures.sections import univariate_derivation

from tests.obligations.test_fastpaths import BASE, outcome, rel

OPS = ("=", "<", ">", "<=", ">=")


def _term(rng: random.Random, v: str) -> str:
    c = rng.choice(("1", "2", "3", "-1", "1/2", "5", "-4", "7/3"))
    k = rng.choice((0, 1, 1, 2, 2, 3))
    return c if k == 0 else f"{c}*{v}" if k == 1 else f"{c}*{v}^{k}"


def _poly(rng: random.Random, v: str) -> str:
    shape = rng.random()
    if shape < 0.3:  # factored, often with rational roots
        return "*".join(f"({v} - {rng.randint(-4, 4)})" for _ in range(rng.randint(1, 3)))
    if shape < 0.45:
        return f"({v} + {rng.randint(-3, 3)})^2"
    return " + ".join(_term(rng, v) for _ in range(rng.randint(1, 3)))


def _side(rng: random.Random, v: str) -> str:
    if rng.random() < 0.2:  # a quotient by a polynomial in the variable
        return f"({_poly(rng, v)})/({_poly(rng, v)})"
    return _poly(rng, v)


def _relation(rng: random.Random, v: str, op: str | None = None) -> str:
    return f"{_side(rng, v)} {op or rng.choice(OPS)} {_side(rng, v)}"


def _derived(rng: random.Random, premise: str, v: str) -> str:
    """A claim related to the premise (scaled, squared, moved), or an unrelated one."""
    lhs, op, rhs = premise.partition(" = ") if " = " in premise else (None, None, None)
    r = rng.random()
    if lhs is not None and r < 0.3:
        return f"({lhs})^2 = ({rhs})^2"
    if lhs is not None and r < 0.5:
        return f"{lhs} - ({rhs}) = 0"
    if r < 0.6:
        return f"{v} {rng.choice(OPS)} {rng.randint(-5, 5)}"
    return _relation(rng, v)


def _checkers(witness: bool = False) -> tuple[Z3Checker, Z3Checker]:
    fast, slow = Z3Checker(), Z3Checker()
    for ch in (fast, slow):
        ch.witness_points = witness  # without: this procedure decides everything it can
    slow.real_sections = False
    return fast, slow


@pytest.mark.parametrize("seed,witness", [(0, False), (1, False), (2, False), (3, True), (4, True)])
def test_univariate_derivations_agree_with_z3(seed: int, witness: bool) -> None:
    rng = random.Random(seed)
    fast, slow = _checkers(witness)
    decided = 0
    for _ in range(120):
        premise = _relation(rng, "x", rng.choice(("=", "=", *OPS)))
        claim = _derived(rng, premise, "x")
        ob = DerivationObligation(**BASE, premises=(rel(premise),), claim=rel(claim))
        decided += univariate_derivation([rel(premise)], rel(claim)) is not None
        assert outcome(fast.check, ob) == outcome(slow.check, ob), (premise, claim)
    assert decided >= 30  # the generator reaches the procedure, not only its refusals


@pytest.mark.parametrize("premise,claim", [
    ("a^3/6 = 54/a", "a^4 = 324"), ("3 = 2/y + y/2", "6y = 4 + y^2"), ("225 = 6c^2 + 1352/c^2", "225c^2 = 6c^4 + 1352"),
])
def test_a_witness_where_a_divisor_vanishes_and_an_irrational_point(premise: str, claim: str, monkeypatch) -> None:
    # the claim fails only where the divisor vanishes (a witness point gives the division by zero
    # a value) and holds only at irrational points (this procedure finds them): together, both
    # queries are shown satisfiable
    import z3

    ob = DerivationObligation(**BASE, premises=(rel(premise),), claim=rel(claim))
    fast, slow = _checkers(witness=True)
    expected = outcome(slow.check, ob)
    assert expected["type"] == "Unknown" and expected["reason"] == "does not follow from the previous relation alone"
    made: list[int] = []
    real = z3.Context
    monkeypatch.setattr(z3, "Context", lambda *a, **k: made.append(1) or real(*a, **k))
    assert outcome(fast.check, ob) == expected and made == []
    assert univariate_derivation([rel(premise)], rel(claim)) is None  # neither alone decides it
    assert witness.separating_points([rel(premise)], rel(claim)) is None


def test_two_premises_agree_with_z3() -> None:
    rng = random.Random(11)
    fast, slow = _checkers()
    for _ in range(80):
        premises = (rel(_relation(rng, "t")), rel(_relation(rng, "t")))
        ob = DerivationObligation(**BASE, premises=premises, claim=rel(_relation(rng, "t")))
        assert outcome(fast.check, ob) == outcome(slow.check, ob), ob.claim_text()


def test_irrational_points_show_does_not_follow_without_a_solver(monkeypatch) -> None:
    import z3

    made: list[int] = []
    real = z3.Context
    monkeypatch.setattr(z3, "Context", lambda *a, **k: made.append(1) or real(*a, **k))
    ob = DerivationObligation(**BASE, premises=(rel("x^2 - 3x = 1"),), claim=rel("x > 0"))
    assert Z3Checker().check(ob, float("inf")) == Unknown("sections", "does not follow from the previous relation alone")
    ob = DerivationObligation(**BASE, premises=(rel("x - 5 > 0"),), claim=rel("1/(x - 5) > 0"))
    assert Z3Checker().check(ob, float("inf")) == Verified("sections", "follows from the previous relation")
    assert made == []


@pytest.mark.parametrize("premise,claim,expected", [
    ("x^2 - 3x = 1", "x > 0", "independent"),
    ("2a = 98", "a^2 = 49^2", "follows"),
    ("(y - 2)^2 = 0", "y - 2 = 0", "follows"),
    ("2/(x^2 + 4) = 1", "2 = x^2 + 4", "follows"),  # the divisor has no real root
    ("x - 5 > 0", "1/(x - 5) > 0", "follows"),  # the premise fails where the divisor vanishes
    ("x^2 = 4", "x = 1", None),  # contradicts the premise at x = ±2: the solver shows the refutation
    ("x^2 = 2", "x = 1", "irrational"),  # contradicts it where the premise has no rational point
    ("1/x = 2", "x = 1/2", None),  # the premise divides by x, which vanishes: SMT's x/0 is left open
    ("x + y = 2", "x = 1", None),  # two variables
])
def test_decisions(premise: str, claim: str, expected: str | None) -> None:
    assert univariate_derivation([rel(premise)], rel(claim)) == expected


def test_integer_variables_are_left_to_the_solver() -> None:
    assert univariate_derivation([rel("2a = 98")], rel("a^2 = 49^2")) == "follows"
    assert univariate_derivation([rel("2a = 98")], rel("a^2 = 49^2"), ("a",)) is None


def test_bound_on_relations() -> None:
    premises = [rel(f"x > {-i}") for i in range(sections.MAX_RELATIONS - 1)]
    assert univariate_derivation(premises, rel("x > -5")) == "follows"
    assert univariate_derivation([*premises, rel("x > -9")], rel("x > -5")) is None
    assert sections.MAX_RELATIONS == 4


def test_nodes_outside_the_fragment_are_left_to_the_solver() -> None:
    for premise in ("x = sqrt(2)", "abs(x) = 2", "x^13 = 1", "x = 2^x"):
        assert univariate_derivation([rel(premise)], rel("x > 0")) is None, premise
    assert univariate_derivation([rel("x^12 = 1")], rel("x > -2")) == "follows"


@pytest.mark.parametrize("seed", range(3))
def test_line_conditions_hold_exactly_where_the_relations_do(seed: int) -> None:
    rng = random.Random(50 + seed)
    for _ in range(60):
        r = rel(_relation(rng, "x"))
        found = lines.conditions([r], "x", {})
        assert found is not None
        (poly, op), = found[0]
        for _ in range(8):
            x = Fraction(rng.randint(-40, 40), rng.choice((1, 2, 3, 7)))
            if any(sum(c * x**k for k, c in enumerate(d)) == 0 for d in found[1]):
                continue  # a divisor vanishes: the conditions say nothing there
            value = sum(c * x**k for k, c in enumerate(poly))
            assert {"=": value == 0, "<": value < 0, ">": value > 0, "<=": value <= 0,
                    ">=": value >= 0}[op] == _holds(r, {"x": x}), (r, x)


def test_line_conditions_fix_the_other_variables() -> None:
    found = lines.conditions([rel("x*y = 6")], "x", {"y": Fraction(2)})
    assert found is not None and found[0] == [([Fraction(-6), Fraction(2)], "=")]
    assert lines.conditions([rel("x = y^13")], "x", {"y": Fraction(1)}) is None


@pytest.mark.parametrize("premise,claim,expected", [
    ("x^2 - 3x = 1", "(x - 1)(x - 3) = 0", "Unknown"),  # contradicts the premise at irrational points only
    ("x^2 - 2x - 7 = 0", "(x - 7)(x + 5) = 0", "Refuted"),  # ... and differs from it by a constant
])
def test_a_contradiction_with_no_rational_point_needs_no_solver(premise: str, claim: str, expected: str,
                                                                monkeypatch) -> None:
    import z3

    ob = DerivationObligation(**BASE, premises=(rel(premise),), claim=rel(claim))
    assert univariate_derivation([rel(premise)], rel(claim)) == "irrational"
    fast, slow = _checkers(witness=True)
    want = outcome(slow.check, ob)
    assert want["type"] == expected
    made: list[int] = []
    real = z3.Context
    monkeypatch.setattr(z3, "Context", lambda *a, **k: made.append(1) or real(*a, **k))
    assert outcome(fast.check, ob) == want and made == []


def test_a_contradiction_at_a_rational_point_is_left_to_the_solver() -> None:
    # the premise holds at r = 0 and r = 2, where the claim fails: z3 shows one of them
    assert univariate_derivation([rel("6r^2 = 12r")], rel("3r = 12")) is None
    # irrational roots, but a division: the solver may read a division by zero there
    assert univariate_derivation([rel("x^2 - 3x = 1/x - 1/x")], rel("(x - 1)(x - 3) = 0")) is None


def _one_point_premise(rng: random.Random, v: str) -> str:
    """A premise that holds at exactly one real point (rational), written in several shapes, or
    now and then at two points or along a half-line."""
    r = Fraction(rng.randint(-9, 9), rng.choice((1, 1, 2, 3, 4, 10)))
    a = rng.choice(("2", "0.99", "3/4", "-5", "1.01", "7"))
    shape = rng.random()
    if shape < 0.4:  # linear: a*x + b = c*x + d with a != c
        return f"{a}*{v} + {rng.randint(-5, 5)} = {rng.choice(('1', '-1', '0.5'))}*{v} + {rng.randint(-5, 5)}"
    if shape < 0.6:
        return f"({v} - {r})^2 = 0"
    if shape < 0.7:
        return f"({v} - {r})^3 = 0"
    if shape < 0.85:
        return f"({v} - {r})*({v}^2 + {rng.randint(1, 4)}) = 0"
    # decoys: two rational points, or a half-line, where z3 chooses the model
    return f"({v} - {r})*({v} - {rng.randint(-9, 9)}) = 0" if rng.random() < 0.6 else f"{v} >= {r}"


@pytest.mark.parametrize("seed,witness", [(20, False), (21, True), (22, False)])
def test_a_contradiction_at_the_only_point_agrees_with_z3(seed: int, witness: bool) -> None:
    # the premise holds at one point: z3 has that model only, and the refutation it shows is
    # the one given here, byte for byte (counterexample, premise text, reason)
    rng = random.Random(seed)
    fast, slow = _checkers(witness)
    contradicted = 0
    for _ in range(140):
        premise = _one_point_premise(rng, "x")
        claim = _derived(rng, premise, "x") if rng.random() < 0.5 else f"x {rng.choice(OPS)} {rng.randint(-9, 9)}"
        ob = DerivationObligation(**BASE, premises=(rel(premise),), claim=rel(claim))
        contradicted += univariate_derivation([rel(premise)], rel(claim)) == "contradicted"
        assert outcome(fast.check, ob) == outcome(slow.check, ob), (premise, claim)
    assert contradicted >= 25


def test_a_contradiction_at_the_only_point_needs_no_solver(monkeypatch) -> None:
    import z3

    ob = DerivationObligation(**BASE, premises=(rel("0.99 * B + 1.01 * B + B = 4500"),), claim=rel("3.01 * B = 4500"))
    assert sections.univariate_decision(list(ob.premises), ob.claim) == ("contradicted", {"B": Fraction(1500)})
    want = outcome(_checkers()[1].check, ob)
    assert want["type"] == "Refuted"
    made: list[int] = []
    real = z3.Context
    monkeypatch.setattr(z3, "Context", lambda *a, **k: made.append(1) or real(*a, **k))
    assert outcome(Z3Checker().check, ob) == want and made == []
    # two points (B = 0 and B = 1500) or an interval: z3 chooses the model, so it is left to z3
    assert univariate_derivation([rel("3 * B^2 = 4500 * B")], rel("3.01 * B = 4500")) is None
    assert univariate_derivation([rel("B > 1500")], rel("B < 0")) is None
    # with a division, or an integer variable, it is left to z3 as well
    assert univariate_derivation([rel("B / (B + 1) = 1/2")], rel("B = 2")) is None
    assert univariate_derivation([rel("2 * B = 2")], rel("B = 2"), ("B",)) is None
