"""The kernel-centred screen of an Nsight Compute report, linked to the timeline.

Left: the profiled kernels (sortable with < > r, filtered with /), drawn by the events
table's line-API `TableBody`. Right (below on narrow terminals): the metrics pane of the
kernel under the cursor. With an nsys report too, Enter jumps to the kernel's launches on
the timeline, and `u` lists what did not match either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Input, Static

from tuiperf.model.fmt import clean
from tuiperf.model.ncu import verdict as V
from tuiperf.model.ncu.baseline import BY_ORDER, KernelPair
from tuiperf.model.ncu.link import NcuLink
from tuiperf.model.ncu.metrics import KernelMetrics, display_unit, format_value
from tuiperf.tui.actions import bindings
from tuiperf.tui.glyphs import asciify
from tuiperf.tui.messages import NcuKernelChosen
from tuiperf.tui.widgets.metrics_pane import MetricsPane
from tuiperf.tui.widgets.table_body import TableBody
from tuiperf.tui.widgets.table_rows import Col

if TYPE_CHECKING:
    from pathlib import Path

    from textual.app import App

    from tuiperf.load.open import OpenOptions
    from tuiperf.model.trace import Trace

#: (key, header, width (0: the rest), right-aligned, drop order when narrow: higher first)
COLUMNS = (
    ("id", "ID", 4, True, 0),
    ("name", "Kernel", 0, False, 0),
    ("duration", "Duration", 9, True, 0),
    ("grid", "Grid", 11, False, 4),
    ("block", "Block", 9, False, 5),
    ("sm", "SM %", 6, True, 1),
    ("mem", "Mem %", 6, True, 1),
    ("occ", "Occ %", 6, True, 2),
    ("nvtx", "NVTX", 16, False, 6),
    ("nsys", "nsys", 6, True, 3),
)
DESCENDING = {"duration", "sm", "mem", "occ", "nsys"}


# --- the rows (pure data, formatted once; ncu reports hold thousands of kernels at most) ---


def _dims(d: tuple[int, int, int] | None) -> str:
    return "" if d is None else "×".join(str(v) for v in d)


def kernel_records(km: KernelMetrics, link: NcuLink | None) -> list[dict[str, Any]]:
    out = []
    for kid in km.kernel_ids():
        k = km.kernel(kid)
        sm, mem = km.throughput(kid)
        out.append(
            {
                "id": kid,
                "name": clean(k.name or k.display_name),
                "search": f"{k.name} {k.demangled or ''} {k.mangled or ''}".lower(),
                "duration": k.duration_ns,
                "grid": k.grid,
                "block": k.block,
                "sm": sm,
                "mem": mem,
                "occ": km.value(kid, V.ACHIEVED),
                "nvtx": " › ".join(clean(n) for n in k.nvtx),
                "nsys": None if link is None else len(link.rows_for(kid)),
            }
        )
    return out


def cell(rec: dict[str, Any], key: str, ascii_only: bool) -> str:
    v = rec[key]
    if key == "duration":
        if v is None:
            return ""
        value, unit = display_unit(v, "ns")
        return f"{format_value(round(value, 2))} {unit}"
    if key in ("grid", "block"):
        return _dims(v).replace("×", "x") if ascii_only else _dims(v)
    if key in ("sm", "mem", "occ"):
        return "" if v is None else f"{v:.1f}"
    if key == "nsys":
        return "" if v is None else ("none" if v == 0 else f"{v:,}")
    text = str(v)
    return asciify(text).replace("›", ">") if ascii_only else text


@dataclass
class KernelRows:
    """The shown kernels (filtered and sorted), in the `TableBody` row interface."""

    records: list[dict[str, Any]]
    linked: bool
    ascii_only: bool

    def columns(self, width: int) -> list[Col]:
        cols = [c for c in COLUMNS if self.linked or c[0] != "nsys"]
        for level in (6, 5, 4, 3, 2, 1):
            if sum(c[2] + 1 for c in cols) + 24 <= width:
                break
            cols = [c for c in cols if c[4] != level]
        return [Col(k, h, w, r, "num" if r else "text") for k, h, w, r, _ in cols]

    def __len__(self) -> int:
        return len(self.records)

    def row_id(self, pos: int) -> int:
        return int(self.records[pos]["id"])

    def cells(self, pos: int, shown: list[Col]) -> list[str]:
        rec = self.records[pos]
        return [cell(rec, c.key, self.ascii_only) for c in shown]


def select(
    records: list[dict[str, Any]], text: str, sort: str, descending: bool
) -> list[dict[str, Any]]:
    """Filter on a substring of any name (case-insensitive; a leading ! inverts), then sort
    (missing values last)."""
    invert = text.startswith("!")
    needle = text[1:].lower() if invert else text.lower()
    out = [r for r in records if not needle or ((needle in r["search"]) != invert)]
    present = [r for r in out if r[sort] is not None]
    missing = [r for r in out if r[sort] is None]
    present.sort(key=lambda r: (r[sort], r["id"]), reverse=descending)
    return present + missing


# --- the view --------------------------------------------------------------------------------


class NcuView(Horizontal):
    """Kernel list + metrics pane; owns the `ncu` keys of the registry."""

    BINDINGS: ClassVar = bindings("ncu")
    SCOPED_CSS = False
    DEFAULT_CSS = """
    NcuView { height: 1fr; }
    NcuView > #ncu-left { width: 1fr; min-width: 40; }
    NcuView > #ncu-metrics { width: 1fr; border-left: solid $panel-lighten-2; }
    NcuView #ncu-list-title { height: 1; padding: 0 1; background: $boost; }
    NcuView #ncu-filter { display: none; height: 1; border: none; padding: 0 1; }
    NcuView.-filtering #ncu-filter { display: block; }
    .-narrow NcuView { layout: vertical; }
    .-narrow NcuView > #ncu-left { height: 9; width: 1fr; min-width: 0; }
    .-narrow NcuView > #ncu-metrics { height: 1fr; border-left: none;
                                      border-top: solid $panel-lighten-2; }
    """

    def __init__(self, km: KernelMetrics, link: NcuLink | None, ascii_only: bool, **kw: Any):
        super().__init__(**kw)
        self.km, self.link, self.ascii_only = km, link, ascii_only
        self.records = kernel_records(km, link)
        self.sort, self.descending = "id", False
        self.text = ""
        self.baseline: int | None = None
        #: a second report as the baseline (`O`): each kernel against its match there
        self.base_km: KernelMetrics | None = None
        self.base_pairs: dict[int, KernelPair] = {}
        self._jumped: tuple[int, int] = (-1, -1)

    def compose(self) -> ComposeResult:
        with Vertical(id="ncu-left"):
            yield Static(id="ncu-list-title")
            yield TableBody(id="ncu-kernels")
            yield Input(id="ncu-filter", placeholder="filter kernel names (! inverts)")
        yield MetricsPane(self.ascii_only, id="ncu-metrics")

    @property
    def body(self) -> TableBody:
        return self.query_one("#ncu-kernels", TableBody)

    def on_mount(self) -> None:
        self.body.ascii_only = self.ascii_only
        self.body.can_activate = self.link is not None
        self.refresh_rows(None)
        self.body.focus()

    def refresh_rows(self, keep: int | None) -> None:
        shown = select(self.records, self.text, self.sort, self.descending)
        rows = KernelRows(shown, self.link is not None, self.ascii_only)
        ids = [r["id"] for r in shown]
        cursor = ids.index(keep) if keep in ids else 0
        # KernelRows has the row interface TableBody draws (columns, cells, row_id, len)
        self.body.set_rows(rows, cursor, self.sort, self.descending)  # type: ignore[arg-type]
        self._title()
        self.show_current()

    def _title(self) -> None:
        n = len(self.body.rows or ())
        what = f"{n:,} / {len(self.records):,}" if self.text else f"{len(self.records):,}"
        filt = f"filter: {self.text}, " if self.text else ""
        base = f" · baseline ID {self.baseline}" if self.baseline is not None else ""
        if self.base_km is not None:
            base = f" · baseline {_report_name(self.base_km)}"
        text = Text(f"Kernels ({filt}{what}){base}", "bold")
        self.query_one("#ncu-list-title", Static).update(text)

    def current(self) -> int | None:
        rows = self.body.rows
        if rows is None or not len(rows):
            return None
        return rows.row_id(self.body.cursor)

    def show_current(self) -> None:
        kid = self.current()
        pane = self.query_one(MetricsPane)
        if kid is None:
            pane.clear("No kernel matches the filter (Esc clears it).")
            return
        if self.base_km is not None:
            pair = self.base_pairs.get(kid)
            bid = None if pair is None else pair.baseline_id
            note = self._link_note(kid) if pair is None or not pair.note else pair.note
            pane.show(self.km, kid, bid, note, self.base_km if bid is not None else None)
            return
        base = self.baseline if self.baseline != kid else None
        pane.show(self.km, kid, base, self._link_note(kid))

    def _link_note(self, kid: int) -> str:
        return "" if self.link is None else self.link.note_for(kid)

    # --- messages from the table --------------------------------------------------------

    def on_table_body_cursor_moved(self, event: TableBody.CursorMoved) -> None:
        event.stop()
        self.show_current()

    def on_key(self, event: events.Key) -> None:
        if event.key == "enter" and self.link is None and self.body.has_focus:
            event.stop()
            self.notify(NO_TIMELINE, timeout=5, markup=False)

    def on_table_body_activated(self, event: TableBody.Activated) -> None:
        event.stop()
        self.action_jump()

    def on_table_body_header_clicked(self, event: TableBody.HeaderClicked) -> None:
        event.stop()
        if event.key == self.sort:
            self.action_reverse()
        else:
            self._sort_by(event.key)

    # --- actions ------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "jump" and self.link is None:
            return False  # not offered: there is no timeline (Enter says how to open one)
        if action == "unmatched" and self.link is None:
            return None
        if action == "clear_baseline" and self.baseline is None and self.base_km is None:
            return None
        return True

    def action_filter(self) -> None:
        box = self.query_one("#ncu-filter", Input)
        box.value = self.text
        self.add_class("-filtering")
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "ncu-filter" and self.has_class("-filtering"):
            event.stop()
            keep = self.current()
            self.text = event.value.strip()
            self.refresh_rows(keep)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "ncu-filter":
            event.stop()
            self.remove_class("-filtering")
            self.body.focus()

    def action_back(self) -> None:
        """Esc: close the filter box, then clear the filter, then leave the screen."""
        if self.has_class("-filtering") or self.text:
            self.remove_class("-filtering")
            keep, self.text = self.current(), ""
            self.refresh_rows(keep)
            self.body.focus()
        elif isinstance(self.screen, NcuScreen) and self.screen.can_leave:
            self.app.pop_screen()

    def action_sort_column(self, step: int) -> None:
        keys = [c.key for c in self.body.columns()]
        i = keys.index(self.sort) if self.sort in keys else -1
        self._sort_by(keys[(i + step) % len(keys)])

    def _sort_by(self, key: str, descending: bool | None = None) -> None:
        keep = self.current()
        self.sort = key
        self.descending = key in DESCENDING if descending is None else descending
        self.refresh_rows(keep)

    def action_reverse(self) -> None:
        self._sort_by(self.sort, not self.descending)

    def action_baseline(self) -> None:
        kid = self.current()
        if kid is None:
            return
        self.baseline = None if self.baseline == kid else kid
        self._title()
        if self.baseline is not None:
            self.notify(f"Baseline: ncu ID {kid}. Select another kernel to compare.", timeout=3)
        self.show_current()

    def action_baseline_report(self) -> None:
        """`O`: ask for another .ncu-rep and compare every kernel with its match there."""

        def chosen(path: str | None) -> None:
            if path:
                self.notify(f"Reading {path} …", timeout=2, markup=False)
                self._load_baseline(path)

        self.app.push_screen(PathPrompt(), chosen)

    @work(thread=True, exclusive=True, group="ncu-baseline", exit_on_error=False)
    def _load_baseline(self, path: str) -> None:
        from pathlib import Path

        from tuiperf.errors import TuiperfError
        from tuiperf.load.ncu.open import open_ncu

        try:
            base = open_ncu(Path(path).expanduser(), getattr(self.app, "opts", None))
        except (TuiperfError, OSError) as e:
            self.app.call_from_thread(self.notify, str(e), severity="error", markup=False)
            return
        self.app.call_from_thread(self.set_baseline_report, base)

    def set_baseline_report(self, base: KernelMetrics | None) -> None:
        """Compare with the kernels of `base` (None: stop comparing with a report)."""
        from tuiperf.model.ncu.baseline import match_kernels

        self.base_km, self.baseline = base, None
        pairs = [] if base is None else match_kernels(self.km, base)
        self.base_pairs = {p.kernel_id: p for p in pairs}
        self._title()
        self.show_current()
        if base is not None:
            by_order = sum(1 for p in pairs if p.match == BY_ORDER)
            more = f"; {by_order} matched by launch order" if by_order else ""
            self.notify(f"Baseline: {_report_name(base)}{more}. B clears.", timeout=4,
                        markup=False)  # fmt: skip

    def action_clear_baseline(self) -> None:
        self.base_km, self.base_pairs = None, {}
        self.baseline = None
        self._title()
        self.show_current()

    def action_fold_all(self) -> None:
        pane = self.query_one(MetricsPane)
        from textual.widgets import Collapsible

        folds = list(pane.query(Collapsible))
        pane.set_all(not all(c.collapsed for c in folds))

    def action_section(self, number: int) -> None:
        """`1`-`9`, `0`: unfold section N of the metrics pane and scroll to it."""
        pane = self.query_one(MetricsPane)
        if not pane.open_section(number - 1):
            self.notify(f"This kernel has {len(pane.section_titles())} sections.", timeout=2)

    def action_section_named(self, words: str) -> None:
        pane = self.query_one(MetricsPane)
        if not pane.open_named(words):
            self.notify(f"This kernel has no {words} section in the report.", timeout=2)

    def action_step_section(self, step: int) -> None:
        self.query_one(MetricsPane).step_section(step)

    def action_scroll_metrics(self, pages: float) -> None:
        pane = self.query_one(MetricsPane)
        pane.scroll_to(y=pane.scroll_y + pages * pane.size.height, animate=False)

    def action_jump(self) -> None:
        kid = self.current()
        if kid is None or self.link is None:
            return
        rows = self.link.jump_rows_for(kid)
        if len(rows) == 0:
            self.notify(f"ncu ID {kid} has no launch in the nsys report.", timeout=3)
            return
        last_kid, last = self._jumped
        i = (last + 1) % len(rows) if last_kid == kid else 0
        self._jumped = (kid, i)
        self.post_message(NcuKernelChosen(kid, int(rows[i]), i, len(rows)))

    def action_view(self, name: str) -> None:
        """`R`, `M`, `S`: the roofline of the listed kernels (the current one's ceilings),
        the memory chart or the source hot spots of the kernel under the cursor."""
        kid = self.current()
        if kid is None:
            return
        ids = [r["id"] for r in select(self.records, self.text, self.sort, self.descending)]
        size = (max(self.app.size.width - 2, 40), max(self.app.size.height - 2, 12))
        self._view(name, kid, ids, size)

    @work(thread=True, exclusive=True, group="ncu-view", exit_on_error=False)
    def _view(self, name: str, kid: int, ids: list[int], size: tuple[int, int]) -> None:
        """The view's lines off the UI thread (a GEMM's source counters take a second)."""
        from tuiperf.tui.screens.ncu_views import TITLES, TextView, view_lines

        path = getattr(self.app, "ncu_path", None)
        lines = view_lines(name, self.km, kid, ids, size, self.ascii_only, path)
        if self.ascii_only:
            lines = [asciify(line).encode("ascii", "replace").decode() for line in lines]
        self.app.call_from_thread(self.app.push_screen, TextView(TITLES.get(name, name), lines))

    def action_unmatched(self) -> None:
        if self.link is not None:
            self.app.push_screen(UnmatchedScreen(self.km, self.link))


#: what Enter says on the ncu screen opened alone (issue 35 item 7)
NO_TIMELINE = (
    "No timeline to show this kernel on: open the Nsight Systems report of the same run "
    "with it, `tuiperf RUN.nsys-rep THIS.ncu-rep`, to link the two."
)


def _report_name(km: KernelMetrics) -> str:
    return clean(str(km.meta.get("source") or "report").rsplit("/", 1)[-1])


class PathPrompt(ModalScreen[str | None]):
    """One line: the path of a report (Enter opens, Esc cancels)."""

    BINDINGS: ClassVar = bindings("ncu-prompt")
    SCOPED_CSS = False
    DEFAULT_CSS = """
    PathPrompt { align: center middle; }
    PathPrompt > Vertical { width: 80%; height: auto; border: round $accent;
                            background: $surface; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Baseline report (.ncu-rep or ncu CSV), Enter opens, Esc cancels:")
            yield Input(id="ncu-base-path", placeholder="path/to/before.ncu-rep")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class NcuScreen(Screen[None]):
    """The whole screen: a title line, the view, the footer."""

    SCOPED_CSS = False
    DEFAULT_CSS = """
    NcuScreen > #ncu-title { height: 1; background: $panel; padding: 0 1; }
    """

    def __init__(
        self,
        km: KernelMetrics,
        link: NcuLink | None,
        title: str,
        ascii_only: bool,
        root: bool,
        baseline: KernelMetrics | None = None,
    ) -> None:
        super().__init__()
        self.km, self.link, self.title_text, self.ascii_only = km, link, title, ascii_only
        #: a second report to compare with from the start (the `O` key sets one later)
        self.baseline_km = baseline
        #: False when the ncu report was opened alone: there is nothing to go back to
        self.can_leave = not root

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="ncu-title")
        yield NcuView(self.km, self.link, self.ascii_only, id="ncu")
        yield Footer()

    def on_mount(self) -> None:
        if self.baseline_km is not None:
            self.query_one(NcuView).set_baseline_report(self.baseline_km)

    def _title(self) -> Text:
        t = Text(clean(self.title_text), "bold")
        t.append(f"  {len(self.km):,} profiled kernels")
        if self.link is None:
            t.append(" · no timeline linked", "dim")
        if self.link is not None:
            t.append(f" · {self.link.count_line(len(self.km))}")
            if self.link.unmatched_nsys:
                t.append(f" · {len(self.link.unmatched_nsys):,} nsys kernels without ncu (u)")
        return Text(asciify(t.plain)) if self.ascii_only else t


