"""Whole-proof judges: the direct-judge baseline and the graph-judge ablation.

``DirectJudge`` (``--mode judge``) sees the problem and the numbered steps and answers
``correct`` or the first wrong step. ``GraphJudge`` (ablation ``graph_judge``) sees the rendered
proof-state tree instead of doing local review and checking. Both are judgments, not checks:
their answers carry basis ``judged`` and a ``judgment`` evidence record.

``parse_judgment`` reads an answer. It takes the ``answer`` field of a JSON object when the
text holds one; otherwise it reads the first and the last non-empty lines, each of which must
be exactly ``correct`` or ``step N`` (case, surrounding quotes, markdown and final punctuation
aside, an ``answer:`` prefix allowed). If those two lines disagree, or neither reads, or N is
outside 1..n, the answer is a parse failure. Prose such as "step 2 is fine but step 3 ..." never
reads as an answer.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model, field_validator

from faithsieve.core.proof import Proof
from faithsieve.llm.structured import Unparsed, extract_json
from faithsieve.obligations.kinds.models import Evidence, ObligationKind
from faithsieve.stages.base import FusionResult, RunContext
from faithsieve.statetree.models import StateTree

MAX_STEP_CHARS = 8000
MAX_GRAPH_CHARS = 40000
_LINE = re.compile(r"^(?:(?:final\s+)?answer\s*(?:[:=\-]\s*)?)?(?:(correct)|step\s*(?:#\s*)?(\d{1,6}))$")
_STRIP = " \t*_`\"'.:;!()[]<>"
UNPARSED_NOTE = "judge answer unparsed"


def _line_label(line: str, n_steps: int) -> int | None:
    m = _LINE.match(line.strip(_STRIP).lower().strip(_STRIP))
    if m is None:
        return None
    if m.group(1):
        return 0
    n = int(m.group(2))
    return n if 1 <= n <= n_steps else None


def parse_judgment(text: str | int | None, n_steps: int) -> int | None:
    """``0`` for ``correct``, ``N`` for ``step N`` (1 <= N <= n_steps), ``None`` when the answer
    cannot be read (see the module docstring for the exact rule)."""
    if text is None or isinstance(text, bool):
        return None
    if isinstance(text, int):
        return text if 1 <= text <= n_steps else None
    text = text[:20000]
    try:
        data = extract_json(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and "answer" in data:
        value = data["answer"]
        if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 6:
            value = int(value.strip())  # a bare number in the answer field names a step
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return parse_judgment(value, n_steps) if isinstance(value, int) else _line_label(value, n_steps)
        return None
    lines = [ln for ln in text.splitlines() if ln.strip(_STRIP) and not ln.strip().startswith("```")]
    if not lines:
        return None
    labels = {_line_label(lines[0], n_steps), _line_label(lines[-1], n_steps)} - {None}
    return labels.pop() if len(labels) == 1 else None


def numbered_steps(proof: Proof) -> str:
    """``Step 1: ...`` lines, one per step."""
    return "\n".join(f"Step {s.index}: {s.text[:MAX_STEP_CHARS]}" for s in proof.steps)


def render_tree(tree: StateTree) -> str:
    """The proof-state tree as text: states (hypotheses, goal, branch), then transitions."""
    lines = ["States:"]
    seen: list[str] = []
    for node in [tree.root, *(n for e in tree.edges for n in (e.parent, e.child, *e.children))]:
        if node in seen or node not in tree.graph.nodes:
            continue
        seen.append(node)
        try:
            st = tree.state(node)
        except (KeyError, ValueError):
            continue
        hyps = "; ".join(h[:300] for h in st.hypotheses[:30]) or "(none)"
        branch = f" [branch: {st.branch[:200]}]" if st.branch else ""
        lines.append(f"- {st.id}{branch}: given {hyps} | goal: {st.goal[:400] or '(closed)'}")
    lines.append("Transitions:")
    for e in tree.edges:
        kids = ", ".join(e.children) if e.children else e.child
        extra = f"; new: {'; '.join(c[:200] for c in e.new_conditions[:10])}" if e.new_conditions else ""
        kind = e.type.value + (f"/{e.pattern}" if e.pattern else "")
        lines.append(f"- {e.id} (step {e.step}, {kind}): {e.parent} -> {kids} | {e.text[:600]}{extra}")
    out = "\n".join(lines)
    return out if len(out) <= MAX_GRAPH_CHARS else out[:MAX_GRAPH_CHARS] + "\n[... graph cut at the size limit]"


class JudgeAnswer(BaseModel):
    """The ``judge`` / ``graph_judge`` answer: ``{"answer": "correct" | "step N"}``."""

    answer: str | int
    reason: str = ""

    @field_validator("answer", mode="before")
    @classmethod
    def _no_bool(cls, v: object) -> object:
        if isinstance(v, bool):
            raise ValueError("answer must be 'correct' or 'step N'")
        return v


MAX_ENUM_STEPS = 200
"""Up to this many steps the answer schema lists every allowed answer, so a server that constrains
decoding by the schema (llama.cpp, vLLM, OpenAI) can only produce a readable answer."""


def answer_model(n_steps: int, base: type[BaseModel] | None = None) -> type[BaseModel]:
    """``JudgeAnswer`` whose schema enumerates ``correct``, ``step 1`` ... ``step n``.

    Validation stays as lenient as ``JudgeAnswer`` (``parse_judgment`` decides); the enumeration
    only shapes what is requested. An integer answer is read as ``step N``."""
    base = base or JudgeAnswer
    if n_steps > MAX_ENUM_STEPS:
        return base
    labels = ["correct", *(f"step {i}" for i in range(1, n_steps + 1))]

    def _int_as_step(v: object) -> object:
        if isinstance(v, bool):
            raise ValueError("answer must be 'correct' or 'step N'")
        return f"step {v}" if isinstance(v, int) else v

    return create_model(
        base.__name__, __base__=base,
        answer=(str, Field(json_schema_extra={"enum": list[Any](labels)})),
        __validators__={"int_as_step": field_validator("answer", mode="before")(_int_as_step)},
    )


def judgment_evidence(proof: Proof, label: int | None, method: str, reason: str, raw: str | None = None) -> Evidence:
    """The record of a whole-proof judgment: ``refuted`` at the named step, or ``unknown`` at the last
    step for ``correct`` and for an unreadable answer (a judgment verifies nothing)."""
    n = len(proof.steps)
    step = label if label else n
    text = proof.steps[step - 1].text if 1 <= step <= n else ""
    if label:
        status: Literal["refuted", "unknown"] = "refuted"
        claim = f"step {label} is the first wrong step"
    else:
        status = "unknown"
        claim = "no step is wrong" if label == 0 else "(no readable answer)"
    return Evidence(obligation=method, kind=ObligationKind.JUDGMENT, step=max(step, 1), span=(0, len(text)),
                    source=text[:2000], claim=claim, status=status, method=method, reason=reason[:1000] or None,
                    basis="judged", raw=raw[:4000] if raw is not None else None)


def ask_judgment(ctx: RunContext, prompt_id: str, values: dict[str, str], *, anchor: bool = False) -> FusionResult:
    """One judging call, read with ``parse_judgment``; unreadable -> ``unknown`` (undecided) with a note.
    ``anchor``: asked whatever the per-proof budget says (``RunContext.ask``)."""
    n = len(ctx.proof.steps)
    answer = ctx.ask(prompt_id, values, answer_model(n), anchor=anchor)
    if isinstance(answer, Unparsed):
        label, raw, reason = parse_judgment(answer.raw, n), answer.raw, answer.reason
    else:
        value = answer.value
        assert isinstance(value, JudgeAnswer)
        label, raw, reason = parse_judgment(value.answer, n), answer.raw, value.reason
    if label is None:
        ctx.note(f"{UNPARSED_NOTE} ({prompt_id}): {reason or 'not correct or step 1..' + str(n)}")
        ev = judgment_evidence(ctx.proof, None, prompt_id, f"{UNPARSED_NOTE}: {reason}", raw=raw)
        return FusionResult(first_error_step=None, basis=None, undecided=True,
                            reason=f"{UNPARSED_NOTE}: verdict unknown (an unread answer is no basis)", evidence=(ev,))
    ev = judgment_evidence(ctx.proof, label, prompt_id, reason)
    if label == 0:
        return FusionResult(first_error_step=None, basis="judged", reason=f"judged correct: {reason}"[:500],
                            evidence=(ev,))
    return FusionResult(first_error_step=label, basis="judged", reason=f"judged: step {label}: {reason}"[:500],
                        evidence=(ev,))


def anchor_judgment(ctx: RunContext) -> FusionResult:
    """The direct judge's own question (the same prompt and answer as ``--mode judge``), asked as the anchor of
    ``--mode llm``: whatever the per-proof budget says."""
    return ask_judgment(ctx, "judge", {"problem": ctx.proof.problem[:12000], "steps": numbered_steps(ctx.proof)},
                        anchor=True)


class DirectJudge:
    """The direct-judge baseline: problem and numbered steps in, first wrong step out."""

    name = "direct"

    def judge(self, ctx: RunContext) -> FusionResult:
        return ask_judgment(ctx, "judge", {"problem": ctx.proof.problem[:12000], "steps": numbered_steps(ctx.proof)})


class GraphJudge:
    """The graph-judge ablation: the same question over the rendered proof-state tree."""

    name = "graph"

    def judge(self, ctx: RunContext, tree: StateTree) -> FusionResult:
        return ask_judgment(ctx, "graph_judge", {"problem": ctx.proof.problem[:12000],
                                                 "steps": numbered_steps(ctx.proof), "graph": render_tree(tree)})


__all__ = ["UNPARSED_NOTE", "DirectJudge", "GraphJudge", "JudgeAnswer", "ask_judgment", "judgment_evidence",
           "numbered_steps", "parse_judgment", "render_tree"]
