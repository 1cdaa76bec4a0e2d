"""Lean tools offered to a model as OpenAI function tools, and the runner that answers them.

Four tools, each answered by one check on the ``LeanBackend`` and each bounded in argument
size, output size and time:

- ``lean_check(code)``: compile a snippet (our import preamble is put in front; the model's
  own ``import`` lines are dropped) and return the status and the elaborator's messages.
- ``lean_name(name)``: ``#check @name`` and ``#print name`` for one identifier.
- ``lean_search(fragment)``: declarations whose full name contains ``fragment``
  (case-insensitive), shortest names first, at most ``ToolLimits.search_results`` of them.
  ``#find`` and ``exact?`` are not used: ``#find`` is a Mathlib command whose behaviour and
  output changed over versions, and ``exact?`` is a proof search, not a name search. Instead
  the snippet folds over the environment's constant table with a small
  ``open Lean Elab Command in #eval`` program (core Lean only, behind ``import Lean`` in the core
  flavour, where no import would leave those names undefined) and reports the hits with
  ``logInfo``; the program is built by us and the fragment is restricted to identifier
  characters, so the model cannot inject code through it.
- ``lean_goal(statement, tactic_prefix)``: the goal left after a tactic prefix, read from
  ``theorem ... := by <prefix>; sorry``.

``ToolRunner.run`` never raises: an unknown tool, unreadable or invalid arguments, a snippet
with a forbidden command (``#eval``, ``run_cmd``, IO, ...), an exhausted call budget or an
unavailable backend all come back as an ``error: ...`` string for the model to read.

The pure snippet helpers the kernel shares with the tools (splitting a declaration at its
``:=``, ``parse_header``, ``negate_header``, ``counterexample_snippets``) live in
``faithsieve.lean.snippets``. The search program uses core APIs only (``SMap.fold``, ``Name.isInternal``, ``Array.qsort``);
it has not been run against a toolchain here (none can be installed on our machines).
"""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass
from typing import Any

from faithsieve.lean.backend import CheckResult, LeanBackend, LeanUnavailable
from faithsieve.lean.screen import diagnostics_text
from faithsieve.lean.snippets import (
    bounded,
    preamble,
    split_proof,
    strip_imports,
    unsafe_commands,
    with_proof,
)
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from faithsieve.llm.types import ToolCall


@dataclass(frozen=True)
class ToolLimits:
    """Bounds of the tools: calls per model turn, argument and output sizes, time per check."""

    max_calls: int = 8
    """Tool calls one model turn may make (``lean_tool_calls``)."""
    max_arg_chars: int = 6000
    """Longest raw argument string accepted."""
    max_output_chars: int = 3000
    """Longest tool answer returned to the model."""
    timeout_s: float = 30.0
    """Time limit of one tool check."""
    search_results: int = 25
    """Most declarations ``lean_search`` lists."""


# ---------------------------------------------------------------------------------------
# Pure helpers on snippets

# ---------------------------------------------------------------------------------------
# Argument models and tool specs

_IDENT = r"^[\w.'!?₀-₉]+$"
"""Identifier characters (Unicode letters and digits, ``_ . ' ! ?``, subscripts): no spaces,
quotes, backslashes or brackets, so a name can be placed in a command safely."""


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CheckArgs(_Args):
    code: str = Field(min_length=1, max_length=20_000, description="A Lean 4 snippet (declarations or commands).")


class NameArgs(_Args):
    name: str = Field(min_length=1, max_length=200, pattern=_IDENT, description="A fully or partly qualified name.")


class SearchArgs(_Args):
    fragment: str = Field(min_length=2, max_length=80, pattern=_IDENT, description="Part of a declaration name.")


class GoalArgs(_Args):
    statement: str = Field(min_length=1, max_length=8_000,
                           description="A theorem header (`theorem t (x : ℕ) : P`; any `:= ...` is ignored).")
    tactic_prefix: str = Field(default="", max_length=8_000, description="Tactics run before the goal is shown.")


