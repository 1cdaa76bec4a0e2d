"""The offline sieve against its reading cost, in one run on ProcessBench.

Prints, for the 1,400 ProcessBench items in one warm process (CPU time, median of
``--repeat`` passes):

* full ``localize`` CPU, and tokenize + parse CPU (``extract_formulas`` over the problem and
  every step, exactly the reading the rule-based decomposer does): the reading-cost floor;
  their ratio;
* proofs/s and per-proof p50 / p99 (ms);
* the growth exponent for proofs of 1 → 1,024 steps (``log2`` of the time ratio of each
  doubling, and the least-squares slope over all sizes); every size reads the same 64
  ProcessBench steps (cut into 64/n proofs below 64 steps, repeated above), under a time
  budget large enough that nothing is cut short;
* cold start: ``faithsieve --help`` and ``faithsieve localize`` of one example, each in a
  fresh process (wall and CPU time, median of ``--cold`` runs), and which heavy modules
  ``--help`` imports;
* ``--ablate``: ProcessBench localize CPU with each switchable speed change of issue 16's third
  and fourth rounds turned off in turn, then all of them, in interleaved passes (and the ratio to
  all on): ``witness``, ``quotients``, ``memo``, ``gc``, ``sections``, ``sympy-exact``, ``piecewise``
  (each through ``Settings.procedures_off``, ``gc`` through the collector's thresholds; see ``ablate``);
* ``--phases``: where one ProcessBench pass spends its CPU: the reading inside the tree builder, the
  rest of tree building, obligation extraction, each kind of check by the method that decided it,
  synthesis, and the rest (each measured around the call, so the parts add up to the pass);
* ``--rollouts DATA``: a many-rollouts-of-one-problem workload (default: the first 800 items
  of PRMBench-preview, up to 16 variants of each problem) with the outcome memo on and off, and
  its hit rate.

The outcome memo is emptied before every timed pass (and every growth batch), so no pass reuses
the outcomes of an earlier one: each pass costs what one fresh process pays.

    python bench/offline_speed.py [--data ../shared/datasets/raw/processbench] [--repeat 3]
    python bench/offline_speed.py --skip-growth --skip-cold --limit 200   # a quick look
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HEAVY = ("sympy", "networkx", "z3", "matplotlib", "numpy", "pydantic_settings", "httpx", "fastapi")
BLOCK = 64
ROOT = Path(__file__).resolve().parents[1]


def _default_data() -> Path:
    return ROOT.parent / "shared" / "datasets" / "raw" / "processbench"


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def load_proofs(data: Path, limit: int | None):
    from faithsieve.datasets.adapters import load_dataset

    from faithsieve.core.settings import Settings
    from faithsieve.split import proof_from_steps

    settings = Settings()
    items = load_dataset(data).items[:limit]
    proofs = []
    for it in items:
        try:
            proofs.append(proof_from_steps(it.problem, list(it.steps), settings))
        except Exception:  # noqa: BLE001 (an item the pipeline refuses is not timed)
            continue
    return proofs


def _clear_memo(pipeline) -> None:
    """Empty the outcome memo and the conversion cache the pipeline's checkers own: the next pass
    costs what a fresh process pays."""
    for checker in pipeline.checkers:
        for owned in (getattr(checker, "memo", None), getattr(checker, "conversions", None)):
            if owned is not None:
                owned.clear()


def _reading(proof) -> None:
    from faithsieve.statetree.decompose import imaginary_unit

    from faithsieve.mathtext.formulas import extract_formulas

    texts = [proof.problem, *(s.text for s in proof.steps)]
    imaginary = imaginary_unit(texts)  # as the decomposer decides it, so the floor is its reading
    for t in texts:
        extract_formulas(t, imaginary)


def corpus(proofs, repeat: int) -> dict[str, float]:
    """Full localize CPU and reading CPU over all proofs, median of ``repeat`` passes."""
    from faithsieve.core.settings import Settings
    from faithsieve.pipeline import Pipeline

    pipeline = Pipeline(Settings())
    for p in proofs[:20]:  # warm-up: lazy imports and caches are not charged to one proof
        pipeline.localize(p)
        _reading(p)
    try:  # as `faithsieve score` does in its long-lived loop (absent before lazy imports existed)
        from faithsieve.runtime.lazy import freeze_after_import
    except ImportError:
        pass
    else:
        try:
            from faithsieve.warmup import OFFLINE_MODULES
        except ImportError:  # a checkout from before the module list left the runtime room
            freeze_after_import()  # type: ignore[call-arg]
        else:
            freeze_after_import(OFFLINE_MODULES)  # once per process: an ablation's collector settings stay
    full_passes, read_passes, per_proof = [], [], [[] for _ in proofs]
    for _ in range(repeat):
        tot = 0.0
        _clear_memo(pipeline)
        for i, p in enumerate(proofs):
            t = time.process_time()
            pipeline.localize(p)
            dt = time.process_time() - t
            per_proof[i].append(dt)
            tot += dt
        full_passes.append(tot)
        t = time.process_time()
        for p in proofs:
            _reading(p)
        read_passes.append(time.process_time() - t)
    full, read = statistics.median(full_passes), statistics.median(read_passes)
    med = [statistics.median(xs) * 1000 for xs in per_proof]
    return {"proofs": len(proofs), "localize_cpu_s": round(full, 3), "tokenize_parse_cpu_s": round(read, 3),
            "ratio": round(full / read, 2), "proofs_per_s": round(len(proofs) / full, 1),
            "p50_ms": round(_pct(med, 0.50), 3), "p99_ms": round(_pct(med, 0.99), 3)}


def growth(proofs, max_steps: int) -> dict[str, object]:
    """CPU time of one proof of n steps, n = 1, 2, 4, ... max_steps, and the exponent of each doubling."""
    from faithsieve.core.proof import Proof, Step
    from faithsieve.core.settings import Settings
    from faithsieve.pipeline import Pipeline

    pool = [s.text for p in proofs for s in p.steps if s.text.strip()]
    settings = Settings(max_steps=max_steps, proof_time_limit_s=3600.0)
    pipeline = Pipeline(settings)
    batches: dict[int, list] = {}
    n = 1
    while n <= max_steps:
        # the same 64 steps in every size: cut into 64/n proofs of n steps below 64, repeated
        # above; so each doubling changes the length and nothing else
        windows = max(1, BLOCK // n)
        batches[n] = [Proof(problem=proofs[0].problem,
                            steps=tuple(Step(index=i + 1, text=pool[(w * n + i) % BLOCK]) for i in range(n)))
                      for w in range(windows)]
        n *= 2
    runs: dict[int, list[float]] = {n: [] for n in batches}
    for _ in range(5):  # rounds over every size, the least per size: a load change hits all sizes alike
        for n, batch in batches.items():
            _clear_memo(pipeline)
            t = time.process_time()
            for proof in batch:
                pipeline.localize(proof)
            runs[n].append((time.process_time() - t) / len(batch))
    sizes = list(batches)
    times = [min(runs[n]) for n in sizes]
    local = [round(math.log2(times[i + 1] / times[i]), 3) for i in range(len(times) - 1)]
    xs, ys = [math.log(s) for s in sizes], [math.log(t) for t in times]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    return {"sizes": sizes, "ms": [round(t * 1000, 3) for t in times], "doubling_exponents": local,
            "max_doubling_exponent": max(local), "fit_exponent": round(slope, 3)}


def _fresh(cmd: list[str], runs: int) -> dict[str, float]:
    """Median wall time and CPU time (user + system) of ``cmd`` in fresh processes; on a shared
    machine the CPU time is the steadier of the two."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
        walls.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return {"wall_s": round(statistics.median(walls), 3), "cpu_s": round(statistics.median(cpus), 3)}


