"""Ray, the optional scale-out engine (the ``faithsieve[ray]`` extra): the one place that imports it.

``import_ray()`` imports it on first use (``RayUnavailable``, naming the extra, when it is missing);
``connect(address)`` joins a cluster from a driver (``auto``: the cluster ``ray start`` left on this
machine, else a new local one); ``assigned_cpus()`` is the number of CPUs Ray gave the calling worker
(a task's or an actor's ``num_cpus``), which sizes the worker pools that run inside it. Only
``faithsieve.grading.onray`` and ``faithsieve.scoring.onray`` call these; nothing else imports Ray.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from faithsieve.core.errors import FaithSieveError

log = logging.getLogger(__name__)

EXTRA = "pip install '.[ray]' in a checkout of faithsieve"


class RayUnavailable(FaithSieveError):
    """Ray is not installed, or the cluster named cannot be reached."""

    code = "ray_unavailable"
    status = 503


def import_ray() -> Any:
    """The ``ray`` module (``RayUnavailable`` when it is not installed)."""
    try:
        import ray
    except ImportError as exc:
        raise RayUnavailable(f"Ray is not installed ({exc}); install it with {EXTRA}") from None
    return ray


def connect(address: str, **init_options: Any) -> Any:
    """The ``ray`` module, connected as a driver to the cluster at ``address`` (``host:port``,
    ``ray://host:port``) or, with ``auto``, to the cluster started by ``ray start`` on this machine (a
    new local one when there is none). Already connected: left as it is. Raises ``RayUnavailable``."""
    ray = import_ray()
    if ray.is_initialized():
        return ray
    if address != "auto":
        _probe(address)
    options = {"log_to_driver": False, **init_options}
    try:
        with _in_package_root():
            if address == "auto":
                try:
                    ray.init(address="auto", **options)
                except ConnectionError:
                    log.info("no Ray cluster running here: starting a local one")
                    ray.init(include_dashboard=False, **options)
            else:
                ray.init(address=address, **options)
    except (ConnectionError, ValueError, RuntimeError, TimeoutError) as exc:
        raise RayUnavailable(f"cannot connect to the Ray cluster at {address}: {str(exc).splitlines()[0][:200]}") from None
    return ray


def package_root() -> Path:
    """The folder the running ``faithsieve`` package is imported from (``site-packages`` after ``pip
    install .``; the checkout after ``pip install -e .``)."""
    import faithsieve

    return Path(faithsieve.__file__).resolve().parent.parent


def shadowing_source(cwd: Path | None = None) -> Path | None:
    """A ``faithsieve/`` folder in ``cwd`` (default: the working directory) that is not the package this
    process runs: Ray puts the driver's working directory first on its workers' path, so they would
    import that folder (a source checkout beside a non-editable install) and fail on every task."""
    folder = (cwd or Path.cwd()) / "faithsieve"
    if not (folder / "__init__.py").is_file():
        return None
    return None if folder.resolve() == package_root() / "faithsieve" else folder


SHADOW_FIX = ("start the Ray driver from another directory (cd elsewhere), or install the checkout with "
              "pip install -e '.[ray]'")
"""The one-line fix for a working directory whose ``faithsieve/`` folder would shadow the installed package."""


def refuse_shadowing(cwd: Path | None = None) -> None:
    """``RayUnavailable`` with the fix in one line when a driver whose Ray was started elsewhere (an RL
    framework's ``ray.init``) runs in a directory whose ``faithsieve/`` folder shadows the installed package
    on its workers (``shadowing_source``): every reward would come from an import error."""
    folder = shadowing_source(cwd)
    if folder is not None:
        raise RayUnavailable(f"{folder} is a source folder that Ray workers would import instead of the installed "
                             f"package (Ray puts the driver's working directory on their path): {SHADOW_FIX}")


@contextlib.contextmanager
def _in_package_root() -> Iterator[None]:
    """The working directory is the installed package's root while Ray starts a driver: Ray adds the
    driver's working directory to every worker's ``sys.path``, so a source checkout there (the repository
    root after a non-editable ``pip install .``) would shadow the installed package on the workers, and
    every task would fail to import it."""
    before = os.getcwd()
    try:
        os.chdir(package_root())
    except OSError:
        yield
        return
    try:
        yield
    finally:
        os.chdir(before)


PROBE_TIMEOUT_S = 5.0
"""How long ``connect`` waits for a TCP connection to the address before giving up (Ray itself keeps
retrying an unreachable cluster for minutes)."""


def _probe(address: str) -> None:
    """``RayUnavailable`` unless ``host:port`` (after an optional ``ray://``) accepts a TCP connection."""
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise RayUnavailable(f"the Ray address {address!r} is not host:port, ray://host:port or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_TIMEOUT_S).close()
    except OSError as exc:
        raise RayUnavailable(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}") from None


def assigned_cpus(default: int = 1) -> int:
    """Whole CPUs Ray assigned to the calling task or actor (at least 1); ``default`` outside a Ray
    worker, or when Ray is not installed."""
    try:
        ray = import_ray()
    except RayUnavailable:
        return default
    if not ray.is_initialized():
        return default
    ctx = ray.get_runtime_context()
    if ctx.get_actor_id() is None and ctx.get_task_id() is None:  # the driver: nothing was assigned to it
        return default
    cpus = float(ctx.get_assigned_resources().get("CPU", 0.0))
    return max(1, math.floor(cpus + 1e-9))


def cluster_cpus() -> int:
    """Whole CPUs of the connected cluster; ``RayUnavailable`` when it has none (a head started with
    ``--num-cpus 0`` and no worker node yet): an actor asking for one would wait forever."""
    ray = import_ray()
    cpus = math.floor(float(ray.cluster_resources().get("CPU", 0.0)) + 1e-9)
    if cpus < 1:
        raise RayUnavailable("the Ray cluster has no CPU to run on (add a worker node, or start the head with CPUs)")
    return int(cpus)
