"""Reading checker output (pure): responses into ``CheckResult``, and the screens a proof must pass.

Response shapes assumed (field names as the tools send them):

* **Lean REPL / lean-interact** ``CommandResponse``::

      {"env": 0,
       "messages": [{"severity": "error"|"warning"|"info"|"trace",
                     "pos": {"line": 3, "column": 2}, "endPos": {...} | null, "data": "..."}],
       "sorries": [{"pos": {...}, "endPos": {...}, "goal": "⊢ ...", "proofState": 0}]}

  and the REPL's own failure, lean-interact's ``LeanError``: ``{"message": "..."}``.
  Lines are 1-based, columns 0-based. Both keys may be absent when empty. A lean-interact
  pydantic response object is accepted as well (dumped by alias).
* **Kimina Lean Server** ``POST /api/check``: ``{"results": [item, ...]}``, one item per
  snippet: ``{"id": "...", "time": 1.2, "response": <CommandResponse or {"message"}>,
  "diagnostics": {...}}`` or, when the server itself failed, ``{"id": "...", "time": 60.0,
  "error": "Lean REPL command timed out in 60.0 seconds"}``. The older ``/verify`` items use
  ``custom_id`` and may carry ``time`` inside ``response``.

Classification (Kimina's own): an ``error`` containing "timed out" → ``timeout``; another
``error`` → ``repl_error``; a ``{"message"}`` response → ``repl_error``; any message of
severity ``error`` → ``lean_error``; otherwise a non-empty ``sorries`` (or the warning
"declaration uses 'sorry'") → ``sorry``; otherwise ``valid``. An unknown severity counts as an
error, so nothing unreadable is ever ``valid``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from faithsieve.lean.backend import CheckResult, CheckStatus, LeanMessage
from pydantic import BaseModel

STANDARD_AXIOMS = frozenset({"propext", "Classical.choice", "Quot.sound"})
"""The axioms an accepted proof may depend on."""

_SORRY_WARNING = re.compile(r"declaration uses ['`]sorry['`]")
_SEVERITIES: dict[str, Literal["error", "warning", "info"]] = {
    "error": "error", "warning": "warning", "info": "info", "information": "info", "trace": "info"}


# --- responses -------------------------------------------------------------------------------

def _pos(m: Mapping[str, Any]) -> tuple[int | None, int | None]:
    p = m.get("pos")
    if not isinstance(p, Mapping):
        return None, None
    line, col = p.get("line"), p.get("column")
    return (line if isinstance(line, int) else None), (col if isinstance(col, int) else None)


def _message(m: Any) -> LeanMessage:
    if not isinstance(m, Mapping):
        return LeanMessage(severity="error", text=f"unreadable message: {str(m)[:200]}")
    sev = _SEVERITIES.get(str(m.get("severity", "")).lower(), "error")
    text = m.get("data", m.get("message", ""))
    line, col = _pos(m)
    return LeanMessage(severity=sev, text=text if isinstance(text, str) else str(text), line=line, column=col)


HEARTBEATS = re.compile(r"maximum number of heartbeats \(\d{1,20}\) has been reached")
"""Lean's message when a command runs past ``maxHeartbeats``: a deterministic limit, reported as an
error by a REPL that stays alive (unlike a wall-clock kill, which loses the process and its imports)."""


def classify_repl(response: Mapping[str, Any] | BaseModel | Any, backend: str = "lean-interact",
                  time_ms: float = 0.0) -> CheckResult:
    """A REPL / lean-interact command response (or ``LeanError``) as a ``CheckResult``."""
    if isinstance(response, BaseModel):
        response = response.model_dump(by_alias=True)
    base: dict[str, Any] = {"backend": backend, "time_ms": time_ms}
    if not isinstance(response, Mapping):
        return CheckResult(status="repl_error", detail=f"unreadable response: {str(response)[:200]}", **base)
    if "message" in response and "messages" not in response and "sorries" not in response:
        return CheckResult(status="repl_error", detail=f"REPL error: {str(response['message'])[:500]}", **base)
    raw_msgs, raw_sorries = response.get("messages") or [], response.get("sorries") or []
    if not isinstance(raw_msgs, list) or not isinstance(raw_sorries, list):
        return CheckResult(status="repl_error", detail="messages/sorries are not lists", **base)
    messages = tuple(_message(m) for m in raw_msgs)
    goals = tuple(str(s.get("goal", "")) if isinstance(s, Mapping) else str(s) for s in raw_sorries)
    axioms = parse_print_axioms(messages)
    status: CheckStatus
    if any(m.severity == "error" and HEARTBEATS.search(m.text) for m in messages):
        return CheckResult(status="timeout", messages=messages, goals=goals, axioms=axioms,
                           detail="Lean's heartbeat limit (maxHeartbeats) was reached; the REPL and its environment "
                                  "are kept", **base)
    if any(m.severity == "error" for m in messages):
        status = "lean_error"
    elif raw_sorries or any(m.severity == "warning" and _SORRY_WARNING.search(m.text) for m in messages):
        status = "sorry"
    else:
        status = "valid"
    return CheckResult(status=status, messages=messages, goals=goals, axioms=axioms, **base)


def classify_kimina(item: Mapping[str, Any] | Any) -> CheckResult:
    """One result of Kimina's ``/api/check`` (or ``/verify``) as a ``CheckResult``."""
    base: dict[str, Any] = {"backend": "kimina"}
    if not isinstance(item, Mapping):
        return CheckResult(status="repl_error", detail=f"unreadable result: {str(item)[:200]}", **base)
    resp = item.get("response")
    t = item.get("time")
    if t is None and isinstance(resp, Mapping):
        t = resp.get("time")
    time_ms = float(t) * 1000 if isinstance(t, (int, float)) else 0.0
    err = item.get("error")
    if err:
        status: CheckStatus = "timeout" if "timed out" in str(err).lower() else "repl_error"
        return CheckResult(status=status, detail=str(err)[:500], time_ms=time_ms, **base)
    if resp is None:
        return CheckResult(status="repl_error", detail="result has neither response nor error", time_ms=time_ms, **base)
    return classify_repl(resp, backend="kimina", time_ms=time_ms)


