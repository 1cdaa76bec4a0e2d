"""The verify stage of ``--mode llm`` (``FormalVerifier``): each typed obligation becomes one
evidence record.

Obligations are taken highest priority first while ``ctx.deadline`` allows (past it: ``unknown``,
method ``budget``):

(a) an ``equation`` that is a pure numeric chain (numerals, + - × ÷, powers, fractions, square
    roots and relations; no variables, functions, constants, ellipses or words, as read by our
    own bounded tokenizer and parser, never evaluated as code) whose numbers all appear in the
    source goes to our checkers, each link of the chain separately, left to right. One the
    source writes literally is checked as written: basis ``checked``. One the model wrote from
    words must pass the faithfulness gate first (below it: ``unknown``, method ``gate``), and
    its outcome's basis is ``formalized``;
(b) otherwise, when the kernel is available and the obligation is marked for a formal statement
    (``use_formal``): formalize -> faithfulness gate -> revise from the drift report
    (``gate_revisions`` times) -> prove the faithful statement, or its negation when the unit
    looks wrong (``proof_branch``): basis ``formal``. No statement that compiles, one that never
    passes the gate, or a kernel that raises gives ``unknown``;
(c) otherwise ``unknown`` (method ``none``): left to review.

Ablations: ``nl_only`` checks nothing (all left to review); ``no_gate`` takes every model-written
statement as faithful (as does a gate named ``pass`` on the formal route), and a formal record's
reason says faithfulness was not assessed. Only decided records carry weight. No outcome here is a
verdict on the proof; the fusion stage decides.
"""

from __future__ import annotations

import re
import time
from typing import Literal

from faithsieve.core.errors import FaithSieveError
from faithsieve.lean.interface import FormalStatement, KernelResult
from faithsieve.mathtext.ast import (
    BinOp,
    Call,
    Chain,
    Expr,
    Neg,
    Num,
    Pow,
    Rel,
    render,
    walk,
)
from faithsieve.mathtext.formulas import extract_formulas
from faithsieve.mathtext.lexer import (
    FUNC,
    LB,
    LP,
    NUM,
    OP,
    POW,
    RB,
    REL,
    RP,
    tokenize_latex,
    tokenize_plain,
)
from faithsieve.mathtext.literals import DIGITS, scan_numbers, strip_thousands
from faithsieve.mathtext.parser import parse_tokens
from faithsieve.obligations.checkers.portfolio import run_portfolio
from faithsieve.obligations.kinds.models import (
    ArithmeticObligation,
    Evidence,
    NLObligation,
    Outcome,
    Refuted,
    Unknown,
    Verified,
)
from faithsieve.stages.base import Gate, GateVerdict, RunContext, ScanResult
from faithsieve.stages.verbatim import written_verbatim
from faithsieve.statetree.models import EdgeUnit, StateTree

MAX_EQUATION_CHARS = 400
MAX_SOURCE_CHARS = 20_000
"""Longest source text read for the literal-claim test (a step is at most 20,000 characters)."""
_ELLIPSIS = re.compile(r"\.\.\.|…|\\[lcv]?dots\b")
_DELIMS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
_PURE_TOKENS = frozenset({NUM, OP, POW, LP, RP, LB, RB, REL, FUNC})
_PURE_OPS = frozenset({"+", "-", "*", "/"})
_PURE_FUNCS = frozenset({"sqrt", "frac"})


# ---------------------------------------------------------------------------------------
# Pure numeric claims


def pure_numeric_chain(equation: str) -> Chain | None:
    """The relation chain ``equation`` writes when it is a pure numeric claim, else None.

    Pure: only numerals, ``+ - × ÷ /``, powers, parentheses, ``\\frac``, ``\\sqrt`` and
    relations (at least one). Variables, named constants, other functions, ``mod``,
    factorials, percentages, units, ellipses or any word make it not pure.
    """
    text = equation.strip().rstrip(".").strip()
    if not text or len(text) > MAX_EQUATION_CHARS or _ELLIPSIS.search(text):
        return None
    for left, right in _DELIMS:
        if text.startswith(left) and text.endswith(right) and len(text) > len(left) + len(right):
            text = text[len(left):-len(right)].strip()
            break
    latex = "\\" in text or "{" in text
    try:
        toks = tokenize_latex(text) if latex else tokenize_plain(text)
    except FaithSieveError:
        return None
    if not toks or any(t.kind not in _PURE_TOKENS for t in toks):
        return None
    if any(t.kind == OP and t.value not in _PURE_OPS for t in toks) or any(
            t.kind == FUNC and t.value not in _PURE_FUNCS for t in toks):
        return None
    if not any(t.kind == REL for t in toks):
        return None
    try:
        chain, _ = parse_tokens(toks, latex)
    except FaithSieveError:
        return None
    if not chain.rels or not all(_numeric(e) for e in chain.exprs):
        return None
    return chain


