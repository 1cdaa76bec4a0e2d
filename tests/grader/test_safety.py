"""The grader never raises and never overruns its budget: hostile values, hostile types, many threads,
and every failure flag by name (a renamed flag, a dropped cut or a switched-off cache fails here)."""

from __future__ import annotations

import math
import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from faithsieve import grader as g
from faithsieve.grader import GraderConfig
from faithsieve.grading import reward
from faithsieve.grading.check import CheckSummary
from faithsieve.grading.equivalence import AnswerTimeout, answers_equal

PROBLEM = "Janet's ducks lay 16 eggs per day. She eats 3 and bakes with 4. She sells the rest for $2 each."
GOOD = "Janet sells 16 - 3 - 4 = 9 duck eggs a day.\nShe makes 9 * 2 = $18 every day.\n#### 18"
LONG_PROOF = "\n".join(f"Step {i}: So $\\sqrt{{{i + 1}}} \\cdot \\sqrt{{{i + 2}}} + {i} = {i}$." for i in range(1, 150))
NOCACHE = GraderConfig(cache_size=0)
OUTCOME_ONLY = GraderConfig(cache_size=0, process=False)


@pytest.fixture(scope="module", autouse=True)
def pool() -> Iterator[None]:
    assert g.warmup(NOCACHE)
    yield
    g.shutdown()


@pytest.fixture(autouse=True)
def whole_pool() -> Iterator[None]:
    """Tests here kill workers; the next test starts with every worker up again."""
    yield
    p = g.default_grader().pool.processes
    deadline = time.monotonic() + 60
    while p is not None and p.ready and p.idle < p.workers and time.monotonic() < deadline:
        time.sleep(0.05)


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no")

    __repr__ = __str__


def _nested(depth: int) -> object:
    x: object = "#### 18"
    for _ in range(depth):
        x = [x]
    return x


# ---------------------------------------------------------------------------
# values that used to hang or raise
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("cfg", [OUTCOME_ONLY, NOCACHE], ids=["outcome_only", "process"])
@pytest.mark.parametrize("answer", [
    "\\exp(\\exp(\\exp(64)))", "10^{10^{10}}", "\\sqrt{\\exp(\\exp(100))} - \\exp(\\exp(99))", "e^{e^{e^{e^{9}}}}",
    "\\sin(10^{300})", "2^{2048} \\cdot \\pi",
])
def test_huge_closed_forms_return_within_budget(answer: str, cfg: GraderConfig) -> None:
    t = time.perf_counter()
    r = g.grade(f"So \\boxed{{{answer}}}", "5", "", cfg)
    assert time.perf_counter() - t < cfg.time_budget_s + 0.1
    assert r.outcome is False and r.score == 0.0


def test_huge_values_compare_structurally_not_numerically() -> None:
    assert answers_equal("\\exp(2)", "\\exp(2)")  # untimed: the first comparison may import the parsers
    t = time.perf_counter()
    assert answers_equal("\\exp(\\exp(\\exp(64)))", "\\exp(\\exp(\\exp(64)))")
    assert not answers_equal("\\exp(\\exp(\\exp(64)))", "\\exp(\\exp(\\exp(65)))")
    assert not answers_equal("10^{10^{10}} + 1", "10^{10^{10}}")
    # compared structurally this takes milliseconds; evaluated, 10^{10^{10}} alone has ten billion digits
    # (minutes and gigabytes): a bound of a few seconds is generous on a loaded machine and still fails that
    assert time.perf_counter() - t < 5.0


def test_a_passed_deadline_stops_the_comparison() -> None:
    with pytest.raises(AnswerTimeout):
        answers_equal("\\sqrt{12}", "2\\sqrt{3}", deadline=time.monotonic() - 1)
    assert answers_equal("\\sqrt{12}", "2\\sqrt{3}", deadline=time.monotonic() + 5)


