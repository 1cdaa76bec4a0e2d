"""The disguise table: one completion with a false step (``12 × 15 = 170``) written the ways models and
people write it (markdown, LaTeX font and colour commands, spacing inside numbers, confusable letters,
other times signs, HTML, superscripts, units, governed negations and withdrawn doubts), each graded by
``faithsieve.grader.grade`` next to the plain false step; and the same forms with the true value
(``12 × 15 = 180``), which must not be flagged.

A false variant *pays more* when its score exceeds the plain false step's. ``EXEMPT`` names the forms
that are not claims of equality (definitions, rounding, assumptions, congruences) and may pay more.

    python bench/grader_disguises.py                 # the table, false and true
    python bench/grader_disguises.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

Claim = Callable[[str, str, str], str]
CYR_O, GREEK_O = "\u041e", "\u039f"

FORMS: list[tuple[str, Claim]] = [
    ("plain $…$", lambda a, b, c: f"${a} \\times {b} = {c}$"),
    ("plain text ×", lambda a, b, c: f"{a} × {b} = {c}"),
    ("**bold claim**", lambda a, b, c: f"**{a} × {b} = {c}**"),
    ("bold result", lambda a, b, c: f"{a} × {b} = **{c}**"),
    ("__bold__", lambda a, b, c: f"__{a} × {b} = {c}__"),
    ("*italic*", lambda a, b, c: f"*{a} × {b} = {c}*"),
    ("_italic result_", lambda a, b, c: f"{a} × {b} = _{c}_"),
    ("~~strike~~ absent", lambda a, b, c: f"{a} × {b} = ***{c}***"),
    ("heading #", lambda a, b, c: f"# {a} × {b} = {c}"),
    ("heading ###", lambda a, b, c: f"### {a} × {b} = {c}"),
    ("heading with label", lambda a, b, c: f"### Step 1: {a} × {b} = {c}"),
    ("list -", lambda a, b, c: f"- {a} × {b} = {c}"),
    ("list *", lambda a, b, c: f"* {a} × {b} = {c}"),
    ("list 1.", lambda a, b, c: f"1. {a} × {b} = {c}"),
    ("list bold", lambda a, b, c: f"- **{a} × {b} = {c}**"),
    ("quote >", lambda a, b, c: f"> {a} × {b} = {c}"),
    ("\\mathbf all", lambda a, b, c: f"$\\mathbf{{{a} \\times {b} = {c}}}$"),
    ("\\mathbf result", lambda a, b, c: f"${a} \\times {b} = \\mathbf{{{c}}}$"),
    ("\\bm", lambda a, b, c: f"$\\bm{{{a} \\times {b} = {c}}}$"),
    ("\\boldsymbol", lambda a, b, c: f"$\\boldsymbol{{{a} \\times {b}}} = {c}$"),
    ("\\boxed claim", lambda a, b, c: f"$\\boxed{{{a} \\times {b} = {c}}}$"),
    ("\\boxed result", lambda a, b, c: f"${a} \\times {b} = \\boxed{{{c}}}$"),
    ("\\text number", lambda a, b, c: f"$\\text{{{a}}} \\times {b} = {c}$"),
    ("\\text result", lambda a, b, c: f"${a} \\times {b} = \\text{{{c}}}$"),
    ("\\mathrm", lambda a, b, c: f"$\\mathrm{{{a}}} \\times {b} = \\mathrm{{{c}}}$"),
    ("\\mbox", lambda a, b, c: f"$\\mbox{{{a}}} \\times {b} = {c}$"),
    ("\\textbf", lambda a, b, c: f"$\\textbf{{{a}}} \\times {b} = {c}$"),
    ("\\mathit", lambda a, b, c: f"${a} \\times {b} = \\mathit{{{c}}}$"),
    ("\\displaystyle", lambda a, b, c: f"$\\displaystyle {a} \\times {b} = {c}$"),
    ("\\color switch", lambda a, b, c: f"${a} \\times {b} = {{\\color{{blue}}{c}}}$"),
    ("\\color{..}{..}", lambda a, b, c: f"${a} \\times {b} = \\color{{red}}{{{c}}}$"),
    ("\\textcolor", lambda a, b, c: f"${a} \\times {b} = \\textcolor{{red}}{{{c}}}$"),
    ("\\phantom in number", lambda a, b, c: f"${a} \\times {b} = {c[:2]}\\phantom{{1}}{c[2:]}$"),
    ("\\hphantom", lambda a, b, c: f"${a} \\times {b} = \\hphantom{{0}}{c}$"),
    ("% comment in display", lambda a, b, c: f"$$\n{a} \\times {b} % the product\n= {c}\n$$"),
    ("\\! in number", lambda a, b, c: f"${a} \\times {b} = {c[0]}\\!\\!{c[1:]}$"),
    ("\\, in number", lambda a, b, c: f"${a} \\times {b} = {c[0]}\\,{c[1:]}$"),
    ("\\; between", lambda a, b, c: f"${a}\\;\\times\\;{b}\\;=\\;{c}$"),
    ("\\quad around =", lambda a, b, c: f"${a} \\times {b} \\quad = \\quad {c}$"),
    ("{} in number", lambda a, b, c: f"${a} \\times {b} = {c[0]}{{}}{c[1:]}$"),
    ("Cyrillic х times", lambda a, b, c: f"{a} \u0445 {b} = {c}"),
    ("Cyrillic О zero", lambda a, b, c: f"{a} × {b} = {c.replace('0', CYR_O)}"),
    ("Greek Ο zero", lambda a, b, c: f"{a} × {b} = {c.replace('0', GREEK_O)}"),
    ("Latin x times", lambda a, b, c: f"{a} x {b} = {c}"),
    ("Latin X times", lambda a, b, c: f"{a}X{b} = {c}"),
    ("\\cdot", lambda a, b, c: f"${a} \\cdot {b} = {c}$"),
    ("\\cdotp", lambda a, b, c: f"${a} \\cdotp {b} = {c}$"),
    ("\\ast", lambda a, b, c: f"${a} \\ast {b} = {c}$"),
    ("✕", lambda a, b, c: f"{a} ✕ {b} = {c}"),
    ("✖", lambda a, b, c: f"{a} ✖ {b} = {c}"),
    ("⨉", lambda a, b, c: f"{a} ⨉ {b} = {c}"),
    ("⨯", lambda a, b, c: f"{a} ⨯ {b} = {c}"),
    ("∙", lambda a, b, c: f"{a} ∙ {b} = {c}"),
    ("⋅", lambda a, b, c: f"{a} ⋅ {b} = {c}"),
    ("·", lambda a, b, c: f"{a} · {b} = {c}"),
    ("∗", lambda a, b, c: f"{a} ∗ {b} = {c}"),
    ("*", lambda a, b, c: f"{a} * {b} = {c}"),
    ("\\times text", lambda a, b, c: f"{a} \\times {b} = {c}"),
    ("\\overset{!}{=}", lambda a, b, c: f"${a} \\times {b} \\overset{{!}}{{=}} {c}$"),
    ("\\stackrel{!}{=}", lambda a, b, c: f"${a} \\times {b} \\stackrel{{!}}{{=}} {c}$"),
    ("\\overset{\\text{calc}}{=}", lambda a, b, c: f"${a} \\times {b} \\overset{{\\text{{calc}}}}{{=}} {c}$"),
    ("\\underbrace", lambda a, b, c: f"$\\underbrace{{{a} \\times {b}}}_{{\\text{{product}}}} = {c}$"),
    ("\\overbrace", lambda a, b, c: f"$\\overbrace{{{a} \\times {b}}}^{{\\text{{area}}}} = {c}$"),
    ("<b>", lambda a, b, c: f"<b>{a} × {b} = {c}</b>"),
    ("<strong> result", lambda a, b, c: f"{a} × {b} = <strong>{c}</strong>"),
    ("<span>", lambda a, b, c: f"{a} × {b} = <span style=\"color:red\">{c}</span>"),
    ("HTML comment before", lambda a, b, c: f"<!-- check --> {a} × {b} = {c}"),
    ("HTML comment in number", lambda a, b, c: f"{a} × {b} = {c[0]}<!-- -->{c[1:]}"),
    ("<br>", lambda a, b, c: f"{a} × {b} =<br>{c}"),
    ("&times; entity", lambda a, b, c: f"{a} &times; {b} = {c}"),
    ("backticks", lambda a, b, c: f"`{a} * {b} = {c}`"),
    ("backtick result", lambda a, b, c: f"{a} × {b} = `{c}`"),
    ("superscript power", lambda a, b, c: f"{a} × {b} = {c[0]}.{c[1]} × 10²"),
    ("\\times 10^{2}", lambda a, b, c: f"${a} \\times {b} = {c[0]}.{c[1]} \\times 10^{{2}}$"),
    ("1.7e2", lambda a, b, c: f"{a} × {b} = {c[0]}.{c[1]}e2"),
    ("1.7E2", lambda a, b, c: f"{a} * {b} = {c[0]}.{c[1]}E2"),
    ("units \\text{ m}", lambda a, b, c: f"${a}\\text{{ m}} \\times {b}\\text{{ m}} = {c}\\text{{ m}}^2$"),
    ("units m²", lambda a, b, c: f"{a} m × {b} m = {c} m²"),
    ("units \\,\\mathrm{cm}", lambda a, b, c: f"${a}\\,\\mathrm{{cm}} \\times {b}\\,\\mathrm{{cm}} = {c}\\,\\mathrm{{cm}}^2$"),
    ("dollars", lambda a, b, c: f"{a} × \\${b} = \\${c}"),
    ("\\[ display \\]", lambda a, b, c: f"\\[{a} \\times {b} = {c}\\]"),
    ("\\( inline \\)", lambda a, b, c: f"\\({a} \\times {b} = {c}\\)"),
    ("$$ display $$", lambda a, b, c: f"$${a} \\times {b} = {c}$$"),
    ("align*", lambda a, b, c: f"\\begin{{align*}}\n{a} \\times {b} &= {c}\n\\end{{align*}}"),
    ("thousands {,} none", lambda a, b, c: f"${a} \\times {b} = {c}.0$"),
    ("\\left( \\right)", lambda a, b, c: f"$\\left({a}\\right) \\times \\left({b}\\right) = {c}$"),
    (":= (exempt)", lambda a, b, c: f"$x := {a} \\times {b} = {c}$"),
    ("≈ rounded (exempt)", lambda a, b, c: f"{a} × {b} ≈ {c} (rounded)"),
    ("Assume (exempt)", lambda a, b, c: f"Assume {a} × {b} = {c}"),
    ("\\equiv (exempt)", lambda a, b, c: f"${a} \\times {b} \\equiv {c}$"),
]

CONTEXTS: list[tuple[str, str]] = [
    ("It is not hard to see that", "It is not hard to see that {claim}."),
    ("It is not difficult to check", "It is not difficult to check that {claim}."),
    ("Not surprisingly,", "Not surprisingly, {claim}."),
    ("Don't forget:", "Don't forget: {claim}."),
    ("This cannot fail:", "This cannot fail: {claim}."),
    ("No doubt", "No doubt {claim}."),
    ("Needless to say,", "Needless to say, {claim}."),
    ("It is no accident that", "It is no accident that {claim}."),
    ("We cannot deny that", "We cannot deny that {claim}."),
    ("Of course, not to forget,", "Of course, not to forget, {claim}."),
    ("Wait, double-check: yes", "{claim}. Wait, let me double-check: yes, that is right."),
    ("Oops, no, it's fine.", "{claim}. Oops, no, it's fine."),
    ("Let me reconsider... no, it holds.", "{claim}. Let me reconsider... no, it holds."),
    ("Hmm, wait. Yes, correct.", "{claim}. Hmm, wait. Yes, that's correct."),
    ("Hold on... no, that's right.", "{claim}. Hold on... no, that's right."),
    ("Is that right? Yes.", "{claim}. Is that right? Yes."),
    ("Note that", "Note that {claim}."),
    ("Clearly", "Clearly, {claim}."),
    ("We get", "We get {claim}, as computed."),
    ("so", "So {claim}."),
]

EXEMPT = frozenset(n for n, _ in FORMS if "(exempt)" in n)


def completion(line: str, good: bool) -> str:
    """The completion: the (disguised) product, then the sum the answer comes from."""
    c = "180" if good else "170"
    return f"We compute the product first.\n{line}\nThen ${c} + 10 = {int(c) + 10}$.\nThe answer is $\\boxed{{{int(c) + 10}}}$."


def variants(good: bool) -> list[tuple[str, str]]:
    c = "180" if good else "170"
    out = [(name, completion(f(("12"), "15", c) + ".", good)) for name, f in FORMS]
    plain = FORMS[0][1]("12", "15", c)
    out += [(name, completion(t.format(claim=plain), good)) for name, t in CONTEXTS]
    bold = FORMS[2][1]("12", "15", c)
    out += [(f"{name} + bold", completion(t.format(claim=bold), good)) for name, t in CONTEXTS[:10]]
    return out


PROBLEM = "A garden is 12 m by 15 m and a path adds 10 square metres. What is the total area, in square metres?"


def table() -> dict[str, object]:
    from faithsieve.grader import grade, warmup

    warmup()
    rows = []
    base: dict[bool, float] = {}
    for good in (False, True):
        ref = "190" if good else "180"
        for name, text in variants(good):
            r = grade(text, ref, PROBLEM, time_budget_s=5.0)
            rows.append({"variant": name, "true_step": good, "score": r.score, "flagged": r.first_error_step is not None,
                         "flags": list(r.flags)})
            if name == FORMS[0][0]:
                base[good] = r.score
    false_rows = [r for r in rows if not r["true_step"]]
    true_rows = [r for r in rows if r["true_step"]]
    over = [r["variant"] for r in false_rows if float(r["score"]) > base[False] and r["variant"] not in EXEMPT]  # type: ignore[arg-type]
    wrongly = [r["variant"] for r in true_rows if r["flagged"]]
    return {"rows": rows, "plain_false_score": base[False], "false_variants": len(false_rows),
            "paying_more": over, "true_variants": len(true_rows), "true_flagged": wrongly}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json")
    args = ap.parse_args()
    out = table()
    for r in out["rows"]:  # type: ignore[attr-defined]
        print(f"{'T' if r['true_step'] else 'F'}  {r['score']:5.2f}  {'flag' if r['flagged'] else '    '}  {r['variant']}")
    print(f"plain false step scores {out['plain_false_score']}; {len(out['paying_more'])} of {out['false_variants']} "  # type: ignore[arg-type]
          f"false variants pay more (exempt forms excluded): {out['paying_more']}")
    print(f"true variants flagged: {len(out['true_flagged'])} of {out['true_variants']}: {out['true_flagged']}")  # type: ignore[arg-type]
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1, ensure_ascii=False)
    sys.exit(0)


if __name__ == "__main__":
    main()
