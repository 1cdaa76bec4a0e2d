"""Presentation read, not trusted (``faithsieve.mathtext.presentation``): a false step disguised by its
formatting is still refuted, the same step with the true value is still not flagged, and text whose
formatting means something else is left as it is."""

from __future__ import annotations

import pytest

from faithsieve.core.proof import Proof, Step
from faithsieve.core.settings import Settings
from faithsieve.mathtext.presentation import read_presentation
from faithsieve.pipeline import checkers_for, localize

SETTINGS = Settings(mode="offline")
CHECKERS = checkers_for(SETTINGS)

FORMS = [
    "**{a} × {b} = {c}**", "{a} × {b} = **{c}**", "__{a} × {b} = {c}__", "*{a} × {b} = {c}*", "{a} × {b} = ***{c}***",
    "# {a} × {b} = {c}", "### Step 1: {a} × {b} = {c}", "* {a} × {b} = {c}", "- **{a} × {b} = {c}**",
    "$\\mathbf{{{a} \\times {b} = {c}}}$", "$\\bm{{{a} \\times {b} = {c}}}$", "$\\boxed{{{a} \\times {b} = {c}}}$",
    "$\\text{{{a}}} \\times {b} = {c}$", "$\\mathrm{{{a}}} \\times {b} = \\mathrm{{{c}}}$", "$\\mbox{{{a}}} \\times {b} = {c}$",
    "${a} \\times {b} = \\textcolor{{red}}{{{c}}}$", "${a} \\times {b} = {{\\color{{blue}}{c}}}$",
    "${a} \\times {b} = {c0}\\phantom{{1}}{c1}$", "$$\n{a} \\times {b} % the product\n= {c}\n$$",
    "${a} \\times {b} = {c0}\\!\\!{c1}$", "${a} \\times {b} = {c0}\\,{c1}$", "{a} \u0445 {b} = {c}", "{a} × {b} = {cO}",
    "${a} \\cdotp {b} = {c}$", "{a} ✕ {b} = {c}", "{a} ⨉ {b} = {c}", "{a} ∙ {b} = {c}",
    "${a} \\times {b} \\overset{{!}}{{=}} {c}$", "${a} \\times {b} \\stackrel{{!}}{{=}} {c}$",
    "$\\underbrace{{{a} \\times {b}}}_{{\\text{{product}}}} = {c}$", "<b>{a} × {b} = {c}</b>", "{a} × {b} = <span style=\"x\">{c}</span>",
    "{a} × {b} = {c0}<!-- -->{c1}", "`{a} * {b} = {c}`", "{a} × {b} = {e}", "{a} × \\${b} = \\${c}",
    "It is not hard to see that ${a} \\times {b} = {c}$", "Not surprisingly, ${a} \\times {b} = {c}$",
    "Don't forget: ${a} \\times {b} = {c}$", "This cannot fail: ${a} \\times {b} = {c}$",
    "${a} \\times {b} = {c}$. Wait, let me double-check: yes, that is right.",
    "${a} \\times {b} = {c}$. Oops, no, it's fine.", "${a} \\times {b} = {c}$. Let me reconsider... no, it holds.",
]


def _flagged(line: str) -> int | None:
    proof = Proof(problem="A garden is 12 m by 15 m.", steps=(Step(index=1, text="We compute the product first."),
                                                              Step(index=2, text=line + ".")))
    return localize(proof, SETTINGS, CHECKERS).first_error_step


def _line(form: str, c: str) -> str:
    return form.format(a="12", b="15", c=c, c0=c[0], c1=c[1:], cO=c.replace("0", "\u041e"), e=f"{c[0]}.{c[1]}e2")


@pytest.mark.parametrize("form", FORMS)
def test_a_disguised_false_step_is_refuted(form: str) -> None:
    assert _flagged(_line(form, "170")) == 2


@pytest.mark.parametrize("form", FORMS)
def test_the_same_form_with_the_true_value_is_not_flagged(form: str) -> None:
    assert _flagged(_line(form, "180")) is None


@pytest.mark.parametrize("text", [
    "2*3*4 = 24", "$a_i + b_j = c_k$", "#### 18", "$\\frac{1}{2} = 50\\%$", "50% of the eggs", "$12\\text{ m}$",
    "$a \\stackrel{?}{=} b$", "$f(x) \\overset{\\text{def}}{=} x^2$", "It is not true that $2 + 2 = 5$.",
    "Wait, no, 12 × 15 is 180, not 170. Yes.", "Wait, that is wrong.", "$\\mathbf{A}\\mathbf{B} \\neq \\mathbf{B}\\mathbf{A}$",
    "$\\boxed{18}$", "1 km = 1000 m", "0x15", "the 2nd term", "$\\text{area} = 12 \\cdot 15$", "a < b > c",
    "\\textbf{Step 1.}", "$3e$", "e2e4",
])
def test_text_whose_formatting_means_something_else_is_left_alone(text: str) -> None:
    assert read_presentation(text) == text


@pytest.mark.parametrize(("text", "read"), [
    ("**12 × 15 = 170**", "12 × 15 = 170"),
    ("$\\mathbf{12} \\times 15$", "$12 \\times 15$"),
    ("$1\\,000 + 1\\!\\!70$", "$1000 + 170$"),
    ("12 х 15", "12 × 15"),
    ("17О", "170"),
    ("1.7e2.", "1.7 × 10^{2}."),
    ("x<sup>2</sup>", "x^{2}"),
    ("It is not hard to see that A.", "It is easy to see that A."),
    ("A. Hmm, wait. Yes, that's correct.", "A. "),
])
def test_what_is_read(text: str, read: str) -> None:
    assert read_presentation(text) == read


def test_an_empty_command_never_makes_a_display() -> None:
    assert "$$" not in read_presentation("$\\color{red}$ and $\\phantom{1}$")


def test_idempotent_and_bounded() -> None:
    for form in FORMS:
        once = read_presentation(_line(form, "170"))
        assert read_presentation(once) == once
    hostile = "\\mathbf{" * 5000 + "1" + "}" * 5000 + "**" * 5000 + "<b>" * 3000 + "\\underbrace{" * 2000
    assert isinstance(read_presentation(hostile), str)


@pytest.mark.slow
@pytest.mark.parametrize("hostile", [
    "\\mathbf{" * 5000 + "1" + "}" * 5000, "\\underbrace{" * 5000, "\\color{" * 5000, "\\overset{" * 5000,
    "\\mathbf{1}" * 20000, "\\[ x" * 10000, "\\begin{align} x" * 5000, "<!--a" * 10000, "Wait, let me " * 5000,
])
def test_reading_is_linear_on_hostile_text(hostile: str) -> None:
    import time

    t = time.perf_counter()
    read_presentation(hostile)
    assert time.perf_counter() - t < 3.0


@pytest.mark.parametrize("text", [
    "\\[\n s = 1 + 2 \\\\\n + 3 + 4 = 10\n\\]",
    "$$\n s = 2 \\\\\n * 3 = 6\n$$",
    "\\begin{align*}\n s &= 1 + 2 \\\\\n + 3 &= 6\n\\end{align*}",
])
def test_a_display_row_opening_with_plus_or_star_is_no_list_item(text: str) -> None:
    """Inside a display a row that opens with ``+`` or ``*`` continues the formula above it (claim family
    ``broken_rows``); outside one, ``+ item`` and ``* item`` are list items, read as ``- item``."""
    assert read_presentation(text) == text
    assert read_presentation("Steps:\n+ 12 × 15 = 170\n* done") == "Steps:\n- 12 × 15 = 170\n- done"