def test_answer_budget_exceeded_is_flagged_not_raised() -> None:
    r = g.grade("\\boxed{\\sqrt{12}}", "2\\sqrt{3}", "", GraderConfig(cache_size=0, time_budget_s=1e-9))
    assert r.flags == ("answer_budget_exceeded",)
    # an answer check that ran out of time pays as a wrong answer with a refuted step
    assert r.outcome is False and r.score == -0.5 and not r.process_checked


def test_work_stops_before_the_budget_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker is given up on min(0.1 s, 10% of the budget) before the budget ends: that margin is
    for returning on a busy machine (GIL waits, killing the worker)."""
    seen: list[float] = []
    pool = g.default_grader().pool
    real = pool.check

    def spy(problem, text, key, cfg, budget):  # type: ignore[no-untyped-def]
        seen.append(budget.deadline - t0)
        return real(problem, text, key, cfg, budget)

    monkeypatch.setattr(pool, "check", spy)
    for budget, margin in ((1.0, 0.1), (0.3, 0.03), (5.0, 0.1)):
        t0 = time.monotonic()
        g.grade(GOOD + f"\n(margin {budget})", "18", PROBLEM, GraderConfig(cache_size=0, time_budget_s=budget))
        assert budget - margin - 0.05 < seen[-1] <= budget - margin + 0.01
    t = time.perf_counter()
    # LONG_PROOF's check takes about 0.1-0.35 s: a 0.05 s budget cuts it (+100 ms to return on a busy machine)
    r = g.grade(LONG_PROOF + "\n#### 5", "5", "", GraderConfig(cache_size=0, time_budget_s=0.05))
    assert r.flags == ("budget_exceeded",) and time.perf_counter() - t < 0.05 + 0.1


def test_lone_surrogates() -> None:
    r = g.grade("We get \ud800 then 9 * 2 = 18.\n#### 18", "18\udfff", "Compute \udc00.", NOCACHE)
    assert r.score == 1.0 and r.process_checked and "bad_input" not in r.flags
    assert g.compute_score("d", "\ud83d #### 18", "18")["score"] == 1.0


def test_integer_reference_past_the_str_limit() -> None:
    r = g.grade("#### 5", 10**5000, "", NOCACHE)
    assert "bad_input" in r.flags and r.score == 0.0 and r.reference is None
    assert g.grade("#### 5", 5, "", OUTCOME_ONLY).score == 1.0


def test_deeply_nested_completion_and_reference() -> None:
    for sol, ref in ((_nested(3000), "18"), ("#### 18", _nested(3000))):
        r = g.grade(sol, ref, "", NOCACHE)
        assert r.flags == ("bad_input",) and r.score == 0.0
    assert g.grade(_nested(10), "18", "", OUTCOME_ONLY).score == 1.0  # ordinary nesting still reads


@pytest.mark.parametrize("where", ["solution", "reference", "problem", "message"])
def test_object_whose_str_raises(where: str) -> None:
    args = {"solution": "#### 18", "reference": "18", "problem": ""}
    args[where if where != "message" else "solution"] = (
        Unprintable() if where != "message" else [{"role": "assistant", "content": Unprintable()}])
    r = g.grade(args["solution"], args["reference"], args["problem"], NOCACHE)
    assert "bad_input" in r.flags and math.isfinite(r.score)


def test_hostile_types_through_every_entry_point() -> None:
    bad = [Unprintable(), _nested(3000), "\ud800 #### 18", 10**5000]
    out = g.reward_func(bad, [""] * 4, ["18"] * 4)
    assert len(out["rewards"]) == 4 and all(math.isfinite(x) for x in out["rewards"])
    fn = g.make_trl_reward()
    assert len(fn(prompts=[""] * 4, completions=bad, answer=["18", _nested(3000), Unprintable(), 10**5000])) == 4
    for b in bad:
        assert math.isfinite(g.compute_score("d", b, b, {"question": b})["score"])


def test_internal_failure_is_flagged(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a: object, **k: object) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(reward, "extract_answer", boom)
    r = g.grade("#### 18", "18", "", NOCACHE)
    assert r.flags == ("grader_error",) and r.score == -0.5 and r.outcome is False


def _grade_from_threads(cfg: GraderConfig) -> tuple[list[float], list[BaseException]]:
    """Eight threads grading the hostile inputs six times each over 2 workers: each call's own time (what it
    did not spend waiting for a free worker, ``waited_ms``), and what any raised."""
    hostile = ["So \\boxed{\\exp(\\exp(\\exp(64)))}", LONG_PROOF + "\n#### 5", GOOD, "\\boxed{" * 3000,
               _nested(3000), Unprintable(), "\ud800" * 100, "So " + "(" * 3000 + "1" + ")" * 3000 + " #### 1"]
    worst: list[float] = []
    errors: list[BaseException] = []

    def run(k: int) -> None:
        for i in range(6):
            t = time.perf_counter()
            waited = 0.0
            try:
                waited = g.grade(hostile[(k + i) % len(hostile)], "18", PROBLEM, cfg).waited_ms / 1000
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)
            worst.append(time.perf_counter() - t - waited)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return worst, errors


def test_many_threads_grade_hostile_input_without_errors() -> None:
    worst, errors = _grade_from_threads(GraderConfig(cache_size=0, time_budget_s=0.5))
    assert not errors and len(worst) == 48


@pytest.mark.bench  # a wall-clock bound on 8 threads: it fails on a loaded machine (run with -m bench)
def test_many_threads_hold_the_budget() -> None:
    cfg = GraderConfig(cache_size=0, time_budget_s=0.5)
    worst, errors = _grade_from_threads(cfg)
    assert not errors
    assert max(worst) < cfg.time_budget_s + 0.5, max(worst)


# ---------------------------------------------------------------------------
# every flag by name
# ---------------------------------------------------------------------------

def test_flag_too_many_steps() -> None:
    text = "\n".join(f"Step {i}: {i} + {i} = {2 * i}." for i in range(1, 40)) + "\n#### 78"
    r = g.grade(text, "78", "", GraderConfig(cache_size=0, max_steps=10))
    assert r.flags == ("too_many_steps",) and r.score == 0.5 and not r.process_checked  # pays as refuted
    assert g.grade(text, "78", "", GraderConfig(cache_size=0, max_steps=100)).process_checked


def test_flag_process_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import faithsieve.pipeline

    def broken(*a: object, **k: object) -> None:
        raise RuntimeError("pipeline bug")

    monkeypatch.setattr(faithsieve.pipeline, "localize", broken)
    r = g.grade(GOOD, "18", PROBLEM, GraderConfig(cache_size=0, isolation="inline"))
    assert r.flags == ("process_error",) and r.score == 0.5 and not r.process_checked  # pays as refuted


def test_flag_worker_unavailable_pays_as_refuted() -> None:
    """No worker frees within ``acquire_timeout_s``: the call is unchecked and pays as a refuted step (an
    unchecked completion never outscores a checked one); ``status`` says so."""
    cfg = GraderConfig(cache_size=0, acquire_timeout_s=0.05)
    p = g.default_grader().pool.get(cfg)
    held = [p.submit(time.sleep, 1.5) for _ in range(p.workers)]  # every worker busy
    while p.idle:
        time.sleep(0.01)
    t = time.perf_counter()
    r = g.grade(GOOD, "18", PROBLEM, cfg)
    assert time.perf_counter() - t < 0.5
    assert r.flags == ("worker_unavailable",) and r.score == 0.5 and not r.process_checked
    assert r.status == "worker_unavailable" and r.log_values()["decided"] == 0.0
    for f in held:
        f.result(30)
    assert g.grade(GOOD, "18", PROBLEM, cfg).process_checked


def test_waiting_for_a_busy_worker_is_not_charged() -> None:
    """Every worker busy for 1.5 s with other calls: a 0.5 s call waits for one (``acquire_timeout_s``),
    outside its budget, and is then checked; the wait is reported (``waited_ms``)."""
    cfg = GraderConfig(cache_size=0, time_budget_s=0.5)
    p = g.default_grader().pool.get(cfg)
    held = [p.submit(time.sleep, 1.5) for _ in range(p.workers)]
    while p.idle:
        time.sleep(0.01)
    bad = "Janet sells 16 - 3 - 4 = 8 duck eggs a day.\nShe makes 8 * 2 = $16 every day.\n#### 16"
    r = g.grade(bad, "16", PROBLEM, cfg)
    assert r.process_checked and r.first_error_step == 1 and r.score == 0.5 and r.status == "ok"
    assert r.waited_ms > 1000
    for f in held:
        f.result(30)


def test_jobs_end_earlier_on_a_machine_that_wakes_threads_late() -> None:
    """A job wait that ended at its limit and woke up late makes later job limits that much shorter (a
    decaying maximum), never by more than ``MAX_SLACK`` of the budget."""
    from faithsieve.grading.config import Budget, work_deadline
    from faithsieve.grading.pool import MAX_SLACK

    grader = g.Grader()
    cfg = GraderConfig(cache_size=0, workers=1)
    try:
        assert grader.warmup(cfg)
        grader.pool._woke(time.monotonic() - 0.2)
        assert 0.19 < grader.pool._late < 0.25
        grader.pool._woke(time.monotonic())
        assert 0.17 < grader.pool._late < 0.23  # decays
        grader.pool._late = 10.0
        t = time.perf_counter()
        out = grader.pool._in_worker(cfg, Budget(work_deadline(cfg)), CheckSummary, time.sleep, 5.0)
        took = time.perf_counter() - t
        assert out == CheckSummary("timeout")
        budget_end = cfg.time_budget_s - 0.1
        assert budget_end - MAX_SLACK * cfg.time_budget_s - 0.05 < took < budget_end - 0.2
    finally:
        grader.close()


def test_flag_worker_crashed() -> None:
    cfg = GraderConfig(cache_size=0, time_budget_s=30)
    p = g.default_grader().pool.get(cfg)
    # the long proof's check takes ~0.1-0.3 s, so a kill can land after it finished: a few tries, each
    # killing the workers as they are while the check runs (read then, not before the pool started)
    assert g.grade(GOOD, "18", PROBLEM, cfg).process_checked  # the pool is up: its idle count means something
    flags: list[tuple[str, ...]] = []
    pids: set[int] = set()
    for _ in range(5):
        result: list[g.GradeResult] = []
        th = threading.Thread(target=lambda result=result: result.append(g.grade(LONG_PROOF + "\n#### 5", "5", "", cfg)))
        th.start()
        for _ in range(500):
            if p.workers and p.idle < p.workers:
                break
            time.sleep(0.002)
        for pid in set(p.worker_pids):  # the busy worker among them: killed from outside during the check
            pids.add(pid)
            os.kill(pid, signal.SIGKILL)
        th.join(30)
        assert result
        flags.append(result[0].flags)
        if result[0].flags:
            assert result[0].score == 0.5  # a crashed check (a bomb may crash it) pays as a refuted one
            break
        # the kill landed after the check had finished: a checked result (its steps are false)
        assert result[0].process_checked and result[0].score == 0.5
    assert flags[-1] == ("worker_crashed",), flags
    # a try whose kill came late killed idle workers, and the next try's kill may have caught them while
    # restarting: let every slot be back in the idle queue (the dead idle one among them) first
    until = time.monotonic() + 30
    while p.idle < p.workers and time.monotonic() < until:
        time.sleep(0.01)
    # the busy worker is replaced in the background; one killed while idle is found (and replaced) when
    # next handed a job, which then goes to another worker: every call is still checked
    for _ in range(3):
        rs = g.grade_many([(GOOD, "18", PROBLEM)] * 4, NOCACHE)
        assert all(r.process_checked for r in rs), [r.flags for r in rs]
    deadline = time.monotonic() + 60
    while (pids & set(p.worker_pids) or p.idle < p.workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pids & set(p.worker_pids)


def test_problem_is_cut_to_max_problem_chars(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = reward._run_check

    def spy(problem: str, text: str, key):  # type: ignore[no-untyped-def]
        seen.append(problem)
        return real(problem, text, key)

    monkeypatch.setattr(reward, "_run_check", spy)
    long_problem = "Janet has 16 eggs. " * 500
    g.grade(GOOD, "18", long_problem, GraderConfig(cache_size=0, isolation="inline", max_problem_chars=100))
    g.grade(GOOD, "18", long_problem, GraderConfig(cache_size=0, isolation="inline", max_problem_chars=0))
    assert [len(p) for p in seen] == [100, 0]
    assert seen[0] == long_problem[:100]


# ---------------------------------------------------------------------------
# the caches
# ---------------------------------------------------------------------------

def _count_calls(monkeypatch: pytest.MonkeyPatch, name: str, owner: object = reward) -> list[int]:
    calls = [0]
    real = getattr(owner, name)

    def counted(*a, **k):  # type: ignore[no-untyped-def]
        calls[0] += 1
        return real(*a, **k)

    monkeypatch.setattr(owner, name, counted)
    return calls


@pytest.mark.parametrize(("size", "expected"), [(16, 1), (0, 3)])
def test_process_cache_skips_the_repeated_check(monkeypatch: pytest.MonkeyPatch, size: int, expected: int) -> None:
    calls = _count_calls(monkeypatch, "check", g.default_grader().pool)
    cfg = GraderConfig(cache_size=size)
    text = GOOD + f"\n(cache probe {size})"
    first = [g.grade(text, "18", PROBLEM, cfg) for _ in range(3)]
    assert calls[0] == expected
    assert all(r.process_checked and r.score == first[0].score for r in first)


@pytest.mark.parametrize(("size", "expected"), [(16, 1), (0, 3)])
def test_answer_cache_skips_the_repeated_comparison(monkeypatch: pytest.MonkeyPatch, size: int, expected: int) -> None:
    calls = _count_calls(monkeypatch, "answers_equal")
    cfg = GraderConfig(cache_size=size, process=False)
    out = [g.grade(f"\\boxed{{2\\sqrt{{{3 + size}}}}}", f"\\sqrt{{{4 * (3 + size)}}}", "", cfg) for _ in range(3)]
    assert calls[0] == expected and all(r.score == 1.0 for r in out)


# ---------------------------------------------------------------------------
# answer_backend="math-verify" (the optional extra), under our budget
# ---------------------------------------------------------------------------

def test_math_verify_backend_missing_is_flagged(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "math_verify", None)  # as if the extra were not installed
    cfg = GraderConfig(cache_size=0, process=False, isolation="inline", answer_backend="math-verify")
    r = g.grade("So \\boxed{18}", "18", "", cfg)
    assert r.flags == ("answer_backend_unavailable", "process_disabled") and r.score == 0.0


def test_math_verify_backend_in_a_worker() -> None:
    pytest.importorskip("math_verify")
    cfg = GraderConfig(cache_size=0, process=False, answer_backend="math-verify")
    assert g.grade("So \\boxed{\\frac{1}{2}}", "0.5", "", cfg).score == 1.0
    assert g.grade("So \\boxed{3}", "4", "", cfg).score == 0.0
    results: list[tuple[float, float]] = []

    def one() -> None:
        t = time.perf_counter()
        score = g.grade("So \\boxed{\\exp(\\exp(\\exp(64)))}", "5", "", cfg).score
        results.append((score, time.perf_counter() - t))

    threads = [threading.Thread(target=one) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert [s for s, _ in results] == [0.0] * 8
    assert max(dt for _, dt in results) < cfg.time_budget_s + 0.1


def test_costly_comparisons_run_in_a_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """With process isolation the caller's thread decides only what exact arithmetic decides at once;
    a comparison that needs sympy or sample points goes to a (killable) worker."""
    calls = _count_calls(monkeypatch, "answer", g.default_grader().pool)
    cfg = GraderConfig(cache_size=0, process=False)
    assert g.grade("\\boxed{18}", "18.0", "", cfg).score == 1.0
    assert g.grade("\\boxed{(1, 2), (3, 4)}", "(3,4),(1,2)", "", cfg).score == 1.0
    assert calls[0] == 0
    assert g.grade("\\boxed{2\\sqrt{3}}", "\\sqrt{12}", "", cfg).score == 1.0
    assert g.grade("\\boxed{2x+2}", "2(x+1)", "", cfg).score == 1.0
    assert calls[0] == 2
    inline = GraderConfig(cache_size=0, process=False, isolation="inline")
    assert g.grade("\\boxed{2\\sqrt{3}}", "\\sqrt{12}", "", inline).score == 1.0
    assert calls[0] == 2


# ---------------------------------------------------------------------------
# the worker pool (the shared faithsieve.runtime.workers.KillablePool)
# ---------------------------------------------------------------------------

def test_every_worker_start_is_outside_the_budget() -> None:
    """A fresh pool: the calls that find it not started wait for it outside their budgets (reported as
    ``waited_ms``) and are then checked: a reward is never given before its check ran."""
    g.shutdown()
    cfg = GraderConfig(cache_size=0, workers=3, time_budget_s=0.3)
    bad = "Janet sells 16 - 3 - 4 = 8 duck eggs a day.\nShe makes 8 * 2 = $16 every day.\n#### 16"
    out = g.grade_many([(bad + f"\n(fresh {i})", "16", PROBLEM) for i in range(6)], cfg)
    assert [r.flags for r in out] == [()] * 6 and all(r.process_checked and r.status == "ok" for r in out)
    assert all(r.score == 0.5 and r.first_error_step == 1 for r in out)  # the false step is paid from the first call
    assert max(r.waited_ms for r in out) > 100  # the start, credited
    assert all(r.time_ms - r.waited_ms < 400 for r in out)
    p = g.default_grader().pool.processes
    assert p is not None and p.idle == 3 and len(set(p.worker_pids)) == 3
    g.shutdown()
    assert g.warmup(NOCACHE)


def test_a_forked_trainer_gets_its_own_workers(tmp_path) -> None:
    """A script without a __main__ guard, forking after its first grade: its workers never run the
    script again, and the forked process grades with workers of its own."""
    import subprocess
    import sys

    script = tmp_path / "train.py"
    script.write_text(f"""import os
from faithsieve import grader as g
print("top-level", flush=True)
GOOD, PROBLEM = {GOOD!r}, {PROBLEM!r}
g.warmup()
first = g.grade(GOOD, "18", PROBLEM, g.GraderConfig(cache_size=0))
parent = set(g.default_grader().pool.processes.worker_pids)
child = os.fork()
if child == 0:
    g.warmup()
    r = g.grade(GOOD + " ", "18", PROBLEM, g.GraderConfig(cache_size=0))
    ok = r.process_checked and r.flags == () and not (set(g.default_grader().pool.processes.worker_pids) & parent)
    g.shutdown()
    os._exit(0 if ok else 1)
_, status = os.waitpid(child, 0)
again = g.grade(GOOD + "  ", "18", PROBLEM, g.GraderConfig(cache_size=0))
print(first.process_checked, os.waitstatus_to_exitcode(status), again.process_checked and set(g.default_grader().pool.processes.worker_pids) == parent)
""")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["top-level", "True", "0", "True"]
