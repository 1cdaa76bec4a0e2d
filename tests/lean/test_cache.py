"""CachedBackend: what is stored, what is keyed, and what happens to a bad cache file."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest
from faithsieve.lean.backend import CheckResult, LeanBackend, LeanMessage
from faithsieve.lean.cache import CachedBackend, cache_key, timeout_class
from faithsieve.lean.factory import build_backend

from faithsieve.core.settings import Settings


class CountingBackend:
    """A backend whose answer depends on markers in the code, counting the real checks."""

    name = "fake"

    def __init__(self, lean: str = "v4.19.0") -> None:
        self.calls = 0
        self.lean = lean
        self.closed = False

    def available(self) -> tuple[bool, str]:
        return True, ""

    def versions(self) -> dict[str, str]:
        return {"lean": self.lean, "mathlib": "v4.19.0@abc"}

    def check(self, code: str, timeout_s: float | None = None) -> CheckResult:
        self.calls += 1
        for marker in ("sorry", "lean_error", "repl_error", "timeout"):
            if marker in code:
                msgs = (LeanMessage(severity="error", text="boom", line=1, column=0),) if marker == "lean_error" else ()
                return CheckResult(status=marker, messages=msgs, backend=self.name,  # type: ignore[arg-type]
                                   detail="d" if marker in ("repl_error", "timeout") else "")
        return CheckResult(status="valid", backend=self.name, time_ms=12.0)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "sub" / "lean.sqlite"


def test_deterministic_outcomes_are_cached(db: Path) -> None:
    inner = CountingBackend()
    b = CachedBackend(inner, db)
    assert isinstance(b, LeanBackend) and b.name == "fake"
    for code in ("valid code", "a sorry", "a lean_error"):
        first = b.check(code, 10)
        again = b.check(code, 10)
        assert first == again
    assert inner.calls == 3 and b.hits == 3
    assert b.check("a lean_error", 10).errors[0].text == "boom"


def test_machine_outcomes_are_not_cached(db: Path) -> None:
    inner = CountingBackend()
    b = CachedBackend(inner, db)
    for _ in range(2):
        b.check("a repl_error")
        b.check("a timeout")
    assert inner.calls == 4 and b.hits == 0


def test_cache_persists_across_instances(db: Path) -> None:
    CachedBackend(CountingBackend(), db).check("valid code", 10)
    inner = CountingBackend()
    assert CachedBackend(inner, db).check("valid code", 10).status == "valid"
    assert inner.calls == 0


def test_key_depends_on_backend_versions_code_and_timeout_class() -> None:
    v = {"lean": "v4.19.0", "mathlib": "x"}
    base = cache_key("kimina", v, "code", 10)
    assert base == cache_key("kimina", dict(reversed(list(v.items()))), "code", 12)  # same class, order-free
    assert base != cache_key("lean-interact", v, "code", 10)
    assert base != cache_key("kimina", {**v, "lean": "v4.20.0"}, "code", 10)
    assert base != cache_key("kimina", {**v, "mathlib": "y"}, "code", 10)
    assert base != cache_key("kimina", v, "code ", 10)
    assert base != cache_key("kimina", v, "code", 100)


@pytest.mark.parametrize(("t", "label"), [(None, "default"), (0, "default"), (1, "<=5s"), (5, "<=5s"),
                                          (10, "<=15s"), (60, "<=60s"), (61, "<=300s"), (1000, ">300s")])
def test_timeout_class(t: float | None, label: str) -> None:
    assert timeout_class(t) == label


def test_new_lean_version_misses(db: Path) -> None:
    CachedBackend(CountingBackend("v4.19.0"), db).check("valid code")
    inner = CountingBackend("v4.20.0")
    CachedBackend(inner, db).check("valid code")
    assert inner.calls == 1


def test_unknown_lean_version_is_never_cached(db: Path) -> None:
    inner = CountingBackend("unknown")
    b = CachedBackend(inner, db)
    b.check("valid code")
    b.check("valid code")
    assert inner.calls == 2 and not db.exists()


def test_corrupt_file_warns_once_and_runs_uncached(db: Path, caplog: pytest.LogCaptureFixture) -> None:
    db.parent.mkdir(parents=True)
    db.write_bytes(b"this is not an sqlite database, just some bytes " * 100)
    inner = CountingBackend()
    b = CachedBackend(inner, db)
    with caplog.at_level(logging.WARNING, logger="faithsieve.lean.cache"):
        assert b.check("valid code").status == "valid"
        assert b.check("valid code").status == "valid"
    assert inner.calls == 2 and b.cache.disabled
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "continuing without a cache" in warnings[0].getMessage()


def test_directory_in_the_way_is_handled(tmp_path: Path) -> None:
    (tmp_path / "lean.sqlite").mkdir()
    inner = CountingBackend()
    assert CachedBackend(inner, tmp_path / "lean.sqlite").check("valid code").status == "valid"


def test_nothing_written_before_first_check(db: Path) -> None:
    b = CachedBackend(CountingBackend(), db)
    assert b.available() == (True, "") and b.versions()["lean"] == "v4.19.0"
    assert not db.parent.exists()
    b.close()


def test_close_closes_inner(db: Path) -> None:
    inner = CountingBackend()
    b = CachedBackend(inner, db)
    b.check("valid code")
    b.close()
    assert inner.closed


def test_threads_share_one_cache(db: Path) -> None:
    inner = CountingBackend()
    b = CachedBackend(inner, db)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for j in range(20):
                assert b.check(f"valid code {j % 5}").status == "valid"
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and inner.calls >= 5


def test_factory_none_gives_none() -> None:
    assert build_backend(Settings(lean_backend="none")) is None
