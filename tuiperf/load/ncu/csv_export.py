"""Read ncu's CSV exports into the KernelMetrics tables.

* `ncu -i R --csv --page details [--print-units base]`: long, one row per kernel ×
  section × header metric, plus one row per rule result.
* `ncu -i R --csv --page raw`: wide, a units row under the header, one row per kernel.

Columns are found by header name (their set and order change between ncu versions).
Values are formatted strings (`3,072`, `69.54`) in per-row (details) or per-column
(raw) units; they are turned into float64 in base units.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa

from tuiperf.errors import BadReportError
from tuiperf.model.ncu.metrics import make_table, to_base
from tuiperf.model.ncu.names import short_name

DETAILS_REQUIRED = (
    "ID",
    "Kernel Name",
    "Section Name",
    "Metric Name",
    "Metric Unit",
    "Metric Value",
)
#: the non-metric columns of the raw page (the rest are metric names)
ID_COLUMNS = {
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
    "Function Name",
    "Demangled Name",
    "Mangled Name",
    "Estimated Speedup",
    "Section Name",
}
_NVTX_PUSH = "thread Domain:Push/Pop_Range"
_NVTX_START = "Id:Domain:Start/Stop_Range"

#: identifier -> display name of the sections ncu ships. The details page names a
#: section by display name on metric rows and by identifier on rule rows.
_HIER = "GPU Speed Of Light Hierarchical Roofline Chart"
KNOWN_SECTIONS = {
    "SpeedOfLight": "GPU Speed Of Light Throughput",
    "SpeedOfLight_RooflineChart": "GPU Speed Of Light Roofline Chart",
    "SpeedOfLight_HierarchicalDoubleRooflineChart": f"{_HIER} (Double Precision)",
    "SpeedOfLight_HierarchicalHalfRooflineChart": f"{_HIER} (Half Precision)",
    "SpeedOfLight_HierarchicalSingleRooflineChart": f"{_HIER} (Single Precision)",
    "SpeedOfLight_HierarchicalTensorRooflineChart": f"{_HIER} (Tensor Core)",
    "PmSampling": "PM Sampling",
    "PmSampling_WarpStates": "PM Sampling: Warp States",
    "ComputeWorkloadAnalysis": "Compute Workload Analysis",
    "MemoryWorkloadAnalysis": "Memory Workload Analysis",
    "MemoryWorkloadAnalysis_Chart": "Memory Workload Analysis Chart",
    "MemoryWorkloadAnalysis_Tables": "Memory Workload Analysis Tables",
    "SchedulerStats": "Scheduler Statistics",
    "WarpStateStats": "Warp State Statistics",
    "InstructionStats": "Instruction Statistics",
    "Nvlink": "NVLink",
    "Nvlink_Topology": "NVLink Topology",
    "Nvlink_Tables": "NVLink Tables",
    "NumaAffinity": "NUMA Affinity",
    "LaunchStats": "Launch Statistics",
    "Occupancy": "Occupancy",
    "WorkloadDistribution": "GPU and Memory Workload Distribution",
    "SourceCounters": "Source Counters",
}
_BY_NAME = {v: k for k, v in KNOWN_SECTIONS.items()}
_RULE_TYPES = {
    "OPT": "optimization",
    "INF": "ok",
    "WRN": "warning",
    "ERR": "error",
    "ERROR": "error",
    "WARNING": "warning",
    "OK": "ok",
    "INFO": "ok",
}
_NUMBER = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_NO_DATA = {"", "n/a", "N/A", "no data", "(!) n/a"}

#: kernel fields taken from metrics: (field, metric name, section id, details label)
_DERIVED = (
    ("duration_ns", "gpu__time_duration.sum", "SpeedOfLight", "Duration"),
    ("registers", "launch__registers_per_thread", "LaunchStats", "Registers Per Thread"),
    (
        "shared_static",
        "launch__shared_mem_per_block_static",
        "LaunchStats",
        "Static Shared Memory Per Block",
    ),
    (
        "shared_dynamic",
        "launch__shared_mem_per_block_dynamic",
        "LaunchStats",
        "Dynamic Shared Memory Per Block",
    ),
)


def parse_value(cell: str, unit: str) -> tuple[float | None, str | None, str]:
    """(value in base units, string value, base unit) of one formatted cell."""
    cell = (cell or "").strip()
    factor, base = to_base(unit)
    if cell in _NO_DATA:
        return None, None, base
    if _NUMBER.fullmatch(cell):
        digits = cell.replace(",", "")
        if factor == 1.0:
            return float(digits), None, base
        return float(Decimal(digits) * Decimal(repr(factor))), None, base
    return None, cell, base


# --- reading the file ----------------------------------------------------------------------


def _rows(path: Path) -> tuple[list[str], Iterator[list[str]]]:
    """The header and the remaining rows, after any `==PROF==` preamble lines."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise BadReportError(f"{path}: cannot read ({e.strerror or e})") from e
    if not text.strip():
        raise BadReportError(f"{path}: the file is empty (no ncu CSV export)")
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines[:200]):
        if _is_header(line):
            # strict: a file cut inside a quoted cell is an error, not a shorter value
            reader = csv.reader(io.StringIO("".join(lines[i:])), strict=True)
            try:
                return next(reader), reader
            except csv.Error as e:
                raise BadReportError(f"{path}: damaged CSV ({e})") from e
    raise BadReportError(f'{path}: not an Nsight Compute CSV export (no "ID" header row)')


