"""The files a scoring run appends to and replaces: ``predictions.jsonl`` and atomic writes.

``PredictionLog`` is the append-only predictions file (one whole line per ``write``, fsynced; a
torn last line is cut off on load). ``write_atomic`` replaces a file so readers see the old or the
new content, never a mix. ``faithsieve.scoring.run`` runs the scoring and re-exports both names.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


@dataclass
class PredictionLog:
    """``predictions.jsonl``: append-only, one complete JSON line per item, fsynced per line."""

    path: Path
    """The file."""
    corrupt_lines: list[int] = field(default_factory=list)
    """Line numbers of unreadable lines found by ``load`` (their items are predicted again)."""

    def load(self) -> dict[str, dict[str, Any]]:
        """Records by id (a later line for the same id wins). A torn last line, left by a kill
        mid-write, is cut off the file so appends start on a line boundary."""
        if not self.path.exists():
            return {}
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            log.warning("%s: dropping a torn last line (%d bytes)", self.path, len(data) - end)
            with self.path.open("r+b") as fh:
                fh.truncate(end)
                fh.flush()
                os.fsync(fh.fileno())
            data = data[:end]
        out: dict[str, dict[str, Any]] = {}
        for lineno, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                out[str(rec["id"])] = rec
            except (json.JSONDecodeError, KeyError, TypeError):
                self.corrupt_lines.append(lineno)
        if self.corrupt_lines:
            log.warning("%s: %d unreadable lines (%s); their items will be predicted again",
                        self.path, len(self.corrupt_lines), ", ".join(map(str, self.corrupt_lines[:10])))
        return out

    def __enter__(self) -> PredictionLog:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        return self

    def append(self, record: dict[str, Any]) -> None:
        """Write one record as a single line with one ``write`` call, then fsync."""
        data = (json.dumps(record, ensure_ascii=False, sort_keys=False) + "\n").encode("utf-8")
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        os.fsync(self._fd)

    def __exit__(self, *exc: object) -> None:
        os.close(self._fd)
