"""Prompt files: format, strict rendering, and every shipped prompt parses."""

from __future__ import annotations

import pytest

from faithsieve.llm.prompts import load_prompt, parse_prompt, shipped_prompts

GOOD = """---
id: demo
version: 3
purpose: a demonstration
---
## system
You check {{thing}}.
## user
Problem: {{problem}}
Braces stay: {"a": 1}
"""


def test_parse_and_render_fills_values_verbatim() -> None:
    p = parse_prompt(GOOD, "demo")
    assert (p.id, p.version, p.purpose) == ("demo", "3", "a demonstration")
    assert p.placeholders == {"thing", "problem"}
    system, user = p.render({"thing": "proofs", "problem": "Show {{x}} = {1}."})
    assert system.role == "system" and system.content == "You check proofs."
    # a value that looks like a placeholder is inserted verbatim, not expanded again
    assert user.content == 'Problem: Show {{x}} = {1}.\nBraces stay: {"a": 1}'


@pytest.mark.parametrize(("values", "message"), [
    ({"thing": "x"}, "missing values \\['problem'\\]"),
    ({"thing": "x", "problem": "p", "extra": "e"}, "unused values \\['extra'\\]"),
])
def test_render_is_strict(values: dict[str, str], message: str) -> None:
    with pytest.raises(KeyError, match=message):
        parse_prompt(GOOD, "demo").render(values)


@pytest.mark.parametrize(("text", "message"), [
    (GOOD.replace("---\nid", "id", 1), "missing '---' header"),
    (GOOD.replace("id: demo", "id: other"), "does not match the file name"),
    (GOOD.replace("version: 3\n", ""), "no version"),
    (GOOD.replace("## user\n", ""), "exactly one '## system' and one '## user'"),
    (GOOD.replace("purpose: a demonstration", "purpose a demonstration"), "bad header line"),
])
def test_malformed_prompt_files_are_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_prompt(text, "demo")


def test_every_shipped_prompt_parses_and_has_a_purpose() -> None:
    names = shipped_prompts()
    assert {"decompose_tree", "state_tree", "scan", "review", "obligations", "semantic_check", "synthesis",
            "judge"} <= set(names)
    for name in names:
        p = load_prompt(name)
        assert p.purpose and p.version and p.system.strip() and p.user.strip(), name


def test_unknown_or_unsafe_prompt_ids_are_refused() -> None:
    for bad in ("nope", "../config", "Scan"):
        with pytest.raises(KeyError):
            load_prompt(bad)
