"""The RL grader: entry-point signatures and shapes, reward formula, budget, hostile input, determinism."""

from __future__ import annotations

import inspect
import json
import math
import random
import time
from collections.abc import Iterator

import pytest

from faithsieve import grader as g
from faithsieve.grader import LOG_KEYS, GraderConfig, GradeResult

PROBLEM = "Janet's ducks lay 16 eggs per day. She eats 3 and bakes with 4. She sells the rest for $2 each."
GOOD = "Janet sells 16 - 3 - 4 = 9 duck eggs a day.\nShe makes 9 * 2 = $18 every day.\n#### 18"
BAD_STEP = "Janet sells 16 - 3 - 4 = 8 duck eggs a day.\nShe makes 8 * 2 = $16 every day.\n#### 16"
LUCKY = "Janet sells 16 - 3 - 4 = 8 duck eggs a day.\nShe makes 9 * 2 = $18 every day.\n#### 18"
LONG_PROOF = "\n".join(f"Step {i}: So $\\sqrt{{{i + 1}}} \\cdot \\sqrt{{{i + 2}}} + {i} = {i}$." for i in range(1, 150))

NOCACHE = GraderConfig(cache_size=0)


@pytest.fixture(scope="module", autouse=True)
def pool() -> Iterator[None]:
    assert g.warmup(NOCACHE)
    yield
    g.shutdown()


def _same(a: GradeResult, b: GradeResult) -> bool:
    da, db = a.to_dict(), b.to_dict()
    for d in (da, db):
        d.pop("time_ms"), d.pop("waited_ms")
    return da == db


# ---------------------------------------------------------------------------
# reward formula
# ---------------------------------------------------------------------------

def test_correct_solution() -> None:
    r = g.grade(GOOD, "18", PROBLEM, NOCACHE)
    assert (r.score, r.outcome, r.answer, r.answer_source) == (1.0, True, "18", "hash")
    assert r.process_checked and r.verdict == "correct" and r.first_error_step is None
    assert r.steps == 3 and len(r.step_spans) == 3 and r.flags == ()
    for (a, b), line in zip(r.step_spans, GOOD.split("\n"), strict=True):
        assert GOOD[a:b] == line


def test_wrong_step_wrong_answer() -> None:
    r = g.grade(BAD_STEP, "18", PROBLEM, NOCACHE)
    assert r.outcome is False and r.first_error_step == 1 and r.score == -0.5
    assert r.reason and "16 - 3 - 4 = 8" in r.reason


def test_right_answer_wrong_reasoning_is_penalized() -> None:
    r = g.grade(LUCKY, "18", PROBLEM, NOCACHE)
    assert r.outcome is True and r.first_error_step == 1
    assert r.score == pytest.approx(0.5)


def test_weights_are_configurable() -> None:
    cfg = GraderConfig(cache_size=0, correct_reward=2.0, incorrect_reward=-1.0, no_answer_reward=-2.0, error_penalty=0.25)
    assert g.grade(LUCKY, "18", PROBLEM, cfg).score == pytest.approx(1.75)
    assert g.grade(BAD_STEP, "18", PROBLEM, cfg).score == pytest.approx(-1.25)
    assert g.grade("no idea", "18", PROBLEM, cfg).score == pytest.approx(-2.0)
    assert g.grade(LUCKY, "18", PROBLEM, cfg, error_penalty=0.0).score == pytest.approx(2.0)


def test_outcome_only_when_process_off() -> None:
    r = g.grade(LUCKY, "18", PROBLEM, NOCACHE, process=False)
    assert r.score == 1.0 and not r.process_checked and "process_disabled" in r.flags


def test_step_rewards() -> None:
    cfg = GraderConfig(cache_size=0, step_rewards=True)
    r = g.grade(BAD_STEP, "18", PROBLEM, cfg)
    assert r.step_rewards == (-1.0, 0.0, 0.0)
    r = g.grade(GOOD, "18", PROBLEM, cfg)
    assert r.step_rewards == (1.0, 1.0, 1.0)
    text = "Step 1: 2 + 3 = 5.\nStep 2: 5 * 2 = 10.\nStep 3: 10 - 1 = 8.\nStep 4: so 8 + 1 = 9.\nThe answer is 9."
    r = g.grade(text, "9", "", cfg)
    assert r.first_error_step == 3 and r.step_rewards == (1.0, 1.0, -1.0, 0.0, 0.0)[: r.steps]
    assert g.grade(BAD_STEP, "18", PROBLEM, NOCACHE).step_rewards is None