def _numeric(e: Expr) -> bool:
    return all(isinstance(n, (Num, BinOp, Neg, Pow)) or (isinstance(n, Call) and n.fn == "sqrt") for n in walk(e))


def literals_in_source(chain: Chain, source: str) -> bool:
    """Every number the equation uses is written in the source text (by value)."""
    if not source.strip():
        return True
    written = {lit.value for lit in scan_numbers(strip_thousands(source), DIGITS)}
    used = {n.value for e in chain.exprs for n in walk(e) if isinstance(n, Num)}
    return used <= written


def _link_key(lhs: Expr, op: str, rhs: Expr) -> tuple[str, str, str]:
    return (render(lhs), op, render(rhs))


def written_in_source(chain: Chain, source: str) -> bool:
    """Every link of ``chain`` is a link of a formula the source writes (read by our own extractor):
    the equation is the proof's literal claim, so a check of it needs no faithfulness gate.
    An equality may be written either way round."""
    try:
        formulas = extract_formulas(source[:MAX_SOURCE_CHARS])
    except FaithSieveError:
        return False
    written: set[tuple[str, str, str]] = set()
    for f in formulas:
        for lhs, op, rhs in f.chain.links():
            written.add(_link_key(lhs, op, rhs))
            if op == "=":
                written.add(_link_key(rhs, op, lhs))
    return all(_link_key(lhs, op, rhs) in written for lhs, op, rhs in chain.links())


def check_chain(ob: NLObligation, chain: Chain, ctx: RunContext) -> tuple[Outcome, int]:
    """Check each link left to right: refuted at the first false link, verified if all hold.

    Returns the outcome and the 0-based index of the deciding link."""
    unknown: Unknown | None = None
    method = "exact"
    for i, (lhs, op, rhs) in enumerate(chain.links()):
        arith = ArithmeticObligation(id=f"{ob.id}.l{i}", step=ob.step, span=ob.span, edge=ob.edge,
                                     source=ob.source, claim=Rel(lhs, op, rhs), approx=op == "~")
        out = run_portfolio(arith, ctx.checkers, ctx.deadline)
        if isinstance(out, Refuted):
            return out, i
        if isinstance(out, Unknown) and unknown is None:
            unknown = out
        method = out.method
    return (unknown or Verified(method)), 0


# ---------------------------------------------------------------------------------------
# The verifier


