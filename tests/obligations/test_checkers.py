"""Each checker on its own (table tests), plus evaluation guards."""

import time
from fractions import Fraction

import pytest
from faithsieve.obligations.checkers.portfolio import (
    ExactChecker,
    SympyChecker,
    Z3Checker,
    compare_values,
    run_portfolio,
)
from faithsieve.obligations.kinds.models import (
    ArithmeticObligation,
    CoverageObligation,
    DerivationObligation,
    IdentityObligation,
    Refuted,
    SolutionObligation,
    SubstitutionObligation,
    Unknown,
    Verified,
)

from faithsieve.core.errors import EvaluationLimit
from faithsieve.mathtext import evaluate, extract_formulas
from faithsieve.mathtext.ast import Num, Rel, Var

BASE = dict(id="o0", step=1, span=(0, 1), edge="e0", source="")


def far() -> float:
    """A deadline a minute from now, taken when the check starts (not at import: a loaded suite
    reaches these tests long after this file was imported)."""
    return time.monotonic() + 60


def rel(text: str, i: int = 0) -> Rel:
    f = extract_formulas(text)[0]
    a, op, b = f.chain.links()[i]
    return Rel(a, op, b)


def outcome(text: str, approx: bool = False, rounded: tuple[str, ...] = (), link: int = 0) -> str:
    ob = ArithmeticObligation(**BASE, claim=rel(text, link), approx=approx, rounded=rounded)
    out = run_portfolio(ob, [ExactChecker(), SympyChecker()], far())
    return type(out).__name__


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12 × 15 = 180", "Verified"),
        ("12 × 15 = 170", "Refuted"),
        (r"\( \frac{3}{4} + \frac{1}{2} = \frac{5}{4} \)", "Verified"),
        (r"\( 2^{10} = 1000 \)", "Refuted"),
        (r"\( \sqrt{144} = 14 \)", "Refuted"),
        (r"\( \binom{6}{2} = 12 \)", "Refuted"),
        ("100 / 3 = 33.33", "Verified"),  # rounded to the digits shown
        ("2 / 3 = 0.66", "Verified"),  # truncated
        ("2 / 3 = 0.6", "Verified"),
        ("2 / 3 = 0.5", "Refuted"),
        ("7 / 2 = 3", "Verified"),  # floor of a non-integer: rounding, not an error
        ("2/4 * 100 = 50%", "Verified"),  # percent notation
        ("(3200 - 4800) / 4800 * 100 = -33%", "Verified"),  # percent notation, rounded
        ("1/26 * 100 = 5%", "Refuted"),
        ("25% of 80 = 20", "Verified"),
        ("8% of 74.97 = 6.00", "Verified"),
        ("5 × 3 = 15 + 2 = 17", "Unknown"),  # running total: 5 × 3 = 15 + 2 is not asserted
        ("3 < 5", "Verified"),
        ("5 < 3", "Refuted"),
        (r"\( \sqrt{8} = 2\sqrt{2} \)", "Verified"),
        (r"\( \sqrt{2} = 1.5 \)", "Verified"),  # within one unit of the last digit shown (ceiling)
        (r"\( \sqrt{2} = 1.6 \)", "Refuted"),
        (r"\( \sqrt{2} \approx 1.414 \)", "Verified"),
        (r"\( \pi \approx 3.14 \)", "Verified"),
        (r"\( \cos 60^\circ = \frac12 \)", "Verified"),
        (r"\( \tan(45^\circ + 105^\circ) = \tan 150^\circ \)", "Verified"),  # degrees inside a sum
        (r"\( \sin(-120^\circ) = -\frac{\sqrt{3}}{2} \)", "Verified"),
        (r"\( 185^\circ \cdot \frac{\pi}{180} = \frac{185\pi}{180} \)", "Verified"),  # degrees outside trig
        (r"\( \sin 30^\circ = \frac{\sqrt{3}}{2} \)", "Refuted"),
        ("20% / 100 = 0.20", "Unknown"),  # the percent sign used for the number of percent
        (r"\( \pi = 25.12 / 8 \)", "Unknown"),  # pi stood in for by 3.14
        ("10^10^10 = 5", "Unknown"),  # too large to evaluate: unknown, never a hang
        ("2000! = 5", "Unknown"),
    ],
)
def test_arithmetic(text: str, expected: str) -> None:
    assert outcome(text) == expected


def test_approximation_rules() -> None:
    assert outcome("1666.67 ≈ 1700", approx=True) == "Verified"  # significant figures shown
    assert outcome("253 / 3 ≈ 85", approx=True) == "Verified"  # an integer shown for 84.33: floor or ceiling
    assert outcome("253 / 3 ≈ 88", approx=True) == "Unknown"  # within 5 %: too loose to decide
    assert outcome("253 / 3 ≈ 63.25", approx=True) == "Refuted"


