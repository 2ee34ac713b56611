"""Tell what a path holds from its bytes (and, for directories, its files)."""

from __future__ import annotations

import os
from pathlib import Path

from tuiperf.errors import BadReportError, UsageError

NSYS_SQLITE = "nsys-sqlite"
NSYS_PARQUETDIR = "nsys-parquetdir"
NSYS_ARROWDIR = "nsys-arrowdir"
NSYS_REP = "nsys-rep"
NCU_REP = "ncu-rep"
NCU_CSV = "ncu-csv"
KINETO = "kineto"
TUIPERF_DIR = "tuiperf-arrow"
#: a PyTorch allocator snapshot (`torch.cuda.memory._dump_snapshot`): a pickle
TORCH_SNAPSHOT = "torch-memory-snapshot"

_MAGIC = [
    (b"SQLite format 3\x00", NSYS_SQLITE),
    (b"NVIDIA Tegra Profiler Report", NSYS_REP),
    (b"NVR\x00", NCU_REP),
]

#: tables whose presence marks a directory as an nsys export
_NSYS_MARKERS = (
    "StringIds",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "NVTX_EVENTS",
    "META_DATA_EXPORT",
    "TARGET_INFO_SESSION_START_TIME",
)


def detect(path: Path) -> str:
    """The format of `path`, or a one-line error saying why it is not a report."""
    if not os.path.lexists(path):
        raise UsageError(f"{path}: no such file or directory")
    if path.is_dir():
        return _detect_dir(path)
    if not path.is_file():
        raise BadReportError(f"{path}: not a regular file")
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError as e:
        raise BadReportError(f"{path}: cannot read ({e.strerror or e})") from e
    if not head:
        raise BadReportError(f"{path}: the file is empty")
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if head[:1] == b"\x80" and len(head) > 1 and 2 <= head[1] <= 5:  # pickle PROTO 2-5
        return TORCH_SNAPSHOT
    return _detect_text(path, head)


def _detect_text(path: Path, head: bytes) -> str:
    name = path.name.lower()
    if head.startswith(b"\x1f\x8b") or head.lstrip().startswith(b"{"):
        return KINETO
    if name.endswith(".csv") or head.startswith(b'"ID"') or head.startswith(b"==PROF=="):
        return NCU_CSV
    if name.endswith((".nsys-rep", ".qdrep")):
        raise BadReportError(f"{path}: not an Nsight Systems report (unknown header)")
    if name.endswith(".ncu-rep"):
        raise BadReportError(f"{path}: not an Nsight Compute report (unknown header)")
    if name.endswith((".sqlite", ".db")):
        raise BadReportError(f"{path}: not an SQLite database")
    raise BadReportError(
        f"{path}: unrecognised format; expected .nsys-rep, an nsys export (sqlite, "
        "parquetdir, arrowdir), .ncu-rep, an ncu CSV or a torch.profiler JSON trace"
    )


def _detect_dir(path: Path) -> str:
    try:
        names = {p.name for p in path.iterdir()}
    except OSError as e:
        raise BadReportError(f"{path}: cannot list directory ({e.strerror or e})") from e
    if "manifest.json" in names and any(n.endswith(".arrow") for n in names):
        return TUIPERF_DIR
    for suffix, kind in ((".parquet", NSYS_PARQUETDIR), (".arrow", NSYS_ARROWDIR)):
        if any(f"{m}{suffix}" in names for m in _NSYS_MARKERS):
            return kind
    raise BadReportError(
        f"{path}: directory holds no Nsight Systems export (parquetdir or arrowdir)"
    )
