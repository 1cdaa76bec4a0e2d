"""What fusion knows about the model it weighs: measured reliabilities, or conservative defaults.

A review's weight is a likelihood ratio: a review that says ``incorrect`` weighs
``log(sensitivity / false_alarm)``, one that says ``correct`` ``-log((1 - false_alarm) / (1 - sensitivity))``,
written as reliabilities ``r = 1 / (1 + exp(-weight))``. Re-samples of one prompt are one piece of evidence
(``fusion.samples_weight``), with the correlation ``rho`` the calibration measured or, without one, the
correlation this run has measured so far (``Agreement``), 1 until enough pairs were seen: re-samples are
correlated until shown otherwise.

``faithsieve calibrate`` writes a ``Calibration`` (JSON); ``--calibration FILE`` reads it.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from faithsieve.core.errors import FaithSieveError

DEFAULT_REVIEW_RELIABILITY = 0.85
"""A review's reliability without a calibration (either way)."""
MIN_PAIRS = 20
"""Re-sample pairs a run must see before its measured agreement replaces ``rho = 1``."""
MIN_UNITS = 10
"""Units of each kind (sound, of a wrong step) a calibration needs before its review rates are used."""
RELIABILITY_CAP = 0.99
"""No measured reliability is taken above this (a sample of a few hundred units cannot show more)."""


class CalibrationError(FaithSieveError):
    """A calibration file that cannot be read or does not hold a calibration."""


class Calibration(BaseModel):
    """An endpoint's reliability per evidence kind, measured on a labelled sample (``faithsieve calibrate``)."""

    model_config = ConfigDict(frozen=True)

    version: int = 1
    """Format version."""
    model: str = ""
    """The model measured."""
    dataset: str = ""
    """The labelled sample it was measured on."""
    items: int = Field(default=0, ge=0)
    """Items measured."""
    judge_exact: float | None = Field(default=None, ge=0, le=1)
    """Share of whole-proof judgments (``--mode judge``'s prompt) that named the labelled answer."""
    judge_binary: float | None = Field(default=None, ge=0, le=1)
    """Share of whole-proof judgments right about correct vs. flawed."""
    sound_units: int = Field(default=0, ge=0)
    """First reviews of units of steps before the labelled first error (or of correct proofs)."""
    false_alarm: float | None = Field(default=None, ge=0, le=1)
    """Share of those a review called ``incorrect``."""
    wrong_steps: int = Field(default=0, ge=0)
    """Labelled first-error steps whose units were reviewed."""
    sensitivity: float | None = Field(default=None, ge=0, le=1)
    """Share of those where a first review called some unit of the step ``incorrect``."""
    resample_pairs: int = Field(default=0, ge=0)
    """Re-samples compared with their unit's first review."""
    resample_agreement: float | None = Field(default=None, ge=0, le=1)
    """Share of those that repeated the first answer."""
    rho: float | None = Field(default=None, ge=0, le=1)
    """Correlation of a re-sample with its first sample (1: re-samples repeat the first answer)."""


def correlation(agreement: float, accuracy: float) -> float:
    """The correlation of re-samples that agree with their first sample at rate ``agreement`` when one
    sample is right at rate ``accuracy`` (pure): ``(a - a_ind) / (1 - a_ind)`` with ``a_ind = p^2 + (1-p)^2``,
    the agreement of independent draws, clipped to [0, 1]."""
    a_ind = accuracy ** 2 + (1 - accuracy) ** 2
    if a_ind >= 1 - 1e-9:
        return 1.0
    return min(1.0, max(0.0, (agreement - a_ind) / (1 - a_ind)))


def _clip(r: float) -> float:
    return min(RELIABILITY_CAP, max(0.5, r))


@dataclass(frozen=True)
class Weights:
    """The weights one fusion runs with."""

    review_wrong: float
    """Reliability of a review that says ``incorrect``."""
    review_fine: float
    """Reliability of a review that says ``correct``."""
    rho: float
    """Correlation of re-samples of one review."""
    source: str
    """Which calibration (the file and its digest) or ``default`` (with the run's measured correlation)."""
    rho_measured: bool = False
    """``rho`` was measured (by the calibration, or by this run on enough pairs)."""


def weights_from(cal: Calibration | None, label: str, run_rho: float | None) -> Weights:
    """The weights for a calibration (None: the conservative defaults) and the run's measured correlation (pure)."""
    r_wrong = r_fine = DEFAULT_REVIEW_RELIABILITY
    measured_rates = (cal is not None and cal.sensitivity is not None and cal.false_alarm is not None
                      and cal.sound_units >= MIN_UNITS and cal.wrong_steps >= MIN_UNITS)
    if measured_rates and cal is not None and cal.sensitivity is not None and cal.false_alarm is not None:
        sens, fa = min(max(cal.sensitivity, 1e-3), 1 - 1e-3), min(max(cal.false_alarm, 1e-3), 1 - 1e-3)
        r_wrong = _clip(1 / (1 + fa / sens))
        r_fine = _clip(1 / (1 + (1 - sens) / (1 - fa)))
    if cal is not None and cal.rho is not None and cal.resample_pairs >= MIN_PAIRS:
        return Weights(r_wrong, r_fine, cal.rho, label, True)
    if run_rho is not None:
        return Weights(r_wrong, r_fine, run_rho, f"{label}; re-sample correlation measured in this run {run_rho:.2f}", True)
    return Weights(r_wrong, r_fine, 1.0, f"{label}; re-samples counted as one opinion (correlation not yet measured)")


def load_calibration(path: str) -> tuple[Calibration, str]:
    """The calibration in ``path`` and its label (``calibration FILE sha256:...``); raises ``CalibrationError``."""
    p = Path(path).expanduser()
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise CalibrationError(f"calibration file {path}: {exc.strerror or exc}") from None
    if len(raw) > 1_000_000:
        raise CalibrationError(f"calibration file {path}: larger than 1 MB, not a calibration")
    try:
        cal = Calibration.model_validate(json.loads(raw))
    except (ValueError, ValidationError) as exc:
        raise CalibrationError(f"calibration file {path}: not a calibration ({str(exc).splitlines()[0][:200]})") from None
    digest = hashlib.sha256(raw).hexdigest()[:12]
    return cal, f"calibration {p.name} sha256:{digest} ({cal.model or 'model ?'}, {cal.items} items)"


class Agreement:
    """Re-sample agreement measured over one run (thread-safe; owned by the fusion stage the pipeline holds)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.pairs = 0
        self.same = 0
        self.first = 0
        self.first_wrong = 0

    def add(self, pairs: int, same: int) -> None:
        with self._lock:
            self.pairs += pairs
            self.same += same

    def rho(self, accuracy: float) -> float | None:
        """The run's measured correlation (``correlation``), or None before ``MIN_PAIRS`` pairs."""
        with self._lock:
            if self.pairs < MIN_PAIRS:
                return None
            return correlation(self.same / self.pairs, accuracy)


def review_accuracy(w: Weights) -> float:
    """A single review's accuracy implied by the weights (the mean of the two reliabilities)."""
    return (w.review_wrong + w.review_fine) / 2


__all__ = ["Agreement", "Calibration", "CalibrationError", "DEFAULT_REVIEW_RELIABILITY", "MIN_PAIRS", "Weights",
           "correlation", "load_calibration", "review_accuracy", "weights_from"]