def test_earlier_rounded_values_carry_their_rounding() -> None:
    assert outcome("33.33 × 3 = 100.00") == "Refuted"
    assert outcome("33.33 × 3 = 100.00", rounded=("33.33",)) == "Verified"


def test_refutation_counterexample_is_exact() -> None:
    out = compare_values(rel("12 × 15 = 170").lhs, "=", rel("12 × 15 = 170").rhs, approx=False)
    assert isinstance(out, Refuted)
    assert out.counterexample == {"lhs": "180", "rhs": "170", "difference": "10"}


@pytest.mark.parametrize(
    "text",
    [r"\( 10^{10^{10}} = 1 \)", r"\( 1000000! = 1 \)", r"\( 2^{-99999999} = 0 \)", r"\( \binom{10^9}{5 \cdot 10^8} = 1 \)"],
)
def test_guards_stop_before_computing(text: str) -> None:
    t = time.perf_counter()
    with pytest.raises(EvaluationLimit):
        evaluate(extract_formulas(text)[0].chain.exprs[0])
    assert time.perf_counter() - t < 1.0


def test_substitution() -> None:
    ob = SubstitutionObligation(**BASE, claim=rel("3x + 1 = 14"), env={"x": Fraction(4)}, origins={"x": "step 1"})
    out = ExactChecker().check(ob, far())
    assert isinstance(out, Refuted) and out.counterexample["x"] == "4" and out.counterexample["lhs"] == "13"
    ob = SubstitutionObligation(**BASE, claim=rel("3x + 1 = 13"), env={"x": Fraction(4)})
    assert isinstance(ExactChecker().check(ob, far()), Verified)


@pytest.mark.parametrize(
    ("eq", "values", "approx", "expected"),
    [
        ("2x + 3 = 11", {"x": 4}, False, Verified),
        ("2x + 3 = 11", {"x": 5}, False, Refuted),
        ("x^2 - 7x + 10 = 0", {"x": 4}, False, Refuted),
        ("x^2 = 2", {"x": Fraction(141, 100)}, True, Verified),  # rounded root: a sign change nearby
        ("x + y = 10", {"x": 7, "y": 3}, False, Verified),
        ("x - y = 2", {"x": 7, "y": 3}, False, Refuted),
    ],
)
def test_solution(eq: str, values: dict, approx: bool, expected: type) -> None:
    ob = SolutionObligation(**BASE, equations=(rel(eq),), values={k: Fraction(v) for k, v in values.items()},
                            approx=approx, decimals=2 if approx else 0)
    assert isinstance(ExactChecker().check(ob, far()), expected)


@pytest.mark.parametrize(
    ("text", "asserted", "expected"),
    [
        (r"\( (x+1)^2 = x^2 + 2x + 1 \)", False, Verified),
        (r"\( (x+2)(x-3) = x^2 - x - 5 \)", False, Refuted),  # differs by a constant: never true
        (r"\( x^2 + 3x = x^2 + 5 \)", False, Unknown),  # an equation in x, not a claimed identity
        (r"\( (x+3)^2 = x^2 + 9 \)", False, Unknown),
        (r"\( (x+3)^2 = x^2 + 9 \)", True, Refuted),  # stated as an identity: random exact points refute
        (r"\( \frac{1}{x} + \frac{1}{y} = \frac{x+y}{xy} \)", False, Verified),
    ],
)
def test_identity(text: str, asserted: bool, expected: type) -> None:
    ob = IdentityObligation(**BASE, claim=rel(text), asserted_identity=asserted)
    out = SympyChecker().check(ob, far())
    assert isinstance(out, expected), out
    if isinstance(out, Refuted) and out.method == "random-points":
        env = {k: Fraction(v) for k, v in out.counterexample.items() if k in ("x",)}
        assert evaluate(ob.claim.lhs, env) != evaluate(ob.claim.rhs, env)


@pytest.mark.parametrize(
    ("premise", "claim", "expected"),
    [
        ("5x - 7 = 18", "5x = 25", Verified),
        ("5x - 7 = 18", "5x = 11", Refuted),
        ("x^2 = 4", "x = 2", Unknown),  # does not follow alone, but is consistent
        ("2x + 6 = 20", "2x = 26", Refuted),
        ("x > 3", "x > 1", Verified),
        ("3 - 4x + x^2 - 5 = 0", "x^2 - 4x + 2 = 0", Refuted),  # irrational roots: the constant gap certifies it
        ("x^2 = 2", "x^2 - 2 = 0", Verified),
    ],
)
def test_derivation(premise: str, claim: str, expected: type) -> None:
    ob = DerivationObligation(**BASE, premises=(rel(premise),), claim=rel(claim))
    out = Z3Checker().check(ob, far())
    assert isinstance(out, expected), out


