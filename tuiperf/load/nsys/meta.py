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
    meta.diagnostics += _diagnostics(reader)
    return meta


def _diagnostics(reader: NsysReader) -> list[str]:
    """nsys's warnings and errors, each with the process it is about when it names one
    ("No CUDA events collected" is often a launcher's or a worker's, not the program's)."""
    diag = reader.raw("DIAGNOSTIC_EVENT", ["severity", "text", "globalPid"])
    if diag is None:
        diag = reader.raw("DIAGNOSTIC_EVENT", ["severity", "text"])
    if diag is None:
        return []
    gpids = diag["globalPid"].to_pylist() if "globalPid" in diag.column_names else []
    names = _process_names(reader)
    out = []
    for i, (sev, text) in enumerate(zip(diag["severity"].to_pylist(), diag["text"].to_pylist())):
        if sev is None or sev < 2 or not text:
            continue
        level = "warning" if sev == 2 else "error"
        gpid = gpids[i] if i < len(gpids) else None
        pid = (int(gpid) >> 24) & 0xFFFFFF if gpid is not None and gpid > 0 else None
        who = f"process {pid}" + (f" ({names[pid]})" if pid in names else "") if pid else ""
        out.append(f"{level}: {who}: {text}" if who else f"{level}: {text}")
    return out


def _process_names(reader: NsysReader) -> dict[int, str]:
    t = reader.raw("PROCESSES", ["pid", "name"])
    if t is None:
        return {}
    return {int(p): str(n) for p, n in zip(t["pid"].to_pylist(), t["name"].to_pylist()) if p}
