"""`tuiperf memory`: the GPU memory report as text, CSV rows and JSON."""

from __future__ import annotations

from typing import Any, TextIO

from tuiperf.analysis.gpumem.live import SiteBytes
from tuiperf.analysis.gpumem.summary import DeviceReport, MemoryReport, Oom, Point
from tuiperf.model import fmt

#: live-at-peak lines shown in text (JSON and CSV have them all)
TEXT_SITES = 10
CSV_HEADER = ["device", "file", "line", "function", "bytes", "allocations"]
SOURCES = {
    "snapshot": "PyTorch allocator snapshot",
    "kineto": "torch.profiler [memory] events",
    "nsys": "nsys CUDA memory usage (the process's cudaMalloc/cudaFree: no allocated level)",
}
#: what `reserved` counts, by source (JSON `reserved_is`): the caching allocator's segments
#: (torch.cuda.memory_reserved()), or every cudaMalloc of the process as nsys records them:
#: those segments and what other code allocated itself (cuBLAS handles, NCCL, extensions)
RESERVED_IS = {"snapshot": "caching_allocator", "kineto": "caching_allocator", "nsys": "cudamalloc"}
#: the text's word for reserved, by source
_RESERVED_WORD = {"nsys": "cudaMalloc'd"}


def site_json(s: SiteBytes) -> dict[str, Any]:
    return s.to_json()


def _point_json(p: Point) -> dict[str, Any]:
    return {
        "at_ns": p.time_ns,
        "allocated_bytes": p.allocated,
        "reserved_bytes": p.reserved,
        "free_cached_bytes": p.free_cached,
        "largest_free_bytes": p.largest_free,
        "categories": {k or "unknown": v for k, v in p.categories.items()},
    }


def _oom_json(o: Oom) -> dict[str, Any]:
    return {
        "device": o.device,
        "requested_bytes": o.requested_bytes,
        "device_free_bytes": o.device_free_bytes,
        **_point_json(o.point),
        "held_by": [site_json(s) for s in o.point.sites],
    }


def _peak_requested(kind: str, m: Any) -> int | None:
    """A snapshot's peak of the bytes asked for (PyTorch's requested_bytes peak, when the
    recording began with the program; blocks are rounded up from it)."""
    if kind != "snapshot" or len(m) == 0:
        return None
    return int(m.requested.max())


def device_json(d: DeviceReport, rep_kind: str = "") -> dict[str, Any]:
    m = d.curve
    peak = m.peak_index
    return {
        "device": d.device,
        "peak_allocated_bytes": d.peak_allocated,
        "peak_reserved_bytes": d.peak_reserved,
        "peak_ns": _time(m.time_ns[peak]) if peak >= 0 else None,
        **_point_json(d.at),
        "allocated_before_recording_bytes": m.before_allocated if m.has_allocated else None,
        "peak_requested_bytes": _peak_requested(rep_kind, m),
        "static_bytes": m.static_bytes,
        "events": len(m),
        "top_sites": [site_json(s) for s in d.at.sites],
        "steps": [
            {
                "label": s.label,
                "start_ns": s.start_ns,
                "allocated_bytes": s.allocated,
                "reserved_bytes": s.reserved,
                "steady": s.steady,
            }
            for s in d.steps
        ],
        "trend_bytes_per_step": d.trend_bytes_per_step,
        "steps_source": d.steps_source or None,
        "ooms": [_oom_json(o) for o in d.ooms],
    }


def _time(t: Any) -> int | None:
    return int(t) if t >= 0 else None


def json_report(rep: MemoryReport, rows: int | None = None) -> dict[str, Any]:
    """The keys of the main device (highest peak) at the top, every device in `devices`."""
    devs = [device_json(d, rep.kind) for d in rep.devices]
    main = device_json(rep.main, rep.kind) if rep.main is not None else {}
    ooms = [o for d in devs for o in d["ooms"]]
    return {
        "source": rep.source,
        "kind": rep.kind,
        "reserved_is": RESERVED_IS.get(rep.kind),
        "at": rep.at,
        **{
            k: main.get(k)
            for k in (
                "device",
                "peak_allocated_bytes",
                "peak_reserved_bytes",
                "peak_requested_bytes",
                "peak_ns",
                "at_ns",
                "allocated_bytes",
                "reserved_bytes",
                "free_cached_bytes",
                "largest_free_bytes",
                "trend_bytes_per_step",
                "steps_source",
                "categories",
            )
        },
        "top_sites": main.get("top_sites", []),
        "steps": main.get("steps", []),
        "oom": ooms[0] if ooms else None,
        "findings": [f.to_json(rows) for f in rep.findings],
        "devices": devs,
        "notes": rep.notes,
    }


def csv_rows(rep: MemoryReport) -> list[list[Any]]:
    return [
        [d.device, s.file, s.line, s.function, s.bytes, s.count]
        for d in rep.devices
        for s in d.at.sites
    ]


# -- text ------------------------------------------------------------------------------
#: said above per-step memory when the steps are a repeated kernel pattern
PATTERN_STEPS = (
    "no step ranges in the report: repeats of a kernel pattern stand in, each from one "
    "occurrence of the same kernel to the next, so N+1 iterations make N repeats"
)


