"""The detail columns kept in a cache entry (`<table>.details.arrow`) are those columns and
nothing else (no second copy of `start`: issue 37, bench/cache_size.md), and a reopened
entry completed from them equals an eager conversion of the report."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from tuiperf import schema
from tuiperf.load.open import OpenOptions, open_trace


@pytest.mark.parametrize("source", ["vit_range.sqlite", "cnn_osrt_arrowdir"])
def test_details_file_then_reopen_equals_eager(nsys_dir: Path, tmp_path: Path, source: str):
    path = nsys_dir / source
    eager = open_trace(path, OpenOptions(cache_dir=tmp_path / "eager", defer_details=False))
    lazy = OpenOptions(cache_dir=tmp_path / "lazy")
    first = open_trace(path, lazy)
    first.complete_all()  # converts the details and keeps them in the entry
    entry = Path(first.meta.cache_path or "")
    for name in ("kernels", "api"):
        stored = ipc.open_file(pa.memory_map(str(entry / f"{name}.details.arrow"))).read_all()
        assert stored.column_names == [
            f.name for f in schema.TABLES[name] if f.name in schema.DETAIL_COLUMNS[name]
        ]
        assert stored.num_rows == eager.table(name).num_rows
    again = open_trace(path, lazy)
    assert again.meta.from_cache and set(again.pending) == {"api", "kernels"}
    for name in ("kernels", "api"):
        assert again.table(name).equals(eager.table(name)), name
