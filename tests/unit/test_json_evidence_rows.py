"""`analyze --format json` writes evidence rows as it encodes them (report.findings
.EvidenceRows): the same bytes as the list of row dicts it replaces, checked on a table
cut into batches smaller than itself, and its ids by hand."""

from __future__ import annotations

import io

import pyarrow as pa
import pytest

from tuiperf.export import write_json
from tuiperf.report.findings import EvidenceRows

TABLE = pa.table(
    {
        "table": ["kernels", None, "api", None, "kernels", None, "kernels"],
        "row": [4, None, 0, None, 7, None, 1],
        "start_ns": [10, 20, 30, None, 50, 60, 70],
        "duration_ns": [1, 2, None, None, 5, 6, 7],
        "name": ["a", "b", "c", "d", "é", "f", "g"],
        "ratio": [0.5, float("inf"), None, 1.0, 2.0, 3.0, 4.0],
    }
)

BY_HAND = ["kernels:4", "at:20+2", "api:0", "", "kernels:7", "at:60+6", "kernels:1"]


@pytest.mark.parametrize("batch", [1, 3, 7, 100])
def test_rows_and_ids_across_batches(batch, monkeypatch):
    monkeypatch.setattr(EvidenceRows, "BATCH", batch)
    rows = list(EvidenceRows(TABLE))
    assert [r["id"] for r in rows] == BY_HAND
    assert [{k: v for k, v in r.items() if k != "id"} for r in rows] == TABLE.to_pylist()


@pytest.mark.parametrize("batch", [2, 100])
def test_json_is_the_plain_lists_bytes(batch, monkeypatch):
    monkeypatch.setattr(EvidenceRows, "BATCH", batch)
    plain = [{"id": e, **r} for e, r in zip(BY_HAND, TABLE.to_pylist(), strict=True)]
    want, got = io.StringIO(), io.StringIO()
    write_json(want, {"findings": [{"evidence": plain, "n": 1}], "empty": []})
    lazy = {
        "findings": [{"evidence": EvidenceRows(TABLE), "n": 1}],
        "empty": EvidenceRows(TABLE.slice(0, 0)),
    }
    write_json(got, lazy)
    assert got.getvalue() == want.getvalue()
    assert len(EvidenceRows(TABLE)) == 7 and not EvidenceRows(TABLE.slice(0, 0))
