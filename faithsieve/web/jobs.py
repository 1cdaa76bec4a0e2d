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

from faithsieve.api.worker import JobResult
from faithsieve.config import Settings
from faithsieve.errors import FaithSieveError


def tree_document(data: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """``{"root", "steps": [{index, text, offset}], "states": {id: {hypotheses, goal, goal_from, branch}},
    "edges": [ids], "obligations": {obligation id: edge id}}`` for the rule-based decomposition of ``data``.

    A state whose goal is empty keeps its parent's (``goal_from`` names the state that stated it)."""
    from faithsieve.obligations.extract import extract_obligations
    from faithsieve.split import proof_from_input
    from faithsieve.statetree.decompose import decompose

    proof = proof_from_input(data, settings)
    tree = decompose(proof)
    parent_of = {child: e.parent for e in tree.edges for child in (e.children or (e.child,))}
    states: dict[str, dict[str, Any]] = {}
    for node in tree.graph.nodes:
        st = tree.state(node)
        states[node] = {"hypotheses": list(st.hypotheses), "goal": st.goal, "goal_from": node if st.goal else None,
                        "branch": st.branch}
    for node in states:  # inherit goals down the tree (bounded: each hop moves to a parent, no cycles)
        cur, hops = node, 0
        while not states[node]["goal"] and cur in parent_of and hops <= len(states):
            cur, hops = parent_of[cur], hops + 1
            if states[cur]["goal"] and states[cur]["goal_from"] == cur:
                states[node]["goal"], states[node]["goal_from"] = states[cur]["goal"], cur
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
        err = {"code": exc.code, "message": exc.message, "detail": json.loads(json.dumps(exc.detail, default=str))}
        return JobResult(status=status, error=err, seconds=time.perf_counter() - t0)
    except (MemoryError, RecursionError):
        return JobResult(status=422, error={"code": "resource_limit", "message": "building the tree of this proof "
                                            "exceeded a worker resource limit", "detail": None},
                         seconds=time.perf_counter() - t0)
    body = json.dumps(doc, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return JobResult(status=200, body=body, seconds=time.perf_counter() - t0)
