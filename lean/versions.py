"""Lean versions as tuples, and the releases that brought what the kernel uses (pure).

``CORE_RAT``: ``Rat`` in core Lean's prelude, without imports (before, it lived in Batteries).
``DECIDE_KERNEL``: the ``decide +kernel`` syntax (lean4 PR 5999, which replaced ``decide!``).
``GRIND``: the ``grind`` tactic in core. The first is given by the issue that asked for the gate;
the other two are read from lean4's pull requests and changelog and have not been run here
(no toolchain can be installed on the machines this was written on).
"""

from __future__ import annotations

import re

__all__ = ["CORE_RAT", "DECIDE_KERNEL", "GRIND", "at_least", "parse_version", "shown"]

_VERSION = re.compile(r"(?<!\d)v?(\d{1,6})\.(\d{1,6})(?:\.(\d{1,6}))?")

CORE_RAT = (4, 24, 0)
DECIDE_KERNEL = (4, 15, 0)
GRIND = (4, 22, 0)


def parse_version(version: str | None) -> tuple[int, int, int] | None:
    """``v4.19.0`` / ``4.19.0-rc2`` / ``leanprover/lean4:v4.19.0`` -> ``(4, 19, 0)``; None when unreadable."""
    m = _VERSION.search((version or "")[:80])  # a version string is short; the cut keeps the scan bounded
    if m is None:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def at_least(version: str | None, release: tuple[int, int, int]) -> bool:
    """The version is known and not older than ``release``."""
    v = parse_version(version)
    return v is not None and v >= release


def shown(release: tuple[int, int, int]) -> str:
    """``(4, 24, 0)`` -> ``v4.24.0``."""
    return "v" + ".".join(map(str, release))
