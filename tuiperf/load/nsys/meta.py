"""Export metadata: tool and schema version, capture options, diagnostics, duration."""

from __future__ import annotations

from tuiperf.load.nsys.tables import NsysReader
from tuiperf.model.trace import TraceMeta


def _pairs(reader: NsysReader, table: str) -> list[tuple[str, str]]:
    t = reader.raw(table, ["name", "value"])
    if t is None:
        return []
    return [(str(n), str(v)) for n, v in zip(t["name"].to_pylist(), t["value"].to_pylist())]


def read_meta(reader: NsysReader, source: str, fmt: str) -> TraceMeta:
    export = dict(_pairs(reader, "META_DATA_EXPORT"))
    capture = [v for n, v in _pairs(reader, "META_DATA_CAPTURE") if n == "CAPTURE_EVENT_TYPE"]
    meta = TraceMeta(
        source=source,
        format=fmt,
        tool="Nsight Systems",
        tool_version=export.get("EXPORT_PRODUCT_VERSION", ""),
        export_schema=export.get("EXPORT_SCHEMA_VERSION", ""),
        capture=capture,
        source_tables=sorted(reader.present),
    )
    details = reader.raw("ANALYSIS_DETAILS", ["duration"])
    if details is not None and details.num_rows:
        meta.duration_ns = details["duration"][0].as_py()
    diag = reader.raw("DIAGNOSTIC_EVENT", ["severity", "text"])
    if diag is not None:
        for sev, text in zip(diag["severity"].to_pylist(), diag["text"].to_pylist()):
            if sev is not None and sev >= 2 and text:
                level = "warning" if sev == 2 else "error"
                meta.diagnostics.append(f"{level}: {text}")
    return meta