class FormalVerifier:
    """Our checkers for pure numeric claims, the kernel behind the faithfulness gate for the rest."""

    name = "formal"

    def __init__(self, gate: Gate | None = None) -> None:
        if gate is None:
            from faithsieve.stages.gate import LLMGate

            gate = LLMGate()
        self.gate = gate

    def verify(self, ctx: RunContext, tree: StateTree, obligations: list[NLObligation],
               scan: ScanResult) -> list[Evidence]:
        if ctx.ablated("nl_only"):
            return [_record(ob, "unknown", "none", reason="left to review: formal checking disabled (nl_only ablation)")
                    for ob in obligations]
        edges = {e.id: e for e in tree.edges}
        order = sorted(range(len(obligations)), key=lambda i: -obligations[i].priority)
        results: dict[int, Evidence] = {}
        for i in order:
            ob = obligations[i]
            t = time.perf_counter()
            if time.monotonic() > ctx.deadline:
                ev = _record(ob, "unknown", "budget", reason="left to review: time budget for this proof exhausted")
            else:
                ev = self._one(ctx, ob, edges.get(ob.edge), scan)
            results[i] = ev.model_copy(update={"time_ms": round((time.perf_counter() - t) * 1000, 3)})
        return [results[i] for i in range(len(obligations))]

    def _one(self, ctx: RunContext, ob: NLObligation, edge: EdgeUnit | None, scan: ScanResult) -> Evidence:
        chain = pure_numeric_chain(ob.equation) if ob.equation else None
        if chain is not None and not literals_in_source(chain, ob.source):
            ctx.note(f"verify: equation of {ob.id} uses numbers its source does not write; not checked as arithmetic")
            chain = None
        if chain is not None:
            return self._arithmetic(ctx, ob, edge, chain)
        ok, why = ctx.kernel.available()
        if not ok:
            return _record(ob, "unknown", "none", reason=f"left to review: no formal backend ({why})")
        if not ob.use_formal:
            return _record(ob, "unknown", "none", reason="left to review: not marked for a formal statement")
        return self._formal(ctx, ob, edge, scan)

    def _arithmetic(self, ctx: RunContext, ob: NLObligation, edge: EdgeUnit | None, chain: Chain) -> Evidence:
        """Check a pure numeric equation. One the source writes literally is ``checked`` as it is; one the
        model wrote from words ("12 red and 22 blue make 35") is a model-written statement: it must first
        pass the faithfulness gate (its score is recorded; below the gate it stays unknown) and its
        outcome is ``formalized``, never ``checked``."""
        assert ob.equation is not None
        verdict: GateVerdict | None = None
        literal = written_in_source(chain, ob.source) or written_verbatim(ob.equation, ob.source)
        basis: Literal["checked", "formalized"] = "checked" if literal else "formalized"
        if not literal and not ctx.ablated("no_gate"):
            verdict = self.gate.assess(ctx, ob, ob.equation, _context(ctx, ob, edge))
            if not verdict.passed:
                return _record(ob, "unknown", "gate", reason="equation below the faithfulness gate",
                               statement=ob.equation, basis=basis, faithfulness=verdict.s_faith,
                               drift=verdict.drift, raw=verdict.raw)
        faith = verdict.s_faith if verdict is not None else None
        out, link = check_chain(ob, chain, ctx)
        if isinstance(out, Refuted):
            lhs, op, rhs = chain.links()[link]
            note = f"link {link + 1}: {Rel(lhs, op, rhs)}" + (f"; {out.note}" if out.note else "")
            return _record(ob, "refuted", out.method, counterexample=out.counterexample, reason=note,
                           statement=ob.equation, basis=basis, faithfulness=faith)
        if isinstance(out, Verified):
            return _record(ob, "verified", out.method, reason=out.note or None, statement=ob.equation,
                           basis=basis, faithfulness=faith)
        return _record(ob, "unknown", out.method, reason=out.reason, statement=ob.equation, basis=basis,
                       faithfulness=faith)

    def _formal(self, ctx: RunContext, ob: NLObligation, edge: EdgeUnit | None, scan: ScanResult) -> Evidence:
        kernel = ctx.kernel
        context = _context(ctx, ob, edge)
        # the ablation, or a gate that assesses nothing: either way no faithfulness is on record
        no_gate = ctx.ablated("no_gate") or getattr(self.gate, "name", "") == "pass"
        feedback: str | None = None
        previous: FormalStatement | None = None
        verdict: GateVerdict | None = None
        statement: FormalStatement | None = None
        for attempt in range(ctx.settings.gate_revisions + 1):
            if time.monotonic() > ctx.deadline:
                return _gate_unknown(ob, kernel.name, "time budget exhausted while drafting the statement",
                                     verdict, previous)
            try:
                statement = kernel.formalize(ob, context, feedback, previous)
            except Exception as exc:  # noqa: BLE001 (an external backend's failure is a note, not a crash)
                ctx.note(f"verify: kernel {kernel.name} failed to formalize {ob.id}: {exc!r}"[:500])
                return _gate_unknown(ob, kernel.name, f"formalization error: {type(exc).__name__}", verdict, previous)
            if statement is None:
                return _gate_unknown(ob, kernel.name, "formalization failed: no statement compiled", verdict, previous)
            if no_gate:
                verdict = None
                break
            verdict = self.gate.assess(ctx, ob, statement.text, context)
            if verdict.passed:
                break
            feedback = _feedback(verdict)
            previous = statement
            if attempt == ctx.settings.gate_revisions:
                return _gate_unknown(ob, kernel.name, f"below the faithfulness gate after {attempt} revision(s)",
                                     verdict, statement)
        assert statement is not None
        branch = proof_branch(ob, scan, ctx.settings.scan_threshold)
        try:
            result = kernel.prove(statement, branch)
        except Exception as exc:  # noqa: BLE001 (as above)
            ctx.note(f"verify: kernel {kernel.name} failed to prove {ob.id}: {exc!r}"[:500])
            result = KernelResult(status="inconclusive", reason=f"prover error: {type(exc).__name__}", method=kernel.name)
        status: Literal["verified", "refuted", "unknown"] = (
            "verified" if result.status == "passed" else "refuted" if result.status == "refuted" else "unknown")
        what = {"passed": "statement proved", "refuted": "negation proved"}.get(result.status, "inconclusive")
        reason = f"{branch} branch: {what}" + (f" ({result.reason})" if result.reason else "")
        if no_gate:
            reason += "; faithfulness not assessed (no_gate ablation)"
        return _record(ob, status, result.method or kernel.name, reason=reason, basis="formal",
                       faithfulness=verdict.s_faith if verdict is not None else None,
                       statement=statement.text)