def test_no_reference_grades_process_only() -> None:
    r = g.grade(BAD_STEP, None, PROBLEM, NOCACHE)
    assert r.outcome is None and "no_reference" in r.flags and r.score == -0.5


def test_several_references() -> None:
    assert g.grade("\\boxed{0.5}", ["1/3", "\\frac{1}{2}"], "", NOCACHE).outcome is True


# ---------------------------------------------------------------------------
# verl
# ---------------------------------------------------------------------------

def test_verl_signature_and_shape() -> None:
    params = list(inspect.signature(g.compute_score).parameters)
    assert params[:4] == ["data_source", "solution_str", "ground_truth", "extra_info"]
    out = g.compute_score(data_source="openai/gsm8k", solution_str=GOOD, ground_truth="18",
                          extra_info={"question": PROBLEM, "split": "test", "index": 0})
    assert set(out) == {"score", "status", *LOG_KEYS}
    assert all(isinstance(v, float) for k, v in out.items() if k != "status")
    assert out["score"] == 1.0 and out["acc"] == 1.0 and out["first_error_step"] == -1.0
    assert out["status"] == "ok" and out["decided"] == 1.0
    assert g.compute_score("x", BAD_STEP, "18")["first_error_step"] == 1.0  # extra_info optional


def test_verl_same_keys_for_every_sample_and_overrides() -> None:
    outs = [g.compute_score("d", s, "18", None) for s in (GOOD, BAD_STEP, "", "x" * 100_000, None)]
    assert len({tuple(sorted(o)) for o in outs}) == 1
    # reward_kwargs naming config fields override; unknown keywords are ignored
    out = g.compute_score("d", LUCKY, "18", None, error_penalty=0.1, some_verl_internal=object())
    assert out["score"] == pytest.approx(0.9)
    bound = g.make_compute_score(correct_reward=5.0)
    assert bound("d", GOOD, "18", None)["score"] == 5.0


# ---------------------------------------------------------------------------
# TRL
# ---------------------------------------------------------------------------

def test_trl_plain_and_conversational() -> None:
    fn = g.make_trl_reward(reference_column="solution", config=NOCACHE)
    assert fn.__name__ == "faithsieve"
    params = inspect.signature(fn).parameters
    assert list(params)[:2] == ["prompts", "completions"]
    assert any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    plain = fn(prompts=[PROBLEM] * 3, completions=[GOOD, BAD_STEP, LUCKY], solution=["18", "18", "18"],
               completion_ids=[[1], [2], [3]], trainer_state=None)
    assert plain == [1.0, -0.5, 0.5]
    conv_prompts = [[{"role": "system", "content": "Solve."}, {"role": "user", "content": PROBLEM}]] * 2
    conv = [[{"role": "assistant", "content": GOOD}], [{"role": "assistant", "content": BAD_STEP}]]
    assert fn(prompts=conv_prompts, completions=conv, solution=["18", "18"]) == [1.0, -0.5]
    parts = [[{"role": "assistant", "content": [{"type": "text", "text": GOOD}]}]]
    assert fn(prompts=conv_prompts[:1], completions=parts, solution=["18"]) == [1.0]


def test_trl_none_reference_missing_column_and_logging() -> None:
    fn = g.make_trl_reward(config=NOCACHE)
    metrics: dict[str, float] = {}
    extra: dict[str, list] = {}
    out = fn(prompts=["q", "q"], completions=[GOOD, GOOD], answer=["18", None],
             log_metric=lambda k, v: metrics.__setitem__(k, v), log_extra=lambda k, v: extra.__setitem__(k, v))
    assert out == [1.0, None]
    # acc is over the rows with a reference (one, right): the row without one does not count as 0
    assert metrics["faithsieve/acc"] == 1.0 and extra["faithsieve_answer"] == ["18", "18"]
    metrics.clear()
    fn(prompts=["q"], completions=[GOOD], answer=[None], log_metric=lambda k, v: metrics.__setitem__(k, v))
    assert "faithsieve/acc" not in metrics and metrics["faithsieve/process_checked"] == 1.0
    with pytest.raises(KeyError, match="answer"):
        fn(prompts=["q"], completions=[GOOD], solution=["18"])
    with pytest.raises(ValueError):
        fn(prompts=["q"], completions=[GOOD, GOOD], answer=["18", "18"])
    # a failing logger never breaks training
    assert fn(prompts=["q"], completions=[GOOD], answer=["18"], log_metric=lambda *a: 1 / 0) == [1.0]


