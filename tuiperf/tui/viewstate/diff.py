"""What the TUI's diff view shows, kept apart from the terminal (no Textual here).

The comparison is `tuiperf.analysis.diff.compare`'s: this holds which report is the baseline (a
swap compares again with the roles exchanged, from the measured sides), which steady step
of each report is on screen (both timelines start at their step's start and share one
time scale), which table is listed, its rows largest change first, and their cells.
The screen (`tuiperf.tui.screens.diff`) draws this state and dispatches keys to it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from tuiperf.analysis.diff.compare import (
    Diff,
    Row,
    api_name,
    compare,
    diff_traces,
    finding_status,
    loose_name,
    size_class,
    template_base,
)
from tuiperf.model import arrays as A
from tuiperf.model import fmt
from tuiperf.model.ncu.names import normalize
from tuiperf.model.timeline.lanes import Lane, LaneSet
from tuiperf.model.timeline.viewport import STEP_FRACTION, ZOOM_FACTOR, Viewport
from tuiperf.model.trace import Trace
from tuiperf.report.diff import change_text, value_text, verdict_line

#: (key, title) of the tables `t` / `T` cycle through; "names" merges the three by-name
#: tables (kernels, copies, CUDA API) into one, largest change first
SECTIONS = (
    ("names", "kernels, copies and CUDA calls"),
    ("kernels", "kernels"),
    ("copies", "memcpy/memset by kind and size"),
    ("api", "CUDA API calls"),
    ("budget", "step budget parts"),
    ("findings", "findings (saving as % of step)"),
)
KIND = {"kernels": "kernel", "copies": "copy", "api": "api", "budget": "part", "findings": ""}
#: the time shown is the longer of the two steps and this share of it again
MARGIN = 0.04
#: lane kinds in the order the diff view lists them (kernels first: busy or idle GPU)
#: the narrowest window, as a fraction of the shared span
MIN_ZOOM = 1e-6
LANE_ORDER = {"kernel": 0, "graph": 0, "nvtx": 1, "memcpy": 2, "api": 3, "memset": 4}


@dataclass(frozen=True)
class StepSpan:
    """Steady step `index` (of `count`) of one report: [start_ns, end_ns)."""

    index: int
    count: int
    label: str
    start_ns: int
    end_ns: int

    @property
    def wall_ns(self) -> int:
        return self.end_ns - self.start_ns


@dataclass(frozen=True)
class Col:
    """A column of the table: key, header, width (0: the rest), right-aligned."""

    key: str
    header: str
    width: int
    right: bool


COLUMNS = (
    Col("kind", "Kind", 6, False),
    Col("name", "Name", 0, False),
    Col("before", "Before", 9, True),
    Col("after", "After", 9, True),
    Col("change", "Change", 10, True),
    Col("pct", "Chg %", 8, True),
    Col("status", "Status", 8, False),
)


class DiffView:
    """Two reports compared: baseline, shown steps, listed table and its rows."""

    def __init__(
        self, diff: Diff, before: Trace, after: Trace, lanes: list[LaneSet] | None = None
    ) -> None:
        self.diff = diff
        self.traces = [before, after]
        #: each report's timeline lanes (given by the viewer), labelled with their GPU or
        #: process (the lanes have no group rows here), swapped with the reports
        self.lanes = None if lanes is None else [placed_lanes(ls) for ls in lanes]
        self.section = 0
        #: the window inside the shared span both timelines show: its width and its left
        #: edge as fractions of the span (1 and 0: the whole span)
        self.zoom = 1.0
        self.offset = 0.0
        self.step_pos = [typical_step(diff, 0), typical_step(diff, 1)]
        self._rows: list[Row] | None = None

    @classmethod
    def of(
        cls,
        before: Trace,
        after: Trace,
        names: tuple[str, str],
        lanes: list[LaneSet] | None = None,
    ) -> DiffView:
        return cls(diff_traces(before, after, *names), before, after, lanes)

    # --- the comparison -----------------------------------------------------------------

    @property
    def verdict(self) -> str:
        return verdict_line(self.diff)

    @property
    def names(self) -> tuple[str, str]:
        return self.diff.before.path, self.diff.after.path

    def swap(self) -> None:
        """The other report becomes the baseline: compared again, roles exchanged (the
        sides were measured once; only the matching is done again)."""
        d = self.diff
        self.traces.reverse()
        if self.lanes is not None:
            self.lanes.reverse()
        self.diff = compare(d.after, d.before, self.traces[0], self.traces[1])
        self.step_pos.reverse()
        self._rows = None

    # --- the table ----------------------------------------------------------------------

    @property
    def section_key(self) -> str:
        return SECTIONS[self.section][0]

    @property
    def section_title(self) -> str:
        scope = "per steady step" if self.diff.per_step else "whole report totals"
        if self.section_key == "findings":
            scope = "saving as % of step"
        return f"{SECTIONS[self.section][1].split(' (')[0]} ({scope}), largest change first"

    def cycle_section(self, direction: int) -> None:
        self.section = (self.section + direction) % len(SECTIONS)
        self._rows = None

    def rows(self) -> list[Row]:
        """The listed table's rows, the largest change (either way) first."""
        if self._rows is None:
            self._rows = by_change(self._section_rows())
        return self._rows

    def _section_rows(self) -> list[Row]:
        d, key = self.diff, self.section_key
        if key == "names":
            return [*d.kernels, *d.copies, *d.api]
        if key == "budget":
            return [r for r in d.budget if r.section == "budget"]
        rows: list[Row] = getattr(d, key)
        return rows

    def columns(self, width: int) -> list[Col]:
        """The columns that fit `width` (the name keeps at least 20 cells)."""
        shown = list(COLUMNS)
        for drop in ("pct", "kind", "status"):
            if sum(c.width + 1 for c in shown) + 20 <= width:
                break
            shown = [c for c in shown if c.key != drop]
        return shown

    def cells(self, pos: int, keys: list[str]) -> list[str]:
        """Row `pos`'s cells for the columns `keys`."""
        r = self.rows()[pos]
        status = finding_status(r) if r.section == "findings" else r.status
        pct = r.change_pct
        values = {
            "kind": KIND.get(r.section, r.section),
            "name": fmt.clean(r.name, 300),
            "before": value_text(r, r.before),
            "after": value_text(r, r.after),
            "change": _change(r),
            "pct": "" if pct is None or r.unit == "pct" else f"{pct:+.1f}%",
            "status": status,
        }
        return [values[k] for k in keys]

    def events_of(self, pos: int, which: int) -> tuple[str, np.ndarray] | None:
        """(table, row numbers) of the events that row `pos` of the listed table counts in
        the baseline (0) or the other report (1), over the whole report; None for a row
        that is not a name of events (a budget part, a finding)."""
        r = self.rows()[pos]
        trace = self.traces[which]
        if r.section == "kernels":
            exact = {k.name for k in self.diff.kernels}
            return "kernels", _name_rows(trace, "kernels", lambda n: _kernel_is(n, r.name, exact))
        if r.section == "api":
            return "api", _name_rows(trace, "api", lambda n: api_name(n) == r.name)
        if r.section == "copies":
            return _copy_rows(trace, r.name)
        return None

    # --- the steps ----------------------------------------------------------------------

    def step(self, which: int) -> StepSpan | None:
        """The shown steady step of the baseline (0) or the other report (1)."""
        side = (self.diff.before, self.diff.after)[which]
        if side.budget is None or not side.n_steps:
            return None
        steps = side.budget.main.steps
        i = min(max(self.step_pos[which], 0), len(steps) - 1)
        s = steps[i]
        return StepSpan(i, len(steps), s.label, s.start_ns, s.end_ns)

    def move_step(self, direction: int) -> bool:
        """The next (previous) steady step in both reports; False when neither moved."""
        moved = False
        for which in (0, 1):
            span = self.step(which)
            if span is None:
                continue
            new = min(max(span.index + direction, 0), span.count - 1)
            moved |= new != span.index
            self.step_pos[which] = new
        return moved

    def span_ns(self) -> float | None:
        """The time both timelines show: the longer shown step, and a margin."""
        walls = [s.wall_ns for s in (self.step(0), self.step(1)) if s is not None]
        return max(walls) * (1 + MARGIN) if walls else None

    def viewport(self, which: int, lanes: LaneSet, columns: int) -> Viewport:
        """The window of one timeline: its step from its start, on the shared scale (the
        zoomed part of it, the same in both); without steps, the whole report."""
        whole = Viewport.fit(lanes.lo, lanes.hi, columns)
        step, span = self.step(which), self.span_ns()
        if step is None or span is None:
            return whole
        pad = span * MARGIN / (1 + MARGIN) / 2
        left = step.start_ns - pad + self.offset * span
        return whole.window(left, left + self.zoom * span)

    # --- zoom and pan inside the compared steps ---------------------------------------

    def zoom_by(self, zoom_in: bool) -> bool:
        """Both timelines zoom about their window's middle; False when nothing changed."""
        new = self.zoom / ZOOM_FACTOR if zoom_in else min(self.zoom * ZOOM_FACTOR, 1.0)
        new = max(new, MIN_ZOOM)
        middle = self.offset + self.zoom / 2
        return self._set(new, middle - new / 2)

    def pan(self, direction: int) -> bool:
        """Both windows move by a tenth of their width, inside the span."""
        return self._set(self.zoom, self.offset + direction * STEP_FRACTION * self.zoom)

    def fit(self) -> bool:
        """Both steps whole again."""
        return self._set(1.0, 0.0)

    def _set(self, zoom: float, offset: float) -> bool:
        offset = min(max(offset, 0.0), 1.0 - zoom)
        changed = (zoom, offset) != (self.zoom, self.offset)
        self.zoom, self.offset = zoom, offset
        return changed

    def window_text(self) -> str:
        """`showing +1.20 ms to +3.40 ms` (of the step) while zoomed, else ""."""
        span = self.span_ns()
        if self.zoom >= 1.0 or span is None:
            return ""
        pad = span * MARGIN / (1 + MARGIN) / 2
        a = self.offset * span - pad
        b = a + self.zoom * span
        return f"showing {_signed(a)} to {_signed(b)} (0: whole step)"

    def title(self, which: int) -> str:
        """What the timeline shows: which report, which step, how long it took."""
        role = ("baseline", "compared")[which]
        name = self.names[which]
        step = self.step(which)
        if step is None:
            return f"{role}: {name} (no steady steps: the whole report)"
        label = fmt.clean(step.label, 40) or "steady step"
        return (
            f"{role}: {name} · {label} ({step.index + 1} of {step.count} steady) · "
            f"{fmt.duration(step.wall_ns)}"
        )


