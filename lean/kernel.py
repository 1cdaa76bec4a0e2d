"""``LeanKernel``: the statement loop and the proof loop of the Formal Evaluation Agent, over Lean.

Statement loop (``formalize``): the model drafts one theorem header (prompt ``formalize``),
calling the Lean tools of ``faithsieve.lean.tools`` as it likes; the header is checked with
``:= by sorry``; an elaboration error goes back to the model in the same conversation and
it repairs the draft, up to ``lean_statement_budget`` drafts. The loop stops early when the
repairs drift (the same first error twice in a row, or the header growing well past its
first size without fewer errors). Success is a header that elaborates with exactly the one
``sorry`` of its proof. With ``feedback`` from the faithfulness gate, the first draft is a
revision of ``previous``. Every draft, diagnostic and tool call is kept in a bounded
trajectory (``FormalStatement.trajectory``; ``last_trajectory`` after a failure).

Every checked declaration is preceded by ``set_option autoImplicit false in`` (a drafted statement
that names an undeclared variable is an error, not a theorem over a hidden implicit argument), and
every proof attempt by ``set_option maxHeartbeats MAX_HEARTBEATS in``: a tactic that runs long stops
with Lean's deterministic heartbeat error (status ``timeout``) in a REPL that stays alive with its
imports, instead of a wall-clock kill that loses the process (the backend's time limit stays as the
backstop for what heartbeats do not count).

Proof loop (``prove``): the statement is held fixed. For ``negation`` the header becomes
``theorem name_neg : ¬ (∀ binders, P)``. The statement is first checked once with ``:= by sorry``
(``elaborates``): one that does not elaborate stops there, before any tactic. A tactic portfolio
runs next, one check per tactic, cheapest first (core-only tactics without Mathlib, chosen by the
toolchain's version: ``decide +kernel`` and ``grind`` where it has them; Mathlib's bounds on π and
e where the goal mentions them; small witnesses where the goal is an ``∃``), then up to
``lean_proof_budget`` model attempts (prompt ``prove``) with the checker's messages and open
goals fed back. A candidate counts only when the check is ``valid``, the proof text passes
``forbidden_in_proof`` and ``#print axioms`` (appended to the snippet) lists only the
standard axioms. Everything else is ``inconclusive`` with its reason: a failed proof is
never evidence of an error.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Literal

from faithsieve.lean import screen
from faithsieve.lean.answers import (
    SORRY_WORD,
    LeanAnswer,
    Trajectory,
    _tactic_proof,
    read_lean_answer,
    read_proof,
)
from faithsieve.lean.backend import CheckResult, LeanBackend, LeanUnavailable
from faithsieve.lean.interface import FormalStatement, KernelResult
from faithsieve.lean.snippets import (
    DECL,
    Header,
    bounded,
    counterexample_snippets,
    negate_header,
    parse_header,
    preamble,
    split_proof,
    strip_imports,
    unsafe_commands,
    with_options,
)
from faithsieve.lean.tools import ToolLimits, ToolRunner
from faithsieve.lean.versions import DECIDE_KERNEL, GRIND, at_least
from faithsieve.obligations.kinds.models import NLObligation

from faithsieve.llm.prompts import Prompt, load_prompt
from faithsieve.llm.types import ChatMessage, ChatRequest, LLMClient, LLMError

if TYPE_CHECKING:
    from faithsieve.core.settings import Settings

MATHLIB_TACTICS: tuple[str, ...] = (
    "decide", "norm_num", "simp", "omega", "linarith", "positivity", "ring_nf", "field_simp", "nlinarith",
    "simp_all", "norm_num [*] at *", "field_simp\nring", "norm_num <;> linarith", "norm_num <;> nlinarith",
    "simp <;> omega", "constructor <;> norm_num",
)
"""The Mathlib portfolio, cheapest first; each entry is one check."""
CORE_TACTICS: tuple[str, ...] = ("decide", "rfl", "simp", "omega", "simp_all", "simp <;> omega",
                                 "constructor <;> decide")
"""The core-Lean portfolio (no Mathlib tactics) that every toolchain has; see ``core_tactics``."""
BOUND_TACTICS: tuple[tuple[str, str], ...] = (
    ("Real.pi", "linarith [Real.pi_gt_three, Real.pi_le_four]"),
    ("Real.pi", "nlinarith [Real.pi_gt_d2, Real.pi_lt_d2, Real.pi_pos]"),
    ("Real.pi", "nlinarith [Real.pi_gt_314, Real.pi_lt_315, Real.pi_pos]"),
    ("Real.exp", "nlinarith [Real.exp_one_gt_d9, Real.exp_one_lt_d9, Real.exp_pos 1]"),
)
"""Mathlib's numeric bounds on π and e, tried when the goal mentions ``Real.pi`` / ``Real.exp``.
``pi_gt_d2``/``pi_lt_d2`` (3.14 < π < 3.15) are the current names, ``pi_gt_314``/``pi_lt_315`` the
older ones (an entry whose names a Mathlib lacks just fails); ``exp_one_gt_d9``/``exp_one_lt_d9``
bound e to nine decimals."""
WITNESSES: tuple[str, ...] = ("0", "1", "-1", "2", "3", "1 / 2")
"""Small values tried as the witness of an ``∃`` goal (a counterexample form), all binders alike."""
MAX_HEARTBEATS = 200_000
"""``maxHeartbeats`` of one proof attempt (Lean's default; the unit is a thousand heartbeats)."""


def core_tactics(lean_version: str | None) -> tuple[str, ...]:
    """The core portfolio for a toolchain: ``decide +kernel`` (kernel reduction, which unfolds the
    irreducible ``Rat`` operations ``decide`` stops at) from ``DECIDE_KERNEL``, ``grind`` from ``GRIND``."""
    extra = ("decide +kernel",) if at_least(lean_version, DECIDE_KERNEL) else ()
    tail = ("grind",) if at_least(lean_version, GRIND) else ()
    return (*CORE_TACTICS[:2], *extra, *CORE_TACTICS[2:], *tail)


_EXISTS = re.compile(r"^∃\s*((?:\([^()]*\)\s*)+),")


def witness_tactics(conclusion: str, mathlib: bool) -> tuple[str, ...]:
    """``exact ⟨v, …, by norm_num⟩`` for each small value ``v`` when ``conclusion`` is ``∃ (x : T) …, P``
    (``by decide`` without Mathlib, and integer values only there)."""
    m = _EXISTS.match(conclusion.strip())
    if m is None:
        return ()
    count = sum(len(b.split(":")[0].split()) for b in re.findall(r"\(([^()]*)\)", m.group(1)))
    closer = "by norm_num" if mathlib else "by decide"
    values = WITNESSES if mathlib else tuple(w for w in WITNESSES if "/" not in w)
    return tuple("exact ⟨" + ", ".join([f"({v})"] * count) + f", {closer}⟩" for v in values)
_SORRY_WARNING = re.compile(r"declaration uses .sorry.")
_TOOLS_TEXT = {
    True: ("You can call these functions: `lean_check(code)` compiles a snippet and returns Lean's messages; "
           "`lean_name(name)` shows a declaration's type and definition; `lean_search(fragment)` lists declarations "
           "whose name contains a fragment; `lean_goal(statement, tactic_prefix)` shows the goal after some tactics."),
    False: "No tools are available in this run; answer directly.",
}
_FLAVOUR = {True: "Mathlib is imported: use ℕ, ℤ, ℚ, ℝ and Mathlib's definitions and tactics",
            False: "core Lean 4 only, no Mathlib: use Nat, Int and core definitions; ℝ and Mathlib tactics are unavailable"}


class _Unavailable(Exception):
    pass


class _Search:
    """Bookkeeping of one proof search: deadline, failures by kind, screening rejections, log."""

    def __init__(self, deadline: float, clock: Callable[[], float]) -> None:
        self.deadline = deadline
        self.clock = clock
        self.timeouts = 0
        self.failed = 0
        self.attempts = 0
        self.screened: list[str] = []
        self.log = Trajectory()

    def left(self) -> bool:
        return self.clock() < self.deadline

    def tally(self, result: CheckResult, why: str) -> None:
        if why.startswith("screening"):
            self.screened.append(why)
        elif result.status == "timeout":
            self.timeouts += 1
        else:
            self.failed += 1

    def reason(self, tactics: int, now: float) -> str:
        tried = f"{tactics} portfolio tactic(s) and {self.attempts} model attempt(s)"
        if self.screened:
            return f"screening failure: {self.screened[0]} ({len(self.screened)} candidate(s) rejected; {tried})"
        if now >= self.deadline or (self.timeouts and not self.failed):
            return f"timeout: {self.timeouts} check(s) hit the time limit ({tried})"
        note = f"; {self.timeouts} check(s) timed out" if self.timeouts else ""
        return f"search exhausted: {tried} failed{note}"


def _error_text(result: CheckResult) -> str | None:
    """The first error's text without its position (to compare drafts), or why the check failed."""
    if result.errors:
        return " ".join(result.errors[0].text.split())
    return screen.first_error(result) or None


def _axioms(result: CheckResult, name: str) -> tuple[str, ...] | None:
    found = screen.parse_print_axioms(result.messages, name)
    return found if found is not None else result.axioms


class LeanKernel:
    """The ``Kernel`` over a ``LeanBackend`` and a language model."""

    name = "lean"

    def __init__(self, backend: LeanBackend, llm: LLMClient | None, settings: Settings, *,
                 search_time_s: float | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.backend = backend
        self.llm = llm
        self.settings = settings
        self.mathlib = settings.lean_mathlib
        self.preamble = preamble(self.mathlib)
        self._tactics_for_version: tuple[str, ...] | None = None
        self.timeout_s = settings.lean_timeout_s
        self.limits = ToolLimits(max_calls=settings.lean_tool_calls, timeout_s=min(settings.lean_timeout_s, 30.0))
        self.search_time_s = search_time_s if search_time_s is not None else 4 * settings.lean_timeout_s
        self.clock = clock
        self.tools_enabled = settings.lean_tool_calls > 0
        self._local = threading.local()

    @property
    def tactics(self) -> tuple[str, ...]:
        """The base portfolio: Mathlib's, or core Lean's for the backend's Lean version (asked once)."""
        if self.mathlib:
            return MATHLIB_TACTICS
        if self._tactics_for_version is None:
            try:
                version = self.backend.versions().get("lean")
            except Exception:  # noqa: BLE001 (no version: the tactics every toolchain has)
                version = None
            self._tactics_for_version = core_tactics(version)
        return self._tactics_for_version

    def portfolio(self, target: Header) -> tuple[str, ...]:
        """The tactics tried on ``target``: the base list, Mathlib's bounds on π and e where the goal
        mentions them, small witnesses where it is an ``∃``."""
        text = " ".join(target.binders) + " " + target.conclusion
        bounds = tuple(t for key, t in BOUND_TACTICS if key in text) if self.mathlib else ()
        return (*self.tactics, *bounds, *witness_tactics(target.conclusion, self.mathlib))

    def declaration(self, target: Header, proof: str, *, heartbeats: bool = True) -> str:
        """``target := proof`` as checked: ``open`` lines, the options (``with_options``), the declaration."""
        return f"{with_options(target.text(with_prelude=True), MAX_HEARTBEATS if heartbeats else None)} := {proof}"

    def elaborates(self, target: Header, deadline: float | None = None) -> str | None:
        """Check ``target := by sorry`` once: None when it elaborates (one ``sorry``, no error), else why not.
        ``deadline`` (the search's) caps the check's limit; one already past is not sent (``BUDGET_SPENT``)."""
        timeout: float | None = None
        if deadline is not None:
            left = deadline - self.clock()
            if left <= 0:
                return f"{BUDGET_SPENT} before the statement's elaboration check"
            timeout = min(self.timeout_s, left)
        result = self._check(f"{self.preamble}{self.declaration(target, 'by sorry', heartbeats=False)}", timeout)
        if result.status == "sorry" and not result.errors:
            return None
        return f"the statement does not elaborate ({result.status}: {_error_text(result) or result.detail})"

    @property
    def last_trajectory(self) -> tuple[str, ...]:
        """The trajectory of this thread's last ``formalize`` or ``prove`` call."""
        return getattr(self._local, "trajectory", ())

    def available(self) -> tuple[bool, str]:
        reasons = []
        try:
            ok, why = self.backend.available()
        except Exception as exc:  # noqa: BLE001 (a probe that fails is a reason, not a crash)
            ok, why = False, f"{type(exc).__name__}: {exc}"
        if not ok:
            reasons.append(f"Lean backend {self.backend.name} cannot run ({why})")
        if self.llm is None:
            reasons.append("no language model configured (formalizing a natural-language obligation needs one; "
                           "set llm_base_url and llm_model)")
        return (not reasons, "; ".join(reasons))

    # ---- shared plumbing ----

    def _check(self, code: str, timeout_s: float | None = None) -> CheckResult:
        try:
            return self.backend.check(code, timeout_s or self.timeout_s)
        except LeanUnavailable as exc:
            raise _Unavailable(exc.message) from None

    def _runner(self) -> ToolRunner:
        return ToolRunner(self.backend, self.limits, mathlib=self.mathlib)

    def _converse(self, prompt: Prompt, messages: list[ChatMessage], runner: ToolRunner, log: Trajectory) -> str | None:
        """One model turn: tool calls answered until the model gives text (None: no answer)."""
        assert self.llm is not None
        runner.new_turn()
        for i, m in enumerate(messages):  # earlier turns' tool output is compacted
            if m.role == "tool" and len(m.content) > 400:
                messages[i] = m.model_copy(update={"content": bounded(m.content, 400)})
        refused = False  # a request with tools failed in this turn
        for _ in range(self.limits.max_calls + 2):
            tools = self.tools_enabled and not runner.exhausted and not refused
            request = ChatRequest(prompt_id=prompt.id, prompt_version=prompt.version, messages=tuple(messages),
                                  temperature=self.settings.llm_temperature, max_tokens=self.settings.llm_max_tokens,
                                  json_schema=None if tools else LeanAnswer.model_json_schema(), schema_name=prompt.id,
                                  tools=runner.specs if tools else None, tool_choice="auto" if tools else None)
            try:
                answer = self.llm.complete(request)
            except LLMError as exc:
                if not tools:
                    log.add(f"model unavailable: {exc.message}")
                    return None
                log.add(f"a request with tools failed ({exc.message[:200]}); asking without tools")
                refused = True
                continue
            if refused and self.tools_enabled:  # the endpoint answers, but not with tools: stop offering them
                log.add("the endpoint answers without tools only; tools switched off")
                self.tools_enabled = False
            if tools and answer.tool_calls:
                messages.append(ChatMessage(role="assistant", content=answer.text[:4000], tool_calls=answer.tool_calls))
                for call in answer.tool_calls:
                    messages.append(ChatMessage(role="tool", content=runner.run(call), tool_call_id=call.id,
                                                name=call.name))
                    log.add(runner.log[-1])
                continue
            messages.append(ChatMessage(role="assistant", content=answer.text[:20_000]))
            return answer.text
        log.add("the model kept calling tools; turn ended")
        return None

    # ---- statement loop ----

    def formalize(self, obligation: NLObligation, context: str, feedback: str | None = None,
                  previous: FormalStatement | None = None) -> FormalStatement | None:
        log = Trajectory()
        self._local.trajectory = ()
        try:
            return self._formalize(obligation, context, feedback, previous, log)
        except _Unavailable as exc:
            log.add(f"stop: Lean backend unavailable ({exc})")
            return None
        finally:
            self._local.trajectory = log.frozen()

    def _formalize(self, ob: NLObligation, context: str, feedback: str | None, previous: FormalStatement | None,
                   log: Trajectory) -> FormalStatement | None:
        if self.llm is None:
            log.add("stop: no language model configured")
            return None
        prompt = load_prompt("formalize")
        revision = ""
        if feedback and previous is not None:
            revision = ("\nA reviewer compared an earlier statement with this obligation and found that it does not "
                        f"say the same thing.\nEarlier statement:\n```lean\n{previous.text[:4000]}\n```\n"
                        f"Reviewer's report: {feedback[:4000]}\nRevise the statement so that it says exactly what the "
                        "obligation says.\n")
            log.add(f"revision of: {previous.text}")
        claim = (("May be assumed:\n" + "\n".join(f"- {p[:500]}" for p in ob.premises[:40]) + "\n") if ob.premises
                 else "") + f"Claim: {ob.claim[:3000]}"
        messages = list(prompt.render({"context": context[:8000], "kind": ob.kind.value, "obligation": claim,
                                       "revision": revision, "flavour": _FLAVOUR[self.mathlib],
                                       "tools": _TOOLS_TEXT[self.tools_enabled]}))
        runner = self._runner()
        name = "fs_" + re.sub(r"\W", "_", ob.id)[:60]
        last_error: str | None = None
        first_len: int | None = None
        best_errors: int | None = None
        for draft in range(1, self.settings.lean_statement_budget + 1):
            text = self._converse(prompt, messages, runner, log)
            if text is None:
                log.add("stop: no answer from the model")
                return None
            statement, refusal = self._read_statement(text, name)
            if statement is None:
                log.add(f"draft {draft} refused: {refusal}")
                messages.append(ChatMessage(role="user", content=f"That answer cannot be used: {refusal} "
                                            'Answer with one JSON object {"lean": "theorem ..."}.'))
                continue
            log.add(f"draft {draft}: {statement}")
            result = self._check(f"{self.preamble}{with_options(statement)} := by sorry")
            diag = screen.diagnostics_text(result, 3000)
            log.add(f"check {draft}: {result.status}" + (f"; {diag}" if diag else ""))
            sorries = sum(bool(_SORRY_WARNING.search(m.text)) for m in result.messages)
            if result.status == "sorry" and not result.errors and sorries <= 1 and len(result.goals) <= 1:
                return FormalStatement(text=f"{statement} := by sorry", language="lean4", compiled=True,
                                       diagnostics=diag, trajectory=log.frozen())
            if result.status == "valid":
                log.add("stop: the checker reported no sorry for a statement proved by sorry (backend fault?)")
                return None
            error = _error_text(result)
            n_errors = len(result.errors)
            if error is not None and error == last_error:
                log.add("stop: drift (the repair left the same error as before)")
                return None
            first_len = first_len or len(statement)
            if (len(statement) > max(2 * first_len, first_len + 400) and best_errors is not None
                    and n_errors >= best_errors):
                log.add("stop: drift (the statement keeps growing without fewer errors)")
                return None
            last_error = error
            best_errors = n_errors if best_errors is None else min(best_errors, n_errors)
            what = {"timeout": "the check ran out of time", "repl_error": "the Lean process failed on it"}.get(
                result.status, f"Lean rejected it (status {result.status})")
            messages.append(ChatMessage(role="user", content=(
                f"{what}:\n{diag or result.detail or '(no messages)'}\n\nRepair the Lean statement so that it "
                "elaborates, keeping its meaning exactly. Answer with one JSON object {\"lean\": \"theorem ...\"}.")))
        log.add(f"stop: statement budget of {self.settings.lean_statement_budget} draft(s) used up")
        return None

    @staticmethod
    def _read_statement(text: str, name: str) -> tuple[str | None, str]:
        """``(statement, "")``: the normalized statement (``open`` lines, then ``theorem name ... : P``
        under our ``name``); or ``(None, why)`` when the answer cannot be used."""
        answer = read_lean_answer(text)
        if answer is None:
            return None, 'Could not find a JSON object with a "lean" field.'
        code = strip_imports(answer)
        bad = unsafe_commands(code)
        if bad:
            return None, f"It uses commands that are not allowed: {', '.join(bad)}."
        if len(DECL.findall(code)) != 1:
            return None, "Give exactly one theorem statement."
        header, _ = split_proof(code)
        if SORRY_WORD.search(header):
            return None, "The statement itself may not contain sorry or admit."
        try:
            h = parse_header(header)
        except ValueError as exc:
            return None, f"The theorem header could not be read ({exc})."
        if any(line.strip() and not line.strip().startswith(("open ", "--")) for line in h.prelude.splitlines()):
            return None, "Only `open` lines may come before the theorem (no definitions, axioms or other commands)."
        return h.text(name, with_prelude=True), ""

    # ---- proof loop ----

    def prove(self, statement: FormalStatement, branch: Literal["original", "negation"]) -> KernelResult:
        search = _Search(self.clock() + self.search_time_s, self.clock)
        try:
            return self._prove(statement, branch, search)
        except _Unavailable as exc:
            return self._inconclusive(f"Lean backend unavailable: {exc}")
        finally:
            self._local.trajectory = search.log.frozen()

    def _inconclusive(self, reason: str) -> KernelResult:
        return KernelResult(status="inconclusive", reason=reason[:1000], method=self.backend.name)

    def _prove(self, statement: FormalStatement, branch: Literal["original", "negation"], search: _Search) -> KernelResult:
        if statement.language != "lean4" or not statement.compiled:
            return self._inconclusive("no compiled Lean statement to prove")
        header, _ = split_proof(strip_imports(statement.text))
        try:
            target = parse_header(negate_header(header) if branch == "negation" else header)
        except ValueError as exc:
            return self._inconclusive(f"statement not readable as a theorem header: {exc}")
        done = "refuted" if branch == "negation" else "passed"
        why = self.elaborates(target, search.deadline)
        if why is not None:
            search.log.add(f"stop: {why}")
            return self._inconclusive(why if branch == "original" else why.replace("the statement", "the negated statement"))
        tactic = self._tactics(target, search)
        if tactic is not None:
            return KernelResult(status=done, reason=f"proved by {tactic.replace(chr(10), '; ')}", method=self.backend.name,
                                artifact=self.declaration(target, _tactic_proof(tactic)))
        if self.llm is not None and self.settings.lean_proof_budget > 0 and search.left():
            found = self._model_proofs(target, branch, search)
            if found is not None:
                return KernelResult(status=done, reason=f"proof written by the model (attempt {search.attempts})",
                                    artifact=found, method=self.backend.name)
        return self._inconclusive(search.reason(len(self.portfolio(target)), self.clock()))

    def prove_by_tactics(self, header: str, deadline: float | None = None, *,
                         elaborated: bool = False) -> tuple[str | None, str]:
        """Run the tactic portfolio on a theorem header (no model): ``(tactic, "")`` when one
        proves it and passes screening, else ``(None, reason)``. The statement is checked with
        ``:= by sorry`` first (unless ``elaborated`` says the caller did): one that does not elaborate
        stops there, and the reason starts with ``NOT_ELABORATED``."""
        search = _Search(deadline if deadline is not None else self.clock() + self.search_time_s, self.clock)
        try:
            target = parse_header(split_proof(strip_imports(header))[0])
            why = None if elaborated else self.elaborates(target, search.deadline)
            if why is not None:
                search.log.add(f"stop: {why}")
                return None, why
            tactic = self._tactics(target, search)
        except ValueError as exc:
            return None, f"statement not readable as a theorem header: {exc}"
        except _Unavailable as exc:
            return None, f"Lean backend unavailable: {exc}"
        finally:
            self._local.trajectory = search.log.frozen()
        return (tactic, "") if tactic is not None else (None, search.reason(len(self.portfolio(target)), self.clock()))

    def _tactics(self, target: Header, search: _Search) -> str | None:
        for tactic in self.portfolio(target):
            if not search.left():
                search.log.add("stop: proof-search time budget spent in the tactic portfolio")
                return None
            result, why = self._attempt(target, _tactic_proof(tactic), search)
            search.log.add(f"tactic {tactic!r}: {result.status}" + (f" ({why})" if why else ""))
            if why is None:
                return tactic
            search.tally(result, why)
        return None

    def _attempt(self, target: Header, proof: str, search: _Search) -> tuple[CheckResult, str | None]:
        """Check ``target := proof``: the reason it does not count, or None when it does."""
        code = f"{self.preamble}{self.declaration(target, proof)}\n\n#print axioms {target.name}\n"
        result = self._check(code, min(self.timeout_s, max(1.0, search.deadline - self.clock())))
        if result.status != "valid":
            return result, f"status {result.status}"
        bad = screen.forbidden_in_proof(proof) + unsafe_commands(proof)
        if bad:
            return result, f"screening: forbidden in the proof: {', '.join(bad)}"
        axioms = _axioms(result, target.name)
        if axioms is None:
            return result, "screening: #print axioms gave no answer"
        if not screen.axioms_ok(axioms):
            return result, f"screening: nonstandard axioms {', '.join(axioms)}"
        return result, None

    def _model_proofs(self, target: Header, branch: str, search: _Search) -> str | None:
        prompt = load_prompt("prove")
        task = ("Prove this theorem." if branch == "original" else
                "The original claim is suspected to be false. Prove this negation of it (it says the claim fails).")
        shown = target.text(with_prelude=True)
        messages = list(prompt.render({"task": task, "statement": f"{shown} := by\n  sorry",
                                       "flavour": _FLAVOUR[self.mathlib], "tools": _TOOLS_TEXT[self.tools_enabled]}))
        runner = self._runner()
        for attempt in range(1, self.settings.lean_proof_budget + 1):
            if not search.left():
                search.log.add("stop: proof-search time budget spent")
                return None
            text = self._converse(prompt, messages, runner, search.log)
            if text is None:
                return None
            search.attempts = attempt
            proof, refusal = read_proof(text, target)
            if proof is None:
                search.log.add(f"attempt {attempt} refused: {refusal}")
                if "statement" in refusal or "sorry" in refusal:
                    search.screened.append(f"screening: {refusal}")
                messages.append(ChatMessage(role="user", content=f"{refusal} Keep the statement exactly as given "
                                            'and answer with one JSON object {"lean": "by ..."}.'))
                continue
            result, why = self._attempt(target, proof, search)
            search.log.add(f"attempt {attempt}: {result.status}" + (f" ({why})" if why else ""))
            if why is None:
                return self.declaration(target, proof)
            search.tally(result, why)
            goals = "\nOpen goals:\n" + "\n---\n".join(result.goals[:4]) if result.goals else ""
            messages.append(ChatMessage(role="user", content=(
                f"The checker did not accept this proof ({why}).\n{screen.diagnostics_text(result, 3000)}{goals}\n\n"
                'Change the proof only; the statement stays as given. Answer with one JSON object {"lean": "by ..."}.')))
        return None

    # ---- counterexamples ----

    def refute_with_counterexample(self, statement: FormalStatement, assignment: Mapping[str, str]) -> KernelResult:
        """Check in Lean that ``assignment`` (values from z3/sympy) falsifies the statement:
        ``¬ (∀ binders, P)`` by specialising at the values, hypotheses by ``norm_num``/``decide``."""
        header, _ = split_proof(strip_imports(statement.text))
        try:
            snippets = counterexample_snippets(header, assignment, mathlib=self.mathlib)
        except ValueError as exc:
            return self._inconclusive(f"counterexample not checkable: {exc}")
        try:
            for name, closer, code in snippets:
                code = with_options(code, MAX_HEARTBEATS)
                result = self._check(f"{self.preamble}{code}\n\n#print axioms {name}\n")
                if result.status == "valid" and screen.axioms_ok(_axioms(result, name)):
                    values = ", ".join(f"{k} = {v}" for k, v in assignment.items())
                    return KernelResult(status="refuted", reason=f"counterexample {values} checked by {closer}",
                                        artifact=code, method=self.backend.name)
        except _Unavailable as exc:
            return self._inconclusive(f"Lean backend unavailable: {exc}")
        return self._inconclusive("the counterexample did not check in Lean")


NOT_ELABORATED = "the statement does not elaborate"
BUDGET_SPENT = "the proof-search time budget was spent"
"""How the reason of a search stopped by its deadline before a check begins."""
"""How ``prove_by_tactics``'s reason starts when the statement itself is broken (no tactic was tried)."""

__all__ = ["BOUND_TACTICS", "BUDGET_SPENT", "CORE_TACTICS", "MATHLIB_TACTICS", "MAX_HEARTBEATS", "NOT_ELABORATED", "WITNESSES",
           "LeanKernel", "core_tactics", "witness_tactics"]