def _is_header(line: str) -> bool:
    if '"ID"' not in line and not line.startswith("ID,"):
        return False
    try:
        cells = next(csv.reader([line]))
    except (csv.Error, StopIteration):
        return False
    return "ID" in cells and bool(_HEADER_HINTS.intersection(cells))


#: columns of which an ncu CSV header has at least one besides "ID"
_HEADER_HINTS = {"Kernel Name", "Section Name", "Metric Name", "Metric Value"}
_DETAILS_HINTS = ("Section Name", "Metric Name", "Metric Value", "Metric Unit", "Rule Name")


def page_of(header: list[str]) -> str:
    if any(c in header for c in _DETAILS_HINTS):
        return "details"  # _index names the details column that is missing, if any
    return "raw"


def load_ncu_csv(path: Path) -> tuple[dict[str, pa.Table], dict[str, Any]]:
    header, rows = _rows(path)
    page = page_of(header)
    try:
        builder = _Builder()
        if page == "details":
            _read_details(path, header, rows, builder)
        else:
            _read_raw(path, header, rows, builder)
    except csv.Error as e:
        raise BadReportError(f"{path}: damaged CSV ({e})") from e
    if not builder.kernels:
        raise BadReportError(f"{path}: the ncu CSV export holds no kernels")
    tables = builder.tables()
    meta = {
        "source": str(path),
        "format": f"ncu-csv-{page}",
        "tool": "Nsight Compute",
        "kernels": tables["kernels"].num_rows,
        "devices": _devices(tables["kernels"]),
    }
    return tables, meta


def _devices(k: pa.Table) -> list[dict[str, Any]]:
    out: dict[Any, dict[str, Any]] = {}
    for dev, name, cc in zip(
        k.column("device").to_pylist(),
        k.column("device_name").to_pylist(),
        k.column("cc").to_pylist(),
        strict=True,
    ):
        out.setdefault(dev, {"device": dev, "name": name, "cc": cc})
    return list(out.values())


def _index(path: Path, header: list[str], required: tuple[str, ...]) -> dict[str, int]:
    idx: dict[str, int] = {}
    for i, h in enumerate(header):
        idx.setdefault(h, i)
        for prefix in (_NVTX_PUSH, _NVTX_START):
            if h.startswith(prefix):
                idx.setdefault(prefix, i)
    missing = [c for c in required if c not in idx]
    if missing:
        raise BadReportError(
            f"{path}: not an ncu CSV export this version understands "
            f"(missing column {missing[0]!r})"
        )
    return idx


def _cell(row: list[str], idx: dict[str, int], name: str) -> str:
    i = idx.get(name)
    return row[i] if i is not None and i < len(row) else ""


def _kernel_id(path: Path, cell: str) -> int:
    try:
        kid = _int64(int(cell.replace(",", "")))
    except ValueError:
        kid = None
    if kid is None:
        raise BadReportError(f"{path}: bad kernel ID {cell[:40]!r} in the ncu CSV")
    return kid


def _int64(n: float | None) -> int | None:
    """`n` as an integer column holds it: None where it is none, not finite, or beyond int64."""
    if n is None or not math.isfinite(n):
        return None
    i = int(n)
    return i if -(2**63) <= i < 2**63 else None


# --- building the tables -------------------------------------------------------------------


class _Builder:
    """Collects kernels, sections, metrics and rules by kernel id, in file order."""

    def __init__(self) -> None:
        self.kernels: dict[int, dict[str, Any]] = {}
        self.sections: dict[int, dict[str, str]] = {}
        self.metrics: dict[int, list[dict[str, Any]]] = {}
        self.rules: dict[int, list[dict[str, Any]]] = {}

    def kernel(self, kid: int, row: list[str], idx: dict[str, int]) -> None:
        if kid not in self.kernels:
            self.kernels[kid] = _kernel_row(kid, row, idx)
            self.sections[kid], self.metrics[kid], self.rules[kid] = {}, [], []

    def section(self, kid: int, sid: str, name: str) -> None:
        self.sections[kid].setdefault(sid, name)

    def tables(self) -> dict[str, pa.Table]:
        ids = sorted(self.kernels)
        for kid in ids:
            _derive(self.kernels[kid], self.metrics[kid])
        sections = [
            {"kernel_id": k, "section_id": sid, "section_name": name, "position": i}
            for k in ids
            for i, (sid, name) in enumerate(self.sections[k].items())
        ]
        return {
            "kernels": make_table("kernels", _columns([self.kernels[k] for k in ids])),
            "sections": make_table("sections", _columns(sections)),
            "metrics": make_table("metrics", _columns([m for k in ids for m in self.metrics[k]])),
            "rules": make_table("rules", _columns([r for k in ids for r in self.rules[k]])),
        }


