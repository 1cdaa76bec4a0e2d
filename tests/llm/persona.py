"""A scripted model for the OpenAI-compatible test server: it reads each prompt, finds the dataset
item it is about, and answers that prompt's schema as a *persona* that knows the item's label.

    persona = Persona(items, kind="noisy", seed=0)
    with FakeOpenAI() as server:
        server.respond_with(persona.reply)

The prompt is recognised by the schema name of the request's ``response_format`` (the client sends
the prompt id there in ``json_schema`` mode) and the item by its problem text in the user message.
Nothing here calls the code under test: the answers come from the label and from this file's own
reading of the prompt text.

Personas:

- ``perfect``: every judgment is right. A unit (or step) is wrong exactly when its original step is
  the labelled first error; a whole-proof answer is the label.
- ``noisy``: each judgment is right with a probability that falls with the amount of text it judges,
  ``p(chars) = P_MIN + (P_MAX - P_MIN) · exp(-chars / L0)``: a short unit is judged more reliably than
  a whole proof. A wrong whole-proof answer is another label, drawn uniformly; a wrong unit judgment is
  the flipped verdict; a model-written equation is, with probability 1 - p, miscopied (its result
  changed). The draw is a hash of the request (its text, temperature and seed), so a re-sample at
  another seed is independent and a rerun is identical.
- ``saboteur``: well-formed adversarial answers (a decomposition that swaps a result, every unit
  flagged, false equations built from the unit's own numbers, a gate that passes everything, whole-proof
  answers that name step 1) and, every fourth call, an unreadable answer.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tests.llm.fakeserver import Reply

P_MAX, P_MIN, L0 = 0.95, 0.55, 1200.0
Kind = Literal["perfect", "noisy", "saboteur"]

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z$\\(])")
_EQUATION = re.compile(r"(?<![\w.^])(\d+(?:\s*[-+*/]\s*\d+)+)\s*=\s*(\d+)(?![\w.^])")
_NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")


def accuracy(chars: int) -> float:
    """Chance that a judgment of ``chars`` characters of text is right (noisy persona)."""
    return P_MIN + (P_MAX - P_MIN) * math.exp(-max(0, chars) / L0)


@dataclass(frozen=True)
class Item:
    problem: str
    steps: tuple[str, ...]
    label: int | None
    """1-based first wrong step, None for a correct proof."""


@dataclass
class Persona:
    items: Sequence[Item]
    kind: Kind = "perfect"
    seed: int = 0
    calls: int = 0
    by_prompt: dict[str, list[int]] = field(default_factory=dict)
    """Per prompt id: [calls, prompt tokens, completion tokens]."""

    # ---- the HTTP answer ----------------------------------------------------------
    def reply(self, body: dict[str, Any]) -> Reply:
        messages = body.get("messages") or []
        user = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
        first_user = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
        fmt = body.get("response_format") or {}
        prompt_id = str(((fmt.get("json_schema") or {}).get("name")) or "")
        self.calls += 1
        text = self.answer(prompt_id, first_user, body, retry=user != first_user)
        prompt_tokens = sum(len(str(m.get("content") or "")) for m in messages) // 4 + 1
        completion_tokens = len(text) // 4 + 1
        row = self.by_prompt.setdefault(prompt_id or "?", [0, 0, 0])
        row[0] += 1
        row[1] += prompt_tokens
        row[2] += completion_tokens
        return Reply.ok(text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)

    def answer(self, prompt_id: str, user: str, body: dict[str, Any], retry: bool = False) -> str:
        item = self.find(user)
        if item is None:
            return "I cannot tell which problem this is."
        if self.kind == "saboteur" and not retry and self._hash(user, body, "garbage") < 0.25:
            return "Certainly! The proof looks " + ("fine" if self.calls % 2 else "wrong") + " to me."
        handler = getattr(self, f"_{prompt_id}", None)
        if handler is None:
            return json.dumps({"answer": "correct", "reason": "unknown prompt"})
        return str(handler(item, user, body))

    def find(self, user: str) -> Item | None:
        # letters and digits only: the service cleans the text it sends (invisible characters, compatibility
        # forms), so the problem is found by its content, not its exact bytes
        text = _letters(user)
        hits = [it for it in self.items if _letters(it.problem)[:4000] and _letters(it.problem)[:4000] in text]
        return max(hits, key=lambda it: len(it.problem)) if hits else None

    # ---- noise ----------------------------------------------------------------------
    def _hash(self, user: str, body: dict[str, Any], salt: str) -> float:
        key = f"{self.seed}|{salt}|{body.get('temperature')}|{body.get('seed')}|{user}"
        return int(hashlib.sha256(key.encode()).hexdigest()[:12], 16) / 16 ** 12

    def _right(self, user: str, body: dict[str, Any], chars: int, salt: str) -> bool:
        if self.kind == "perfect":
            return True
        return self._hash(user, body, salt) < accuracy(chars)

    def _label_answer(self, item: Item, user: str, body: dict[str, Any], salt: str) -> str:
        n = len(item.steps)
        if self.kind == "saboteur":
            return json.dumps({"answer": "step 1", "reason": "the first step is unjustified"})
        truth = "correct" if item.label is None else f"step {item.label}"
        if self._right(user, body, sum(map(len, item.steps)), salt):
            return json.dumps({"answer": truth, "reason": "read the whole proof"})
        others = [a for a in ["correct", *(f"step {k}" for k in range(1, n + 1))] if a != truth]
        pick = others[int(self._hash(user, body, salt + "pick") * len(others)) % len(others)]
        return json.dumps({"answer": pick, "reason": "read the whole proof"})

    # ---- one method per prompt id ----------------------------------------------------
    def _judge(self, item: Item, user: str, body: dict[str, Any]) -> str:
        return self._label_answer(item, user, body, "judge")

    def _graph_judge(self, item: Item, user: str, body: dict[str, Any]) -> str:
        return self._label_answer(item, user, body, "graph")

    def _synthesis(self, item: Item, user: str, body: dict[str, Any]) -> str:
        return self._label_answer(item, user, body, "synthesis")

    def _decompose(self, item: Item, user: str, body: dict[str, Any]) -> str:
        subs = []
        for k, step in enumerate(item.steps, 1):
            pieces = [p for p in _SENTENCE.split(step.strip()) if p.strip()] or [step.strip()]
            if len(pieces) > 3:  # at most three pieces: the rest stays with the last
                pieces = [*pieces[:2], " ".join(pieces[2:])]
            if self.kind == "saboteur":
                pieces = [_swap_result(p, step) for p in pieces]
            subs += [{"id": f"{k}.{i}", "step": k, "text": p, "scope": ""} for i, p in enumerate(pieces, 1)]
        return json.dumps({"substeps": subs})

    def _decompose_tree(self, item: Item, user: str, body: dict[str, Any]) -> str:
        # the merged prompt: the same pieces, each given by its first words; a line of plain derivations,
        # so no move and only the root among the states (the prompt asks only for what is not plain)
        subs = json.loads(self._decompose(item, user, body))["substeps"]
        cuts = [{"id": s["id"], "step": s["step"], "start": " ".join(s["text"].split()[:5]), "scope": s["scope"]}
                for s in subs]
        root = {"id": "s0", "conditions": [], "goal": "the claim of the problem", "branch": ""}
        return json.dumps({"substeps": cuts, "states": [root], "edges": []})

    def _repair_check(self, item: Item, user: str, body: dict[str, Any]) -> str:
        return json.dumps({"flags": []})

    def _state_tree(self, item: Item, user: str, body: dict[str, Any]) -> str:
        ids = re.findall(r"(?m)^- (\d+\.\d+) \(from step \d+\)", user)
        states = [{"id": "s0", "conditions": [], "goal": "the claim of the problem", "branch": ""}]
        edges = []
        for i, sid in enumerate(ids, 1):
            states.append({"id": f"s{i}", "conditions": [], "goal": "", "branch": ""})
            edges.append({"substep": sid, "parent": f"s{i - 1}", "children": [f"s{i}"], "pattern": "simple_implication",
                          "goal_relation": "same_goal", "new_conditions": [], "consumed_conditions": [],
                          "transformed_conditions": [], "explanation": "one move of the proof"})
        return json.dumps({"states": states, "edges": edges})

    def _scan(self, item: Item, user: str, body: dict[str, Any]) -> str:
        units = re.findall(r"(?m)^\[(e\d+)\] step (\d+)", user)
        chars = sum(map(len, item.steps))
        out = []
        for uid, step in units:
            wrong = int(step) == item.label
            if self.kind == "saboteur":
                wrong = True
            elif not self._right(user, body, chars, f"scan{uid}"):
                wrong = not wrong
            out.append({"unit_id": uid, "suspicion": 0.9 if wrong else 0.1, "likely_wrong": wrong,
                        "should_formalize": False, "error_type_prior": [], "reason": "first read"})
        overall = "likely_incorrect" if any(c["likely_wrong"] for c in out) else "likely_correct"
        return json.dumps({"overall_verdict": overall, "candidates": out})

    def _review(self, item: Item, user: str, body: dict[str, Any]) -> str:
        step_m = re.search(r"(?m)^Unit e\d+ \(step (\d+)", user)
        text_m = re.search(r"(?m)^Text: (.*)$", user)
        step = int(step_m.group(1)) if step_m else 0
        wrong = step == item.label
        if self.kind == "saboteur":
            wrong = True
        elif not self._right(user, body, len(text_m.group(1)) if text_m else 2000, "review"):
            wrong = not wrong
        return json.dumps({"verdict": "incorrect" if wrong else "correct", "suspicion": 0.9 if wrong else 0.1,
                           "error_type": "unjustified_claim" if wrong else "", "should_formalize": False,
                           "translation_difficulty": "medium", "reason": "looked at this move alone"})

    def _review_units(self, item: Item, user: str, body: dict[str, Any]) -> str:
        # several units of one step in one call: each judged apart, with the accuracy of the text the call
        # judges (all of its units together)
        units = re.findall(r"(?m)^Unit (e\d+) \(step (\d+)", user)
        chars = sum(len(t) for t in re.findall(r"(?m)^Text: (.*)$", user)) or 2000
        out = []
        for uid, step in units:
            wrong = int(step) == item.label
            if self.kind == "saboteur":
                wrong = True
            elif not self._right(user, body, chars, f"review{uid}"):
                wrong = not wrong
            out.append({"unit_id": uid, "verdict": "incorrect" if wrong else "correct", "suspicion": 0.9 if wrong else 0.1,
                        "error_type": "unjustified_claim" if wrong else "", "should_formalize": False,
                        "translation_difficulty": "medium", "reason": "looked at this move alone"})
        return json.dumps({"reviews": out})

    def _obligations(self, item: Item, user: str, body: dict[str, Any]) -> str:
        text_m = re.search(r"(?m)^text: (.*)$", user)
        text = text_m.group(1) if text_m else ""
        slots = [int(s) for s in re.findall(r"(?m)^(\d+)\. kind: ", user)] or [1]
        eq = _EQUATION.search(text)
        equation = f"{eq.group(1)} = {eq.group(2)}" if eq else None
        if self.kind == "saboteur":
            nums = _NUMBER.findall(text)
            equation = f"{nums[0]} = {int(nums[0]) + 1}" if nums else None
        elif equation is not None and eq is not None and not self._right(user, body, len(text), "copy"):
            equation = f"{eq.group(1)} = {int(eq.group(2)) + 1}"  # a miscopied result
        out = [{"slot": s, "claim": text[:2000] or "the move holds", "equation": equation if i == 0 else None,
                "use_formal": True, "translation_confidence": 0.8, "priority": 0.5, "reason": "as written"}
               for i, s in enumerate(slots)]
        return json.dumps({"obligations": out})

    def _semantic_check(self, item: Item, user: str, body: dict[str, Any]) -> str:
        stmt_m = re.search(r"Formal statement:\n(.*)", user, re.DOTALL)
        statement = (stmt_m.group(1) if stmt_m else "").strip()
        src_m = re.search(r"Source \(step \d+\): (.*)", user)
        source = src_m.group(1) if src_m else ""
        faithful = _squash(statement) in _squash(source)
        if self.kind == "saboteur":
            faithful = True
        elif not self._right(user, body, len(statement) + len(source), "gate"):
            faithful = not faithful
        level = 1 if faithful else 0.25
        return json.dumps({"premise_slots": [], "conclusion_slots": [{"slot": statement[:200], "match": level}],
                           "aspects": {a: level for a in ("step_relation", "object_witness", "directionality",
                                                          "role_alignment", "syntax_surface")},
                           "status": "faithful" if faithful else "unfaithful",
                           "drift_categories": [] if faithful else ["wrong_objects"], "reason": "compared with the source",
                           "missing_or_changed_slots": [], "suggested_revision": ""})

    def _reexamine(self, item: Item, user: str, body: dict[str, Any]) -> str:
        listed = [int(k) for k in re.findall(r"(?m)^Step (\d+):$", user)]
        if self.kind == "saboteur":
            return json.dumps({"earlier_step": listed[0] if listed else None, "reason": "sabotage"})
        truth = item.label if item.label in listed else None
        if not self._right(user, body, sum(map(len, item.steps)), "reexamine"):
            options = [k for k in [None, *listed] if k != truth]
            truth = options[int(self._hash(user, body, "rx") * len(options)) % len(options)] if options else truth
        return json.dumps({"earlier_step": truth, "reason": "looked again"})


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _swap_result(piece: str, step: str) -> str:
    """Replace the result of the piece's first computation by another number of the same step."""
    m = _EQUATION.search(piece)
    if m is None:
        return piece
    others = [n for n in _NUMBER.findall(step) if n != m.group(2)]
    if not others:
        return piece
    return piece[: m.start(2)] + others[0] + piece[m.end(2):]


def load_items(path: str) -> list[Item]:
    """The dataset's items through the project's adapters (labels as 1-based steps, None for correct)."""
    from faithsieve.datasets.adapters import load_dataset

    data = load_dataset(path)
    return [Item(problem=it.problem, steps=tuple(it.steps), label=it.first_error) for it in data.items]


def _letters(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKC", text) if ch.isalnum())
