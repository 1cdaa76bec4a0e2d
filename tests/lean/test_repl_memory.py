"""D1 (issue 39): the worker's address-space cap must not reach the Lean REPL.

lean-interact sets ``RLIMIT_AS = (limit, limit)`` in the REPL's child and swallows the failure. Without
privileges that fails whenever ``limit`` is above the hard limit, and the REPL keeps the worker's 4 GiB soft
cap (smaller than Mathlib's mapped .olean files). So workers cap only their soft limit and the backend
asks lean-interact for a limit clipped to the hard one (``repl_memory_mb``).

Root can raise a hard limit, so root cannot see the failure: the subprocess test drops to uid 65534
(``nobody``) after its imports when it runs as root, and lowers its hard limit first. lean-interact's own
``_limit_memory`` is the ``preexec_fn``; the child is ``cat /proc/self/limits`` (no Lean needed).
A user with Lean confirms it end to end with ``tests/lean/test_live_lean.py::test_repl_address_space``."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

import pytest
from faithsieve.lean.local import repl_memory_mb

GIB = 1024 ** 3
INF = resource.RLIM_INFINITY


@pytest.mark.parametrize(("limits", "want", "got", "words"), [
    ((4 * GIB, INF), 16384, 16384, "gets 16384 MiB"),
    ((4 * GIB, 64 * GIB), 16384, 16384, "hard limit 65536 MiB"),
    ((4 * GIB, 12 * GIB), 16384, 12288, "gets only 12288 MiB"),
    ((4 * GIB, 4 * GIB), 16384, 4096, "raise the hard limit"),
])
def test_the_limit_asked_for_is_clipped_to_the_hard_limit(limits: tuple[int, int], want: int, got: int,
                                                          words: str) -> None:
    mb, note = repl_memory_mb(want, limits)
    assert mb == got and words in note


_PROBE = r"""
import json, os, resource, subprocess, sys
from faithsieve.runtime.workers import init_worker
from faithsieve.lean.local import repl_memory_mb
from lean_interact.utils import _limit_memory
hard = int(sys.argv[1]) * 1024 ** 3
resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
if os.getuid() == 0:
    os.setgid(65534)
    os.setuid(65534)
if sys.argv[2] == "old":  # the worker as it was: soft and hard both at the cap
    resource.setrlimit(resource.RLIMIT_AS, (4096 * 2 ** 20, 4096 * 2 ** 20))
else:
    init_worker(4096, os.getppid())
def child(mb):
    out = subprocess.run(["cat", "/proc/self/limits"], preexec_fn=lambda: _limit_memory(mb), capture_output=True,
                         text=True, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("Max address space"))
    return int(line.split()[3]) // 2 ** 20
got, _ = repl_memory_mb(16384)
print(json.dumps({"uid": os.getuid(), "worker": resource.getrlimit(resource.RLIMIT_AS)[0] // 2 ** 20,
                  "asked_16384": child(16384), "clipped": got, "clipped_child": child(got)}))
"""


def _probe(hard_gib: int, worker: str) -> dict[str, int]:
    if not os.path.exists("/proc/self/limits"):
        pytest.skip("no /proc/self/limits on this platform")
    done = subprocess.run([sys.executable, "-c", _PROBE, str(hard_gib), worker], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    out: dict[str, int] = json.loads(done.stdout)
    assert out["uid"] != 0, "the probe must run unprivileged to see what a user sees"
    return out


def test_an_unprivileged_worker_gives_the_repl_its_limit_not_its_own_cap() -> None:
    out = _probe(64, "new")
    assert out["worker"] == 4096  # the worker keeps its own cap
    assert out["asked_16384"] == out["clipped_child"] == 16384  # the REPL is not held to it


def test_a_low_hard_limit_is_clipped_to_and_said() -> None:
    out = _probe(12, "new")
    assert out["asked_16384"] == 4096  # lean-interact's silent failure: the REPL would keep the worker's cap
    assert out["clipped"] == out["clipped_child"] == 12288  # clipped to the hard limit, it gets all it can


def test_the_old_worker_cap_held_the_repl_to_4_gib() -> None:
    """What a non-root user met before: soft = hard = 4 GiB in the worker, so the REPL could never get more."""
    out = _probe(64, "old")
    assert out["asked_16384"] == 4096 and out["clipped_child"] == 4096