def _signed(ns: float) -> str:
    return ("-" if ns < 0 else "+") + fmt.duration(abs(ns))


def placed_lanes(lanes: LaneSet) -> LaneSet:
    """The lanes labelled with where they run, as the diff view lists them without their
    group rows: `GPU 0 · stream 7 kernels`, `pid 12197 · python3 NVTX` (two processes'
    `python3 NVTX` lanes, or two GPUs' `stream 7`, were the same label)."""
    return replace(lanes, lanes=[replace(ln, label=place_label(ln)) for ln in lanes.lanes])


def place_label(lane: Lane) -> str:
    place = lane.place
    if "device" in place:
        device = place.get("device")
        return f"GPU {device} · {lane.label}" if device is not None else lane.label
    pid = place.get("pid")
    if pid is None:
        return lane.label
    # the main thread's id is the pid: `python3 [718] NVTX` is `pid 718 · python3 NVTX`
    return f"pid {pid} · {lane.label.replace(f' [{pid}] ', ' ', 1)}"


def typical_step(d: Diff, which: int) -> int:
    """The steady step whose time is nearest the median (the one to look at first)."""
    side = (d.before, d.after)[which]
    if not side.n_steps:
        return 0
    walls = np.asarray(side.steps_ns, np.float64)
    return int(np.argmin(np.abs(walls - np.median(walls))))


