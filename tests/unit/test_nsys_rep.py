"""`.nsys-rep` inputs: converted by `nsys export` once, then served from the cache.

These tests run `tests/unit/standin/nsys`, a stand-in for the real nsys binary (which is
not installed here): it behaves like the CLI and writes the real export that NVIDIA's nsys
made of the same report.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import NSYS_DATA
from tests.support.cli import assert_one_line_error, cache_is_clean, digest, run_cli

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