class UnmatchedScreen(ModalScreen[None]):
    """What did not match: ncu kernels with no launch, nsys kernel names with no result."""

    BINDINGS: ClassVar = bindings("ncu-unmatched")
    SCOPED_CSS = False
    DEFAULT_CSS = """
    UnmatchedScreen { align: center middle; }
    UnmatchedScreen > VerticalScroll { width: 90%; height: 80%; border: round $accent;
                                       background: $surface; padding: 0 1; }
    """

    def __init__(self, km: KernelMetrics, link: NcuLink) -> None:
        super().__init__()
        self.km, self.link = km, link

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(unmatched_text(self.km, self.link), id="unmatched-body")

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).border_title = "Unmatched kernels (Esc closes)"


def unmatched_text(km: KernelMetrics, link: NcuLink) -> Text:
    t = Text()
    t.append(f"ncu kernels with no launch in the nsys report: {len(link.unmatched_ncu)}\n", "bold")
    for kid in link.unmatched_ncu:
        t.append(f"  ID {kid}  {clean(km.kernel(kid).display_name)}\n")
    n = len(link.unmatched_nsys)
    t.append(f"\nnsys kernels with no ncu result: {n}\n", "bold")
    for name in link.unmatched_nsys:
        t.append(f"  {clean(name)}\n")
    return t


