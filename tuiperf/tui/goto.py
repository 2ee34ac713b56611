"""`tuiperf REPORT --goto ID`: the viewer opened at an event, a stretch of time or a finding.

IDs are those `analyze --format markdown|json` prints (tuiperf.analysis.ids): `kernels:12`
selects that event and zooms the timeline to it, as Enter in the events table does;
`at:START+DURATION` zooms to the stretch; a finding's id runs the analysis (in a worker,
after the first screen) and goes to the finding's first evidence row. An Nsight Compute
kernel (`ncu_kernels:ID`, or a finding of the ncu report alone pointing at one) goes to the
first launch linked to it; one linked to none ends the app with a usage error (exit 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from textual import work

from tuiperf.analysis.ids import NCU_TABLE, Target, finding_ids, target_of
from tuiperf.errors import UsageError
from tuiperf.load.open import OpenOptions
from tuiperf.model.ncu.metrics import KernelMetrics
from tuiperf.model.timeline.lanes import LaneSet
from tuiperf.model.trace import Trace
from tuiperf.tui.app import TuiperfApp, run_app
from tuiperf.tui.messages import EventSelected
from tuiperf.tui.widgets.events_table import EventsTable
from tuiperf.tui.widgets.timeline import Timeline


def find_finding(trace: Trace, ncu: KernelMetrics | None, fid: str) -> Target | None:
    """Where finding `fid` points (its first evidence row), None when the report has none
    of that id or the finding has no event or time to show. An id `analyze` gave the
    Nsight Compute report alone (`ncu:Rule@ncu_kernels:3`) is looked up there: it points
    at an ncu kernel, which `go` takes to its linked launch."""
    from tuiperf.analysis.engine import analyze

    runs = [(trace, ncu)] + ([(None, ncu)] if ncu is not None else [])
    for t, km in runs:
        result = analyze(t, km)
        for f, found in zip(result.findings, finding_ids(result.findings), strict=True):
            if found == fid:
                return target_of(f)
    return None


class GotoApp(TuiperfApp):
    """The viewer, which goes to `goto` once the report is on screen."""

    def __init__(self, *args: Any, goto: Target, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.goto = goto
        #: what the viewer was taken to (None until then; a note when it could not)
        self.went: Target | None = None
        self.goto_note = ""

    def _loaded(self, trace: Trace, lanes: LaneSet) -> None:
        super()._loaded(trace, lanes)
        if self.goto.finding:
            self._resolve(trace, self.goto.finding)
        else:
            self.call_after_refresh(self.go, self.goto)

    @work(thread=True, name="goto", exit_on_error=False)
    def _resolve(self, trace: Trace, fid: str) -> None:
        target = find_finding(trace, getattr(self, "ncu", None), fid)
        self.call_from_thread(self.go, target, fid)

    def go(self, t: Target | None, fid: str = "", tries: int = 100) -> None:
        """Go to `t` once the events table is up (it follows the selection)."""
        tables = self.query(EventsTable)
        if tries and (not tables or tables.first().view is None):
            self.set_timer(0.05, lambda: self.go(t, fid, tries - 1))
            return
        if t is None:
            self._say(f"--goto {fid}: no finding with that id here (or it has no event)")
            return
        if t.table == NCU_TABLE and t.row is not None:
            launch = self._launch_of(t.row)
            if launch is None:
                return
            t = launch
        timeline = self.query_one(Timeline)
        if t.table and t.row is not None:
            n = self.trace.table(t.table).num_rows if self.trace is not None else 0
            if not 0 <= t.row < n:
                self._say(f"--goto {t.table}:{t.row}: the report has {n:,} {t.table} rows")
                return
            self.on_event_selected(EventSelected(t.table, t.row, "goto", details=True))
            sel = timeline.selection
            if sel is not None:
                timeline.set_viewport(timeline.vp.fit_range(sel.start, sel.end, 2.0), push=True)
        elif t.start_ns is not None and t.end_ns is not None:
            end = max(t.end_ns, t.start_ns + 1)
            timeline.set_viewport(timeline.vp.fit_range(t.start_ns, end), push=True)
        self.went = t

    def _launch_of(self, kernel_id: int) -> Target | None:
        """The first launch that ncu kernel `kernel_id` is linked to; None (and the app
        ends with a usage error, exit 2) when the result has no place on this timeline."""
        link = getattr(self, "ncu_link", None)
        rows = link.rows_of.get(kernel_id) if link is not None else None
        if rows is None or not len(rows):
            self._failed(UsageError(
                f"--goto {NCU_TABLE}:{kernel_id}: that Nsight Compute result has no place on "
                "this timeline (it is linked to no kernel launch in it)"
            ))  # fmt: skip
            return None
        return Target(table="kernels", row=int(rows[0]))

    def _say(self, text: str) -> None:
        self.goto_note = text
        self.notify(text, severity="warning", markup=False, timeout=8)


def run_app_at(path: Path, args: argparse.Namespace, opts: OpenOptions, goto: Target) -> int:
    """`run_app`, with the viewer going to `goto` once the report is loaded."""
    return run_app(path, args, opts, GotoApp, goto=goto)