# --- sorry and axioms --------------------------------------------------------------------------

def uses_sorry(result: CheckResult) -> bool:
    """The check left a ``sorry``/``admit`` (status, goals, the warning, or ``sorryAx``)."""
    return (result.status == "sorry" or bool(result.goals)
            or any(_SORRY_WARNING.search(m.text) for m in result.messages)
            or (result.axioms is not None and "sorryAx" in result.axioms))


_AXIOMS = re.compile(r"'(?P<name>[^']+)' (?:depends on axioms: \[(?P<list>[^\]]*)\]|(?P<none>does not depend on any axioms))")


def parse_print_axioms(messages: Iterable[LeanMessage | Mapping[str, Any] | str],
                       name: str | None = None) -> tuple[str, ...] | None:
    """The axioms reported by ``#print axioms NAME`` ("'NAME' depends on axioms: [propext, ...]" or
    "'NAME' does not depend on any axioms"); ``None`` when no such message is present. With
    ``name``, only that declaration's report counts; without, the union of all reports."""
    found: dict[str, None] | None = None
    want = _plain_name(name) if name else None
    for m in messages:
        text = m.text if isinstance(m, LeanMessage) else (m.get("data", "") if isinstance(m, Mapping) else m)
        for hit in _AXIOMS.finditer(str(text)):
            if want is not None and _plain_name(hit["name"]) != want:
                continue
            found = {} if found is None else found
            for ax in (hit["list"] or "").split(","):
                if ax.strip():
                    found[_plain_name(ax.strip())] = None
    return None if found is None else tuple(found)


def _plain_name(n: str) -> str:
    return n.replace("«", "").replace("»", "").strip()


def axioms_ok(axioms: Iterable[str] | None) -> bool:
    """Only ``propext``, ``Classical.choice`` and ``Quot.sound`` (an unknown list is not OK:
    ``sorryAx`` and the ``Lean.ofReduceBool`` of ``native_decide`` are refused here)."""
    return axioms is not None and set(axioms) <= STANDARD_AXIOMS


# --- source screening --------------------------------------------------------------------------

