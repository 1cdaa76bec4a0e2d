"""Coercing what trainers pass (strings, chat messages, lists, numbers) into the grader's text inputs."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from faithsieve.grading.stated_answer import reference_answer
from faithsieve.mathtext.textnorm import clean_text

_SPECIAL_END = re.compile(r"(?:<\|[A-Za-z0-9_]{1,40}\|>|</s>|<[｜|]end▁of▁sentence[｜|]>|<pad>|\[PAD\]|<eos>)$")


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


MAX_READ_CHARS = 200_000
"""Of a longer input only the last this many characters are read (the final answer is at the end; past
``max_chars`` a completion is not step-checked): reading stays bounded whatever the input."""
MAX_INPUT_NESTING = 16
"""Deeper nesting of messages/lists in a completion or reference is refused (flag ``bad_input``)."""
MAX_ITEMS = 256
"""At most this many messages/parts (and references) are read from one list."""


class BadInput(ValueError):
    """An input the grader cannot read as text (too deep, a failing ``__str__``, an integer too long to print)."""


def _clean(s: str) -> str:
    """An exact ``str`` as a reader should see it (``clean_text``: no invisible or control characters,
    compatibility forms folded; lone surrogates are dropped), capped at ``MAX_READ_CHARS``."""
    s = str.__add__("", s)  # a str subclass's overridden methods are never called
    if len(s) > MAX_READ_CHARS:
        s = s[-MAX_READ_CHARS:]  # the answer is at the end; a text this long is never step-checked
    return clean_text(s)


def _plain(x: Any) -> str:
    try:
        return _clean(str(x))
    except Exception as exc:  # noqa: BLE001 - a hostile __str__, an int past Python's 4,300-digit limit
        raise BadInput(f"cannot read a {type(x).__name__} as text: {type(exc).__name__}") from None


def _as_text(x: Any, depth: int = 0) -> str:
    """A completion as text: a string, a chat message, or a list of messages/content parts.
    Raises ``BadInput`` (only) on what cannot be read."""
    if depth > MAX_INPUT_NESTING:
        raise BadInput(f"nested deeper than {MAX_INPUT_NESTING} levels")
    if x is None:
        return ""
    if isinstance(x, str):
        return _clean(x)
    if isinstance(x, Mapping):
        c = x.get("content", x.get("text", ""))
        return _as_text(c, depth + 1)
    if isinstance(x, (list, tuple)):
        parts = []
        for item in x[:MAX_ITEMS]:
            if isinstance(item, Mapping):
                if item.get("role") not in (None, "assistant"):
                    continue
                if "type" in item and item.get("type") != "text" and "content" not in item:
                    continue
            parts.append(_as_text(item, depth + 1))
        return "\n".join(p for p in parts if p)
    return _plain(x)


def _prompt_problem(prompt: Any) -> str:
    """The problem statement in a prompt: a string, or the last user message of a conversation."""
    if prompt is None:
        return ""
    if isinstance(prompt, str):
        return _clean(prompt)
    if isinstance(prompt, (list, tuple)):
        for msg in reversed(prompt[-MAX_ITEMS:]):
            if isinstance(msg, Mapping) and msg.get("role") == "user":
                return _as_text(msg.get("content"), 1)
        return "\n".join(_as_text(m.get("content"), 1) for m in prompt[:MAX_ITEMS] if isinstance(m, Mapping))
    return _as_text(prompt)


def _references(reference: Any, depth: int = 0) -> list[str]:
    """The acceptable answers a reference names (at most ``MAX_ITEMS``). Raises ``BadInput`` (only)."""
    if depth > MAX_INPUT_NESTING:
        raise BadInput(f"reference nested deeper than {MAX_INPUT_NESTING} levels")
    if reference is None:
        return []
    if hasattr(reference, "tolist") and not isinstance(reference, str):
        reference = reference.tolist()
    if isinstance(reference, (list, tuple, set, frozenset)):
        out: list[str] = []
        for r in list(reference)[:MAX_ITEMS]:
            out += _references(r, depth + 1)
        return out[:MAX_ITEMS]
    if isinstance(reference, Mapping):
        for k in ("ground_truth", "answer", "solution", "reference"):
            if k in reference:
                return _references(reference[k], depth + 1)
        return []
    if not isinstance(reference, str) and not isinstance(reference, (int, float)):
        reference = _plain(reference)
    try:
        ans = _clean(reference_answer(reference)).strip()
    except ValueError as exc:  # an int past Python's 4,300-digit str() limit
        raise BadInput(f"cannot read the reference: {exc}") from None
    return [ans] if ans else []