# --- hooks the app calls (they get what they need as arguments: no import of the app) ------


def side_metrics(
    app: App[Any], km: KernelMetrics, link: NcuLink, ascii_only: bool, table: str, row: int
) -> None:
    """Linked reports: show the selected kernel's ncu metrics in the side panel."""
    found = app.query("#metrics")
    if not found:
        return
    box = found.first()
    kid = link.best_for_row(row) if table == "kernels" else None
    panes = box.query(MetricsPane)
    if kid is None:
        box.add_class("-empty")
        if table == "kernels" and panes:
            panes.first().clear("No ncu result for this kernel.")
        return
    box.remove_class("-empty")
    if not panes:
        box.mount(MetricsPane(ascii_only, id="side-metrics"))
        app.call_after_refresh(side_metrics, app, km, link, ascii_only, table, row)
        return
    panes.first().show(km, kid, None, link.describe(row))


def load_ncu(path: Path, opts: OpenOptions) -> KernelMetrics:
    """Runs in the app's loading worker."""
    from tuiperf.load.ncu.open import open_ncu

    return open_ncu(path, opts)


def load_linked(path: Path, opts: OpenOptions, trace: Trace) -> tuple[KernelMetrics, NcuLink]:
    """Runs in the app's loading worker: the report, and its links to the trace."""
    from tuiperf.model.ncu.link import build_link

    km = load_ncu(path, opts)
    return km, build_link(trace, km)


