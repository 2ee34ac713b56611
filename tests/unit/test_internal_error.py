"""A bug in tuiperf is not a bad report: one line that says so, its own exit code, and the
traceback with --debug. Also `python -m tuiperf.cli` runs the CLI."""

from __future__ import annotations

import lzma
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO
from tuiperf import __version__
from tuiperf.cli import main
from tuiperf.errors import ExitCode

DATA = REPO / "tests" / "data"


def _ncu_csv(tmp_path: Path) -> Path:
    p = tmp_path / "k.csv"
    p.write_bytes(lzma.decompress((DATA / "ncu" / "lstm_basic.raw.csv.xz").read_bytes()))
    return p


#: report -> (command line, the parser function to plant a bug in)
INPUTS: dict[str, tuple[Callable[[Path, Path], list[str]], str, str]] = {
    "nsys sqlite": (
        lambda nsys, tmp: ["summary", str(nsys / "vit_range.sqlite"), "--csv", "--no-cache"],
        "tuiperf.load.nsys.tables.NsysReader",
        "kernels",
    ),
    "kineto": (
        lambda nsys, tmp: ["info", str(DATA / "kineto" / "kineto_cnn.json.gz"), "--no-cache"],
        "tuiperf.load.kineto.tables",
        "load_kineto",
    ),
    "ncu csv": (
        lambda nsys, tmp: ["ncu", str(_ncu_csv(tmp)), "--no-cache"],
        "tuiperf.load.ncu.csv_export",
        "load_ncu_csv",
    ),
}


def _plant(monkeypatch: pytest.MonkeyPatch, target: str, attr: str, exc: type[Exception]) -> None:
    def bug(*args: object, **kwargs: object) -> None:
        raise exc("planted bug")

    monkeypatch.setattr(f"{target}.{attr}", bug)


@pytest.mark.parametrize("exc", [TypeError, KeyError, IndexError, ValueError, AttributeError])
@pytest.mark.parametrize("case", list(INPUTS))
def test_a_bug_in_a_parser_is_an_internal_error_not_a_bad_report(
    case: str,
    exc: type[Exception],
    nsys_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv, target, attr = INPUTS[case]
    args = argv(nsys_dir, tmp_path)
    assert main(args) == 0, capsys.readouterr().err  # the input itself is fine
    capsys.readouterr()
    _plant(monkeypatch, target, attr, exc)
    code = main(args)
    out, err = capsys.readouterr()
    assert code == ExitCode.INTERNAL == 70
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"tuiperf: internal error ({exc.__name__}: "), err
    assert "planted bug" in lines[0] and "please report" in lines[0] and "--debug" in lines[0]
    assert "damaged" not in err and "unsupported" not in err and "Traceback" not in err
    assert out == ""


def test_debug_shows_the_traceback_of_a_bug(
    nsys_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, target, attr = INPUTS["nsys sqlite"]
    _plant(monkeypatch, target, attr, TypeError)
    code = main(["--debug", *argv(nsys_dir, nsys_dir)])
    err = capsys.readouterr().err
    assert code == ExitCode.INTERNAL
    assert err.startswith("Traceback (most recent call last):"), err
    assert "in bug" in err and "TypeError: planted bug" in err  # the planted frame
    assert err.strip().splitlines()[-1].startswith("tuiperf: internal error (TypeError: ")


def test_a_bad_report_is_still_a_bad_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "x.sqlite"
    bad.write_bytes(b"SQLite format 3\x00" + bytes(200))
    code = main(["summary", str(bad), "--no-cache"])
    err = capsys.readouterr().err
    assert code == ExitCode.FAILURE
    assert err.startswith("tuiperf: error: ") and "internal error" not in err


def _module_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tuiperf.cli", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )


def test_python_m_tuiperf_cli_runs_the_cli(tmp_path: Path) -> None:
    res = _module_cli("--version")
    assert res.returncode == 0 and res.stdout.strip() == f"tuiperf {__version__}"
    res = _module_cli("info", str(tmp_path / "missing.sqlite"))
    assert res.returncode == ExitCode.USAGE
    assert res.stderr.startswith("tuiperf: error: ") and "missing.sqlite" in res.stderr
