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
- ``noisy``: each judgment is right with a probability that falls with the number of claims in the
  text it judges (``accuracy``, the noise model below). A wrong whole-proof answer is another label,
  drawn uniformly; a wrong unit judgment is the flipped verdict; a model-written equation is, with
  probability 1 - p, miscopied (its result changed). Draws are hashes of the request, so a rerun is
  identical and keyed on what is judged, not on the prompt's wording; a re-sample (another seed,
  temperature > 0) repeats the first sample's draw with
  probability ``RHO`` and is otherwise independent.

The noise model. A judgment of a text is a search for its one decisive claim; the model's scrutiny
is spread over every claim it is shown, so the more claims, the likelier the decisive one is misread
(an error missed, or a false alarm raised on a sound claim). With ``n`` claims (sentences and
clauses, counted by this file's own ``clauses``)::

    p(n) = P_MIN + (P_MAX - P_MIN) * exp(-(n - 1) / K),   P_MAX = 0.95, P_MIN = 0.55, K = 3

One claim is judged right 95 % of the time; a step of two or three clauses 0.84-0.76; a whole proof
of ten clauses about 0.57. The whole-proof figure is set by the paper's smaller backbone (Qwen3.5-9B
judging directly: 61.0 % exact on ProofLoc-University, 53.7 % on its olympiad set) and the unit
figure by its finding that the same model, judging one EdgeUnit at a time, gains 17 points. A coarse
unit (a whole step, as under ``no_local_edges``) holds more claims than a sub-step and is judged
less reliably; the judgment's reliability is the persona's, never the method's: the persona only
knows the label, to decide whether its noise draw makes an answer right or wrong. Errors of one model
are correlated across samples (what it misreads once it tends to misread again), so a re-sample
repeats the first sample's error with probability ``RHO = 0.5``.

Which unit holds the error: the label names a step, and a step split into sub-steps has one
erroneous move. The persona takes it to be the step's conclusion, its last clause (a step derives
its claim last); a unit is truly wrong when it is from the labelled step and writes that clause (a
whole step does). The others are sound, and a right review of them says so.