_DESCRIPTIONS: dict[str, tuple[type[BaseModel], str]] = {
    "lean_check": (CheckArgs, ("Compile a Lean 4 snippet and return its status (valid, sorry, lean_error, ...) "
                               "and the elaborator's messages. Imports are added for you.")),
    "lean_name": (NameArgs, "Show the type (#check) and definition (#print) of one declaration name."),
    "lean_search": (SearchArgs, ("List declarations whose name contains a fragment (case-insensitive), "
                                 "shortest first.")),
    "lean_goal": (GoalArgs, "Show the goal state after running a tactic prefix on a theorem statement."),
}

TOOL_NAMES: tuple[str, ...] = tuple(_DESCRIPTIONS)


def _parameters(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    props = {k: {kk: vv for kk, vv in v.items() if kk in ("type", "description")} for k, v in schema["properties"].items()}
    return {"type": "object", "properties": props, "required": list(schema.get("required", [])),
            "additionalProperties": False}


def tool_specs(names: tuple[str, ...] = TOOL_NAMES) -> tuple[dict[str, Any], ...]:
    """OpenAI function-tool specs for ``names`` (in that order)."""
    return tuple({"type": "function", "function": {"name": n, "description": _DESCRIPTIONS[n][1],
                                                     "parameters": _parameters(_DESCRIPTIONS[n][0])}}
                 for n in names)


_SEARCH = """open Lean Elab Command in
#eval show CommandElabM Unit from do
  let env ← getEnv
  let frag := "@FRAG@"
  let hits := env.constants.fold (init := (#[] : Array Name)) fun acc n _ =>
    if acc.size < 2000 && !n.isInternal && (n.toString.toLower.splitOn frag).length > 1 then acc.push n else acc
  let hits := hits.qsort (fun a b => a.toString.length < b.toString.length)
  let shown := (hits.extract 0 @N@).toList.map toString
  logInfo m!"{hits.size} match(es) (at most 2000 counted); shown: {shown.length}\\n{String.intercalate "\\n" shown}"
"""


SEARCH_IMPORT = "import Lean\n\n"
"""What the search program is put behind without Mathlib: ``CommandElabM``, ``getEnv``, ``logInfo`` and
``m!`` live in the ``Lean`` package, which core's prelude does not import (Mathlib imports it)."""


def search_snippet(fragment: str, limit: int) -> str:
    """The core-Lean program listing declarations whose name contains ``fragment`` (pure).
    ``fragment`` must already be validated as identifier characters (``SearchArgs``)."""
    if not re.match(_IDENT, fragment):
        raise ValueError(f"not a name fragment: {fragment!r}")
    return _SEARCH.replace("@FRAG@", fragment.lower()).replace("@N@", str(max(1, limit)))


def goal_snippet(statement: str, tactic_prefix: str) -> str:
    """``statement`` (its proof, if any, dropped) proved by ``tactic_prefix`` then ``sorry`` (pure)."""
    header, _ = split_proof(strip_imports(statement))
    prefix = tactic_prefix.strip("\n")
    return with_proof(header, (textwrap.dedent(prefix) + "\n" if prefix.strip() else "") + "sorry")


# ---------------------------------------------------------------------------------------
# The runner


class ToolRunner:
    """Answers the model's tool calls with Lean checks, within ``limits``.

    ``calls`` counts the calls of the current model turn (``new_turn`` resets it); ``total``
    counts all of them; ``log`` keeps one bounded line per call for the trajectory.
    """

    def __init__(self, backend: LeanBackend, limits: ToolLimits | None = None, *, mathlib: bool = True,
                 names: tuple[str, ...] = TOOL_NAMES) -> None:
        unknown = set(names) - set(TOOL_NAMES)
        if unknown:
            raise ValueError(f"unknown Lean tools {sorted(unknown)}")
        self.backend = backend
        self.limits = limits or ToolLimits()
        self.preamble = preamble(mathlib)
        self.search_preamble = self.preamble or SEARCH_IMPORT  # the program needs Lean's elaborator API
        self.names = names
        self.calls = 0
        self.total = 0
        self.log: list[str] = []

    @property
    def specs(self) -> tuple[dict[str, Any], ...]:
        """The tool specs to offer (``ChatRequest.tools``)."""
        return tool_specs(self.names)

    @property
    def exhausted(self) -> bool:
        return self.calls >= self.limits.max_calls

    def new_turn(self) -> None:
        """Start counting a new model turn's calls."""
        self.calls = 0

    def run(self, call: ToolCall) -> str:
        """The answer to one tool call (never raises)."""
        answer = self._run(call.name, call.arguments)
        self.log.append(bounded(f"tool {call.name}({call.arguments[:300]}) -> {answer[:500]}", 900))
        return answer

    def _run(self, name: str, arguments: str) -> str:
        if name not in self.names:
            return f"error: unknown tool {name[:60]!r}; available: {', '.join(self.names)}"
        if self.exhausted:
            return (f"error: tool-call budget of this turn used up ({self.limits.max_calls} calls); "
                    "give your final answer now")
        self.calls += 1
        self.total += 1
        if len(arguments) > self.limits.max_arg_chars:
            return f"error: arguments too long ({len(arguments)} characters; at most {self.limits.max_arg_chars})"
        try:
            data = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            return f"error: arguments are not JSON ({exc.msg} at character {exc.pos})"
        if not isinstance(data, dict):
            return "error: arguments must be a JSON object"
        model = _DESCRIPTIONS[name][0]
        try:
            args = model.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"]) or "arguments"
            return f"error: bad arguments for {name}: {loc}: {first['msg']}"
        handler = getattr(self, f"_{name}")
        return bounded(handler(args), self.limits.max_output_chars)

    def _check(self, code: str) -> CheckResult | str:
        bad = unsafe_commands(code)
        if bad:
            return f"error: the snippet uses commands the tools do not run: {', '.join(bad)}"
        try:
            return self.backend.check(self.preamble + strip_imports(code), self.limits.timeout_s)
        except LeanUnavailable as exc:
            return f"error: Lean backend unavailable: {exc.message}"[:500]
        except Exception as exc:  # noqa: BLE001 (a tool answers the model; it never crashes the loop)
            return f"error: the check failed ({type(exc).__name__})"

    def _text(self, result: CheckResult, budget: int) -> str:
        if result.status in ("timeout", "repl_error"):
            return f"status: {result.status}" + (f" ({result.detail})" if result.detail else "")
        body = diagnostics_text(result, budget)
        return f"status: {result.status}" + (f"\n{body}" if body else "")

    def _lean_check(self, args: CheckArgs) -> str:
        result = self._check(args.code)
        if isinstance(result, str):
            return result
        out = self._text(result, self.limits.max_output_chars)
        if result.status == "sorry" and result.goals:
            out += "\ngoals at sorry:\n" + "\n---\n".join(result.goals)
        return out

    def _lean_name(self, args: NameArgs) -> str:
        result = self._check(f"#check @{args.name}\n#print {args.name}")
        return result if isinstance(result, str) else self._text(result, self.limits.max_output_chars)

    def _lean_search(self, args: SearchArgs) -> str:
        code = search_snippet(args.fragment, self.limits.search_results)
        try:  # our own program: the unsafe-command screen is for model-written code only
            result = self.backend.check(self.search_preamble + code, self.limits.timeout_s)
        except LeanUnavailable as exc:
            return f"error: Lean backend unavailable: {exc.message}"[:500]
        except Exception as exc:  # noqa: BLE001 (as above)
            return f"error: the search failed ({type(exc).__name__})"
        infos = [m.text for m in result.messages if m.severity == "info"]
        if result.status == "valid" and infos:
            return infos[-1]
        return self._text(result, self.limits.max_output_chars)

    def _lean_goal(self, args: GoalArgs) -> str:
        if re.search(r"\b(?:sorry|admit)\b", args.tactic_prefix):
            return "error: the tactic prefix may not contain sorry or admit"
        result = self._check(goal_snippet(args.statement, args.tactic_prefix))
        if isinstance(result, str):
            return result
        if result.status == "sorry":
            if result.goals:
                return "goal after the prefix:\n" + result.goals[-1]
            return "status: sorry (this backend reports no goal states)\n" + diagnostics_text(result, 1500)
        if result.status == "lean_error" and any("no goals" in m.text for m in result.errors):
            return "the prefix closes every goal (no goal is left for the final sorry)\n" + diagnostics_text(result, 1500)
        return self._text(result, self.limits.max_output_chars)


__all__ = ["TOOL_NAMES", "CheckArgs", "GoalArgs", "NameArgs", "SearchArgs", "ToolLimits", "ToolRunner",
           "goal_snippet", "search_snippet", "tool_specs"]
