"""Offline pipeline throughput of this tree against a git revision, measured in one run.

Each side runs ``localize`` over the ProcessBench items in a fresh process (parsing and
splitting excluded), alternating A/B/A/B so that machine load hits both alike; the figure is
proofs per CPU second (process time, so other processes on the machine count less), and the
ratio of the medians is printed. The revision is exported with ``git archive`` into a temporary
folder laid out as the installed package (``faithsieve.statetree`` = ``statetree/`` ...).

    python bench/rules_throughput.py [--rev e0f6e20] [--rounds 3] [--limit 1400]
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / ".." / "shared" / "datasets" / "raw" / "processbench"
_SUBPACKAGES = ("statetree", "obligations", "lean", "datasets", "api")

_LOOP = """
import sys, time
from faithsieve.core.settings import Settings
from faithsieve.datasets.adapters import load_dataset
from faithsieve.pipeline import localize
from faithsieve.split import proof_from_steps
import faithsieve
s = Settings()
items = load_dataset(sys.argv[1]).items[: int(sys.argv[2])]
proofs = [proof_from_steps(it.problem, list(it.steps), s) for it in items]
localize(proofs[0], s)
c = time.process_time()
for p in proofs:
    localize(p, s)
print(len(proofs) / (time.process_time() - c), faithsieve.__file__)
"""


def package_of(rev: str, dest: Path) -> Path:
    """The tree at ``rev`` laid out as the ``faithsieve`` package under ``dest``."""
    blob = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev], check=True, capture_output=True).stdout
    src = dest / "src"
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(src, filter="data")
    pkg = dest / "pkg"
    shutil.copytree(src / "faithsieve", pkg / "faithsieve")
    for sub in _SUBPACKAGES:
        if (src / sub).is_dir():
            shutil.copytree(src / sub, pkg / "faithsieve" / sub)
    return pkg


def run(pythonpath: Path | None, data: Path, limit: int) -> tuple[float, str]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    out = subprocess.run([sys.executable, "-c", _LOOP, str(data), str(limit)], check=True, capture_output=True,
                         text=True, env=env, cwd=str(pythonpath or ROOT)).stdout.split()
    return float(out[0]), out[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rev", default="e0f6e20")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--limit", type=int, default=1400)
    ap.add_argument("--data", type=Path, default=DATA)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        pkg = package_of(args.rev, Path(tmp))
        here: list[float] = []
        there: list[float] = []
        for i in range(args.rounds):
            a, fa = run(None, args.data, args.limit)
            b, fb = run(pkg, args.data, args.limit)
            if i == 0:
                assert fb.startswith(str(pkg)), f"the revision's package was not the one imported: {fb}"
            here.append(a)
            there.append(b)
            print(f"round {i + 1}: this tree {a:.1f} proofs/CPU-s, {args.rev} {b:.1f}", flush=True)
    ratio = statistics.median(here) / statistics.median(there)
    print(f"median: this tree {statistics.median(here):.1f}, {args.rev} {statistics.median(there):.1f}; ratio {ratio:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