def _cov(conds: list[str], domain: str = "integer", parity: tuple[str, ...] = ()) -> CoverageObligation:
    rels = tuple(rel(c) for c in conds)
    return CoverageObligation(**BASE, variable="n", cases=tuple(conds) or parity, conditions=rels,
                              case_sizes=tuple(1 for _ in conds) if conds else tuple(0 for _ in parity),
                              parity=parity or tuple("" for _ in conds), domain=domain)  # type: ignore[arg-type]


def test_coverage() -> None:
    out = Z3Checker().check(_cov(["n > 0", "n < 0"]), far())
    assert isinstance(out, Refuted) and out.counterexample == {"n": "0"}
    assert isinstance(Z3Checker().check(_cov(["n >= 0", "n < 0"]), far()), Verified)
    assert isinstance(Z3Checker().check(_cov([], parity=("even", "odd")), far()), Verified)
    # a residue class left out may be excluded by the problem's words ("p prime, p > 3"): unknown
    out = Z3Checker().check(_cov([], parity=("mod 3 0", "mod 3 1")), far())
    assert isinstance(out, Unknown) and "residue class" in out.reason
    # the domain constraint from the problem excludes the gap
    ob = _cov(["n > 0", "n < 0"]).model_copy(update={"domain_constraints": (Rel(Var("n"), ">", Num(Fraction(0), "0", 0)),)})
    assert isinstance(Z3Checker().check(ob, far()), Verified)


def test_coverage_refutes_only_gaps_inside_the_range_the_cases_mark_out() -> None:
    # "N = 3" and "N >= 4": the gap N <= 2 lies beyond every case (the problem may say N >= 3)
    out = Z3Checker().check(_cov(["n = 3", "n >= 4"]), far())
    assert isinstance(out, Unknown) and "beyond every case" in out.reason
    # "n = 3" and "n >= 5" leave 4, between the cases
    out = Z3Checker().check(_cov(["n = 3", "n >= 5"]), far())
    assert isinstance(out, Refuted) and out.counterexample == {"n": "4"}
    # real domain guessed, integer boundaries: the gap 3 < N < 4 holds no integer
    out = Z3Checker().check(_cov(["n = 3", "n >= 4"], domain="real"), far())
    assert isinstance(out, Unknown) and "integers" in out.reason
    out = Z3Checker().check(_cov(["n < 0", "n > 1"], domain="real"), far())
    assert isinstance(out, Refuted) and out.counterexample == {"n": "0"}


def test_portfolio_respects_deadline() -> None:
    ob = ArithmeticObligation(**BASE, claim=rel("1 + 1 = 3"))
    out = run_portfolio(ob, [ExactChecker()], time.monotonic() - 1)
    assert isinstance(out, Unknown) and out.method == "budget"


def test_portfolio_escalates_symbolic_unknowns_only_to_checkers_that_ask_for_them() -> None:
    """An identity left unknown by the cheap checkers may be decided by a later checker marked
    ``escalates_unknown`` (Lean); an ordinary later checker never overrides the first answer, and an
    arithmetic claim (where rounding rules live) is never escalated."""
    import time as _time
    from fractions import Fraction

    from faithsieve.obligations.checkers.portfolio import run_portfolio
    from faithsieve.obligations.kinds.models import (
        ArithmeticObligation,
        IdentityObligation,
        Unknown,
        Verified,
    )

    from faithsieve.mathtext.ast import BinOp, Num, Rel, Var

    class Fixed:
        def __init__(self, name, out, escalates=False):  # type: ignore[no-untyped-def]
            self.name, self.out, self.calls = name, out, 0
            if escalates:
                self.escalates_unknown = True

        def check(self, ob, deadline):  # type: ignore[no-untyped-def]
            self.calls += 1
            return self.out

    x = Var("x")
    ident = IdentityObligation(id="o1", step=1, span=(0, 1), edge="e0", source="s",
                               claim=Rel(BinOp("+", x, x), "=", BinOp("*", Num(Fraction(2), "2", 0), x)))
    arith = ArithmeticObligation(id="o2", step=1, span=(0, 1), edge="e0", source="s",
                                 claim=Rel(Num(Fraction(1), "1", 0), "=", Num(Fraction(1), "1", 0)))
    deadline = _time.monotonic() + 5
    unknown = Unknown("sympy", "not decided")
    plain, lean = Fixed("plain", Verified("plain")), Fixed("lean", Verified("lean"), escalates=True)
    assert run_portfolio(ident, [Fixed("sympy", unknown), plain, lean], deadline) == Verified("lean")
    assert plain.calls == 0
    assert run_portfolio(ident, [Fixed("sympy", unknown), Fixed("lean", Unknown("lean", "timeout"), True)],
                         deadline) is unknown
    assert run_portfolio(arith, [Fixed("exact", unknown), Fixed("lean", Verified("lean"), True)], deadline) is unknown
