"""A scripted stand-in for the LLM endpoint: answers are recorded model outputs, keyed by prompt id.

It implements the ``LLMClient`` protocol at the wire level (request in, text out), so every
stage's parsing, validation, retry and fallback logic runs for real on the recorded text.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable

from faithsieve.llm.types import ChatRequest, ChatResponse, LLMError, Usage

MATERIAL = '{"material": true, "reason": "the step concludes from the refuted formula"}'
NO_JUDGMENT = '{"answer": "no opinion", "reason": "not scripted"}'
"""The whole-proof judgment fusion anchors on, when a test does not script it: unreadable, so fusion decides as
the method without its anchor (the tests written before the anchor; its own cases script ``judge``)."""


class ScriptedLLM:
    """Answers each request with the next scripted text for its prompt id.

    ``script`` maps a prompt id to a list of answers; an answer of ``LLMError`` raises it.
    A prompt with no answers left raises ``AssertionError`` (the test under-scripted it), unless
    ``default`` is given; the ``materiality`` question (asked before an exact refutation decides) is
    answered ``MATERIAL`` when a test does not script it, so the refutation stands as in the tests written
    before that question (its own cases are scripted in ``tests/stages/test_fusion.py`` and ``tests/llm``).
    """

    model = "scripted"

    def __init__(self, script: dict[str, Iterable[str | LLMError]] | None = None, default: str | None = None,
                 tokens: tuple[int, int] = (100, 20)) -> None:
        self.queues: dict[str, deque[str | LLMError]] = defaultdict(deque)
        for k, v in (script or {}).items():
            self.queues[k].extend(v)
        self.default = default
        self.tokens = tokens
        self.requests: list[ChatRequest] = []
        self.usage = Usage(price_in_per_mtok=1.0, price_out_per_mtok=2.0)

    def add(self, prompt_id: str, *answers: str | LLMError) -> None:
        self.queues[prompt_id].extend(answers)

    def calls(self, prompt_id: str | None = None) -> list[ChatRequest]:
        return [r for r in self.requests if prompt_id is None or r.prompt_id == prompt_id]

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        q = self.queues.get(request.prompt_id)
        if q:
            answer = q.popleft()
        elif self.default is not None:
            answer = self.default
        elif request.prompt_id == "materiality":
            answer = MATERIAL
        elif request.prompt_id == "judge":
            answer = NO_JUDGMENT
        else:
            raise AssertionError(f"no scripted answer left for prompt {request.prompt_id!r}")
        if isinstance(answer, LLMError):
            raise answer
        resp = ChatResponse(text=answer, model=self.model, prompt_tokens=self.tokens[0],
                            completion_tokens=self.tokens[1], finish_reason="stop", latency_ms=1.0)
        self.usage.record(resp)
        return resp
