"""Two reading rules: ``\\Rightarrow`` derives like "so" (the lead is searched lowercased), and a list
item on a new line opens a statement of its own, not a fact parallel to the item above it."""

from faithsieve.mathtext.formulas import extract_formulas
from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps


def first(problem: str, *steps: str) -> int | None:
    return localize(proof_from_steps(problem, list(steps))).first_refutation


def test_rightarrow_derives_the_formula_after_it() -> None:
    for arrow in ("\\Rightarrow", "\\implies", "\\Longrightarrow", "\\rightarrow", "⇒"):
        fs = extract_formulas(f"We get \\(4a + 6 = 0 {arrow} 4a = -6\\).")
        assert [f.derived for f in fs][-1], arrow
    # no arrow, no derivation word: the second formula is not derived
    fs = extract_formulas("Note \\(4a = -6\\) and \\(b = 2\\).")
    assert not fs[-1].derived


def test_a_wrong_step_after_rightarrow_is_refuted() -> None:
    # 4a + 6 = 0 gives 4a = -6, a = -3/2; "a = -5/2" does not follow
    problem = "Find a such that 4a + 6 = 0."
    assert first(problem, "We have \\(4a + 6 = 0 \\Rightarrow 4a = -6 \\Rightarrow a = -\\frac{5}{2}\\).") == 1
    assert first(problem, "We have \\(4a + 6 = 0 \\Rightarrow 4a = -6 \\Rightarrow a = -\\frac{3}{2}\\).") is None


def test_list_items_are_cases_not_one_joint_solution() -> None:
    problem = "Find every a = 20k + 8 with 0 <= a < 100, k an integer."
    step = ("Since \\(a = 20k + 8\\), we have:\n- First, \\(k = 0 \\Rightarrow a = 8\\)\n"
            "- Second, \\(k = 1 \\Rightarrow a = 28\\)\n- Third, \\(k = 2 \\Rightarrow a = 48\\)")
    # read as parallel facts, "a = 8" and the next item's "k = 1" were one joint solution of a = 20k + 8
    assert first(problem, step) is None


def test_a_run_on_one_line_is_still_one_joint_solution() -> None:
    steps = ["Case 1: we have x + y = 5 and x - y = 3."]
    assert first("Solve the system.", *steps, "So x = 5, y = 1.") == 2
    assert first("Solve the system.", *steps, "So x = 4, y = 1.") is None
