"""The export of a `.nsys-rep` starts before the command's own imports (issue 20.1), runs
once, is used by the loader, and is stopped and removed when nothing needs it.

Like test_nsys_rep.py, these run `tests/unit/standin/nsys`, which writes the real export
NVIDIA's nsys made of the same report."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import NSYS_DATA
from tests.support.cli import REPO, cache_is_clean, run_cli
from tuiperf.load.nsys import rep as nsys_rep
from tuiperf.load.open import OpenOptions, open_trace

STANDIN = Path(__file__).parent / "standin" / "nsys"


@pytest.fixture
def work(tmp_path: Path, nsys_dir: Path) -> Path:
    (tmp_path / "reports").mkdir()
    shutil.copy(NSYS_DATA / "cnn_osrt.nsys-rep", tmp_path / "reports" / "cnn_osrt.nsys-rep")
    (tmp_path / "exports").mkdir()
    shutil.copytree(nsys_dir / "cnn_osrt_arrowdir", tmp_path / "exports" / "cnn_osrt_arrowdir")
    return tmp_path


def _env(work: Path, **extra: str) -> dict[str, str]:
    return {
        "TUIPERF_NSYS": str(STANDIN),
        "STANDIN_EXPORTS": str(work / "exports"),
        "STANDIN_ARGV_LOG": str(work / "calls.jsonl"),
        **extra,
    }


def _calls(work: Path) -> list[dict[str, Any]]:
    log = work / "calls.jsonl"
    return [json.loads(ln) for ln in log.read_text().splitlines()] if log.exists() else []


def _wait_for(cond: Callable[[], bool], seconds: float = 30.0) -> None:
    end = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < end, "gave up waiting"
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


def _exports_empty(cache: Path) -> bool:
    return not (cache / "exports").exists() or not any((cache / "exports").iterdir())


def test_started_ahead_then_used_by_the_loader(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in _env(work, STANDIN_SECONDS="0.5").items():
        monkeypatch.setenv(k, v)
    rep, cache = work / "reports" / "cnn_osrt.nsys-rep", work / "c"
    job = nsys_rep.export_ahead(rep, cache, use_cache=True)
    assert job is not None and job.report == rep
    _wait_for(lambda: len(_calls(work)) == 1)  # runs with nobody waiting on it yet
    trace = open_trace(rep, OpenOptions(cache_dir=cache, ahead=job))
    assert trace.tables["kernels"].num_rows > 0
    assert len(_calls(work)) == 1  # the loader used it, no second export
    assert not job.folder.exists() and _exports_empty(cache) and cache_is_clean(cache)
    # the cache has it now: nothing is started for the next open
    assert nsys_rep.export_ahead(rep, cache, use_cache=True) is None
    assert len(_calls(work)) == 1


def test_not_started_for_other_reports(
    work: Path, nsys_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for k, v in _env(work).items():
        monkeypatch.setenv(k, v)
    assert nsys_rep.export_ahead(nsys_dir / "vit_range.sqlite", tmp_path, True) is None
    assert nsys_rep.export_ahead(tmp_path / "missing.nsys-rep", tmp_path, True) is None
    # an export beside the report (as new as it) is read instead
    rep = work / "reports" / "cnn_osrt.nsys-rep"
    beside = work / "reports" / "cnn_osrt_arrowdir"
    shutil.copytree(nsys_dir / "cnn_osrt_arrowdir", beside)
    os.utime(beside)
    assert nsys_rep.export_ahead(rep, tmp_path, True) is None
    # no nsys: nothing starts here, the loader says what to do
    monkeypatch.setenv("TUIPERF_NSYS", str(tmp_path / "no-such-nsys"))
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    shutil.rmtree(beside)
    assert nsys_rep.export_ahead(rep, tmp_path, True) is None
    assert _calls(work) == []


def test_unused_export_is_stopped_and_removed(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opened meanwhile by another process: the loader finds the cache entry, so the export
    started ahead is stopped at once, its folder removed."""
    for k, v in _env(work).items():
        monkeypatch.setenv(k, v)
    rep, cache = work / "reports" / "cnn_osrt.nsys-rep", work / "c"
    assert run_cli("info", str(rep), "--cache-dir", str(cache)).returncode == 0
    monkeypatch.setenv("STANDIN_SECONDS", "60")
    job = nsys_rep.Export(rep, nsys_rep.export_root(cache, True))
    _wait_for(lambda: len(_calls(work)) == 2)  # running: the stand-in has logged its call
    pid = int(_calls(work)[1]["pid"])
    assert _alive(pid)
    open_trace(rep, OpenOptions(cache_dir=cache, ahead=job))
    assert not _alive(pid) and not job.folder.exists() and _exports_empty(cache)