def test_trl_none_for_a_reference_it_cannot_judge() -> None:
    fn = g.make_trl_reward(config=NOCACHE)
    extra: dict[str, list] = {}
    deep: object = "18"
    for _ in range(20):
        deep = [deep]  # nested past what a reference may be
    out = fn(prompts=["q"] * 4, completions=[GOOD] * 4, answer=["18", "", "   ", deep],
             log_extra=lambda k, v: extra.__setitem__(k, v))
    assert out == [1.0, None, None, None]
    assert extra["faithsieve_status"][0] == "ok"


def test_verl_async_and_off_the_main_thread() -> None:
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    sync = g.compute_score("d", BAD_STEP, "16", {"question": PROBLEM}, cache_size=0)
    async_out = asyncio.run(g.compute_score_async("d", BAD_STEP, "16", {"question": PROBLEM}, cache_size=0))
    with ThreadPoolExecutor(2) as pool:  # OpenRLHF and verl call the reward off the main thread
        threaded = pool.submit(g.compute_score, "d", BAD_STEP, "16", {"question": PROBLEM}, cache_size=0).result()
        rewards = pool.submit(g.reward_func, [BAD_STEP], [""], ["16"]).result()
    for out in (async_out, threaded):
        assert {k: v for k, v in out.items() if k not in ("time_ms", "waited_ms")} == \
            {k: v for k, v in sync.items() if k not in ("time_ms", "waited_ms")}
    assert sync["score"] == 0.5 and sync["status"] == "ok" and rewards["rewards"] == [0.5]


def test_trl_problem_column() -> None:
    fn = g.make_trl_reward(problem_column="question", config=NOCACHE)
    assert fn(prompts=["ignored"], completions=[BAD_STEP], answer=["16"], question=[PROBLEM]) == [0.5]


# ---------------------------------------------------------------------------
# OpenRLHF
# ---------------------------------------------------------------------------

def test_openrlhf_reward_func_shape() -> None:
    assert list(inspect.signature(g.reward_func).parameters)[:3] == ["queries", "prompts", "labels"]
    prompt = f"<|im_start|>user\n{PROBLEM}<|im_end|>\n<|im_start|>assistant\n"
    queries = [prompt + GOOD + "<|im_end|>", prompt + BAD_STEP + "<|im_end|><|endoftext|>", prompt + LUCKY]
    out = g.reward_func(queries, [prompt] * 3, ["18", "18", "18"])
    assert set(out) == {"rewards", "scores", "extra_logs"}
    assert out["rewards"] == [1.0, -0.5, 0.5]
    assert out["scores"] == [1.0, 0.0, 1.0]
    assert set(out["extra_logs"]) == set(LOG_KEYS)
    assert all(len(v) == 3 and all(isinstance(x, float) for x in v) for v in out["extra_logs"].values())
    assert out["extra_logs"]["first_error_step"] == [-1.0, 1.0, 1.0]
    json.dumps(out)  # plain lists and floats only


def test_openrlhf_http_body_function() -> None:
    params = list(inspect.signature(g.openrlhf_reward).parameters)
    assert params == ["query", "prompts", "labels", "config"]
    out = g.openrlhf_reward(query=["Q: " + GOOD], prompts=["Q: "], labels=["18"])
    assert out["rewards"] == [1.0]
    out = g.openrlhf_reward(query=[GOOD, BAD_STEP], prompts=None, labels=None)
    assert out["rewards"] == [0.0, -0.5] and out["extra_logs"]["has_reference"] == [0.0, 0.0]
    assert g.openrlhf_reward([], [], []) == {"rewards": [], "scores": [], "extra_logs": {k: [] for k in LOG_KEYS}}
    with pytest.raises(ValueError):
        g.openrlhf_reward(["a", "b"], ["a"], ["1", "2"])
    out = g.reward_func([GOOD], [""], ["18"], time_budget_s=0.5, error_penalty=0.2)
    assert out["rewards"] == [1.0]


