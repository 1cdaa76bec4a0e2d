"""A real local Ray cluster for the ``ray`` tests, started once per session on 127.0.0.1 (skipped, with
the reason, when the ``ray`` extra is not installed)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

try:
    import ray
except ImportError:  # the tests here are skipped, with this reason (RAY_MARKS)
    ray = None

RAY_MARKS = [pytest.mark.ray,
             pytest.mark.skipif(ray is None, reason="the ray extra is not installed (pip install -e '.[ray]')")]
"""Every test module here: ``pytestmark = RAY_MARKS``."""

CLUSTER_CPUS = 2
"""Logical CPUs of the test cluster: score runs get one actor per CPU."""


def proc_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every process visible in /proc."""
    out: dict[int, tuple[int, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        fields = stat.rsplit(b")", 1)[-1].split()
        if fields[0] != b"Z":
            out[int(entry.name)] = (int(fields[1]), cmd)
    return out


def descendants(pids: list[int]) -> set[int]:
    """``pids`` and every live process below them."""
    table = proc_table()
    found = {p for p in pids if p in table}
    grew = True
    while grew:
        more = {p for p, (ppid, _) in table.items() if ppid in found} - found
        found |= more
        grew = bool(more)
    return found


def processes_named(fragment: str) -> list[int]:
    """Processes of the test's own cluster (its processes descend from this one) whose command line
    holds ``fragment`` (Ray names an actor's process ``ray::ClassName``); another cluster's are left alone."""
    ours = descendants([os.getpid()])
    return [p for p, (_, cmd) in proc_table().items() if fragment in cmd and p in ours]


@pytest.fixture(scope="session")
def cluster() -> Iterator[str]:
    """The address of a local Ray cluster (this process is its first driver)."""
    ctx = ray.init(address="local", num_cpus=CLUSTER_CPUS, include_dashboard=False, log_to_driver=False,
                   object_store_memory=80 * 1024 * 1024, _node_ip_address="127.0.0.1")
    try:
        yield str(ctx.address_info["gcs_address"])  # what a driver in another process joins
    finally:
        ray.shutdown()
