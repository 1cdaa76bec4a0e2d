"""Every case of the claim corpus (``tests/claims/*.jsonl``, ``validation/*.jsonl``, ``redteam/*.jsonl``) carries a label sympy agrees with.

The ``claim`` field is test data we wrote ourselves (SymPy syntax, never text from a user or a dataset),
so it is parsed with ``parse_expr`` here; the localizer never sees it. An equality or identity holds when
``simplify(lhs - rhs) == 0``; a closed inequality or a relation between sets is evaluated exactly. A case
whose ``truth`` disagrees with sympy is a wrong label and fails this test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sympy
from sympy.parsing.sympy_parser import parse_expr

HERE = Path(__file__).resolve().parent
FIELDS = {"id", "family", "problem", "steps", "first_error", "claim", "identity", "truth"}


def _namespace() -> dict[str, Any]:
    """The names a claim may use beyond sympy's own (the number-theory functions under the names the
    reader produces, and ``i`` as the imaginary unit only where written ``I``)."""
    ns: dict[str, Any] = {name: getattr(sympy, name) for name in dir(sympy) if not name.startswith("_")}
    ns.update(totient=sympy.totient, numdivisors=sympy.divisor_count, divsigma=sympy.divisor_sigma,
              padicval=lambda p, n: sympy.multiplicity(p, n), gcd=sympy.gcd, lcm=sympy.lcm,
              order=sympy.n_order)
    for letter in "abcdefghjkmnpqrstuvwxyz":
        ns[letter] = sympy.Symbol(letter)
    return ns


NS = _namespace()


def cases() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    # the development families, the validation set (``validation/``, run once, never tuned on) and the
    # red-team set of true proofs in real-world notation with false variants (``redteam/``)
    for path in [*sorted(HERE.glob("*.jsonl")), *sorted((HERE / "validation").glob("*.jsonl")),
                 *sorted((HERE / "redteam").glob("*.jsonl"))]:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                case = json.loads(line)
                case["_where"] = f"{path.relative_to(HERE)}:{n}"
                out.append(case)
    return out


def truth_of(claim: Any, identity: bool) -> bool:
    """sympy's truth value of a parsed claim (``Eq``/``Ne``/``Lt``/…, ``And``/``Or``/``Not`` of them)."""
    if claim is sympy.true or claim is sympy.false or isinstance(claim, bool):
        return bool(claim)
    if isinstance(claim, sympy.And):
        return all(truth_of(a, identity) for a in claim.args)
    if isinstance(claim, sympy.Or):
        return any(truth_of(a, identity) for a in claim.args)
    if isinstance(claim, sympy.Not):
        return not truth_of(claim.args[0], identity)
    assert isinstance(claim, sympy.core.relational.Relational), f"not a relation: {claim!r}"
    lhs, rhs = claim.lhs, claim.rhs
    if isinstance(lhs, sympy.Set) or isinstance(rhs, sympy.Set):
        return bool(sympy.Eq(lhs, rhs).doit()) == isinstance(claim, sympy.Eq)
    free = (lhs - rhs).free_symbols
    assert identity or not free, f"a closed claim with free symbols {free}: mark it identity"
    if isinstance(claim, (sympy.Eq, sympy.Ne)):
        zero = sympy.simplify(lhs - rhs) == 0
        if not identity and not zero:  # a closed difference simplify cannot reduce: decide numerically
            zero = abs(sympy.N(lhs - rhs, 60)) < sympy.Float(10) ** -50
        return zero == isinstance(claim, sympy.Eq)
    assert not identity, "an inequality claimed for all values is not supported here"
    return bool(claim.func(sympy.nsimplify(lhs), sympy.nsimplify(rhs)))


CASES = cases()


def test_corpus_is_not_empty() -> None:
    assert len(CASES) >= 30


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case_is_well_formed(case: dict[str, Any]) -> None:
    assert set(case) - {"_where"} == FIELDS, case["_where"]
    assert Path(case["_where"].split(":")[0]).stem == case["family"]
    assert case["id"].startswith(case["family"] + "-")
    assert isinstance(case["steps"], list) and case["steps"]
    assert -1 <= case["first_error"] < len(case["steps"])
    assert case["truth"] == (case["first_error"] == -1), "a false claim marks the first error; a true one none"


def test_ids_are_unique() -> None:
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_label_matches_sympy(case: dict[str, Any]) -> None:
    claim = parse_expr(case["claim"], local_dict=NS, evaluate=True)
    assert truth_of(claim, case["identity"]) == case["truth"], f"{case['_where']}: {case['claim']}"


def test_checker_tells_a_wrong_label() -> None:
    """The label check itself can fail: the sympy truth of known claims, both ways."""
    assert truth_of(parse_expr("Eq((a-b)**3, a**3-3*a**2*b+3*a*b**2-b**3)", local_dict=NS), True)
    assert not truth_of(parse_expr("Eq((a-b)**3, a**3-3*a**2*b+3*a*b**2+b**3)", local_dict=NS), True)
    assert not truth_of(parse_expr("Eq(Rational(1,4)+Rational(1,2), 1)", local_dict=NS), False)
    assert truth_of(parse_expr("Eq(totient(12), 4)", local_dict=NS), False)
    assert not truth_of(parse_expr("Eq(log(8, 2), 4)", local_dict=NS), False)
