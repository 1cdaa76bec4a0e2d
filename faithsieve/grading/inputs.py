"""Coercing what trainers pass (strings, chat messages, lists, numbers) into the grader's text inputs."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from faithsieve.grading.extract import reference_answer

_SPECIAL_END = re.compile(r"(?:<\|[A-Za-z0-9_]{1,40}\|>|</s>|<｜end▁of▁sentence｜>|<pad>|\[PAD\]|<eos>)$")


def _strip_special_tail(s: str) -> str:
    """Remove end-of-sequence markers a decoder may leave (``<|im_end|>``, ``</s>``...). Linear."""
    end = len(s)
    while True:
        while end and s[end - 1].isspace():
            end -= 1
        m = _SPECIAL_END.search(s, max(0, end - 64), end)
        if m is None or m.start() == end:
            return s[:end]
        end = m.start()


def _as_text(x: Any) -> str:
    """A completion as text: a string, a chat message, or a list of messages/content parts."""
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    if isinstance(x, Mapping):
        c = x.get("content", x.get("text", ""))
        return _as_text(c)
    if isinstance(x, (list, tuple)):
        parts = []
        for item in x:
            if isinstance(item, Mapping):
                if item.get("role") not in (None, "assistant"):
                    continue
                if "type" in item and item.get("type") != "text" and "content" not in item:
                    continue
            parts.append(_as_text(item))
        return "\n".join(p for p in parts if p)
    return str(x)


def _prompt_problem(prompt: Any) -> str:
    """The problem statement in a prompt: a string, or the last user message of a conversation."""
    if prompt is None:
        return ""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, (list, tuple)):
        for msg in reversed(prompt):
            if isinstance(msg, Mapping) and msg.get("role") == "user":
                return _as_text(msg.get("content"))
        return "\n".join(_as_text(m.get("content")) for m in prompt if isinstance(m, Mapping))
    return _as_text(prompt)


def _references(reference: Any) -> list[str]:
    if reference is None:
        return []
    if hasattr(reference, "tolist") and not isinstance(reference, str):
        reference = reference.tolist()
    if isinstance(reference, (list, tuple, set, frozenset)):
        out = []
        for r in reference:
            out += _references(r)
        return out
    if isinstance(reference, Mapping):
        for k in ("ground_truth", "answer", "solution", "reference"):
            if k in reference:
                return _references(reference[k])
        return []
    ans = reference_answer(reference).strip()
    return [ans] if ans else []