def cold(runs: int) -> dict[str, object]:
    exe = str(Path(sys.executable).with_name("faithsieve"))
    example = str(ROOT / "datasets" / "examples" / "04_linear_equation_solved.json")
    probe = ("import contextlib, io, sys; from faithsieve.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n    try:\n        main(['--help'])\n"
             "    except SystemExit:\n        pass\n"
             f"print('heavy:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))")
    heavy = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True, cwd=ROOT)
    return {"python_startup": _fresh([sys.executable, "-c", "pass"], runs),
            "help": _fresh([exe, "--help"], runs), "localize_one": _fresh([exe, "localize", example], runs),
            "heavy_modules_at_help": heavy.stdout.strip().splitlines()[-1].removeprefix("heavy:")}


def ablate(proofs, repeat: int) -> dict[str, dict[str, float]]:
    """Localize CPU (median of ``repeat`` interleaved passes) with each speed change of issue 16's
    third and fourth rounds turned off in turn, then all of them. Third round: ``witness`` (exact
    points for "does not follow"), ``quotients`` (quotients read as opaque quantities), ``memo``
    (the outcome memo), ``gc`` (the raised collector thresholds). Fourth round: ``sections``
    (one-variable derivations decided exactly, and premises divided through), ``sympy-exact``
    (rational-function identities, closed values with square roots, "not an identity" from a
    variable entering polynomially; fifth round: from a difference that takes two values). The
    fourth round's other changes (fewer repeated walks and regex searches in the tree builder)
    have no switch: they do the same work once. Fifth round: ``piecewise`` ("follows" through
    ``abs`` and quotients, proved by elimination); its cue prefilters have no switch."""
    import gc

    from faithsieve.core.settings import Settings
    from faithsieve.pipeline import Pipeline

    thresholds = gc.get_threshold()
    procedures = {  # each change by the procedures it switches off (``Settings.procedures_off``)
        "witness": ("witness",), "quotients": ("quotients",), "memo": ("memo",), "gc": (),
        "sections": ("sections", "cleared"), "sympy-exact": ("radicals", "ratfunc", "freevar", "varying"),
        "piecewise": ("piecewise",),
    }
    changes = tuple(procedures)
    variants = {"all on": set(), **{f"without {c}": {c} for c in changes}, "without all": set(changes)}
    pipelines = {name: Pipeline(Settings(procedures_off=tuple(sorted({p for c in off for p in procedures[c]}))))
                 for name, off in variants.items()}
    passes: dict[str, list[float]] = {name: [] for name in variants}
    try:
        for _ in range(repeat):  # round-robin: a drift in load or warm caches touches every variant alike
            for name, off in variants.items():
                gc.set_threshold(*((700, 10, 10) if "gc" in off else thresholds))
                pipeline = pipelines[name]
                _clear_memo(pipeline)
                t = time.process_time()
                for p in proofs:
                    pipeline.localize(p)
                passes[name].append(time.process_time() - t)
    finally:
        gc.set_threshold(*thresholds)
    base = statistics.median(passes["all on"])
    return {name: {"localize_cpu_s": round(statistics.median(xs), 3),
                   "vs_all_on": round(statistics.median(xs) / base, 3)} for name, xs in passes.items()}