def proof_branch(ob: NLObligation, scan: ScanResult, threshold: float) -> Literal["original", "negation"]:
    """``negation`` when the unit looks wrong (review says incorrect, or its suspicion reaches the
    threshold) or the obligation is a contested claim; otherwise ``original``."""
    if ob.kind.value == "contested_claim":
        return "negation"
    review = next((r for r in scan.reviews if r.edge == ob.edge), None)
    if review is not None:
        return "negation" if review.verdict == "incorrect" or review.suspicion >= threshold else "original"
    cand = next((c for c in scan.candidates if c.edge == ob.edge), None)
    if cand is not None and (cand.likely_wrong or cand.suspicion >= threshold):
        return "negation"
    return "original"


def _feedback(verdict: GateVerdict) -> str:
    drift = ", ".join(verdict.drift) or "none named"
    return (f"The statement does not yet say what the obligation says (S_faith {verdict.s_faith:.2f}; drift: {drift}). "
            f"{verdict.report}")[:4000]


def _gate_unknown(ob: NLObligation, method: str, reason: str, verdict: GateVerdict | None,
                  statement: FormalStatement | None) -> Evidence:
    return _record(ob, "unknown", method, reason=reason, basis="formal",
                   faithfulness=verdict.s_faith if verdict is not None else None,
                   drift=verdict.drift if verdict is not None and not verdict.passed else (),
                   statement=statement.text if statement is not None else None,
                   raw=verdict.raw if verdict is not None else None)


def _context(ctx: RunContext, ob: NLObligation, edge: EdgeUnit | None) -> str:
    parts = [f"Problem: {ctx.proof.problem[:4000]}", f"Source (step {ob.step}): {ob.source[:2000]}"]
    if edge is not None and edge.explanation:
        parts.append(f"What the step does: {edge.explanation[:1000]}")
    parts.append("May be assumed:\n" + ("\n".join(f"- {p[:500]}" for p in ob.premises[:40]) or "- (nothing beyond the problem)"))
    return "\n".join(parts)


def _record(ob: NLObligation, status: Literal["verified", "refuted", "unknown"], method: str, *,
            reason: str | None = None, basis: Literal["checked", "formalized", "formal"] = "formal",
            counterexample: dict[str, str] | None = None, faithfulness: float | None = None,
            drift: tuple[str, ...] = (), statement: str | None = None, raw: str | None = None) -> Evidence:
    return Evidence(obligation=ob.id, kind=ob.kind, step=ob.step, span=ob.span, source=ob.source, claim=ob.text(),
                    status=status, method=method, counterexample=counterexample if status == "refuted" else None,
                    reason=reason, edge=ob.edge, basis=basis, faithfulness=faithfulness, drift=drift,
                    statement=statement, raw=raw)


__all__ = ["FormalVerifier", "check_chain", "literals_in_source", "proof_branch", "pure_numeric_chain",
           "written_in_source", "written_verbatim"]
