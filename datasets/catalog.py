"""What FaithSieve can read: the formats, and the datasets found under a folder with their item counts
(``faithsieve formats [FOLDER]``).

Each ``.json``/``.jsonl`` file is read as ``faithsieve score`` reads it (its format detected from its first
record); a file no labelled format reads but whose records are proofs (GSM8K's ``{question, answer}``,
``{problem, steps}`` without a label) is listed as proofs for ``faithsieve predict``; any other file is listed
with the reason it is not a dataset.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from faithsieve.datasets.adapters import load_dataset
from faithsieve.datasets.reading import dataset_files
from faithsieve.datasets.unlabelled import load_unlabelled

from faithsieve.core.errors import InputError

__all__ = ["FileSurvey", "survey"]

UNLABELLED_FORMAT = "proofs without labels"
"""The format a file of proofs with no step labels is listed under (read by ``faithsieve predict``)."""


@dataclass(frozen=True)
class FileSurvey:
    """One file under the folder: its format and what it holds."""

    path: str
    """The file."""
    format: str | None
    """The adapter that reads it, ``UNLABELLED_FORMAT``, or ``None`` (not a dataset)."""
    items: int
    """Items read (proofs, for a file without labels)."""
    flawed: int
    """Items labelled with a first wrong step."""
    correct: int
    """Items labelled correct."""
    bad: int
    """Malformed records."""
    excluded: int
    """Records its adapter leaves out by policy."""
    note: str = ""
    """Why the file is not a dataset, or what to run on it."""


def _survey_file(file: Path) -> FileSurvey:
    try:
        data = load_dataset(file)
    except InputError as exc:
        return FileSurvey(str(file), None, 0, 0, 0, 0, 0, exc.message)
    if data.items:
        flawed = sum(1 for it in data.items if it.first_error is not None)
        fmt = data.formats.get(str(file))
        note = ("faithsieve score (reference solutions, every item correct); faithsieve inject makes flawed items"
                if fmt == "gsm8k" else "faithsieve score")
        return FileSurvey(str(file), fmt, len(data.items), flawed, len(data.items) - flawed,
                          len(data.bad), len(data.excluded), note)
    plain = load_unlabelled(file)
    if plain.items:
        gsm8k = plain.formats.get(str(file)) == "gsm8k"
        return FileSurvey(str(file), UNLABELLED_FORMAT, len(plain.items), 0, 0, len(plain.bad), 0,
                          "faithsieve predict; faithsieve inject makes labelled items" if gsm8k else "faithsieve predict")
    why = str(data.bad[0].reason) if data.bad else "no records"
    return FileSurvey(str(file), None, 0, 0, 0, len(data.bad), len(data.excluded), why)


def survey(folder: Path) -> list[FileSurvey]:
    """Every ``.json``/``.jsonl`` file under ``folder`` (or the file itself), sorted, with its format and counts."""
    return [_survey_file(f) for f in dataset_files(folder)]