def phases(proofs) -> dict[str, object]:
    """CPU of one ProcessBench pass split by phase (one pass, after a warm-up; each phase timed
    around its call, the checks per obligation kind and the method that decided it)."""
    from collections import Counter

    import faithsieve.statetree.decompose as tree

    import faithsieve.pipeline as pipeline_mod
    import faithsieve.stages.rule as rule
    from faithsieve.core.settings import Settings
    from faithsieve.pipeline import Pipeline

    cpu: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    patched: list[tuple[object, str, object]] = []

    def timed(module: object, name: str, label) -> None:
        fn = getattr(module, name)

        def wrapper(*a, **k):
            t = time.process_time()
            out = fn(*a, **k)
            key = label(a, out) if callable(label) else label
            cpu[key] += time.process_time() - t
            calls[key] += 1
            return out

        patched.append((module, name, fn))
        setattr(module, name, wrapper)

    def check_label(args, out) -> str:
        method = getattr(out, "method", None) or "none"
        return f"check {args[0].kind.value} ({type(out).__name__.lower()}, {method})"

    pipeline = Pipeline(Settings())
    for p in proofs[:20]:
        pipeline.localize(p)
    timed(tree, "extract_formulas", "reading (inside the tree builder)")
    timed(rule, "decompose", "tree building, reading included")
    timed(rule, "extract_obligations", "obligation extraction")
    timed(rule, "remainder_obligations", "obligation extraction")
    timed(rule, "run_portfolio", check_label)
    timed(pipeline_mod, "synthesize", "synthesis")
    try:
        _clear_memo(pipeline)
        t = time.process_time()
        for p in proofs:
            pipeline.localize(p)
        total = time.process_time() - t
    finally:
        for module, name, fn in reversed(patched):
            setattr(module, name, fn)
    reading = cpu.pop("reading (inside the tree builder)")
    cpu["tree building (beyond the reading)"] = cpu.pop("tree building, reading included") - reading
    cpu["reading (inside the tree builder)"] = reading
    calls["tree building (beyond the reading)"] = calls.pop("tree building, reading included")
    cpu["the rest (pipeline, evidence records)"] = total - sum(cpu.values())
    return {"localize_cpu_s": round(total, 3),
            "phases": {k: {"cpu_s": round(v, 3), "share": round(v / total, 3), "calls": calls.get(k, 0)}
                       for k, v in cpu.most_common()}}


