"""Relations the writer withdraws right after writing them.

Solutions written by people thinking aloud, and by language models, correct themselves in place:
``7·23 + 5 = 164 — wait, that's 166``, ``48 / 6 = 9, no, 48 / 6 = 8``, ``x = 3. Oops, x = 4``.
The withdrawn relation is not a claim of the proof (the correction that follows is, and is
checked as usual). Only a marker that opens the text right after the relation counts — a
dash, comma or full stop may come between — so a later "wait" elsewhere in the step retracts
nothing.
"""

from __future__ import annotations

import re

# bounded: at most 6 separator characters, then the marker
_RETRACTION = re.compile(
    r"[ \t]{0,3}[-—–,.;:!)\]$\\]{0,6}[ \t]{0,3}(?:"
    r"wait\b|oops\b|whoops\b|hmm+\b|no\s{0,2}[,:;!—–-]|actually\b|correction\b|sorry\b|"
    r"that'?s\s{1,3}(?:not\s{1,3}right|wrong|incorrect|a\s{1,3}mistake)|that\s{1,3}is\s{1,3}(?:wrong|incorrect)|"
    r"let\s{1,3}me\s{1,3}(?:re\w{2,12}|double[- ]?check|check\s{1,3}again)|i\s{1,3}made\s{1,3}an?\s{1,3}(?:mistake|error))",
    re.IGNORECASE)


def retracted(text: str, end: int) -> bool:
    """The relation ending at ``end`` in ``text`` is withdrawn by the words right after it."""
    return _RETRACTION.match(text[end : end + 60]) is not None


__all__ = ["retracted"]