def lex_regions(text: str) -> tuple[list[tuple[int, int, str]], bool]:
    """Spans ``(start, end, kind)`` of comments (``--``, nested ``/- -/``) and string/char
    literals in Lean source, and whether one of them is left unterminated."""
    out: list[tuple[int, int, str]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if text.startswith("--", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((i, j, "comment"))
            i = j
        elif text.startswith("/-", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/-", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("-/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append((i, j, "comment"))
            if depth:
                return out, True
            i = j
        elif ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append((i, min(j + 1, n), "string"))
            if j >= n:
                return out, True
            i = j + 1
        elif ch == "'" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_'!?")) and (
                m := re.match(r"'(?:\\.[^']{0,8}|[^\\'\n])'", text[i:])):
            out.append((i, i + m.end(), "string"))
            i += m.end()
        else:
            i += 1
    return out, False


def strip_comments(text: str) -> tuple[str, bool]:
    """The source with comments blanked (same length, newlines kept) and the unterminated flag."""
    regions, open_end = lex_regions(text)
    chars = list(text)
    for a, b, kind in regions:
        if kind == "comment":
            for k in range(a, b):
                if chars[k] != "\n":
                    chars[k] = " "
    return "".join(chars), open_end


_W = r"(?<![\w'!?.]){}(?![\w'!?])"
_FORBIDDEN: tuple[tuple[str, str], ...] = (
    ("sorry", _W.format("sorry")),
    ("admit", _W.format("admit")),
    ("sorryAx", _W.format(r"(?:\w+\.)?sorryAx")),
    ("native_decide", _W.format("native_decide") + r"|\bdecide\s*\+\s*native\b|\bnative\s*:=\s*true\b"),
    ("Lean.ofReduceBool", r"\b(?:ofReduceBool|reduceBool|ofReduceNat|reduceNat|trustCompiler)\b"),
    ("axiom", _W.format("axiom")),
    ("@[implemented_by]", r"\bimplemented_by\b"),
    ("@[extern]", r"@\[\s*extern\b"),
    ("unsafe", _W.format("unsafe")),
    ("#exit", r"#exit\b"),
    ("set_option debug", r"\bset_option\s+debug\."),
    ("macro/elab/syntax", _W.format(r"(?:macro|macro_rules|elab|elab_rules|syntax|notation|infixl?|infixr|prefix|postfix)")),
    ("run_cmd/#eval", r"#eval\b|" + _W.format(r"(?:run_cmd|run_tac|run_elab|run_meta)")),
    ("import", _W.format("import")),
    ("new command", (r"(?m)^(?:theorem|lemma|def|example|instance|abbrev|opaque|namespace|section|end|open|variable"
                    r"|universe|attribute|export|mutual|noncomputable|private|protected|@\[|#\w+)\b")),
)


def forbidden_in_proof(proof_text: str) -> list[str]:
    """What makes a proof text unacceptable, in order of appearance (empty list: acceptable).

    Comments are ignored; string literals are not (a ``"sorry"`` there is refused too: the guard
    errs towards refusing). ``native_decide`` is refused here and again by ``axioms_ok`` through
    the ``Lean.ofReduceBool`` axiom it adds. A line at column 0 that starts a command (a second
    ``theorem``, ``namespace``, ``#print``, an attribute) means the text ends the proof and goes
    on with new commands, which could shadow the declaration ``#print axioms`` inspects."""
    code, open_end = strip_comments(proof_text)
    hits: list[tuple[int, str]] = []
    first_nl = code.find("\n")
    for label, pattern in _FORBIDDEN:
        start = (first_nl + 1 if first_nl >= 0 else len(code)) if label == "new command" else 0
        m = re.compile(pattern).search(code, start)  # a command may not start the text's later lines
        if m:
            hits.append((m.start(), label))
    if open_end:
        hits.append((len(code), "unterminated comment or string"))
    return [label for _, label in sorted(hits)]


# --- feedback text -----------------------------------------------------------------------------

def _one_line(text: str, limit: int) -> str:
    s = " ".join(text.split())
    return s if len(s) <= limit else s[: max(0, limit - 1)] + "…"


def _where(m: LeanMessage) -> str:
    return f"line {m.line}:{m.column}" if m.line is not None else "?"


def first_error(result: CheckResult, limit: int = 300) -> str:
    """One line for a feedback prompt: the first error, or why the check did not pass ("" when valid)."""
    if result.status in ("repl_error", "timeout"):
        return _one_line(f"{result.status}: {result.detail or 'no detail'}", limit)
    if result.errors:
        m = result.errors[0]
        return _one_line(f"{_where(m)}: {m.text}", limit)
    if result.status == "sorry" or uses_sorry(result):
        goal = f" (goal: {result.goals[0]})" if result.goals else ""
        return _one_line(f"incomplete proof: sorry remains{goal}", limit)
    return "lean_error: no error message reported" if result.status == "lean_error" else ""


def diagnostics_text(result: CheckResult, limit: int = 4000) -> str:
    """All messages (and open goals) as bounded text for a repair prompt."""
    parts: list[str] = []
    if result.status in ("repl_error", "timeout"):
        parts.append(f"{result.status}: {result.detail or 'no detail'}")
    for m in result.messages:
        parts.append(f"{m.severity} at {_where(m)}: {m.text.rstrip()}")
    for g in result.goals:
        parts.append(f"open goal at a sorry:\n{g.rstrip()}")
    out, used = [], 0
    for k, p in enumerate(parts):
        if used + len(p) + 1 > limit:
            tail = f"… ({len(parts) - k} more)"
            room = limit - used - len(tail) - 2
            if room > 40:
                out.append(p[:room] + "…")
            out.append(tail)
            break
        out.append(p)
        used += len(p) + 1
    return "\n".join(out)[:limit]


__all__ = [
    "STANDARD_AXIOMS", "axioms_ok", "classify_kimina", "classify_repl", "diagnostics_text", "first_error",
    "forbidden_in_proof", "lex_regions", "parse_print_axioms", "strip_comments", "uses_sorry",
]
