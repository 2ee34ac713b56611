"""The viewer's memory pane as lines (`M`): what `tuiperf memory` reports, one line each,
the lines that name a moment (the peaks, a step's start, an out-of-memory) carrying its
time so that Enter can put the timeline's cursor there. Plain data: the screen styles it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tuiperf.analysis.gpumem.live import SiteBytes
from tuiperf.analysis.gpumem.summary import DeviceReport, MemoryReport, Oom
from tuiperf.model import fmt
from tuiperf.report.gpumem import SOURCES

#: live-at-the-peak lines listed per device (`tuiperf memory --format json` has them all)
TOP_SITES = 8
#: line kinds (the screen's styles)
TITLE, HEAD, PLAIN, DIM, WARN, BAD = "title", "head", "plain", "dim", "warn", "bad"


@dataclass(frozen=True)
class PaneLine:
    text: str
    kind: str = PLAIN
    #: the moment the line is about (report ns), where Enter jumps
    time_ns: int | None = None
    device: int | None = None


def peak_time(d: DeviceReport) -> int | None:
    """When allocated (else reserved) first peaks, on the report's clock."""
    i = d.curve.peak_index
    return _time(d.curve.time_ns, i)


def reserved_peak_time(d: DeviceReport) -> int | None:
    m = d.curve
    return _time(m.time_ns, int(np.argmax(m.reserved)) if len(m) else -1)


def _time(times: np.ndarray, i: int) -> int | None:
    return int(times[i]) if 0 <= i < len(times) and times[i] >= 0 else None


def pane_lines(rep: MemoryReport, ascii_only: bool = False) -> list[PaneLine]:
    out = [PaneLine(f"{fmt.clean(rep.source)}: {SOURCES.get(rep.kind, rep.kind)}", TITLE)]
    main = rep.main
    devices = sorted(rep.devices, key=lambda d: d is not main)
    for d in devices:
        out += device_lines(d, ascii_only)
    if rep.findings:
        out.append(PaneLine("findings", HEAD))
        for f in rep.findings:
            kind = {3: BAD, 2: WARN}.get(int(f.severity), PLAIN)
            glyph = f.severity.glyph(ascii_only)
            out.append(PaneLine(f"  {glyph} {f.title}: {fmt.clean(f.message)}", kind))
            out.append(PaneLine(f"    fix: {fmt.clean(f.fix.text)}", DIM))
    out += [PaneLine(f"note: {fmt.clean(n)}", DIM) for n in rep.notes]
    return out


def _at(t: int | None, ascii_only: bool) -> str:
    return "" if t is None else f" at {fmt.duration(t, ascii_only)}"


def device_lines(d: DeviceReport, ascii_only: bool) -> list[PaneLine]:
    dev, p = d.device, d.at
    out = [PaneLine(f"GPU {dev}  ({fmt.plural(len(d.curve), 'event')})", HEAD, device=dev)]
    t = peak_time(d)
    if d.peak_allocated is not None:
        text = f"  peak allocated {fmt.size(d.peak_allocated):>11}{_at(t, ascii_only)}"
        out.append(PaneLine(text, PLAIN, t, dev))
    tr = reserved_peak_time(d)
    text = f"  peak reserved  {fmt.size(d.peak_reserved):>11}{_at(tr, ascii_only)}"
    out.append(PaneLine(text, PLAIN, tr, dev))
    if p.allocated is not None:
        free = f"  at the peak: cached free (reserved - allocated) {fmt.size(p.free_cached)}"
        out.append(PaneLine(free, PLAIN, p.time_ns, dev))
    if p.largest_free is not None:
        out.append(PaneLine(f"    largest free block {fmt.size(p.largest_free)}", PLAIN))
    out += _sites(p.sites, "  live at the peak by source line:", dev)
    cats = sorted(p.categories.items(), key=lambda kv: -kv[1])
    if any(k for k, _ in cats):
        by = ", ".join(f"{k or 'unknown'} {fmt.size(v)}" for k, v in cats)
        out.append(PaneLine(f"  by what it is for: {by}", PLAIN))
    out += _steps(d, ascii_only)
    for o in d.ooms:
        out += _oom(o, ascii_only)
    return out


def site_text(s: SiteBytes) -> str:
    if s.line == 0:
        return fmt.clean(s.file, 60)
    return fmt.clean(f"{s.file.rsplit('/', 1)[-1]}:{s.line} ({s.function})", 60)


def _sites(sites: list[SiteBytes], title: str, dev: int) -> list[PaneLine]:
    if not sites:
        return []
    out = [PaneLine(title, PLAIN)]
    for s in sites[:TOP_SITES]:
        out.append(PaneLine(f"    {fmt.size(s.bytes):>11} {s.count:>6}  {site_text(s)}", PLAIN))
    if len(sites) > TOP_SITES:
        more = f"    … {len(sites) - TOP_SITES} more lines (tuiperf memory --format json)"
        out.append(PaneLine(more, DIM))
    return out


def _steps(d: DeviceReport, ascii_only: bool) -> list[PaneLine]:
    if not d.steps:
        return []
    out = [PaneLine("  at each step's start:", PLAIN)]
    for s in d.steps:
        alloc = "" if s.allocated is None else f"alloc {fmt.size(s.allocated):>10}  "
        tag = "" if s.steady else "  (not steady)"
        text = f"    {fmt.clean(s.label, 16):<16} {alloc}resv {fmt.size(s.reserved):>10}{tag}"
        out.append(PaneLine(text, PLAIN if s.steady else DIM, s.start_ns, d.device))
    if d.trend_bytes_per_step is not None:
        trend = f"{'+' if d.trend_bytes_per_step >= 0 else '-'}"
        trend += f"{fmt.size(abs(d.trend_bytes_per_step))} a step"
        out.append(PaneLine(f"    trend over the steady steps: {trend}", PLAIN))
    return out


def _oom(o: Oom, ascii_only: bool) -> list[PaneLine]:
    p = o.point
    free = "" if o.device_free_bytes is None else f", {fmt.size(o.device_free_bytes)} free"
    head = f"  out of memory{_at(p.time_ns, ascii_only)}: asked for {fmt.size(o.requested_bytes)}"
    out = [PaneLine(head + free + " on the device", BAD, p.time_ns, o.device)]
    held = f"    reserved {fmt.size(p.reserved)}"
    if p.allocated is not None:
        held += f", allocated {fmt.size(p.allocated)}, cached free {fmt.size(p.free_cached)}"
    if p.largest_free is not None:
        held += f", largest free block {fmt.size(p.largest_free)}"
    out.append(PaneLine(held, PLAIN))
    return out + _sites(p.sites, "    held by:", o.device)
