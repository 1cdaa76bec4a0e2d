"""README.md and the reference pages in docs/ read against the code: the first screen, every
``faithsieve`` command the docs show, the defaults they state, the layout table, the links, and
that they tell no history. Editing a page or the code so that they disagree fails here."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from faithsieve.cli.commands import build_parser, main
from faithsieve.core.settings import Settings
from faithsieve.grading.config import GraderConfig

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))
DOCS = ["README.md", *PAGES, "api/README.md", "datasets/README.md", "datasets/proofloc-mini/README.md"]


def _page(name: str) -> str:
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def _section(title: str, text: str = README) -> str:
    """The text under the heading ``title`` (written with its ``#``s), up to the next heading."""
    return re.split(r"\n#{2,4} ", ("\n" + text).split(f"\n{title}\n", 1)[1], maxsplit=1)[0]


def _run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


# --- the first screen ------------------------------------------------------------------------------


def test_first_screen_sets_up_runs_then_tests() -> None:
    first = README.split("\n---\n", 1)[0]
    assert len(first.splitlines()) <= 25
    blocks = re.findall(r"```bash\n(.*?)```", first, re.S)
    assert len(blocks) == 2
    setup, run = blocks[0].strip().splitlines()
    assert setup == "python3 -m venv .venv && . .venv/bin/activate && pip install ."
    assert run.startswith("faithsieve localize datasets/examples/")
    assert blocks[1].strip() == "pip install -e '.[test]' && python -m pytest -q"
    assert first.index(blocks[0]) < first.index("Run the tests") < first.index(blocks[1])
    code, out = _run(shlex.split(run)[1:])
    assert code == 0 and out.startswith("VERDICT: ")


def test_what_it_does_shows_real_output() -> None:
    block = _section("## What it does").split("```text\n", 1)[1].split("```", 1)[0]
    command, *shown = block.strip().splitlines()
    code, out = _run(shlex.split(command.removeprefix("$ "))[1:])
    lines = out.splitlines()
    assert code == 0
    for i, line in enumerate(s for s in shown if s != "..."):
        assert lines[i].startswith(line), (lines[i], line)


# --- every command the docs show --------------------------------------------------------------------


def _doc_commands() -> list[tuple[str, str]]:
    """(doc, command) for every ``faithsieve ...`` line of a code block (continuations joined,
    environment assignments and comments dropped; usage synopses with ``[--...]`` are left out)."""
    found = []
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        blocks = re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
        blocks += ["\n".join(m.group(0).splitlines()) for m in re.finditer(r"(?m)(^    \S.*\n)+", text)]
        # inline commands with an argument (`faithsieve view RUN_DIR`; not `faithsieve score` as a name)
        blocks += [m for m in re.findall(r"`(faithsieve [^`]+)`", text) if len(m.split()) >= 3]
        for block in blocks:
            joined = re.sub(r"\\\n\s*", " ", block)
            for line in joined.splitlines():
                if not re.match(r"\s*([A-Z_]+=\S*\s+)*faithsieve\s", line):
                    continue
                words = shlex.split(line, comments=True)
                while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                    words.pop(0)
                if words[:1] == ["faithsieve"] and "[--" not in line and (doc, shlex.join(words)) not in found:
                    found.append((doc, shlex.join(words)))
    return found


COMMANDS = _doc_commands()


def test_the_docs_show_every_subcommand() -> None:
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    shown = {shlex.split(c)[1] for _, c in COMMANDS if len(shlex.split(c)) > 1}
    assert set(sub.choices) <= shown, set(sub.choices) - shown
    assert len(COMMANDS) >= 20


@pytest.mark.parametrize(("doc", "command"), COMMANDS, ids=[f"{d}:{c[:60]}" for d, c in COMMANDS])
def test_every_command_in_the_docs_parses(doc: str, command: str) -> None:
    argv = shlex.split(command)[1:]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            build_parser().parse_args(argv)
    except SystemExit as exc:
        if exc.code == 0:  # --version, --help
            return
        pytest.fail(f"{doc}: `{command}` is refused ({exc.code}): {err.getvalue().strip()}")


# --- stated defaults -------------------------------------------------------------------------------


def _number(text: str) -> Any:
    text = text.replace("\u2212", "-").replace(" ", "").replace(",", "").strip("`")
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def test_configuration_section_defaults_are_the_settings() -> None:
    pairs = re.findall(r"`FAITHSIEVE_([A-Z_]+)` \((\d+)\)", _section("## Configuration", _page("localize.md")))
    assert len(pairs) == 8
    for name, default in pairs:
        assert Settings.model_fields[name.lower()].default == int(default), name


def test_llm_settings_defaults_are_the_settings() -> None:
    text = " ".join(_section("# LLM mode: a language model in front of the checkers (`--mode llm`, `--mode judge`)",
                             _page("llm.md")).split())
    pairs = re.findall(r"`FAITHSIEVE_(LLM_[A-Z_]+)` \((\d+)", text)
    assert {n for n, _ in pairs} >= {"LLM_TIMEOUT_S", "LLM_MAX_RETRIES", "LLM_CONCURRENCY", "LLM_MAX_TOKENS",
                                     "LLM_PROOF_TIME_LIMIT_S"}
    for name, default in pairs:
        assert Settings.model_fields[name.lower()].default == int(default), name
    for name in re.findall(r"`FAITHSIEVE_([A-Z_]+)`", text):
        assert name.lower() in Settings.model_fields, name


def _grader_rows() -> list[tuple[str, str]]:
    table = _section("## Configuration (`GraderConfig`, env prefix `FAITHSIEVE_GRADER_`)", _page("grade.md"))
    rows = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        names: list[str] = []
        for written in re.findall(r"`([a-z_/]+)`", cells[0]):
            first, *rest = written.split("/")
            names += [first] + [first[: first.rfind("_")] + part for part in rest]
        values = re.split(r"\s*(?:/|, )\s*", cells[1])
        assert len(names) == len(values), line
        rows += zip(names, values, strict=True)
    return rows


def test_grader_table_defaults_are_the_config() -> None:
    rows = _grader_rows()
    assert {n for n, _ in rows} == set(GraderConfig.model_fields)
    for name, written in rows:
        assert GraderConfig.model_fields[name].default == _number(written), (name, written)


# --- layout ----------------------------------------------------------------------------------------


def test_layout_table_folders_are_the_import_names() -> None:
    table = _page("README.md").split("\n## Layout\n", 1)[1]
    rows = re.findall(r"^\| `([a-z/]+)/` \| `([a-z.]+)` \|", table, re.M)
    assert len(rows) >= 10
    for folder, name in rows:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.submodule_search_locations, name
        assert Path(list(spec.submodule_search_locations)[0]).resolve() == (ROOT / folder).resolve(), name


# --- names the pages list ------------------------------------------------------------------------


def test_ablations_are_the_cli_choices() -> None:
    from faithsieve.cli.options import ABLATIONS

    written = re.search(r"`--ablate ([a-z_ |]+)`", _page("llm.md"))
    assert written and tuple(n.strip() for n in written.group(1).split("|")) == ABLATIONS


def test_structured_modes_in_the_server_table_are_accepted() -> None:
    table = _section("Where to point it (the key is read from `OPENAI_API_KEY`, or the variable `--api-key-env` names):",
                     _page("llm.md"))
    modes = {m for row in table.splitlines()[2:] if row.startswith("|")
             for m in re.findall(r"`(json_[a-z_]+|guided_json|none)`", row.rsplit("|", 2)[1])}
    assert modes == {"json_schema", "json_schema_strict", "guided_json", "json_object_schema", "json_object", "none"}
    for mode in modes:
        build_parser().parse_args(["localize", "f.json", "--mode", "llm", "--structured", mode])


def test_grader_flags_list_names_every_flag_the_grader_sets() -> None:
    from faithsieve.grading import reward

    text = " ".join(_section("## Time budget, isolation, determinism", _page("grade.md")).split())
    listed = set(re.findall(r"`([a-z_]+)`", text.split("Flags: ", 1)[1].split(".", 1)[0]))
    source = Path(reward.__file__).read_text(encoding="utf-8")
    emitted = set(re.findall(r'flags\.append\("([a-z_]+)"\)', source))
    for name, table in vars(reward).items():  # the status -> flag tables
        if name.endswith("_FLAG") and isinstance(table, dict):
            emitted |= set(table.values())
    assert len(emitted) >= 13
    assert listed == emitted, listed ^ emitted


def test_the_grader_example_gives_what_its_comments_say() -> None:
    import ast

    block = _section("# Grading: a reward in RL training loops (`faithsieve.grader`)", _page("grade.md"))
    block = block.split("```python\n", 1)[1]
    block = block.split("```", 1)[0]
    code, comments = block.split("\nr.score", 1)
    scope: dict[str, Any] = {}
    exec(compile(code, "docs/grade.md", "exec"), scope)  # the page's own example
    r = scope["r"]
    said = dict(re.findall(r"^r\.(\w+)\s+# (.*)$", "r.score" + comments, re.M))
    assert set(said) == {"score", "first_error_step", "reason", "step_spans"}
    assert r.score == float(said["score"].split(":")[0])
    assert r.first_error_step == int(said["first_error_step"])
    assert r.reason.startswith(ast.literal_eval(said["reason"]).split("...")[0])
    assert r.step_spans == ast.literal_eval(said["step_spans"].split(":")[0])


# --- the pages themselves ---------------------------------------------------------------------------

JOBS = ["localize", "score", "grade", "rewrite", "serve", "workbench", "llm", "lean", "ray"]


def test_readme_is_short_and_every_job_has_its_page() -> None:
    assert len(README.splitlines()) <= 160
    index = _page("README.md")
    for job in JOBS:
        assert (ROOT / "docs" / f"{job}.md").is_file(), job
        assert f"]({job}.md)" in index, job
    assert {Path(p).stem for p in PAGES} == {*JOBS, "README"}


def test_every_relative_link_resolves() -> None:
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            assert ((ROOT / doc).parent / target.split("#", 1)[0]).exists(), (doc, target)


def test_the_pages_tell_no_history() -> None:
    """No revision hashes, round numbers or issue numbers: the pages say what holds now."""
    for doc in ["README.md", *PAGES, "api/README.md", "datasets/README.md"]:
        text = (ROOT / doc).read_text(encoding="utf-8")
        assert not re.search(r"(?i)\bissues? \d+|(?<![.\w])#\d{1,4}\b|\b(?:round|speed round) \d+\b|\b(?:first|second|third|fourth|fifth) round\b", text), doc
        hashes = [h for h in re.findall(r"\b[0-9a-f]{7,40}\b", text) if re.search(r"[a-f]", h) and re.search(r"\d", h)]
        assert not hashes, (doc, hashes)


def test_the_localize_page_python_example_gives_what_it_says() -> None:
    block = _section("# Localize: the first wrong step of one proof (`faithsieve localize`)", _page("localize.md"))
    block = block.split("```python\n", 1)[1].split("```", 1)[0]
    code, said = block.strip().rsplit("\n", 1)
    scope: dict[str, Any] = {}
    exec(compile(code, "docs/localize.md", "exec"), scope)  # the page's own example
    expression, comment = said.split("#", 1)
    import ast

    names = re.findall(r"\bv\.(\w+)", expression)
    assert names == ["verdict", "first_error_step"], expression
    value = tuple(getattr(scope["v"], name) for name in names)
    assert tuple(str(v) for v in value) == tuple(str(v) for v in ast.literal_eval(comment.strip()))
