"""Every CLI error is one line naming the file and the reason, exit code 2, no traceback, nothing
half-written; -v/-q anywhere; --version; python -m faithsieve; localize --format help."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from faithsieve.cli import main
from faithsieve.cli.common import package_version

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "datasets" / "proofloc-mini" / "proofloc-mini.jsonl"
EXAMPLE = ROOT / "datasets" / "examples" / "01_rectangle_area_perimeter.json"
BINARY = bytes(range(256)) * 4
LATIN1 = '{"problem": "Caf\u00e9 costs 3 + 4 = 7.", "steps": ["3 + 4 = 7."]}'.encode("latin-1")


def one_line_error(capsys: pytest.CaptureFixture[str], rc: int, *names: str) -> str:
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for n in names:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def no_temp_files(root: Path) -> None:
    strays = [p for p in root.rglob("*") if ".tmp" in p.name]
    assert not strays, strays


@pytest.fixture
def bad_files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "blob.bin").write_bytes(BINARY)
    (tmp_path / "latin1.json").write_bytes(LATIN1)
    return {"binary": tmp_path / "blob.bin", "latin1": tmp_path / "latin1.json"}


@pytest.mark.parametrize("kind", ["binary", "latin1"])
def test_localize_non_utf8(kind: str, bad_files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    line = one_line_error(capsys, main(["localize", str(bad_files[kind])]), str(bad_files[kind]), "not UTF-8")
    assert "0xe9" in line if kind == "latin1" else "0x80" in line


@pytest.mark.parametrize("kind", ["binary", "latin1"])
def test_inject_non_utf8(kind: str, bad_files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "neg.jsonl"
    one_line_error(capsys, main(["inject", str(bad_files[kind]), "--out", str(out)]), str(bad_files[kind]), "UTF-8")
    assert not out.exists()
    no_temp_files(tmp_path)


@pytest.mark.parametrize("kind", ["binary", "latin1"])
def test_score_non_utf8(kind: str, bad_files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    one_line_error(capsys, main(["score", str(bad_files[kind]), "--out", str(out), "--no-progress"]),
                   str(bad_files[kind]), "not UTF-8")
    assert not out.exists()


def test_localize_missing_file_and_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one_line_error(capsys, main(["localize", str(tmp_path / "nope.json")]), "nope.json", "no such file")
    one_line_error(capsys, main(["localize", str(tmp_path)]), str(tmp_path), "is a directory")


def test_convert_into_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "outdir"
    out_dir.mkdir()
    one_line_error(capsys, main(["convert", str(MINI), str(out_dir)]), str(out_dir), "is a directory")
    assert list(out_dir.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outdir"]  # no outdir.tmp beside it


def test_convert_under_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "afile").write_text("x")
    one_line_error(capsys, main(["convert", str(MINI), str(tmp_path / "afile" / "out.jsonl")]), "afile")
    no_temp_files(tmp_path)


def test_convert_write_failure_leaves_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import faithsieve.runtime.atomic as atomic  # convert writes through write_lines_atomic

    def broken(*a: object, **k: object) -> None:
        raise OSError(28, "No space left on device", str(tmp_path / "o.jsonl"))

    monkeypatch.setattr(atomic.os, "replace", broken)
    one_line_error(capsys, main(["convert", str(MINI), str(tmp_path / "o.jsonl")]), "o.jsonl", "no space left")
    assert list(tmp_path.iterdir()) == []


def test_serve_bad_port(capsys: pytest.CaptureFixture[str]) -> None:
    one_line_error(capsys, main(["serve", "--port", "99999"]), "--port 99999", "65535")


@pytest.mark.parametrize("value", ["-5", "-1", "x"])
def test_score_limit_must_be_a_count(value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["score", str(MINI), "--limit", value, "--out", str(tmp_path / "r")])
    one_line_error(capsys, int(exc.value.code or 0), "--limit")
    assert not (tmp_path / "r").exists()


def test_bench_without_data(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "grader_throughput.py"), "--data", str(tmp_path / "none")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().count("\n") == 0 and str(tmp_path / "none") in r.stderr and "Traceback" not in r.stderr
    assert "gsm8k/test.jsonl" in r.stderr


def test_bench_default_data_is_shared_beside_the_project() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import grader_throughput as bench
    finally:
        sys.path.remove(str(ROOT / "bench"))
    assert ROOT.parent / "shared" / "datasets" / "raw" == bench.RAW
    assert "/work/" not in (ROOT / "bench" / "grader_throughput.py").read_text(encoding="utf-8")


def test_python_m_faithsieve_error_is_one_line(bad_files: dict[str, Path]) -> None:
    r = subprocess.run([sys.executable, "-m", "faithsieve", "localize", str(bad_files["binary"])],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().count("\n") == 0 and str(bad_files["binary"]) in r.stderr and "Traceback" not in r.stderr


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"faithsieve {package_version()} (python ") and "sympy" in out and "z3" in out
    r = subprocess.run([sys.executable, "-m", "faithsieve", "--version"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout == out


@pytest.mark.parametrize("argv", [["-v", "localize", str(EXAMPLE)], ["localize", "-v", str(EXAMPLE)],
                                  ["localize", str(EXAMPLE), "--verbose"]])
def test_verbose_anywhere_logs(argv: list[str]) -> None:
    r = subprocess.run([sys.executable, "-m", "faithsieve", *argv], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and json.loads(r.stdout)["verdict"] == "correct"
    assert "INFO faithsieve.cli" in r.stderr and "verdict correct" in r.stderr


def test_default_is_silent_on_stderr() -> None:
    r = subprocess.run([sys.executable, "-m", "faithsieve", "localize", str(EXAMPLE)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stderr == ""


def test_quiet_anywhere(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["score", str(MINI), "--limit", "4", "--out", str(tmp_path / "r"), "--bootstrap", "10", "--no-report"]
    assert main(argv) == 0
    assert "scored 4 items" in capsys.readouterr().err
    assert main(["-q", *argv]) == 0
    cap = capsys.readouterr()
    assert "scored" not in cap.err and json.loads(cap.out)["n"] == 4
    assert main([*argv, "-q"]) == 0
    assert "scored" not in capsys.readouterr().err
    one_line_error(capsys, main([*argv, "-q", "-v"]), "-q")


def test_localize_format_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["localize", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--format {json,text} json (default)" in out and "text: a readable report" in out


def test_score_out_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "taken").write_text("x")
    one_line_error(capsys, main(["score", str(MINI), "--out", str(tmp_path / "taken"), "--no-progress"]),
                   str(tmp_path / "taken"), "not a directory")
    assert (tmp_path / "taken").read_text() == "x"


def test_compare_missing_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one_line_error(capsys, main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]), "metrics.json",
                   "no such file")


def test_localize_stdin_not_utf8(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(LATIN1)))
    one_line_error(capsys, main(["localize", "-"]), "<stdin>", "not UTF-8")


# ---- second round: deep JSON, wrong files, settings, limits, signals (issue 24) ----

DEEP_LINE = '{"question": "q", "answer": "a", "x": ' + "[" * 200 + "]" * 200 + "}"


def _deep(tmp_path: Path, name: str = "deep.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(DEEP_LINE + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("argv", [["localize", "{f}"], ["score", "{f}", "--out", "{d}/run", "--no-progress"],
                                  ["convert", "{f}", "{d}/o.jsonl"], ["inject", "{f}", "--out", "{d}/o.jsonl"],
                                  ["rewrite", "{f}", "--out", "{d}/rw/o.jsonl", "--no-progress"],
                                  ["rewrite", "--check", "{f}"]])
def test_deeply_nested_json_is_one_line_exit_2(argv: list[str], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    f = _deep(tmp_path)
    rc = main([a.format(f=f, d=tmp_path) for a in argv])
    one_line_error(capsys, rc, str(f), "nested deeper than 64 levels")


def test_the_nesting_bound_is_64_levels() -> None:
    from faithsieve.runtime.textfile import MAX_JSON_DEPTH, json_too_deep, loads_json

    assert MAX_JSON_DEPTH == 64
    at, past = "[" * 64 + "]" * 64, "[" * 65 + "]" * 65
    assert not json_too_deep(at) and json_too_deep(past)
    assert loads_json(at, "x") is not None
    assert not json_too_deep('"' + "[" * 500 + '"')  # brackets inside a string are text
    assert json_too_deep("[" * 100_000)  # unclosed: still refused before the parser recurses


def _array_of_gsm8k(tmp_path: Path) -> Path:
    path = tmp_path / "gsm.json"
    path.write_text(json.dumps([{"question": f"q{i}", "answer": f"#### {i}"} for i in range(30)], indent=1))
    return path


@pytest.mark.parametrize("argv", [["inject", "{f}", "--out", "{d}/o.jsonl"],
                                  ["rewrite", "{f}", "--out", "{d}/rw/o.jsonl", "--no-progress"],
                                  ["rewrite", "--check", "{f}"]])
def test_a_json_array_fed_as_jsonl_is_named(argv: list[str], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    f = _array_of_gsm8k(tmp_path)
    line = one_line_error(capsys, main([a.format(f=f, d=tmp_path) for a in argv]), str(f),
                          "a JSON array of 30 objects with fields answer, question, not JSONL")
    assert "reads" in line  # and what the command reads instead


@pytest.mark.parametrize("cmd", [["inject", "--out", "o.jsonl"], ["rewrite", "--check"]])
def test_a_proofloc_file_fed_to_gsm8k_tools_is_named(cmd: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    argv = [cmd[0], str(MINI), *cmd[1:]] if cmd[0] == "inject" else [*cmd, str(MINI)]
    one_line_error(capsys, main(argv), str(MINI), "JSONL of objects with fields", "problem, source, steps")


def test_a_text_file_fed_to_score_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "notes.jsonl"
    f.write_text("".join(f"a,b,{i}\n" for i in range(80)))
    one_line_error(capsys, main(["score", str(f), "--out", str(tmp_path / "r"), "--no-progress"]), str(f),
                   "not JSON (line 1 starts 'a,b,0')")


def test_localize_refuses_both_steps_and_proof(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "both.json"
    f.write_text(json.dumps({"problem": "p", "steps": ["2 + 2 = 4."], "proof": "2 + 2 = 5."}))
    one_line_error(capsys, main(["localize", str(f)]), str(f), "both 'steps' and 'proof'")


def test_settings_errors_name_the_setting(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FAITHSIEVE_MAX_STEPS", "abc")
    line = one_line_error(capsys, main(["localize", str(EXAMPLE)]), "FAITHSIEVE_MAX_STEPS='abc' is not valid")
    assert "validation error" not in line and "pydantic" not in line and "[type=" not in line
    monkeypatch.delenv("FAITHSIEVE_MAX_STEPS")
    line = one_line_error(capsys, main(["localize", str(EXAMPLE), "--llm-timeout", "-5"]),
                          "--llm-timeout -5 is not valid: it should be greater than 0")
    assert "llm_timeout_s" not in line


def test_content_and_limit_errors_name_the_file_and_the_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "three.json"
    f.write_text(json.dumps({"problem": "p", "steps": ["1 + 1 = 2.", "2 + 2 = 4.", "3 + 3 = 6."]}))
    monkeypatch.setenv("FAITHSIEVE_MAX_STEPS", "2")
    one_line_error(capsys, main(["localize", str(f)]), f"{f}: proof has 3 steps; the limit is 2",
                   "raise it with FAITHSIEVE_MAX_STEPS=N")
    f.write_text(json.dumps({"problem": "p", "steps": []}))
    one_line_error(capsys, main(["localize", str(f)]), f"{f}: 'steps' is empty")


def test_localize_past_its_time_limit_ends_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    # a millisecond: the worker round trip alone takes longer, so the job is killed
    assert main(["localize", str(EXAMPLE), "--item-time-limit", "0.001"]) == 1
    cap = capsys.readouterr()
    out = json.loads(cap.out)
    assert out["verdict"] == "unknown" and out["reason"].startswith("resource_limit: the check ran past its time limit")
    assert "--item-time-limit" in out["reason"] and "--item-time-limit" in cap.err
    assert out["first_error_step"] is None and out["steps"] == [] and out["mode"] == "offline"
    assert out["coverage"]["steps"] == len(json.loads(EXAMPLE.read_text())["steps"])
    assert out["coverage"]["obligations_decided"] == 0 and out["timings"]["total_ms"] > 0
    # the record a user reads has the shape of every verdict: the same fields, in the same order
    assert main(["localize", str(EXAMPLE)]) == 0
    normal = json.loads(capsys.readouterr().out)
    assert list(out) == list(normal) and list(out["coverage"]) == list(normal["coverage"])
    assert list(out["timings"]) == list(normal["timings"])


def test_localize_past_its_time_limit_in_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["localize", str(EXAMPLE), "--item-time-limit", "0.001", "--format", "text"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("VERDICT: unknown (no answer could be had; this is not a pass)\n  resource_limit: the check")
    assert "coverage: 0/" in out


@pytest.mark.parametrize("command", ["localize", "score"])
def test_a_fork_server_that_dies_at_start_up_is_one_line(command: str, tmp_path: Path) -> None:
    (tmp_path / "die_on_import.py").write_text("import os\nos._exit(1)\n")
    script = tmp_path / "run.py"
    script.write_text(
        "import sys\nimport faithsieve.runtime.workers as w\n"
        "start = w.mp_context\nw.mp_context = lambda preload=(): start(('die_on_import', *preload))\n"
        "from faithsieve.cli import main\nsys.exit(main(sys.argv[1:]))\n")
    args = [str(EXAMPLE)] if command == "localize" else [str(MINI), "--workers", "2", "--out", str(tmp_path / "r"),
                                                         "--no-progress"]
    r = subprocess.run([sys.executable, str(script), command, *args], capture_output=True, text=True, timeout=180,
                       env={**__import__("os").environ, "PYTHONPATH": str(tmp_path)})
    assert r.returncode == 2, r.stderr[-2000:]
    assert r.stderr.strip().count("\n") == 0 and "Traceback" not in r.stderr
    assert "a worker process could not be started" in r.stderr


def test_sigterm_leaves_no_leaked_semaphores(tmp_path: Path) -> None:
    import signal
    import time

    out = tmp_path / "run"
    p = subprocess.Popen([sys.executable, "-m", "faithsieve", "score", str(MINI), "--workers", "2", "--out", str(out),
                          "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline, preds = time.monotonic() + 120, out / "predictions.jsonl"
    while time.monotonic() < deadline and not (preds.exists() and preds.read_text().count("\n") >= 8):
        time.sleep(0.2)  # the workers are up and scoring
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143, err
    assert "leaked" not in err and "Traceback" not in err, err
    assert (out / "run.json").exists()  # what was scored is kept for a resume


def test_serve_on_a_port_in_use_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        one_line_error(capsys, main(["serve", "--host", "127.0.0.1", "--port", str(port)]), f"127.0.0.1:{port}",
                       "address already in use", "--port")


def test_score_report_says_how_it_sampled_and_keeps_another_selection(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    base = ["score", str(MINI), "--out", str(out), "--no-progress", "--bootstrap", "10", "-q"]
    assert main([*base, "--limit", "12"]) == 0
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "A stratified sample of 12 items" in report and "seed 0" in report and "first 12" not in report
    capsys.readouterr()
    one_line_error(capsys, main([*base, "--limit", "8"]), str(out), "limit 12 -> 8", "--force")
    assert "A stratified sample of 12 items" in (out / "report.md").read_text(encoding="utf-8")  # untouched
    assert main([*base, "--limit", "12"]) == 0  # the same selection resumes
    assert main([*base, "--limit", "8", "--sample", "first", "--force"]) == 0
    assert "Limited to the first 8 items in file order" in (out / "report.md").read_text(encoding="utf-8")


def test_error_line_is_one_account_of_a_caught_error(tmp_path: Path) -> None:
    from faithsieve.cli.common import error_line
    from faithsieve.core.errors import InputError

    try:
        (tmp_path / "absent.json").read_text(encoding="utf-8")
    except OSError as exc:
        line = error_line(exc)
    assert line.startswith(str(tmp_path / "absent.json")) and "Traceback" not in line
    assert error_line(InputError("proof.json: 'steps' is empty")) == "proof.json: 'steps' is empty"
    assert error_line(ValueError("bad value")) == "bad value"
