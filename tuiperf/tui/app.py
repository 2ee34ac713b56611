"""The viewer: header, timeline, events area, details panel, footer; loading in a worker."""

from __future__ import annotations

import argparse
import contextlib
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Static
from textual.worker import WorkerFailed, get_current_worker

from tuiperf.bundled import sample_path
from tuiperf.errors import TuiperfError
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.load.progress import Progress
from tuiperf.model import fmt
from tuiperf.model.timeline.lanes import LaneSet, build_lanes
from tuiperf.model.trace import Trace
from tuiperf.tui.actions import bindings
from tuiperf.tui.commands import TuiperfCommands
from tuiperf.tui.glyphs import asciify, glyphs_for, wants_ascii
from tuiperf.tui.messages import (
    EventSelected,
    LoadProgress,
    MatchesChanged,
    NcuKernelChosen,
    RangeMarked,
    SelectionCleared,
    ViewportChanged,
)
from tuiperf.tui.run import run_app as run_until_quit
from tuiperf.tui.run import waited_for
from tuiperf.tui.screens.help import HelpScreen
from tuiperf.tui.widgets import sample_lane, state_lane
from tuiperf.tui.widgets.advice import AdvicePanel
from tuiperf.tui.widgets.events_commands import EventsCommands
from tuiperf.tui.widgets.events_pane import EventsPane
from tuiperf.tui.widgets.header import ReportHeader
from tuiperf.tui.widgets.loading import LoadingPanel
from tuiperf.tui.widgets.scrollbars import ascii_scrollbars
from tuiperf.tui.widgets.side_panel import SidePanel
from tuiperf.tui.widgets.status import StatusLine
from tuiperf.tui.widgets.timeline import Timeline

if TYPE_CHECKING:  # indexed on the first selection, not before the first frame
    from collections.abc import Callable

    from tuiperf.load.progress import OnProgress
    from tuiperf.model.ncu.link import NcuLink
    from tuiperf.model.ncu.metrics import KernelMetrics
    from tuiperf.model.timeline.attribution import NvtxIndex
    from tuiperf.tui.early import EarlyOpen

#: the named phases of a load, in order
PHASES = ("open report", "read tables", "index lanes", "draw")
#: progress messages are posted at most this often (seconds), phase changes always
PROGRESS_INTERVAL = 0.25


class LoadCancelled(Exception):
    """Raised inside the loader when the user pressed Esc."""


class TuiperfApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "tuiperf"
    BINDINGS: ClassVar = [
        *bindings("app"),
        Binding("escape", "escape", "Cancel / close", show=False, id="app.escape"),
    ]
    COMMANDS = App.COMMANDS | {TuiperfCommands, EventsCommands}
    #: < 100 columns the side panel covers the timeline when open; below 120 it stays
    #: collapsed until something is selected (or `i` opens it); from 120 it is always there
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-medium"), (120, "-wide")]

    def __init__(
        self,
        path: Path | None,
        opts: OpenOptions | None = None,
        *,
        ascii_only: bool = False,
        trace: Trace | None = None,
        name: str | None = None,
        ncu_path: Path | None = None,
        ncu_baseline: Path | None = None,
        show_traceback: bool = False,
        early: EarlyOpen | None = None,
    ) -> None:
        super().__init__()
        self.path = path
        #: the report opened from its cache entry while the app started (tui/early.py)
        self.early = early
        #: --debug: print Textual's traceback of an unhandled exception on exit
        self.show_traceback = show_traceback
        self.opts = opts or OpenOptions()
        self.ascii_only = ascii_only
        self.glyphs = glyphs_for(ascii_only)
        self.report_name = name or (path.name if path is not None else "report")
        self.trace: Trace | None = trace
        self.lanes: LaneSet | None = None
        self._nvtx_index: NvtxIndex | None = None
        self.error: TuiperfError | None = None
        self.cancelled = False
        self.loading = True
        #: an Nsight Compute report (alone, or linked to the trace): KernelMetrics, NcuLink
        self.ncu_path = ncu_path
        #: a second Nsight Compute report opened with it alone: the baseline to compare with
        self.ncu_baseline_path = ncu_baseline
        self.ncu_baseline: KernelMetrics | None = None
        self.ncu: KernelMetrics | None = None
        self.ncu_link: NcuLink | None = None
        #: the side panel was opened by a selection (below 120 columns), not by the user
        self._side_auto = False
        #: what `tuiperf memory` reports of the trace (read after the first frame), and
        #: what the memory pane says until then (or instead)
        self.memory: Any = None
        self.memory_note = "Reading the report's GPU memory events …"
        #: what converts or writes in the background after the first frame (job -> what
        #: the header says of it while it runs)
        self.background: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield ReportHeader(id="header")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Timeline(self.glyphs, id="timeline")
                yield StatusLine(self.ascii_only, id="status")
                # the events table is mounted here after the first timeline frame
                with EventsPane(id="events"):
                    yield Static("Events table: after the timeline.", id="events-placeholder")
            yield SidePanel(self.ascii_only, id="side")
        yield LoadingPanel(self.report_name, id="loading")
        yield Footer()

    def on_mount(self) -> None:
        if self.ascii_only:
            self.screen.add_class("-ascii")
            ascii_scrollbars(True)
        self.query_one(ReportHeader).show_loading(self.report_name, PHASES[0])
        self.query_one("#loading").focus()
        self.load()

    def on_unmount(self) -> None:
        ascii_scrollbars(False)

    def get_key_display(self, binding: Binding) -> str:
        text = super().get_key_display(binding)
        return asciify(text) if self.ascii_only else text

    # --- loading ----------------------------------------------------------------

    # an unexpected exception while loading is a crash (exit 1), not a silent hang
    @work(thread=True, exclusive=True, name="load", exit_on_error=True)
    @waited_for  # it stops once cancelled; its cleanup (a half-made entry) must run
    def load(self) -> None:
        worker = get_current_worker()
        last: list = [0.0, ""]

        def report(phase: str, fraction: float, detail: str = "") -> None:
            if worker.is_cancelled:
                raise LoadCancelled
            now = time.monotonic()
            if phase == last[1] and now - last[0] < PROGRESS_INTERVAL:
                return
            last[0], last[1] = now, phase
            step = PHASES.index(phase) + 1
            text = f"{phase}: {detail}" if detail else phase
            self.post_message(LoadProgress(text, step, len(PHASES), fraction))

        def from_loader(step: Progress) -> None:
            if step.phase == "read tables":
                report("read tables", step.fraction, step.detail)
            elif step.phase == "write cache":
                report("read tables", 1.0, "write cache")
            elif step.phase == "read kernel":  # an Nsight Compute report, result by result
                report("open report", step.fraction, str(step))
            else:  # `nsys export` of a .nsys-rep counts its own percent
                report("open report", step.fraction if step.total else 0.5, str(step))

        ncu_opts = replace(self.opts, progress=from_loader)

        try:
            report("open report", 0.0)
            if self.path is None and self.ncu_path is not None:
                from tuiperf.tui.screens import ncu as ncu_screen

                self.ncu = ncu_screen.load_ncu(self.ncu_path, ncu_opts)
                if self.ncu_baseline_path is not None:
                    self.ncu_baseline = ncu_screen.load_ncu(self.ncu_baseline_path, ncu_opts)
                self.call_from_thread(self._open_ncu_alone)
                return
            trace, lanes = self._open(worker, report, from_loader)
            if self.ncu_path is not None:
                from tuiperf.tui.screens import ncu as ncu_screen

                report("index lanes", 1.0, "match Nsight Compute kernels")
                self.ncu, self.ncu_link = ncu_screen.load_linked(self.ncu_path, ncu_opts, trace)
            report("draw", 0.0)
        except LoadCancelled:
            return
        except TuiperfError as e:
            self.call_from_thread(self._failed, e)
            return
        except Exception:
            if self._quit_while_loading(worker):
                return
            raise  # a crash: the app ends with status 1
        try:
            self.call_from_thread(self._loaded, trace, lanes)
        except Exception:
            if not self._quit_while_loading(worker):
                raise

    def _open(
        self, worker: Any, report: Callable[..., None], from_loader: OnProgress
    ) -> tuple[Trace, LaneSet]:
        """The trace and its lanes: the ones opened while the app started (an EarlyOpen,
        from the cache entry), else opened here with progress."""
        trace, lanes = self.trace, None
        if trace is None and self.early is not None:
            self.early.progress = lambda m, f: report("index lanes", f, m)
            got = self.early.result(lambda: worker.is_cancelled)
            if worker.is_cancelled:
                raise LoadCancelled
            if got is not None:
                trace, lanes = got
        if trace is None:
            assert self.path is not None
            trace = open_trace(self.path, replace(self.opts, progress=from_loader))
        if lanes is None:
            report("index lanes", 0.0)
            # the lane index goes into the cache entry after the first frame (_warm_names)
            lanes = build_lanes(trace, lambda m, f: report("index lanes", f, m), keep=False)
        return trace, lanes

    def _open_ncu_alone(self) -> None:
        """`tuiperf report.ncu-rep`: the ncu screen is the whole app."""
        from tuiperf.tui.screens.ncu import NcuScreen, title

        self.loading = False
        for panel in self.query("#loading"):
            panel.remove()
        assert self.ncu is not None
        name, base = title(self.ncu_path), self.ncu_baseline
        self.push_screen(NcuScreen(self.ncu, None, name, self.ascii_only, root=True, baseline=base))

    def _quit_while_loading(self, worker: Any) -> bool:
        """The user quit while the report loaded: whatever failed since is no crash."""
        return bool(worker.is_cancelled or self._exit)

    def on_load_progress(self, msg: LoadProgress) -> None:
        if self.loading and self.query(LoadingPanel):
            self.query_one(LoadingPanel).show(msg.phase, msg.step, msg.steps, msg.fraction)
            self.query_one(ReportHeader).show_loading(self.report_name, msg.phase)

    @property
    def nvtx_index(self) -> NvtxIndex | None:
        """The NVTX ranges for the details panel, indexed on first use (not before the
        first timeline frame)."""
        if self._nvtx_index is None and self.trace is not None:
            from tuiperf.model.timeline.attribution import NvtxIndex

            self._nvtx_index = NvtxIndex(self.trace)
        return self._nvtx_index

    def _loaded(self, trace: Trace, lanes: LaneSet) -> None:
        self.trace, self.lanes = trace, lanes
        self.loading = False
        self.query_one(LoadingPanel).remove()
        self.query_one(ReportHeader).show_trace(self.report_name, trace, self.ascii_only)
        timeline = self.query_one(Timeline)
        timeline.set_data(trace, lanes)
        timeline.focus()
        # the footer greyed the timeline's keys while it had no data: ask again once the
        # focus change has been processed (otherwise a late recompose can keep them grey)
        self.call_after_refresh(self.screen.refresh_bindings)
        if self.ncu_link is not None and self.ncu is not None:  # the ncu screen's code only
            from tuiperf.tui.screens import ncu as ncu_screen  # with a report for it

            ncu_screen.linked(self, self.ncu_link, len(self.ncu))
        # the events table, once the first timeline frame is on screen
        self.call_after_refresh(lambda: self.query_one(EventsPane).start(trace))
        # detail columns converting in any worker (this one's, or a view's that needs them)
        # are named in the header while they do
        trace.on_details = lambda name, started: self._busy(
            f"details:{name}", f"converting {name} details" if started else None
        )
        # the lane index built for this screen, into the cache entry for a reopen
        self.call_after_refresh(lambda: self._keep_lane_index(trace, lanes))
        # resolve event names for zoomed-in boxes once the first screen is up
        # and convert the detail columns left for later (grid, block, registers, ...)
        self.set_timer(0.5, lambda: self._warm_names(trace, lanes))
        # findings for the fixes panel, in a worker after the first frame (`app.ncu`: an
        # Nsight Compute report, when one is loaded; AdvicePanel.set_ncu re-runs later)
        self.call_after_refresh(lambda: self._start_advice(trace))
        self.call_after_refresh(lambda: self._read_memory(trace))
        self.call_after_refresh(lambda: sample_lane.start(self, trace))  # CPU sample ticks
        self.call_after_refresh(lambda: state_lane.start(self, trace))  # running / waiting

    def _start_advice(self, trace: Trace) -> None:
        for advice in self.query(AdvicePanel):
            advice.start(trace, getattr(self, "ncu", None))

    @work(thread=True, name="memory", exit_on_error=False)
    def _read_memory(self, trace: Trace) -> None:
        """The memory report (`tuiperf memory`'s), then the memory lanes it draws."""
        from tuiperf.tui.screens.memory import read_memory

        try:
            rep = read_memory(trace, self.path)
        except TuiperfError as e:
            rep, self.memory_note = None, f"GPU memory not read: {e}"
        except Exception as e:  # the viewer goes on without the pane
            rep, self.memory_note = None, f"GPU memory not read: internal error ({e!r})"
        with contextlib.suppress(Exception):  # the app may be closing
            self.call_from_thread(self._memory_read, rep)

    def _memory_read(self, rep: Any) -> None:
        from tuiperf.model.timeline.lanes import add_memory_lanes
        from tuiperf.tui.screens.memory import MemoryScreen, memory_lane_keys

        self.memory = rep
        if rep is None and self.memory_note.startswith("Reading"):
            self.memory_note = (
                "No GPU memory events in this report (torch.profiler: "
                "profile_memory=True; nsys: --cuda-memory-usage=true)."
            )
        if rep is not None and self.lanes is not None:
            added = [add_memory_lanes(self.lanes, dev, cs)
                     for dev, cs in memory_lane_keys(rep).items()]  # fmt: skip
            if added:
                self.query_one(Timeline).add_lanes()
        for screen in self.screen_stack:
            if isinstance(screen, MemoryScreen):
                screen.show(rep, self.memory_note)

    def action_memory_pane(self) -> None:
        """`M`: the memory pane; Enter there brings the timeline's cursor to the moment."""
        from tuiperf.tui.screens.memory import MemoryScreen

        if self.trace is None:
            return
        screen = MemoryScreen(self.memory, self.ascii_only, waiting=self.memory_note)
        self.push_screen(screen, self._memory_jump)

    def _memory_jump(self, t: int | None) -> None:
        if t is None or self.lanes is None:
            return
        timeline = self.query_one(Timeline)
        lanes = [i for i, lane in enumerate(self.lanes.lanes) if lane.kind == "memory"]
        timeline.show_time(t, lanes[0] if lanes else None)
        timeline.focus()

    @work(thread=True, name="lane-index", exit_on_error=False)
    @waited_for  # a quit soon after the first screen waits: else the next open splits again
    def _keep_lane_index(self, trace: Trace, lanes: LaneSet) -> None:
        if not lanes.unkept:
            return
        self._busy("lane-index", "writing the lane index")
        try:
            lanes.keep_index(trace)
        finally:
            self._busy("lane-index", None)

    def _busy(self, job: str, what: str | None) -> None:
        """From a worker: the header says what runs in the background (None: done)."""
        with contextlib.suppress(Exception):  # the app may be closing
            self.call_from_thread(self._set_background, job, what)

    def _set_background(self, job: str, what: str | None) -> None:
        if what is None:
            self.background.pop(job, None)
        else:
            self.background[job] = what
        if self.trace is not None:
            header = self.query_one(ReportHeader)
            header.show_trace(self.report_name, self.trace, self.ascii_only,
                              busy=list(self.background.values()))  # fmt: skip

    @work(thread=True, name="warm-names", exit_on_error=False)
    def _warm_names(self, trace: Trace, lanes: LaneSet) -> None:
        lanes.warm_names()
        # a failure here (the report changed meanwhile) is reported by the view that
        # needs the columns, on its own use
        with contextlib.suppress(TuiperfError):
            trace.complete_all()

    def _failed(self, error: TuiperfError) -> None:
        self.error = error
        self.exit(return_code=getattr(error, "exit_code", 1))

    @property
    def crash(self) -> BaseException | None:
        """The unhandled exception that ended the app (unwrapped from a worker), or None."""
        error: BaseException | None = self._exception
        if isinstance(error, WorkerFailed):
            error = error.error
        return error

    def _print_error_renderables(self) -> None:
        # an unhandled exception ends as one line from the CLI (`tuiperf: error: internal
        # error (...)`); Textual's traceback panel only with --debug
        if self._exception is not None and not self.show_traceback:
            self._exit_renderables.clear()
        super()._print_error_renderables()

    # --- app actions ------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "escape":
            side = self.query(SidePanel)
            return self.loading or bool(side and side.first().has_class("-open"))
        return True

    def action_escape(self) -> None:
        if self.loading:
            self.cancelled = True
            self.workers.cancel_group(self, "default")
            self.exit(return_code=130)
            return
        self._open_side(False)
        self.query_one(Timeline).focus()

    def action_help(self) -> None:
        focused = self.focused
        scope = focused.id if focused is not None and focused.id in ("timeline", "side") else None
        if focused is not None and focused.id == "advice-list":
            scope = "fixes"
        if focused is not None and any(isinstance(a, EventsPane) for a in focused.ancestors):
            scope = "events"
        if self.ncu is not None:
            from tuiperf.tui.screens import ncu as ncu_screen

            if isinstance(self.screen, ncu_screen.NcuScreen):
                scope = "ncu"
        self.push_screen(HelpScreen(scope, self.ascii_only))

    def action_focus_pane(self, pane: str) -> None:
        # set at once (Widget.focus waits a turn): `1` `m` arriving in one read must
        # maximise the timeline, not the pane focused before
        target = self.query_one(f"#{pane}")
        if pane == "side" and self._focus_fixes():
            return
        if target.can_focus:
            self.screen.set_focus(target)
            return
        inner = [w for w in target.query("*") if w.can_focus]
        if inner:
            self.screen.set_focus(inner[0])
        else:
            self.notify(f"The {pane} pane has nothing to focus yet.", timeout=2)

    def _focus_fixes(self) -> bool:
        """`3`: the fixes list when the panel shows one (Enter there acts on a finding or
        its evidence), rather than the panel's frame."""
        found, side = self.query(AdvicePanel), self.query_one(SidePanel)
        if not found or not found.first().is_open:
            return False
        if self.side_collapses:
            self._open_side(True)
        elif side.has_class("-hidden"):
            return False
        self.screen.set_focus(found.first().query_one("#advice-list"))
        return True

    @property
    def side_collapses(self) -> bool:
        """Below 120 columns the side panel is shown only while `-open`."""
        return self.screen.has_class("-narrow") or self.screen.has_class("-medium")

    def action_toggle_side(self) -> None:
        side = self.query_one(SidePanel)
        if self.side_collapses:
            self._open_side(not side.has_class("-open"))
        else:
            side.toggle_class("-hidden")

    def action_toggle_advice(self) -> None:
        """Show or hide the fixes panel (opening the side panel when it is closed)."""
        advice, side = self.query_one(AdvicePanel), self.query_one(SidePanel)
        narrow = self.side_collapses
        side_shown = side.has_class("-open") if narrow else not side.has_class("-hidden")
        if advice.is_open and side_shown:
            advice.set_open(False)
            if narrow:
                self._open_side(False)
            if self.focused is None or self.focused is side or advice in self.focused.ancestors:
                self.query_one(Timeline).focus()
            return
        advice.set_open(True)
        if narrow:
            self._open_side(True)
        else:
            side.remove_class("-hidden")
        advice.focus_list()

    def _open_side(self, show: bool, auto: bool = False) -> None:
        """Below 120 columns: show the collapsed details panel (beside the timeline; below
        100 columns in its place). `auto`: opened by a selection, closed again when the
        selection is cleared (unless the user had opened it)."""
        side = self.query_one(SidePanel)
        if show and auto and side.has_class("-open"):
            return
        self._side_auto = show and auto
        side.set_class(show, "-open")
        self.query_one("#main").set_class(show, "-side-open")

    def action_toggle_maximize(self) -> None:
        if self.screen.maximized is not None:
            self.screen.minimize()
        elif self.focused is not None:
            self.screen.maximize(self.focused)

    def action_next_match(self, direction: int) -> None:
        """n / N: the next (previous) event that the events table shows, on the timeline."""
        timeline = self.query_one(Timeline)
        for pane in self.query(EventsPane):
            pane.step_match(timeline.selection is not None, timeline.cursor_t, direction)

    def on_matches_changed(self, msg: MatchesChanged) -> None:
        for timeline in self.query(Timeline):
            timeline.set_matches(msg.matches)

    def action_ncu_screen(self) -> None:
        from tuiperf.tui.screens import ncu as ncu_screen

        name = ncu_screen.title(self.ncu_path)
        ncu_screen.open_linked(self, self.ncu, self.ncu_link, name, self.ascii_only)

    def action_samples_screen(self) -> None:
        from tuiperf.tui.screens.samples import open_samples

        open_samples(self, self.trace, self.ascii_only)

    def on_ncu_kernel_chosen(self, msg: NcuKernelChosen) -> None:
        from tuiperf.tui.screens import ncu as ncu_screen

        ncu_screen.jump(self, msg)

    # --- messages between panes ---------------------------------------------------

    def on_event_selected(self, msg: EventSelected) -> None:
        if self.trace is None:
            return
        from tuiperf.model.timeline.attribution import describe

        details = describe(self.trace, msg.table, msg.row, self.nvtx_index)
        side = self.query_one(SidePanel)
        side.show_details(details)
        if self.ncu is not None and self.ncu_link is not None:
            from tuiperf.tui.screens import ncu as ncu_screen

            ncu_screen.side_metrics(
                self, self.ncu, self.ncu_link, self.ascii_only, msg.table, msg.row
            )
        timeline = self.query_one(Timeline)
        if msg.source == "timeline":
            timeline.set_partner(details.partner)
        else:
            timeline.show_selection(msg.table, msg.row, details.partner)
            sel = timeline.selection
            shown = sel is not None and (sel.table, sel.row) == (msg.table, msg.row)
            if msg.source == "events" and msg.details and sel is not None and shown:
                # Enter in the events table: the event in its context (a fifth of the width)
                timeline.set_viewport(timeline.vp.fit_range(sel.start, sel.end, 2.0), push=True)
        if msg.details and self.screen.has_class("-narrow"):
            self._open_side(True)
        elif self.screen.has_class("-medium"):  # there is room beside the timeline
            self._open_side(True, auto=True)
        for widget in self.query(".follows-selection"):
            if widget.id != msg.source and hasattr(widget, "follow_selection"):
                widget.follow_selection(msg.table, msg.row)

    def on_selection_cleared(self, msg: SelectionCleared) -> None:
        for side in self.query(SidePanel):
            side.clear()
            if self._side_auto and self.screen.has_class("-medium"):
                self._open_side(False)
        for advice in self.query(AdvicePanel):
            advice.show_report()

    def on_viewport_changed(self, msg: ViewportChanged) -> None:
        for status in self.query(StatusLine):  # none while the app shuts down
            status.set_view(msg.label, msg.lane)
        for pane in self.query(EventsPane):
            pane.set_window(msg.start, msg.end)

    def on_range_marked(self, msg: RangeMarked) -> None:
        found = self.query(StatusLine)
        if not found:
            return
        status = found.first()
        if msg.start is None:
            status.set_range("")
        elif msg.end is None:
            status.set_range("range: start marked, ] to end")
        else:
            span = fmt.duration_sig(abs(msg.end - msg.start), self.ascii_only, 3)
            status.set_range(f"range {span}: Enter zooms, R statistics")