def by_change(rows: list[Row]) -> list[Row]:
    """Largest change first, either way; then by name (a stable, deterministic order)."""
    return sorted(rows, key=lambda r: (-abs(r.change), r.section, r.name))


def lanes_to_show(lanes: LaneSet, start: float, end: float) -> list[int]:
    """The lanes with events in [start, end): kernels first, then NVTX ranges, copies,
    CUDA calls, memsets and the rest, each kind in the report's order."""
    t0, t1 = int(start), int(end)
    busy = [i for i, lane in enumerate(lanes.lanes) if lane.iv.count_in(t0, t1)]
    return sorted(busy, key=lambda i: (LANE_ORDER.get(lanes.lanes[i].kind, 9), i))


def _change(r: Row) -> str:
    """Signed, in the unit of the values (a name that appeared or vanished: all of it)."""
    if r.unit == "ns":
        sign = "-" if r.change < 0 else "+"
        return "0" if r.change == 0 else sign + fmt.duration(abs(r.change))
    return change_text(r)


def _kernel_is(name: str, row: str, exact: set[str]) -> bool:
    """Whether a kernel of this name is counted in the diff's row `row`: its normalized
    name is the row's, or (a name with no row of its own) its demangler-neutral spelling or
    its template base is."""
    key = normalize(name)
    if key == row:
        return True
    return key not in exact and row in (loose_name(key), template_base(key))


def _name_rows(trace: Trace, table: str, hit: Callable[[str], bool]) -> np.ndarray:
    t = trace.table(table, ["name"])
    if not t.num_rows:
        return np.zeros(0, np.int64)
    codes, values = A.codes(t, "name")
    lut = np.array([hit(v) for v in values] + [False], dtype=bool)
    return np.flatnonzero(lut[codes])


def _copy_rows(trace: Trace, row: str) -> tuple[str, np.ndarray] | None:
    """The copies of one kind and size class (`Host-to-Device ≤64 MiB`, `memset ≤4 KiB`)."""
    table = "memset" if row.startswith("memset ") else "memcpy"
    t = trace.table(table)
    if not t.num_rows:
        return table, np.zeros(0, np.int64)
    sizes = A.ints(t, "bytes", 0)
    kinds = A.strings(t, "copy_kind") if table == "memcpy" else np.full(len(sizes), "memset")
    keys = [f"{k} {size_class(int(b))}" for k, b in zip(kinds, sizes, strict=True)]
    return table, np.flatnonzero(np.array([k == row for k in keys], dtype=bool))
