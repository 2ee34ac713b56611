"""`.nsys-rep` inputs: converted by `nsys export` once, then served from the cache.

These tests run `tests/unit/standin/nsys`, a stand-in for the real nsys binary (which is
not installed here): it behaves like the CLI and writes the real export that NVIDIA's nsys
made of the same report.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import NSYS_DATA
from tests.support.cli import assert_one_line_error, cache_is_clean, digest, run_cli
from tuiperf.load.nsys import rep as nsys_rep
from tuiperf.load.progress import Progress

STANDIN = Path(__file__).parent / "standin" / "nsys"


@pytest.fixture
def workdir(tmp_path: Path, nsys_dir: Path) -> Path:
    """Reports in a folder of their own (no sibling export) and the real exports elsewhere."""
    reports = tmp_path / "reports"
    reports.mkdir()
    for name in ("vit_range.nsys-rep", "cnn_osrt.nsys-rep"):
        shutil.copy(NSYS_DATA / name, reports / name)
    exports = tmp_path / "exports"
    exports.mkdir()
    shutil.copy(nsys_dir / "vit_range.sqlite", exports / "vit_range.sqlite")
    shutil.copytree(nsys_dir / "cnn_osrt_arrowdir", exports / "cnn_osrt_arrowdir")
    return tmp_path


def env_for(work: Path, **extra: str) -> dict[str, str]:
    return {"TUIPERF_NSYS": str(STANDIN), "STANDIN_EXPORTS": str(work / "exports"), **extra}


def test_without_nsys_exit_3_with_the_command(workdir: Path) -> None:
    rep = workdir / "reports" / "vit_range.nsys-rep"
    res = run_cli(
        "summary",
        str(rep),
        "--csv",
        "--cache-dir",
        str(workdir / "c"),
        env={"TUIPERF_NSYS": str(workdir / "no-such-nsys"), "PATH": "/usr/bin:/bin"},
    )
    assert_one_line_error(res, 3)
    assert (
        f"nsys export --type sqlite --force-overwrite true -o {rep.with_suffix('.sqlite')}"
        in res.stderr
    )


def test_sqlite_export_when_arrowdir_unsupported(workdir: Path, reference_dir: Path) -> None:
    rep = workdir / "reports" / "vit_range.nsys-rep"
    before = digest(rep)
    cache = workdir / "c"
    res = run_cli(
        "summary",
        str(rep),
        "-r",
        "cuda_gpu_kern_sum",
        "--csv",
        "--cache-dir",
        str(cache),
        env=env_for(workdir, STANDIN_NO_ARROWDIR="1"),
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout == (reference_dir / "stats_vit_range_cuda_gpu_kern_sum.csv").read_text()
    assert digest(rep) == before
    assert sorted(p.name for p in (workdir / "reports").iterdir()) == [
        "cnn_osrt.nsys-rep",
        "vit_range.nsys-rep",
    ]  # nothing written beside the report
    assert cache_is_clean(cache)
    assert not any((cache / "exports").iterdir())  # the raw export is dropped after converting


def test_arrowdir_export_then_cache_without_nsys(workdir: Path, reference_dir: Path) -> None:
    rep = workdir / "reports" / "cnn_osrt.nsys-rep"
    cache = workdir / "c"
    res = run_cli(
        "summary",
        str(rep),
        "-r",
        "nvtx_sum",
        "--csv",
        "--cache-dir",
        str(cache),
        env=env_for(workdir),
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout == (reference_dir / "stats_cnn_osrt_nvtx_sum.csv").read_text()
    # reopening needs no nsys at all: the cache answers
    again = run_cli(
        "info",
        str(rep),
        "--json",
        "--cache-dir",
        str(cache),
        env={"TUIPERF_NSYS": str(workdir / "no-such-nsys"), "PATH": "/usr/bin:/bin"},
    )
    assert again.returncode == 0, again.stderr
    assert '"from_cache": true' in again.stdout
    assert '"format": "nsys-rep"' in again.stdout


def test_failed_export_leaves_no_debris(workdir: Path) -> None:
    rep = workdir / "reports" / "vit_range.nsys-rep"
    cache = workdir / "c"
    res = run_cli(
        "info", str(rep), "--cache-dir", str(cache), env=env_for(workdir, STANDIN_FAIL="1")
    )
    assert_one_line_error(res, 1)
    assert "nsys export failed" in res.stderr
    assert cache_is_clean(cache)
    assert not (cache / "exports").exists() or not any((cache / "exports").iterdir())


def test_sibling_export_is_used_directly(workdir: Path, reference_dir: Path) -> None:
    rep = workdir / "reports" / "vit_range.nsys-rep"
    sibling = rep.with_suffix(".sqlite")
    shutil.copy(workdir / "exports" / "vit_range.sqlite", sibling)
    now = time.time()
    os.utime(rep, (now - 100, now - 100))
    os.utime(sibling, (now, now))
    res = run_cli(
        "summary",
        str(rep),
        "-r",
        "cuda_api_sum",
        "--csv",
        "--cache-dir",
        str(workdir / "c"),
        env={"TUIPERF_NSYS": str(workdir / "no-such-nsys")},
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout == (reference_dir / "stats_vit_range_cuda_api_sum.csv").read_text()


def test_older_sibling_is_ignored(workdir: Path) -> None:
    rep = workdir / "reports" / "vit_range.nsys-rep"
    sibling = rep.with_suffix(".sqlite")
    shutil.copy(workdir / "exports" / "vit_range.sqlite", sibling)
    now = time.time()
    os.utime(sibling, (now - 100, now - 100))
    os.utime(rep, (now, now))
    res = run_cli(
        "info",
        str(rep),
        "--cache-dir",
        str(workdir / "c"),
        env={"TUIPERF_NSYS": str(workdir / "no-such-nsys"), "PATH": "/usr/bin:/bin"},
    )
    assert_one_line_error(res, 3)
    # the user is told the export exists and why it was not used
    assert "vit_range.sqlite beside the report is 100 s older than vit_range.nsys-rep" in res.stderr
    # the user is told the export exists and why it was not used
    assert "vit_range.sqlite beside the report is 100 s older than vit_range.nsys-rep" in res.stderr


def test_killed_export_leaves_no_debris(workdir: Path) -> None:
    """An `nsys export` killed halfway (SIGKILL) is a clear error, and the next open works."""
    rep = workdir / "reports" / "vit_range.nsys-rep"
    before = digest(rep)
    cache = workdir / "c"
    res = run_cli(
        "info", str(rep), "--cache-dir", str(cache), env=env_for(workdir, STANDIN_KILLED="1")
    )
    assert_one_line_error(res, 1)
    assert "killed by signal 9" in res.stderr
    assert cache_is_clean(cache)
    assert not (cache / "exports").exists() or not any((cache / "exports").iterdir())
    assert digest(rep) == before
    again = run_cli(
        "info", str(rep), "--cache-dir", str(cache), env=env_for(workdir, STANDIN_NO_ARROWDIR="1")
    )
    assert again.returncode == 0, again.stderr


def _export_with_standin(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, name: str, **env: str
) -> tuple[Path, list[Progress]]:
    for key, value in env_for(workdir, **env).items():
        monkeypatch.setenv(key, value)
    seen: list[Progress] = []
    out = nsys_rep.run_export(workdir / "reports" / name, workdir / "exports_tmp", seen.append)
    return out, seen


def test_export_shows_nsys_progress_and_time(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, seen = _export_with_standin(
        workdir, monkeypatch, "cnn_osrt.nsys-rep", STANDIN_SECONDS="1.5"
    )
    assert out.is_dir() and out.name == "export"
    assert all(s.phase == "nsys export → arrowdir" for s in seen)
    size_mib = (workdir / "reports" / "cnn_osrt.nsys-rep").stat().st_size / 2**20
    assert seen[0].total == 0 and f"report {size_mib:.0f} MiB" in seen[0].detail  # not silent
    counted = [s for s in seen if s.total == 100]
    assert len(counted) >= 2, seen  # nsys's own bar, followed while it runs
    assert [s.done for s in counted] == sorted(s.done for s in counted)
    assert "34,684 events" in counted[-1].detail


def test_export_asks_for_json_payloads_and_falls_back_to_sqlite(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    log = tmp_path / "argv.jsonl"
    out, _ = _export_with_standin(
        workdir,
        monkeypatch,
        "vit_range.nsys-rep",
        STANDIN_NO_ARROWDIR="1",
        STANDIN_ARGV_LOG=str(log),
    )
    calls = [" ".join(json.loads(ln)["argv"]) for ln in log.read_text().splitlines()]
    assert len(calls) == 2, calls  # arrowdir refused by this older nsys, then sqlite
    assert "--type arrowdir" in calls[0] and "--type sqlite" in calls[1]
    assert all("--include-json=true" in c for c in calls)  # Python backtraces need it
    assert out.name == "export.sqlite" and out.is_file()
    assert [p.name for p in out.parent.iterdir()] == ["export.sqlite"]  # no arrowdir debris
