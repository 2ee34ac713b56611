"""`tuiperf summary --format csv` equals `nsys stats --format csv`, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import NSYS_REPORTS
from tuiperf.cli import main
from tuiperf.summaries.stats import REPORTS


@pytest.mark.parametrize("report", NSYS_REPORTS)
@pytest.mark.parametrize("name", list(REPORTS))
def test_summary_csv_equals_nsys_stats(
    report: str, name: str, nsys_dir: Path, reference_dir: Path, tmp_path: Path
) -> None:
    """Twice: computed from the tables, then read back from the cache entry's stored copy."""
    expected = (reference_dir / f"stats_{report}_{name}.csv").read_bytes()
    for run in ("computed", "stored"):
        out = tmp_path / f"{run}.csv"
        path = str(nsys_dir / f"{report}.sqlite")
        args = ["summary", path, "--report", name, "--format", "csv", "-o", str(out)]
        assert main([*args, "--cache-dir", str(tmp_path / "cache")]) == 0
        got = out.read_bytes()
        if got != expected:  # show the first differing line, not a 2 MB blob
            for i, (a, b) in enumerate(zip(got.splitlines(), expected.splitlines())):
                assert a == b, f"{run}: line {i + 1} differs"
        assert got == expected, run


@pytest.mark.parametrize("name", ["cuda_gpu_kern_sum", "nvtx_sum", "cuda_api_sum"])
def test_cached_summary_equals_fresh(
    name: str,
    nsys_dir: Path,
    reference_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The second run reads the stored result; it must print the same bytes."""
    args = [
        "summary",
        str(nsys_dir / "cnn_osrt.sqlite"),
        "-r",
        name,
        "--csv",
        "--cache-dir",
        str(tmp_path),
    ]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert list(tmp_path.glob("*/derived/summary-*.arrow"))
    assert main(args) == 0
    assert capsys.readouterr().out == first
    assert first == (reference_dir / f"stats_cnn_osrt_{name}.csv").read_text()


def test_aliases_resolve(nsys_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(nsys_dir / "vit_range.sqlite")
    assert main(["summary", path, "-r", "kern", "--csv"]) == 0
    short = capsys.readouterr().out
    assert main(["summary", path, "-r", "cuda_gpu_kern_sum", "--csv"]) == 0
    assert capsys.readouterr().out == short


def test_missing_table_gives_empty_csv(nsys_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """nsys stats writes a 0-byte CSV when the report has no OSRT table."""
    assert main(["summary", str(nsys_dir / "lstm.sqlite"), "-r", "osrt_sum", "--csv"]) == 0
    assert capsys.readouterr().out == ""


def test_table_format_top_and_note(nsys_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["summary", str(nsys_dir / "vit_amp.sqlite"), "--top", "5", "--width", "100"])
    assert rc == 0
    cap = capsys.readouterr()
    lines = [ln for ln in cap.out.splitlines() if "%" in ln]
    assert len(lines) == 5
    assert all(len(ln) <= 100 for ln in cap.out.splitlines())
    assert "showing 5 of 57" in cap.err


def test_json_rows(nsys_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert (
        main(["summary", str(nsys_dir / "cnn_osrt.sqlite"), "-r", "mem", "--format", "json"]) == 0
    )
    data = json.loads(capsys.readouterr().out)
    ops = {r["operation"]: r for r in data["rows"]}
    assert ops["[CUDA memcpy Host-to-Device]"]["count"] == 78
    assert ops["[CUDA memset]"]["total_ns"] == 153472
