"""Fair admission: the heavy lane, its admission bound, a batch cut off by its deadline keeping its
worker, and honest readiness. ``sleep_job`` sleeps for the ``problem``'s seconds; a step with
``\\exp(`` makes the proof heavy by the cost estimate."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from faithsieve.api.admission import lane_of
from faithsieve.api.worker import sleep_job


def _job(seconds: float, heavy: bool) -> dict[str, Any]:
    return {"problem": str(seconds), "steps": ["\\(\\exp(1) = 3\\)" if heavy else "x = 1"],
            "options": {"use_cache": False}}


@pytest.mark.parametrize(("data", "lane"), [
    ({"problem": "p", "steps": ["\\(\\exp(\\exp(\\exp(64))) = 5\\)"]}, "heavy"),
    ({"problem": "p", "steps": ["\\sin(\\exp(\\exp(64)))"]}, "heavy"),
    ({"problem": "p", "steps": ["sin(x) = 1"]}, "heavy"),
    ({"problem": "p", "steps": ["7^{10000} = 5"]}, "heavy"),
    ({"problem": "p", "steps": ["2000! = 1"]}, "heavy"),
    ({"problem": "p", "steps": ["<" * 19999]}, "heavy"),
    ({"problem": "p", "proof": "a = 1. " * 700}, "heavy"),  # 4,200 characters > heavy_chars
    ({"problem": "p", "steps": ["<" * 20]}, "heavy"),
    ({"problem": "p", "steps": ["<" * 15]}, "light"),
    ({"problem": "Solve 5x - 7 = 18.", "steps": ["5x = 25", "x = 5"]}, "light"),
    ({"problem": "p", "steps": ["2^{10} = 1024", "12! = 479001600", "1" * 3000]}, "light"),
    ({"problem": "Compute sin(30)", "steps": ["It is 1/2."]}, "light"),  # the problem text is not estimated
])
def test_cost_estimate(data: dict[str, Any], lane: str) -> None:
    assert lane_of(data, 4000) == lane


@pytest.mark.parametrize("step", [
    "sqrt((sqrt(2)+sqrt(3)+sqrt(5))^60) = 5",     # a power of a sum of roots: sympy's expansion is costly
    "\\(\\sqrt{(\\sqrt{2}+\\sqrt{3})^{40}} = 7\\)",
    "$|x-3|^{12} = 4$",                          # a two-digit power of an absolute value
    "$(x + y + z)^{30} = 1$",                    # a two-digit power of a sum
    "2^{2^{20}} = 4",                            # a tower the probe bounds (2^20 bits)
    "\\(\\log_2 8 = 3\\)",
])
def test_costly_formulas_the_old_regex_missed_are_heavy(step: str) -> None:
    """The lane is the cost model's (``faithsieve.mathtext.cost.text_cost``, profile ``SERVICE``): roots,
    absolute values and two-digit exponents it bounds make a proof heavy; the old text regex missed them."""
    from faithsieve.mathtext.cost import SERVICE, text_cost

    assert text_cost(step, SERVICE) is not None
    assert lane_of({"problem": "p", "steps": ["x = 1", step]}, 4000) == "heavy"
    assert lane_of({"problem": "p", "proof": "We compute. " + step}, 4000) == "heavy"


@pytest.mark.parametrize("step", [
    "Then $f'(100) = 1$.",                                              # a defined function's derivative
    "$\\left.\\frac{d}{dx} e^{e^{e^{x}}}\\right|_{x=100} = 1$",
    "$\\int_1^{2} \\frac{1}{x}\\,dx = 1$",
    "$\\lim_{x \\to 0} x = 0$",
])
def test_calculus_is_priced_heavy(step: str) -> None:
    """A calculus value is built by sympy and only then judged (``probe_sympy``): the lane estimate, which
    reads the text alone, cannot bound it and sends it to the heavy lane."""
    assert lane_of({"problem": "Let $f(x) = \\exp(\\exp(\\exp(x)))$.", "steps": [step]}, 4000) == "heavy"


def test_cheap_powers_stay_light() -> None:
    for step in ("$x^2 + 2x + 1 = (x+1)^2$", "2^{10} = 1024", "$\\sqrt{2}^{4} = 4$", "$(1/2)^{3} = 1/8$"):
        assert lane_of({"problem": "p", "steps": [step]}, 4000) == "light", step


def test_heavy_proofs_leave_a_worker_for_light_ones(make_client) -> None:
    with make_client(sleep_job, workers=2, max_pending=8, request_time_limit_s=10) as c:
        done: dict[str, float] = {}

        def call(name: str, body: dict[str, Any]) -> None:
            r = c.post("/localize", json=body)
            assert r.status_code == 200, r.text
            done[name] = time.monotonic()

        heavy = [threading.Thread(target=call, args=(f"heavy{i}", _job(1.5, True))) for i in range(2)]
        for t in heavy:
            t.start()
        time.sleep(0.3)
        call("light", _job(0, False))
        for t in heavy:
            t.join()
        # two heavy proofs could have taken both workers; the lane holds them to one, so the light
        # proof is answered before either heavy one finishes, and the heavy ones run one after the other
        assert done["light"] < min(done["heavy0"], done["heavy1"])
        assert abs(done["heavy0"] - done["heavy1"]) > 1.0


def test_heavy_admission_is_bounded_separately(make_client) -> None:
    with make_client(sleep_job, workers=2, max_pending=8, heavy_max_pending=1) as c:
        first: list[int] = []
        t = threading.Thread(target=lambda: first.append(c.post("/localize", json=_job(1.0, True)).status_code))
        t.start()
        time.sleep(0.3)
        r = c.post("/localize", json=_job(0, True))
        assert r.status_code == 429 and r.json()["error"]["detail"]["lane"] == "heavy"
        assert int(r.headers["retry-after"]) >= 1
        assert c.post("/localize", json=_job(0, False)).status_code == 200  # light ones still admitted
        t.join()
        assert first == [200]
        assert 'faithsieve_rejections_total{reason="saturated_heavy"} 1' in c.get("/metrics").text
        # a batch with more heavy items than the bound is still admitted when the lane is empty
        r = c.post("/localize/batch", json={"items": [_job(0, True)] * 3})
        assert r.status_code == 200 and [x["status"] for x in r.json()["results"]] == [200] * 3


def test_the_workbench_tree_is_admitted_in_the_same_lanes(make_client) -> None:
    """``POST /web/tree`` goes through the admission of ``POST /localize``: with the heavy lane's one
    place held by a heavy /localize, a heavy tree is refused (429, lane heavy), a light one runs."""
    with make_client(sleep_job, workers=2, max_pending=8, heavy_max_pending=1) as c:
        first: list[int] = []
        t = threading.Thread(target=lambda: first.append(c.post("/localize", json=_job(1.0, True)).status_code))
        t.start()
        time.sleep(0.3)
        heavy_tree = {"problem": "p", "steps": ["\\(\\exp(1) = 3\\)"]}
        r = c.post("/web/tree", json=heavy_tree)
        assert r.status_code == 429 and r.json()["error"]["detail"]["lane"] == "heavy"
        r = c.post("/web/tree", json={"problem": "p", "steps": ["x = 1"]})
        assert r.status_code == 200 and r.json()["steps"][0]["text"] == "x = 1"
        t.join()
        assert first == [200]
        assert c.post("/web/tree", json=heavy_tree).status_code == 200  # the lane is free again


def test_batch_cut_off_by_its_deadline_keeps_its_worker(make_client) -> None:
    with make_client(sleep_job, workers=1, proof_time_limit_s=0.3, request_time_limit_s=5,
                     batch_time_limit_s=1.0) as c:
        pid = c.post("/localize", json=_job(0, False)).json()["pid"]
        r = c.post("/localize/batch", json={"items": [_job(1.6, False)]})
        assert [x["status"] for x in r.json()["results"]] == [504]
        # the job finishes in the background within its own limit; the same worker answers next
        after = c.post("/localize", json=_job(0, False))
        assert after.status_code == 200 and after.json()["pid"] == pid
        metrics = c.get("/metrics").text
        assert "faithsieve_worker_restarts_total{" not in metrics
        ready = c.get("/readyz").json()
        assert ready["workers"] == 1 and ready["restarting"] == 0


def test_readyz_counts_workers_being_replaced(make_client) -> None:
    with make_client(sleep_job, workers=1, proof_time_limit_s=0.3, request_time_limit_s=1.0) as c:
        assert c.post("/localize", json=_job(5, False)).status_code == 504  # the worker is killed
        r = c.get("/readyz")
        body = r.json()
        assert body["workers"] + body["restarting"] == 1
        assert r.status_code == (200 if body["workers"] else 503)