def _columns(rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    keys = {k for r in rows for k in r}
    return {k: [r.get(k) for r in rows] for k in keys}


def _dims(cell: str) -> list[int | None]:
    nums = re.findall(r"\d+", cell or "")
    return [_int64(int(n)) for n in nums[:3]] if len(nums) >= 3 else [None, None, None]


def _int_or_none(cell: str) -> int | None:
    cell = (cell or "").replace(",", "").strip()
    return _int64(int(cell)) if re.fullmatch(r"-?\d+", cell) else None


def _kernel_row(kid: int, row: list[str], idx: dict[str, int]) -> dict[str, Any]:
    name = _cell(row, idx, "Kernel Name")
    mangled = name if name.startswith("_Z") else None
    tid, push = parse_nvtx_push_pop(_cell(row, idx, _NVTX_PUSH))
    out: dict[str, Any] = {
        "id": kid,
        "name": short_name(name) if not mangled else name,
        "demangled": None if mangled else name,
        "mangled": mangled,
        "device": _int_or_none(_cell(row, idx, "Device")),
        "cc": _cell(row, idx, "CC") or None,
        "context": _int_or_none(_cell(row, idx, "Context")),
        "stream": _int_or_none(_cell(row, idx, "Stream")),
        "process_id": _int_or_none(_cell(row, idx, "Process ID")),
        "process_name": _cell(row, idx, "Process Name") or None,
        "nvtx_tid": tid,
        "nvtx_push_pop": push,
        "nvtx_start_end": parse_nvtx_start_end(_cell(row, idx, _NVTX_START)),
    }
    for p, col in (("grid", "Grid Size"), ("block", "Block Size")):
        for d, v in zip("xyz", _dims(_cell(row, idx, col)), strict=True):
            out[f"{p}_{d}"] = v
    return out


_QUOTED = re.compile(r'"((?:[^"]|"")*)"')


def parse_nvtx_push_pop(cell: str) -> tuple[int | None, list[dict[str, str]]]:
    """`11026  "<default domain>:step 3:none:…"  "<default domain>:forward:…"` ->
    (11026, [{domain, name}, …]) outermost first."""
    cell = (cell or "").strip()
    if not cell:
        return None, []
    head = cell.split(None, 1)[0]
    tid = _int64(int(head)) if head.isdigit() else None
    out = []
    for q in _QUOTED.findall(cell):
        fields = q.replace('""', '"').split(":")
        if len(fields) >= 8:  # domain:name:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg
            out.append({"domain": fields[0], "name": ":".join(fields[1:-6])})
        elif fields:
            out.append({"domain": fields[0], "name": ":".join(fields[1:])})
    return tid, out


def parse_nvtx_start_end(cell: str) -> list[dict[str, str]]:
    out = []
    for q in _QUOTED.findall(cell or ""):
        fields = q.replace('""', '"').split(":")
        if len(fields) >= 9:  # id:domain:name:… (6 trailing attribute fields)
            out.append({"domain": fields[1], "name": ":".join(fields[2:-6])})
    return out


def _derive(kernel: dict[str, Any], metrics: list[dict[str, Any]]) -> None:
    """Fill duration, registers and shared memory from the kernel's metrics."""
    for fld, metric, sid, label in _DERIVED:
        for m in metrics:
            if m["value"] is not None and (
                m["metric"] == metric
                or (m["metric"] is None and m["section_id"] == sid and m["label"] == label)
            ):
                kernel[fld] = m["value"] if fld == "duration_ns" else _int64(m["value"])
                break
    for m in metrics:
        if m["metric"] == "device__attribute_display_name" and m["text"]:
            kernel["device_name"] = m["text"]


# --- the two pages -------------------------------------------------------------------------


def _read_details(path: Path, header: list[str], rows: Iterator[list[str]], b: _Builder) -> None:
    idx = _index(path, header, DETAILS_REQUIRED)
    # metric rows end after "Metric Value"; rule rows carry every column
    need = max(idx[c] for c in DETAILS_REQUIRED) + 1
    for n, row in enumerate(rows, 2):
        if not row or not any(row):
            continue
        _whole(path, row, need, n)
        kid = _kernel_id(path, _cell(row, idx, "ID"))
        if not _cell(row, idx, "Metric Name") and "Rule Name" not in idx:
            raise BadReportError(
                f"{path}: a rule result row, but no 'Rule Name' column (missing column)"
            )
        b.kernel(kid, row, idx)
        section = _cell(row, idx, "Section Name")
        rule = _cell(row, idx, "Rule Name")
        if rule and not _cell(row, idx, "Metric Name"):
            b.section(kid, section, KNOWN_SECTIONS.get(section, section))
            b.rules[kid].append(_details_rule(kid, section, rule, row, idx))
            continue
        sid = _BY_NAME.get(section, section)
        b.section(kid, sid, section)
        b.metrics[kid].append(_details_metric(kid, sid, section, row, idx))


def _details_metric(
    kid: int, sid: str, section: str, row: list[str], idx: dict[str, int]
) -> dict[str, Any]:
    name = _cell(row, idx, "Metric Name")
    value, text, unit = parse_value(_cell(row, idx, "Metric Value"), _cell(row, idx, "Metric Unit"))
    is_id = "__" in name and " " not in name  # --print-metric-name name
    return {
        "kernel_id": kid,
        "section_id": sid,
        "section_name": section,
        "part": "header",
        "metric": name if is_id else None,
        "label": None if is_id else name,
        "unit": unit,
        "value": value,
        "text": text,
    }


def _details_rule(
    kid: int, section: str, rule: str, row: list[str], idx: dict[str, int]
) -> dict[str, Any]:
    code = _cell(row, idx, "Rule Type").strip()
    speedup = _cell(row, idx, "Estimated Speedup").replace(",", "").strip()
    return {
        "kernel_id": kid,
        "section_id": section,
        "rule_id": rule,
        "type": _RULE_TYPES.get(code.upper(), code.lower() or "ok"),
        "message": _cell(row, idx, "Rule Description"),
        "speedup_type": _cell(row, idx, "Estimated Speedup Type") or None,
        "speedup": float(speedup) if _NUMBER.fullmatch(speedup) else None,
        "focus": [],
    }


def detail_labels() -> tuple[dict[str, list[tuple[str, str]]], dict[str, dict[str, Any]]]:
    """metric id -> the (section id, label) places of ncu's details page, and the sections (name,
    order); from ncu/labels.json (written by scripts/ncu_labels.py from real reports)."""
    import json
    from importlib import resources

    raw = json.loads(resources.files("tuiperf.load.ncu").joinpath("labels.json").read_text())
    labels = {m: [(sid, label) for sid, label in places] for m, places in raw["metrics"].items()}
    return labels, raw["sections"]


def _read_raw(path: Path, header: list[str], rows: Iterator[list[str]], b: _Builder) -> None:
    idx = _index(path, header, ("ID", "Kernel Name"))
    labels, sections = detail_labels()
    units = next(rows, None)
    if units is None or _cell(units, idx, "ID").strip():
        raise BadReportError(f"{path}: not an ncu raw-page CSV (no units row under the header)")
    metric_cols = [
        i
        for i, h in enumerate(header)
        if h not in ID_COLUMNS and not h.startswith((_NVTX_PUSH, _NVTX_START))
    ]
    for n, row in enumerate(rows, 3):
        if not row or not any(row):
            continue
        _whole(path, row, len(header), n)
        kid = _kernel_id(path, _cell(row, idx, "ID"))
        b.kernel(kid, row, idx)
        for i in metric_cols:
            cell = row[i] if i < len(row) else ""
            if not cell.strip():
                continue  # not collected for this kernel
            value, text, unit = parse_value(cell, units[i] if i < len(units) else "")
            metric = {"kernel_id": kid, "metric": header[i], "unit": unit, "value": value,
                      "text": text}  # fmt: skip
            places = labels.get(header[i])
            if not places:
                b.metrics[kid].append(metric)
            for sid, label in places or ():  # shown on ncu's details page: section and label
                b.section(kid, sid, sections[sid]["name"])
                b.metrics[kid].append(metric | {"section_id": sid, "label": label, "part": "header",
                                                "section_name": sections[sid]["name"]})  # fmt: skip
    for kid in b.sections:  # sections in ncu's order
        order = sorted(b.sections[kid].items(), key=lambda kv: sections[kv[0]]["order"])
        b.sections[kid] = dict(order)


def _whole(path: Path, row: list[str], need: int, n: int) -> None:
    """ncu writes the cells up to the value of every row: fewer is a cut or damaged file."""
    if len(row) < need:
        raise BadReportError(
            f"{path}: row {n} has {len(row)} cells, fewer than the {need} it needs "
            "(a truncated or damaged export)"
        )
