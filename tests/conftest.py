"""Shared test configuration. No fixture clears process state: the outcome memo and the conversion
cache belong to the checkers that own them (``pipeline.build_checkers``), so a test that builds its
own checkers starts with empty ones."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest


def kill_mid_run(proc: subprocess.Popen[bytes], preds: Path, lines: int, *, within_s: float, poll_s: float, who: str,
                 watch: Callable[[], None] = lambda: None) -> int:
    """Kill ``proc`` (SIGKILL), a run started with ``stderr=PIPE``, once its predictions file ``preds`` holds ``lines``
    lines, and reap it; the lines written by then. ``watch`` is called at every look. The test fails when ``proc``
    ends first (with the tail of its stderr) or ``within_s`` pass (the kill-and-resume tests of ``score``,
    ``predict`` and the Ray driver)."""
    stderr = proc.stderr
    assert stderr is not None
    deadline = time.monotonic() + within_s
    try:
        while time.monotonic() < deadline:
            watch()
            if preds.exists() and preds.read_bytes().count(b"\n") >= lines:
                break
            if proc.poll() is not None:
                pytest.fail(f"{who} ended early: {stderr.read().decode()[-2000:]}")
            time.sleep(poll_s)
        else:
            pytest.fail(f"{who} wrote no predictions in time")
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(10)
        stderr.close()
    return preds.read_bytes().count(b"\n")