The perfect and noisy personas decompose each step into its clauses, verbatim (so the formulas they
write are the proof's own and typed obligations can check them); the saboteur writes its own.
- ``dismissive``: a weak model that finds nothing wrong: its decomposition keeps each step as one
  sub-step with every clause that writes a relation replaced by "the result" (the claim is
  dropped), and every judgment (scan, review, synthesis, judge) says the proof is fine.
- Fixed-rate personas (``PROFILES``; the failure modes issue 36 names): each judgment is right with a fixed
  probability by what it reads (a whole proof: ``judge``, ``synthesis``, ``reexamine``, ``graph_judge``,
  ``scan``; one unit: ``review``/``review_units``, the model's equation copy, the gate, ``materiality``),
  and a re-sample repeats the first sample's draw with probability ``rho``: ``repeating`` (whole 0.6, unit
  0.9, re-samples repeat the first answer, as a model's systematic errors and any model at temperature 0
  do), ``independent`` (the same, re-samples drawn afresh), ``flat70`` (every judgment right 70 %, units
  err as often as whole proofs), ``overflag`` (whole 0.6; a review finds a wrong unit 90 % of the time and
  calls a correct unit wrong 20 % of the time), ``verbose`` (``repeating``, writing ~2,000 characters of
  reasoning before its JSON).
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

P_MAX, P_MIN, K, RHO = 0.95, 0.55, 3.0, 0.5
MAX_PIECES = 4
"""Most sub-steps the personas write for one step (the rest stays with the last)."""
Kind = Literal["perfect", "noisy", "saboteur", "dismissive", "repeating", "independent", "flat70", "overflag",
               "verbose"]


@dataclass(frozen=True)
class Profile:
    """A fixed-rate persona: the chance that a judgment is right, by what it reads."""

    whole: float
    """A judgment of the whole proof (judge, synthesis, re-examination, graph judge, scan)."""
    unit: float
    """A judgment of one unit whose truth is ``wrong`` (and of a sound unit unless ``sound_unit`` is set)."""
    rho: float
    """Chance that a re-sample repeats the first sample's draw."""
    sound_unit: float | None = None
    """A judgment of a sound unit (None: ``unit``)."""
    verbose: bool = False
    """Write long reasoning before the JSON."""


PROFILES: dict[str, Profile] = {
    "repeating": Profile(whole=0.6, unit=0.9, rho=1.0),
    "independent": Profile(whole=0.6, unit=0.9, rho=0.0),
    "flat70": Profile(whole=0.7, unit=0.7, rho=1.0),
    "overflag": Profile(whole=0.6, unit=0.9, rho=1.0, sound_unit=0.8),
    "verbose": Profile(whole=0.6, unit=0.9, rho=1.0, verbose=True),
}
_WHOLE_SALTS = ("judge", "graph", "synthesis", "reexamine", "scan")
REASONING = ("Let me think about this carefully before answering. " * 40).strip()

_EQUATION = re.compile(r"(?<![\w.^])(\d+(?:\s*[-+*/]\s*\d+)+)\s*=\s*(\d+)(?![\w.^])")
_NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")


def accuracy(claims: int) -> float:
    """Chance that a judgment of a text holding ``claims`` claims is right (noisy persona; see above)."""
    return P_MIN + (P_MAX - P_MIN) * math.exp(-(max(1, claims) - 1) / K)


_CLAUSE_CUT = re.compile(r"(?<=[.!?])\s+(?=[A-Z$\\(])|(?<=;)\s+|(?<=,)\s+(?=(?:so|hence|thus|therefore|then|which|"
                         r"and so|and hence|and thus|giving|yielding|i\.e\.|that is|whence|since|because|showing|"
                         r"proving|where|but)\b)")


def clauses(text: str) -> list[str]:
    """The text's clauses, verbatim: sentences, cut again at semicolons and at a comma before a
    consequence word (", so", ", hence", ", which", ...); never inside ``$...$`` math."""
    out: list[str] = []
    start = 0
    for m in _CLAUSE_CUT.finditer(text):
        if text.count("$", 0, m.start()) % 2 or text.count("\\(", 0, m.start()) > text.count("\\)", 0, m.start()):
            continue  # inside math
        piece = text[start:m.start()].strip()
        if piece:
            out.append(piece)
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out or [text.strip()]


def claims(text: str) -> int:
    return len(clauses(text))


def pieces(step: str) -> list[str]:
    """The sub-steps the perfect and noisy personas write for one step: its clauses, at most
    ``MAX_PIECES`` (the rest stays with the last)."""
    cl = clauses(step.strip())
    return cl if len(cl) <= MAX_PIECES else [*cl[: MAX_PIECES - 1], " ".join(cl[MAX_PIECES - 1:])]


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
        if self.kind == "dismissive" and prompt_id in _DISMISSIVE:
            return _DISMISSIVE[prompt_id](item, user)
        handler = getattr(self, f"_{prompt_id}", None)
        if handler is None:
            return json.dumps({"answer": "correct", "reason": "unknown prompt"})
        profile = PROFILES.get(self.kind)
        prefix = REASONING + "\n\nSo my answer is:\n" if profile is not None and profile.verbose else ""
        return prefix + str(handler(item, user, body))

    def find(self, user: str) -> Item | None:
        # letters and digits only: the service cleans the text it sends (invisible characters, compatibility
        # forms), so the problem is found by its content, not its exact bytes
        # (several items may share a problem, with different solutions: the one most of whose steps the
        # prompt quotes is meant)
        text = _letters(user)
        hits = [it for it in self.items if _letters(it.problem)[:4000] and _letters(it.problem)[:4000] in text]
        return max(hits, key=lambda it: (sum(1 for st in it.steps if _letters(st) and _letters(st) in text),
                                         len(it.problem))) if hits else None

    # ---- noise ----------------------------------------------------------------------
    def _hash(self, user: str, body: dict[str, Any], salt: str) -> float:
        key = f"{self.seed}|{salt}|{body.get('temperature')}|{body.get('seed')}|{user}"
        return int(hashlib.sha256(key.encode()).hexdigest()[:12], 16) / 16 ** 12

    def _right(self, subject: str, body: dict[str, Any], n_claims: int, salt: str,
               truly_wrong: bool | None = None) -> bool:
        """Whether this judgment of ``n_claims`` claims about ``subject`` is right (always, for the perfect
        persona). The draw is keyed on what is judged (the item, the unit's text), not on the prompt's
        wording: the same judgment draws the same noise in every ablation and under any prompt revision
        (common random numbers, so a difference between two runs is the method's, not the draw's). A
        re-sample (a seed is set) repeats the first sample's draw with probability ``RHO``."""
        if self.kind == "perfect":
            return True
        profile = PROFILES.get(self.kind)
        rho = RHO if profile is None else profile.rho
        draw = self._hash(subject, {}, salt)  # the first sample's draw
        if body.get("seed") and self._hash(subject, body, salt + "rho") >= rho:
            draw = self._hash(subject, body, salt)  # an independent draw
        if profile is None:
            return draw < accuracy(n_claims)
        if salt.startswith(_WHOLE_SALTS):
            return draw < profile.whole
        sound = truly_wrong is False and profile.sound_unit is not None
        return draw < (profile.sound_unit if sound and profile.sound_unit is not None else profile.unit)

    def _unit_wrong(self, item: Item, step: int, text: str) -> bool:
        """The unit (of ``step``, writing ``text``) holds the labelled error: it is from the labelled step and
        writes that step's last clause, or is part of it (see the module docstring)."""
        if step != item.label:
            return False
        last, unit = _letters(clauses(item.steps[step - 1])[-1]), _letters(text)
        return not unit or last in unit or unit in last

    def _label_answer(self, item: Item, user: str, body: dict[str, Any], salt: str) -> str:
        n = len(item.steps)
        if self.kind == "saboteur":
            return json.dumps({"answer": "step 1", "reason": "the first step is unjustified"})
        truth = "correct" if item.label is None else f"step {item.label}"
        if self._right(item.problem, body, _proof_claims(item), salt):
            return json.dumps({"answer": truth, "reason": "read the whole proof"})
        others = [a for a in ["correct", *(f"step {k}" for k in range(1, n + 1))] if a != truth]
        pick = others[int(self._hash(item.problem, body, salt + "pick") * len(others)) % len(others)]
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
            cut = pieces(step)
            if self.kind == "saboteur":
                cut = [_swap_result(p, step) for p in cut]
            subs += [{"id": f"{k}.{i}", "step": k, "text": p, "scope": ""} for i, p in enumerate(cut, 1)]
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
        # one call judges every unit of the proof: the noise of the whole proof's claims
        units = [(m.group(1), int(m.group(2)), (re.search(r"(?m)^\s+text: (.*)$", m.group(3)) or _NO_TEXT).group(1))
                 for m in re.finditer(r"(?ms)^\[(e\d+)\] step (\d+)(.*?)(?=^\[e\d+\]|\Z)", user)]
        n = _proof_claims(item)
        out = []
        for uid, step, text in units:
            wrong = self._unit_wrong(item, step, text)
            if self.kind == "saboteur":
                wrong = True
            elif not self._right(f"{item.problem}|{text}", body, n, f"scan{uid}"):
                wrong = not wrong
            out.append({"unit_id": uid, "suspicion": 0.9 if wrong else 0.1, "likely_wrong": wrong,
                        "should_formalize": False, "error_type_prior": [], "reason": "first read"})
        overall = "likely_incorrect" if any(c["likely_wrong"] for c in out) else "likely_correct"
        return json.dumps({"overall_verdict": overall, "candidates": out})

    def _review(self, item: Item, user: str, body: dict[str, Any]) -> str:
        step, text = self._judged_unit(item, user)
        wrong = self._unit_wrong(item, step, text)
        if self.kind == "saboteur":
            wrong = True
        elif not self._right(f"{item.problem}|{step}|{text}", body, claims(text) if text else _proof_claims(item),
                             "review", truly_wrong=wrong):
            wrong = not wrong
        return json.dumps({"verdict": "incorrect" if wrong else "correct", "suspicion": 0.9 if wrong else 0.1,
                           "error_type": "unjustified_claim" if wrong else "", "should_formalize": False,
                           "translation_difficulty": "medium", "reason": "looked at this move alone"})

    def _judged_unit(self, item: Item, user: str) -> tuple[int, str]:
        """The step and text of the unit a review judges: its ``Text:`` line and the step it names; else the
        last of the item's steps whose text the prompt quotes (judged whole)."""
        m = _UNIT_BLOCK.search(user)
        if m:
            return int(m.group(2)), m.group(3)
        flat = _letters(user)
        quoted = [k for k, st in enumerate(item.steps, 1) if _letters(st) and _letters(st) in flat]
        return (quoted[-1], item.steps[quoted[-1] - 1]) if quoted else (0, "")

    def _review_units(self, item: Item, user: str, body: dict[str, Any]) -> str:
        # several units of one step in one call: each judged apart, with the accuracy of the text the call
        # judges (all of its units' claims together)
        units = [(m.group(1), m.group(2), m.group(3)) for m in _UNIT_BLOCK.finditer(user)]
        n = sum(claims(text) for _, _, text in units) or _proof_claims(item)
        out = []
        for uid, step, text in units:
            wrong = self._unit_wrong(item, int(step), text)
            if self.kind == "saboteur":
                wrong = True
            elif self.kind in PROFILES:  # one unit's judgment, whether reviewed alone or batched: keyed on the unit
                if not self._right(f"{item.problem}|{step}|{text}", body, n, "review", truly_wrong=wrong):
                    wrong = not wrong
            elif not self._right(user, body, n, f"review{uid}", truly_wrong=wrong):
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
        elif equation is not None and eq is not None and not self._right(f"{item.problem}|{text}", body, claims(text), "copy"):
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
        elif not self._right(f"{statement}|{source}", body, claims(source), "gate"):
            faithful = not faithful
        level = 1 if faithful else 0.25
        return json.dumps({"premise_slots": [], "conclusion_slots": [{"slot": statement[:200], "match": level}],
                           "aspects": {a: level for a in ("step_relation", "object_witness", "directionality",
                                                          "role_alignment", "syntax_surface")},
                           "status": "faithful" if faithful else "unfaithful",
                           "drift_categories": [] if faithful else ["wrong_objects"], "reason": "compared with the source",
                           "missing_or_changed_slots": [], "suggested_revision": ""})

    def _materiality(self, item: Item, user: str, body: dict[str, Any]) -> str:
        # the refutation is immaterial exactly when the labelled error is elsewhere; one claim judged (the step)
        step_m = re.search(r"(?m)^Step (\d+) of the proof:$", user)
        formula_m = re.search(r"(?m)^Formula in this step: (.*)$", user)
        step, formula = (int(step_m.group(1)) if step_m else 0), (formula_m.group(1).strip() if formula_m else "")
        immaterial = item.label != step
        if self.kind == "saboteur" or 1 <= step <= len(item.steps) and not self._right(f"{item.problem}|{step}|{formula}", body,
                                                               claims(item.steps[step - 1]), "materiality"):
            immaterial = not immaterial
        why = (f"the conclusion of step {step} does not rest on '{formula}'" if immaterial
               else f"step {step} concludes from '{formula}'")
        return json.dumps({"material": not immaterial, "reason": why})

    def _reexamine(self, item: Item, user: str, body: dict[str, Any]) -> str:
        listed = [int(k) for k in re.findall(r"(?m)^Step (\d+):$", user)]
        if self.kind == "saboteur":
            return json.dumps({"earlier_step": listed[0] if listed else None, "reason": "sabotage"})
        truth = item.label if item.label in listed else None
        if not self._right(item.problem, body, _proof_claims(item), "reexamine"):
            options = [k for k in [None, *listed] if k != truth]
            truth = options[int(self._hash(item.problem, body, "rx") * len(options)) % len(options)] if options else truth
        return json.dumps({"earlier_step": truth, "reason": "looked again"})


_UNIT_BLOCK = re.compile(
    r"(?ms)^Unit (e\d+) \(step (\d+)[^\n]*\nText: (.*?)"
    r"(?=\n(?:After it: |Scan hint: |New conditions: |Consumed conditions: |Transformed conditions: |Explanation given )"
    r"|\n\n(?:Unit e\d+ \(step |Before the move:|After the move:|A quick first scan)|\Z)")
"""One unit of a review prompt: its id, step and whole text (a unit's text may run over several lines, as a
displayed formula does)."""

_CLAUSE_WITH_RELATION = re.compile(r"[^.,;:!?]*[=<>≤≥][^.,;:!?]*")


def _dismissive_decompose(item: Item, user: str) -> str:
    subs = [{"id": f"{k}.1", "step": k, "text": _CLAUSE_WITH_RELATION.sub(" the result", step).strip() or "We go on.",
             "scope": ""} for k, step in enumerate(item.steps, 1)]
    return json.dumps({"substeps": subs})


def _dismissive_decompose_tree(item: Item, user: str) -> str:
    # the merged prompt quotes pieces by their first words, so the text stays the proof's own: this model keeps
    # each step whole and names no move
    cuts = [{"id": f"{k}.1", "step": k, "start": " ".join(step.split()[:5]), "scope": ""}
            for k, step in enumerate(item.steps, 1)]
    root = {"id": "s0", "conditions": [], "goal": "the claim of the problem", "branch": ""}
    return json.dumps({"substeps": cuts, "states": [root], "edges": []})


def _dismissive_review_units(item: Item, user: str) -> str:
    return json.dumps({"reviews": [
        {"unit_id": uid, "verdict": "correct", "suspicion": 0.05, "error_type": "", "should_formalize": False,
         "translation_difficulty": "easy", "reason": "fine"} for uid in re.findall(r"(?m)^Unit (e\d+) \(step", user)]})


def _dismissive_scan(item: Item, user: str) -> str:
    units = re.findall(r"(?m)^\[(e\d+)\] step (\d+)", user)
    return json.dumps({"overall_verdict": "likely_correct", "candidates": [
        {"unit_id": uid, "suspicion": 0.05, "likely_wrong": False, "should_formalize": False, "error_type_prior": [],
         "reason": "looks fine"} for uid, _ in units]})


_FINE_REVIEW = json.dumps({"verdict": "correct", "suspicion": 0.05, "error_type": "", "should_formalize": False,
                           "translation_difficulty": "easy", "reason": "fine"})
_DISMISSIVE = {
    "decompose": _dismissive_decompose,
    "decompose_tree": _dismissive_decompose_tree,
    "repair_check": lambda item, user: json.dumps({"flags": []}),
    "scan": _dismissive_scan,
    "review": lambda item, user: _FINE_REVIEW,
    "review_units": _dismissive_review_units,
    "obligations": lambda item, user: json.dumps({"obligations": []}),
    "synthesis": lambda item, user: json.dumps({"answer": "correct", "reason": "fine"}),
    "judge": lambda item, user: json.dumps({"answer": "correct", "reason": "fine"}),
    "graph_judge": lambda item, user: json.dumps({"answer": "correct", "reason": "fine"}),
    "reexamine": lambda item, user: json.dumps({"earlier_step": None, "reason": "fine"}),
    "materiality": lambda item, user: json.dumps({"reason": "fine"}),  # no "material" field: unreadable
}
"""The dismissive persona's answer per prompt id (the others: as the perfect persona)."""


_NO_TEXT = re.compile(r"(.*)").match("")


def _proof_claims(item: Item) -> int:
    return sum(claims(st) for st in item.steps)


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
