"""A summary printed again comes from the JSON copy kept in the cache entry.

That path loads no table and imports neither pyarrow nor numpy; it must print exactly
what computing the report prints, in every format, and step aside whenever the copy
cannot be trusted.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import DATA, REPO
from tuiperf.cli import main
from tuiperf.summaries.cells import round_strings
from tuiperf.summaries.names import REPORT_NAMES
from tuiperf.summaries.rows import round_cell

NSYS = [n for n in REPORT_NAMES if n not in ("op_sum", "step_budget")]  # nsys stats ones
FORMATS = [["--csv"], ["-f", "json"], ["-f", "table", "--top", "0", "--width", "140"]]


def _twice(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    assert main(args) == 0
    first = capsys.readouterr().out
    assert main(args) == 0
    return first, capsys.readouterr().out


def _stored_copies(cache: Path) -> list[Path]:
    return sorted(cache.glob("*/derived/summary-*.json"))


@pytest.mark.parametrize("report", ["cnn_osrt", "lstm"])  # lstm has no OS runtime table
@pytest.mark.parametrize("fmt", FORMATS, ids=["csv", "json", "table"])
def test_stored_copy_prints_what_computing_prints(
    report: str, fmt: list[str], nsys_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    for name in NSYS:
        cache = tmp_path / name
        args = ["summary", str(nsys_dir / f"{report}.sqlite"), "-r", name, *fmt]
        first, second = _twice([*args, "--cache-dir", str(cache)], capsys)
        assert second == first, name
        if name != "cuda_gpu_trace":  # longer than stored.MAX_ROWS rows at times
            assert len(_stored_copies(cache)) == 1, name


def test_op_summary_of_a_torch_trace_is_stored_too(tmp_path: Path, capsys) -> None:
    trace = DATA / "kineto" / "kineto_cnn.json.gz"
    for fmt in FORMATS:
        args = ["summary", str(trace), "-r", "ops", *fmt, "--cache-dir", str(tmp_path)]
        first, second = _twice(args, capsys)
        assert second == first and first.strip()
    assert [p.name for p in _stored_copies(tmp_path)] == ["summary-op_sum.json"]


def test_the_stored_path_imports_no_pyarrow(nsys_dir: Path, tmp_path: Path) -> None:
    args = ["summary", str(nsys_dir / "vit_range.sqlite"), "--cache-dir", str(tmp_path)]
    code = (
        "import sys; from tuiperf.cli import main; rc = main(sys.argv[1:]); "
        "print(sorted({'pyarrow', 'numpy'} & set(sys.modules)), file=sys.stderr); sys.exit(rc)"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code, *args],
            capture_output=True,
            text=True,
            cwd=REPO,
            check=True,
        )
        for _ in range(2)
    ]
    assert runs[0].stderr.splitlines()[-1] == "['numpy', 'pyarrow']"  # computed
    assert runs[1].stderr.splitlines()[-1] == "[]"  # read back
    assert runs[1].stdout == runs[0].stdout


@pytest.mark.parametrize("damage", ["garbage", "other_report", "old_version", "old_schema"])
def test_an_untrustworthy_copy_is_not_used(
    damage: str, nsys_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    args = ["summary", str(nsys_dir / "vit_range.sqlite"), "--csv", "--cache-dir", str(tmp_path)]
    assert main(args) == 0
    good = capsys.readouterr().out
    (copy,) = _stored_copies(tmp_path)
    data = json.loads(copy.read_text())
    if damage == "garbage":
        copy.write_text('{"rows": [[1, 2')
    elif damage in ("other_report", "old_version"):
        data["report" if damage == "other_report" else "stored_version"] = "nvtx_sum"
        data["rows"] = [[0] * len(data["columns"])]
        copy.write_text(json.dumps(data))
    else:  # the entry itself is of another schema: it is rebuilt, not read
        manifest = copy.parent.parent / "manifest.json"
        m = json.loads(manifest.read_text())
        manifest.write_text(json.dumps(m | {"schema_version": -1}))
    assert main(args) == 0
    assert capsys.readouterr().out == good
    (copy,) = _stored_copies(tmp_path)
    assert json.loads(copy.read_text())["report"] == "cuda_gpu_kern_sum"  # written again


def test_no_cache_neither_reads_nor_writes_a_copy(nsys_dir: Path, tmp_path: Path, capsys) -> None:
    path = str(nsys_dir / "vit_range.sqlite")
    assert main(["summary", path, "--csv", "--cache-dir", str(tmp_path)]) == 0
    good = capsys.readouterr().out
    (copy,) = _stored_copies(tmp_path)
    data = json.loads(copy.read_text())
    data["rows"][0][-1] = "tampered"
    copy.write_text(json.dumps(data))
    assert main(["summary", path, "--csv", "--cache-dir", str(tmp_path), "--no-cache"]) == 0
    assert capsys.readouterr().out == good


def test_round_cell_agrees_with_the_vectorized_cells() -> None:
    rng = np.random.default_rng(3)
    ties = np.array([0.05, 0.15, 0.25, 2.5, -2.5, 1.0005, 0.0125, 1e15 + 0.5, 12345.65])
    values = np.concatenate([
        rng.uniform(-1e6, 1e6, 3000),
        np.round(rng.uniform(0, 1e4, 3000), 2),  # many exact and near ties
        np.round(rng.uniform(0, 10, 2000), 4),
        ties, [0.0, -0.0, math.nan, math.inf, -math.inf, 1e300],
    ])  # fmt: skip
    for digits in (1, 3):
        assert [round_cell(float(v), digits) for v in values] == round_strings(values, digits)