def test_batches_keep_order_across_workers() -> None:
    sols = [GOOD, BAD_STEP, LUCKY, "\\boxed{7}"] * 6
    out = g.openrlhf_reward(sols, [""] * len(sols), ["18"] * len(sols), GraderConfig(cache_size=0, workers=2))
    assert out["rewards"] == [1.0, -0.5, 0.5, 0.0] * 6


# ---------------------------------------------------------------------------
# hostile completions: always a finite reward, always quickly
# ---------------------------------------------------------------------------

rng = random.Random(7)
HOSTILE = {
    "empty": "",
    "spaces": " \n\t " * 1000,
    "none": None,
    "int": 12345,
    "dict": {"content": "\\boxed{18}"},
    "100k_chars": "2+2=4. " * 15_000,
    "100k_garbage": "".join(rng.choice("ab$\\{}()^_=+-*/0123456789 \n") for _ in range(100_000)),
    "19k_garbage": "".join(rng.choice("ab$\\{}()^_=+-*/0123456789 \n") for _ in range(19_000)),
    "huge_number": "So 9" + "9" * 10_000 + " + 1 = 10. #### " + "9" * 5000,
    "towers": "Thus 2^2^2^2^2^2^2 = 5 and $2^{2^{2^{2^{2^{2}}}}} = 5$ and $10^{10^{10}} = 1$. #### 5",
    "factorials": "Hence $1000! \\cdot 999! = 5$ and $(10^{9})! = 3$. The answer is 18.",
    "nesting": "So " + "(" * 3000 + "1" + ")" * 3000 + " = 2 and $" + "\\frac{1}{" * 500 + "2" + "}" * 500 + " = 2$",
    "braces": "\\boxed{" * 4000 + "18",
    "many_steps": "\n".join(f"Step {i}: {i} + {i} = {2 * i + (i % 9 == 0)}." for i in range(1, 400)),
    "unicode": "∑∫√π≠≤≥×÷−∞ " * 500 + "\x00\x01\ud7ff" + " #### 18",
    "special_tokens": GOOD + "<|im_end|>" * 500 + " " * 50_000,
    "polynomials": "\n\n".join(["Thus $((a+b+c)^{24})^{24} = c^{24}$ and $(x+y+z+w)^{24} = 1$."] * 30),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_completions(name: str) -> None:
    cfg = GraderConfig(cache_size=0)
    t = time.perf_counter()
    r = g.grade(HOSTILE[name], "18", "Compute.", cfg)
    elapsed = time.perf_counter() - t
    assert math.isfinite(r.score)
    assert elapsed < cfg.time_budget_s + 0.5, f"{name}: {elapsed:.2f}s"
    if name in ("100k_chars", "100k_garbage"):
        assert "too_long" in r.flags and elapsed < 0.3
    if name in ("empty", "spaces", "none"):
        assert r.score == 0.0 and "no_answer" in r.flags
    if name == "dict":
        assert r.score == 1.0
    if name == "special_tokens":
        assert r.score == 1.0 and r.process_checked


def test_hostile_through_every_entry_point() -> None:
    sols = [HOSTILE[k] if isinstance(HOSTILE[k], str) else "" for k in HOSTILE]
    t = time.perf_counter()
    out = g.reward_func(sols, [""] * len(sols), ["18"] * len(sols))
    assert len(out["rewards"]) == len(sols) and all(math.isfinite(x) for x in out["rewards"])
    fn = g.make_trl_reward()
    assert len(fn(prompts=[""] * len(sols), completions=sols, answer=["18"] * len(sols))) == len(sols)
    for s in sols:
        assert math.isfinite(g.compute_score("d", s, "18", None)["score"])
    assert time.perf_counter() - t < 3 * len(sols) * 1.5


# ---------------------------------------------------------------------------
# the hard time budget
# ---------------------------------------------------------------------------

def test_budget_exceeded_pays_as_refuted_and_the_pool_recovers() -> None:
    tight = GraderConfig(cache_size=0, time_budget_s=0.02)
    text = LONG_PROOF + "\nThe answer is 7."
    pool = g.default_grader().pool.processes
    assert pool is not None
    before = set(pool.worker_pids)
    t = time.perf_counter()
    r = g.grade(text, "7", "", tight)
    elapsed = time.perf_counter() - t
    assert r.budget_exceeded and "budget_exceeded" in r.flags and not r.process_checked
    # the check that did not finish pays as a refuted one, never as a checked one
    assert r.score == 1.0 - tight.error_penalty and r.first_error_step is None
    assert elapsed < 0.5
    replaced = time.monotonic() + 30
    while len(set(pool.worker_pids) - before) != 1:  # the overrunning worker is replaced in the background
        assert time.monotonic() < replaced
        time.sleep(0.05)
    assert len(before & set(pool.worker_pids)) == len(before) - 1  # the spare was kept
    # the killed worker is replaced; the spare answers at once
    r2 = g.grade(BAD_STEP, "18", PROBLEM, NOCACHE)
    assert r2.process_checked and r2.first_error_step == 1
    # and with enough budget the same long proof is checked
    r3 = g.grade(text, "7", "", GraderConfig(cache_size=0, time_budget_s=30))
    assert r3.process_checked and not r3.budget_exceeded


def test_inline_isolation_matches_process() -> None:
    inline = GraderConfig(cache_size=0, isolation="inline")
    g.grade(GOOD, "18", PROBLEM, inline)  # the first inline call imports the pipeline (charged to its budget)
    for sol in (GOOD, BAD_STEP, LUCKY, HOSTILE["towers"], HOSTILE["many_steps"]):
        a, b = g.grade(sol, "18", PROBLEM, inline), g.grade(sol, "18", PROBLEM, NOCACHE)
        assert _same(a, b), sol[:40]


# ---------------------------------------------------------------------------
# determinism
# ---------------------------------------------------------------------------

SAMPLES = [GOOD, BAD_STEP, LUCKY, HOSTILE["towers"], HOSTILE["factorials"], HOSTILE["many_steps"],
           "We have $x^2 - 5x + 6 = 0$, so $x = 2$ or $x = 4$. The answer is \\boxed{2, 4}."]


def test_deterministic_across_calls_and_fresh_workers() -> None:
    first = [g.grade(s, "18", PROBLEM, NOCACHE) for s in SAMPLES]
    again = [g.grade(s, "18", PROBLEM, NOCACHE) for s in SAMPLES]
    g.shutdown()
    assert g.warmup(NOCACHE)
    fresh = [g.grade(s, "18", PROBLEM, NOCACHE) for s in reversed(SAMPLES)][::-1]
    for a, b, c in zip(first, again, fresh, strict=True):
        assert _same(a, b) and _same(a, c)


def test_config_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAITHSIEVE_GRADER_ERROR_PENALTY", "0.25")
    monkeypatch.setenv("FAITHSIEVE_GRADER_TIME_BUDGET_S", "0.5")
    cfg = GraderConfig()
    assert cfg.error_penalty == 0.25 and cfg.time_budget_s == 0.5
    with pytest.raises(ValueError):
        GraderConfig(time_budget_s=0)


# ---------------------------------------------------------------------------
# loaded the way the frameworks load a reward file
# ---------------------------------------------------------------------------

def _load_file(path: str, name: str):  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_shim_files_load_like_verl_and_openrlhf(tmp_path) -> None:  # type: ignore[no-untyped-def]
    shim = tmp_path / "faithsieve_reward.py"
    shim.write_text("from faithsieve.grader import compute_score, reward_func  # noqa: F401\n")
    mod = _load_file(str(shim), "custom_module")  # verl: custom_reward_function.path
    assert mod.compute_score("d", GOOD, "18", None)["score"] == 1.0
    mod = _load_file(str(shim), "reward_func")  # OpenRLHF: --remote_rm_url file.py
    assert mod.reward_func([GOOD], [""], ["18"])["rewards"] == [1.0]


def test_the_default_grader_is_an_owned_object_replaced_through_a_public_method() -> None:
    """The pool and the caches belong to a ``Grader``; ``grade`` uses the default one, which a caller
    replaces (closing the old one: its workers stop) without touching module state."""
    old = g.default_grader()
    assert g.default_grader() is old
    assert old.grade(GOOD, "18", PROBLEM, NOCACHE).score == g.grade(GOOD, "18", PROBLEM, NOCACHE).score
    mine = g.Grader()
    assert g.replace_default_grader(mine) is mine and g.default_grader() is mine
    assert old.pool.processes is None  # closed
    assert mine.warmup()
    r = g.grade(BAD_STEP, "18", PROBLEM, NOCACHE)
    assert r.process_checked and r.first_error_step == 1 and mine.pool.processes is not None
    fresh = g.replace_default_grader()
    assert fresh is not mine and mine.pool.processes is None
    assert g.warmup(NOCACHE)
