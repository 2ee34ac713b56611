"""The memory pane (issue 33; `M` on the timeline): what `tuiperf memory` reports, as a
list, over a chart of allocated and reserved bytes across the whole recording. Enter on a
line that names a moment (a peak, a step's start, an out-of-memory) puts the timeline's
cursor there; `g` goes to the peak. `tuiperf snap.pickle` opens it alone (`run_memory`).

The report is the one `tuiperf memory` builds (analysis/gpumem); its lines are
report/memory_pane.py's. This screen only draws them and dispatches keys.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import ClassVar

import numpy as np
from rich.text import Text
from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import WorkerFailed

from tuiperf.analysis.gpumem.summary import DeviceReport, MemoryReport
from tuiperf.errors import TuiperfError
from tuiperf.load.gpumem import tables as T
from tuiperf.load.open import OpenOptions
from tuiperf.model import fmt
from tuiperf.model.timeline.memory_lane import MemoryCounter
from tuiperf.model.trace import Trace
from tuiperf.report import memory_pane as P
from tuiperf.tui.actions import bindings
from tuiperf.tui.glyphs import asciify, wants_ascii
from tuiperf.tui.run import run_app as run_until_quit
from tuiperf.tui.run import waited_for
from tuiperf.tui.widgets.scrollbars import ascii_scrollbars

#: the timeline rule that finds cudaMalloc/cudaFree inside steady steps (as `tuiperf memory`)
CHURN = "alloc_churn"
BARS = " ▁▂▃▄▅▆▇█"
BARS_ASCII = " _.-:=+*#"
LABEL = 9
STYLES = {P.TITLE: "bold", P.HEAD: "bold", P.DIM: "dim", P.WARN: "yellow", P.BAD: "bold red"}


def read_memory(trace: Trace, path: Path | None) -> MemoryReport | None:
    """What `tuiperf memory REPORT` reports for the viewer's report (None: the report has
    no memory events), with the timeline's allocator churn among the findings."""
    from tuiperf.analysis.engine import AnalyzeOptions, analyze
    from tuiperf.analysis.gpumem.run import memory_report
    from tuiperf.load.gpumem.open import timeline_memory

    data = timeline_memory(trace, path or Path(trace.meta.source))
    if data is None:
        return None
    rep = memory_report(data, trace)
    churn = analyze(trace, options=AnalyzeOptions(only=frozenset({CHURN}))).findings
    rep.findings = sorted([*rep.findings, *churn], key=lambda f: -int(f.severity))
    return rep


def counters(d: DeviceReport) -> dict[str, MemoryCounter]:
    """Allocated and reserved over time as level lanes on one scale (the reserved peak);
    reserved alone for a source that sees only cudaMalloc (nsys)."""
    m = d.curve
    keep = m.time_ns >= 0
    t = m.time_ns[keep]
    order = np.argsort(t, kind="stable")
    t = t[order]
    scale = int(max(d.peak_reserved, d.peak_allocated or 0))
    out = {}
    if m.has_allocated:
        out["allocated"] = MemoryCounter(t, m.allocated[keep][order], scale)
    out["reserved"] = MemoryCounter(t, m.reserved[keep][order], scale)
    return out