def title(ncu_path: Path | None) -> str:
    return ncu_path.name if ncu_path is not None else "Nsight Compute"


def linked(app: App[Any], link: NcuLink, kernels: int) -> None:
    """After the trace loaded: mark profiled launches on the timeline."""
    from tuiperf.model.ncu.link import LaneMarks
    from tuiperf.tui.widgets.timeline import Timeline

    for timeline in app.query(Timeline):
        timeline.ncu_marks = LaneMarks(link.mask)
        timeline.changed(viewport=False)
    app.notify(
        f"Nsight Compute: {link.count_line(kernels)}. K opens the kernel list.",
        timeout=4,
        markup=False,
    )


def open_linked(
    app: App[Any], km: KernelMetrics | None, link: NcuLink | None, name: str, ascii_only: bool
) -> None:
    if km is None:
        app.notify("No Nsight Compute report: open one with `tuiperf REPORT NCU-REPORT`.",
                   timeout=3, markup=False)  # fmt: skip
        return
    if isinstance(app.screen, NcuScreen):
        return
    if not app.is_screen_installed("ncu"):  # installed: cursor, sort and filter persist
        app.install_screen(NcuScreen(km, link, name, ascii_only, root=False), name="ncu")
    app.push_screen("ncu")


def jump(app: App[Any], msg: NcuKernelChosen) -> None:
    """Enter on the ncu screen: back to the timeline, on the kernel's launch."""
    from tuiperf.tui.messages import EventSelected

    while isinstance(app.screen, NcuScreen) and len(app.screen_stack) > 1:
        app.pop_screen()
    app.post_message(EventSelected("kernels", msg.row, "ncu", False))
    more = " (K, then Enter again: the next one)" if msg.count > 1 else ""
    app.notify(f"ncu ID {msg.kernel_id}: launch {msg.index + 1} of {msg.count}{more}",
               timeout=3, markup=False)  # fmt: skip