def write_text(out: TextIO, rep: MemoryReport, ascii_only: bool = False) -> None:
    w = out.write
    w(f"{fmt.clean(rep.source)}: {SOURCES.get(rep.kind, rep.kind)}\n")
    for d in rep.devices:
        _device_text(w, rep, d, ascii_only)
    if rep.findings:
        w("\nfindings\n")
        for f in rep.findings:
            w(f"  {f.severity.glyph(ascii_only)} {f.title}: {fmt.clean(f.message)}\n")
            w(f"    fix: {fmt.clean(f.fix.text)}\n")
            if f.fix.snippet:
                w("".join(f"      {line}\n" for line in f.fix.snippet.splitlines()))
    for n in rep.notes:
        w(f"note: {fmt.clean(n)}\n")


def _when(t: int | None, ascii_only: bool) -> str:
    return "" if t is None else f" at {fmt.duration(t, ascii_only)}"


def _device_text(w: Any, rep: MemoryReport, d: DeviceReport, ascii_only: bool) -> None:
    m = d.curve
    peak = m.peak_index
    t = _time(m.time_ns[peak]) if peak >= 0 else None
    w(f"\nGPU {d.device}  ({fmt.plural(len(m), 'event')})\n")
    if d.peak_allocated is not None:
        w(f"  peak allocated  {fmt.size(d.peak_allocated):>12}{_when(t, ascii_only)}\n")
    word = _RESERVED_WORD.get(rep.kind, "reserved")
    if rep.kind == "nsys":
        w(f"  peak device memory {fmt.size(d.peak_reserved):>9}  (cudaMalloc'd by the process)\n")
    else:
        w(f"  peak reserved   {fmt.size(d.peak_reserved):>12}\n")
    if m.static_bytes:
        w(f"  static          {fmt.size(m.static_bytes):>12}  (module globals)\n")
    p = d.at
    label = "at the peak" if rep.at == "peak" else f"at {rep.at} ns"
    w(f"  {label}: {word} {fmt.size(p.reserved)}")
    if p.allocated is not None:
        w(f", allocated {fmt.size(p.allocated)}, cached free {fmt.size(p.free_cached)}")
    w("\n")
    if p.largest_free is not None:
        w(f"    largest free block {fmt.size(p.largest_free)}\n")
    title = "live by operator or user function (its def line)" if rep.kind == "kineto" else ""
    _sites_text(w, p.sites, f"  {title or 'live by source line'}")
    _categories_text(w, p.categories)
    _steps_text(w, d, word)
    for o in d.ooms:
        _oom_text(w, o, ascii_only)


def _sites_text(w: Any, sites: list[SiteBytes], title: str) -> None:
    if not sites:
        return
    w(f"{title}:\n")
    for s in sites[:TEXT_SITES]:
        where = s.file if s.line == 0 else f"{s.file.rsplit('/', 1)[-1]}:{s.line} ({s.function})"
        w(f"    {fmt.size(s.bytes):>12}  {s.count:>6}  {fmt.clean(where, 80)}\n")
    if len(sites) > TEXT_SITES:
        w(f"    … {len(sites) - TEXT_SITES} more lines (--format json or csv has them all)\n")


def _categories_text(w: Any, cats: dict[str, int]) -> None:
    known = {k: v for k, v in cats.items() if k}
    if not known:
        return
    parts = sorted(cats.items(), key=lambda kv: -kv[1])
    w("  by what it is for: ")
    w(", ".join(f"{k or 'unknown'} {fmt.size(v)}" for k, v in parts) + "\n")


def _steps_text(w: Any, d: DeviceReport, word: str = "reserved") -> None:
    if not d.steps:
        return
    w("  at each step's start:\n")
    if d.steps_source == "pattern":
        w(f"    ({PATTERN_STEPS})\n")
    for s in d.steps:
        a = "" if s.allocated is None else f"allocated {fmt.size(s.allocated):>10}  "
        tag = "" if s.steady else "  (start-up)"
        w(f"    {fmt.clean(s.label, 24):<24} {a}{word} {fmt.size(s.reserved):>10}{tag}\n")
    if d.trend_bytes_per_step is not None:
        w(f"    trend over the steady steps: {fmt.size(d.trend_bytes_per_step)} a step\n")


def _oom_text(w: Any, o: Oom, ascii_only: bool) -> None:
    p = o.point
    free = (
        ""
        if o.device_free_bytes is None
        else f", {fmt.size(o.device_free_bytes)} free on the device"
    )
    w(
        f"  out of memory{_when(p.time_ns, ascii_only)}: "
        f"asked for {fmt.size(o.requested_bytes)}{free}\n"
    )
    w(
        f"    reserved {fmt.size(p.reserved)}, allocated {fmt.size(p.allocated)}, "
        f"cached free {fmt.size(p.free_cached)}"
    )
    if p.largest_free is not None:
        w(f", largest free block {fmt.size(p.largest_free)}")
    w("\n")
    _sites_text(w, p.sites, "    held by")
