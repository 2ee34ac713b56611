"""The bundled sample (tuiperf/sample/vit_range, what `make demo` and a bare `tuiperf`
open) is what `tuiperf convert` makes of its source today, table for table.

The sample was written by `tuiperf convert vit_range.sqlite -o tuiperf/sample/vit_range
--compression zstd` from tests/data/nsys/vit_range.sqlite.xz (the SQLite export of
vit_range.nsys-rep), with the manifest's `source` then set to the file's name and
"(bundled sample)". A loader change that alters any table, column or row, or the schema
version, and leaves the sample as it was fails here: re-convert the sample with it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, nsys_report
from tuiperf.cli import main
from tuiperf.load.cache.store import read_ipc

SAMPLE = REPO / "tuiperf" / "sample" / "vit_range"


def _manifest(folder: Path) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((folder / "manifest.json").read_text())
    return manifest


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample") / "vit_range"
    src = nsys_report("vit_range")
    argv = ["convert", str(src), "-o", str(out), "--compression", "zstd", "--no-cache"]
    assert main(argv) == 0
    return out


def test_same_files_and_manifest(fresh: Path) -> None:
    assert sorted(p.name for p in SAMPLE.iterdir()) == sorted(p.name for p in fresh.iterdir())
    want, got = _manifest(fresh), _manifest(SAMPLE)
    assert got["schema_version"] == want["schema_version"]
    assert got["tables"] == want["tables"]
    assert got["meta"]["source"] == f"{Path(want['meta']['source']).name} (bundled sample)"
    assert {k: v for k, v in got["meta"].items() if k != "source"} == {
        k: v for k, v in want["meta"].items() if k != "source"
    }


@pytest.mark.parametrize("table", sorted(_manifest(SAMPLE)["tables"]))
def test_table_equals_a_fresh_conversion(table: str, fresh: Path) -> None:
    got, want = read_ipc(SAMPLE / f"{table}.arrow"), read_ipc(fresh / f"{table}.arrow")
    assert got.schema.equals(want.schema, check_metadata=True), (got.schema, want.schema)
    assert got.num_rows == want.num_rows
    for name in want.column_names:
        assert got.column(name).equals(want.column(name)), f"{table}.{name}"