def rollouts(data: Path, limit: int) -> dict[str, object]:
    """Localize CPU over a many-rollouts workload, memo off and on (one pass each, off first)."""
    from faithsieve.core.settings import Settings
    from faithsieve.pipeline import Pipeline

    proofs = load_proofs(data, limit)
    res = {}
    for name, off in (("memo off", ("memo",)), ("memo on", ())):
        pipeline = Pipeline(Settings(procedures_off=off))
        for p in proofs[:20]:
            pipeline.localize(p)
        _clear_memo(pipeline)
        t = time.process_time()
        for p in proofs:
            pipeline.localize(p)
        res[name] = round(time.process_time() - t, 3)
    memo = next(ch.memo for ch in pipeline.checkers if getattr(ch, "memo", None) is not None)
    looked = memo.hits + memo.misses
    return {"data": data.name, "proofs": len(proofs), "problems": len({p.problem for p in proofs}), **res,
            "speedup": round(res["memo off"] / res["memo on"], 3), "hit_rate": round(memo.hits / max(1, looked), 3),
            "lookups": looked}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=_default_data())
    ap.add_argument("--limit", type=int, default=None, help="first N items only")
    ap.add_argument("--repeat", type=int, default=3, help="passes over the corpus (median)")
    ap.add_argument("--max-steps", type=int, default=1024)
    ap.add_argument("--cold", type=int, default=5, help="fresh processes per cold-start figure (median)")
    ap.add_argument("--skip-growth", action="store_true")
    ap.add_argument("--skip-cold", action="store_true")
    ap.add_argument("--ablate", action="store_true", help="also time ProcessBench with each speed change off")
    ap.add_argument("--phases", action="store_true", help="also split one ProcessBench pass by phase")
    ap.add_argument("--rollouts", type=Path, nargs="?", const=ROOT.parent / "shared" / "datasets" / "raw" /
                    "prmbench-preview", default=None, help="also time a many-rollouts workload, memo off and on")
    ap.add_argument("--rollouts-limit", type=int, default=800)
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()

    out: dict[str, object] = {}
    if not args.skip_cold:  # first, before this process warms the file cache further
        out["cold"] = cold(args.cold)
        print("cold start:", json.dumps(out["cold"]), flush=True)
    proofs = load_proofs(args.data, args.limit)
    out["corpus"] = corpus(proofs, args.repeat)
    print("processbench:", json.dumps(out["corpus"]), flush=True)
    if args.ablate:
        out["ablation"] = ablate(proofs, args.repeat)
        print("ablation:", json.dumps(out["ablation"]), flush=True)
    if args.phases:
        out["phases"] = phases(proofs)
        print("phases:", flush=True)
        for name, row in out["phases"]["phases"].items():  # type: ignore[index]
            print(f"  {row['cpu_s']:7.3f} s {row['share']:6.1%} {row['calls']:6d}  {name}", flush=True)
    if args.rollouts:
        out["rollouts"] = rollouts(args.rollouts, args.rollouts_limit)
        print("rollouts:", json.dumps(out["rollouts"]), flush=True)
    if not args.skip_growth:
        out["growth"] = growth(proofs, args.max_steps)
        print("growth:", json.dumps(out["growth"]), flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
