"""The worker job behind ``POST /web/tree``: the proof-state tree of one proof, without checking.

The verdict (``POST /localize``) carries EdgeUnits, evidence and spans but not the states
between EdgeUnits. This job rebuilds the same rule-based tree (the decomposition is
deterministic, so its edge and obligation ids match the verdict's) and answers its states
and which EdgeUnit each obligation came from. It runs in the service's worker processes, under
their memory and time limits, like ``localize_job``.
"""

from __future__ import annotations

import json
import time
from typing import Any

from faithsieve.api.worker import JobError, JobResult
from faithsieve.core.errors import FaithSieveError
from faithsieve.core.settings import Settings

MAX_FACTS = 50
"""Most facts sent per state (the latest; ``facts_total`` says how many it has): a long proof's
states each hold every earlier fact, which would make the answer quadratic in its length."""


def tree_document(data: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """``{"root", "steps": [{index, text, offset}], "states": {id: {hypotheses, goal, goal_from, branch}},
    "edges": [ids], "obligations": {obligation id: edge id}}`` for the rule-based decomposition of ``data``.

    A state whose goal is empty keeps its parent's (``goal_from`` names the state that stated it).
    Linear in the size of the tree: states are visited once, parents before children."""
    from faithsieve.mathtext.textnorm import clean_proof
    from faithsieve.obligations.extract import extract_obligations
    from faithsieve.split import proof_from_input
    from faithsieve.statetree.decompose import decompose

    proof = clean_proof(proof_from_input(data, settings))  # read as ``Pipeline.localize`` reads it
    tree = decompose(proof)
    kids: dict[str, list[str]] = {}
    for e in tree.edges:
        for child in e.children or (e.child,):
            kids.setdefault(e.parent, []).append(child)
    states: dict[str, dict[str, Any]] = {}
    # depth first from the root (a node whose goal is empty keeps the goal its parent has); nodes the
    # root does not reach lie at the bottom of the stack
    stack: list[tuple[str, str | None]] = [(n, None) for n in tree.graph.nodes if n != tree.root]
    stack.append((tree.root, None))
    while stack:
        node, parent_goal = stack.pop()
        if node in states:
            continue
        st = tree.state(node)
        facts = list(st.hypotheses)
        goal_from = node if st.goal else parent_goal
        states[node] = {"hypotheses": facts[-MAX_FACTS:], "facts_total": len(facts),
                        "goal": st.goal or (states[goal_from]["goal"] if goal_from else ""),
                        "goal_from": goal_from, "branch": st.branch}
        stack.extend((child, goal_from) for child in reversed(kids.get(node, ())) if child not in states)
    obligations = {ob.id: ob.edge for ob in extract_obligations(tree)}
    steps = [{"index": st.index, "text": st.text, "offset": st.offset} for st in proof.steps]
    return {"root": tree.root, "steps": steps, "states": states, "edges": [e.id for e in tree.edges], "obligations": obligations}


def tree_job(data: dict[str, Any], settings: Settings) -> JobResult:
    """``tree_document`` as a ``JobResult`` (errors answered with their status, never raised)."""
    t0 = time.perf_counter()
    try:
        doc = tree_document(data, settings)
    except FaithSieveError as exc:
        status = exc.status if 400 <= exc.status <= 599 else 500
        err = JobError(exc.code, exc.message, json.loads(json.dumps(exc.detail, default=str)))
        return JobResult(status=status, error=err, seconds=time.perf_counter() - t0)
    except (MemoryError, RecursionError):
        return JobResult(status=422, error=JobError("resource_limit", "building the tree of this proof "
                                                    "exceeded a worker resource limit"),
                         seconds=time.perf_counter() - t0)
    body = json.dumps(doc, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return JobResult(status=200, body=body, seconds=time.perf_counter() - t0)
