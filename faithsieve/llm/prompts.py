"""Prompt files: one file per model role, with an id and a version, shipped as package data.

A prompt file is ``faithsieve/llm/prompts/<id>.md``::

    ---
    id: scan
    version: 2
    purpose: one line saying what the role does
    ---
    ## system
    ...
    ## user
    ... {{problem}} ...

Placeholders are ``{{name}}``. Rendering is strict: a placeholder with no value, or a value
with no placeholder, is a programming error (``KeyError``), so a prompt and its caller
cannot drift apart silently. Values are inserted verbatim (braces in proof text are safe).
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Mapping

from pydantic import BaseModel, ConfigDict

from faithsieve.llm.types import ChatMessage

_PLACEHOLDER = re.compile(r"\{\{([a-z_][a-z0-9_]{0,40})\}\}")
_SECTION = re.compile(r"(?m)^## (system|user)[ \t]*$")
_ID = re.compile(r"^[a-z][a-z0-9_]{0,40}$")


class Prompt(BaseModel):
    """A parsed prompt file."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Prompt id (the file name without ``.md``)."""
    version: str
    """Version string from the header; bump it whenever the text changes."""
    purpose: str = ""
    """What the role does, one line."""
    system: str
    """System message template."""
    user: str
    """User message template."""

    @property
    def placeholders(self) -> frozenset[str]:
        return frozenset(_PLACEHOLDER.findall(self.system) + _PLACEHOLDER.findall(self.user))

    def render(self, values: Mapping[str, str]) -> tuple[ChatMessage, ...]:
        """The system and user messages with every placeholder filled."""
        missing = self.placeholders - values.keys()
        extra = values.keys() - self.placeholders
        if missing or extra:
            raise KeyError(f"prompt {self.id}@{self.version}: missing values {sorted(missing)}, unused values {sorted(extra)}")

        def fill(template: str) -> str:
            return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)

        return (ChatMessage(role="system", content=fill(self.system).strip()),
                ChatMessage(role="user", content=fill(self.user).strip()))


def parse_prompt(text: str, name: str) -> Prompt:
    """Parse the text of a prompt file (pure; ``name`` is used in error messages and must match the id)."""
    if not text.startswith("---\n"):
        raise ValueError(f"prompt {name}: missing '---' header")
    head, sep, body = text[4:].partition("\n---\n")
    if not sep:
        raise ValueError(f"prompt {name}: unterminated header")
    meta: dict[str, str] = {}
    for line in head.splitlines():
        if line.strip():
            key, colon, value = line.partition(":")
            if not colon:
                raise ValueError(f"prompt {name}: bad header line {line!r}")
            meta[key.strip()] = value.strip()
    parts = _SECTION.split(body)
    sections = {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}
    if set(sections) != {"system", "user"}:
        raise ValueError(f"prompt {name}: needs exactly one '## system' and one '## user' section")
    pid = meta.get("id", "")
    if pid != name or not _ID.match(pid):
        raise ValueError(f"prompt {name}: header id {pid!r} does not match the file name")
    if not meta.get("version"):
        raise ValueError(f"prompt {name}: header has no version")
    return Prompt(id=pid, version=meta["version"], purpose=meta.get("purpose", ""),
                  system=sections["system"], user=sections["user"])


@lru_cache(maxsize=64)
def load_prompt(prompt_id: str) -> Prompt:
    """Load a shipped prompt by id."""
    if not _ID.match(prompt_id):
        raise KeyError(f"bad prompt id {prompt_id!r}")
    path = resources.files("faithsieve.llm") / "prompts" / f"{prompt_id}.md"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise KeyError(f"no prompt file {prompt_id}.md") from None
    return parse_prompt(text, prompt_id)


def shipped_prompts() -> list[str]:
    """Ids of every prompt file shipped with the package."""
    folder = resources.files("faithsieve.llm") / "prompts"
    return sorted(p.name[:-3] for p in folder.iterdir() if p.name.endswith(".md"))
