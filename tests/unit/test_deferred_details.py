"""Detail columns (grid, block, registers, mangled names, API return values) are converted
after the first screen: the first open builds only the core columns, the first use of a
detail column converts the rest once and keeps it in the cache entry."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tuiperf import schema
from tuiperf.errors import BadReportError
from tuiperf.load.open import OpenOptions, open_trace


def _opts(tmp_path: Path, defer: bool) -> OpenOptions:
    return OpenOptions(cache_dir=tmp_path / ("lazy" if defer else "eager"), defer_details=defer)


@pytest.mark.parametrize("source", ["vit_range.sqlite", "cnn_osrt_parquetdir", "cnn_osrt_arrowdir"])
def test_deferred_columns_equal_an_eager_conversion(nsys_dir: Path, tmp_path: Path, source: str):
    path = nsys_dir / source
    eager = open_trace(path, _opts(tmp_path, defer=False))
    lazy = open_trace(path, _opts(tmp_path, defer=True))
    assert set(lazy.pending) == {"api", "kernels"}
    for name in ("kernels", "api"):
        assert not set(schema.DETAIL_COLUMNS[name]) & set(lazy.tables[name].column_names)
        assert lazy.table(name).equals(eager.table(name)), name
    assert not lazy.pending


def test_core_columns_do_not_convert_details(nsys_dir: Path, tmp_path: Path):
    lazy = open_trace(nsys_dir / "vit_range.sqlite", _opts(tmp_path, defer=True))
    lazy.table("kernels", ["start", "end", "name"])
    assert "kernels" in lazy.pending
    assert lazy.counts()["kernels"] == lazy.tables["kernels"].num_rows > 0
    assert "kernels" in lazy.pending


def test_details_are_kept_in_the_cache_entry(nsys_dir: Path, tmp_path: Path):
    src = tmp_path / "r.sqlite"
    shutil.copy(nsys_dir / "vit_range.sqlite", src)
    src.chmod(0o644)
    regs = open_trace(src, _opts(tmp_path, defer=True)).table("kernels", ["registers"])
    again = open_trace(src, _opts(tmp_path, defer=True))
    assert again.meta.from_cache and set(again.pending) == {"api", "kernels"}
    with src.open("ab") as f:  # the report changes after it was opened
        f.write(b"\0" * 4096)
    # kernels' details come from the cache entry, not the changed report
    assert again.table("kernels", ["registers"]).equals(regs)
    # api's were never converted: converting them now from a changed report is refused
    with pytest.raises(BadReportError, match="changed"):
        again.table("api")


def test_detail_and_derived_files_get_the_entry_mode(nsys_dir: Path, tmp_path: Path):
    """Files added to an entry later follow the umask like the rest (not mkstemp's 0600)."""
    from tuiperf.summaries.reports import compute_cached

    trace = open_trace(nsys_dir / "vit_range.sqlite", _opts(tmp_path, defer=True))
    trace.table("kernels", ["registers"])
    compute_cached(trace, "cuda_gpu_kern_sum")
    entry = Path(trace.meta.cache_path or "")
    core = (entry / "kernels.arrow").stat().st_mode & 0o777
    later = [entry / "kernels.details.arrow", entry / "derived" / "summary-cuda_gpu_kern_sum.arrow"]
    assert [p.stat().st_mode & 0o777 for p in later] == [core, core]
    assert not list(entry.rglob(".tmp-*"))
