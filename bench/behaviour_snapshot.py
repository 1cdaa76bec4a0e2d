"""Snapshot FaithSieve's observable behaviour, and compare two snapshots.

Meant for behaviour-preserving refactors: take a snapshot on the tree before, another on the tree
after, and compare them. Only public entry points are used, so the same script runs on a tree whose
internal modules have moved: the CLI (``python -m faithsieve ...`` in a subprocess, with the
interpreter running this script), ``faithsieve.scoring.stable_view`` (drops timing fields),
``faithsieve.grader`` (``grade``, ``compute_score``, ``reward_func``, ``GraderConfig``) and the HTTP
service started with ``faithsieve serve`` (spoken to over HTTP, nothing imported from ``api``).

    python bench/behaviour_snapshot.py take OUTDIR [--only PART ...] [--raw DIR] [--workers N]
    python bench/behaviour_snapshot.py compare A B [--only PART ...] [--ignore-method] [--show N]

Parts (each runnable alone with ``--only``; each writes ``OUTDIR/<part>/``):

* ``score``: every visible source in ``--raw`` (default ``../shared/datasets/raw``), plus
  ``datasets/proofloc-mini`` and ``datasets/examples``, scored offline with ``faithsieve score DIR
  --skip-invalid --workers N --no-report --no-progress`` (the full set: no ``--limit``; the skipped
  bad records are the sources' own non-data files, e.g. a manifest). Per source: ``<src>.jsonl``
  (every prediction through ``stable_view``, in file order), ``<src>.evidence.jsonl`` (every
  ``evidence/<id>.json``, sorted by file name), ``<src>.metrics.json`` and ``<src>.run.json``
  (exit code, stderr with the run directory replaced by ``<OUT>``). A source no adapter reads
  (``gsm8k``: question/answer records) is recorded with its exit code and message.
* ``grader``: ``compute_score`` (outcome only, and with the step check) and ``grade`` (the whole
  ``GradeResult`` as a dict) on the 1,000 pairs of ``bench/grader_vs_math_verify.py`` (rebuilt here
  from the raw files exactly as that script builds them, and checked against its ``load_pairs`` when
  it can be imported), the same on the Math-Verify parity cases read from
  ``tests/grader/mathverify_cases.py``, and ``reward_func`` (OpenRLHF) on every 16th pair (63), 8 a call.
* ``rewrite``: ``faithsieve rewrite gsm8k/test.jsonl --seed 0 --variants 1`` (offline); the output
  files kept byte for byte under ``rewrite/bytes/`` with their sha256, and ``rewrite --check`` of it.
* ``inject``: ``faithsieve inject`` on both GSM8K files (test, train) with the default mutation choice
  (seed 0), with every mutation and the unmodified solutions (``--per-item 7 --include-correct``), and,
  on test, each mutation alone; outputs kept byte for byte under ``inject/bytes/`` with sha256.
* ``service``: a live ``faithsieve serve`` on a free port: the GET routes (``/healthz``, ``/readyz``,
  ``/version``, ``/limits``, ``/openapi.json``, ``/docs``, ``/redoc``, ``/``, ``/web/config``,
  ``/web/examples``; ``/metrics`` only as its sorted metric names), ``POST /localize`` on the service
  tests' proof (``PROOF`` in ``tests/api/conftest.py``), every ``datasets/examples/*.json`` and every
  case of the adversarial corpus (``tests/adversarial/corpus.py``: ``corpus.jsonl`` plus the generated
  ones), ``POST /localize/batch`` on the same JSON bodies 32 a batch, ``POST /web/tree`` on the examples
  and ``POST /get_reward`` on every 16th grader pair (63), 8 a batch. Bodies through ``stable_view``.
* ``examples``: ``faithsieve localize FILE`` (JSON) of every ``datasets/examples/*.json``, through
  ``stable_view``.

Every string has this tree's absolute path written ``<ROOT>``, so snapshots of two checkouts compare.
Nondeterministic fields dropped (besides ``stable_view``'s ``time_ms``/``timings``/``usage``, and
``waited_ms``, which ``compare`` drops wherever it stands):
``proofs_per_second``, ``pipeline_proofs_per_second`` and ``run.sessions[].wall_s`` of ``metrics.json``;
the ``/metrics`` values (only the metric names are kept); the ``X-Request-Id``-style headers (only the
status, the content type and ``X-FaithSieve-Cache`` are kept). Runtime per part goes to
``OUTDIR/_runtime.json``, which ``compare`` ignores (as every file whose name starts with ``_``).

Files are canonical: JSON with sorted keys; JSONL one sorted-key object a line. ``compare`` counts
items (a JSONL line, a JSON file, a kept file) and prints the first differences of each part; it exits
1 when anything differs. ``--ignore-method`` ignores the ``method`` field of evidence records (a dict
with ``claim`` and ``status``), and nothing else: a method name written into a ``reason`` text still
counts. Files under ``bytes/`` are compared byte for byte (line by line), never with ``--ignore-method``.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import http.client
import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterable


def _tree_root() -> Path:
    """The checkout whose code this interpreter imports (its ``faithsieve/pipeline.py`` two levels up),
    so a copy of this script run with another checkout's venv measures that checkout."""
    import importlib.util

    spec = importlib.util.find_spec("faithsieve.pipeline")
    if spec is None or spec.origin is None:
        return Path(__file__).resolve().parents[1]
    return Path(spec.origin).resolve().parents[1]


