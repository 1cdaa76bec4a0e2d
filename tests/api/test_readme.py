"""``docs/serve.md`` (the service's reference) read against the service: each row of the limits
table is a setting with that default, ``GET /limits`` shows the rows the page says it shows, every
metric family and label value the page names is exported, and every status/code pair of the error
table is one the service answers with. Editing the page or the code so that they disagree fails
here."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from faithsieve.api import errors
from faithsieve.api.models import LimitsInfo
from faithsieve.api.pool import WorkerPool
from faithsieve.api.reward import warm_reward_grader
from faithsieve.api.settings import ServiceSettings

from faithsieve.core.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "docs" / "serve.md").read_text(encoding="utf-8")
API_SOURCES = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "api").glob("*.py")))


def _section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _limit_rows() -> list[tuple[str, str]]:
    """(setting, default as written) for every row of the limits table."""
    rows: list[tuple[str, str]] = []
    for line in _section("Limits").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        names = re.findall(r"`([a-z_]+)`", cells[0])
        defaults = [cells[1]] if len(names) == 1 else [d.strip() for d in cells[1].split(", ")]
        assert len(names) == len(defaults), line
        rows += zip(names, defaults, strict=True)
    return rows


def _value(written: str) -> Any:
    text = written.strip("`")
    if text == "unset":
        return None
    if text in ("true", "false"):
        return text == "true"
    if text == "[]":
        return ()
    if m := re.fullmatch(r"(\d+) MiB", text):
        return int(m.group(1)) * 1_048_576
    if re.fullmatch(r"\d{1,3}(,\d{3})*|\d+", text):
        return int(text.replace(",", ""))
    return text


def test_every_limit_row_is_a_setting_with_its_default() -> None:
    rows = _limit_rows()
    assert len(rows) >= 30
    fields = ServiceSettings.model_fields
    for name, written in rows:
        assert name in fields, name
        if name == "heavy_workers":  # a rule, not a number: checked on the pool below
            assert written == "`workers - 1` (≥ 1)" and fields[name].default is None
            continue
        assert fields[name].default == _value(written), (name, written)
    # every setting the service adds to the pipeline's is documented there
    assert set(fields) - set(Settings.model_fields) <= {name for name, _ in rows}


@pytest.mark.parametrize(("workers", "heavy"), [(1, 1), (2, 1), (5, 4)])
def test_heavy_workers_defaults_to_workers_minus_one_at_least_one(workers: int, heavy: int) -> None:
    pool = WorkerPool(workers, 8, 0, None, job=None)  # type: ignore[arg-type]
    assert pool.heavy_workers == heavy
    assert WorkerPool(workers, 8, 0, None, job=None, heavy_workers=3).heavy_workers == 3  # type: ignore[arg-type]


def test_get_limits_shows_the_rows_the_readme_says() -> None:
    sentence = " ".join(_section("Limits").split("\n\n", 1)[0].split())
    m = re.search(r"`GET /limits` shows (.*?)\.", sentence)
    assert m, sentence
    rows = [name for name, _ in _limit_rows()]
    last = re.search(r"every row down to `([a-z_]+)`", m.group(1))
    excluded = re.search(r"except (.*)$", m.group(1))
    assert last and excluded, m.group(1)
    shown = set(rows[: rows.index(last.group(1)) + 1]) - set(re.findall(r"`([a-z_]+)`", excluded.group(1)))
    assert shown == set(LimitsInfo.model_fields)


def test_limits_route_answers_the_settings_in_force(client) -> None:
    body = client.get("/limits").json()
    assert set(body) == set(LimitsInfo.model_fields)
    assert body["max_steps"] == 200 and body["batch_max_items"] == 8 and body["workers"] == 1


def test_every_metric_the_readme_names_is_exported(client, proof) -> None:
    client.post("/localize", json=proof)
    client.post("/localize", json=proof)  # a cache hit
    client.get("/no-such-route")
    text = client.get("/metrics").text
    section = _section("Metrics")
    names = set(re.findall(r"`(faithsieve_[a-z_]+)", section))
    assert len(names) >= 15
    exported = set(re.findall(r"^# TYPE (\S+) ", text, re.M))
    assert names == exported, names ^ exported
    assert 'route="unmatched"' in text
    assert 'faithsieve_cache_lookups_total{result="hit"}' in text


def _literals(pattern: str) -> set[str]:
    return set(re.findall(pattern, API_SOURCES))


@pytest.mark.parametrize(("metric", "label", "counted"), [
    ("faithsieve_timeouts_total", "stage", lambda: _literals(r'timeouts\.inc\("([a-z_]+)"\)')),
    ("faithsieve_rejections_total", "reason",
     lambda: _literals(r'rejections\.inc\("([a-z_]+)"\)') | _literals(r'limits\.count\("([a-z_]+)"\)') - {"header"}),
    ("faithsieve_worker_restarts_total", "reason",
     lambda: _literals(r'_retire\(slot, "([a-z_]+)"\)') | _literals(r'retire = "([a-z_]+)"')),
])
def test_metric_label_values_are_the_ones_the_code_counts(metric: str, label: str, counted: Any) -> None:
    section = " ".join(_section("Metrics").split())
    listed = section.split(f"`{metric}{{{label}}}`", 1)[1].split(", `faithsieve_", 1)[0]
    assert set(re.findall(r"`([a-z_]+)`", listed)) == counted()


def test_every_error_row_is_answered_by_the_service() -> None:
    table = _section("Errors")
    rows = re.findall(r"^\| ([\d /]+) \| (`[^|]+`) \|", table, re.M)
    pairs = set()
    for statuses, codes in rows:
        pairs |= set(zip([int(s) for s in statuses.split(" / ")], re.findall(r"`([a-z_]+)`", codes), strict=True))
    assert len(pairs) >= 14
    produced = {(cls.status, cls.code) for cls in vars(errors).values()
                if isinstance(cls, type) and issubclass(cls, errors.ServiceError) and cls is not errors.ServiceError}
    produced |= set(errors._HTTP_CODES.items())
    produced |= {(int(s), c) for s, c in re.findall(r"error_json\((\d{3}), \"([a-z_]+)\"", API_SOURCES)}
    produced |= {(int(s), c) for s, c in re.findall(r"_item_error\([^,]+, (\d{3}), \"([a-z_]+)\"", API_SOURCES)}
    produced |= {(int(s), c) for s, c in re.findall(r"\b_error\((\d{3}), \"([a-z_]+)\"", API_SOURCES)}  # a worker's answer
    assert pairs <= produced, pairs - produced
    classes = {(s, c) for s, c in produced if c in {cls.code for cls in vars(errors).values()
                                                   if isinstance(cls, type) and issubclass(cls, errors.ServiceError)}}
    assert classes <= pairs, classes - pairs  # no error class the README leaves out


def test_the_api_key_row_names_every_protected_route() -> None:
    from faithsieve.api.app import _PROTECTED

    row = next(line for line in _section("Limits").splitlines() if line.startswith("| `api_key` |"))
    named = set(re.findall(r"`(/[a-z_/]+)`", row.split(" need it", 1)[0]))
    assert named == set(_PROTECTED)


def test_reward_warmup_false_starts_no_grader_workers(monkeypatch) -> None:
    from faithsieve import grader

    calls: list[int] = []
    monkeypatch.setattr(grader, "warmup", lambda: calls.append(1))
    asyncio.run(warm_reward_grader(ServiceSettings(reward_warmup=False)))
    assert calls == []
    asyncio.run(warm_reward_grader(ServiceSettings(reward_warmup=True)))
    assert calls == [1]
