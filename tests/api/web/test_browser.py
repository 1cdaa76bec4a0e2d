"""The workbench in a real browser: Debian's chromium (``/usr/bin/chromium``) driven by Playwright.

Marked ``browser``. Without chromium or the ``playwright`` package these tests skip and say which
is missing; with ``FAITHSIEVE_REQUIRE_BROWSER=1`` (set by ``.ci/run``) they fail instead. Every
request the page makes is recorded by route interception; any that is not for the test server on
127.0.0.1 is aborted and fails the test.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import uvicorn
from faithsieve.api.app import create_app

from tests.api.web.support import ITEMS, SLIP, web_settings, workbench_port

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("FAITHSIEVE_CHROMIUM", "/usr/bin/chromium")


def _missing() -> str | None:
    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is not installed (pip install 'faithsieve[browser]')"
    if not Path(CHROMIUM).exists():
        return f"no chromium at {CHROMIUM} (apt-get install -y chromium)"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    why = _missing()
    if why:
        if os.environ.get("FAITHSIEVE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser tests are required here (FAITHSIEVE_REQUIRE_BROWSER=1) but {why}")
        pytest.skip(f"browser tests skipped: {why}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def app(run_dir: Path) -> Any:
    return create_app(web_settings())


@pytest.fixture(scope="module")
def server(app: Any, run_dir: Path) -> Iterator[tuple[str, str]]:
    """The service on 127.0.0.1 with the toy run opened; yields (base URL, run id)."""
    run = app.state.workbench_runs.add(run_dir)
    with _serving(app) as base:
        yield base, run.id


@contextmanager
def _serving(app: Any) -> Iterator[str]:
    """``app`` under uvicorn on 127.0.0.1 (a free port of this project's) in a thread; yields its URL."""
    port = workbench_port()
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not srv.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(30)


def recording_context(browser: Any, base: str) -> tuple[Any, list[str]]:
    """A 1280×800 browser context that records every request URL and lets only ``base`` through."""
    seen: list[str] = []
    context = browser.new_context(viewport={"width": 1280, "height": 800})

    def record(route: Any) -> None:
        url = route.request.url
        seen.append(url)
        if url.startswith(base + "/"):
            route.continue_()
        else:
            route.abort()

    context.route("**/*", record)
    return context, seen


def test_the_recorder_sees_a_request_to_another_host(browser: Any, server: tuple[str, str]) -> None:
    """The guard of the other tests works: a page that fetches from elsewhere is caught."""
    context, seen = recording_context(browser, server[0])
    pg = context.new_page()
    pg.goto(server[0] + "/web/config")
    with pg.expect_event("requestfailed") as failed:
        pg.set_content('<img src="http://192.0.2.1/x.png">')
    context.close()
    assert failed.value.url == "http://192.0.2.1/x.png"
    assert "http://192.0.2.1/x.png" in seen and any(u.startswith(server[0]) for u in seen)


@pytest.fixture()
def page(browser: Any, server: tuple[str, str]) -> Iterator[Any]:
    """A fresh 1280×800 page; after the test, every request it made must have gone to the server."""
    context, seen = recording_context(browser, server[0])
    errors: list[str] = []
    pg = context.new_page()
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield pg
    context.close()
    assert seen, "no request was recorded"
    hosts = {urlsplit(u).hostname for u in seen}
    assert hosts == {"127.0.0.1"}, [u for u in seen if urlsplit(u).hostname != "127.0.0.1"]
    assert not errors, errors


def test_a_slip_is_shown_refuted_with_its_first_error_and_counterexample(page: Any, server: tuple[str, str]) -> None:
    from playwright.sync_api import expect

    page.goto(server[0] + "/")
    page.fill("#problem", SLIP["problem"])
    page.fill("#proof", SLIP["proof"])
    page.click("#run")
    expect(page.locator("#headline")).to_contain_text("Error at step 2")
    expect(page.locator("#coverage")).to_contain_text("1 of 3 steps decided")
    refuted = page.locator("#proof-view .span-refuted")
    expect(refuted).to_have_count(1)
    expect(refuted).to_have_text("x = 5")
    expect(page.locator('li[data-step="2"] #first-error')).to_be_visible()
    expect(page.locator("#first-error")).to_have_count(1)
    # the tree is drawn; selecting another EdgeUnit there selects its span, and back
    expect(page.locator("#tree svg g.edge")).to_have_count(3)
    page.click('#tree g.edge[data-edge="e0"]')
    expect(page.locator('#proof-view .span[data-edge="e0"]').first).to_have_class(re.compile(r"\bselected\b"))
    expect(page.locator("#detail .counterexample")).to_have_count(0)
    refuted.click()
    expect(page.locator('#tree g.edge[data-edge="e1"]')).to_have_class(re.compile(r"\bselected\b"))
    cx = page.locator("#detail .counterexample")
    expect(cx).to_be_visible()
    expect(cx).to_contain_text("lhs")
    expect(cx.locator("tr", has_text="lhs")).to_contain_text("13")
    expect(cx.locator("tr", has_text="rhs")).to_contain_text("11")
    expect(page.locator("#detail .claim")).to_contain_text("x = 5 solves 2 * x + 3 = 11")
    expect(page.locator("#detail .state-box")).to_contain_text("2 * x + 3 = 11")
    # keyboard: from the tree, ArrowDown moves to the next EdgeUnit
    page.focus("#tree")
    page.keyboard.press("ArrowDown")
    expect(page.locator('#tree g.edge[data-edge="e2"]')).to_have_class(re.compile(r"\bselected\b"))


def test_a_refutation_read_from_words_can_be_opened(page: Any, server: tuple[str, str]) -> None:
    """A claim read from a step's words across its EdgeUnits ('the remainder when 17 is divided by 5 is 3') is
    held by no EdgeUnit: its span and a button in the step's head open its check."""
    from playwright.sync_api import expect

    page.goto(server[0] + "/")
    page.fill("#problem", "Find the remainder of 17 divided by 5.")
    page.fill("#proof", "Step 1: 17 = 5 * 3 + 2, so the remainder when 17 is divided by 5 is 3.\nStep 2: So the answer is 3.")
    page.click("#run")
    expect(page.locator("#headline")).to_contain_text("Error at step 1")
    words = page.locator('#proof-view span.span-refuted[data-loose]')
    expect(words).to_have_count(1)
    expect(words).to_contain_text("remainder when 17 is divided by 5 is 3")
    expect(page.locator("#detail .claim")).to_contain_text("17 mod 5 = 3")  # opened first: the only refutation
    page.click('#tree g.edge[data-edge="e0"]')
    expect(page.locator("#detail .claim")).not_to_contain_text("17 mod 5")
    page.click('li[data-step="1"] button.loose-checks')
    expect(page.locator("#detail")).to_contain_text("read from the words")
    expect(page.locator("#detail .claim")).to_contain_text("17 mod 5 = 3")
    words.click()
    expect(words).to_have_class(re.compile(r"\bselected\b"))
    expect(page.locator("#detail .ob-refuted")).to_have_count(1)


def test_request_errors_show_the_api_message(page: Any, server: tuple[str, str]) -> None:
    from playwright.sync_api import expect

    page.goto(server[0] + "/")
    page.fill("#problem", "Anything.")
    page.fill("#proof", "   ")
    page.click("#run")
    alert = page.locator("#alert")
    expect(alert).to_be_visible()
    expect(alert).to_contain_text("422 invalid_input")
    expect(alert).to_contain_text("'proof' is empty")


def test_modes_without_an_endpoint_are_greyed_with_the_reason(page: Any, server: tuple[str, str]) -> None:
    from playwright.sync_api import expect

    page.goto(server[0] + "/")
    expect(page.locator("#mode-offline")).to_be_checked()
    for mode in ("llm", "judge"):
        expect(page.locator(f"#mode-{mode}")).to_be_disabled()
        expect(page.locator(f"#mode-{mode}-why")).to_contain_text("FAITHSIEVE_LLM_BASE_URL")


def test_a_run_filtered_to_early_flags_opens_an_item_with_its_label(page: Any, server: tuple[str, str]) -> None:
    from playwright.sync_api import expect

    base, run_id = server
    page.goto(f"{base}/#run={run_id}")
    rows = page.locator("#run-table tbody tr")
    expect(rows).to_have_count(len(ITEMS))
    expect(page.locator('button[data-outcome="early"] .count')).to_have_text("2")
    page.click('button[data-outcome="early"]')
    expect(page.locator('button[data-outcome="early"]')).to_have_attribute("aria-pressed", "true")
    expect(rows).to_have_count(2)
    expect(page.locator("#run-table tbody tr:not(.row-early)")).to_have_count(0)
    expect(page.locator("#run-caption")).to_have_text("Items 1–2 of 2")
    expect(page.locator("#run-plots img")).to_have_count(2)
    # keyboard: the first row opens with Enter, in the proof view, label next to the prediction
    page.locator('#run-table tbody tr[data-id="early-1"]').focus()
    page.keyboard.press("Enter")
    context = page.locator("#context")
    expect(context).to_contain_text("label: step 2")
    expect(context).to_contain_text("run's prediction: step 1")
    expect(context).to_contain_text("re-localized")
    expect(page.locator("#headline")).to_contain_text("Error at step 1")
    expect(page.locator('li[data-step="1"] #first-error')).to_be_visible()


@pytest.mark.parametrize("width", [1280, 420])
def test_layout_fits_wide_and_narrow_windows(page: Any, server: tuple[str, str], width: int) -> None:
    from playwright.sync_api import expect

    page.set_viewport_size({"width": width, "height": 800})
    page.goto(server[0] + "/")
    page.fill("#problem", SLIP["problem"])
    page.fill("#proof", SLIP["proof"])
    page.click("#run")
    expect(page.locator("#tree svg")).to_be_visible()
    form, result = page.locator("#check-form").bounding_box(), page.locator("#result").bounding_box()
    for box in (form, result):
        assert box["x"] >= 0 and box["x"] + box["width"] <= width + 1, (width, box)
    if width >= 1200:
        assert result["x"] > form["x"] + form["width"]  # side by side
    else:
        assert result["y"] >= form["y"] + form["height"]  # stacked


def test_a_large_run_is_shown_a_page_at_a_time(page: Any, server: tuple[str, str], app: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    big = tmp_path / "big"
    big.mkdir()
    lines = [json.dumps({"id": f"it-{i:03d}", "label": 1, "predicted": "correct"}) for i in range(250)]
    (big / "predictions.jsonl").write_text("\n".join(lines) + "\n")
    run = app.state.workbench_runs.add(big)
    page.goto(f"{server[0]}/#run={run.id}")
    rows = page.locator("#run-table tbody tr")
    expect(page.locator("#run-caption")).to_have_text("Items 1–100 of 250")
    expect(rows).to_have_count(100)
    expect(page.locator("#run-prev")).to_be_disabled()
    page.click("#run-next")
    expect(page.locator("#run-caption")).to_have_text("Items 101–200 of 250")
    page.click("#run-next")
    expect(page.locator("#run-caption")).to_have_text("Items 201–250 of 250")
    expect(rows).to_have_count(50)
    expect(page.locator("#run-next")).to_be_disabled()
    expect(page.locator("#run-page")).to_have_text("page 3 of 3")
    page.fill("#run-q", "it-07")
    expect(page.locator("#run-caption")).to_have_text("Items 1–10 of 10")


def test_a_huge_tree_is_drawn_up_to_its_cap(page: Any, server: tuple[str, str]) -> None:
    """2,640 EdgeUnits: the tree draws the first 2,500 (MAX_DRAWN in proof.js) and says so."""
    from playwright.sync_api import expect

    step = "12345 * 6789 = 83810205; " * 40
    page.goto(server[0] + "/")
    page.fill("#problem", "Check the products.")
    page.fill("#proof", "\n".join(f"Step {k}: {step}" for k in range(1, 67)))
    page.click("#run")
    expect(page.locator("#tree-cut")).to_have_text(
        "Drawn: the first 2,500 of 2,640 EdgeUnits (the proof view has them all).", timeout=60_000)
    expect(page.locator("#tree g.edge")).to_have_count(2500)
    expect(page.locator('#proof-view li[data-step="66"] .span')).to_have_count(40)


# -- issue 24: what a person sees -----------------------------------------------------------------


def test_rates_are_percents_even_at_100(page: Any, server: tuple[str, str]) -> None:
    """A rate of exactly 1 is "100.0 %", not the count "1" (the run card read any whole number as a count)."""
    from playwright.sync_api import expect

    base, run_id = server

    def perfect(route: Any) -> None:
        resp = route.fetch()
        doc = resp.json()
        doc["metrics"].update(binary_accuracy=1, exact_accuracy=0, f1=1.0, n=6)
        route.fulfill(response=resp, json=doc)

    page.route(f"{base}/web/runs/{run_id}", perfect)
    page.goto(f"{base}/#run={run_id}")
    expect(page.locator('#run-metrics [data-key="binary_accuracy"] .value')).to_have_text("100.0 %")
    expect(page.locator('#run-metrics [data-key="exact_accuracy"] .value')).to_have_text("0.0 %")
    expect(page.locator('#run-metrics [data-key="f1"] .value')).to_have_text("100.0 %")
    expect(page.locator('#run-metrics [data-key="n"] .value')).to_have_text("6")
    expect(page.locator("#run-list")).not_to_contain_text("/")  # names, no server paths


def test_a_failed_check_clears_the_previous_result(page: Any, server: tuple[str, str]) -> None:
    from playwright.sync_api import expect

    page.goto(server[0] + "/")
    page.fill("#problem", SLIP["problem"])
    page.fill("#proof", SLIP["proof"])
    page.click("#run")
    expect(page.locator("#headline")).to_contain_text("Error at step 2")
    page.fill("#proof", "   ")
    page.click("#run")
    expect(page.locator("#alert")).to_contain_text("422 invalid_input")
    expect(page.locator("#result")).to_be_hidden()
    expect(page.locator("#headline")).to_have_text("")
    expect(page.locator("#proof-view .span")).to_have_count(0)


@pytest.fixture(scope="module")
def keyed_server(run_dir: Path) -> Iterator[str]:
    """A second service, with an API key (``sekret``) and the toy run opened."""
    app = create_app(web_settings(api_key="sekret"))
    app.state.workbench_runs.add(run_dir)
    with _serving(app) as base:
        yield base


def test_a_401_opens_the_api_key_box(browser: Any, keyed_server: str) -> None:
    from playwright.sync_api import expect

    context, _seen = recording_context(browser, keyed_server)
    page = context.new_page()
    page.goto(keyed_server + "/")
    box = page.locator("#apikey-box")
    page.fill("#problem", SLIP["problem"])
    page.fill("#proof", SLIP["proof"])
    page.evaluate("document.getElementById('apikey-box').open = false")
    page.click("#run")
    expect(page.locator("#alert")).to_contain_text("401 unauthorized")
    expect(page.locator("#alert")).to_contain_text("API key box")
    expect(box).to_be_visible()
    expect(box).to_have_attribute("open", "")
    expect(page.locator("#apikey")).to_be_focused()
    page.fill("#apikey", "sekret")
    page.click("#run")
    expect(page.locator("#headline")).to_contain_text("Error at step 2")
    # the run browser works with the key too, plots included (fetched with it)
    page.click("#tab-runs")
    page.locator("#run-list button").first.click()
    expect(page.locator("#run-plots img")).to_have_count(2)
    expect(page.locator("#run-plots img").first).to_have_attribute("src", re.compile(r"^data:image/png;base64,"))
    context.close()