def test_cli_runs_one_export_and_none_from_the_cache(work: Path) -> None:
    rep, cache = work / "reports" / "cnn_osrt.nsys-rep", work / "c"
    args = ("summary", str(rep), "-r", "cuda_gpu_kern_sum", "--csv", "--cache-dir", str(cache))
    first = run_cli(*args, env=_env(work))
    assert first.returncode == 0, first.stderr
    assert len(_calls(work)) == 1
    again = run_cli(*args, env=_env(work))
    assert again.returncode == 0 and again.stdout == first.stdout
    assert len(_calls(work)) == 1  # served from the cache: nsys not started
    for cmd in ("analyze", "export"):
        (work / "calls.jsonl").unlink()
        shutil.rmtree(cache)
        res = run_cli(cmd, str(rep), "--cache-dir", str(cache), env=_env(work))
        assert res.returncode == 0, res.stderr
        assert len(_calls(work)) == 1, cmd
        assert _exports_empty(cache) and cache_is_clean(cache)


def test_usage_error_after_the_start_stops_nsys(work: Path) -> None:
    """`analyze` starts the export before it reads its options: a bad option still exits
    with one line, and the export already running is stopped and removed."""
    rep, cache = work / "reports" / "cnn_osrt.nsys-rep", work / "c"
    res = run_cli(
        "analyze",
        str(rep),
        "--util-chunks",
        "0",
        "--cache-dir",
        str(cache),
        env=_env(work, STANDIN_SECONDS="60"),
    )
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    calls = _calls(work)
    if calls:  # it may not have reached the log before being stopped
        assert not _alive(int(str(calls[0]["pid"])))
    assert _exports_empty(cache) and cache_is_clean(cache)


def test_starting_ahead_imports_no_pyarrow(work: Path) -> None:
    """The point of starting early: nothing heavy is imported before nsys runs."""
    rep, cache = work / "reports" / "cnn_osrt.nsys-rep", work / "c"
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from tuiperf.load.nsys.rep import export_ahead\n"
        f"job = export_ahead(Path({str(rep)!r}), Path({str(cache)!r}), True)\n"
        "assert job is not None\n"
        "print(sorted(m for m in ('pyarrow', 'numpy', 'pandas') if m in sys.modules))\n"
        "print(job.wait(lambda p: None).name)\n"
        "job.cancel()\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, **_env(work)},
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == ["[]", "export"]
    assert _exports_empty(cache)


def test_a_second_open_with_the_same_options_exports_again(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The export started ahead serves one open; the cache gone, the next one runs nsys."""
    for k, v in _env(work).items():
        monkeypatch.setenv(k, v)
    rep, cache = work / "reports" / "cnn_osrt.nsys-rep", work / "c"
    opts = OpenOptions(cache_dir=cache, ahead=nsys_rep.export_ahead(rep, cache, True))
    first = open_trace(rep, opts)
    shutil.rmtree(cache)
    again = open_trace(rep, opts)
    assert again.tables["kernels"].num_rows == first.tables["kernels"].num_rows
    assert len(_calls(work)) == 2 and _exports_empty(cache)


def test_started_ahead_then_sqlite_when_nsys_has_no_arrowdir(
    work: Path, nsys_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An older nsys refuses arrowdir: the export started ahead falls back to SQLite."""
    shutil.copy(nsys_dir / "cnn_osrt.sqlite", work / "exports" / "cnn_osrt.sqlite")
    for k, v in _env(work, STANDIN_NO_ARROWDIR="1").items():
        monkeypatch.setenv(k, v)
    rep, cache = work / "reports" / "cnn_osrt.nsys-rep", work / "c"
    job = nsys_rep.export_ahead(rep, cache, True)
    trace = open_trace(rep, OpenOptions(cache_dir=cache, ahead=job))
    assert trace.tables["kernels"].num_rows > 0
    kinds = [c["argv"][c["argv"].index("--type") + 1] for c in _calls(work)]
    assert kinds == ["arrowdir", "sqlite"]
    assert _exports_empty(cache) and cache_is_clean(cache)


def test_a_dead_process_export_folder_is_swept(work: Path) -> None:
    """A tuiperf killed outright (SIGKILL) leaves its export folder: the next conversion
    into that cache removes it (its process is gone), and leaves a live one's alone."""
    cache = work / "c"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    gone = cache / "exports" / f".tmp-{int(dead.stdout)}-export-abc"
    alive = cache / "exports" / f".tmp-{os.getpid()}-export-def"
    for d in (gone, alive):
        (d / "export").mkdir(parents=True)
    res = run_cli("info", str(work / "exports" / "cnn_osrt_arrowdir"), "--cache-dir", str(cache))
    assert res.returncode == 0, res.stderr
    assert not gone.exists() and alive.exists()
