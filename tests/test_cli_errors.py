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

ROOT = Path(__file__).resolve().parents[1]
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
    import faithsieve.datasets.formats as formats

    def broken(*a: object, **k: object) -> None:
        raise OSError(28, "No space left on device", str(tmp_path / "o.jsonl"))

    monkeypatch.setattr(formats.os, "replace", broken)
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
