"""A fraction where an nsys export keeps an integer id (here greenContextId) is a damaged
report, said in one line, as before the readers stopped using pyarrow's scalars: not an
id silently cut to an integer."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from tuiperf.errors import BadReportError
from tuiperf.load.open import OpenOptions, open_trace


def test_a_fractional_green_context_is_a_bad_report(nsys_dir: Path, tmp_path: Path) -> None:
    report = tmp_path / "run.sqlite"
    shutil.copy(nsys_dir / "vit_range.sqlite", report)
    report.chmod(0o644)
    db = sqlite3.connect(report)
    cols = [r[1] for r in db.execute("pragma table_info(CUPTI_ACTIVITY_KIND_KERNEL)")]
    if "greenContextId" not in cols:
        pytest.skip("this export has no greenContextId")
    db.execute("update CUPTI_ACTIVITY_KIND_KERNEL set greenContextId = 2.5 where rowid = 1")
    db.commit()
    db.close()
    with pytest.raises(BadReportError, match="kernels: values out of range"):
        open_trace(report, OpenOptions(use_cache=False))  # every column read now


def test_a_fractional_nvtx_event_type_is_no_nvtx_range(nsys_dir: Path, tmp_path: Path) -> None:
    """pc.is_in compared eventType as floats: 59.5 is not PushPop (59), so the row is not
    a range; the buffer-based filter does the same."""
    report = tmp_path / "run.sqlite"
    shutil.copy(nsys_dir / "vit_range.sqlite", report)
    report.chmod(0o644)
    base = open_trace(nsys_dir / "vit_range.sqlite", OpenOptions(use_cache=False))
    db = sqlite3.connect(report)
    (rowid,) = db.execute("select rowid from NVTX_EVENTS where eventType = 59 limit 1").fetchone()
    db.execute("update NVTX_EVENTS set eventType = 59.5 where rowid = ?", (rowid,))
    db.commit()
    db.close()
    got = open_trace(report, OpenOptions(use_cache=False))
    assert got.table("nvtx").num_rows == base.table("nvtx").num_rows - 1