def report_name(path: Path, sample: bool) -> str:
    return f"{path.name} (bundled sample)" if sample else path.name


def run_app(
    path: Path,
    args: argparse.Namespace,
    opts: OpenOptions,
    app_class: type[TuiperfApp] | None = None,
    **extra: Any,
) -> int:
    """Run the viewer on `path`; errors while loading come back as TuiperfError.
    `app_class` (a TuiperfApp by default) gets `extra` as further keyword arguments."""
    sample = args.report_path is None or Path(path) == sample_path()
    ncu = getattr(args, "ncu_path", None)
    app = (app_class or TuiperfApp)(
        None if ncu is not None and Path(ncu) == Path(path) else Path(path),
        replace(opts, progress=None),
        ascii_only=wants_ascii(getattr(args, "ascii", False)),
        name=report_name(Path(path), sample),
        ncu_path=ncu,
        ncu_baseline=getattr(args, "ncu_baseline", None),
        show_traceback=bool(getattr(args, "debug", False)),
        **extra,
    )
    rc = run_until_quit(app, mouse=not getattr(args, "no_mouse", False))
    return app_exit_code(app, rc)


def app_exit_code(app: TuiperfApp, rc: int | None) -> int:
    """The exit status of a finished app; a crash inside it is raised again, so that the
    CLI prints one line and exits 1 (never 0)."""
    if app.error is not None:
        raise app.error
    crash = app.crash
    if crash is not None:
        raise crash
    if app.cancelled:
        return 130
    return int(rc or app.return_code or 0)