ROOT = _tree_root()
DEFAULT_RAW = (ROOT / ".." / "shared" / "datasets" / "raw").resolve()
EXAMPLES = ROOT / "datasets" / "examples"
PARTS = ("score", "grader", "rewrite", "inject", "service", "examples")
MUTATIONS = ("result_changed", "result_changed_propagated", "sign_flip", "sign_flip_result", "swapped_operand",
             "wrong_substitution", "dropped_term")
"""The inject mutations as ``faithsieve inject --help`` lists them at 928a19c (checked against the help text)."""
METRICS_DROP = ("proofs_per_second", "pipeline_proofs_per_second")
GRADER_BUDGET_S = 30.0
"""Budget for the grader calls with the step check: far past any check's time, so no result sits on
the time boundary (with the default 1 s a loaded machine could flag a few as budget_exceeded)."""


# ---------------------------------------------------------------------------------------------
# Small helpers


def log(msg: str) -> None:
    print(f"[snapshot {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def deroot(obj: Any) -> Any:
    """``obj`` with this tree's absolute path written ``<ROOT>`` in every string (two checkouts of the
    project, before and after, give the same snapshot)."""
    if isinstance(obj, str):
        return obj.replace(str(ROOT), "<ROOT>")
    if isinstance(obj, dict):
        return {deroot(k): deroot(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [deroot(v) for v in obj]
    return obj


def canon(obj: Any) -> str:
    return json.dumps(deroot(obj), sort_keys=True, ensure_ascii=False)


def write_json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(deroot(obj), sort_keys=True, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def write_jsonl(path: Path, rows: Iterable[Any]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(canon(row) + "\n")
            n += 1
    return n


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def stable_view(obj: Any) -> Any:
    from faithsieve.scoring import stable_view as sv  # public entry point

    return sv(obj)


def cli(*args: str, timeout: float = 3600, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """``python -m faithsieve ARGS`` with this interpreter (so the venv running this script)."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    return subprocess.run([sys.executable, "-m", "faithsieve", *args], cwd=ROOT, input=stdin,
                          capture_output=True, timeout=timeout, env=env)


def load_module(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader, path
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def to_plain(obj: Any) -> Any:
    """A result object as JSON-able data (dataclasses field by field; tuples as lists)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if hasattr(obj, "model_dump"):
        return to_plain(obj.model_dump())
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    return obj


# ---------------------------------------------------------------------------------------------
# Part: score


def score_sources(raw: Path) -> list[tuple[str, Path]]:
    srcs = [(p.name, p) for p in sorted(raw.iterdir()) if p.is_dir()]
    srcs.append(("proofloc-mini", ROOT / "datasets" / "proofloc-mini"))
    srcs.append(("examples", EXAMPLES))
    return srcs


def part_score(out: Path, args: argparse.Namespace) -> dict[str, Any]:
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="fs-snap-score-") as tmp:
        for name, path in score_sources(Path(args.raw).resolve()):
            run_dir = Path(tmp) / name
            t0 = time.monotonic()
            log(f"score: {name} ({path}) ...")
            r = cli("score", str(path), "--out", str(run_dir), "--workers", str(args.workers), "--no-report",
                    "--no-progress", "--skip-invalid")
            stderr = r.stderr.decode("utf-8", "replace").replace(str(run_dir), "<OUT>")
            preds_path = run_dir / "predictions.jsonl"
            n = 0
            if preds_path.exists():
                rows = [stable_view(json.loads(line)) for line in preds_path.read_text(encoding="utf-8").splitlines()
                        if line.strip()]
                n = write_jsonl(out / f"{name}.jsonl", rows)
                ev_dir = run_dir / "evidence"
                ev_files = sorted(ev_dir.iterdir()) if ev_dir.is_dir() else []
                write_jsonl(out / f"{name}.evidence.jsonl",
                            ({"file": p.name, "content": stable_view(json.loads(p.read_text(encoding="utf-8")))}
                             for p in ev_files))
                metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
                for k in METRICS_DROP:
                    metrics.pop(k, None)
                for s in metrics.get("run", {}).get("sessions", []):
                    s.pop("wall_s", None)
                write_json(out / f"{name}.metrics.json", stable_view(metrics))
            write_json(out / f"{name}.run.json", {"source": name, "returncode": r.returncode, "stderr": stderr,
                                                   "predictions": n})
            counts[name] = n
            log(f"score: {name}: {n} predictions, rc {r.returncode}, {time.monotonic() - t0:.1f} s")
    return {"predictions": counts, "total": sum(counts.values())}


# ---------------------------------------------------------------------------------------------
# Part: grader


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _steps_text(x: Any) -> str:
    return x if isinstance(x, str) else "\n".join(_steps_text(s) for s in x)


def grader_pairs(raw: Path, n: int = 1000) -> list[tuple[str, str, str]]:
    """(kind, gold, completion): built as ``bench/grader_vs_math_verify.py``'s ``load_pairs`` builds them."""
    gsm = _jsonl(raw / "gsm8k" / "test.jsonl")
    by_q = {r["question"].strip(): r["answer"].split("####")[-1].strip() for r in gsm}
    pb = json.loads((raw / "processbench" / "gsm8k.json").read_text())
    gsm_pairs = [("gsm8k", by_q[x["problem"].strip()], "\n\n".join(x["steps"])) for x in pb
                 if x["problem"].strip() in by_q]
    gsm_pairs += [("gsm8k", r["answer"].split("####")[-1].strip(), re.sub(r"<<[^>]*>>", "", r["answer"])) for r in gsm]
    mm = raw / "mr-math"
    math_pairs = [("math", r["ground_truth_answer"], r["model_output"]) for r in _jsonl(mm / "mr-math_invalid_errors.json")]
    math_pairs += [("math", r["ground_truth_answer"], _steps_text(r["model_output_step_format"]))
                   for r in _jsonl(mm / "mr-math_redundant_errors.json")]
    math_pairs += [("math", r["ground_truth_answer"], _steps_text(r["hypothesis_steps"]))
                   for r in _jsonl(mm / "perturbation.json")]
    half = n // 2
    return gsm_pairs[:half] + math_pairs[: n - half]


def _bench_pairs_agree(raw: Path, pairs: list[tuple[str, str, str]]) -> str:
    bench = ROOT / "bench" / "grader_vs_math_verify.py"
    try:
        mod = load_module(bench, "_fs_snapshot_grader_bench")
        theirs = [tuple(p) for p in mod.load_pairs(raw, len(pairs))]
    except Exception as exc:  # noqa: BLE001 - recorded, not fatal
        return f"not checked ({type(exc).__name__})"
    return "same" if theirs == pairs else "DIFFERENT"


def _parity_completion(pred: str) -> str:
    """As ``tests/grader/test_mathverify_parity.py`` grades a prediction."""
    if "\\boxed" in pred or re.search(r"(?i)answer", pred) or len(pred) > 100:
        return pred
    return f"So the final answer is \\boxed{{{pred}}}."


def part_grader(out: Path, args: argparse.Namespace) -> dict[str, Any]:
    from faithsieve import grader as g  # public entry point

    raw = Path(args.raw)
    pairs = grader_pairs(raw)
    agree = _bench_pairs_agree(raw, pairs)
    log(f"grader: {len(pairs)} pairs (against the bench's load_pairs: {agree})")
    full_cfg = g.GraderConfig(cache_size=0, time_budget_s=GRADER_BUDGET_S)
    g.warmup(full_cfg)

    def one(kind: str, gold: str, comp: str, **extra: Any) -> dict[str, Any]:
        return {
            "kind": kind, "gold": gold, "completion_sha256": hashlib.sha256(comp.encode("utf-8", "surrogatepass")).hexdigest(),
            **extra,
            "compute_score_answer": stable_view(g.compute_score("bench", comp, gold, None, process=False, cache_size=0)),
            "compute_score_full": stable_view(g.compute_score("bench", comp, gold, None, cache_size=0,
                                                              time_budget_s=GRADER_BUDGET_S)),
            "grade": stable_view(to_plain(g.grade(comp, gold, "", full_cfg))),
        }

    rows = []
    t0 = time.monotonic()
    for i, (kind, gold, comp) in enumerate(pairs):
        rows.append({"index": i, **one(kind, gold, comp)})
        if (i + 1) % 200 == 0:
            log(f"grader: pairs {i + 1}/{len(pairs)} ({time.monotonic() - t0:.1f} s)")
    n_pairs = write_jsonl(out / "pairs.jsonl", rows)

    cases_mod = load_module(ROOT / "tests" / "grader" / "mathverify_cases.py", "_fs_snapshot_mathverify_cases")
    cases = list(cases_mod.CASES)
    prow = []
    for i, (test, gold, pred, expected) in enumerate(cases):
        prow.append({"index": i, **one("parity", gold, _parity_completion(pred), test=test, prediction=pred,
                                       expected=expected)})
    n_parity = write_jsonl(out / "parity.jsonl", prow)
    log(f"grader: {n_parity} parity cases")

    rrows = []
    spread = pairs[::16]  # both halves, flawed and correct answers alike
    for start in range(0, len(spread), 8):
        chunk = spread[start:start + 8]
        prompts = [f"Question {start + j}.\n" for j in range(len(chunk))]
        queries = [p + comp for p, (_, _, comp) in zip(prompts, chunk, strict=True)]
        res = g.reward_func(queries, prompts, [gold for _, gold, _ in chunk], cache_size=0,
                            time_budget_s=GRADER_BUDGET_S)
        rrows.append({"start": start, "result": stable_view(to_plain(res))})
    n_reward = write_jsonl(out / "reward_func.jsonl", rrows)
    write_json(out / "pairs_source.json", {"pairs": len(pairs), "bench_load_pairs": agree})
    return {"pairs": n_pairs, "parity_cases": n_parity, "reward_func_batches": n_reward}


# ---------------------------------------------------------------------------------------------
# Parts that keep command outputs byte for byte: rewrite, inject


def _text(data: bytes, tmp_path: Path) -> str:
    """Command output as text, the temporary output path replaced by ``<OUT>``."""
    return data.decode("utf-8", "replace").replace(str(tmp_path), "<OUT>")


def _keep_bytes(src_dir: Path, dest: Path) -> list[dict[str, Any]]:
    kept = []
    dest.mkdir(parents=True, exist_ok=True)
    for p in sorted(src_dir.iterdir()):
        if not p.is_file() or p.name.startswith("."):
            continue
        shutil.copyfile(p, dest / p.name)
        kept.append({"file": p.name, "sha256": sha256_file(p), "bytes": p.stat().st_size,
                     "lines": p.read_bytes().count(b"\n")})
    return kept


def part_rewrite(out: Path, args: argparse.Namespace) -> dict[str, Any]:
    src = Path(args.raw) / "gsm8k" / "test.jsonl"
    with tempfile.TemporaryDirectory(prefix="fs-snap-rewrite-") as tmp:
        target = Path(tmp) / "rw" / "rewritten.jsonl"
        log(f"rewrite: {src} (offline, seed 0, 1 variant) ...")
        r = cli("rewrite", str(src), "--out", str(target), "--seed", "0", "--variants", "1", "--no-progress")
        kept = _keep_bytes(target.parent, out / "bytes")
        log("rewrite: --check ...")
        c = cli("rewrite", "--check", str(target))

        def fix(b: bytes) -> str:
            return _text(b, target.parent)

        write_json(out / "run.json", {
            "command": f"faithsieve rewrite {src.name} --seed 0 --variants 1",
            "returncode": r.returncode, "stdout": fix(r.stdout), "stderr": fix(r.stderr), "files": kept,
            "check": {"returncode": c.returncode, "stdout": fix(c.stdout), "stderr": fix(c.stderr)}})
    rows = next((f["lines"] for f in kept if f["file"] == "rewritten.jsonl"), 0)
    log(f"rewrite: {rows} rows, rc {r.returncode}, --check rc {c.returncode}")
    return {"rows": rows, "files": len(kept)}


def inject_sets(raw: Path) -> list[tuple[str, Path, list[str]]]:
    sets = []
    for split in ("test", "train"):
        src = raw / "gsm8k" / f"{split}.jsonl"
        sets.append((f"{split}.default", src, ["--seed", "0"]))
        sets.append((f"{split}.all", src, ["--seed", "0", "--per-item", str(len(MUTATIONS)), "--include-correct"]))
    for m in MUTATIONS:
        sets.append((f"test.{m}", raw / "gsm8k" / "test.jsonl", ["--seed", "0", "--mutations", m]))
    return sets


def part_inject(out: Path, args: argparse.Namespace) -> dict[str, Any]:
    helptext = cli("inject", "--help").stdout.decode()
    missing = [m for m in MUTATIONS if m not in re.sub(r"\s+", "", helptext)]
    if missing:
        log(f"inject: WARNING: mutations not in the help text: {missing}")
    runs = []
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="fs-snap-inject-") as tmp:
        for name, src, extra in inject_sets(Path(args.raw)):
            t0 = time.monotonic()
            target = Path(tmp) / name / f"{name}.jsonl"
            r = cli("inject", str(src), "--out", str(target), *extra)
            kept = _keep_bytes(target.parent, out / "bytes") if target.parent.exists() else []
            runs.append({"set": name, "args": [src.name, *extra], "returncode": r.returncode,
                         "stdout": _text(r.stdout, target), "stderr": _text(r.stderr, target), "files": kept})
            counts[name] = kept[0]["lines"] if kept else 0
            log(f"inject: {name}: {counts[name]} items, rc {r.returncode}, {time.monotonic() - t0:.1f} s")
    write_json(out / "runs.json", {"mutations_missing_from_help": missing, "runs": runs})
    return {"items": counts, "total": sum(counts.values())}


# ---------------------------------------------------------------------------------------------
# Part: service


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Service:
    """``faithsieve serve`` in a subprocess on a free port."""

    def __init__(self, workers: int) -> None:
        self.port = _free_port()
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (held for the server's lifetime; read if it dies)
        env = dict(os.environ, PYTHONHASHSEED="0")
        self.proc = subprocess.Popen([sys.executable, "-m", "faithsieve", "serve", "--host", "127.0.0.1", "--port",
                                      str(self.port), "--workers", str(workers)], cwd=ROOT, env=env,
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                self.log.seek(0)
                raise RuntimeError(f"faithsieve serve exited: {self.log.read().decode()[-2000:]}")
            try:
                if self.request("GET", "/readyz")[0] == 200:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("faithsieve serve did not become ready in 120 s")
            time.sleep(0.25)

    def request(self, method: str, path: str, body: bytes | None = None,
                timeout: float = 120) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            headers = {"content-type": "application/json"} if body is not None else {}
            conn.request(method, path, body=body, headers=headers)
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def _response_record(status: int, headers: dict[str, str], data: bytes) -> dict[str, Any]:
    rec: dict[str, Any] = {"status": status, "content_type": headers.get("content-type"),
                           "cache": headers.get("x-faithsieve-cache")}
    try:
        rec["json"] = stable_view(json.loads(data))
    except ValueError:
        rec["sha256"] = hashlib.sha256(data).hexdigest()
        rec["bytes"] = len(data)
    return rec


def _conftest_proof() -> Any:
    """``PROOF`` of ``tests/api/conftest.py``, read as a literal (the conftest imports the app)."""
    import ast

    tree = ast.parse((ROOT / "tests" / "api" / "conftest.py").read_text(encoding="utf-8"))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "PROOF" for t in targets) and node.value is not None:
            return ast.literal_eval(node.value)
    raise RuntimeError("no PROOF in tests/api/conftest.py")


def part_service(out: Path, args: argparse.Namespace) -> dict[str, Any]:
    corpus = load_module(ROOT / "tests" / "adversarial" / "corpus.py", "_fs_snapshot_adversarial_corpus")
    cases = corpus.load_cases()
    examples = sorted(EXAMPLES.glob("*.json"))
    bodies: list[tuple[str, bytes]] = [("conftest:PROOF", json.dumps(_conftest_proof()).encode())]
    bodies += [(f"example:{p.name}", p.read_bytes()) for p in examples]
    bodies += [(f"adversarial:{c.id}", c.body) for c in cases]
    log(f"service: starting faithsieve serve (--workers {args.workers}); {len(bodies)} /localize bodies")
    svc = Service(args.workers)
    counts: dict[str, int] = {}
    try:
        gets = []
        for path in ("/healthz", "/readyz", "/version", "/limits", "/openapi.json", "/docs", "/redoc", "/",
                     "/web/config", "/web/examples"):
            gets.append({"route": f"GET {path}", **_response_record(*svc.request("GET", path))})
        status, headers, data = svc.request("GET", "/metrics")
        names = sorted({line.split()[2] for line in data.decode("utf-8", "replace").splitlines()
                        if line.startswith("# TYPE ") and len(line.split()) > 2})
        gets.append({"route": "GET /metrics", "status": status, "content_type": headers.get("content-type"),
                     "metric_names": names})
        counts["get"] = write_jsonl(out / "get.jsonl", gets)

        rows = []
        t0 = time.monotonic()
        for i, (name, body) in enumerate(bodies):
            rows.append({"name": name, "route": "POST /localize", **_response_record(*svc.request("POST", "/localize", body))})
            if (i + 1) % 50 == 0:
                log(f"service: /localize {i + 1}/{len(bodies)} ({time.monotonic() - t0:.1f} s)")
        counts["localize"] = write_jsonl(out / "localize.jsonl", rows)

        docs = []
        for name, body in bodies:
            try:
                docs.append((name, json.loads(body)))
            except ValueError:
                continue
        brows = []
        for start in range(0, len(docs), 32):
            chunk = docs[start:start + 32]
            payload = json.dumps({"items": [d for _, d in chunk]}).encode()
            brows.append({"names": [n for n, _ in chunk], "route": "POST /localize/batch",
                          **_response_record(*svc.request("POST", "/localize/batch", payload))})
        counts["batch"] = write_jsonl(out / "batch.jsonl", brows)
        log(f"service: {len(brows)} batches")

        trows = []
        for p in examples:
            trows.append({"name": f"example:{p.name}", "route": "POST /web/tree",
                          **_response_record(*svc.request("POST", "/web/tree", p.read_bytes()))})
        counts["web_tree"] = write_jsonl(out / "web_tree.jsonl", trows)

        pairs = grader_pairs(Path(args.raw))[::16]
        rrows = []
        for start in range(0, len(pairs), 8):
            chunk = pairs[start:start + 8]
            prompts = [f"Question {start + j}.\n" for j in range(len(chunk))]
            payload = json.dumps({"query": [p + c for p, (_, _, c) in zip(prompts, chunk, strict=True)], "prompts": prompts,
                                  "labels": [gold for _, gold, _ in chunk]}).encode()
            rrows.append({"start": start, "route": "POST /get_reward",
                          **_response_record(*svc.request("POST", "/get_reward", payload))})
        counts["get_reward"] = write_jsonl(out / "get_reward.jsonl", rrows)
    finally:
        svc.close()
    return counts


# ---------------------------------------------------------------------------------------------
# Part: examples


def part_examples(out: Path, args: argparse.Namespace) -> dict[str, Any]:
    rows = []
    for p in sorted(EXAMPLES.glob("*.json")):
        r = cli("localize", str(p.relative_to(ROOT)))
        rec: dict[str, Any] = {"file": p.name, "returncode": r.returncode}
        try:
            rec["json"] = stable_view(json.loads(r.stdout))
        except ValueError:
            rec["stdout"] = r.stdout.decode("utf-8", "replace")
        if r.returncode:
            rec["stderr"] = r.stderr.decode("utf-8", "replace")
        rows.append(rec)
    log(f"examples: {len(rows)} files")
    return {"examples": write_jsonl(out / "localize.jsonl", rows)}


PART_FUNCS: dict[str, Callable[[Path, argparse.Namespace], dict[str, Any]]] = {
    "score": part_score, "grader": part_grader, "rewrite": part_rewrite, "inject": part_inject,
    "service": part_service, "examples": part_examples,
}


def take(args: argparse.Namespace) -> int:
    outdir = Path(args.outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    runtime_path = outdir / "_runtime.json"
    runtime = json.loads(runtime_path.read_text()) if runtime_path.exists() else {}
    for part in args.only or PARTS:
        pdir = outdir / part
        if pdir.exists():
            shutil.rmtree(pdir)
        pdir.mkdir(parents=True)
        log(f"== {part} ==")
        t0 = time.monotonic()
        try:
            summary = PART_FUNCS[part](pdir, args)
        except Exception as exc:
            if not args.keep_going:
                raise
            summary = {"FAILED": f"{type(exc).__name__}: {exc}"}
            log(f"== {part} FAILED: {summary['FAILED']}")
        secs = round(time.monotonic() - t0, 1)
        write_json(pdir / "manifest.json", {"part": part, "summary": summary,
                                            "files": sorted(str(p.relative_to(pdir)) for p in pdir.rglob("*")
                                                            if p.is_file() and p.name != "manifest.json")})
        runtime[part] = {"seconds": secs, "summary": summary, "python": sys.executable,
                         "tree": str(ROOT), "taken": time.strftime("%Y-%m-%dT%H:%M:%S")}
        write_json(runtime_path, runtime)
        log(f"== {part}: {secs} s: {json.dumps(summary)}")
    return 0


# ---------------------------------------------------------------------------------------------
# compare


TIMING_KEYS = frozenset({"waited_ms"})
"""Timing fields ``stable_view`` keeps (the wait for a grader worker, in ``grade``, ``compute_score`` and
``/get_reward``'s ``extra_logs``): dropped by ``compare`` wherever they stand, so snapshots taken before
this rule compare too."""


def _strip_timing(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip_timing(v) for k, v in obj.items() if k not in TIMING_KEYS}
    if isinstance(obj, list):
        return [_strip_timing(v) for v in obj]
    return obj


def _strip_method(obj: Any) -> Any:
    if isinstance(obj, dict):
        is_evidence = "claim" in obj and "status" in obj
        return {k: _strip_method(v) for k, v in obj.items() if not (is_evidence and k == "method")}
    if isinstance(obj, list):
        return [_strip_method(v) for v in obj]
    return obj


def _leaf_diffs(a: Any, b: Any, path: str = "", limit: int = 3) -> list[str]:
    out: list[str] = []

    def short(v: Any) -> str:
        s = json.dumps(v, ensure_ascii=False, sort_keys=True)
        return s if len(s) <= 160 else s[:157] + "..."

    def walk(x: Any, y: Any, p: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(x, dict) and isinstance(y, dict):
            for k in sorted(set(x) | set(y)):
                if k not in x:
                    out.append(f"{p}.{k}: (missing) != {short(y[k])}")
                elif k not in y:
                    out.append(f"{p}.{k}: {short(x[k])} != (missing)")
                elif x[k] != y[k]:
                    walk(x[k], y[k], f"{p}.{k}")
                if len(out) >= limit:
                    return
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for i, (u, v) in enumerate(zip(x, y, strict=True)):
                if u != v:
                    walk(u, v, f"{p}[{i}]")
                if len(out) >= limit:
                    return
        elif x != y:
            out.append(f"{p or '.'}: {short(x)} != {short(y)}")

    walk(a, b, path)
    return out


def _items(path: Path) -> list[tuple[str, Any]]:
    """(raw text, parsed or None) per item: a JSONL line, or the whole file."""
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    chunks = text.split("\n")[:-1] if path.suffix == ".jsonl" and text.endswith("\n") else \
        text.split("\n") if path.suffix == ".jsonl" else [text]
    out = []
    for c in chunks:
        try:
            out.append((c, json.loads(c)))
        except ValueError:
            out.append((c, None))
    return out


def _label(parsed: Any) -> str:
    if isinstance(parsed, dict):
        for k in ("id", "name", "file", "index", "start", "route"):
            if k in parsed and not isinstance(parsed[k], (dict, list)):
                return f" ({k}={parsed[k]})"
    return ""


def _compare_file(fa: Path, fb: Path, rel: str, args: argparse.Namespace, shown: list[str]) -> tuple[int, int]:
    """(items compared, items differing) for one file of a part; differences appended to ``shown``."""
    if not fa.exists() or not fb.exists():
        n = len(_items(fa if fa.exists() else fb))
        shown.append(f"  {rel}: only in {'A' if fa.exists() else 'B'} ({n} items)")
        return n, n
    byte_kept = "bytes" in Path(rel).parts
    if byte_kept and fa.read_bytes() == fb.read_bytes():
        return len(_items(fa)), 0
    ia, ib = _items(fa), _items(fb)
    if len(ia) != len(ib):
        shown.append(f"  {rel}: {len(ia)} items in A, {len(ib)} in B")
    compared = differing = 0
    for i in range(max(len(ia), len(ib))):
        compared += 1
        if i >= len(ia) or i >= len(ib):
            differing += 1
            continue
        (ra, xa), (rb, xb) = ia[i], ib[i]
        if byte_kept or xa is None or xb is None:
            same = ra == rb
        else:
            xa, xb = _strip_timing(xa), _strip_timing(xb)
            if args.ignore_method:
                xa, xb = _strip_method(xa), _strip_method(xb)
            same = xa == xb
        if same:
            continue
        differing += 1
        if len(shown) < args.show:
            where = f"  {rel}#{i + 1}{_label(xa)}"
            if xa is not None and xb is not None:
                ds = _leaf_diffs(xa, xb)
                shown.append(where + ": " + ("; ".join(ds) if ds else "differs in bytes only"))
            else:
                shown.append(where + f": {ra[:160]!r} != {rb[:160]!r}")
    return compared, differing


def compare(args: argparse.Namespace) -> int:
    a_root, b_root = Path(args.a), Path(args.b)
    parts = args.only or sorted({p.name for r in (a_root, b_root) if r.is_dir() for p in r.iterdir()
                                 if p.is_dir() and not p.name.startswith("_")})
    any_diff = False
    for part in parts:
        pa, pb = a_root / part, b_root / part
        if not pa.is_dir() or not pb.is_dir():
            print(f"{part}: missing in {'A' if not pa.is_dir() else 'B'}")
            any_diff = True
            continue
        files = sorted({str(p.relative_to(r)) for r in (pa, pb) for p in r.rglob("*")
                        if p.is_file() and not p.name.startswith("_")})
        compared = differing = 0
        shown: list[str] = []
        for rel in files:
            c, d = _compare_file(pa / rel, pb / rel, rel, args, shown)
            compared += c
            differing += d
        any_diff |= differing > 0
        print(f"{part}: {compared} items compared, {differing} differing"
              + (" (method of evidence ignored)" if args.ignore_method else ""))
        for line in shown[: args.show]:
            print(line)
        if len(shown) > args.show:
            print(f"  ... ({len(shown) - args.show} more shown lines left out)")
    print("DIFFERENT" if any_diff else "SAME")
    return 1 if any_diff else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("take", help="write a snapshot into OUTDIR")
    t.add_argument("outdir")
    t.add_argument("--only", nargs="+", choices=PARTS, metavar="PART", help=f"parts to take ({', '.join(PARTS)})")
    t.add_argument("--raw", default=str(DEFAULT_RAW), help="the raw datasets folder (default ../shared/datasets/raw)")
    t.add_argument("--workers", type=int, default=2, help="worker processes for score and serve (default 2)")
    t.add_argument("--keep-going", action="store_true", help="go on with the next part when one fails")
    c = sub.add_parser("compare", help="compare snapshots A and B; exit 1 when they differ")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--only", nargs="+", choices=PARTS, metavar="PART")
    c.add_argument("--ignore-method", action="store_true", help="ignore the 'method' field of evidence records")
    c.add_argument("--show", type=int, default=5, help="differences shown per part (default 5)")
    args = ap.parse_args(argv)
    return take(args) if args.cmd == "take" else compare(args)


if __name__ == "__main__":
    sys.exit(main())
