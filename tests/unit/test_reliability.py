"""The reliability sweep: every kind of bad input against every loader and command.

Bad reports: one line on stderr, exit 1, nothing on stdout, the input untouched, no cache
entry or temporary folder left, no output file. Odd but valid reports (zero events,
missing tables, a 1 MB name, bytes that are not UTF-8, escapes and markup in names) open
and print, with no terminal control characters in what is meant for people.
Commands run in this process (fd-level capture, so C libraries' writes count too); the
signal tests run real processes.
"""

from __future__ import annotations

import gzip
import lzma
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import DATA, REPO
from tests.support import needs
from tests.support.cli import cache_is_clean, digest

Maker = Callable[[Path, Path], Path]


# --- inputs ---------------------------------------------------------------------------------


def _cut(src: Path, dst: Path, frac: float) -> Path:
    data = src.read_bytes()
    dst.write_bytes(data[: int(len(data) * frac)])
    return dst


def _copy_dir_damaged(src: Path, dst: Path, table: str) -> Path:
    shutil.copytree(src, dst)
    for f in dst.iterdir():
        if f.stem == table:
            f.chmod(0o644)
            f.write_bytes(f.read_bytes()[: f.stat().st_size // 3])
    return dst


def _ncu_rep(dst: Path, frac: float) -> Path:
    data = lzma.decompress((DATA / "ncu" / "vit_full.ncu-rep.xz").read_bytes())
    dst.write_bytes(data[: int(len(data) * frac)])
    return dst


def _kineto(dst: Path, frac: float) -> Path:
    text = gzip.decompress((DATA / "kineto" / "kineto_cnn.json.gz").read_bytes())
    dst.write_bytes(text[: int(len(text) * frac)])
    return dst


def _write(dst: Path, data: bytes) -> Path:
    dst.write_bytes(data)
    return dst


BAD: dict[str, Maker] = {
    "empty .sqlite": lambda d, s: _write(d / "e.sqlite", b""),
    "empty .nsys-rep": lambda d, s: _write(d / "e.nsys-rep", b""),
    "empty .json": lambda d, s: _write(d / "e.json", b""),
    "empty .ncu-rep": lambda d, s: _write(d / "e.ncu-rep", b""),
    "sqlite cut at 5%": lambda d, s: _cut(s, d / "c5.sqlite", 0.05),
    "sqlite cut at 50%": lambda d, s: _cut(s, d / "c50.sqlite", 0.5),
    "sqlite cut at 99%": lambda d, s: _cut(s, d / "c99.sqlite", 0.99),
    "random bytes .sqlite": lambda d, s: _write(d / "r.sqlite", os.urandom(65536)),
    "random bytes .nsys-rep": lambda d, s: _write(d / "r.nsys-rep", os.urandom(65536)),
    "random bytes .json.gz": lambda d, s: _write(d / "r.json.gz", os.urandom(4096)),
    "random bytes no extension": lambda d, s: _write(d / "report", os.urandom(4096)),
    "gzip that is not gzip": lambda d, s: _write(d / "x.json.gz", b"\x1f\x8bnot really"),
    "kineto cut at 40%": lambda d, s: _kineto(d / "k40.json", 0.4),
    "ncu-rep cut at 1%": lambda d, s: _ncu_rep(d / "n1.ncu-rep", 0.01),
    "ncu-rep cut at 60%": lambda d, s: _ncu_rep(d / "n60.ncu-rep", 0.6),
    "parquetdir with a cut table": lambda d, s: _copy_dir_damaged(
        s.parent / "cnn_osrt_parquetdir", d / "pq", "CUPTI_ACTIVITY_KIND_KERNEL"
    ),
    "arrowdir with a cut table": lambda d, s: _copy_dir_damaged(
        s.parent / "cnn_osrt_arrowdir", d / "ar", "CUPTI_ACTIVITY_KIND_KERNEL"
    ),
    "a folder of other files": lambda d, s: _write(_mkdir(d / "dir") / "notes.txt", b"x").parent,
}

#: the commands of a timeline report, and where each writes its output
COMMANDS: dict[str, Callable[[Path, Path], list[str]]] = {
    "info": lambda r, o: ["info", str(r)],
    "summary": lambda r, o: ["summary", str(r), "-r", "cuda_gpu_kern_sum", "--csv"],
    "export": lambda r, o: ["export", str(r), "--table", "kernels", "-o", str(o / "k.csv")],
    "analyze": lambda r, o: ["analyze", str(r), "--format", "json", "-o", str(o / "a.json")],
    "convert": lambda r, o: ["convert", str(r), "-o", str(o / "converted")],
    "diff": lambda r, o: ["diff", str(r), str(r), "--format", "json", "-o", str(o / "d.json")],
}


def _mkdir(p: Path) -> Path:
    p.mkdir()
    return p


def run(argv: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from tuiperf.cli import main

    code = main(argv)
    out, err = capfd.readouterr()
    return code, out, err


def assert_one_line(err: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("tuiperf: error: "), err
    assert "Traceback" not in err and "\x1b" not in err


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_every_command(
    case: str, command: str, tmp_path: Path, nsys_dir: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    bad = BAD[case](tmp_path, nsys_dir / "vit_range.sqlite")
    before = digest(bad)
    out_dir, cache = _mkdir(tmp_path / "out"), tmp_path / "cache"
    code, out, err = run([*COMMANDS[command](bad, out_dir), "--cache-dir", str(cache)], capfd)
    assert code in (1, 2), err  # 2: an Nsight Compute report given to a timeline command
    assert_one_line(err)
    assert out == ""
    assert digest(bad) == before
    assert cache_is_clean(cache)
    assert not any(out_dir.iterdir()), "an output file was left behind"


@pytest.mark.parametrize(
    "case", ["empty .ncu-rep", "ncu-rep cut at 1%", "ncu-rep cut at 60%", "random bytes .sqlite"]
)
def test_bad_input_ncu(
    case: str, tmp_path: Path, nsys_dir: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    needs.module("ncu_report")
    bad = BAD[case](tmp_path, nsys_dir / "vit_range.sqlite")
    before = digest(bad)
    code, out, err = run(["ncu", str(bad), "--cache-dir", str(tmp_path / "c")], capfd)
    assert code == 1, err
    assert_one_line(err)
    assert out == "" and digest(bad) == before
    assert cache_is_clean(tmp_path / "c")


@pytest.mark.parametrize(
    "make",
    [
        lambda d, s: Path(shutil.copy(s, d / "looks.json")),
        lambda d, s: _kineto(d / "trace.sqlite", 1.0),
    ],
    ids=["sqlite named .json", "trace named .sqlite"],
)
def test_wrong_extension_the_content_decides(
    make: Maker, tmp_path: Path, nsys_dir: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    report = make(tmp_path, nsys_dir / "vit_range.sqlite")
    before = digest(report)
    code, out, err = run(["info", str(report), "--cache-dir", str(tmp_path / "c")], capfd)
    assert code == 0, err
    assert "kernels" in out
    assert digest(report) == before


# --- odd but valid reports ----------------------------------------------------------------


def _edit(src: Path, dst: Path, *sql: tuple[str, tuple]) -> Path:
    shutil.copy(src, dst)
    dst.chmod(0o644)
    db = sqlite3.connect(dst)
    for stmt, params in sql:
        db.execute(stmt, params)
    db.commit()
    db.close()
    dst.chmod(0o444)
    return dst


def _kernel_name_ids(src: Path) -> list[int]:
    db = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    rows = db.execute(
        "select demangledName, sum(end - start) t from CUPTI_ACTIVITY_KIND_KERNEL"
        " group by demangledName order by t desc limit 3"
    ).fetchall()
    db.close()
    return [r[0] for r in rows]


EVENT_TABLES = (
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "NVTX_EVENTS",
)


def _odd(case: str, d: Path, src: Path) -> Path:
    ids = _kernel_name_ids(src)
    if case == "zero events":
        return _edit(src, d / "zero.sqlite", *((f"delete from {t}", ()) for t in EVENT_TABLES))
    if case == "missing tables":
        drop = ("StringIds", "ThreadNames", "TARGET_INFO_GPU", "CUPTI_ACTIVITY_KIND_MEMSET")
        return _edit(src, d / "missing.sqlite", *((f"drop table {t}", ()) for t in drop))
    if case == "a 1 MB kernel name":
        sql = ("update StringIds set value = ? where id = ?", ("K" * 1_000_000, ids[0]))
        return _edit(src, d / "huge.sqlite", sql)
    if case == "names that are not UTF-8":
        sql = ("update StringIds set value = cast(? as text) where id = ?", (b"k\xff\xfe", ids[0]))
        return _edit(src, d / "bytes.sqlite", sql)
    evil = "\x1b[2J\x1b]0;pwned\x07[bold red]boom[/] \x9b31m"
    sql = ("update StringIds set value = ? where id = ?", (evil, ids[0]))
    return _edit(src, d / "evil.sqlite", sql)


ODD = ["zero events", "missing tables", "a 1 MB kernel name", "names that are not UTF-8", "escapes"]


@pytest.mark.parametrize(
    "command", ["info", "summary-table", "summary", "export", "analyze", "diff", "diff-text"]
)
@pytest.mark.parametrize("case", ODD)
def test_odd_but_valid_reports_open(
    case: str, command: str, tmp_path: Path, nsys_dir: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    report = _odd(case, tmp_path, nsys_dir / "vit_range.sqlite")
    before = digest(report)
    out_dir = _mkdir(tmp_path / "out")
    if command == "summary-table":
        argv = ["summary", str(report), "-r", "cuda_gpu_kern_sum", "--width", "100"]
    elif command == "diff-text":
        argv = ["diff", str(report), str(report), "--width", "100"]
    else:
        argv = COMMANDS[command](report, out_dir)
    code, out, err = run([*argv, "--cache-dir", str(tmp_path / "cache")], capfd)
    assert code == 0, err
    assert "Traceback" not in err
    assert digest(report) == before
    if command in ("info", "summary-table"):  # for people: no control characters at all
        assert not any((ord(c) < 32 and c not in "\n") or 0x7F <= ord(c) < 0xA0 for c in out)
        assert "[bold red]boom[/]" in out or case != "escapes" or command == "info"
    if case == "a 1 MB kernel name" and command in ("summary-table", "diff-text"):
        assert max(len(line) for line in out.splitlines()) <= 100
    if case == "names that are not UTF-8" and command == "summary":
        assert "k\ufffd\ufffd" in out
    if case == "zero events" and command == "export":
        assert (out_dir / "k.csv").read_text().count("\n") == 1  # the header only


# --- an unwritable export path, a report that changes while it is converted -----------------


def test_unwritable_export_path(tmp_path: Path, nsys_dir: Path, capfd) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run(
        ["export", str(nsys_dir / "vit_range.sqlite"), "-o", str(blocker / "k.csv")], capfd
    )
    assert code == 1
    assert_one_line(err)
    assert blocker.read_text() == "x"


def test_report_changing_while_converted(
    tmp_path: Path, nsys_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tuiperf.errors import BadReportError
    from tuiperf.load.open import OpenOptions, open_trace
    from tuiperf.load.progress import Progress

    report = tmp_path / "growing.sqlite"
    shutil.copy(nsys_dir / "vit_range.sqlite", report)
    touched: list[Progress] = []

    def progress(step: Progress) -> None:  # the profiler is still writing the file
        if step.phase == "read tables" and not touched:
            touched.append(step)
            with report.open("ab") as f:
                f.write(b"\0" * 4096)

    cache = tmp_path / "cache"
    with pytest.raises(BadReportError, match="changed while it was being converted"):
        open_trace(report, OpenOptions(cache_dir=cache, progress=progress))
    assert touched
    assert cache_is_clean(cache)
    assert not [d for d in cache.iterdir() if d.is_dir() and d.name != "exports"]


# --- interrupted conversions ------------------------------------------------------------------


@pytest.fixture(scope="module")
def big_report(tmp_path_factory: pytest.TempPathFactory, nsys_dir: Path) -> Path:
    """vit_range tiled x150 (about 380k kernels): long enough to be interrupted."""
    out = tmp_path_factory.mktemp("tiled") / "vit_range_x150.sqlite"
    tool = REPO / "scripts" / "scale_nsys.py"
    subprocess.run(
        [sys.executable, str(tool), str(nsys_dir / "vit_range.sqlite"), str(out), "--times", "150"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return out


def _start_convert(report: Path, cache: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tuiperf", "convert", str(report), "--cache-dir", str(cache)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_temp(cache: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if cache.exists() and any(p.name.startswith(".tmp-") for p in cache.iterdir()):
            time.sleep(0.2)  # into the tables
            return
        time.sleep(0.01)
    pytest.fail("the conversion never started (or ended before it could be interrupted)")


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_conversion_leaves_a_consistent_cache(
    sig: signal.Signals, code: int, big_report: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    proc = _start_convert(big_report, cache)
    _wait_for_temp(cache, proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    # CPython 3.11 marks a Ctrl-C as unhandled when it lands inside code run by exec/eval
    # (dataclass and namedtuple build their methods so, e.g. while pandas is imported),
    # even though tuiperf catches it: the process then ends by SIGINT itself after
    # printing its line. A shell reports 130 either way.
    assert proc.returncode in ((code, -sig) if sig == signal.SIGINT else (code,)), err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert cache_is_clean(cache)
    assert not [d for d in cache.iterdir() if d.is_dir()]  # no entry, no temp folder
    again = _start_convert(big_report, cache)  # the next open builds it whole
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert cache_is_clean(cache)


def test_killed_conversion_is_rebuilt_by_the_next_open(big_report: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    proc = _start_convert(big_report, cache)
    _wait_for_temp(cache, proc)
    proc.kill()  # SIGKILL: no cleanup can run
    proc.communicate(timeout=60)
    again = _start_convert(big_report, cache)
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert cache_is_clean(cache)  # the dead process's temporary folder was swept
