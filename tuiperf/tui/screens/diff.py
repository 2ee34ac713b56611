"""The diff view: `tuiperf BEFORE AFTER` with two timeline reports.

Top: the verdict line (`tuiperf diff`'s). Then the two timelines stacked, each showing
one steady step from its start on one shared time scale (the longer step fills the
width, so the eye sees which is longer). Below: the by-name table, largest change first.
What is shown is `tuiperf.tui.viewstate.diff.DiffView`; this module draws it and
dispatches keys to it (`b` swaps the baseline, `]` `[` step both reports, `+` `-` `←` `→`
zoom and pan inside the steps, `0` fits them, `t` `T` pick the table, `q` quits, or goes
back to the viewer when the view was opened over it).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, cast

import numpy as np
from rich.console import Group
from rich.text import Text
from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import WorkerFailed

from tuiperf.errors import TuiperfError
from tuiperf.load.open import OpenOptions, open_trace
from tuiperf.load.progress import Progress
from tuiperf.model import arrays as A
from tuiperf.model.timeline.lanes import build_lanes
from tuiperf.model.trace import Trace
from tuiperf.tui.actions import bindings, for_scope
from tuiperf.tui.glyphs import asciify, glyphs_for, wants_ascii
from tuiperf.tui.run import run_app as run_until_quit
from tuiperf.tui.run import waited_for
from tuiperf.tui.screens.help import HelpScreen
from tuiperf.tui.viewstate.diff import DiffView, lanes_to_show
from tuiperf.tui.viewstate.matches import Matches
from tuiperf.tui.viewstate.timeline import Row
from tuiperf.tui.widgets.help import keys_table
from tuiperf.tui.widgets.scrollbars import ascii_scrollbars
from tuiperf.tui.widgets.table_body import TableBody
from tuiperf.tui.widgets.table_rows import Col
from tuiperf.tui.widgets.timeline import Timeline

#: the loading line changes at most this often (seconds), a new phase always
PROGRESS_INTERVAL = 0.25


class LoadCancelled(Exception):
    """Raised inside the loader when the user left while it ran."""


#: characters of the table's cells that --ascii spells out (beyond `asciify`'s)
_MORE_ASCII = str.maketrans({"≤": "<=", "—": "-", "±": "+/-"})


def _plain(text: str, ascii_only: bool) -> str:
    return asciify(text).translate(_MORE_ASCII) if ascii_only else text


class DiffRows:
    """The listed table of a `DiffView`, in the `TableBody` row interface."""

    def __init__(self, view: DiffView, ascii_only: bool) -> None:
        self.view = view
        self.ascii_only = ascii_only

    def columns(self, width: int) -> list[Col]:
        return [
            Col(c.key, c.header, c.width, c.right, "num" if c.right else "text")
            for c in self.view.columns(width)
        ]

    def __len__(self) -> int:
        return len(self.view.rows())

    def row_id(self, pos: int) -> int:
        return pos

    def cells(self, pos: int, shown: list[Col]) -> list[str]:
        cells = self.view.cells(pos, [c.key for c in shown])
        return [_plain(c, self.ascii_only) for c in cells]


class StepTimeline(Timeline):
    """A timeline that shows what the diff view puts in it: no keys of its own, and its
    step fitted again when its width changes."""

    def __init__(self, fit: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.can_focus = False
        self._fit = fit

    def on_resize(self, event: events.Resize) -> None:
        # before Timeline's own handler, which then finds the width already applied
        self._fit(self)

    @property
    def label_width(self) -> int:
        """Wide enough for the lanes' labels with their GPU or process (at most a third)."""
        lanes = self.lanes
        longest = max((len(ln.label) for ln in lanes.lanes), default=10) if lanes else 10
        return min(max(longest + 2, 12), max(self.size.width // 3, 12))

    def _still(self, event: events.MouseEvent) -> None:
        """The mouse neither zooms, drags nor selects here: both timelines keep one scale."""
        event.prevent_default()
        event.stop()

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._still(event)

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self._still(event)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        self._still(event)

    def on_mouse_up(self, event: events.MouseUp) -> None:
        self._still(event)


#: the table's own keys: the rows' keys less Enter (the screen's: it marks events)
TABLE_KEYS = [k for k in for_scope("rows") if k.help and k.id != "rows.open"]


class DiffTable(TableBody, inherit_bindings=False):
    """The table by change: the rows' keys, less Enter, which is the screen's (it marks
    the row's events on both timelines)."""

    BINDINGS: ClassVar = [
        b for b in bindings("rows") if isinstance(b, Binding) and b.id != "rows.open"
    ]


class DiffHelp(HelpScreen):
    """? / F1 in the diff view: what cannot be compared (the diff's notes), then its keys
    and the table's."""

    def __init__(self, notes: list[str], ascii_only: bool = False, standalone: bool = True):
        super().__init__("diff", ascii_only)
        self.notes = notes
        #: the `q` that does not apply (quit, or back to the viewer) is not listed
        self.hidden = "diff.leave" if standalone else "diff.quit"

    def on_mount(self) -> None:
        if self.ascii_only:
            self.add_class("-ascii")

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body") as body:
            body.border_title = "Keys"
            about = [Text(_plain(f"note: {n}", self.ascii_only)) for n in self.notes]
            text = Group(
                *about,
                *([Text("")] if about else []),
                keys_table(
                    "diff",
                    self.ascii_only,
                    [k for k in for_scope("diff") if k.help and k.id != self.hidden],
                ),
                Text(""),
                keys_table("rows", self.ascii_only, TABLE_KEYS),
                Text("\nesc or ? closes this help.", style="dim"),
            )
            yield Static(text, id="help-text")


class DiffScreen(Screen[None]):
    """Verdict, the two steps stacked on one time scale, the table by change."""

    BINDINGS: ClassVar = bindings("diff")
    DEFAULT_CSS = """
    DiffScreen { layout: vertical; }
    DiffScreen #diff-verdict { height: auto; max-height: 4; background: $panel; }
    DiffScreen .diff-title { height: 1; color: $text-muted; }
    DiffScreen StepTimeline { height: 1fr; min-height: 3; }
    DiffScreen #diff-table-title { height: 1; color: $text-muted; }
    DiffScreen #diff-table { height: 2fr; min-height: 4; }
    """

    def __init__(self, view: DiffView, ascii_only: bool = False, standalone: bool = True):
        super().__init__()
        self.view = view
        self.ascii_only = ascii_only
        #: opened by `tuiperf BEFORE AFTER` (q quits), or over the viewer (q goes back)
        self.standalone = standalone
        self.glyphs = glyphs_for(ascii_only)
        #: the table row whose events are marked on the timelines, or None
        self.marked: int | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="diff-verdict")
        for which in (0, 1):
            yield Static(id=f"diff-title-{which}", classes="diff-title")
            yield StepTimeline(self._fit, glyphs=self.glyphs, id=f"diff-timeline-{which}")
        yield Static(id="diff-table-title")
        yield DiffTable(id="diff-table")
        yield Footer()

    def on_mount(self) -> None:
        if self.ascii_only:
            self.add_class("-ascii")
        table = self.query_one(TableBody)
        table.ascii_only = self.ascii_only
        table.focus()
        self._show_reports()
        self._show_table()

    # --- drawing the state ---------------------------------------------------------------

    def timeline(self, which: int) -> StepTimeline:
        return self.query_one(f"#diff-timeline-{which}", StepTimeline)

    def _show_reports(self) -> None:
        """Verdict, titles and both timelines (after a swap, the reports change places)."""
        notes = len(self.view.diff.notes)
        more = f" [{notes} note{'s' if notes > 1 else ''}: ? shows]" if notes else ""
        self.query_one("#diff-verdict", Static).update(self._text(self.view.verdict + more))
        lanes = self.view.lanes
        for which in (0, 1):
            if lanes is not None:
                self.timeline(which).set_data(self.view.traces[which], lanes[which])
            self._fit(self.timeline(which))

    def _fit(self, timeline: StepTimeline) -> None:
        """Put the shown step of the timeline's report in it, from its start, on the
        shared scale; the lanes busy in that step, kernels first."""
        which = 0 if timeline.id == "diff-timeline-0" else 1
        title = self.view.title(which)
        if self.view.window_text():
            title += f" · {self.view.window_text()}"
        self.query_one(f"#diff-title-{which}", Static).update(self._text(title))
        lanes = self.view.lanes
        if lanes is None or timeline.lanes is None:
            return
        state = timeline.state
        state.set_viewport(self.view.viewport(which, lanes[which], timeline.columns))
        step = self.view.step(which)
        start, end = state.vp.start, state.vp.end
        state.rows = [Row(0, li) for li in lanes_to_show(lanes[which], start, end)]
        state.row_cursor = state.top = 0
        state.cursor_t = float(step.start_ns if step is not None else start)
        timeline.changed(viewport=False)

    def _show_table(self, cursor: int = 0) -> None:
        title = self.view.section_title
        self.query_one("#diff-table-title", Static).update(self._text(title))
        rows = DiffRows(self.view, self.ascii_only)
        self.query_one(TableBody).set_rows(cast(Any, rows), cursor, "change", True)

    def _text(self, text: str) -> Text:
        return Text(_plain(text, self.ascii_only))

    # --- keys ------------------------------------------------------------------------------

    def on_table_body_activated(self, event: TableBody.Activated) -> None:
        """A double click on a row: as Enter."""
        event.stop()
        self._mark(event.pos)

    def action_mark(self) -> None:
        """Enter: mark the row's events on both timelines (again: unmark)."""
        table = self.query_one(DiffTable)
        if table.rows is not None and len(table.rows):
            self._mark(table.cursor)

    def _mark(self, pos: int) -> None:
        if self.marked == pos:
            self._unmark()
            return
        found = [self.view.events_of(pos, which) for which in (0, 1)]
        if found[0] is None or found[1] is None:
            self.notify("A budget part or a finding: it has no events of its own.", timeout=3)
            return
        for which, (table, rows) in enumerate((found[0], found[1])):
            matches = event_matches(self.view.traces[which], table, rows)
            self.timeline(which).set_matches(matches)
        self.marked = pos
        name = self.view.rows()[pos].name
        counts = f"{len(found[0][1]):,} in the baseline, {len(found[1][1]):,} in the other"
        self.notify(_plain(f"Marked: {name} ({counts}); Enter again or esc unmarks.",
                           self.ascii_only), timeout=4)  # fmt: skip

    def _unmark(self) -> bool:
        """Clear the marks; False when none were shown."""
        if self.marked is None:
            return False
        self.marked = None
        for which in (0, 1):
            self.timeline(which).set_matches(None)
        return True

    def action_back(self) -> None:
        """esc: unmark the marked events, else back to the viewer (never quits)."""
        if self._unmark():
            return
        if self.standalone:
            self.notify("Nothing is marked; q quits.", timeout=2)
        else:
            self.action_leave()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "quit_diff":
            return self.standalone
        if action == "leave":
            return not self.standalone
        return True

    def action_zoom(self, direction: int) -> None:
        if self.view.zoom_by(direction > 0):
            self._refit()

    def action_pan(self, direction: int) -> None:
        if self.view.pan(direction):
            self._refit()

    def action_fit(self) -> None:
        if self.view.fit():
            self._refit()

    def _refit(self) -> None:
        for which in (0, 1):
            self._fit(self.timeline(which))

    def action_swap_baseline(self) -> None:
        self._unmark()
        self.view.swap()
        self._show_reports()
        self._show_table()
        before, after = self.view.names
        self.notify(f"Baseline: {before}; compared: {after}.", timeout=2)

    def action_step(self, direction: int) -> None:
        if not self.view.move_step(direction):
            where = "last" if direction > 0 else "first"
            self.notify(f"Already at the {where} steady step.", timeout=2)
            return
        for which in (0, 1):
            self._fit(self.timeline(which))

    def action_cycle_section(self, direction: int) -> None:
        self._unmark()
        self.view.cycle_section(direction)
        self._show_table()

    def action_help(self) -> None:
        self.app.push_screen(DiffHelp(self.view.diff.notes, self.ascii_only, self.standalone))

    def action_quit_diff(self) -> None:
        """q in `tuiperf BEFORE AFTER`: the program ends."""
        self.app.exit(0)

    def action_leave(self) -> None:
        """q over the viewer: back to it."""
        self.dismiss(None)


def event_matches(trace: Trace, table: str, rows: np.ndarray) -> Matches:
    """Rows `rows` of `table` as the timeline's highlighted events."""
    starts = A.ints(trace.table(table, ["start"]), "start")
    mask = np.zeros(len(starts), dtype=bool)
    mask[rows] = True
    order = np.lexsort((rows, starts[rows]))
    return Matches(table, rows[order], starts[rows][order], mask, starts, True)


class DiffApp(App[int]):
    """Loads both reports in a worker, compares them, then shows `DiffScreen`."""

    CSS_PATH = "../app.tcss"
    TITLE = "tuiperf diff"
    #: while loading (the diff view's own keys are on its screen)
    BINDINGS: ClassVar = [Binding("escape,q", "cancel", "Cancel", show=False, id="diff.cancel")]

    def __init__(
        self,
        before: Path,
        after: Path,
        opts: OpenOptions | None = None,
        *,
        ascii_only: bool = False,
        show_traceback: bool = False,
    ) -> None:
        super().__init__()
        self.paths = (before, after)
        self.opts = replace(opts or OpenOptions(), progress=None)
        self.ascii_only = ascii_only
        self.show_traceback = show_traceback
        self.error: TuiperfError | None = None
        self.cancelled = False
        self.view: DiffView | None = None

    def compose(self) -> ComposeResult:
        a, b = (p.name for p in self.paths)
        yield Static(_plain(f"Comparing {a} (baseline) with {b} …", self.ascii_only),
                     id="diff-loading")  # fmt: skip
        yield Footer()

    def on_mount(self) -> None:
        ascii_scrollbars(self.ascii_only)  # scrollbars of plain spaces, as in the viewer
        self.load()

    def on_unmount(self) -> None:
        ascii_scrollbars(False)

    def get_key_display(self, binding: Binding) -> str:
        text = super().get_key_display(binding)
        return asciify(text) if self.ascii_only else text

    @work(thread=True, exclusive=True, name="load", exit_on_error=True)
    @waited_for  # it stops once cancelled; its cleanup (a half-made entry) must run
    def load(self) -> None:
        names = (self.paths[0].name, self.paths[1].name)
        last = [0.0]

        def say(text: str, always: bool = False) -> None:
            """What is being done now, on screen (at most every PROGRESS_INTERVAL)."""
            if self.cancelled:
                raise LoadCancelled
            now = time.monotonic()
            if always or now - last[0] >= PROGRESS_INTERVAL:
                last[0] = now
                self.call_from_thread(self._phase, text)

        try:
            traces, lanes = [], []
            for i, path in enumerate(self.paths):
                role = ("baseline", "compared")[i]
                say(f"{role}: open {names[i]}", True)

                def opened(step: Progress, role: str = role) -> None:
                    say(f"{role}: {step}")

                def indexed(what: str, fraction: float, role: str = role) -> None:
                    say(f"{role}: {what}")

                traces.append(open_trace(path, replace(self.opts, progress=opened)))
                say(f"{role}: index lanes", True)
                lanes.append(build_lanes(traces[-1], indexed))
            say("compare: steps, budget, names and findings", True)
            view = DiffView.of(traces[0], traces[1], names, lanes)
        except LoadCancelled:
            return
        except TuiperfError as e:
            self.call_from_thread(self._failed, e)
            return
        except Exception:
            if self.cancelled or self._exit:  # the user left meanwhile: no crash
                return
            raise  # a crash: the app ends with it, the CLI prints one line
        if not self.cancelled:
            self.call_from_thread(self._loaded, view)

    def _phase(self, text: str) -> None:
        a, b = (p.name for p in self.paths)
        line = f"Comparing {a} (baseline) with {b} …\n{text}"
        for found in self.query("#diff-loading"):
            cast(Static, found).update(_plain(line, self.ascii_only))

    def _loaded(self, view: DiffView) -> None:
        self.view = view
        self.push_screen(DiffScreen(view, self.ascii_only))

    def _failed(self, error: TuiperfError) -> None:
        self.error = error
        self.exit(return_code=int(error.code))

    def action_cancel(self) -> None:
        self.cancelled = True
        self.exit(return_code=130)

    def _print_error_renderables(self) -> None:
        # an unhandled exception ends as one line from the CLI; Textual's panel with --debug
        if self._exception is not None and not self.show_traceback:
            self._exit_renderables.clear()
        super()._print_error_renderables()


def run_diff(before: Path, after: Path, args: argparse.Namespace, opts: OpenOptions) -> int:
    """Run the diff view; a report that cannot be read ends as one error line (raised)."""
    app = DiffApp(
        before,
        after,
        opts,
        ascii_only=wants_ascii(getattr(args, "ascii", False)),
        show_traceback=bool(getattr(args, "debug", False)),
    )
    rc = run_until_quit(app, mouse=not getattr(args, "no_mouse", False))
    return exit_code(app, rc)


def exit_code(app: DiffApp, rc: int | None) -> int:
    """The finished app's exit status; its error or crash is raised again for the CLI."""
    if app.error is not None:
        raise app.error
    crash: BaseException | None = app._exception
    if isinstance(crash, WorkerFailed):
        crash = crash.error
    if crash is not None:
        raise crash
    if app.cancelled:
        return 130
    return int(rc or app.return_code or 0)