def chart_lines(rep: MemoryReport, width: int, cursor: int | None, ascii_only: bool) -> Text:
    """Per device, allocated and reserved over the whole recording in eighths of the
    reserved peak, the peaks' columns reversed and the cursor's time underlined."""
    out = Text()
    bars = BARS_ASCII if ascii_only else BARS
    cols = max(width - LABEL - 1, 1)
    for d in rep.devices:
        cs = counters(d)
        times = np.concatenate([c.times for c in cs.values()])
        if len(times) == 0:
            continue
        lo, hi = int(times.min()), int(times.max()) + 1
        edges = np.linspace(lo, hi, cols + 1)
        at = (
            int((cursor - lo) * cols // (hi - lo))
            if cursor is not None and lo <= cursor < hi
            else -1
        )
        for name, c in cs.items():
            label = f"{'alloc' if name == 'allocated' else 'reserved'}"
            if len(rep.devices) > 1:
                label = f"{d.device} {label}"
            out.append(f"{label[:LABEL]:<{LABEL}}|", "bold")
            levels, peak = c.levels(edges).tolist(), c.peak_column(edges)
            for k, v in enumerate(levels):
                style = "reverse" if k == peak else ("underline" if k == at else "green")
                out.append(bars[v] if v or k != at else "|", style)
            out.append("\n")
        left = fmt.duration(lo, ascii_only)
        right = fmt.duration(hi, ascii_only)
        out.append(" " * (LABEL + 1) + left + right.rjust(max(cols - len(left), 1)) + "\n", "dim")
    return out


class MemoryList(OptionList):
    """The report's lines; Enter on one that names a moment goes there."""


class MemoryScreen(Screen[int | None]):
    """The memory pane; dismissed with the moment to show on the timeline (or None)."""

    SCOPED_CSS = False
    DEFAULT_CSS = """
    MemoryScreen > #memory-chart { height: auto; max-height: 9; padding: 0 1; }
    MemoryScreen > #memory-list { height: 1fr; border: none; }
    MemoryScreen > #memory-list:focus { border: none; }
    """
    BINDINGS: ClassVar = bindings("memory")

    def __init__(self, report: MemoryReport | None, ascii_only: bool, root: bool = False,
                 waiting: str = "") -> None:  # fmt: skip
        super().__init__()
        self.report, self.ascii_only, self.root = report, ascii_only, root
        self.waiting = waiting
        self.lines: list[P.PaneLine] = []

    def compose(self) -> ComposeResult:
        yield Static(id="memory-chart")
        yield MemoryList(id="memory-list")
        yield Footer()

    def on_mount(self) -> None:
        if self.ascii_only:
            self.add_class("-ascii")
        self.show(self.report)
        self.query_one(MemoryList).focus()

    def show(self, report: MemoryReport | None, waiting: str = "") -> None:
        self.report = report
        self.waiting = waiting or self.waiting
        ol = self.query_one(MemoryList)
        if report is None:
            ol.set_options([Option(self._plain(self.waiting or "No GPU memory events."))])
            return
        self.lines = P.pane_lines(report, self.ascii_only)
        ol.set_options([Option(self._line(x)) for x in self.lines])
        self.action_peak()

    def _plain(self, text: str) -> str:
        return asciify(text) if self.ascii_only else text

    def _line(self, line: P.PaneLine) -> Text:
        mark = ">" if self.ascii_only else "▸"
        text = Text(self._plain(line.text), STYLES.get(line.kind, ""))
        if line.time_ns is not None:
            text.append(f"  {mark}", "dim")
        return text

    def _draw_chart(self) -> None:
        if self.report is None:
            return
        cursor = self._time(self.query_one(MemoryList).highlighted)
        width = max(self.size.width - 2, LABEL + 2)
        chart = chart_lines(self.report, width, cursor, self.ascii_only)
        self.query_one("#memory-chart", Static).update(chart)

    def on_resize(self, event: events.Resize) -> None:
        self._draw_chart()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._draw_chart()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.action_jump()

    def _time(self, index: int | None) -> int | None:
        if index is None or not 0 <= index < len(self.lines):
            return None
        return self.lines[index].time_ns

    def peak_index(self) -> int | None:
        """The line of the main device's allocated (else reserved) peak."""
        main = self.report.main if self.report is not None else None
        if main is None:
            return None
        want = P.peak_time(main)
        for i, line in enumerate(self.lines):
            if line.time_ns is not None and line.time_ns == want and line.device == main.device:
                return i
        return None

    def action_peak(self) -> None:
        i = self.peak_index()
        if i is not None:
            self.query_one(MemoryList).highlighted = i
            self._draw_chart()

    def action_move(self, step: int) -> None:
        ol = self.query_one(MemoryList)
        (ol.action_cursor_down if step > 0 else ol.action_cursor_up)()

    def action_jump(self) -> None:
        t = self._time(self.query_one(MemoryList).highlighted)
        if t is None:
            self.notify("This line names no moment: Enter on a peak, a step or an OOM.",
                        timeout=3)  # fmt: skip
        elif self.root:
            self.notify(f"at {fmt.duration(t, self.ascii_only)} (no timeline: a snapshot alone)",
                        timeout=3)  # fmt: skip
        else:
            self.dismiss(t)

    def action_back(self) -> None:
        if self.root:
            self.app.exit(0)
        else:
            self.dismiss(None)


class MemoryApp(App[int]):
    """`tuiperf snap.pickle`: the snapshot read in a worker, then the memory pane alone."""

    CSS_PATH = "../app.tcss"
    TITLE = "tuiperf memory"
    BINDINGS: ClassVar = [Binding("escape,q", "quit_app", "Quit", show=False, id="memory.cancel")]

    def __init__(self, path: Path, ascii_only: bool = False, show_traceback: bool = False):
        super().__init__()
        self.path, self.ascii_only, self.show_traceback = path, ascii_only, show_traceback
        self.error: TuiperfError | None = None
        self.report: MemoryReport | None = None

    def on_mount(self) -> None:
        ascii_scrollbars(self.ascii_only)
        waiting = f"Reading {self.path.name} …"
        self.push_screen(MemoryScreen(None, self.ascii_only, root=True, waiting=waiting))
        self.load()

    @work(thread=True, exclusive=True, name="load", exit_on_error=True)
    @waited_for  # it stops once cancelled; its cleanup (a half-made entry) must run
    def load(self) -> None:
        from tuiperf.analysis.gpumem.run import memory_report
        from tuiperf.load.gpumem.snapshot import load_snapshot

        try:
            rep = memory_report(load_snapshot(self.path))
        except TuiperfError as e:
            self.call_from_thread(self._failed, e)
            return
        self.call_from_thread(self._loaded, rep)

    def _loaded(self, rep: MemoryReport) -> None:
        self.report = rep
        screen = self.screen
        if isinstance(screen, MemoryScreen):
            screen.show(rep)

    def _failed(self, error: TuiperfError) -> None:
        self.error = error
        self.exit(return_code=int(error.code))

    def on_unmount(self) -> None:
        ascii_scrollbars(False)

    def get_key_display(self, binding: Binding) -> str:
        text = super().get_key_display(binding)
        return asciify(text) if self.ascii_only else text

    def action_quit_app(self) -> None:
        self.exit(0)

    def _print_error_renderables(self) -> None:
        if self._exception is not None and not self.show_traceback:
            self._exit_renderables.clear()
        super()._print_error_renderables()


def run_memory(path: Path, args: argparse.Namespace, opts: OpenOptions) -> int:
    """`tuiperf snap.pickle`: the memory pane of a snapshot; a bad pickle is one line."""
    del opts  # a snapshot is not cached
    app = MemoryApp(path, wants_ascii(getattr(args, "ascii", False)),
                    bool(getattr(args, "debug", False)))  # fmt: skip
    rc = run_until_quit(app, mouse=not getattr(args, "no_mouse", False))
    if app.error is not None:
        raise app.error
    crash: BaseException | None = app._exception
    if isinstance(crash, WorkerFailed):
        crash = crash.error
    if crash is not None:
        raise crash
    return int(rc or app.return_code or 0)


def memory_lane_keys(rep: MemoryReport) -> dict[int, dict[str, MemoryCounter]]:
    """Per device, the level lanes the timeline gains (torch.profiler and snapshots: nsys
    reports have their reserved lane from the start)."""
    if rep.kind == T.NSYS:
        return {}
    return {d.device: counters(d) for d in rep.devices if len(d.curve)}
